"""The "Patient understanding" section: which layer revealed the facts (the same lines as report.md)."""

from __future__ import annotations

from sim.records import RunMeta, Summary
from sim.reports._cells import understanding_lines
from sim.reports._html._base import esc, section


def patient_section(summary: Summary, meta: RunMeta) -> str:
    """Which layer of the patient's understanding revealed the facts (the same lines as report.md)."""
    patient = summary.patient
    if patient is None:
        return ""
    items = "".join(f"<li>{esc(line[2:])}</li>" for line in understanding_lines(patient, meta) if line.startswith("- "))
    return section("patient", "Patient understanding", f"<ul>{items}</ul>")
