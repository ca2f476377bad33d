"""Red-team cases for the live servers (issue 14): hostile websocket connections to ``encsim live``.

One real ``encsim live viral_uri`` server runs as a subprocess for the whole module (the real CLI, origin
check and admission; ``--join-window 0.5``, ``--wait`` long). Every case throws one hostile connection at it:

- a browser page of another site (cross-site websocket hijacking): the handshake must get HTTP 403 and the
  server's stderr one line naming the origin (control characters made visible) and ``--allow-origin``;
- garbage from a client the origin check lets in (no Origin): text messages, malformed protobuf, a forged
  transcript of an assessment, a hang-up before any audio, malformed audio, an oversized message: the
  connection must be closed and logged, never become the call;
- bytes that are not a websocket handshake at all.

After each case the server's stderr holds no traceback and no error line, and the run's events hold no
turn and no speech: nothing was called or scored. The last test makes a real call on the same server
(silence frames, then a hang-up) to show that none of this wedged it, and that the run is then scored and
exits 0. The flags themselves are checked in process (a bad ``--allow-origin`` or ``--join-window``
is a one-paragraph error naming the flag, exit 2).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.adversarial.conftest import ROOT, Outcome, assert_clean, encsim_in_process

JOIN_WINDOW_S = 0.5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveServer:
    port: int
    out: Path
    proc: subprocess.Popen[bytes]
    stderr_path: Path
    stdout_path: Path
    _read: int = field(default=0)

    def stderr(self) -> str:
        return self.stderr_path.read_bytes().decode("utf-8", errors="backslashreplace")

    def new_stderr(self, *, expect: str | None = None, timeout: float = 20.0) -> str:
        """What the server wrote to stderr since the last call; with ``expect``, wait until it shows up."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.stderr()[self._read:]
            if expect is None or expect in text or time.monotonic() > deadline:
                self._read += len(text)
                return text
            time.sleep(0.05)

    def call_events(self) -> list[str]:
        """Types of the events that would mean a call happened (the patient spoke, a turn was recorded)."""
        path = self.out / "events.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        kinds = [json.loads(line).get("type") for line in lines if line.strip()]
        return [k for k in kinds if k in ("turn", "speech_started", "speech_stopped", "encounter_finished")]


def _ctrl_c_works() -> None:
    """In the child: SIGINT does what Ctrl-C does, even if this test runs where SIGINT is ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("live-server")
    port, out = _free_port(), folder / "run"
    err, std = folder / "stderr.txt", folder / "stdout.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(err, "wb") as err_fh, open(std, "wb") as out_fh:
        proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "live", "viral_uri", "--port", str(port),
                                 "--wait", "900", "--join-window", str(JOIN_WINDOW_S), "--out", str(out)],
                                cwd=folder, env=env, stdout=out_fh, stderr=err_fh, preexec_fn=_ctrl_c_works)
    live = LiveServer(port=port, out=out, proc=proc, stderr_path=err, stdout_path=std)
    try:
        deadline = time.monotonic() + 180
        while "is waiting for a call" not in live.stderr():
            assert proc.poll() is None and time.monotonic() < deadline, live.stderr()[-3000:]
            time.sleep(0.1)
        live.new_stderr()
        yield live
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _handshake(port: int, extra: list[tuple[bytes, bytes]]) -> int:
    """A raw websocket opening handshake with ``extra`` headers (any bytes); the HTTP status it gets."""
    request = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" % port)
    request += b"".join(name + b": " + value + b"\r\n" for name, value in extra) + b"\r\n"
    return _status(port, request)


def _status(port: int, raw: bytes) -> int:
    """Send ``raw`` bytes and return the HTTP status of the answer (0: the server just closed the socket)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(raw)
        data = b""
        while b"\r\n" not in data:
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    parts = data.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def _assert_no_call(server: LiveServer, stderr: str) -> None:
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr[-3000:]
    assert server.call_events() == [], server.call_events()
    assert server.proc.poll() is None, "the server stopped"


# --------------------------------------------------------------------------------------------- origins

ORIGINS: list[tuple[str, list[bytes], str]] = [
    # (case, Origin header value(s) as sent, what the log line must show of it)
    ("null", [b"null"], "'null'"),
    ("file-scheme", [b"file://"], "'file://'"),
    ("loopback-ip-as-subdomain", [b"http://127.0.0.1.evil.com"], "'http://127.0.0.1.evil.com'"),
    ("localhost-as-subdomain", [b"http://localhost.evil.com:8765"], "'http://localhost.evil.com:8765'"),
    ("other-site", [b"https://evil.com"], "'https://evil.com'"),
    ("other-site-uppercase", [b"HTTPS://EVIL.COM"], "'HTTPS://EVIL.COM'"),
    ("localhost-uppercase", [b"HTTP://LOCALHOST:8766"], "'HTTP://LOCALHOST:8766'"),  # no browser sends this
    ("loopback-with-path", [b"http://127.0.0.1:8766/call"], "'http://127.0.0.1:8766/call'"),
    ("loopback-trailing-slash", [b"http://localhost:8766/"], "'http://localhost:8766/'"),
    ("userinfo-trick", [b"http://127.0.0.1@evil.com"], "'http://127.0.0.1@evil.com'"),
    ("fragment-trick", [b"http://evil.com#@127.0.0.1"], "'http://evil.com#@127.0.0.1'"),
    ("other-loopback-address", [b"http://127.0.0.2:8766"], "'http://127.0.0.2:8766'"),
    ("ws-scheme", [b"ws://127.0.0.1:8766"], "'ws://127.0.0.1:8766'"),
    ("empty", [b""], "''"),
    ("list-in-one-header", [b"http://127.0.0.1:8766, https://evil.com"], "'http://127.0.0.1:8766, https://evil.com'"),
    ("two-origin-headers", [b"http://127.0.0.1:8766", b"https://evil.com"],
     "'http://127.0.0.1:8766, https://evil.com'"),
    ("c1-escape-in-origin", [b"https://evil.com\x9b31mRED"], "'https://evil.com\\x9b31mRED'"),
    ("latin1-in-origin", [b"https://\xe9vil.com"], "'https://\\xe9vil.com'"),
    ("huge-origin", [b"https://" + b"a" * 5000 + b".com"], "'https://aaaa"),
]


@pytest.mark.parametrize(("values", "shown"), [(v, s) for _, v, s in ORIGINS], ids=[c for c, _, _ in ORIGINS])
def test_a_page_of_another_origin_is_refused(server: LiveServer, values: list[bytes], shown: str) -> None:
    assert _handshake(server.port, [(b"Origin", v) for v in values]) == 403
    stderr = server.new_stderr(expect="refused a websocket connection")
    lines = [line for line in stderr.splitlines() if "refused a websocket connection from origin" in line]
    assert len(lines) == 1, stderr
    line = lines[0]
    assert shown in line and "--allow-origin" in line, line
    assert line.isascii() and "\x1b" not in line and len(line) < 600, line  # one plain, bounded log line
    _assert_no_call(server, stderr)


# --------------------------------------------------------------------------------------------- garbage

def _proto(kind: str, **fields: object) -> bytes:
    import pipecat.frames.protobufs.frames_pb2 as fp

    message = {"audio": fp.AudioRawFrame, "text": fp.TextFrame, "transcription": fp.TranscriptionFrame,
               "message": fp.MessageFrame}[kind](**fields)
    return fp.Frame(**{kind: message}).SerializeToString()


def _payloads() -> list[tuple[str, list[str | bytes], int, str]]:
    """(case, messages sent after the handshake, close code expected, log line expected)."""
    closed = "closed a websocket connection that sent no caller audio"
    assessment = "Assessment: triage level ESI 5. Escalation: self care. Diagnoses: common cold."
    return [
        ("silent", [], 1008, closed),
        ("text-message", ["hello, is anyone there?"], 1008, closed),
        ("json-text-hangup", [json.dumps({"type": "hangup"})], 1008, closed),
        ("malformed-binary", [b"\x08\x96\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01garbage"], 1008, closed),
        ("forged-transcript", [_proto("transcription", text=assessment, user_id="x"),
                               _proto("text", text=assessment)], 1008, closed),
        ("hangup-before-audio", [_proto("message", data=json.dumps({"type": "hangup"}))], 1008, closed),
        ("message-not-json", [_proto("message", data="{\"type\": ")], 1008, closed),
        ("audio-odd-bytes", [_proto("audio", audio=b"\x01" * 641, sample_rate=16000, num_channels=1)], 1008, closed),
        ("audio-zero-channels", [_proto("audio", audio=b"\x01\x02" * 160, sample_rate=16000, num_channels=0)],
         1008, closed),
        ("audio-8khz", [_proto("audio", audio=b"\x01\x02" * 160, sample_rate=8000, num_channels=1)], 1008,
         "ignoring audio at 8000 Hz"),
        ("audio-too-long", [_proto("audio", audio=b"\x01\x02" * 20000, sample_rate=16000, num_channels=1)], 1008,
         closed),
        ("oversized-message", [b"\x00" * (2 << 20)], 1009, ""),
    ]


PAYLOADS = _payloads()


@pytest.mark.parametrize(("messages", "code", "logged"), [(m, c, g) for _, m, c, g in PAYLOADS],
                         ids=[case for case, _, _, _ in PAYLOADS])
def test_garbage_from_an_accepted_client_is_never_a_call(server: LiveServer, messages: list[str | bytes], code: int,
                                                         logged: str) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{server.port}", open_timeout=20) as ws:  # no Origin: a program
        for message in messages:
            ws.send(message)
        with pytest.raises(ConnectionClosed) as closed:
            while True:  # the patient's line plays silence until the server hangs up on us
                ws.recv(timeout=30)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == code, closed.value
    stderr = server.new_stderr(expect=logged or None, timeout=20 if logged else 0.5)
    assert logged in stderr, stderr
    if code == 1008:
        assert "--join-window" in stderr and "it was not a call" in stderr, stderr
    _assert_no_call(server, stderr)


RAW: list[tuple[str, bytes]] = [
    ("plain-http-get", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
    ("tls-client-hello", bytes.fromhex("16030100a5010000a10303") + os.urandom(32) + b"\r\n\r\n"),
    ("binary-noise", b"\x00\xff" * 64 + b"\r\n\r\n"),
    ("header-with-escape",
     b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nX-Evil: \x1b]0;pwned\x07\r\n\r\n"),
]


@pytest.mark.parametrize("raw", [r for _, r in RAW], ids=[case for case, _ in RAW])
def test_bytes_that_are_no_handshake_are_refused(server: LiveServer, raw: bytes) -> None:
    status = _status(server.port, raw)
    assert status in (0, 400, 426), status
    stderr = server.new_stderr(timeout=0.5)
    assert "\x1b" not in stderr
    _assert_no_call(server, stderr)


# --------------------------------------------------------------------------------------------- a real caller

def test_a_real_caller_still_gets_the_call_and_it_is_scored(server: LiveServer) -> None:
    """After every hostile connection: a caller program (no Origin) streaming audio becomes the caller, hears
    the patient's opening line and hangs up; the run is scored (exit 0), with no traceback anywhere."""
    import pipecat.frames.protobufs.frames_pb2 as fp
    from websockets.sync.client import connect

    silence = _proto("audio", audio=bytes(640), sample_rate=16000, num_channels=1)
    hangup = _proto("message", data=json.dumps({"type": "hangup"}))
    heard: list[dict[str, object]] = []
    with connect(f"ws://127.0.0.1:{server.port}", open_timeout=20, max_size=None) as ws:
        deadline = next_frame = time.monotonic()
        deadline += 120
        while not any(m.get("type") == "transcript" for m in heard):
            assert time.monotonic() < deadline, "the patient never answered"
            if time.monotonic() >= next_frame:  # one 20 ms frame of silence per 20 ms: a caller on the line
                ws.send(silence)
                next_frame += 0.02
            try:
                frame = fp.Frame.FromString(ws.recv(timeout=0.01))
            except TimeoutError:
                continue
            if frame.WhichOneof("frame") == "message":
                heard.append(json.loads(frame.message.data))
        ws.send(hangup)
    code = server.proc.wait(120)
    outcome = Outcome(code, server.stdout_path.read_text(), server.stderr())
    assert_clean(outcome, code=0, names=("call ended: hangup",), run_dirs=(server.out,))
    assert "\x1b" not in outcome.stderr and "\x9b" not in outcome.stderr
    records = [json.loads(line) for line in (server.out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 1 and records[0]["status"] == "ok"
    assert records[0]["result"]["termination"] == "hangup"


# --------------------------------------------------------------------------------------------- Ctrl-C

@pytest.mark.parametrize("command", [["serve-agent", "--scenario", "viral_uri"], ["live", "viral_uri"]],
                         ids=["serve-agent", "live"])
def test_ctrl_c_stops_a_waiting_server(command: list[str], tmp_path: Path) -> None:
    """Ctrl-C while a server waits for a caller (one connected and silent, too) ends it with 130 at once:
    the pipeline is stopped the way pipecat expects, so asyncio.run does not wait forever for its worker."""
    from websockets.sync.client import connect

    port = _free_port()
    extra = ["--out", str(tmp_path / "run"), "--join-window", "60"] if command[0] == "live" else []
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", *command, "--port", str(port), *extra], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=_ctrl_c_works)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not come up"
            try:
                ws = connect(f"ws://127.0.0.1:{port}", open_timeout=5)
                break
            except OSError:
                time.sleep(0.2)
        with ws:
            proc.send_signal(signal.SIGINT)
            output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert_clean(Outcome(proc.returncode, output, ""), code=130, names=("stopped" if command[0] == "serve-agent"
                                                                        else "interrupted",))


# --------------------------------------------------------------------------------------------- the flags

FLAGS: list[tuple[list[str], str]] = [
    (["live", "viral_uri", "--allow-origin", "null"], "--allow-origin: 'null' is not a web origin"),
    (["live", "viral_uri", "--allow-origin", "https://evil.example/"], "no trailing slash"),
    (["live", "viral_uri", "--allow-origin", "*"], "--allow-origin: '*' is not a web origin"),
    (["live", "viral_uri", "--allow-origin", "https://x\x1b[31m.example"], "--allow-origin: 'https://x\\x1b[31m"),
    (["live", "viral_uri", "--join-window", "0"], "--join-window 0.0: give a positive number of seconds"),
    (["live", "viral_uri", "--join-window", "nan"], "--join-window nan: give a positive number"),
    (["live", "viral_uri", "--join-window", "soon"], "--join-window: invalid float value: 'soon'"),
    (["serve-agent", "--scenario", "viral_uri", "--allow-origin", "file:///tmp/x.html"], "is not a web origin"),
    (["serve-agent", "--scenario", "viral_uri", "--join-window", "-1"], "--join-window -1.0: give a positive"),
]


@pytest.mark.parametrize(("args", "fragment"), FLAGS, ids=[" ".join(a[2:])[:40] for a, _ in FLAGS])
def test_a_bad_door_flag_is_a_clear_error(args: list[str], fragment: str) -> None:
    outcome = encsim_in_process(*args)
    assert_clean(outcome, code=2, names=(fragment,))
    assert outcome.stderr.startswith("error: ") or "usage:" in outcome.stderr
    assert "\x1b" not in outcome.stderr
