"""Red-team cases for inputs and data care (issue 14): broken scenario files, folders, import sources and run
directories, each through the CLI in-process. Every case ends in the exit code a user can act on, names the
file (or flag) at fault, prints no traceback and never hangs: a scenario file too large, too deep, with an alias
bomb, duplicate keys, a punctuation-only trigger, in the wrong encoding or not a file at all is refused in one
paragraph; `scenarios validate` / `lint` of a folder report every bad file; `report` and `run --resume` warn
about each unusable line of results.jsonl, and --resume sets a torn last line aside in a side file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import Outcome, assert_clean, encsim_in_process

HERE = Path(__file__).parent
VALID = (HERE.parent / "scenarios" / "valid_minimal.yaml").read_text(encoding="utf-8")
FACT = "  - id: fever\n    category: symptoms\n    triggers: [fever, temperature]\n"


def bomb() -> str:
    rows = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]" for i in range(8)]
    return "\n".join(rows) + "\n"


# name -> (file content, expected exit code, words the output must contain besides the file name)
SCENARIO_FILES: dict[str, tuple[str | bytes, int, tuple[str, ...]]] = {
    "tab_indent.yaml": (VALID.replace("  age: 30", "\tage: 30"), 2, ("line 6", "not valid YAML")),
    "unclosed_quote.yaml": (VALID.replace('"My throat hurts."', '"My throat hurts.'), 2, ("not valid YAML",)),
    "unclosed_bracket.yaml": (VALID.replace("[fever, temperature]", "[fever, temperature"), 2, ("not valid YAML",)),
    "age_is_words.yaml": (VALID.replace("age: 30", "age: thirty"), 2, ("patient_profile.age", "thirty")),
    "triggers_a_string.yaml": (VALID.replace("[fever, temperature]", "fever"), 2,
                               ("information_tree[0].triggers",)),
    "tree_a_mapping.yaml": (re.sub(r"information_tree:.*?(?=expected:)", "information_tree: {id: fever}\n", VALID,
                                   flags=re.S), 2, ("field information_tree", "valid list")),
    "level_a_string.yaml": (VALID.replace("triage_level: 5", "triage_level: five"), 2, ("expected.triage_level",)),
    "duplicate_top_key.yaml": (VALID + "suite: safety\n", 2, ("'suite' is given twice", "first at line 3")),
    "duplicate_fact_key.yaml": (VALID.replace('    answer: "No fever."\n',
                                              '    answer: "No fever."\n    answer: "Yes, 39 degrees."\n'), 2,
                                ("line 16", "'answer' is given twice", "first at line 15")),
    "duplicate_flow_key.yaml": (VALID.replace("  sex: female\n", "  sex: female\n  context: {pediatric: false, "
                                                                 "pediatric: true}\n"), 2,
                                ("'pediatric' is given twice",)),
    "deep_flow.yaml": (VALID + "tags: " + "[" * 100_000 + "]" * 100_000 + "\n", 2, ("nested more than 50 levels",)),
    "deep_block.yaml": ("".join("  " * i + f"k{i}:\n" for i in range(80)) + "  " * 80 + "v: 1\n", 2,
                        ("line 51", "nested more than 50 levels")),
    "huge.yaml": (VALID + "tags:\n" + "  - a tag that pads the file out\n" * 40_000, 2,
                  ("larger than the 1 MiB", "encsim import")),
    "alias_bomb.yaml": (VALID + bomb(), 2, ("alias *a", "anchors and aliases")),
    "one_alias.yaml": (VALID.replace("fallback_lines: [\"I'm not sure.\"]",
                                     "fallback_lines: &f [\"I'm not sure.\"]\nchief_complaint_alias: *f"), 2,
                       ("alias *f",)),
    "binary.yaml": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x02\x00", 2, ("binary file",)),
    "empty.yaml": (b"", 2, ("the file is empty",)),
    "whitespace.yaml": (b"  \n\n\t\n", 2, ("the file is empty",)),
    "comments_only.yaml": ("# TODO: write the scenario\n", 2, ("holds no YAML data",)),
    "utf16.yaml": (VALID.encode("utf-16"), 2, ("UTF-16",)),
    "latin1.yaml": (VALID.replace("sore throat", "gorge irrit\u00e9e").encode("cp1252"), 2, ("line 8", "not UTF-8")),
    "control_char.yaml": (VALID.replace("My throat", "My \x1b[31mthroat"), 2, ("line 9", "#x001b")),
    "trigger_question_mark.yaml": (VALID.replace("[fever, temperature]", "[fever, '?']"), 2,
                                   ("trigger '?' of fact 'fever'", "no letter or digit")),
    "trigger_ellipsis.yaml": (VALID.replace("[fever, temperature]", "['...', fever]"), 2,
                              ("trigger '...' of fact 'fever'",)),
    "trigger_dash.yaml": (VALID.replace("[fever, temperature]", "['-']"), 2, ("trigger '-'",)),
    "trigger_blank.yaml": (VALID.replace("[fever, temperature]", "['  ']"), 2, ("a trigger is blank",)),
    "missing_id.yaml": (VALID.replace("id: broken_example\n", ""), 2, ("field id", "required field is missing")),
    "missing_expected.yaml": (VALID.split("expected:")[0], 2, ("field expected",)),
    "no_facts.yaml": (VALID.replace("information_tree:\n" + FACT, "information_tree: []\n").replace(
        '    answer: "No fever."\n    critical: true\n', ""), 2, ("needs at least one fact",)),
    "misspelled_field.yaml": (VALID.replace("suite: triage", "suit: triage"), 2, ("field suit",)),
    "top_level_list.yaml": ("- id: a\n- id: b\n", 2, ("must be a YAML mapping", "list")),
    "top_level_text.yaml": ("just some words\n", 2, ("must be a YAML mapping", "str")),
    "null_document.yaml": ("~\n", 2, ("must be a YAML mapping",)),
    "two_documents.yaml": (VALID + "---\n" + VALID, 2, ("second YAML document",)),
    "python_tag.yaml": ("id: !!python/object/apply:os.system ['echo owned']\n", 2, ("does not accept",)),
    "list_as_key.yaml": ("? [a, b]\n: 1\n", 2, ("does not accept",)),
    "giant_integer.yaml": (VALID.replace("age: 30", "age: " + "7" * 6000), 2, ("cannot be read as YAML",)),
    "bom.yaml": (b"\xef\xbb\xbf" + VALID.encode(), 0, ("1 ok, 0 invalid",)),
    "crlf.yaml": (VALID.replace("\n", "\r\n").encode(), 0, ("1 ok, 0 invalid",)),
}


@pytest.mark.parametrize("name", sorted(SCENARIO_FILES))
def test_scenarios_validate_a_broken_file(tmp_path: Path, name: str) -> None:
    content, code, words = SCENARIO_FILES[name]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    outcome = encsim_in_process("scenarios", "validate", str(path))
    assert_clean(outcome, code=code, names=(name, *words))
    if code:
        assert "0 ok, 1 invalid" in outcome.stdout
        (error,) = [line for line in outcome.stderr.splitlines() if line.strip()]  # one paragraph
        assert error.startswith(f"error: {path}")


def _folder_yaml(p: Path) -> None:
    p.mkdir()


def _link_loop(p: Path) -> None:
    p.symlink_to(p.name)


def _dangling(p: Path) -> None:
    p.symlink_to("no_such_target.yaml")


def _fifo(p: Path) -> None:
    os.mkfifo(p)  # reading it would block for ever


def _unreadable(p: Path) -> None:
    p.write_text(VALID)
    p.chmod(0)


NOT_FILES: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "folder.yaml": (_folder_yaml, ("no scenario files",)),  # given as a path: a folder to load
    "loop.yaml": (_link_loop, ("link loop",)),
    "dangling.yaml": (_dangling, ("does not exist (no_such_target.yaml)",)),
    "fifo.yaml": (_fifo, ("not a regular file",)),
    "missing.yaml": (lambda p: None, ("no such scenario file",)),
}
if os.geteuid() != 0:  # root reads a chmod 0 file anyway
    NOT_FILES["unreadable.yaml"] = (_unreadable, ("Permission denied",))


@pytest.mark.parametrize("name", sorted(NOT_FILES))
def test_scenarios_validate_a_path_that_is_not_a_scenario_file(tmp_path: Path, name: str) -> None:
    make, words = NOT_FILES[name]
    make(tmp_path / name)
    assert_clean(encsim_in_process("scenarios", "validate", str(tmp_path / name)), code=2, names=(name, *words))


@pytest.mark.parametrize("name", ["loop.yaml", "fifo.yaml", "duplicate_top_key.yaml", "trigger_dash.yaml"])
def test_run_with_a_broken_scenario_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name in NOT_FILES:
        NOT_FILES[name][0](path)
    else:
        path.write_text(str(SCENARIO_FILES[name][0]))
    outcome = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", str(path),
                                "--out", str(tmp_path / "run"), "--no-progress")
    assert_clean(outcome, code=2, names=(name,))
    assert not (tmp_path / "run").exists()


def mixed_folder(root: Path) -> Path:
    folder = root / "mixed"
    folder.mkdir()
    (folder / "a_good.yaml").write_text(VALID)
    (folder / "b_tabs.yaml").write_text(SCENARIO_FILES["tab_indent.yaml"][0])  # type: ignore[arg-type]
    (folder / "c_empty.yml").write_bytes(b"")
    (folder / "d_punct.yaml").write_text(SCENARIO_FILES["trigger_question_mark.yaml"][0])  # type: ignore[arg-type]
    (folder / "e_same_id.yaml").write_text(VALID.replace("00000000", "99999999"))
    (folder / "f_folder.yaml").mkdir()
    (folder / "README.md").write_text("not a scenario")
    return folder


BAD_IN_MIXED = ("b_tabs.yaml", "c_empty.yml", "d_punct.yaml", "e_same_id.yaml", "f_folder.yaml")


@pytest.mark.parametrize("action", ["validate", "lint"])
def test_a_folder_with_good_and_bad_files_reports_every_bad_one(tmp_path: Path, action: str) -> None:
    folder = mixed_folder(tmp_path)
    outcome = encsim_in_process("scenarios", action, str(folder))
    summary = "1 ok, 5 invalid" if action == "validate" else "invalid"
    assert_clean(outcome, code=2, names=(*BAD_IN_MIXED, "a_good.yaml", summary))
    assert sum(line.startswith("error: ") for line in outcome.stderr.splitlines()) == len(BAD_IN_MIXED)


@pytest.mark.parametrize("action", ["validate", "lint"])
def test_an_empty_folder_is_an_error_naming_it(tmp_path: Path, action: str) -> None:
    folder = tmp_path / "no_scenarios_here"
    folder.mkdir()
    (folder / "notes.txt").write_text("nothing")
    assert_clean(encsim_in_process("scenarios", action, str(folder)), code=2,
                 names=(str(folder), "no scenario files"))


def test_run_with_a_mixed_folder_names_the_count_and_the_first_bad_file(tmp_path: Path) -> None:
    folder = mixed_folder(tmp_path)
    outcome = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", str(folder),
                                "--out", str(tmp_path / "run"), "--no-progress")
    assert_clean(outcome, code=2, names=(str(folder), "5 of 6 scenario files are invalid", "b_tabs.yaml",
                                         "encsim scenarios validate"))


@pytest.mark.parametrize(("name", "content"), [
    ("pretty.jsonl", json.dumps({"prompt": [{"role": "user", "content": "I have a headache."}], "rubrics": []},
                                indent=2)),
    ("array.jsonl", json.dumps([{"prompt_id": "a"}, {"prompt_id": "b"}], indent=2)),
    ("my cases.json", json.dumps({"prompt_id": "a"}, indent=2)),
])
def test_an_import_hint_never_writes_over_its_own_input(tmp_path: Path, name: str, content: str) -> None:
    """The fix suggested for a pretty-printed file once was `jq -c . pretty.jsonl > pretty.jsonl`, which empties
    the file before jq reads it: the suggested command must write a new file."""
    source = tmp_path / name
    source.write_text(content)
    outcome = encsim_in_process("import", "healthbench", str(source), "--out", str(tmp_path / "out"))
    assert_clean(outcome, code=2, names=(name.split()[-1], "jq -c"))
    command = outcome.stderr.split("`")[1]
    target = command.split(" > ")[1]
    assert target.strip("'") != name and target.strip("'").endswith(".lines.jsonl"), command
    if " " in name:
        assert f"'{name}'" in command  # quoted for the shell


# --- run directories: bad results.jsonl for `report` and `run --resume` --------------------------------------------

def damaged(finished_run: Path, tmp_path: Path, damage: Callable[[list[bytes]], bytes]) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    lines = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(damage(lines))
    return out


RESULTS: dict[str, tuple[Callable[[list[bytes]], bytes], tuple[str, ...]]] = {
    "middle_not_json": (lambda ls: ls[0] + b'{"scenario_id": "viral_uri", "k": 1, "stat\n' + ls[2],
                        ("line 2: skipped, not valid JSON",)),
    "middle_wrong_type": (lambda ls: ls[0] + re.sub(rb'"k":\d+', b'"k":"one"', ls[1], count=1) + ls[2],
                          ("line 2: skipped, not an encounter record", "k:")),
    "middle_not_utf8": (lambda ls: ls[0] + b'{"scenario_id": "\xff\xfe"}\n' + ls[2], ("line 2: skipped",)),
    "middle_json_array": (lambda ls: ls[0] + b"[1, 2, 3]\n" + ls[2], ("line 2: skipped, not an encounter record",)),
    "two_bad_lines": (lambda ls: b"garbage\n" + ls[0] + b"\x00\x00\x00\n" + ls[2],
                      ("line 1: skipped", "line 3: skipped")),
    "torn_tail": (lambda ls: ls[0] + ls[1] + ls[2][:60], ("line 3: the last line",)),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_report_warns_about_each_unusable_line_and_changes_nothing(finished_run: Path, tmp_path: Path,
                                                                   name: str) -> None:
    damage, words = RESULTS[name]
    out = damaged(finished_run, tmp_path, damage)
    before = (out / "results.jsonl").read_bytes()
    outcome = encsim_in_process("report", str(out))
    assert_clean(outcome, code=0, names=(str(out / "results.jsonl"), *words), run_dirs=(out,))
    assert all(line.startswith("warning: ") for line in outcome.stderr.splitlines() if "results.jsonl" in line)
    assert (out / "results.jsonl").read_bytes() == before  # never rewritten in place
    assert not list(out.glob("results.jsonl.torn-*"))


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_resume_warns_about_each_unusable_line_and_runs_what_is_missing(finished_run: Path, tmp_path: Path,
                                                                        name: str) -> None:
    damage, words = RESULTS[name]
    out = damaged(finished_run, tmp_path, damage)
    outcome = encsim_in_process("run", "--resume", str(out), "--no-progress")
    torn = list(out.glob("results.jsonl.torn-*"))
    assert_clean(outcome, code=0, names=(str(out / "results.jsonl"), *((str(torn[0]),) if torn else words)),
                 run_dirs=(out,))
    assert bool(torn) == (name == "torn_tail")
    records = {}
    for line in (out / "results.jsonl").read_bytes().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("k"), int) and rec.get("status") == "ok":
            records[rec["k"]] = rec
    assert sorted(records) == [0, 1, 2], outcome.output  # every missing encounter was run again
    assert json.loads((out / "summary.json").read_text())["completed"] == 3


def test_resume_of_a_torn_tail_keeps_the_torn_bytes(finished_run: Path, tmp_path: Path) -> None:
    out = damaged(finished_run, tmp_path, lambda ls: ls[0] + ls[1] + ls[2][:60])
    torn = (out / "results.jsonl").read_bytes()[-60:]
    outcome = encsim_in_process("run", "--resume", str(out), "--no-progress")
    assert_clean(outcome, code=0, names=("was moved to", "results.jsonl.torn-"))
    (side,) = out.glob("results.jsonl.torn-*")
    assert side.read_bytes() == torn


RUN_DIRS: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "results_is_a_folder": (lambda out: ((out / "results.jsonl").unlink(), (out / "results.jsonl").mkdir()),
                            ("results.jsonl", "cannot read")),
    "run_json_garbage": (lambda out: (out / "run.json").write_text("{not json"), ("run.json", "unreadable")),
    "no_run_json": (lambda out: (out / "run.json").unlink(), ("not a run directory",)),
}


@pytest.mark.parametrize("command", ["report", "resume"])
@pytest.mark.parametrize("name", sorted(RUN_DIRS))
def test_a_broken_run_directory_is_a_clear_error(finished_run: Path, tmp_path: Path, name: str, command: str) -> None:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    RUN_DIRS[name][0](out)
    args = ("report", str(out)) if command == "report" else ("run", "--resume", str(out), "--no-progress")
    outcome: Outcome = encsim_in_process(*args)
    assert_clean(outcome, code=2, names=(str(out), *RUN_DIRS[name][1]))
