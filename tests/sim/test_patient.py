from __future__ import annotations

from pathlib import Path

from scenarios import Scenario, load_scenario
from sim.patient import UNSURE_LINES, PatientSimulator, normalise, stem


def test_normalise_case_punctuation_stemming_synonyms() -> None:
    assert normalise("Any ALLERGIES?!") == normalise("any allergy") == normalise("any allergic")
    assert normalise("medicines") == normalise("medications") == normalise("medicine")
    assert normalise("Does your tummy hurt") == normalise("does your abdomen hurt")
    assert stem("sweating") == stem("sweat") and stem("radiates") == stem("radiation") and stem("it") == "it"


def test_several_facts_in_one_turn_in_tree_order(by_id: dict[str, Scenario]) -> None:
    p = PatientSimulator(by_id["acs_chest_pain"])
    answer, revealed = p.reply("Do you smoke? Does the pain spread to your arm? Any sweating?")
    assert revealed == ["radiation", "sweating_nausea", "smoking"]
    s = by_id["acs_chest_pain"]
    assert answer == " ".join(s.fact(f).answer for f in revealed)
    assert p.gathered_info == revealed


def test_repeated_question_gets_the_same_answer(by_id: dict[str, Scenario]) -> None:
    p = PatientSimulator(by_id["acs_chest_pain"])
    first, new1 = p.reply("Do you smoke?")
    again, new2 = p.reply("Sorry, do you SMOKE?")
    assert first == again and new1 == ["smoking"] and new2 == []
    assert p.gathered_info == ["smoking"]


def test_requires_ordering(tmp_path: Path) -> None:
    text = (Path(__file__).parents[1] / "scenarios" / "valid_minimal.yaml").read_text().replace(
        '    critical: true\n',
        '    critical: true\n  - id: fever_height\n    category: vitals\n    triggers: [how high]\n'
        '    answer: "It was 39.5."\n    requires: fever\n')
    path = tmp_path / "req.yaml"
    path.write_text(text)
    s = load_scenario(path).scenario
    p = PatientSimulator(s)
    reply = p.respond("How high was it?")
    # prerequisite not yet revealed: neither revealed nor denied
    assert reply.revealed == [] and reply.kind == "unsure" and reply.text in UNSURE_LINES
    _, revealed = p.reply("Any fever?")
    assert revealed == ["fever"]
    _, revealed = p.reply("How high was it?")
    assert revealed == ["fever_height"]
    # both in one message: the prerequisite unlocks its dependant
    p2 = PatientSimulator(s)
    _, revealed = p2.reply("Any fever, and how high?")
    assert revealed == ["fever", "fever_height"]


def test_fallback_is_deterministic_for_a_seed(by_id: dict[str, Scenario]) -> None:
    s = by_id["acs_chest_pain"]
    questions = ["Hello?", "What is your favourite colour?", "Tell me about your weekend", "Hmm", "Okay"]

    def run(seed: int) -> list[str]:
        p = PatientSimulator(s, seed=seed)
        return [p.reply(q)[0] for q in questions]

    assert run(3) == run(3)
    assert all(line in s.fallback_lines for line in run(3))
    assert any(run(seed) != run(3) for seed in range(4, 12))  # the seed matters
    replies = run(3)
    assert all(a != b for a, b in zip(replies, replies[1:], strict=False))  # no line twice in a row


def test_opening_line(by_id: dict[str, Scenario]) -> None:
    s = by_id["viral_uri"]
    assert PatientSimulator(s).opening_line == s.opening_line
