"""`encsim scenarios lint`, the intent lexicon's own consistency, and the patient-fidelity bench's figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scenarios.lexicon import load_lexicon
from sim.cli import main
from sim.patient.understanding import asking_sentences, intents_in

ROOT = Path(__file__).resolve().parents[2]

BAD = """\
id: lint_me
title: A case imported with fragment triggers
suite: ddx
canary: encsim-canary-lint-me-0000000000
patient_profile: {age: 40, sex: female}
chief_complaint: cough
opening_line: I have had a cough.
fallback_lines: [I don't know.]
information_tree:
  - id: hospice
    category: history
    triggers: [information, provided]
    answer: I have been in hospice care.
  - id: cough_sputum
    category: symptoms
    triggers: [sputum colour, family]
    answer: Green phlegm.
  - id: cough_intent
    category: symptoms
    triggers: [xyzzy plugh]
    intents: [cough]
    answer: A dry cough for three weeks.
expected:
  diagnoses: [{name: Bronchitis}]
"""


def test_lint_flags_unreachable_facts_common_words_and_statement_triggers(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lint_me.yaml"
    path.write_text(BAD)
    assert main(["scenarios", "lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert "fact hospice: unreachable" in out and "'information' is one common word" in out
    assert "fact cough_sputum: statement trigger" in out and "'family'" in out
    assert "fact cough_intent: unreachable" not in out  # its intent reaches it


def test_library_facts_are_all_reachable(capsys: pytest.CaptureFixture[str]) -> None:
    main(["scenarios", "lint", str(ROOT / "scenarios" / "library")])
    out = capsys.readouterr().out
    assert ": unreachable:" not in out and ": common-word trigger:" not in out


def test_lexicon_phrasings_match_their_own_intent_and_statements_ask_nothing() -> None:
    lexicon = load_lexicon()
    assert len(lexicon.intents) >= 40
    for iid, intent in lexicon.intents.items():
        for phrasing in intent.phrasings:
            units = asking_sentences(phrasing)
            assert units, (iid, phrasing)
            assert iid in set().union(*(intents_in(u) for u in units)), (iid, phrasing)
    assert len(lexicon.statements) >= 50
    assert all(asking_sentences(s) == [] for s in lexicon.statements)


def test_fidelity_bench_holds_its_figures_on_the_dev_set() -> None:
    """A regression guard at the measured figures: recall and leaks meet the goals (>= 0.95, <= 1%); precision
    does not yet meet issue 39's goal of 0.95 (measured 0.923 on this set on 2026-11-29; 0.879 when the layers were
    built), so the guard holds it at 0.92."""
    import importlib.util

    from scenarios import load_library

    spec = importlib.util.spec_from_file_location("patient_fidelity", ROOT / "bench" / "patient_fidelity.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["patient_fidelity"] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    scenarios = {s.scenario.id: s.scenario for s in load_library()}
    data = bench.load_data(ROOT / "bench" / "data" / "patient_dev.yaml", scenarios)
    full = bench.evaluate(data, scenarios, bench.COMBINATIONS[-1][1])  # the bench's own scoring, in this process
    assert full.recall >= 0.95 and full.critical_recall >= 0.95 and full.precision >= 0.92, full
    assert full.leak_rate <= 0.01, full
    before = bench.evaluate(data, scenarios, bench.COMBINATIONS[0][1])
    assert before.recall < full.recall  # the layers added here are what lifts recall


def test_every_library_fact_is_reachable_through_its_own_intents(by_id: dict) -> None:
    """The migration's promise: with the scenario's triggers switched off, some phrasing of each fact's own
    intents still reveals it, so a model that never guesses a trigger word can gather every fact."""
    from sim.patient.understanding import Layers, Understanding

    lexicon = load_lexicon()
    unreachable = []
    for scenario in by_id.values():
        intent_only = Understanding(scenario, layers=Layers(triggers=False))
        for fact in scenario.information_tree:
            assert fact.intents, f"{scenario.id}: {fact.id} declares no intents"
            bank = [p for iid in fact.intents for p in lexicon.intents[iid].phrasings]
            if not any(fact.id in intent_only.match(p) for p in bank):
                unreachable.append(f"{scenario.id}:{fact.id}")
    assert unreachable == []
