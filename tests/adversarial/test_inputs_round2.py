"""Red-team cases, round 2 (issue 36): the inputs a second pass found still crashing, hanging or accepted.

Every file the project reads goes through the checks scenario files had (``scenarios._files``: size, kind of
file, encoding, binary refusal, nesting depth, aliases, duplicate keys, NaN / Infinity), and every flag and stored
value has a range: import sources nested 100,000 deep or a device (/dev/zero), NaN and huge numbers in
results.jsonl and run.json, an edited run.json's plan on resume, failure-mode judges that are deep, binary or
misnamed, bools read as numbers in a scenario, --max-turns 1000 and an empty --api-key-env. Each ends in one
paragraph starting ``error:`` (or a warning for one line of results.jsonl) naming the file or flag, the right
exit code and no traceback.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import assert_clean, encsim_in_process

HERE = Path(__file__).parent
VALID = (HERE.parent / "scenarios" / "valid_minimal.yaml").read_text(encoding="utf-8")
DEEP = "[" * 100_000 + "]" * 100_000


def _one_error(stderr: str) -> str:
    (error,) = [line for line in stderr.splitlines() if line.strip()]  # one paragraph
    assert error.startswith("error: "), stderr
    return error


# --- import sources --------------------------------------------------------------------------------------------

def test_an_import_row_nested_100000_deep_is_a_clear_error(tmp_path: Path) -> None:
    source = tmp_path / "deep.jsonl"
    source.write_text('{"prompt_id": "a", "prompt": ' + DEEP + "}\n")
    outcome = encsim_in_process("import", "healthbench", str(source), "--out", str(tmp_path / "out"))
    assert_clean(outcome, code=2, names=(str(source), "line 1", "nested more than 50 levels"))
    _one_error(outcome.stderr)


def test_a_deep_row_among_good_ones_is_one_failed_row(tmp_path: Path) -> None:
    source = tmp_path / "mixed.jsonl"
    source.write_text('{"prompt_id": "a", "prompt": ' + DEEP + "}\n" + '{"x": NaN}\n' + '{"y": 1}\n')
    outcome = encsim_in_process("import", "healthbench", str(source), "--out", str(tmp_path / "out"))
    assert_clean(outcome, code=2, names=("row 1: not converted: the JSON is nested more than 50",
                                         "row 2: not converted: NaN is not a number JSON allows"))


@pytest.mark.parametrize("fmt", ["healthbench", "agentclinic", "vignettes"])
def test_a_device_as_the_import_file_is_refused_unread(tmp_path: Path, fmt: str) -> None:
    extra = ("--map", "case=a,diagnosis=b,urgency=c") if fmt == "vignettes" else ()
    outcome = encsim_in_process("import", fmt, "/dev/zero", "--out", str(tmp_path / "out"), *extra)
    assert_clean(outcome, code=2, names=("/dev/zero", "not a regular file"))
    _one_error(outcome.stderr)


def test_a_binary_labels_csv_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "cases.jsonl"
    source.write_text('{"prompt_id": "a"}\n')
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"case,triage_level\n\x00\x00\xff\n")
    outcome = encsim_in_process("import", "healthbench", str(source), "--out", str(tmp_path / "out"),
                                "--labels", str(labels))
    assert_clean(outcome, code=2, names=(str(labels), "binary file"))


# --- run directories: results.jsonl and run.json --------------------------------------------------------------

def _copy(finished_run: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    return out


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("command", ["report", "resume"])
def test_a_non_finite_composite_is_one_skipped_line(finished_run: Path, tmp_path: Path, value: str,
                                                    command: str) -> None:
    out = _copy(finished_run, tmp_path)
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    assert isinstance(first["score"]["composite"], float)
    lines[0] = lines[0].replace(f'"composite":{first["score"]["composite"]!r}', f'"composite":{value}', 1)
    assert value in lines[0]
    (out / "results.jsonl").write_text("".join(lines))
    args = ("report", str(out)) if command == "report" else ("run", "--resume", str(out), "--no-progress")
    outcome = encsim_in_process(*args)
    assert_clean(outcome, code=0, names=(f"{out / 'results.jsonl'} line 1: skipped", value))


RUN_JSON: dict[str, tuple[Callable[[dict[str, object]], None], tuple[str, ...]]] = {
    "k_a_billion": (lambda m: m.update(k=1_000_000_000), ("--k 1000000000", "--i-know")),
    "k_zero": (lambda m: m.update(k=0), ("k is 0",)),
    "k_a_bool": (lambda m: m.update(k=True), ("at k", "valid integer")),
    "turn_limit_huge": (lambda m: m.update(turn_limit=100_000), ("turn_limit is 100000", "1 to 40")),
    "call_timeout_negative": (lambda m: m.update(call_timeout_s=-1), ("call_timeout_s is -1",)),
    "personas_empty": (lambda m: m.update(personas=[]), ("personas", "at least one persona")),
}


@pytest.mark.parametrize("name", sorted(RUN_JSON))
def test_an_edited_run_json_is_checked_on_resume(finished_run: Path, tmp_path: Path, name: str) -> None:
    out = _copy(finished_run, tmp_path)
    meta = json.loads((out / "run.json").read_text())
    RUN_JSON[name][0](meta)
    (out / "run.json").write_text(json.dumps(meta))
    before = (out / "results.jsonl").read_bytes()
    outcome = encsim_in_process("run", "--resume", str(out), "--no-progress")
    assert_clean(outcome, code=2, names=(str(out / "run.json"), *RUN_JSON[name][1]))
    _one_error(outcome.stderr)
    assert (out / "results.jsonl").read_bytes() == before  # nothing ran


@pytest.mark.parametrize("value", ["NaN", "1e999", "-Infinity"])
def test_a_non_finite_number_in_run_json_is_refused(finished_run: Path, tmp_path: Path, value: str) -> None:
    out = _copy(finished_run, tmp_path)
    raw = (out / "run.json").read_text()
    edited = re.sub(r'"created_at": [0-9.e+-]+', f'"created_at": {value}', raw, count=1)
    assert edited != raw
    (out / "run.json").write_text(edited)
    for args in (("report", str(out)), ("run", "--resume", str(out), "--no-progress")):
        outcome = encsim_in_process(*args)
        assert_clean(outcome, code=2, names=(str(out / "run.json"),))
        _one_error(outcome.stderr)


def test_a_binary_run_json_is_refused(finished_run: Path, tmp_path: Path) -> None:
    out = _copy(finished_run, tmp_path)
    (out / "run.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    outcome = encsim_in_process("report", str(out))
    assert_clean(outcome, code=2, names=(str(out / "run.json"), "binary file"))


def test_a_deep_annotation_line_is_skipped(finished_run: Path, tmp_path: Path) -> None:
    out = _copy(finished_run, tmp_path)
    (out / "annotations.jsonl").write_text('{"trace_id": "viral_uri:0", "notes": ' + DEEP + "}\n")
    outcome = encsim_in_process("annotations", "export", str(out))
    assert "Traceback" not in outcome.output and outcome.code in (0, 2), outcome.output[-2000:]


# --- failure-mode judges ---------------------------------------------------------------------------------------

JUDGES: dict[str, tuple[str, bytes, tuple[str, ...]]] = {
    "deep": ("deep.yaml", b"mode: deep\ndefinition: d\nexamples: " + DEEP.encode() + b"\n",
             ("nested more than 50 levels",)),
    "binary": ("binary.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\xff", ("binary file",)),
    "latin1": ("latin1.yaml", "mode: latin1\ndefinition: d\u00e9j\u00e0\n".encode("latin-1"), ("not UTF-8",)),
    "mode_not_the_file": ("wrong.yaml", b"mode: other\ndefinition: d\n", ("'other'", "named after its mode")),
    "mode_a_path": ("path.yaml", b"mode: ../../etc/passwd\ndefinition: d\n", ("at mode", "not a short slug")),
    "mode_twice": ("twice.yaml", b"mode: twice\nmode: other\ndefinition: d\n", ("'mode' is given twice",)),
    "split_empty": ("split.yaml", b"mode: split\ndefinition: d\nsplit: []\n", ("at split", "three shares")),
    "seed_a_bool": ("seed.yaml", b"mode: seed\ndefinition: d\nseed: yes\n", ("at seed", "valid integer")),
}


@pytest.mark.parametrize("name", sorted(JUDGES))
def test_a_broken_failure_judge_is_one_paragraph(finished_run: Path, tmp_path: Path, name: str) -> None:
    file_name, content, words = JUDGES[name]
    folder = tmp_path / "judges"
    folder.mkdir()
    (folder / file_name).write_bytes(content)
    outcome = encsim_in_process("judges", "validate", str(finished_run), "--judges", str(folder),
                                "--judge", "local")
    assert_clean(outcome, code=2, names=(str(folder / file_name), *words))
    _one_error(outcome.stderr)


# --- scenario values and flags ---------------------------------------------------------------------------------

SCENARIO_VALUES = {
    "age_yes": (VALID.replace("age: 30", "age: yes"), ("patient_profile.age", "True")),
    "barge_in_inf": (VALID + "voice:\n  barge_in_after_s: .inf\n", ("voice.barge_in_after_s", "finite")),
    "gestation_a_bool": (VALID.replace("age: 30", "age: 30\n  pregnant: true\n  gestation_weeks: on"),
                         ("patient_profile.gestation_weeks", "valid integer")),
    "triage_level_true": (VALID.replace("triage_level: 5", "triage_level: true"), ("expected.triage_level",)),
}


@pytest.mark.parametrize("name", sorted(SCENARIO_VALUES))
def test_a_bool_or_infinity_is_not_a_scenario_number(tmp_path: Path, name: str) -> None:
    text, words = SCENARIO_VALUES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    outcome = encsim_in_process("scenarios", "validate", str(path))
    assert_clean(outcome, code=2, names=(str(path), *words))


FLAGS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("max-turns-1000", ("--max-turns", "1000"), ("--max-turns 1000", "from 1 to 40")),
    ("api-key-env-empty", ("--api-key-env", ""), ("--api-key-env was given an empty name",)),
    ("api-key-env-blank", ("--api-key-env", "  "), ("--api-key-env was given an empty name",)),
    ("api-key-env-equals", ("--api-key-env", "KEY=sk-1"), ("--api-key-env was given a name with",)),
    ("judge-api-key-env-empty", ("--judge", "m", "--judge-base-url", "http://127.0.0.1:9/v1",
                                 "--judge-api-key-env", ""), ("--judge-api-key-env was given an empty name",)),
]


@pytest.mark.parametrize(("extra", "names"), [pytest.param(*c[1:], id=c[0]) for c in FLAGS])
def test_a_flag_out_of_range_is_one_paragraph(tmp_path: Path, extra: tuple[str, ...], names: tuple[str, ...]) -> None:
    out = tmp_path / "r"
    outcome = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                                "--out", str(out), "--no-progress", *extra)
    assert_clean(outcome, code=2, names=names)
    _one_error(outcome.stderr)
    assert "sk-1" not in outcome.output  # a key pasted into the name is not echoed
    assert not out.exists()


@pytest.mark.parametrize("content", ["deep", "binary", "device"])
def test_a_broken_family_map_is_one_paragraph(tmp_path: Path, content: str) -> None:
    """--family-map gets the checks of every other file: nested 100,000 deep, binary, or a device."""
    path = Path("/dev/zero") if content == "device" else tmp_path / "families.json"
    if content == "deep":
        path.write_text(DEEP)
    elif content == "binary":
        path.write_bytes(b"\x00\x01{}")
    out = tmp_path / "r"
    outcome = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                                "--judge", "local", "--family-map", str(path), "--out", str(out), "--no-progress")
    assert_clean(outcome, code=2, names=(f"--family-map {path}",))
    _one_error(outcome.stderr)
    assert not out.exists()


@pytest.mark.parametrize("content", ["deep", "nan", "fifo"])
def test_a_broken_summary_json_is_one_paragraph_in_compare(finished_run: Path, tmp_path: Path, content: str) -> None:
    """summary.json gets the checks of every other file: nested 100,000 deep, a NaN, or a FIFO (which a plain read
    would wait on for ever)."""
    import os

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    summary = run / "summary.json"
    if content == "deep":
        summary.write_text(DEEP)
    elif content == "nan":
        summary.write_text(summary.read_text().replace('"aggregate": ', '"aggregate": NaN, "was": ', 1))
    else:
        summary.unlink()
        os.mkfifo(summary)
    outcome = encsim_in_process("compare", str(finished_run), str(run))
    assert_clean(outcome, code=2, names=(str(summary), "encsim report"))
    _one_error(outcome.stderr)


def test_code_suggestions_skip_deep_and_non_finite_lines_and_refuse_a_device(tmp_path: Path) -> None:
    from sim.records import load_code_suggestions
    from sim.records._taxonomy import TaxonomyError

    path = tmp_path / "code_suggestions.jsonl"
    path.write_text(DEEP + "\n" + '{"trace_id": "a", "mode": "x", "confidence": NaN}\n')
    assert load_code_suggestions(path) == ({}, 2)
    with pytest.raises(TaxonomyError, match="cannot read the code suggestions"):
        load_code_suggestions(Path("/dev/zero"))
