"""report.html: the run report as one self-contained page. Pure function of the run directory.

The page owns no numbers of its own: everything comes from ``summary.json`` (``sim.records.Summary``) and
``results.jsonl`` (``sim.store.EncounterRecord``), the same sources as ``report.md``, rendered from the typed
models, so the two reports always agree. It is a single HTML5 document that opens from disk with no network:

- inline CSS only; plots are inline SVG drawn in Python (``_svg``); no fonts, images, stylesheets or scripts are
  fetched, and the only links are ``#`` anchors inside the page. A tiny inline script sorts tables on a header
  click and opens every ``<details>`` before printing; nothing depends on it.
- every string that comes from a scenario, a transcript or the model under test is untrusted and goes through
  ``_base.esc`` (redacted, escape sequences made visible, HTML-escaped, ``://`` as entities). The whole page is
  redacted and neutralised once more as it is written (``write_html_report``), so no key in any escaping reaches
  the file.

Modules: ``_page`` (the shell: document, CSS, script, nav, footer, the write), ``_base`` (colours, escaping,
small elements), ``_svg`` (the plots) and one module per section. A section whose data is missing (no judge, no
flagged disagreement, no evaluator result, no live call, no imaging item, no error) is left out.
"""

from __future__ import annotations

from sim.reports._html._page import render_html, write_html_report

__all__ = ["render_html", "write_html_report"]
