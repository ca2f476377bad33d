"""``encsim live SCENARIO``: one live voice call with a scenario's patient, scored into a run directory.

The caller is an external voice agent (``--connect``), or a person on a web page (``--serve``), or any program
that calls the patient's websocket. Every check that needs no model runs before the voice models load. The flags
become one ``sim.live.LiveRunSettings`` (``live_run_settings``), which ``sim.live.run_live`` takes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_RUN_ERRORS,
    add_door_args,
    dashboard_possible,
    one_scenario,
    port,
    port_free,
    positive,
    quiet_pipecat,
    report_error,
)
from sim.records import AudioFormat, ConfigError, EncounterRecord, RunLayout, Summary, one_line

if TYPE_CHECKING:  # sim.live is imported by the handler, not with the parser
    from sim.live import LiveRunSettings


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``live`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    live = subparsers.add_parser("live",
                                 help="one live voice call with a scenario's patient, scored into a run directory")
    live.add_argument("scenario", metavar="SCENARIO", help="scenario id, or a scenario YAML file")
    how = live.add_mutually_exclusive_group()
    how.add_argument("--connect", metavar="URL", help="call an external voice agent's websocket (ws://HOST:PORT/...)")
    how.add_argument("--serve", action="store_true",
                     help="also serve a web page on 127.0.0.1 so a person can make the call from a browser")
    live.add_argument("--port", type=port("--port"), default=8765,
                      help="websocket port the patient listens on (default 8765); the page uses PORT+1")
    live.add_argument("--out", type=Path, help="run directory (default runs/<time>-live-<scenario>)")
    live.add_argument("--time-limit", type=positive("--time-limit"), default=600, metavar="SECONDS",
                      help="end the call after this long (default 600)")
    live.add_argument("--max-turns", type=positive("--max-turns"), help="override the scenario's turn limit")
    live.add_argument("--wait", type=positive("--wait"), default=300, metavar="SECONDS",
                      help="how long to wait for the caller or the connection (default 300)")
    live.add_argument("--barge-in-after", type=float, metavar="SECONDS",
                      help="the patient cuts in when the agent talks this long without a pause")
    live.add_argument("--no-yield", action="store_true",
                      help="the patient keeps talking when the agent talks over it (default: it stops)")
    live.add_argument("--seed", type=int, default=0)
    live.add_argument("--audio-format", choices=["flac", "opus", "wav"], default="flac", metavar="FMT",
                      help="how the call's recording is stored: flac (default, lossless), opus or wav")
    live.add_argument("--tui", action="store_true", help="watch the call in the terminal dashboard")
    add_door_args(live)
    live.set_defaults(handler=cmd_live)


@dataclass(frozen=True, kw_only=True)
class LiveOptions:
    """The arguments of ``encsim live`` (see ``encsim live --help`` for each)."""

    scenario: str
    connect: str | None
    serve: bool
    port: int
    out: Path | None
    time_limit: int
    max_turns: int | None
    wait: int
    barge_in_after: float | None
    no_yield: bool
    seed: int
    audio_format: AudioFormat
    tui: bool
    allow_origin: list[str]
    join_window: float

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> LiveOptions:
        """Read a parsed ``live`` command line.

        Args:
            args: The parsed command line.

        Returns:
            The options.
        """
        return cls(scenario=args.scenario, connect=args.connect, serve=args.serve, port=args.port, out=args.out,
                   time_limit=args.time_limit, max_turns=args.max_turns, wait=args.wait,
                   barge_in_after=args.barge_in_after, no_yield=args.no_yield, seed=args.seed,
                   audio_format=args.audio_format, tui=args.tui,
                   allow_origin=args.allow_origin, join_window=args.join_window)


def cmd_live(args: argparse.Namespace) -> int:
    """``encsim live``: see :func:`run_live_call`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code.
    """
    return run_live_call(LiveOptions.from_namespace(args))


def live_run_settings(options: LiveOptions, *, scenario_id: str, allow_origins: Sequence[str]) -> LiveRunSettings:
    """The live run's settings, from the command's flags: what ``sim.live.run_live`` is configured with.

    Args:
        options: The command's arguments (checked by the caller).
        scenario_id: The scenario's id, for the default run directory (``runs/<time>-live-<scenario>``).
        allow_origins: The ``--allow-origin`` values, normalised (``sim.live.door_options``).

    Returns:
        The settings (frozen).
    """
    from sim.live import LiveRunSettings
    from sim.store import new_run_id

    return LiveRunSettings(
        out=options.out or Path("runs") / new_run_id(f"live-{scenario_id}"), connect=options.connect,
        port=options.port, page=options.serve, time_limit_s=options.time_limit, turn_limit=options.max_turns,
        barge_in_after_s=options.barge_in_after, yield_on_overlap=False if options.no_yield else None,
        connect_timeout_s=options.wait, seed=options.seed, audio_format=options.audio_format,
        allow_origins=tuple(allow_origins),
        join_window_s=options.join_window)


def run_live_call(options: LiveOptions) -> int:
    """Check the call's options, make the call (in the dashboard with ``--tui``), print how it went.

    Args:
        options: The command's arguments.

    Returns:
        The exit code: 0 when the call was scored, ``EXIT_RUN_ERRORS`` (3) when it ended in an error (no caller,
        a lost connection), ``EXIT_INTERRUPTED`` (130) after Ctrl-C, 2 when the dashboard's call failed.

    Raises:
        ConfigError: An option that cannot work (unknown scenario, busy port, nothing at ``--connect``, ...).
    """
    from sim.live import door_options, run_live

    loaded = one_scenario(options.scenario)
    allow_origins = door_options(options.allow_origin, options.join_window)
    if options.connect:
        _check_ws_url(options.connect)
    else:
        port_free(options.port, "--port")
        if options.serve:
            port_free(options.port + 1, "--port (the page uses PORT+1)")
    if options.barge_in_after is not None and options.barge_in_after <= 0:
        raise ConfigError(f"--barge-in-after {options.barge_in_after}: give a positive number of seconds.")
    settings = live_run_settings(options, scenario_id=loaded.scenario.id, allow_origins=allow_origins)
    out = settings.out
    if RunLayout(out).run.exists():
        raise ConfigError(f"--out {out}: a run already exists there; choose another --out.")
    quiet_pipecat()

    try:
        if options.tui and dashboard_possible("encsim live"):
            from tui import DashboardApp

            def job() -> Coroutine[Any, Any, tuple[EncounterRecord, Path]]:
                return run_live(settings, loaded, announce=lambda msg: app.notify(msg, timeout=600))

            app = DashboardApp(out, job=job)
            app.run()
            if app.job_result is None and app.job_error:
                return report_error(app.job_error)
            if app.job_result is None:
                print(f"the call was not scored (its events so far are in {out}/events.jsonl).", file=sys.stderr)
                return EXIT_INTERRUPTED
            done: tuple[EncounterRecord, Path] = app.job_result  # what job() returned
            rec, root = done
        else:
            rec, root = asyncio.run(run_live(settings, loaded))
    except KeyboardInterrupt:
        print(f"\ninterrupted; the call was not scored (its events so far are in {out}/events.jsonl).",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    result = rec.result
    live = Summary.model_validate_json(RunLayout(root).summary.read_text(encoding="utf-8")).live  # run_live wrote it
    print(one_line(f"call ended: {result.termination if result else rec.error}; "
                   f"{len(result.gathered_info) if result else 0} facts gathered; "
                   + (f"composite {rec.score.composite:.3f}" if rec.score and rec.score.composite is not None
                      else f"not scored ({rec.error})")))
    if live is not None and live.patient_latency_p50_s is not None:  # the call's figures, as the reports show them
        agent_p50 = float("nan") if live.agent_latency_p50_s is None else live.agent_latency_p50_s
        print(f"patient voice-to-voice latency p50 {live.patient_latency_p50_s:.3f} s; agent response latency p50 "
              f"{agent_p50:.3f} s; interruptions {live.interruptions}")
    recording = RunLayout(root).live_recording()
    print(f"run directory: {root}" + (f"  (recording: {recording})" if recording else ""))
    if rec.status != "ok":  # a run whose encounter errored (no caller, lost connection) does not exit 0
        print(one_line(f"the call was not scored: {rec.error}"), file=sys.stderr)
        return EXIT_RUN_ERRORS
    return 0


def _check_ws_url(url: str) -> None:
    """``--connect``: a websocket URL, and something listening there (before the models load)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise ConfigError(f"--connect {url!r}: not a websocket URL. Give the agent's endpoint as "
                          "ws://HOST:PORT/PATH (or wss://...).")
    try:
        number = parts.port or (443 if parts.scheme == "wss" else 80)
    except ValueError:
        raise ConfigError(f"--connect {url!r}: the port is not a number between 1 and 65535.") from None
    import socket

    try:  # before the models load: a voice agent that is not running is the usual mistake
        socket.create_connection((parts.hostname, number), timeout=5).close()
    except OSError as exc:
        raise ConfigError(f"--connect {url!r}: nothing answers at {parts.hostname}:{number} "
                          f"({exc.strerror or exc}). Start the voice agent first (e.g. encsim serve-agent --port "
                          "PORT ...) or fix the URL.") from None
