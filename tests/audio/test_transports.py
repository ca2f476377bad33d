"""The seam between the dialling patient and the agent under test: ``VoiceAgentTransport``, one per wire protocol."""

from __future__ import annotations

import pytest

from audio.live import (
    AGENT_PROTOCOLS,
    AgentCallSettings,
    LiveError,
    OriginPolicy,
    PatientCallSettings,
    VoiceAgentTransport,
    voice_agent_transport,
)
from audio.live._call import served_serializer
from audio.live._door import _Door, _WireSerializer
from audio.live._transport import PipecatTransport
from audio.live._twilio import TwilioBotSerializer, TwilioCaller


def _door() -> _Door:
    async def hung_up() -> None:
        return None

    return _Door(policy=OriginPolicy(), join_window_s=10, log=lambda _line: None, on_caller=lambda: None,
                 on_hangup=hung_up, over=lambda: False)


def test_pipecat_is_the_default_and_each_call_gets_its_own_transport() -> None:
    assert AGENT_PROTOCOLS[0] == "pipecat"
    assert PatientCallSettings(scenario_id="x", turn_limit=2).protocol == "pipecat"
    assert AgentCallSettings().protocol == "pipecat"
    first, second = voice_agent_transport("pipecat"), voice_agent_transport("pipecat")
    assert isinstance(first, PipecatTransport) and isinstance(first, VoiceAgentTransport)
    assert first.protocol == "pipecat" and isinstance(first.serializer, _WireSerializer)
    assert first.serializer is not second.serializer
    door = _door()
    served = served_serializer("pipecat", door)
    assert isinstance(served, _WireSerializer) and served._door is door


def test_twilio_is_the_other_websocket_protocol() -> None:
    assert AGENT_PROTOCOLS == ("pipecat", "twilio", "openai-realtime", "chat-audio")
    assert [voice_agent_transport(p).protocol for p in AGENT_PROTOCOLS] == list(AGENT_PROTOCOLS)
    twilio = voice_agent_transport("twilio")
    assert isinstance(twilio, TwilioCaller) and twilio.serializer is twilio.serializer
    assert voice_agent_transport("twilio").stream_sid != twilio.stream_sid  # a new stream per call
    assert PatientCallSettings(scenario_id="x", turn_limit=2, connect="ws://127.0.0.1:9", protocol="twilio").protocol \
        == "twilio"
    assert isinstance(served_serializer("twilio", _door()), TwilioBotSerializer)


async def test_a_patient_waiting_for_a_caller_serves_pipecats_frames_only() -> None:
    from audio.live import run_patient_call

    settings = PatientCallSettings(scenario_id="x", turn_limit=2, protocol="twilio")
    with pytest.raises(LiveError, match="when it dials an agent"):
        await run_patient_call(settings, patient=object(), is_assessment=lambda _t: False)  # type: ignore[arg-type]


def test_an_unknown_protocol_is_refused_in_one_paragraph() -> None:
    for make in (lambda: voice_agent_transport("sip"), lambda: served_serializer("sip", _door())):
        with pytest.raises(LiveError, match="agent protocol 'sip': give one of") as caught:
            make()
        assert "\n" not in str(caught.value) and "--agent-protocol" in str(caught.value)


async def test_pipecats_transport_says_nothing_around_the_frames() -> None:
    transport = voice_agent_transport("pipecat")

    async def push(_frame: object) -> None:
        raise AssertionError("pipecat's frames go straight into the pipeline")

    await transport.opened(object(), push)  # type: ignore[arg-type]  # never touched
    await transport.closing()


@pytest.mark.parametrize(("command", "flag"), [("run", "--agent-protocol"), ("serve-agent", "--protocol")])
def test_the_commands_offer_exactly_the_seams_protocols(command: str, flag: str) -> None:
    """``encsim run --agent-protocol`` and ``encsim serve-agent --protocol`` list their choices without loading
    audio.live (pipecat); they must stay the seam's."""
    import argparse

    from sim.cli._main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    action = next(a for a in sub._actions if flag in a.option_strings)
    assert tuple(action.choices or ()) == AGENT_PROTOCOLS
    assert action.default == ("pipecat" if command == "serve-agent" else None)  # run: pipecat, stored with --mode call
