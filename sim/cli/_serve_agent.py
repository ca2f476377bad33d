"""``encsim serve-agent``: a built-in voice agent (Whisper ears, Piper voice) answering live calls."""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sim.cli._common import EXIT_INTERRUPTED, add_door_args, one_scenario, port, port_free, positive, quiet_pipecat
from sim.records import ConfigError

if TYPE_CHECKING:  # audio.live loads pipecat: imported when the agent serves
    from audio.live import AgentProtocol


DEFAULT_SERVE_CONCURRENCY = 8


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``serve-agent`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    sa = subparsers.add_parser("serve-agent", help="a built-in voice agent (Whisper ears, Piper voice) answering calls")
    sa.add_argument("--model", default="scripted:reference",
                    help="local, scripted:reference, scripted:natural, scripted:shallow, scripted:undertriage, "
                         "or an endpoint's model name")
    sa.add_argument("--base-url", help="with an endpoint model: OpenAI-compatible endpoint URL")
    sa.add_argument("--api-key-env", metavar="VAR", help="name of the environment variable holding the API key")
    sa.add_argument("--scenario", metavar="ID", help="the scenario being played (required by scripted agents)")
    sa.add_argument("--port", type=port("--port"), default=8766, help="websocket port (default 8766)")
    sa.add_argument("--calls", type=positive("--calls"), help="stop after this many calls (default: until Ctrl-C)")
    sa.add_argument("--concurrency", type=positive("--concurrency"), default=DEFAULT_SERVE_CONCURRENCY,
                    help=f"calls answered at once (default {DEFAULT_SERVE_CONCURRENCY}); a caller beyond them gets "
                         "HTTP 503 busy")
    sa.add_argument("--protocol", choices=["pipecat", "twilio", "openai-realtime", "chat-audio"], default="pipecat",
                    help="what callers speak: pipecat (pipecat's protobuf frames, 16 kHz PCM; default), twilio "
                         "(Twilio Media Streams: the agent is a phone bot behind pipecat's TwilioFrameSerializer), "
                         "openai-realtime (the OpenAI Realtime protocol, on the openai SDK's event models) or "
                         "chat-audio (OpenAI-compatible chat completions with input_audio parts, at /v1); test it "
                         "with encsim run --mode call --agent-protocol P")
    add_door_args(sa)
    sa.set_defaults(handler=cmd_serve_agent)


@dataclass(frozen=True, kw_only=True)
class ServeAgentOptions:
    """The flags of ``encsim serve-agent`` (see ``encsim serve-agent --help`` for each)."""

    model: str
    base_url: str | None
    api_key_env: str | None
    scenario: str | None
    port: int
    calls: int | None
    allow_origin: list[str]
    join_window: float
    protocol: AgentProtocol = "pipecat"
    concurrency: int = DEFAULT_SERVE_CONCURRENCY

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> ServeAgentOptions:
        """Read a parsed ``serve-agent`` command line.

        Args:
            args: The parsed command line.

        Returns:
            The options.
        """
        return cls(model=args.model, base_url=args.base_url, api_key_env=args.api_key_env, scenario=args.scenario,
                   port=args.port, calls=args.calls, allow_origin=args.allow_origin, join_window=args.join_window,
                   protocol=args.protocol, concurrency=args.concurrency)


def cmd_serve_agent(args: argparse.Namespace) -> int:
    """``encsim serve-agent``: see :func:`serve`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code.
    """
    return serve(ServeAgentOptions.from_namespace(args))


def serve(options: ServeAgentOptions) -> int:
    """Check the flags, start the agent, answer calls until ``--calls`` were made or Ctrl-C.

    Args:
        options: The command's flags.

    Returns:
        The exit code: 0, or ``EXIT_INTERRUPTED`` (130) after Ctrl-C.

    Raises:
        ConfigError: A bad model spec or door option, a busy port, ``--calls`` with ``--protocol chat-audio``.
    """
    from sim.agents import check_model_spec, make_agent
    from sim.live import door_options, serve_agent

    scenario = one_scenario(options.scenario).scenario if options.scenario else None
    if options.model.startswith("scripted:") and scenario is None:  # each caller must name its scenario
        print(f"note: --model {options.model} plays a scripted part and has no --scenario: each caller must name "
              "its scenario (encsim run --mode call --agent-scenario-hint), or the call gets no answer.",
              file=sys.stderr)
    if options.protocol == "chat-audio" and options.calls is not None:
        raise ConfigError("--calls does not apply to --protocol chat-audio: an audio chat completions endpoint "
                          "answers stateless HTTP requests, each carrying the whole conversation so far, so the "
                          "server cannot tell where one call ends and the next begins; it serves until Ctrl-C. "
                          "Drop --calls (encsim run --mode call records each call on the caller's side).")
    check_model_spec(options.model, options.base_url, options.api_key_env)
    allow_origins = door_options(options.allow_origin, options.join_window)
    port_free(options.port, "--port")
    quiet_pipecat()

    async def go() -> None:
        agent = await make_agent(options.model, base_url=options.base_url, api_key_env=options.api_key_env)
        try:
            await serve_agent(agent, scenario=scenario, port=options.port, calls=options.calls,
                              allow_origins=allow_origins, join_window_s=options.join_window,
                              protocol=options.protocol, concurrency=options.concurrency)
        finally:
            await agent.aclose()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        print("\nvoice agent stopped.", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0
