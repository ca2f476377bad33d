"""The patient never denies what it has: answers to messages that reveal nothing.

The questions below were written for this test in a clinician's own words, not from the scenarios'
triggers or the lexicon's phrasing bank; the patient in each case has the symptom asked about.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scenarios import LoadedScenario, Scenario
from sim.lint import fallback_problems
from sim.patient import NEGATIVE_LINES, UNSURE_LINES, PatientSimulator

ROOT = Path(__file__).parents[2]

HAS_IT = [
    ("ectopic_pregnancy", "Have you felt like you might keel over at any point?"),
    ("ectopic_pregnancy", "Any discomfort up near your collarbone?"),
    ("ectopic_pregnancy", "Is there any blood when you wipe?"),
    ("ectopic_pregnancy", "Have you had to lie down because you felt weak?"),
    ("gi_bleed_melena", "Have your motions been a different colour?"),
    ("gi_bleed_melena", "Have you brought anything up?"),
    ("gi_bleed_melena", "Do you feel washed out or weak?"),
    ("gi_bleed_melena", "Have you felt like you might black out?"),
    ("gi_bleed_melena", "Any blood in the toilet bowl?"),
    ("dka_teen", "Has he been guzzling water?"),
    ("dka_teen", "Is his breath smelling strange, sort of fruity?"),
    ("dka_teen", "Has he been more sleepy than usual?"),
    ("dka_teen", "Is he panting?"),
    ("anaphylaxis_peanut", "Is your voice sounding any different?"),
    ("anaphylaxis_peanut", "Are your lips puffing up?"),
    ("anaphylaxis_peanut", "Do you feel like you might go down?"),
    ("anaphylaxis_peanut", "Any whistling when you breathe?"),
    ("pyelonephritis", "Have you been a bit muddled?"),
    ("pyelonephritis", "Any shivering fits?"),
    ("stroke_facial_droop", "Is his smile lopsided?"),
    ("stroke_facial_droop", "Can he grip with both hands?"),
]


@pytest.mark.parametrize(("sid", "question"), HAS_IT)
def test_a_symptom_the_patient_has_is_never_denied(by_id: dict[str, Scenario], sid: str, question: str) -> None:
    s = by_id[sid]
    reply = PatientSimulator(s).respond(question)
    assert reply.kind != "negative" and reply.text not in NEGATIVE_LINES, (sid, question, reply)
    if reply.kind == "fallback":
        assert reply.text in s.fallback_lines and fallback_problems(s) == []


def test_the_three_kinds_of_answer_that_reveal_nothing(by_id: dict[str, Scenario]) -> None:
    ectopic = by_id["ectopic_pregnancy"]
    p = PatientSimulator(ectopic)
    # recognised, and the scenario has no fact for it: the closed world says no
    for q in ("Have you had a rash anywhere?", "Any cough?", "Any headaches?"):
        r = p.respond(q)
        assert r.kind == "negative" and r.text in NEGATIVE_LINES and not r.revealed, q
    # recognised nothing: the scenario's non-committal line
    r = p.respond("What did you have for breakfast, out of interest?")
    assert r.kind == "fallback" and r.text in ectopic.fallback_lines
    # (a follow-up fact locked behind its prerequisite: tests/sim/test_patient.py::test_requires_ordering)


def test_answers_are_seeded_and_never_repeat_back_to_back(by_id: dict[str, Scenario]) -> None:
    s = by_id["ankle_sprain"]
    qs = ["Any cough?", "Any fever?", "Any chest pain?", "Any vomiting?", "Any headache?"]

    def run(seed: int) -> list[str]:
        p = PatientSimulator(s, seed=seed)
        return [p.respond(q).text for q in qs]

    assert run(1) == run(1)
    assert all(a != b for a, b in zip(run(1), run(1)[1:], strict=False))
    assert set(run(1)) <= set(NEGATIVE_LINES) | set(UNSURE_LINES)


def test_no_library_fallback_line_denies_or_suggests(library: list[LoadedScenario]) -> None:
    problems = {item.scenario.id: fallback_problems(item.scenario) for item in library}
    assert {k: v for k, v in problems.items() if v} == {}


REFUSED = ["Not that I've noticed.", "No. I don't think so.", "No, I'm alright otherwise, really.",
           "It's mostly just the pain.", "I've been so out of it I might not have noticed.", "Nothing else, no.",
           "Can't say I have.", "He seems fine otherwise."]


@pytest.mark.parametrize("line", REFUSED)
def test_a_fallback_line_that_denies_or_suggests_is_a_problem(line: str, by_id: dict[str, Scenario]) -> None:
    s = by_id["viral_uri"].model_copy(update={"fallback_lines": ["Sorry, what do you mean?", line]})
    assert [p.split(":")[0] for p in fallback_problems(s)] == ["fallback_lines.1"]


def test_validate_refuses_such_a_file_with_a_clear_error(tmp_path: Path) -> None:
    text = (ROOT / "tests" / "scenarios" / "valid_minimal.yaml").read_text()
    start, end = text.index("fallback_lines:"), text.index("information_tree:")
    path = tmp_path / "denies.yaml"
    path.write_text(text[:start] + f"fallback_lines:\n  - {REFUSED[0]!r}\n  - \"Sorry, what do you mean?\"\n"
                    + text[end:])
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "scenarios", "validate", str(path)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "denies.yaml" in proc.stderr and "fallback_lines.0" in proc.stderr and "Traceback" not in proc.stderr
    assert "non-committal" in proc.stderr


@pytest.mark.parametrize("line", ["Sorry, what do you mean?", "I'm not sure what you're asking, sorry.",
                                  "Sorry, I didn't quite catch that. Could you say it another way?",
                                  "I don't understand the question, sorry."])
def test_non_committal_lines_are_accepted(line: str, by_id: dict[str, Scenario]) -> None:
    s = by_id["viral_uri"].model_copy(update={"fallback_lines": [line]})
    assert fallback_problems(s) == []
