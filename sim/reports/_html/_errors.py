"""The "Errors" section: every encounter that ended in an error (not scored), with its redacted message."""

from __future__ import annotations

from sim.reports._html._base import Records, esc, section

MAX_ERRORS_ROWS = 200


def errors_section(records: Records) -> str:
    """The section; empty when no encounter ended in an error."""
    errs = sorted((rec for rec in records.values() if rec.status == "error"), key=lambda r: (r.scenario_id, r.k))
    if not errs:
        return ""
    items = [f"<li><b>{esc(r.scenario_id)}</b> k={r.k}: <code>{esc(r.error or 'error')}</code></li>"
             for r in errs[:MAX_ERRORS_ROWS]]
    if len(errs) > MAX_ERRORS_ROWS:
        items.append(f"<li>... and {len(errs) - MAX_ERRORS_ROWS} more in results.jsonl</li>")
    return section("errors", f"Errors ({len(errs)}, not scored)", f'<ul class="errors">{"".join(items)}</ul>')
