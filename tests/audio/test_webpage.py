"""The browser call page (audio/webpage.py, audio/web/): a real aiohttp server on 127.0.0.1; codec.js
against pipecat's real ProtobufFrameSerializer through node; dsp.js in node; and, when Chromium is
installed, one real call in headless Chromium with its fake microphone against a stand-in patient
that speaks pipecat's protobuf wire format."""

from __future__ import annotations

import asyncio
import base64
import html
import json
import os
import re
import shutil
import signal
import socket
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import httpx
import numpy as np
import pytest

import audio.webpage
from audio.webpage import CallPagePortError, content_security_policy, start_call_page

WEB = Path(audio.webpage.__file__).parent / "web"
CODEC = WEB / "codec.js"
DSP = WEB / "dsp.js"
WS_URL = "ws://127.0.0.1:8765/patient"
EVIL_TITLE = 'Chest pain </script><script>alert(1)</script> "quoted" & {{ws_url}}'

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed, so codec.js/dsp.js cannot be run: "
                                "install Node.js (apt-get install nodejs)")


# ---- helpers --------------------------------------------------------------------------------------


async def _get(url: str, **kw) -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as client:
        return await client.get(url, **kw)


class _Refs(HTMLParser):
    """Collects tags with their attributes and the text inside <script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.script_text.append(data)


def _parse(page: str) -> _Refs:
    p = _Refs()
    p.feed(page)
    return p


def _local_refs(page: str, scripts: dict[str, str]) -> set[str]:
    """Every path the page or its scripts load: src/href attributes and '/x.js'-style string literals."""
    refs = {v for _, attrs in _parse(page).tags for k, v in attrs.items() if k in ("src", "href") and v}
    for text in scripts.values():
        refs |= set(re.findall(r"""['"](/[\w./-]+\.(?:js|css|html))['"]""", text))
    return refs


def _node(script: str, stdin: str = "") -> str:
    assert NODE is not None
    proc = subprocess.run([NODE, "-e", script, str(CODEC), str(DSP)], input=stdin, capture_output=True,
                          text=True, timeout=20)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _csp(header: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for directive in header.split(";"):
        parts = directive.split()
        if parts:
            out[parts[0]] = parts[1:]
    return out


# ---- the server -----------------------------------------------------------------------------------


async def test_page_is_served_with_injected_url_escaped_title_and_headers() -> None:
    async with await start_call_page(ws_url=WS_URL, title=EVIL_TITLE) as server:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", server.url)
        assert server.url == f"http://127.0.0.1:{server.port}/"
        r = await _get(server.url)
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/html; charset=utf-8"
        page = r.text

        # The ws URL sits in the meta tag, nowhere else.
        assert f'<meta name="encsim-ws" content="{WS_URL}">' in page
        assert page.count(WS_URL) == 1
        # The evil title is escaped in <title> and <h1>, and its "{{ws_url}}" stays literal.
        escaped = html.escape(EVIL_TITLE, quote=True)
        assert f"<title>{escaped}</title>" in page
        assert f"<h1>{escaped}</h1>" in page
        assert "<script>alert(1)" not in page
        assert "</script><script>" not in page
        assert "{{" not in page.replace(escaped, "")
        parsed = _parse(page)
        scripts = [attrs for tag, attrs in parsed.tags if tag == "script"]
        assert [s.get("src") for s in scripts] == ["/codec.js", "/dsp.js", "/call.js"]
        # Nothing inline that the CSP would block: no script bodies, handlers or style attributes.
        assert parsed.script_text == []
        assert not [a for _, attrs in parsed.tags for a in attrs if a.startswith("on") or a == "style"]
        assert not [t for t, _ in parsed.tags if t == "style"]

        csp = _csp(r.headers["content-security-policy"])
        assert csp["default-src"] == ["'none'"]
        assert csp["script-src"] == ["'self'"]
        assert csp["style-src"] == ["'self'"]
        assert csp["connect-src"] == ["ws://127.0.0.1:8765"]
        assert csp["frame-ancestors"] == ["'none'"]
        assert csp["base-uri"] == ["'none'"]
        assert "unsafe" not in r.headers["content-security-policy"]
        assert r.headers["cache-control"] == "no-store"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"


async def test_assets_404_and_host_header() -> None:
    async with await start_call_page(ws_url=WS_URL, title="t") as server:
        for path, ctype in [("codec.js", "text/javascript"), ("dsp.js", "text/javascript"),
                            ("call.js", "text/javascript"), ("capture-worklet.js", "text/javascript"),
                            ("call.css", "text/css")]:
            r = await _get(server.url + path)
            assert r.status_code == 200, path
            assert r.headers["content-type"] == f"{ctype}; charset=utf-8", path
            assert r.content == (WEB / path).read_bytes(), path
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["cache-control"] == "no-store"
            assert "content-security-policy" in r.headers
        for path in ["nope", "call.html", "webpage.py", "../webpage.py", "%2e%2e/webpage.py", "codec.js/x",
                     "index.html", "favicon.ico"]:
            r = await _get(server.url + path)
            assert r.status_code == 404, path
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["cache-control"] == "no-store"
        # Another Host (DNS rebinding) is refused.
        r = await _get(server.url, headers={"Host": f"evil.example:{server.port}"})
        assert r.status_code == 421
        assert "encsim-ws" not in r.text
        r = await _get(server.url, headers={"Host": f"localhost:{server.port}"})
        assert r.status_code == 421  # bound as 127.0.0.1, so only that name


async def test_localhost_and_ipv6_loopback() -> None:
    async with await start_call_page(ws_url=WS_URL, title="t", host="localhost") as server:
        assert server.url == f"http://127.0.0.1:{server.port}/"
        assert (await _get(server.url)).status_code == 200
        assert (await _get(server.url, headers={"Host": f"localhost:{server.port}"})).status_code == 200
    if not socket.has_ipv6:
        return
    try:
        server6 = await start_call_page(ws_url=WS_URL, title="t", host="::1")
    except CallPagePortError:
        return  # no IPv6 loopback on this machine
    async with server6:
        assert server6.url == f"http://[::1]:{server6.port}/"
        assert (await _get(server6.url)).status_code == 200


async def test_non_loopback_host_and_bad_arguments_are_refused() -> None:
    for host in ["0.0.0.0", "::", "192.168.1.10", "example.com", ""]:
        with pytest.raises(ValueError, match="host"):
            await start_call_page(ws_url=WS_URL, title="t", host=host)
    for bad in ["http://127.0.0.1:8765/", "javascript:alert(1)", "ws://127.0.0.1:8765/a b",
                "ws://127.0.0.1:8765/;script-src *", "ws://u:p@127.0.0.1:1/", "ws:///x", "ws://[::1]:8765/",
                'ws://127.0.0.1:8765/"><script>', "ws://127.0.0.1:99999/", ""]:
        with pytest.raises(ValueError):
            await start_call_page(ws_url=bad, title="t")
    with pytest.raises(ValueError, match="port"):
        await start_call_page(ws_url=WS_URL, title="t", port=70000)


def test_csp_connect_src_is_the_exact_origin() -> None:
    assert _csp(content_security_policy("wss://Patient.example:9443/a/b?x=1"))["connect-src"] == \
        ["wss://patient.example:9443"]
    assert _csp(content_security_policy("ws://localhost/"))["connect-src"] == ["ws://localhost"]


async def test_taken_port_gives_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(CallPagePortError) as info:
            await start_call_page(ws_url=WS_URL, title="t", port=port)
    assert isinstance(info.value, OSError)
    assert str(port) in str(info.value)
    assert "--port" in str(info.value)
    # An explicit free port works.
    async with await start_call_page(ws_url=WS_URL, title="t", port=port) as server:
        assert server.port == port


async def test_served_files_reference_no_external_host() -> None:
    async with await start_call_page(ws_url=WS_URL, title="t") as server:
        page = (await _get(server.url)).text
        scripts: dict[str, str] = {}
        texts = {"/": page}
        pending = _local_refs(page, {})
        seen: set[str] = set()
        while pending:  # crawl everything the page and its scripts load
            path = pending.pop()
            seen.add(path)
            assert path.startswith("/") and not path.startswith("//"), path
            r = await _get(server.url + path.lstrip("/"))
            assert r.status_code == 200, f"{path} is referenced but not served"
            texts[path] = r.text
            if path.endswith(".js"):
                scripts[path] = r.text
            pending |= _local_refs("", {path: r.text}) - seen
        assert {"/codec.js", "/dsp.js", "/call.js", "/call.css", "/capture-worklet.js"} <= seen

        for path, text in texts.items():
            without_ws = text.replace(WS_URL, "") if path == "/" else text
            assert not re.search(r"https?:", without_ws, re.I), path
            assert not re.search(r"wss?://", without_ws, re.I), f"{path}: a websocket URL other than the injected one"
            assert not re.search(r"""(?:src|href|action|srcset)\s*=\s*["']?\s*//""", text, re.I), path
            assert not re.search(r"""["'`(]\s*//\w""", text), f"{path}: protocol-relative URL"
            assert "@import" not in text, path
            for target in re.findall(r"url\(\s*['\"]?([^'\")]*)", text):
                assert target.startswith("/") and not target.startswith("//"), (path, target)
            assert "importScripts" not in text, path
            assert "eval(" not in text and "new Function" not in text, path
        # The page script connects only to the URL read from the injected meta tag.
        call_js = scripts["/call.js"]
        assert re.findall(r"new WebSocket\(([^)]*)\)", call_js) == ["wsUrl"]
        assert 'meta[name="encsim-ws"]' in call_js
        assert "innerHTML" not in call_js and "insertAdjacentHTML" not in call_js


# ---- codec.js against pipecat's ProtobufFrameSerializer -------------------------------------------

_DECODE_JS = r"""
const codec = require(process.argv[1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.map((b64) => {
  const f = codec.decodeFrame(new Uint8Array(Buffer.from(b64, 'base64')));
  if (f.kind === 'audio') {
    if (!(f.audio instanceof Int16Array)) throw new Error('audio is not an Int16Array');
    f.audio = Array.from(f.audio);
  }
  return f;
});
process.stdout.write(JSON.stringify(out));
"""

_ENCODE_JS = r"""
const codec = require(process.argv[1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const b64 = (u8) => Buffer.from(u8).toString('base64');
const out = input.map((item) => item.message !== undefined
  ? b64(codec.encodeMessageFrame(item.message))
  : b64(codec.encodeAudioFrame(Int16Array.from(item.samples), item.rate, item.channels)));
process.stdout.write(JSON.stringify(out));
"""


def _samples(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    s = rng.integers(-32768, 32768, size=n, dtype=np.int32).astype(np.int16)
    s[:4] = [-32768, 32767, 0, -1]
    return s


@needs_node
async def test_node_decodes_what_pipecat_serializes() -> None:
    from pipecat.frames.frames import (
        InterruptionFrame,
        OutputAudioRawFrame,
        OutputTransportMessageFrame,
        TextFrame,
        TranscriptionFrame,
    )
    from pipecat.serializers.protobuf import ProtobufFrameSerializer

    ser = ProtobufFrameSerializer()  # serialize needs no setup(): it reads only the frame
    a16 = _samples(320, 1)
    a22 = _samples(960, 2)
    stereo = _samples(2 * 441, 3)
    message = {"type": "transcript", "speaker": "patient", "text": "It hurts here — ça fait mal 😣"}
    frames = [
        OutputAudioRawFrame(audio=a16.tobytes(), sample_rate=16000, num_channels=1),
        OutputAudioRawFrame(audio=a22.tobytes(), sample_rate=22050, num_channels=1),
        OutputAudioRawFrame(audio=stereo.tobytes(), sample_rate=44100, num_channels=2),
        TranscriptionFrame(text="chest pain since noon", user_id="caller-7", timestamp="2026-01-02T03:04:05Z"),
        TextFrame(text="hello"),
        InterruptionFrame(),
        OutputTransportMessageFrame(message=message),
    ]
    blobs = [await ser.serialize(f) for f in frames]
    assert all(isinstance(b, bytes) and b for b in blobs)
    out = json.loads(_node(_DECODE_JS, json.dumps([base64.b64encode(b).decode() for b in blobs])))

    assert [o["kind"] for o in out] == ["audio", "audio", "audio", "transcription", "text", "interruption", "message"]
    for o, f, s in zip(out[:3], frames[:3], [a16, a22, stereo], strict=True):
        assert o["audio"] == s.tolist()
        assert o["sampleRate"] == f.sample_rate
        assert o["numChannels"] == f.num_channels
        assert o["id"] == f.id and o["name"] == f.name  # multi-byte varints / strings in the header fields
    assert out[1]["sampleRate"] == 22050  # a 3-byte varint
    t = out[3]
    assert (t["text"], t["userId"], t["timestamp"]) == ("chest pain since noon", "caller-7", "2026-01-02T03:04:05Z")
    assert out[4]["text"] == "hello"
    assert out[5]["name"] == frames[5].name
    assert json.loads(out[6]["data"]) == message


@needs_node
async def test_pipecat_deserializes_what_node_encodes() -> None:
    from pipecat.frames.frames import InputAudioRawFrame, InputTransportMessageFrame
    from pipecat.frames.protobufs import frames_pb2
    from pipecat.serializers.protobuf import ProtobufFrameSerializer

    a16 = _samples(320, 4)
    a22 = _samples(960, 5)
    hangup = json.dumps({"type": "hangup"})
    fancy = json.dumps({"type": "note", "text": "naïve — 😷", "n": [1, 2]}, ensure_ascii=False)
    items = [
        {"samples": a16.tolist(), "rate": 16000, "channels": 1},
        {"samples": a22.tolist(), "rate": 22050, "channels": 1},
        {"message": hangup},
        {"message": fancy},
    ]
    encoded = [base64.b64decode(b) for b in json.loads(_node(_ENCODE_JS, json.dumps(items)))]

    ser = ProtobufFrameSerializer()
    f16, f22, m1, m2 = [await ser.deserialize(b) for b in encoded]
    for frame, samples, rate in [(f16, a16, 16000), (f22, a22, 22050)]:
        assert isinstance(frame, InputAudioRawFrame)
        assert frame.audio == samples.tobytes()
        assert frame.sample_rate == rate
        assert frame.num_channels == 1
    assert isinstance(m1, InputTransportMessageFrame) and m1.message == {"type": "hangup"}
    assert isinstance(m2, InputTransportMessageFrame) and m2.message == json.loads(fancy)

    # Byte-for-byte what protobuf itself writes for the same frames.
    canon = [
        frames_pb2.Frame(audio=frames_pb2.AudioRawFrame(audio=a16.tobytes(), sample_rate=16000, num_channels=1)),
        frames_pb2.Frame(audio=frames_pb2.AudioRawFrame(audio=a22.tobytes(), sample_rate=22050, num_channels=1)),
        frames_pb2.Frame(message=frames_pb2.MessageFrame(data=hangup)),
        frames_pb2.Frame(message=frames_pb2.MessageFrame(data=fancy)),
    ]
    assert encoded == [c.SerializeToString() for c in canon]


@needs_node
def test_codec_edge_cases() -> None:
    from pipecat.frames.protobufs import frames_pb2

    audio = frames_pb2.Frame(audio=frames_pb2.AudioRawFrame(audio=b"\x01\x00\xff\x7f", sample_rate=8000,
                                                            num_channels=1, id=2**60 + 3, pts=5)).SerializeToString()
    inner = frames_pb2.AudioRawFrame(audio=b"\x02\x00", sample_rate=16000, num_channels=1).SerializeToString()
    # Unknown fields (varint 15, fixed64 14, fixed32 13, bytes 12) inside and outside the oneof are skipped.
    extra = b"\x78\x2a" + b"\x71" + bytes(8) + b"\x6d" + bytes(4) + b"\x62\x02ab"
    unknown_fields = b"\x12" + bytes([len(inner) + len(extra)]) + inner + extra + b"\x78\x01"
    script = r"""
const codec = require(process.argv[1]);
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8')).map((b) => new Uint8Array(Buffer.from(b, 'base64')));
const res = [];
const big = codec.decodeFrame(cases[0]);
res.push({kind: big.kind, id: String(big.id), idType: typeof big.id, pts: big.pts, audio: Array.from(big.audio)});
const unk = codec.decodeFrame(cases[1]);
res.push({kind: unk.kind, audio: Array.from(unk.audio), sampleRate: unk.sampleRate});
res.push(codec.decodeFrame(new Uint8Array(0)).kind);
res.push(codec.decodeFrame(new Uint8Array([0x78, 0x05])).kind);
for (const bad of [cases[0].subarray(0, cases[0].length - 1), new Uint8Array([0x12, 0x80]), new Uint8Array([0x13])]) {
  try { codec.decodeFrame(bad); res.push('no error'); } catch (e) { res.push('error'); }
}
try { codec.encodeAudioFrame([1, 2], 16000, 1); res.push('no error'); } catch (e) { res.push(e.name); }
const odd = codec.decodeFrame(codec.encodeAudioFrame(new Int16Array(0), 16000, 1));
res.push([odd.kind, odd.audio.length, odd.sampleRate]);
process.stdout.write(JSON.stringify(res));
"""
    stdin = json.dumps([base64.b64encode(audio).decode(), base64.b64encode(unknown_fields).decode()])
    out = json.loads(_node(script, stdin))
    assert out[0] == {"kind": "audio", "id": str(2**60 + 3), "idType": "bigint", "pts": 5, "audio": [1, 32767]}
    assert out[1] == {"kind": "audio", "audio": [2], "sampleRate": 16000}
    assert out[2:4] == ["unknown", "unknown"]
    assert out[4:7] == ["error", "error", "error"]
    assert out[7] == "TypeError"
    assert out[8] == ["audio", 0, 16000]


# ---- dsp.js --------------------------------------------------------------------------------------


@needs_node
def test_capture_framer_and_playback_clock() -> None:
    script = r"""
const dsp = require(process.argv[2]);
const res = {};
for (const rate of [48000, 44100, 16000]) {
  for (const freq of [440, 12000]) {
    const frames = [];
    const framer = new dsp.CaptureFramer(rate, (f) => frames.push(Array.from(f)));
    const total = rate; // one second, in 128-sample render quanta
    for (let start = 0; start < total; start += 128) {
      const n = Math.min(128, total - start);
      const block = new Float32Array(n);
      for (let i = 0; i < n; i++) block[i] = 0.5 * Math.sin(2 * Math.PI * freq * (start + i) / rate);
      framer.push(block);
    }
    res[rate + '/' + freq] = {count: frames.length, lengths: [...new Set(frames.map((f) => f.length))],
                              samples: [].concat(...frames)};
  }
}
const clock = new dsp.PlaybackClock(0.08);
res.clock = [clock.schedule(1.0, 0.02), clock.schedule(1.005, 0.02), clock.schedule(1.01, 0.04),
             clock.buffered(1.01)];
clock.schedule(1.2, 0.0); // late: underrun
res.afterUnderrun = clock.schedule(1.2, 0.02);
clock.reset();
res.afterReset = clock.schedule(1.3, 0.02);
res.int16 = [dsp.floatToInt16(1.5), dsp.floatToInt16(-1.5), dsp.floatToInt16(0.5), dsp.floatToInt16(NaN)];
res.deinterleave = dsp.deinterleave(Int16Array.from([16384, -16384, 0, 32767]), 2).map((c) => Array.from(c));
process.stdout.write(JSON.stringify(res));
"""
    res = json.loads(_node(script))
    for rate in (48000, 44100, 16000):
        tone = res[f"{rate}/440"]
        assert tone["lengths"] == [320]
        assert 49 <= tone["count"] <= 50  # one second of 16 kHz = 50 frames of 20 ms
        s = np.array(tone["samples"], dtype=np.float64) / 32768
        settled = s[800:]
        spectrum = np.abs(np.fft.rfft(settled * np.hanning(len(settled))))
        peak_hz = np.argmax(spectrum) * 16000 / len(settled)
        assert abs(peak_hz - 440) < 5, (rate, peak_hz)
        assert 0.4 < np.max(np.abs(settled)) < 0.6  # amplitude kept
        if rate != 16000:
            # 12 kHz is above the 8 kHz Nyquist of the output: the anti-alias filter must remove it.
            alias = np.array(res[f"{rate}/12000"]["samples"][800:], dtype=np.float64) / 32768
            assert np.sqrt(np.mean(alias**2)) < 0.01 * np.sqrt(np.mean(settled**2)), rate
    c = res["clock"]
    assert c[0] == pytest.approx(1.08)  # jitter buffer on the first chunk
    assert c[1] == pytest.approx(1.10)  # then gap-free
    assert c[2] == pytest.approx(1.12)
    assert c[3] == pytest.approx(0.15)
    assert res["afterUnderrun"] == pytest.approx(1.28)
    assert res["afterReset"] == pytest.approx(1.38)
    assert res["int16"] == [32767, -32768, 16384, 0]
    assert res["deinterleave"] == [[0.5, 0], [-0.5, 32767 / 32768]]


@needs_node
def test_page_scripts_parse() -> None:
    for name in ["codec.js", "dsp.js", "call.js", "capture-worklet.js"]:
        proc = subprocess.run([NODE, "--check", str(WEB / name)], capture_output=True, text=True, timeout=20)
        assert proc.returncode == 0, (name, proc.stderr)


# ---- one real call in headless Chromium -----------------------------------------------------------

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)


class _Cdp:
    """The few Chrome DevTools Protocol calls the browser test needs."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: list[dict] = []

    async def call(self, method: str, **params) -> dict:
        self.next_id += 1
        my_id = self.next_id
        await self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            if msg.get("id") == my_id:
                assert "error" not in msg, msg
                return msg["result"]
            self.events.append(msg)

    async def eval(self, expression: str):
        res = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, userGesture=True,
                              awaitPromise=True)
        assert "exceptionDetails" not in res, res
        return res["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 8.0):  # noqa: ASYNC109
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = await self.eval(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                shown = await self.eval("document.getElementById('status').textContent")
                raise AssertionError(f"timed out waiting for {expression}; status: {shown!r}")
            await asyncio.sleep(0.05)


class _Patient:
    """A stand-in patient: pipecat's real ProtobufFrameSerializer over a plain websocket server."""

    def __init__(self) -> None:
        from pipecat.serializers.protobuf import ProtobufFrameSerializer

        self.ser = ProtobufFrameSerializer()
        self.calls: list[dict] = []
        self.enough_audio = asyncio.Event()
        self.closed = asyncio.Event()

    async def send(self, ws, frame) -> None:
        await ws.send(await self.ser.serialize(frame))

    async def handler(self, ws) -> None:
        from pipecat.frames.frames import (
            InputAudioRawFrame,
            InputTransportMessageFrame,
            OutputAudioRawFrame,
            OutputTransportMessageFrame,
        )

        call = {"audio": [], "messages": [], "origin": ws.request.headers.get("Origin"), "ws": ws}
        self.calls.append(call)
        first = len(self.calls) == 1
        self.closed.clear()
        self.enough_audio.clear()
        if first:
            await self.send(ws, OutputTransportMessageFrame(message={"type": "status", "text": "Patient is listening"}))
            await self.send(ws, OutputTransportMessageFrame(
                message={"type": "transcript", "speaker": "patient", "text": "<b>my chest</b> hurts"}))
            await self.send(ws, OutputTransportMessageFrame(message={"type": "mystery", "text": "ignored"}))
            t = np.arange(4 * 22050) / 22050  # 4 s of "speech", sent at once: the page queues it
            voice = (0.2 * 32767 * np.sin(2 * np.pi * 300 * t)).astype(np.int16)
            for i in range(0, len(voice), 441):  # 20 ms chunks at 22.05 kHz
                await self.send(ws, OutputAudioRawFrame(audio=voice[i:i + 441].tobytes(), sample_rate=22050,
                                                        num_channels=1))
        else:
            await self.send(ws, OutputTransportMessageFrame(
                message={"type": "transcript", "speaker": "agent", "text": "Call 999 now."}))
            await self.send(ws, OutputTransportMessageFrame(
                message={"type": "call_ended", "reason": "triage complete"}))
        try:
            async for data in ws:
                frame = await self.ser.deserialize(data)
                if isinstance(frame, InputAudioRawFrame):
                    call["audio"].append(frame)
                    samples = np.frombuffer(frame.audio, dtype=np.int16)
                    call["samples"] = call.get("samples", 0) + len(samples)
                    if "loud_at" not in call and np.abs(samples).max() > 1000:
                        call["loud_at"] = call["samples"] - len(samples)
                    if len(call["audio"]) >= 25 and call["samples"] >= call.get("loud_at", 1e9) + 1600:
                        self.enough_audio.set()  # half a second or more, and a beep of the fake mic
                elif isinstance(frame, InputTransportMessageFrame):
                    call["messages"].append(frame.message)
                else:
                    call.setdefault("other", []).append(frame)
        finally:
            self.closed.set()


async def _start_chromium(user_dir: Path, *, extra: list[str] | None = None) -> tuple[asyncio.subprocess.Process, int]:
    assert CHROMIUM is not None
    proc = await asyncio.create_subprocess_exec(
        CHROMIUM, *(extra or []), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
        "--autoplay-policy=no-user-gesture-required", f"--user-data-dir={user_dir}", "--remote-debugging-port=0",
        "about:blank", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    port_file = user_dir / "DevToolsActivePort"
    for _ in range(200):
        if port_file.exists() and port_file.read_text().strip():
            return proc, int(port_file.read_text().split()[0])
        if proc.returncode is not None:
            break
        await asyncio.sleep(0.05)
    await _stop_chromium(proc)
    pytest.fail("Chromium did not start its DevTools endpoint")


async def _stop_chromium(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM lets Chromium shut its helper processes down; its own process group is killed if it hangs."""
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started (start_new_session)
            await proc.wait()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed, so no browser can run the page: "
                                        "apt-get install chromium (.ci/run does)")
async def test_real_call_in_headless_chromium_with_fake_microphone(tmp_path: Path) -> None:
    import websockets

    patient = _Patient()
    async with websockets.serve(patient.handler, "127.0.0.1", 0) as ws_server:
        ws_port = ws_server.sockets[0].getsockname()[1]
        ws_url = f"ws://127.0.0.1:{ws_port}/"
        async with await start_call_page(ws_url=ws_url, title="Incoming triage call: adult man") as page:
            proc, devtools_port = await _start_chromium(tmp_path / "chromium-profile")
            try:
                targets = (await _get(f"http://127.0.0.1:{devtools_port}/json/list")).json()
                target = next(t for t in targets if t["type"] == "page")
                async with websockets.connect(target["webSocketDebuggerUrl"], max_size=None) as cdp_ws:
                    cdp = _Cdp(cdp_ws)
                    await _run_browser_call(cdp, page.url, patient)
            finally:
                await _stop_chromium(proc)


async def _run_browser_call(cdp: _Cdp, url: str, patient: _Patient) -> None:
    from pipecat.frames.frames import InterruptionFrame

    await cdp.call("Runtime.enable")
    await cdp.call("Log.enable")
    await cdp.call("Page.enable")
    # Test instrumentation (DevTools scripts are exempt from the page's CSP): CSP violations, and the
    # microphone streams the page opens with their constraints.
    await cdp.call("Page.addScriptToEvaluateOnNewDocument", source="""
        window.__violations = [];
        document.addEventListener('securitypolicyviolation',
          (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
        window.__mics = [];
        if (navigator.mediaDevices) {
          const gum = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
          navigator.mediaDevices.getUserMedia = async (constraints) => {
            const stream = await gum(constraints);
            window.__mics.push({constraints, stream});
            return stream;
          };
        }""")
    mic_states = "window.__mics.map((m) => m.stream.getTracks().map((t) => t.readyState).join())"
    await cdp.call("Page.navigate", url=url)
    status = 'document.getElementById("status").textContent'
    await cdp.wait_for('document.readyState === "complete" && !document.getElementById("start").disabled')
    assert await cdp.eval(status) == "Ready. Press Start call and allow the microphone."
    assert await cdp.eval("document.title") == "Incoming triage call: adult man"

    # Call 1: the fake microphone streams to the patient; the patient talks, then is interrupted.
    await cdp.eval('document.getElementById("start").click()')
    await cdp.wait_for(f'{status} === "Patient is listening"')
    # the transcript message comes after the status message: wait for its line, then check there is only it
    items = '[...document.querySelectorAll("#transcript li")].map((li) => li.textContent)'
    lines = await cdp.wait_for(f'{items}.length > 0 && {items}')
    assert lines == ["Patient:<b>my chest</b> hurts"]
    assert await cdp.eval('document.querySelector("#transcript b")') is None  # text, never HTML
    diag = 'document.getElementById("diag").textContent'
    assert int(await cdp.wait_for(f'(/received (200) audio/.exec({diag}) || [])[1]')) == 200  # every 20 ms chunk
    queued = int(await cdp.wait_for(f'(/(\\d+) queued/.exec({diag}) || [])[1]'))
    assert queued > 50  # several seconds of patient speech still scheduled
    # An interruption (the clinician talks over the patient) drops all of it at once.
    await patient.send(patient.calls[0]["ws"], InterruptionFrame())
    await cdp.wait_for(f'/ 0 queued \\(0\\.00 s\\)/.test({diag})', timeout=0.8)
    await asyncio.wait_for(patient.enough_audio.wait(), 8)
    assert await cdp.eval(mic_states) == ["live"]
    assert await cdp.eval("window.__mics[0].constraints") == {
        "audio": {"echoCancellation": True, "noiseSuppression": True, "autoGainControl": True}}
    assert "AudioWorklet" in await cdp.eval('document.getElementById("diag").textContent')
    assert await cdp.eval('document.getElementById("hangup").disabled') is False

    call1 = patient.calls[0]
    assert call1["origin"] == url.rstrip("/")
    frames = call1["audio"]
    assert all(f.sample_rate == 16000 and f.num_channels == 1 and len(f.audio) == 640 for f in frames)
    mic = np.frombuffer(b"".join(f.audio for f in frames), dtype=np.int16)
    assert len(mic) >= 25 * 320
    # Chrome's fake microphone beeps at 400 Hz: it arrives at 400 Hz, so the 16 kHz resampling is right.
    start = int(np.argmax(np.abs(mic) > 1000))
    beep = mic[start:start + 800].astype(np.float64)
    assert len(beep) == 800 and np.abs(beep).max() > 1000
    spectrum = np.abs(np.fft.rfft(beep * np.hanning(len(beep))))
    assert abs(np.argmax(spectrum) * 16000 / len(beep) - 400) <= 10

    await cdp.eval('document.getElementById("hangup").click()')
    await asyncio.wait_for(patient.closed.wait(), 5)
    assert call1["messages"] == [{"type": "hangup"}]
    assert "other" not in call1
    await cdp.wait_for(f'{status} === "Call ended: you hung up."')
    assert await cdp.eval(mic_states) == ["ended"]
    assert await cdp.eval('document.getElementById("start").disabled') is False

    # Call 2: the patient ends the call; the page stops the mic and closes the socket itself.
    await cdp.eval('document.getElementById("start").click()')
    await cdp.wait_for(f'{status} === "Call ended: triage complete"')
    assert await cdp.eval(mic_states) == ["ended", "ended"]  # the mic stops at once, before the socket closes
    await asyncio.wait_for(patient.closed.wait(), 5)
    lines = await cdp.eval('[...document.querySelectorAll("#transcript li")].map((li) => li.textContent)')
    assert lines[-1] == "You:Call 999 now."
    assert patient.calls[1]["messages"] == []
    await cdp.wait_for('!document.getElementById("start").disabled')

    assert await cdp.eval("window.__violations") == []
    problems = [e for e in cdp.events
                if e.get("method") == "Runtime.exceptionThrown"
                or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "warning"))
                or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"
                    and "favicon.ico" not in e["params"]["entry"].get("url", ""))]
    assert problems == []
