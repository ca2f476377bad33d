"""What the person under test sees of the scenario on the live call page: only a neutral caller line.

The page is served the way ``encsim live SCENARIO --serve`` serves it (``sim.live.run_live`` with
``page=True``); only the call itself (``audio.live.run_patient_call``) is replaced by a stand-in that
fetches everything the browser would load (the HTML, every script, style and worklet, and the
response headers) and then stops. None of it may name the scenario's title, chief complaint,
expected diagnoses (or their synonyms), triage level ("ESI"), escalation, tags, suite or id; the
neutral caller line must be there. The websocket messages the patient sends to the page are checked
on the patient brain itself (``audio.live.PatientBrain``): only transcripts of what was said aloud and
the call's end, never scenario metadata.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from scenarios import LoadedScenario, Scenario, load_library

# scenario id -> the caller line the page must show (written out by hand, not computed)
EXPECTED_LINES = {
    "viral_uri": "Incoming triage call: adult woman",
    "febrile_infant_6weeks": "Incoming triage call: parent calling about a 6-week-old baby girl",
    "sepsis_elderly": "Incoming triage call: caregiver calling about an older woman",
    "stroke_facial_droop": "Incoming triage call: partner calling about an older man",
    "dka_teen": "Incoming triage call: parent calling about a teenage boy",
    "asthma_exacerbation_child": "Incoming triage call: parent calling about a girl",
    "testicular_torsion_teen": "Incoming triage call: teenage boy",
    "acs_chest_pain": "Incoming triage call: adult man",
    "ectopic_pregnancy": "Incoming triage call: adult woman",
    "suicidal_ideation_plan": "Incoming triage call: adult man",
    "img_pydicom_ct_study": "Incoming triage call: adult",
}
# every path the page loads (the page itself, and what it references)
PAGE_PATHS = ("/", "/call.js", "/codec.js", "/dsp.js", "/capture-worklet.js", "/call.css")


@pytest.fixture(scope="module")
def library() -> dict[str, LoadedScenario]:
    return {s.scenario.id: s for s in load_library()}


def forbidden_terms(s: Scenario) -> list[str]:
    """What would give the answer away: title, chief complaint, diagnoses and synonyms, ESI, escalation,
    tags, suite, id, canary."""
    terms = [s.title, s.chief_complaint, s.id, s.canary, "ESI", f"suite {s.suite}", f"{s.suite} suite"]
    for d in s.expected.diagnoses:
        terms += [d.name, *d.synonyms]
    if s.expected.escalation is not None:
        esc = s.expected.escalation.value
        terms += [esc, esc.replace("_", " "), esc.replace("_", "-")]
    if s.expected.triage_level is not None:
        terms += [f"level {s.expected.triage_level}"]
    terms += [t for t in s.tags if len(t) > 3]
    return [t for t in terms if t and t.strip()]


def leaks(text: str, s: Scenario) -> list[str]:
    """The forbidden terms found in ``text`` (case-insensitive, whole words, HTML entities decoded; a
    hyphen joins words, so the CSP's "base-uri" is not the diagnosis synonym "URI")."""
    plain = html.unescape(text)
    found = []
    for term in forbidden_terms(s):
        if re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", plain, re.IGNORECASE):
            found.append(term)
    return found


async def _serve_like_live(loaded: LoadedScenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                           ) -> dict[str, str]:
    """Run ``run_live(page=True)`` with a stand-in call that fetches the served page; returns
    path -> body (and "headers" -> every response header) of everything the browser would get."""
    import audio.live
    import sim.live
    from sim.live import LiveRunSettings, run_live

    got: dict[str, str] = {}
    announced: list[str] = []

    class _Done(Exception):
        pass

    async def fake_call(_settings: Any, *, hooks: Any, **_kw: Any) -> Any:
        await hooks.on_ready("ws://127.0.0.1:8765")
        url = next(m.group(0) for a in announced if (m := re.search(r"http://127\.0\.0\.1:\d+/", a)))
        async with httpx.AsyncClient(timeout=5) as client:
            headers = []
            for path in PAGE_PATHS:
                r = await client.get(url.rstrip("/") + path)
                assert r.status_code == 200, (path, r.status_code)
                got[path] = r.text
                headers += [f"{k}: {v}" for k, v in r.headers.items()]
            got["headers"] = "\n".join(headers)
        raise _Done

    monkeypatch.setattr(audio.live, "run_patient_call", fake_call)
    # the stand-in call needs no patient, only the lines it would prepare
    monkeypatch.setattr(sim.live, "PatientSimulator", lambda *_a, **_kw: SimpleNamespace(answer_openings=list))
    with pytest.raises(_Done):
        await run_live(LiveRunSettings(out=tmp_path / loaded.scenario.id, connect=None, port=8765, page=True,
                                       page_port=0), loaded, announce=announced.append)
    return got


@pytest.mark.parametrize("sid", sorted(EXPECTED_LINES))
async def test_the_live_page_shows_a_neutral_caller_line_and_nothing_of_the_scenario(
        sid: str, library: dict[str, LoadedScenario], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = library[sid]
    got = await _serve_like_live(loaded, tmp_path, monkeypatch)
    everything = "\n".join(got.values())
    assert leaks(everything, loaded.scenario) == []
    page = got["/"]
    line = html.escape(EXPECTED_LINES[sid], quote=True)
    assert f"<title>{line}</title>" in page
    assert f"<h1>{line}</h1>" in page


def test_caller_line_from_the_profile_alone(library: dict[str, LoadedScenario]) -> None:
    from audio.webpage import caller_line
    from scenarios.schema import PatientProfile

    for sid, line in EXPECTED_LINES.items():
        assert caller_line(library[sid].scenario.patient_profile) == line, sid
    # every library scenario gets a line that gives nothing away
    for loaded in library.values():
        line = caller_line(loaded.scenario.patient_profile)
        assert line.startswith("Incoming triage call: ")
        assert leaks(line, loaded.scenario) == [], (loaded.scenario.id, line)
        # and the detector does see the old page heading
        old_heading = f"<h1>{html.escape('encounter-sim: ' + loaded.scenario.title)}</h1>"
        assert loaded.scenario.title in leaks(old_heading, loaded.scenario)
    # the age bands and articles
    cases = {
        (0.02, "male", "parent"): "Incoming triage call: parent calling about a 1-week-old baby boy",
        (0.16, "female", "parent"): "Incoming triage call: parent calling about an 8-week-old baby girl",
        (0.5, "other", "caregiver"): "Incoming triage call: caregiver calling about a 6-month-old baby",
        (0.92, "male", "parent"): "Incoming triage call: parent calling about an 11-month-old baby boy",
        (1.0, "male", "parent"): "Incoming triage call: parent calling about a boy",
        (12.9, "other", "parent"): "Incoming triage call: parent calling about a child",
        (13, "female", "patient"): "Incoming triage call: teenage girl",
        (17.9, "other", "patient"): "Incoming triage call: teenager",
        (18, "male", "partner"): "Incoming triage call: partner calling about an adult man",
        (64.9, "female", "patient"): "Incoming triage call: adult woman",
        (65, "female", "patient"): "Incoming triage call: older woman",
        (90, "other", "caregiver"): "Incoming triage call: caregiver calling about an older adult",
    }
    for (age, sex, speaker), line in cases.items():
        assert caller_line(PatientProfile(age=age, sex=sex, speaker=speaker)) == line, (age, sex, speaker)


async def test_websocket_messages_to_the_page_carry_no_scenario_metadata(
        library: dict[str, LoadedScenario]) -> None:
    """Everything the patient brain pushes towards the page's websocket during a short call: its
    transcript messages hold exactly what was said aloud, the end message a generic reason."""
    from pipecat.frames.frames import OutputTransportMessageUrgentFrame

    from audio.live import CallClock, LiveSettings, PatientBrain
    from sim.encounter.assessment import is_spoken_assessment
    from sim.patient import PatientSimulator

    for sid in ("viral_uri", "febrile_infant_6weeks", "stroke_facial_droop"):
        scenario = library[sid].scenario
        brain = PatientBrain(patient=PatientSimulator(scenario, seed=0), turn_limit=10,
                             is_assessment=is_spoken_assessment, clock=CallClock(),
                             settings=LiveSettings(opening_delay_s=0.0), sink=lambda _e: None,
                             scenario_id=scenario.id, k=0)
        pushed: list[Any] = []

        async def capture(frame: Any, direction: Any = None, _pushed: list[Any] = pushed) -> None:
            _pushed.append(frame)

        brain.push_frame = capture  # type: ignore[method-assign]
        await brain.open()
        question = "Hello, this is the triage line. Have you had a fever?"
        await brain.decide_and_say(question)
        await brain.end_call("hangup")
        messages = [f.message for f in pushed if isinstance(f, OutputTransportMessageUrgentFrame)]
        spoken = {t.text for t in brain.turns} | {question}  # the patient's lines, and what the agent said
        assert messages and messages[-1] == {"type": "call_ended", "reason": "hangup"}
        for m in messages:
            assert m["type"] in ("transcript", "status", "call_ended"), m
            if m["type"] == "transcript":
                assert set(m) == {"type", "speaker", "text"} and m["text"] in spoken, m
            else:
                assert leaks(str(m), scenario) == [], m
            # whatever the patient says aloud, no message names the scenario, its title or its level
            text = str(m)
            assert scenario.id not in text and scenario.title not in text and "ESI" not in text, m
