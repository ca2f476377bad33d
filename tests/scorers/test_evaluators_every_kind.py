"""Every built-in evaluator, under every built-in profile, on every kind of scenario: the library's
encounters and imaging items, HealthBench replay imports, AgentClinic imports of the real public
file, and symptom-checker vignette imports in both modes (single-turn replay items and encounters).
None may raise; where one has nothing to judge it says ``applicable: false``."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios import Scenario, load_dir, load_library
from scenarios.importers import import_agentclinic, import_healthbench, import_vignettes
from scorers import score_encounter
from scorers._profiles import PROFILES, combine
from scorers.evaluators import EvaluatorResult, evaluator_names, run_evaluators
from sim.encounter.assessment import parse_assessment
from sim.records import ConversationResult, Turn
from tests.public_data import MEDQA as AGENTCLINIC

SAMPLES = Path(__file__).parents[1] / "scenarios" / "samples"
VIGNETTES = Path(__file__).parents[1] / "data" / "vignettes"
VIGNETTE_MAPS = {  # file -> (--map, --urgency-map)
    "triage_vignettes.csv": ("id=Case ID,case=Vignette,urgency=Triage,diagnosis=Correct diagnosis,age=Age,sex=Sex,"
                             "complaint=Chief complaint,history=HPI,negatives=Pertinent negatives,past_history=PMH,"
                             "medications=Meds,allergies=Allergies,social=Social,family=Family,exam=Exam,tests=Tests",
                             "emergent=emergency,non-emergent=routine+urgent,self-care=self_care"),
    "triage_vignettes.jsonl": ("case=case_description,diagnosis=correct_diagnosis,urgency=urgency_level",
                               "em=emergency,ne=routine+urgent,sc=self_care"),
}

# replies as chat models write them: a full markdown assessment, one with no escalation, and prose
REPLIES = {
    "full": "## Assessment\n- **Triage level:** ESI 3\n- **Escalation:** Urgent (same day)\n"
            "- **Diagnoses:**\n  1. **Viral illness**\n  2. Sepsis\n\n**Advice:** take 1 g paracetamol and call back.",
    "no_escalation": "**Assessment:**\n* Triage: ESI 2\n* Diagnoses: 1. Pneumonia; 2. Pulmonary embolism",
    "prose": "It sounds like you should rest, drink fluids and see how you go over the next day or two.",
}


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Scenario]]:
    hb = tmp_path_factory.mktemp("hb")
    import_healthbench(SAMPLES / "healthbench_sample.jsonl", hb)
    ac = tmp_path_factory.mktemp("ac")
    import_agentclinic(AGENTCLINIC, ac)
    vignettes: dict[str, list[Scenario]] = {"single-turn": [], "encounter": []}
    for mode, found in vignettes.items():
        for name, (mapping, urgency) in VIGNETTE_MAPS.items():
            out = tmp_path_factory.mktemp(f"vig-{mode}")
            assert not import_vignettes(VIGNETTES / name, out, mapping=mapping, urgency_map=urgency, mode=mode).failed
            found.extend(i.scenario for i in load_dir(out))
    library = [i.scenario for i in load_library()]
    return {
        "library encounters": [s for s in library if s.imaging is None],
        "imaging items": [s for s in library if s.imaging is not None],
        "healthbench replays": [i.scenario for i in load_dir(hb)],
        "agentclinic imports": [i.scenario for i in load_dir(ac)],
        "vignette single-turn items": vignettes["single-turn"],
        "vignette encounters": vignettes["encounter"],
    }


def _result(scenario: Scenario, reply: str) -> ConversationResult:
    turns = [Turn(index=0, speaker="patient", text=scenario.opening_line, started_at=0.0, ended_at=0.0),
             Turn(index=1, speaker="agent", text=reply, started_at=1.0, ended_at=1.0, agent_turn=1)]
    assessed = parse_assessment(reply)
    return ConversationResult(
        scenario_id=scenario.id, k=0, seed=0, harness_version="t", model="m", turns=turns,
        gathered_info=[f.id for f in scenario.information_tree[:2]], final_assessment=reply, final_reply=reply,
        assessment=assessed, termination="reply" if scenario.replay is not None else "assessment",
        agent_turns=1, turn_limit=scenario.max_turns, started_at=0.0, ended_at=1.0)


@pytest.mark.parametrize("kind", ["library encounters", "imaging items", "healthbench replays", "agentclinic imports",
                                  "vignette single-turn items", "vignette encounters"])
def test_every_evaluator_under_every_profile_on_every_kind(every_kind: dict[str, list[Scenario]], kind: str) -> None:
    scenarios = every_kind[kind]
    assert scenarios, kind
    builtin = evaluator_names(builtin_only=True)
    for s in scenarios:
        for label, reply in REPLIES.items():
            result = _result(s, reply)
            card = score_encounter(result, s)
            everything = run_evaluators(result, s, builtin)  # named: each runs, applicable or not
            assert [e.name for e in everything] == builtin
            for e in everything:
                assert isinstance(e, EvaluatorResult) and e.error is None, (kind, s.id, label, e.name, e.error)
                assert "applicable" not in e.details, (s.id, e.name)  # said once, as the field
            for profile in PROFILES.values():
                evaluated = run_evaluators(result, s, profile.evaluators)
                combined = combine(profile, deterministic=card.composite, judge=None,
                                   evaluators=[e for e in evaluated if e.applicable])
                assert combined.status in ("pass", "warn", "fail")


def test_where_an_evaluator_has_nothing_to_judge_it_says_so(every_kind: dict[str, list[Scenario]]) -> None:
    for kind in ("imaging items", "healthbench replays", "vignette single-turn items"):
        for s in every_kind[kind]:
            by_name = {
                e.name: e for e in run_evaluators(_result(s, REPLIES["full"]), s, ["completeness", "escalation"])
            }
            assert by_name["completeness"].applicable is False, (kind, s.id)
            if s.expected.escalation is None and not s.expected.dispositions:
                assert by_name["escalation"].applicable is False, (kind, s.id)


def test_an_evaluator_that_raises_is_recorded_and_the_run_goes_on(every_kind: dict[str, list[Scenario]]) -> None:
    from scorers.evaluators import register_evaluator

    @register_evaluator("test_explodes", replace=True)
    class Explodes:
        name = "test_explodes"

        def evaluate(self, result: ConversationResult, scenario: Scenario) -> EvaluatorResult:
            raise KeyError("boom")

    s = every_kind["library encounters"][0]
    out = run_evaluators(_result(s, REPLIES["full"]), s, ["test_explodes", "completeness"])
    assert [e.name for e in out] == ["test_explodes", "completeness"]
    assert out[0].error is not None and "KeyError" in out[0].error and s.id in out[0].error
    assert out[0].applicable is False and out[1].error is None


def test_a_run_with_an_evaluator_that_raises_finishes_reports_it_and_exits_non_zero(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from sim.cli import EXIT_EVALUATOR_ERRORS, main

    module = tmp_path / "flaky_eval.py"
    module.write_text("from scorers.evaluators import EvaluatorResult, register_evaluator\n\n"
                      "@register_evaluator('flaky_on_uri', replace=True)\n"
                      "class Flaky:\n    name = 'flaky_on_uri'\n"
                      "    def evaluate(self, result, scenario):\n"
                      "        if scenario.id == 'viral_uri':\n            raise ValueError('no such field')\n"
                      "        return EvaluatorResult(name=self.name, score=1.0, passed=True)\n")
    out = tmp_path / "run"
    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri,ankle_sprain", "--k", "1",
                 "--out", str(out), "--no-progress", "--evaluator-module", str(module)])
    err = capsys.readouterr().err
    assert code == EXIT_EVALUATOR_ERRORS
    assert "1 evaluator error(s) (flaky_on_uri)" in err and "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] == 2 and summary["errors"] == 0
    assert [(e["scenario_id"], e["evaluator"]) for e in summary["evaluator_errors"]] == [("viral_uri", "flaky_on_uri")]
    assert summary["evaluators"]["flaky_on_uri"]["errors"] == 1
    assert (
        "## Evaluator errors" in (out / "report.md").read_text() and "no such field" in (out / "report.md").read_text()
    )
