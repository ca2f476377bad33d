"""What a scenario's facts mean beyond their fields, for every part that reads them.

The patient simulator, the scripted agents, the speech channel and the scorers all ask these questions of a
scenario; they live here, at the bottom layer, so that none of those parts imports another to ask them (the patient
never imports the grader).
"""

from __future__ import annotations

from scenarios.schema import Fact, Scenario


def is_red_flag_fact(fact: Fact, scenario: Scenario) -> bool:
    """A fact the scenario marks as a red flag: category ``red_flag`` or listed in ``expected.red_flags``.

    Part of the scenario's meaning, so that the patient simulator, the scripted agents and the scorers read it
    from here rather than from one another.
    """
    return fact.category.value == "red_flag" or fact.id in scenario.expected.red_flags


def scenario_vocabulary(s: Scenario) -> list[str]:
    """Drug names and other long words of a scenario's medication facts, to bias speech recognition towards them."""
    words = {w.strip(".,;:()") for f in s.information_tree if f.category.value == "medications"
             for w in f.answer.split()}
    return sorted(w for w in words if len(w) >= 5 and w.isalpha())[:20]
