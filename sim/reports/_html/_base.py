"""What every part of report.html shares.

The colours (of the CSS and the SVG plots), escaping, number formats and the small elements (a table
cell, a badge, a section, an encounter's anchor).

Every string that comes from a scenario, a transcript or the model under test is untrusted and goes through
``esc``: ``sim.records.clean`` (registered keys and URL userinfo redacted, escape sequences and control characters
made visible, newlines kept), then ``html.escape``, plus ``://`` written as entities so the source holds no URL.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping

from sim.records import EncounterRecord, clean

Records = Mapping[tuple[str, int], EncounterRecord]

# Colours, shared by CSS and SVG.
PASS = "#1a7f37"
FAIL = "#cf222e"
WARN = "#9a6700"
INK = "#1f2328"
MUTED = "#656d76"
GRID = "#d0d7de"
STRIPE = "#f6f8fa"
CI_FILL = "#9fb3c8"
MEAN_FILL = "#c9d7ea"
MID_FILL = "#6f93c4"
SEVERITY_COLOUR = {"critical": "#82071e", "high": FAIL, "medium": "#bc4c00", "low": WARN}  # scorers' severities


def esc(value: object) -> str:
    """Escape text for HTML element content and attributes.

    ``://`` becomes entities so a URL in model output renders as written but the page source holds no
    ``http://`` (nothing can mistake it for a link).
    """
    return html.escape(clean(str(value)), quote=True).replace("://", ":&#47;&#47;")


def fixed(x: float | None, digits: int = 2) -> str:
    """A number to ``digits`` decimals; "n/a" for a missing one."""
    return "n/a" if x is None else f"{x:.{digits}f}"


def value_text(x: float | str | None, digits: int = 3) -> str:
    """A value of a field that may be missing.

    Floats to ``digits`` decimals (NaN as "n/a"), ints as they are, booleans as yes/no, text escaped.
    """
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return "n/a" if math.isnan(x) else f"{x:.{digits}f}"
    return esc(x)


def finite(x: float | None) -> float | None:
    """The number, or None when it is missing or NaN (nothing to plot or sort by)."""
    return None if x is None or math.isnan(x) else float(x)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", str(text).lower()).strip("-") or "x"


def enc_anchor(scenario_id: str, k: int) -> str:
    """The id of an encounter's block on the page."""
    return f"enc-{slug(scenario_id)}-{k}"


def badge(text: str, colour: str, *, big: bool = False) -> str:
    cls = "badge big" if big else "badge"
    return f'<span class="{cls}" style="background:{colour}">{esc(text)}</span>'


def clamp01(x: float) -> float:
    return min(1.0, max(0.0, x))


def sort_key(x: float | None) -> str:
    """A cell's ``data-sort``: the number, or "" for a missing one."""
    v = finite(x)
    return "" if v is None else repr(v)


def td(text: str, sort: str | float | None = None, cls: str = "") -> str:
    """A table cell; ``sort`` is what the sorting script compares instead of the text."""
    attrs = f' data-sort="{esc(sort)}"' if sort is not None else ""
    attrs += f' class="{cls}"' if cls else ""
    return f"<td{attrs}>{text}</td>"


def section(sid: str, title: str, body: str, intro: str = "") -> str:
    """A ``<section>`` of the page: its id (the nav's anchor), title, an optional intro line and the body."""
    intro_html = f'<p class="intro">{intro}</p>' if intro else ""
    return f'<section id="{sid}">\n<h2>{esc(title)}</h2>\n{intro_html}\n{body}\n</section>\n'


def table_rows(rows: list[list[str]]) -> str:
    """Rows of plain-text cells (report.md's cells), escaped."""
    return "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)


def table_head(header: list[str]) -> str:
    return "".join(f"<th>{esc(h)}</th>" for h in header)
