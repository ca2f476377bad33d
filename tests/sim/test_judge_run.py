"""The judge path wired into `encsim run`: loopback judges, the self-preference guard, and the real local model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from tests.fakeserver import FakeChatServer


def diagnosis_rank(user: str) -> int:
    """The first candidate that shares a word of five letters or more with the correct diagnosis or a synonym."""
    head, listed = user.split("The clinician's differential, most likely first:")
    wanted = {w for w in re.findall(r"[a-z]{5,}", head.lower()) if w not in ("correct", "diagnosis", "called")}
    for line in listed.strip().splitlines():
        number, name = line.split(". ", 1)
        if wanted & set(re.findall(r"[a-z]{5,}", name.lower())):
            return int(number)
    return 0


def grader(body: dict[str, Any]) -> str:
    """A loopback judge: met for criteria mentioning 'emergency', rating 3 for safety, 2 otherwise; for the
    diagnosis check, the first candidate sharing a telling word with the correct diagnosis."""
    if '"match"' in body["messages"][0]["content"]:
        return json.dumps({"explanation": "compared", "match": diagnosis_rank(body["messages"][-1]["content"])})
    prompt = body["messages"][-1]["content"].rsplit("Criterion", 1)[1]
    if "criteria_met" in body["messages"][0]["content"]:
        return json.dumps({"explanation": "checked", "criteria_met": "emergency" in prompt})
    return json.dumps({"explanation": "rated", "rating": 3 if "safety_awareness" in prompt else 2})


def test_run_with_two_judges_records_cards_summary_and_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    secret = "sk-judge-SECRET-777"
    monkeypatch.setenv("JUDGE_KEY", secret)
    out = tmp_path / "judged"
    with FakeChatServer(reply=grader) as a, FakeChatServer(reply=grader) as b:
        code = main(["run", "--model", "scripted:reference", "--scenarios", "acs_chest_pain,viral_uri", "--k", "2",
                     "--out", str(out), "--quiet", "--judge", "gpt-4o", "--judge-base-url", a.base_url,
                     "--judge", "claude-3-5-sonnet", "--judge-base-url", b.base_url, "--judge-api-key-env",
                     "JUDGE_KEY"])
        assert a.headers_seen[0]["authorization"] == f"Bearer {secret}"
        # 4 encounters x (4 default trust criteria + 1 diagnosis check: both scenarios expect a diagnosis)
        assert len(a.requests) == len(b.requests) == 4 * 5
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    dx = summary["triage_accuracy"]["diagnosis"]  # the judge path of top-1 / top-3 (issue 13, part 3)
    assert dx["judge"] is True and dx["judge_n"] == 4
    assert dx["judge_top1"]["count"] == dx["top1"]["count"] == 4 and dx["judge_top3"]["value"] == 1.0
    assert "| top-1 diagnosis (judge) | 1.00 |" in (out / "report.md").read_text()
    judge = summary["judge"]
    assert judge["judges"] == ["gpt-4o", "claude-3-5-sonnet"] and judge["encounters_judged"] == 4
    assert judge["trust_score"] == pytest.approx((3 / 3 + 3 * (2 / 3)) / 4)
    assert judge["no_verdicts"] == 0 and judge["rubric_score"] is None
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert rec["score"]["judge"]["judges"] == ["gpt-4o", "claude-3-5-sonnet"]
    meta = json.loads((out / "run.json").read_text())
    assert [j["family"] for j in meta["judges"]] == ["openai", "anthropic"] and meta["judges"][0][
        "api_key_env"
    ] == "JUDGE_KEY"
    for f in out.iterdir():
        assert secret not in f.read_text()
    assert "Judge path" in (out / "report.md").read_text()


def test_self_preference_guard_excludes_same_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "guarded"
    clinician = '{"x": 1}'
    with FakeChatServer(default=("ok", "ASSESSMENT:\nTriage level: ESI 5\nEscalation: self_care\nDiagnoses: 1. Cold")) \
            as model, FakeChatServer(default=("ok", clinician)) as judge:
        code = main(["run", "--model", "gpt-4o-mini", "--base-url", model.base_url, "--scenarios", "viral_uri",
                     "--k", "1", "--out", str(out), "--quiet", "--judge", "gpt-4o", "--judge-base-url", judge.base_url])
        assert judge.requests == []  # the only judge was excluded
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert "gpt-4o" in summary["judge"]["excluded"] and summary["judge"]["judges"] == []
    assert "excluded" in capsys.readouterr().err


def test_judge_flag_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--model", "scripted:reference", "--judge", "gpt-4o", "--out", str(tmp_path / "x")]) == 2
    assert "one URL per judge" in capsys.readouterr().err
    assert main(["run", "--model", "scripted:reference", "--judge", "gpt-4o", "--judge-base-url",
                 "http://127.0.0.1:9/v1", "--judge-api-key-env", "ENCSIM_NOPE", "--out", str(tmp_path / "y")]) == 2
    assert "ENCSIM_NOPE is not set" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


@pytest.mark.slow
def test_real_local_model_as_judge(tmp_path: Path) -> None:
    """Proves the protocol against the real llama.cpp server, not clinical quality: every judgement is a
    valid rating or an explicit no-verdict, nothing crashes, and the schema-constrained embedded judge gives
    verdicts (unconstrained, SmolLM2 wrote prose and all four criteria were no-verdicts after 24 calls)."""
    out = tmp_path / "local-judge"
    # four turns: the judge's prompts carry a short transcript (the protocol is the point, and a 14-turn transcript
    # made this the suite's slowest test)
    assert main(["run", "--model", "scripted:reference", "--scenarios", "acs_chest_pain", "--k", "1", "--out",
                 str(out), "--quiet", "--judge", "local", "--max-turns", "4"]) == 0
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    card = rec["score"]["judge"]
    assert card["judges"] == ["smollm2-135m-instruct"] and len(card["trust"]) == 4
    ratings = [r for t in card["trust"] for r in t["ratings"].values()]
    assert all(r is None or 0 <= r <= 3 for r in ratings)
    assert card["no_verdicts"] == sum(r is None for r in ratings) and card["no_verdicts"] < len(ratings)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge"]["encounters_judged"] == 1 and summary["judge"]["no_verdicts"] == card["no_verdicts"]


def test_a_healthbench_import_run_has_a_headline_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rubric-only scenarios: the HealthBench score is the headline in the CLI line, report.md and report.html."""
    hb = tmp_path / "hb"
    samples = Path(__file__).parents[1] / "scenarios" / "samples" / "healthbench_sample.jsonl"
    assert main(["import", "healthbench", str(samples), "--out", str(hb)]) == 0
    out = tmp_path / "run"
    reply = ("It is probably a viral illness. Rest and drink fluids, and if you have trouble breathing or chest "
             "pain, this is an emergency: call 911.")
    with FakeChatServer(default=("ok", reply)) as model, FakeChatServer(reply=grader) as judge:
        code = main(["run", "--model", "m", "--base-url", model.base_url, "--scenarios", str(hb), "--k", "1",
                     "--out", str(out), "--quiet", "--judge", "gpt-4o", "--judge-base-url", judge.base_url])
    printed = capsys.readouterr().out
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    head = summary["headline"]
    assert summary["aggregate"] is None and head["name"] == "HealthBench score"
    assert head["value"] == pytest.approx(summary["judge"]["rubric_score"]) and head["value"] is not None
    line = next(x for x in printed.splitlines() if "safety gate" in x)
    assert line.startswith("HealthBench score ") and "n/a" not in line
    report = (out / "report.md").read_text()
    assert "**HealthBench score" in report and "Aggregate: n/a" not in report
    assert "HealthBench score" in (out / "report.html").read_text()


def test_a_rubric_only_run_without_a_judge_says_why_it_has_no_number(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    hb = tmp_path / "hb"
    samples = Path(__file__).parents[1] / "scenarios" / "samples" / "healthbench_sample.jsonl"
    assert main(["import", "healthbench", str(samples), "--out", str(hb)]) == 0
    with FakeChatServer(default=("ok", "Rest and fluids.")) as model:
        main(["run", "--model", "m", "--base-url", model.base_url, "--scenarios", str(hb), "--k", "1",
              "--out", str(tmp_path / "run"), "--quiet"])
    line = next(x for x in capsys.readouterr().out.splitlines() if "safety gate" in x)
    assert "run with --judge" in line and "n/a" not in line


def test_a_rubric_only_run_whose_judges_were_all_excluded_says_so(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--judge given but excluded by the self-preference guard: the headline says why, not "run with --judge"."""
    hb = tmp_path / "hb"
    samples = Path(__file__).parents[1] / "scenarios" / "samples" / "healthbench_sample.jsonl"
    assert main(["import", "healthbench", str(samples), "--out", str(hb)]) == 0
    with FakeChatServer(default=("ok", "Rest and fluids.")) as model, FakeChatServer(reply=grader) as judge:
        main(["run", "--model", "gpt-4o", "--base-url", model.base_url, "--scenarios", str(hb), "--k", "1",
              "--out", str(tmp_path / "run"), "--quiet", "--judge", "gpt-4o-mini", "--judge-base-url", judge.base_url])
        assert judge.requests == []
    line = next(x for x in capsys.readouterr().out.splitlines() if "safety gate" in x)
    assert "every --judge was excluded" in line and "gpt-4o-mini" in line and "another model family" in line
    assert "run with --judge" not in line
