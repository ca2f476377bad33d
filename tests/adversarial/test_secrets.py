"""Red team, secrets (issue 14): an endpoint that reflects or echoes the API key, in any escaping, or sends
terminal escape sequences, must not get either into a run directory, a report or the terminal.

Each vector is one real ``encsim run`` (in process) against the loopback FakeChatServer, whose replies
or error bodies carry the key the way hostile or careless servers do; each vector is then checked on
three outputs: the run itself (every file of the run directory, stdout, stderr), ``encsim report``
on that directory in a process that has forgotten the key (it is registered again from the variable
the run names), and ``encsim compare`` of that run against a clean one (its text and its --json).
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sim.records import RunMeta, forget_secrets
from tests.adversarial.conftest import ROOT, SECRET, Outcome, assert_clean, encsim_in_process, files_under, secret_forms
from tests.fakeserver import FakeChatServer

KEY_ENV = "ENCSIM_TEST_KEY"
# a key with characters that every escaping changes: JSON (" and \), URL (/ + = ~), HTML (" and &)
SPECIAL = 'sk-live/9f+8e=7d"6c\\5b&4a~Zq'
ESCAPES = "\x1b]0;pwned\x07\x1b[31m\x1b]8;;http://evil.example/\x07click me\x1b]8;;\x07\x1b[2J\x9b6n"


def extra_forms(secret: str) -> list[str]:
    """Forms beyond secret_forms(): escaped twice, PHP-style \\/, HTML, lower-case %xx, and a cut key."""
    once = json.dumps(secret)[1:-1]
    forms = {json.dumps(once)[1:-1], once.replace("/", "\\/"), html.escape(secret),
             re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), urllib.parse.quote(secret, safe="")), secret[:18]}
    return sorted(forms)


@dataclass(frozen=True)
class Vector:
    name: str
    secret: str
    action: Callable[[str, dict[str, str]], tuple[Any, ...]]  # (key, request headers) -> server action
    code: int | tuple[int, ...]  # exit code of the run
    names: tuple[str, ...] = ()  # what the run's output must name
    stored: bool = True  # the key reaches results.jsonl (as [redacted]); False when the run stops first


def _reply(text: str) -> tuple[Any, ...]:
    return ("ok", text)


VECTORS = [
    # (b) a 200 reply that reflects the request: the key becomes the agent's turn text
    Vector("reflect_headers_json", SECRET,
           lambda key, h: _reply("Thanks for calling. Request received: " + json.dumps(h)), 0),
    Vector("reflect_json_in_json_special", SPECIAL,
           lambda key, h: _reply(json.dumps({"debug": json.dumps({"headers": h})})), 0),
    Vector("reflect_url_html_php_special", SPECIAL,
           lambda key, h: _reply(f"Try https://api.example.com/v1?key={urllib.parse.quote(key, safe='')} or "
                                 f"?k={urllib.parse.quote_plus(key)} or <b>{html.escape(key)}</b> or "
                                 + json.dumps({"auth": key}).replace("/", "\\/")), 0),
    Vector("reflect_basic_auth_any_user", SECRET,
           lambda key, h: _reply("Proxy log: Authorization: Basic "
                                 + base64.b64encode(f"alice@clinic.example:{key}".encode()).decode()
                                 + "; blob " + base64.b64encode(json.dumps(h).encode()).decode()), 0),
    Vector("reflect_cut_key_and_escapes", SECRET,
           lambda key, h: _reply(f"{ESCAPES}Your key starts {key[:20]}... and is u:{key}\r\nStay hydrated."), 0),
    # (a) error bodies that echo the Authorization header (JSON-escaped) with ANSI/OSC sequences
    Vector("error_422_json_escaped_ansi", SPECIAL,
           lambda key, h: ("status_body", 422, '{"error": {"request": ' + json.dumps(
               {"authorization": h.get("authorization")}) + ', "message": "' + ESCAPES + 'unprocessable"}}'),
           3, ("422",)),
    # a refused key: the run stops early (exit 2, --fail-fast) or records the errors (exit 3); either way the
    # body that echoes the key in its error message stays out of every output
    Vector("error_401_echoes_key", SECRET,
           lambda key, h: ("status_body", 401, json.dumps({"error": {
               "message": f"Incorrect API key provided: {key}{ESCAPES}", "code": "invalid_api_key"}})),
           (2, 3), ("401",), stored=False),
    Vector("error_400_plain_osc8", SECRET,
           lambda key, h: ("status_body", 400, f"{ESCAPES}\nbad request for key {key}\nGET /v1?api_key="
                           f"{urllib.parse.quote(key)} Basic {base64.b64encode((':' + key).encode()).decode()}"),
           3, ("400",)),
    Vector("error_429_retried_echo", SECRET,
           lambda key, h: ("status_body", 429, f"\x1b[1mslow down\x1b[0m {h.get('authorization')}",
                           {"retry-after": "0"}), 3, ("429",)),
]


class ReflectingServer(FakeChatServer):
    """Every request is answered by ``vector.action`` applied to the key and the request's own headers;
    ``("status_body", code, body[, headers])`` sends ``body`` raw as the error body."""

    def __init__(self, vector: Vector) -> None:
        super().__init__(default=("ok", "unused"))
        self.vector = vector
        self.error_body: bytes | None = None

    def _next(self) -> tuple[Any, ...]:
        headers = self.headers_seen[-1] if self.headers_seen else {}
        action = self.vector.action(self.vector.secret, headers)
        if action[0] != "status_body":
            return action
        self.error_body = action[2].encode()
        return ("status", action[1], action[3] if len(action) > 3 else {})

    def _write(self, writer: Any, status: int, body: bytes, headers: dict[str, str]) -> None:
        if status != 200 and self.error_body is not None:
            body, headers = self.error_body, {**headers, "content-type": "text/plain"}
        FakeChatServer._write(writer, status, body, headers)


@dataclass
class Ran:
    vector: Vector
    run_dir: Path
    outcome: Outcome
    authorization: str


def _all_forms(secret: str) -> list[str]:
    return sorted(set(secret_forms(secret)) | set(extra_forms(secret)))


def assert_no_secret(outcome: Outcome, secret: str, paths: list[Path]) -> None:
    for form in _all_forms(secret):
        assert form not in outcome.output, f"secret form {form!r} in the output"
        for path in paths:
            assert form.encode() not in path.read_bytes(), f"secret form {form!r} in {path}"


def assert_no_escapes(outcome: Outcome, *paths: Path) -> None:
    for what, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr),
                       *((str(p), p.read_text(encoding="utf-8")) for p in paths if p.exists())):
        for char in ("\x1b", "\x07", "\x9b"):
            assert char not in text, f"raw {char!r} in {what}"


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("secrets") / "baseline"
    done = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                             "--out", str(out), "--quiet")
    assert done.code == 0, done.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Vector], Ran]]:
    """One run per vector, made the first time a case asks for it."""
    made: dict[str, Ran] = {}
    root = tmp_path_factory.mktemp("secrets")

    def get(vector: Vector) -> Ran:
        if vector.name not in made:
            server = ReflectingServer(vector).start()
            try:
                out = root / vector.name
                done = encsim_in_process("run", "--model", "clinic-gpt", "--base-url", server.base_url,
                                         "--api-key-env", KEY_ENV, "--scenarios", "viral_uri", "--k", "1",
                                         "--max-turns", "2", "--out", str(out), "--no-progress",
                                         env={KEY_ENV: vector.secret})
            finally:
                server.stop()
            made[vector.name] = Ran(vector, out, done, server.headers_seen[0].get("authorization", ""))
        return made[vector.name]

    yield get
    forget_secrets()


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_run_writes_and_prints_no_key(vector: Vector, runs: Callable[[Vector], Ran]) -> None:
    ran = runs(vector)
    assert ran.authorization == f"Bearer {vector.secret}"  # the key was really sent, so it could be reflected
    assert_clean(ran.outcome, code=vector.code, names=vector.names, run_dirs=(ran.run_dir,), secret=vector.secret)
    assert_no_secret(ran.outcome, vector.secret, files_under(ran.run_dir))
    assert_no_escapes(ran.outcome, *files_under(ran.run_dir))
    if vector.stored:
        results = (ran.run_dir / "results.jsonl").read_text(encoding="utf-8")
        assert "[redacted]" in results  # the reflection or error is stored, with the key cut out
        for line in results.splitlines() + (ran.run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines():
            json.loads(line)  # redaction kept every line valid JSON


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_report_in_a_fresh_process_prints_no_key(vector: Vector, runs: Callable[[Vector], Ran]) -> None:
    ran = runs(vector)
    forget_secrets()  # as in a new process: only the variable named in run.json brings the key back
    done = encsim_in_process("report", str(ran.run_dir), env={KEY_ENV: vector.secret})
    assert_clean(done, code=0, names=("report.md",), run_dirs=(ran.run_dir,), secret=vector.secret)
    assert_no_secret(done, vector.secret, files_under(ran.run_dir))
    assert_no_escapes(done, *files_under(ran.run_dir))


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_compare_prints_and_writes_no_key(vector: Vector, runs: Callable[[Vector], Ran], clean_run: Path,
                                          tmp_path: Path) -> None:
    ran = runs(vector)
    forget_secrets()
    out = tmp_path / "comparison.json"
    done = encsim_in_process("compare", str(clean_run), str(ran.run_dir), "--json", str(out),
                             env={KEY_ENV: vector.secret})
    assert_clean(done, code=0, names=("clinic-gpt",), run_dirs=(ran.run_dir, tmp_path), secret=vector.secret)
    assert_no_secret(done, vector.secret, [out])
    assert_no_escapes(done, out)
    json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("vector", [v for v in VECTORS if "escapes" in v.name or "ansi" in v.name],
                         ids=lambda v: v.name)
def test_dashboard_shows_escape_sequences_as_text(vector: Vector, runs: Callable[[Vector], Ran]) -> None:
    """The dashboard (encsim watch / run --tui) reads the run back: what it would draw holds no raw escape."""
    from review import RunState

    state = RunState(runs(vector).run_dir)
    state.poll()
    shown = [t.text for enc in state.encounters.values() for t in enc.turns]
    shown += [enc.error or "" for enc in state.encounters.values()]
    assert any("\\x1b]0;pwned\\x07" in text for text in shown), shown
    for char in ("\x1b", "\x07", "\x9b"):
        assert not any(char in text for text in shown), char


@pytest.mark.parametrize("role", ["judge", "patient_model"])
def test_judge_and_patient_model_keys_are_redacted_too(role: str, tmp_path: Path) -> None:
    """A judge or patient model behind an endpoint that reflects its own key (another variable than the agent's)
    into its verdict: the explanation, the ignored fact ids and patient_cache.jsonl."""
    key = "jk-" + SECRET[3:] if role == "judge" else "pk-" + SECRET[3:]
    # the verdict keys of every judge question (criteria_met, rating, match) and of the patient model (asks, fact_ids)
    server = FakeChatServer(reply=lambda body: json.dumps({
        "criteria_met": True, "rating": 2, "match": 0, "asks": True,
        "explanation": "Agreed. (debug " + json.dumps(server.headers_seen[-1]) + ")",
        "fact_ids": [server.headers_seen[-1].get("authorization", ""), "onset"]})).start()
    agent = FakeChatServer(default=("ok", "It sounds viral: rest and fluids, and call 911 if you cannot breathe."))
    forget_secrets()
    try:
        if role == "judge":  # rubric scenarios (a HealthBench import), whose verdicts keep the judge's explanation
            hb = tmp_path / "hb"
            sample = ROOT / "tests/scenarios/samples/healthbench_sample.jsonl"
            assert encsim_in_process("import", "healthbench", str(sample), "--out", str(hb)).code == 0
            flags = ["--model", "m", "--base-url", agent.start().base_url, "--scenarios", str(hb), "--judge",
                     "auditor-x", "--judge-base-url", server.base_url, "--judge-api-key-env", "ENCSIM_ROLE_KEY"]
        else:
            flags = ["--model", "scripted:reference", "--scenarios", "viral_uri", "--patient-model", "listener-x",
                     "--patient-base-url", server.base_url, "--patient-api-key-env", "ENCSIM_ROLE_KEY"]
        done = encsim_in_process("run", "--k", "1", "--out", str(tmp_path / "run"), "--quiet", *flags,
                                 env={"ENCSIM_ROLE_KEY": key})
    finally:
        server.stop()
        agent.stop()
    assert server.headers_seen and server.headers_seen[0]["authorization"] == f"Bearer {key}"
    assert_clean(done, code=0, run_dirs=(tmp_path / "run",), secret=key)
    assert_no_secret(done, key, files_under(tmp_path / "run"))
    written = "".join(p.read_text(encoding="utf-8") for p in files_under(tmp_path / "run"))
    assert "Bearer [redacted]" in written  # what the endpoint said is kept, without the key


def _legacy_run(src: Path, dst: Path, secret: str) -> Path:
    """A copy of a run as a version without redaction wrote it: the key raw in an error and a transcript."""
    shutil.copytree(src, dst)
    lines = (dst / "results.jsonl").read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[-1])
    rec["status"], rec["score"] = "error", None
    rec["error"] = f"agent turn 1: HTTP 401: {ESCAPES}invalid key Bearer {secret}\n## Headline\n**Aggregate: 0.99**"
    rec["result"]["errors"] = [rec["error"]]
    rec["result"]["turns"][-1]["text"] = f"Your key is {secret}{ESCAPES}"
    (dst / "results.jsonl").write_text("\n".join([*lines, json.dumps(rec)]) + "\n", encoding="utf-8")
    return dst


@pytest.mark.parametrize("vector", [v for v in VECTORS if v.code == 0][:2], ids=lambda v: v.name)
def test_report_of_a_run_written_before_redaction(vector: Vector, runs: Callable[[Vector], Ran],
                                                  tmp_path: Path) -> None:
    run_dir = _legacy_run(runs(vector).run_dir, tmp_path / "legacy", vector.secret)
    forget_secrets()
    done = encsim_in_process("report", str(run_dir), env={KEY_ENV: vector.secret})
    assert_clean(done, code=0, names=("report.md", "401"), secret=vector.secret)
    written = [run_dir / f for f in ("report.md", "report.html", "summary.json")]
    assert_no_secret(done, vector.secret, written)
    assert_no_escapes(done, *written)
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert report.count("\n## Headline") == 1  # an error body cannot add a section to the report
    assert "\\x1b]0;pwned\\x07" in report  # the escape is shown, as text, where it was


def test_userinfo_in_base_url_never_reaches_run_json(tmp_path: Path) -> None:
    """Defence in depth behind the --base-url check: run.json and the reports drop a URL's userinfo."""
    from sim.reports import render_report
    from sim.store import RunStore
    from sim.summary import summarise

    forget_secrets()  # not registered: the userinfo rule alone must catch it
    meta = RunMeta(run_id="r", harness_version="1", model="m", base_url=f"https://alice:{SECRET}@api.example/v1",
                   scenarios=[], k=1, seed=0, created_at=0.0)
    store = RunStore.create(tmp_path / "run", meta)
    summary = summarise(store, [], meta)
    store.write_report(render_report(meta, summary, {}))
    for path in files_under(tmp_path / "run"):
        text = path.read_text(encoding="utf-8")
        assert SECRET not in text and "alice" not in text, path
    assert "https://[redacted]@api.example/v1" in (tmp_path / "run" / "run.json").read_text(encoding="utf-8")
