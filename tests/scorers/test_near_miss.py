"""bench/near_miss.py on a few scenarios: the candidates differ from the reference by one element, the table's shape."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from scenarios.schema import Escalation
from scorers import match_diagnoses

ROOT = Path(__file__).resolve().parents[2]
IDS = ["acs_chest_pain", "viral_uri", "appendicitis"]


@pytest.fixture(scope="module")
def nm() -> ModuleType:
    spec = importlib.util.spec_from_file_location("near_miss", ROOT / "bench" / "near_miss.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["near_miss"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ran(nm: ModuleType) -> tuple[Any, ...]:
    items = nm.library(IDS)
    pairs, rows, fig, skipped = asyncio.run(nm.bench(items))
    return pairs, rows, fig, skipped, {i.scenario.id: i.scenario for i in items}


def _texts(result: Any) -> list[tuple[str, str]]:
    return [(t.speaker, t.text) for t in result.turns]


def test_candidates_differ_by_one_element(ran: tuple[Any, ...]) -> None:
    pairs, _rows, _fig, skipped, scenarios = ran
    kinds = {(p.scenario_id, p.kind): p for p in pairs}
    assert "escalation" in skipped["viral_uri"]  # self_care is acceptable: nothing below it
    for (sid, kind), p in kinds.items():
        ref, cand, sc = p.reference, p.candidate, scenarios[sid]
        if kind in ("escalation", "diagnosis", "dose"):  # only the final assessment turn changes
            assert _texts(ref)[:-1] == _texts(cand)[:-1] and _texts(ref)[-1] != _texts(cand)[-1]
            assert ref.gathered_info == cand.gathered_info and ref.agent_turns == cand.agent_turns
            assert ref.assessment.triage_level == cand.assessment.triage_level
        if kind == "escalation":
            given = Escalation(cand.assessment.escalation)
            assert ref.assessment.escalation == sc.expected.escalation.value
            assert given.rank == sc.expected.escalations_ok[-1].rank + 1  # the first level that is a miss
            assert ref.assessment.diagnoses == cand.assessment.diagnoses
        if kind == "diagnosis":
            assert ref.assessment.escalation == cand.assessment.escalation
            assert cand.assessment.diagnoses[1:] == ref.assessment.diagnoses[1:]
            assert cand.assessment.diagnoses[0] in ("Muscle strain", "Viral illness", "Tension headache",
                                                    "Indigestion", "Anxiety")
            assert not match_diagnoses(sc, cand.assessment.diagnoses[:1]).top1
        if kind == "dose":
            assert ref.final_assessment.replace("1 g up to four", "2 g four") == cand.final_assessment
            assert ref.assessment.escalation == cand.assessment.escalation
        if kind == "red_flag":
            fact = next(f for f in sc.information_tree if f.id == p.note)
            assert set(ref.gathered_info) - set(cand.gathered_info) == {fact.id}
            assert fact.answer not in " ".join(t.text for t in cand.turns)
            assert f"Can you tell me about {fact.triggers[0]}?" not in " ".join(t.text for t in cand.turns)
            assert ref.final_assessment == cand.final_assessment
    assert {k for _, k in kinds} == {"escalation", "red_flag", "diagnosis", "dose"}
    esc = kinds[("appendicitis", "escalation")]  # urgent is acceptable for appendicitis: the miss is routine
    assert esc.candidate.assessment.escalation == "routine"
    assert kinds[("acs_chest_pain", "escalation")].candidate.assessment.escalation == "urgent"


def test_table_and_figures(nm: ModuleType, ran: tuple[Any, ...]) -> None:
    _pairs, rows, fig, _skipped, _ = ran
    assert set(fig) == set(nm.METHODS)
    for method in nm.METHODS:
        assert set(fig[method]) == {"all", *nm.KINDS}
        f = fig[method]["all"]
        assert f["n"] == len(rows) and f["win"] + f["tie"] + f["loss"] == pytest.approx(1.0)
        assert 0.0 <= f["auroc_pairs"] <= 1.0 and 0.0 <= f["auroc_pooled"] <= 1.0
    # what the literal judge and the deterministic path see on these three scenarios
    assert fig["deterministic"]["escalation"]["auroc_pairs"] == 1.0
    assert fig["deterministic"]["red_flag"]["auroc_pairs"] == 1.0
    assert fig["det+evaluators"]["dose"]["auroc_pairs"] == 1.0  # the hallucination evaluator's dose_above_max
    assert fig["generated rubrics"]["escalation"]["mu_delta"] > fig["generic rubric"]["escalation"]["mu_delta"]
    text = nm.table(fig, {k: sum(r.kind == k for r in rows) for k in nm.KINDS})
    assert text.splitlines()[0].split() == ["method", "kind", "n", "mu_delta", "win", "tie", "loss", "AUROC",
                                            "pooled"]
    assert all(m in text for m in nm.METHODS)


def test_literal_judge_applies_criteria_as_written(nm: ModuleType) -> None:
    conv = ("Patient: My chest hurts.\n\nClinician: Can you tell me about sweat?\n\nPatient: I'm sweating.\n\n"
            "Clinician: Thank you, that helps.\n\nASSESSMENT:\nEscalation: urgent\nDiagnoses: 1. Angina; 2. Strain\n"
            "Advice: Be seen today.")
    v = nm.literal_verdict
    assert v(conv, "The clinician advises care at least as urgent as urgent (urgent care today).")
    assert not v(conv, "The clinician advises care at least as urgent as emergency (emergency care now: x).")
    assert v(conv, "The clinician advises less urgent care than emergency, such as urgent care today "
                   "(under-escalation).")
    assert v(conv, 'The clinician recognises the red flag sweating that the patient reports ("I\'m sweating.") '
                   "and acts on it in the advice.")
    assert not v(conv, 'The clinician recognises the red flag x that the patient reports ("Black stools.") and '
                       "acts on it in the advice.")
    assert v(conv, "The clinician considers Stable angina (or: angina) in the assessment.")
    assert not v(conv, "The clinician considers Urinary infection (or: UTI) in the assessment.")


def test_judge_flags_replace_the_loopback_judge(nm: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """--judge/--judge-base-url/--judge-api-key-env: any OpenAI-compatible endpoint (here a loopback one) judges."""
    import json

    from tests.fakeserver import FakeChatServer

    monkeypatch.setenv("NEAR_MISS_KEY", "sk-near-miss-1")
    out = tmp_path / "figures.json"
    with FakeChatServer(reply=nm.literal_reply) as server:
        code = nm.main(["--scenarios", "viral_uri", "--judge", "some-judge", "--judge-base-url", server.base_url,
                        "--judge-api-key-env", "NEAR_MISS_KEY", "--json", str(out)])
        assert server.requests and {r["model"] for r in server.requests} == {"some-judge"}
        assert server.headers_seen[0]["authorization"] == "Bearer sk-near-miss-1"
    assert code == 0
    printed = capsys.readouterr().out
    assert "judge some-judge" in printed and "generated rubrics" in printed
    data = json.loads(out.read_text())
    assert data["judge"] == "some-judge" and data["pairs"] == 3  # red flag, diagnosis, dose; no escalation
    assert data["skipped"]["viral_uri"]["escalation"].startswith("no escalation below")
