"""A person's call through the web page, played by headless Chromium against the real live patient.

Chromium's fake microphone plays a WAV file (Piper speaking a clinician's question after some
silence) into the page served by ``run_live(page=True)``; the real patient pipeline hears it through
Silero VAD and Whisper, answers from the information tree with Piper, and the page shows the
transcript. The page names the caller neutrally ("Incoming triage call: adult woman") and shows
nothing of the scenario. Hanging up on the page ends the call, which is then scored into a run
directory.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.audio.test_caller_line import leaks
from tests.audio.test_webpage import CHROMIUM, _Cdp, _get, _start_chromium, _stop_chromium

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed, so no browser can run the page: "
                                                         "apt-get install chromium (.ci/run does)")

QUESTION = "Have you had a fever or a temperature?"


def _free_port_pair() -> int:
    """A port P with P and P+1 free (the patient's websocket and the page)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
                return port
    raise RuntimeError("no two consecutive free ports")


def _question_wav(path: Path, *, lead_silence_s: float) -> Path:
    from audio.tts import DETERMINISTIC, PiperTTS

    speech = PiperTTS(disk_cache=False).synthesize(QUESTION, settings=DETERMINISTIC)
    lead = np.zeros(int(lead_silence_s * speech.sample_rate), dtype=np.float32)
    tail = np.zeros(int(3 * speech.sample_rate), dtype=np.float32)
    sf.write(str(path), np.concatenate([lead, speech.samples, tail]), speech.sample_rate, subtype="PCM_16")
    return path


@pytest.mark.slow
async def test_person_calls_the_patient_from_the_page(tmp_path: Path) -> None:
    from scenarios import load_library
    from sim.live import LiveRunSettings, run_live

    loaded = {s.scenario.id: s for s in load_library()}["viral_uri"]
    # the patient's opening line lasts about 9 s; the question comes after it
    wav = _question_wav(tmp_path / "question.wav", lead_silence_s=11.0)
    port = _free_port_pair()
    page_url = asyncio.get_running_loop().create_future()
    call = asyncio.create_task(run_live(
        LiveRunSettings(out=tmp_path / "run", connect=None, port=port, page=True, connect_timeout_s=60,
                        time_limit_s=120), loaded,
        on_ready=lambda _ws: page_url.set_result(f"http://127.0.0.1:{port + 1}/"), announce=lambda _m: None))
    proc = None
    try:
        url = await asyncio.wait_for(page_url, 60)
        profile = tmp_path / "chromium-profile"
        proc, devtools_port = await _start_chromium(profile, extra=[f"--use-file-for-fake-audio-capture={wav}%noloop"])
        targets = (await _get(f"http://127.0.0.1:{devtools_port}/json/list")).json()
        target = next(t for t in targets if t["type"] == "page")
        import websockets

        async with websockets.connect(target["webSocketDebuggerUrl"], max_size=None) as cdp_ws:
            cdp = _Cdp(cdp_ws)
            await cdp.call("Runtime.enable")
            await cdp.call("Page.navigate", url=url)
            await cdp.wait_for('document.readyState === "complete" && !document.getElementById("start").disabled')
            # the person taking the call sees a neutral caller line, nothing of the scenario
            assert await cdp.eval("document.title") == "Incoming triage call: adult woman"
            assert await cdp.eval('document.querySelector("h1").textContent') == "Incoming triage call: adult woman"
            shown = await cdp.eval("document.title + '\\n' + document.body.innerText")
            assert leaks(shown, loaded.scenario) == [], shown
            await cdp.eval('document.getElementById("start").click()')
            lines = '[...document.querySelectorAll("#transcript li")].map((li) => li.textContent)'
            # the patient's opening line, then the question as the patient heard it, then its answer
            await cdp.wait_for(f'{lines}.some((l) => /antibiotics/i.test(l))', timeout=30)
            await cdp.wait_for(f'{lines}.some((l) => /fever|temperature/i.test(l) && l.startsWith("You"))',
                               timeout=40)
            await cdp.wait_for(f'{lines}.some((l) => /thirty-seven|warm/i.test(l) && l.startsWith("Patient"))',
                               timeout=30)
            diag = await cdp.eval('document.getElementById("diag").textContent')
            await cdp.eval('document.getElementById("hangup").click()')
            rec, root = await asyncio.wait_for(call, 60)
    finally:
        if proc is not None:
            await _stop_chromium(proc)
        if not call.done():
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)

    result = rec.result
    assert result is not None and result.termination == "hangup"
    assert "fever" in result.gathered_info
    heard = [t.text for t in result.turns if t.speaker == "agent"]
    assert any("fever" in h.lower() or "temperature" in h.lower() for h in heard), heard
    assert "received" in diag  # the page played the patient's audio frames
    stereo, rate = sf.read(str(root / "audio" / "call.flac"))
    assert rate == 16000 and stereo.ndim == 2
    assert np.sqrt(np.mean(stereo[:, 0] ** 2)) > 0.01 and np.sqrt(np.mean(stereo[:, 1] ** 2)) > 0.001
    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "latency" and e["side"] == "patient" for e in events)
    assert json.loads((root / "run.json").read_text())["model"] == "person (web page)"
