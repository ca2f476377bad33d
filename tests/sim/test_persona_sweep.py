"""Persona sweeps (`encsim run --personas`, issue 18): the plan, the records, resume, the robustness block, the gate
per persona, the reports, the voice channel's routing and the `scripted:shallow` control.

Until the patient simulator acts on the persona fields, a persona changes no patient text, so these tests check
the plumbing itself: which encounters run, under which persona, with which scenario object (an agent that reads the
scenario it was handed reports the persona's fields), and how the figures are computed from given score cards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scenarios import LoadedScenario, Scenario
from scenarios.personas import PERSONA_PRESETS
from scorers import aggregate, persona_robustness
from sim.agents.base import AgentReply, AgentRequest, ChatMessage
from sim.agents.scripted import BROAD_QUESTIONS, ReferenceAgent, ShallowAgent, heard_red_flags, question_batches
from sim.cli import main
from sim.cli._common import print_summary
from sim.encounter import HARNESS_VERSION
from sim.encounter.assessment import parse_assessment
from sim.encounter.channel import PersonaVoices, TextChannel, make_channel
from sim.patient.persona import red_flag_ids
from sim.patient.understanding import Understanding
from sim.records import (
    ConfigError,
    Delivery,
    EncounterRecord,
    EscalationComponent,
    RunMeta,
    ScenarioRef,
    ScoreCard,
    encounter_slot,
)
from sim.runner import check_plan_size, run_batch
from sim.store import RunStore
from tests.scorers.test_triage_accuracy import REPLAY as TRIAGE_REPLAY

ROOT = Path(__file__).parents[2]
TWO = "acs_chest_pain,viral_uri"
THREE_PERSONAS = "default,minimiser,poor-recall"

# the replay item of the triage-accuracy tests, under its own id
REPLAY = TRIAGE_REPLAY.replace("replay-headache", "replay-headache-sweep").replace("id: replay_headache",
                                                                                  "id: replay_headache_sweep")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def encsim(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


# ----------------------------------------------------------------------------------------------- the flag


@pytest.mark.parametrize(("value", "fragment"), [("default,grumpy", "unknown persona 'grumpy'"),
                                                 (" , ", "give at least one persona")])
def test_a_bad_personas_list_is_one_paragraph_exit_2_and_nothing_written(tmp_path: Path, value: str,
                                                                          fragment: str) -> None:
    out = tmp_path / "run"
    done = encsim("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                  "--personas", value, "--out", str(out), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: --personas") and fragment in done.stderr
    assert "poor-recall" in done.stderr  # the known names are listed
    assert not out.exists()


def test_the_help_lists_the_personas_the_shallow_control_and_the_default_only_rule(tmp_path: Path) -> None:
    done = encsim("run", "--help", cwd=tmp_path)
    text = " ".join(done.stdout.split())
    assert done.returncode == 0 and "--personas LIST" in text and "scripted:shallow" in text
    assert all(name in text for name in PERSONA_PRESETS)
    assert "Replays and imaging items have no patient to vary" in text


def test_a_plan_too_large_counts_the_personas() -> None:
    check_plan_size(100, 500, personas=2)  # 100,000: the limit itself
    with pytest.raises(ConfigError, match=r"x 3 --personas = 150,000 encounters.*--personas"):
        check_plan_size(100, 500, personas=3)


def test_records_and_run_json_written_before_sweeps_still_load() -> None:
    rec = EncounterRecord.model_validate_json('{"scenario_id": "a", "k": 3, "status": "error", "recorded_at": 1}')
    assert rec.persona == "default"
    meta = RunMeta.model_validate_json('{"run_id": "r", "harness_version": "1", "model": "m", "scenarios": [], '
                                       '"k": 2, "seed": 0, "created_at": 0}')
    assert meta.personas == ["default"]


# ----------------------------------------------------------------------------------------------- a sweep


def test_a_sweep_runs_each_scenario_under_each_persona_in_one_run(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    assert main(["run", "--model", "scripted:reference", "--scenarios", TWO, "--k", "2", "--personas",
                 THREE_PERSONAS, "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    recs = lines(out / "results.jsonl")
    assert len(recs) == 12 and all(r["status"] == "ok" for r in recs)
    assert Counter((r["scenario_id"], r["persona"]) for r in recs) == {
        (s, p): 2 for s in TWO.split(",") for p in THREE_PERSONAS.split(",")}
    for sid in TWO.split(","):
        assert sorted(r["k"] for r in recs if r["scenario_id"] == sid) == list(range(6))
    # k stands for (persona, run): 0-1 default, 2-3 minimiser, 4-5 poor-recall; run j of each persona shares a seed
    by_key = {(r["scenario_id"], r["k"]): r for r in recs}
    for (sid, k), r in by_key.items():
        assert r["persona"] == THREE_PERSONAS.split(",")[k // 2]
        assert r["result"]["seed"] == by_key[(sid, k % 2)]["result"]["seed"]
    assert by_key[("viral_uri", 0)]["result"]["seed"] != by_key[("viral_uri", 1)]["result"]["seed"]
    assert json.loads((out / "run.json").read_text())["personas"] == THREE_PERSONAS.split(",")

    summary = json.loads((out / "summary.json").read_text())
    assert summary["expected_total"] == 12 and summary["completed"] == 12
    pr = summary["persona_robustness"]
    assert pr["personas"] == THREE_PERSONAS.split(",") and pr["has_default"] is True
    assert [r["id"] for r in pr["scenarios"]] == TWO.split(",")
    for row in [*pr["scenarios"], pr["overall"]]:
        assert [p["persona"] for p in row["personas"]] == THREE_PERSONAS.split(",")
        assert all(p["n"] == (2 if row["id"] != "overall" else 4) and len(p["ci95"]) == 2 for p in row["personas"])
        assert len(row["mean_ci95"]) == 2 and len(row["worst_ci95"]) == 2 and len(row["drop_ci95"]) == 2
        assert row["worst_persona"] in THREE_PERSONAS.split(",") and row["drop"] >= 0
        assert row["mean"] == pytest.approx(sum(p["mean"] for p in row["personas"]) / 3)

    report = (out / "report.md").read_text()
    assert "## Persona robustness" in report
    assert ("| scenario | default | minimiser | poor-recall | mean across | worst persona | drop from default |"
            in report)
    assert "| **overall** |" in report and "K = 2 per persona (default, minimiser, poor-recall)" in report
    html = (out / "report.html").read_text()
    assert 'id="persona-robustness"' in html and "drop from default" in html
    assert "persona robustness (2 scenarios): default " in printed and "drop from default" in printed


def test_a_single_persona_run_has_no_robustness_block(tmp_path: Path) -> None:
    out = tmp_path / "plain"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "2", "--out", str(out),
                 "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["persona_robustness"] is None
    assert {r["persona"] for r in lines(out / "results.jsonl")} == {"default"}
    assert "Persona robustness" not in (out / "report.md").read_text()


def test_replays_and_imaging_items_run_once_under_default_in_a_sweep(tmp_path: Path) -> None:
    replay = tmp_path / "replay_headache_sweep.yaml"
    replay.write_text(REPLAY)
    out = tmp_path / "mixed"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--scenarios", str(replay),
                 "--scenarios", "img_skin_erythema_migrans", "--k", "2", "--personas", "minimiser,carer",
                 "--out", str(out), "--quiet"]) == 0
    recs = lines(out / "results.jsonl")
    got = Counter((r["scenario_id"], r["persona"]) for r in recs)
    assert got == {("viral_uri", "minimiser"): 2, ("viral_uri", "carer"): 2,
                   ("replay_headache_sweep", "default"): 2, ("img_skin_erythema_migrans", "default"): 2}
    assert sorted(r["k"] for r in recs if r["scenario_id"] == "replay_headache_sweep") == [0, 1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["expected_total"] == 8 and summary["completed"] == 8 and summary["errors"] == 0
    pr = summary["persona_robustness"]
    assert sorted(pr["not_varied"]) == ["img_skin_erythema_migrans", "replay_headache_sweep"]
    assert [r["id"] for r in pr["scenarios"]] == ["viral_uri"]
    # without `default` in the sweep there is no drop from default
    assert pr["has_default"] is False and pr["overall"]["drop"] is None
    report = (out / "report.md").read_text()
    assert "n/a (no default persona)" in report and "replay_headache_sweep" in report


# ----------------------------------------------------------------------------------------------- resume


def test_resume_runs_exactly_the_missing_persona_encounters(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    assert main(["run", "--model", "scripted:reference", "--scenarios", TWO, "--k", "2", "--personas",
                 THREE_PERSONAS, "--out", str(out), "--quiet"]) == 0
    results = out / "results.jsonl"
    original = results.read_text().splitlines()
    kept = [x for x in original if not (json.loads(x)["persona"] != "default" and json.loads(x)["k"] % 2 == 1)]
    removed = {(json.loads(x)["scenario_id"], json.loads(x)["k"], json.loads(x)["persona"])
               for x in original} - {(json.loads(x)["scenario_id"], json.loads(x)["k"], json.loads(x)["persona"])
                                     for x in kept}
    assert len(removed) == 4  # run 1 of minimiser and of poor-recall, for each scenario
    # and one record that claims the wrong persona for its k: the plan's persona for k=2 is minimiser
    lied = [json.loads(x) for x in kept]
    victim = next(r for r in lied if r["scenario_id"] == "viral_uri" and r["k"] == 2)
    victim["persona"] = "default"
    results.write_text("".join(json.dumps(r) + "\n" for r in lied))
    assert main(["run", "--resume", str(out), "--quiet"]) == 0
    after = lines(results)
    new = after[len(lied):]
    assert {(r["scenario_id"], r["k"], r["persona"]) for r in new} == removed | {("viral_uri", 2, "minimiser")}
    latest = {(r["scenario_id"], r["k"]): r for r in after}
    assert len(latest) == 12
    assert all(r["persona"] == THREE_PERSONAS.split(",")[k // 2] for (_, k), r in latest.items())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] == 12 and summary["persona_robustness"]["overall"]["personas"][1]["n"] == 4


def test_resume_with_personas_is_refused_like_the_other_plan_flags(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--personas",
                 "default,carer", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    before = (out / "results.jsonl").read_text()
    assert main(["run", "--resume", str(out), "--personas", "default,minimiser"]) == 2
    err = capsys.readouterr().err
    assert "--personas cannot be combined with --resume" in err and "personas" in err and "Traceback" not in err
    assert (out / "results.jsonl").read_text() == before


# ----------------------------------------------------------------------------------------------- the scenario given


class PersonaReader:
    """A test agent that says which persona fields the scenario it was handed has, then gives the reference's
    assessment. Agents under test never see the scenario; this one shows which scenario object the harness got."""

    name = "test:persona-reader"
    vision = True

    async def respond(self, request: AgentRequest) -> AgentReply:
        assert request.scenario is not None
        if request.agent_turn == 1:
            p = request.scenario.patient_profile.persona
            return AgentReply(text=f"style={p.speaking_style} recall={p.recall} relay={p.relay} "
                                   f"language={p.language}. What brings you in today?")
        return await ReferenceAgent().respond(request.model_copy(
            update={"agent_turn": len(question_batches(request.scenario)) + 1}))

    async def aclose(self) -> None:
        return None


def meta_for(items: list[LoadedScenario], k: int, personas: list[str]) -> RunMeta:
    return RunMeta(run_id="r", harness_version=HARNESS_VERSION, model="test:persona-reader", k=k, seed=0,
                   created_at=0.0, personas=personas,
                   scenarios=[ScenarioRef(id=s.scenario.id, path=str(s.path), sha256=s.sha256) for s in items])


def first_agent_line(rec: dict[str, Any]) -> str:
    return next(t["text"] for t in rec["result"]["turns"] if t["speaker"] == "agent")


async def test_each_encounter_gets_the_scenario_as_its_persona_tells_it(tmp_path: Path,
                                                                       library: list[LoadedScenario]) -> None:
    items = [s for s in library if s.scenario.id in ("acs_chest_pain", "viral_uri")]
    personas = ["default", "minimiser", "poor-recall", "carer", "limited-english"]
    meta = meta_for(items, 1, personas)
    store = RunStore.create(tmp_path / "r", meta)
    try:
        await run_batch(store, items, PersonaReader(), TextChannel(), meta, concurrency=3, progress=None)
    finally:
        store.close()
    recs = lines(tmp_path / "r" / "results.jsonl")
    assert len(recs) == 10
    expected = {"minimiser": "style=minimiser", "poor-recall": "recall=poor", "carer": "relay=True",
                "limited-english": "language=limited"}
    for r in recs:
        said = first_agent_line(r)
        own = next(s.scenario for s in items if s.scenario.id == r["scenario_id"]).patient_profile.persona
        if r["persona"] == "default":  # the scenario as written
            assert said.startswith(f"style={own.speaking_style} recall={own.recall} relay={own.relay} ")
        else:
            assert expected[r["persona"]] in said, (r["persona"], said)
    # the scenarios themselves were not changed by the sweep
    assert all(s.scenario.patient_profile.persona.speaking_style != "minimiser" for s in items)


# ----------------------------------------------------------------------------------------------- the figures


def card(composite: float, escalation: float) -> ScoreCard:
    return ScoreCard(triage=None, information=None, efficiency=None, diagnosis=None, composite=composite,
                     passed=composite >= 0.75 and escalation >= 1.0,
                     escalation=EscalationComponent(expected="emergency", given="emergency" if escalation == 1.0
                                                    else "self_care", under_escalated=escalation < 1.0,
                                                    score=escalation))


def test_the_gate_is_per_persona_one_persona_under_escalating_fails_the_scenario(by_id: dict[str, Scenario],
                                                                                capsys: pytest.CaptureFixture[str]
                                                                                ) -> None:
    acs, uri = by_id["acs_chest_pain"], by_id["viral_uri"]
    assert acs.suite == "safety"
    # acs: default escalates right twice (1.0), minimiser under-escalates twice (0.0): the pooled mean is 0.5,
    # not below the threshold, so a gate over the scenario alone would pass; per persona it must not
    cards = {("acs_chest_pain", 0): card(0.97, 1.0), ("acs_chest_pain", 1): card(0.97, 1.0),
             ("acs_chest_pain", 2): card(0.40, 0.0), ("acs_chest_pain", 3): card(0.40, 0.0),
             ("viral_uri", 0): card(0.9, 1.0), ("viral_uri", 1): card(0.9, 1.0),
             ("viral_uri", 2): card(0.9, 1.0), ("viral_uri", 3): card(0.9, 1.0)}
    personas = {key: ("default" if key[1] < 2 else "minimiser") for key in cards}
    pooled = aggregate([acs, uri], cards, {})
    assert pooled.safety_gate.triggered is False  # what the pooled gate says: the reason for the per-persona gate
    summary = aggregate([acs, uri], cards, {}, personas=personas)
    gate = summary.safety_gate
    assert gate.triggered and gate.scenarios == ["acs_chest_pain"]
    assert gate.personas == {"acs_chest_pain": ["minimiser"]}
    assert "under persona minimiser" in gate.reasons["acs_chest_pain"]
    assert summary.aggregate is not None and summary.aggregate <= gate.cap
    print_summary(summary, Path("runs/x"))
    assert "safety gate TRIGGERED by acs_chest_pain (under minimiser)" in capsys.readouterr().out
    # every persona safe: the gate passes
    safe = {key: card(0.9, 1.0) for key in cards}
    assert aggregate([acs, uri], safe, {}, personas=personas).safety_gate.triggered is False
    # a non-gated scenario's persona under-escalating does not trigger the gate
    uri_bad = {**safe, ("viral_uri", 2): card(0.4, 0.0), ("viral_uri", 3): card(0.4, 0.0)}
    assert aggregate([acs, uri], uri_bad, {}, personas=personas).safety_gate.triggered is False


def test_robustness_figures_from_known_cards(by_id: dict[str, Scenario]) -> None:
    acs, uri = by_id["acs_chest_pain"], by_id["viral_uri"]
    composites = {("acs_chest_pain", "default"): [0.9, 1.0], ("acs_chest_pain", "minimiser"): [0.5, 0.7],
                  ("acs_chest_pain", "carer"): [0.8, 0.8], ("viral_uri", "default"): [0.6, 0.6],
                  ("viral_uri", "minimiser"): [0.6, 0.6], ("viral_uri", "carer"): [0.9, 0.9]}
    sweep = ["default", "minimiser", "carer"]
    cards, personas = {}, {}
    for (sid, persona), values in composites.items():
        for j, v in enumerate(values):
            key = (sid, sweep.index(persona) * 2 + j)
            cards[key], personas[key] = card(v, 1.0), persona
    errors = {("viral_uri", 5): "AgentError: 500"}  # carer run 1 of viral_uri errored: it counts 0
    del cards[("viral_uri", 5)]
    pr = persona_robustness([acs, uri], cards, errors, personas, sweep)
    assert pr is not None
    acs_row, uri_row = pr.scenarios
    assert [p.mean for p in acs_row.personas] == pytest.approx([0.95, 0.6, 0.8])
    assert acs_row.worst_persona == "minimiser" and acs_row.worst == pytest.approx(0.6)
    assert acs_row.drop == pytest.approx(0.35) and acs_row.mean == pytest.approx((0.95 + 0.6 + 0.8) / 3)
    assert acs_row.personas[1].drop == pytest.approx(0.35) and acs_row.personas[2].drop == pytest.approx(0.15)
    carer = uri_row.personas[2]
    assert (carer.n, carer.errors, carer.mean) == (1, 1, pytest.approx(0.45))
    assert uri_row.worst_persona == "carer" and uri_row.drop == pytest.approx(0.15)
    assert pr.overall.personas[0].mean == pytest.approx((0.95 + 0.6) / 2)
    assert pr.overall.personas[2].mean == pytest.approx((0.8 + 0.45) / 2)
    assert pr.overall.worst_persona == "minimiser" and pr.overall.worst == pytest.approx(0.6)
    assert pr.overall.drop == pytest.approx((0.95 + 0.6) / 2 - 0.6)
    for row in [acs_row, uri_row, pr.overall]:
        assert row.mean_ci95 is not None and row.mean_ci95[0] <= row.mean <= row.mean_ci95[1]  # type: ignore[operator]
        assert row.drop_ci95 is not None and row.drop_ci95[0] <= row.drop <= row.drop_ci95[1]  # type: ignore[operator]
    ci = acs_row.personas[0].ci95
    assert ci is not None and 0.9 <= ci[0] < ci[1] <= 1.0  # the default cell varies: a real interval
    # seeded: the same figures again, and another seed may move the CIs but not the points
    assert persona_robustness([acs, uri], cards, errors, personas, sweep) == pr
    other = persona_robustness([acs, uri], cards, errors, personas, sweep, seed=7)
    assert other is not None and other.overall.mean == pr.overall.mean
    # one persona: no block; no default: no drop
    assert persona_robustness([acs, uri], cards, errors, personas, ["default"]) is None
    no_default = persona_robustness([acs, uri], cards, errors, personas, ["minimiser", "carer"])
    assert no_default is not None and no_default.overall.drop is None
    assert no_default.overall.drop_text() == "n/a (no default persona)"


# ----------------------------------------------------------------------------------------------- voice routing


class FakeRecording:
    """A recording channel that says which persona's channel it is."""

    name = "voice"

    def __init__(self, persona: str) -> None:
        self.persona = persona
        self.finished: list[tuple[str, int]] = []

    async def to_agent(self, patient_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        return Delivery(text=f"{self.persona}: {patient_text}")

    async def to_patient(self, agent_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        return Delivery(text=f"{self.persona}: {agent_text}")

    async def finish_encounter(self, scenario_id: str, k: int) -> dict[str, str]:
        self.finished.append((scenario_id, k))
        return {"recording": self.persona}


async def test_a_voice_sweep_speaks_each_encounter_in_its_personas_voice(by_id: dict[str, Scenario]) -> None:
    acs = by_id["acs_chest_pain"]
    items = [LoadedScenario(scenario=acs, path=Path("acs.yaml"), sha256="0" * 64)]
    meta = meta_for(items, 2, ["default", "minimiser"]).model_copy(update={"channel": "voice"})
    channels = {p: FakeRecording(p) for p in ("default", "minimiser")}
    voices = PersonaVoices(channels, meta=meta, scenarios={"acs_chest_pain": acs})  # type: ignore[arg-type]
    said = [(await voices.to_agent("hi", scenario_id="acs_chest_pain", k=k, turn=0)).text for k in range(4)]
    assert said == ["default: hi", "default: hi", "minimiser: hi", "minimiser: hi"]
    heard = await voices.to_patient("ok", scenario_id="acs_chest_pain", k=3, turn=1)
    assert heard.text == "minimiser: ok"
    assert await voices.finish_encounter("acs_chest_pain", 2) == {"recording": "minimiser"}
    assert channels["minimiser"].finished == [("acs_chest_pain", 2)] and channels["default"].finished == []
    assert encounter_slot(meta.personas, acs, 3, meta.k) == ("minimiser", 1)
    assert isinstance(make_channel(meta.model_copy(update={"channel": "text"}), items, Path("audio")), TextChannel)


# ----------------------------------------------------------------------------------------------- scripted:shallow


async def test_the_shallow_control_asks_broad_questions_only_and_escalates_only_what_it_heard(
        by_id: dict[str, Scenario]) -> None:
    acs = by_id["acs_chest_pain"]
    understanding = Understanding(acs)
    broad = {"presenting_complaint", "other_symptoms"}
    for turn, question in enumerate(BROAD_QUESTIONS, 1):
        req = AgentRequest(messages=[], temperature=0.0, max_tokens=10, seed=0, scenario=acs, agent_turn=turn)
        assert (await ShallowAgent().respond(req)).text == question
        # the patient's own understanding hears a broad question, not one about a specific fact
        assert understanding.recognised(question) <= broad, (question, understanding.recognised(question))
    ref = AgentRequest(messages=[], temperature=0.0, max_tokens=10, seed=0, scenario=acs,
                       agent_turn=len(question_batches(acs)) + 1)
    reference = (await ReferenceAgent().respond(ref)).text

    def last(patient_said: list[str]) -> AgentRequest:
        messages = [ChatMessage(role="user", content=x) for x in patient_said]
        return AgentRequest(messages=messages, temperature=0.0, max_tokens=10, seed=0, scenario=acs,
                            agent_turn=len(BROAD_QUESTIONS) + 1)

    flag = next(f for f in acs.information_tree if f.id in red_flag_ids(acs))
    # a red flag heard, even reworded by a persona (a tag after it, only its first sentence): the reference's
    heard = f"{flag.answer.split('. ')[0]}. It's probably nothing, though."
    assert heard_red_flags(acs, [acs.opening_line, heard]) == {flag.id}
    assert (await ShallowAgent().respond(last([acs.opening_line, heard]))).text == reference
    # none heard: it takes the history at face value and reassures, as the undertriage control does
    quiet = (await ShallowAgent().respond(last([acs.opening_line, "Nothing else comes to mind just now."]))).text
    assert quiet != reference and parse_assessment(quiet).escalation == "self_care", quiet


def test_the_shallow_control_runs_from_the_cli_and_gathers_less_than_the_reference(tmp_path: Path) -> None:
    runs = {}
    for model in ("scripted:shallow", "scripted:reference"):
        out = tmp_path / model.replace(":", "-")
        assert main(["run", "--model", model, "--scenarios", "acs_chest_pain,appendicitis", "--k", "1", "--out",
                     str(out), "--quiet"]) == 0
        runs[model] = {r["scenario_id"]: r for r in lines(out / "results.jsonl")}
    for sid in ("acs_chest_pain", "appendicitis"):
        shallow, ref = runs["scripted:shallow"][sid], runs["scripted:reference"][sid]
        assert shallow["score"]["information"]["score"] < ref["score"]["information"]["score"]
        assert shallow["score"]["triage"]["score"] == ref["score"]["triage"]["score"]  # the same assessment
        asked = [t["text"] for t in shallow["result"]["turns"] if t["speaker"] == "agent"][:-1]
        assert asked == list(BROAD_QUESTIONS)


def test_a_sweep_separates_thorough_from_shallow_interviewing(tmp_path: Path) -> None:
    """The issue's evidence in small: the reference stays >= 0.9 under every persona, while the shallow control
    (open questions only) drops clearly under poor recall and the minimiser and trips the gate there only."""
    four = "acs_chest_pain,stroke_facial_droop,anaphylaxis_peanut,appendicitis"
    means: dict[str, dict[str, float]] = {}
    for model in ("scripted:reference", "scripted:shallow"):
        out = tmp_path / model.replace(":", "-")
        code = main(["run", "--model", model, "--scenarios", four, "--k", "1", "--personas",
                     "default,poor-recall,minimiser", "--out", str(out), "--quiet"])
        summary = json.loads((out / "summary.json").read_text())
        overall = summary["persona_robustness"]["overall"]
        means[model] = {p["persona"]: p["mean"] for p in overall["personas"]}
        gate = summary["safety_gate"]
        if model == "scripted:reference":
            assert code == 0 and not gate["triggered"]
        else:
            failed_under = {p for ps in gate["personas"].values() for p in ps}
            assert gate["triggered"] and failed_under and failed_under <= {"poor-recall", "minimiser"}, gate
    assert min(means["scripted:reference"].values()) >= 0.9, means
    shallow = means["scripted:shallow"]
    assert shallow["default"] - shallow["poor-recall"] >= 0.2 and shallow["default"] - shallow["minimiser"] >= 0.2, \
        shallow


def test_compare_says_when_two_runs_swept_different_personas(tmp_path: Path) -> None:
    from sim.compare import compare_runs

    runs = {}
    for name, personas in (("plain", "default"), ("sweep", "default,minimiser"), ("sweep2", "default,minimiser")):
        runs[name] = tmp_path / name
        assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--personas",
                     personas, "--out", str(runs[name]), "--quiet"]) == 0
    notes = compare_runs(runs["plain"], runs["sweep"]).notes
    assert any("persona sweeps differ (A default; B default,minimiser)" in n for n in notes), notes
    assert not any("persona" in n for n in compare_runs(runs["sweep"], runs["sweep2"]).notes)
