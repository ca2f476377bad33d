"""The failure taxonomy: the file (load, save, errors) and coding a run's annotations into it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from review import Annotation, AnnotationStore, RunWatchError, code, merge_modes, rename_mode, taxonomy_report
from sim.records import (
    ConfigError,
    FailureMode,
    RunLayout,
    Taxonomy,
    TaxonomyError,
    load_taxonomy,
    mode_slug,
    save_taxonomy,
)
from tests.tui.conftest import frozen_clock


def _fail(run: Path, tid: str, notes: str, *, mode: str | None = None, severity: str | None = None) -> None:
    AnnotationStore(run, reviewer="ana", clock=frozen_clock).save(
        Annotation(trace_id=tid, verdict="fail", notes=notes, severity=severity, failure_mode=mode))


def _lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in RunLayout(run).annotations.read_text().splitlines()]


@pytest.fixture
def reviewed(batch_dir: Path) -> Path:
    """Three failing encounters with notes, one pass."""
    _fail(batch_dir, "fx_chest_pain:1", "never asked about radiation", severity="clinician_would_notice")
    _fail(batch_dir, "fx_chest_pain:2", "sent home with chest pain")
    _fail(batch_dir, "fx_ankle:2", "no ottawa rules")
    AnnotationStore(batch_dir, reviewer="ana").save(Annotation(trace_id="fx_ankle:0", verdict="pass"))
    return batch_dir


# ---------------------------------------------------------------------------------------------- the file
def test_missing_file_is_an_empty_taxonomy(tmp_path: Path) -> None:
    assert load_taxonomy(tmp_path / "none.json") == Taxonomy(version=1, modes=[])


def test_save_then_load_round_trips_and_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "taxonomy.json"
    tax = Taxonomy(modes=[FailureMode(name="missed_red_flag", definition="Never asks about a red flag.",
                                      pass_example="fx_chest_pain:0", fail_example="fx_chest_pain:1")])
    save_taxonomy(path, tax)
    assert load_taxonomy(path) == tax
    assert json.loads(path.read_text())["modes"][0]["name"] == "missed_red_flag"
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    save_taxonomy(path, Taxonomy())
    assert load_taxonomy(path).modes == []
    assert [p.name for p in path.parent.iterdir()] == ["taxonomy.json"]  # no temporary file left


@pytest.mark.parametrize(("text", "says"), [
    ("{not json", "not valid JSON"),
    ('{"modes": [{"name": "a", "definition": ""}, {"name": "a", "definition": ""}]}', "appears twice"),
    ('{"modes": [{"name": "", "definition": ""}]}', "must not be empty"),
    ('{"modes": [{"name": "Missed Red Flag"}]}', "'missed_red_flag'"),
    ('{"modes": "none"}', "modes"),
])
def test_invalid_files_are_config_errors_naming_the_file(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "taxonomy.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_taxonomy(path)
    msg = str(err.value)
    assert str(path) in msg and says in msg and "\n" not in msg
    assert isinstance(err.value, TaxonomyError)


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "taxonomy.json"
    path.mkdir()  # a folder where the file should be
    with pytest.raises(TaxonomyError, match="cannot read the taxonomy file"):
        load_taxonomy(path)
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"modes": [{"name": "caf\xe9"}]}')
    with pytest.raises(TaxonomyError, match="cannot read"):
        load_taxonomy(bad)


def test_mode_slug() -> None:
    assert mode_slug("  Missed red-flag question! ") == "missed_red-flag_question"
    assert mode_slug("!!!") == ""


def test_run_layout_owns_the_name(tmp_path: Path) -> None:
    assert RunLayout(tmp_path).taxonomy == tmp_path / "taxonomy.json" == tmp_path / RunLayout.TAXONOMY_FILE


# ---------------------------------------------------------------------------------------------- coding
def test_code_appends_a_line_keeping_verdict_notes_severity_and_adds_a_new_mode(reviewed: Path) -> None:
    before = len(_lines(reviewed))
    saved = code(reviewed, "fx_chest_pain:1", "Missed red flag", reviewer="bo", clock=frozen_clock)
    lines = _lines(reviewed)
    assert len(lines) == before + 1
    assert lines[-1] | {"timestamp": 0} == {
        "trace_id": "fx_chest_pain:1", "verdict": "fail", "notes": "never asked about radiation",
        "failure_mode": "missed_red_flag", "severity": "clinician_would_notice", "reviewer": "bo",
        "timestamp": 0, "review_pass": 1, "code_source": "person"}
    assert saved.failure_mode == "missed_red_flag"
    assert load_taxonomy(RunLayout(reviewed).taxonomy) == Taxonomy(modes=[FailureMode(name="missed_red_flag")])
    code(reviewed, "fx_chest_pain:2", "missed_red_flag")  # an existing mode: the taxonomy does not change
    assert load_taxonomy(RunLayout(reviewed).taxonomy).names == ["missed_red_flag"]
    code(reviewed, "fx_chest_pain:2", None)
    assert AnnotationStore(reviewed).load()["fx_chest_pain:2"].failure_mode is None


def test_code_into_a_project_level_taxonomy(reviewed: Path, tmp_path: Path) -> None:
    shared = tmp_path / "project" / "taxonomy.json"
    code(reviewed, "fx_ankle:2", "no_decision_rule", taxonomy_path=shared)
    assert load_taxonomy(shared).names == ["no_decision_rule"]
    assert not RunLayout(reviewed).taxonomy.exists()


def test_code_refuses_bad_input(reviewed: Path, tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="no letter or digit"):
        code(reviewed, "fx_ankle:2", "???")
    with pytest.raises(TaxonomyError, match="not a trace id"):
        code(reviewed, "fx_ankle", "x")
    with pytest.raises(RunWatchError, match="no such run directory"):
        code(tmp_path / "nope", "fx_ankle:2", "x")


def test_rename_updates_the_taxonomy_and_recodes(reviewed: Path) -> None:
    path = RunLayout(reviewed).taxonomy
    save_taxonomy(path, Taxonomy(modes=[FailureMode(name="red_flag", definition="Misses a red flag.")]))
    code(reviewed, "fx_chest_pain:1", "red_flag")
    code(reviewed, "fx_chest_pain:2", "red_flag")
    code(reviewed, "fx_ankle:2", "other")
    n_before = len(_lines(reviewed))
    assert rename_mode(reviewed, "red_flag", "missed_red_flag") == 2
    assert load_taxonomy(path).get("missed_red_flag") == FailureMode(name="missed_red_flag",
                                                                     definition="Misses a red flag.")
    assert load_taxonomy(path).get("red_flag") is None
    latest = AnnotationStore(reviewed).load()
    assert [latest[t].failure_mode for t in ("fx_chest_pain:1", "fx_chest_pain:2", "fx_ankle:2")] == [
        "missed_red_flag", "missed_red_flag", "other"]
    assert latest["fx_chest_pain:1"].notes == "never asked about radiation"
    assert len(_lines(reviewed)) == n_before + 2  # appended, history kept
    with pytest.raises(TaxonomyError, match="no failure mode 'red_flag' to rename"):
        rename_mode(reviewed, "red_flag", "x")
    with pytest.raises(TaxonomyError, match="already exists.*merge"):
        rename_mode(reviewed, "missed_red_flag", "other")


def test_merge_folds_one_mode_into_another(reviewed: Path) -> None:
    path = RunLayout(reviewed).taxonomy
    save_taxonomy(path, Taxonomy(modes=[
        FailureMode(name="sent_home", definition="", fail_example="fx_chest_pain:2"),
        FailureMode(name="under_escalation", definition="Advises less care than needed.")]))
    code(reviewed, "fx_chest_pain:2", "sent_home")
    code(reviewed, "fx_chest_pain:1", "under_escalation")
    assert merge_modes(reviewed, "sent_home", "under_escalation") == 1
    assert load_taxonomy(path).modes == [FailureMode(name="under_escalation",
                                                     definition="Advises less care than needed.",
                                                     fail_example="fx_chest_pain:2")]
    latest = AnnotationStore(reviewed).load()
    assert latest["fx_chest_pain:2"].failure_mode == "under_escalation"
    with pytest.raises(TaxonomyError, match="no failure mode 'sent_home' to merge"):
        merge_modes(reviewed, "sent_home", "under_escalation")
    with pytest.raises(TaxonomyError, match="into itself"):
        merge_modes(reviewed, "under_escalation", "under_escalation")


def test_report_counts_failing_traces_by_latest_annotation(reviewed: Path) -> None:
    save_taxonomy(RunLayout(reviewed).taxonomy, Taxonomy(modes=[
        FailureMode(name="unused", definition="Never seen."),
        FailureMode(name="missed_red_flag", definition="Misses a red flag.")]))
    code(reviewed, "fx_chest_pain:1", "missed_red_flag")
    code(reviewed, "fx_chest_pain:2", "missed_red_flag")
    code(reviewed, "fx_ankle:2", "under_escalation")
    code(reviewed, "fx_ankle:0", "missed_red_flag")  # coded, but its verdict is pass: not a failing trace
    AnnotationStore(reviewed).save(Annotation(trace_id="fx_ankle:2", verdict="fail", failure_mode=None))  # latest wins
    _fail(reviewed, "fx_headache:1", "ok-ish", mode="old_name")  # a code the taxonomy file lacks
    report = taxonomy_report(reviewed)
    assert report.failing == 4 and report.uncoded == 1 and report.uncoded_examples == ["fx_ankle:2"]
    assert [(r.name, r.count, r.in_taxonomy) for r in report.rows] == [
        ("missed_red_flag", 2, True), ("old_name", 1, False), ("under_escalation", 0, True), ("unused", 0, True)]
    top = report.rows[0]
    assert top.share == 0.5 and top.examples == ["fx_chest_pain:1", "fx_chest_pain:2"]
    assert top.definition == "Misses a red flag."


def test_report_examples_are_capped_and_empty_runs_report_zero(batch_dir: Path) -> None:
    assert taxonomy_report(batch_dir).rows == [] and taxonomy_report(batch_dir).failing == 0
    for k in range(3):
        _fail(batch_dir, f"fx_chest_pain:{k}", "x", mode="m")
    _fail(batch_dir, "fx_ankle:0", "x", mode="m")
    row = taxonomy_report(batch_dir).rows[0]
    assert row.count == 4 and row.share == 1.0 and len(row.examples) == 3


def test_report_on_a_bad_taxonomy_file_is_a_config_error(batch_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    bad.write_text("[")
    with pytest.raises(ConfigError, match="not valid JSON"):
        taxonomy_report(batch_dir, bad)
    assert os.path.exists(bad)


# ---------------------------------------------------------------------------------------------- the CLI
def test_cli_prints_the_modes_by_frequency(reviewed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    save_taxonomy(RunLayout(reviewed).taxonomy, Taxonomy(modes=[
        FailureMode(name="unused", definition="Never seen."),
        FailureMode(name="missed_red_flag", definition="Misses a red flag.")]))
    code(reviewed, "fx_chest_pain:1", "missed_red_flag")
    code(reviewed, "fx_chest_pain:2", "missed_red_flag")
    assert main(["annotations", "taxonomy", str(reviewed)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"failure modes of 3 failing trace(s), taxonomy {RunLayout(reviewed).taxonomy} (2 mode(s))"
    assert lines[2].split() == ["mode", "count", "share", "examples", "definition"]
    assert lines[3].split() == ["missed_red_flag", "2", "67%", "fx_chest_pain:1,", "fx_chest_pain:2", "Misses", "a",
                                "red", "flag."]
    assert lines[4].split()[:4] == ["unused", "0", "0%", "-"]
    assert lines[-1] == "uncoded: 1 of 3 failing trace(s) (e.g. fx_ankle:2)"


def test_cli_json_and_a_project_level_taxonomy(reviewed: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    shared = tmp_path / "project.json"
    code(reviewed, "fx_ankle:2", "no_decision_rule", taxonomy_path=shared)
    assert main(["annotations", "taxonomy", str(reviewed), "--json", "--taxonomy", str(shared)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"taxonomy": str(shared), "failing": 3, "uncoded": 2,
                   "uncoded_examples": ["fx_chest_pain:1", "fx_chest_pain:2"],
                   "modes": [{"name": "no_decision_rule", "count": 1, "share": 0.3333, "examples": ["fx_ankle:2"],
                              "definition": "", "in_taxonomy": True}]}


def test_cli_without_modes_says_how_to_code(batch_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    assert main(["annotations", "taxonomy", str(batch_dir)]) == 0
    out = capsys.readouterr().out
    assert "no failure modes yet" in out and "uncoded: 0 of 0" in out


@pytest.mark.parametrize("content", ["{oops", '{"modes": [{"name": "a"}, {"name": "a"}]}'])
def test_cli_bad_taxonomy_file_is_one_line_and_exit_2(batch_dir: Path, tmp_path: Path, content: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["annotations", "taxonomy", str(batch_dir), "--taxonomy", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: ") and err.count("\n") == 1 and "Traceback" not in err


def test_describe_mode_sets_definition_and_examples(reviewed: Path) -> None:
    from review import describe_mode

    code(reviewed, "fx_chest_pain:1", "missed_red_flag")
    mode = describe_mode(reviewed, "missed_red_flag", definition="  Never asks\nabout a red flag. ",
                         fail_example="fx_chest_pain:1")
    assert mode == FailureMode(name="missed_red_flag", definition="Never asks about a red flag.",
                               fail_example="fx_chest_pain:1")
    assert load_taxonomy(RunLayout(reviewed).taxonomy).modes == [mode]
    with pytest.raises(TaxonomyError, match="no failure mode 'nope' to describe"):
        describe_mode(reviewed, "nope", definition="x")
    with pytest.raises(TaxonomyError, match="has no field colour"):
        describe_mode(reviewed, "missed_red_flag", colour="red")
    RunLayout(reviewed).taxonomy.unlink()  # coded in annotations only: describing adds it back
    assert describe_mode(reviewed, "missed_red_flag", definition="d").definition == "d"
    assert load_taxonomy(RunLayout(reviewed).taxonomy).names == ["missed_red_flag"]


def test_suggest_codes_asks_a_judge_and_writes_nothing(reviewed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main
    from tests.fakeserver import FakeChatServer

    save_taxonomy(RunLayout(reviewed).taxonomy, Taxonomy(modes=[
        FailureMode(name="missed_red_flag", definition="Never asks about a red-flag symptom.")]))
    code(reviewed, "fx_ankle:2", "missed_red_flag")
    asked: list[str] = []

    def reply(body: dict[str, object]) -> str:
        prompt = str(body["messages"][-1]["content"])  # type: ignore[index]
        asked.append(prompt)
        if "radiation" in prompt:
            return '{"mode": "missed_red_flag", "reason": "radiation is a red flag"}'
        return 'Sure! {"mode": "Unsafe discharge", "reason": "sent home with chest pain"}'

    before = RunLayout(reviewed).annotations.read_text()
    with FakeChatServer(reply=reply) as judge:
        assert main(["annotations", "suggest-codes", str(reviewed), "--judge", "coder", "--judge-base-url",
                     judge.base_url, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["trace_id"], r["mode"], r["new"]) for r in rows] == [
        ("fx_chest_pain:1", "missed_red_flag", False), ("fx_chest_pain:2", "unsafe_discharge", True)]
    assert len(asked) == 2 and all("missed_red_flag: Never asks about a red-flag symptom." in p for p in asked)
    assert any("Reviewer's note: never asked about radiation" in p for p in asked)
    assert RunLayout(reviewed).annotations.read_text() == before  # suggestions only
    with FakeChatServer(reply=reply) as judge:
        assert main(["annotations", "suggest-codes", str(reviewed), "--judge", "coder", "--judge-base-url",
                     judge.base_url]) == 0
    out = capsys.readouterr().out
    assert "2 uncoded failing annotation(s)" in out
    assert "fx_chest_pain:2  coder: unsafe_discharge (new)  sent home with chest pain" in out


def test_suggest_codes_needs_a_judge(reviewed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    assert main(["annotations", "suggest-codes", str(reviewed)]) == 2
    assert "needs a --judge" in capsys.readouterr().err
    assert main(["annotations", "suggest-codes", str(reviewed.parent / "nope"), "--judge", "x",
                 "--judge-base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "annotations suggest-codes: " in capsys.readouterr().err


def test_suggest_codes_without_an_answer_says_so(reviewed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main
    from tests.fakeserver import FakeChatServer

    with FakeChatServer(reply=lambda body: "I am not sure.") as judge:
        assert main(["annotations", "suggest-codes", str(reviewed), "--judge", "coder", "--judge-base-url",
                     judge.base_url]) == 0
    out = capsys.readouterr().out
    assert "fx_ankle:2  coder: (no answer)" in out and "3 uncoded failing annotation(s)" in out
