"""The page header: run id, model and endpoint, channel, harness, K, seed, counts and times."""

from __future__ import annotations

import time

from sim.records import RunMeta, Summary
from sim.reports._html._base import esc


def header(meta: RunMeta, summary: Summary) -> str:
    """The ``<header>``: the run id, then one term per fact about the run."""
    total = summary.expected_total or (summary.completed + summary.errors)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(meta.created_at))
    items = [
        ("model", f"<code>{esc(meta.model)}</code>"
         + (f" at <code>{esc(meta.base_url)}</code>" if meta.base_url else "")),
        ("channel", esc(meta.channel)),
        ("harness", esc(meta.harness_version)),
        ("K", str(meta.k)),
        ("seed", str(meta.seed)),
        ("scenarios", str(len(summary.scenarios))),
        ("encounters", f"{summary.completed} scored, {summary.errors} errors, of {total} planned"),
        ("started", esc(started)),
    ]
    if meta.finished_at:
        minutes = (meta.finished_at - meta.created_at) / 60
        items.append(("finished", esc(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(meta.finished_at)))
                      + f" ({minutes:.1f} min)"))
    if meta.turn_limit:
        items.append(("turn limit", str(meta.turn_limit)))
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in items)
    return (f'<header>\n<h1>encounter-sim report <span class="runid">{esc(meta.run_id)}</span></h1>\n'
            f'<dl class="meta">{dl}</dl>\n</header>\n')
