"""The flags of ``encsim run``, each declared once: a field of ``RunOptions`` carries its parser entry.

A field made with ``flag(...)`` is one command-line option: its names and argparse arguments, whether it also
applies to ``--resume`` (``resume=True``: it says how to carry out the plan, not what the plan is), and how the
parsed value becomes the field's value (``convert``). A field made with ``group(...)`` is a set of flags shared
with other commands (the judge flags). From the fields are derived: the parser (``add_run_flags``), the options
(``RunOptions.from_namespace``), ``RESUME_FLAGS`` and the list of flags a resume accepts, and the plan flags a
``--resume`` command line must not give (``plan_flags``). A new flag is one field.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarios.personas import DEFAULT_PERSONA, PERSONA_PRESETS, parse_personas
from scenarios.schema import TURN_LIMIT_CEILING
from sim.agents.chat import check_call_timeout
from sim.cli._common import JudgeOptions, add_judge_args, positive
from sim.executors.process import check_processes
from sim.fail_fast import DEFAULT_FAIL_FAST
from sim.records import AudioFormat, ConfigError
from sim.runner import MAX_CONCURRENCY, MAX_ENCOUNTERS, MAX_K  # the parser's limits


@dataclass(frozen=True)
class FlagSpec:
    """One option of the ``run`` parser, as declared on its field."""

    names: tuple[str, ...]
    resume: bool
    convert: Callable[[Any], Any] | None
    argparse: dict[str, Any]

    @property
    def dest(self) -> str:
        """The parsed namespace's attribute: ``dest`` if given, else the longest name without dashes."""
        return str(self.argparse.get("dest") or max(self.names, key=len).lstrip("-").replace("-", "_"))


@dataclass(frozen=True)
class GroupSpec:
    """A set of flags shared with other commands: how to add them and read them back."""

    add: Callable[[argparse.ArgumentParser], None]
    read: Callable[[argparse.Namespace], Any]
    resume_dests: frozenset[str]


_AS_PARSED = object()
MAX_TURNS_WHY = (f"agent turns per encounter, as a scenario's own turn_limit is at most {TURN_LIMIT_CEILING}; a "
                 "conversation that needs more has lost its way")


def flag(*names: str, default: Any = None, resume: bool = False,
         convert: Callable[[Any], Any] | None = None, value: Any = _AS_PARSED,
         **argparse_kwargs: Any) -> Any:
    """A ``RunOptions`` field that is one command-line option (module docstring).

    Args:
        *names: The option's names (``--k``).
        default: The parser's default, and the field's (a list default is copied per instance).
        resume: The option also applies to ``--resume`` (it is not part of the stored plan).
        convert: Turns the parsed value into the field's value (may raise a ConfigError).
        value: The field's default when it differs from the parser's (``convert`` of the parser's default).
        **argparse_kwargs: The rest of ``ArgumentParser.add_argument``'s arguments.

    Returns:
        The dataclass field.
    """
    spec = FlagSpec(names, resume, convert, {**argparse_kwargs, "default": default})
    initial = default if value is _AS_PARSED else value
    if isinstance(initial, list):
        return dataclasses.field(default_factory=lambda: list(initial), metadata={"flag": spec})
    return dataclasses.field(default=initial, metadata={"flag": spec})


def group(add: Callable[[argparse.ArgumentParser], None], read: Callable[[argparse.Namespace], Any], *,
          resume: frozenset[str] = frozenset()) -> Any:
    """A ``RunOptions`` field filled by a set of flags shared with other commands (module docstring)."""
    return dataclasses.field(default=None, metadata={"group": GroupSpec(add, read, resume)})


def _personas(text: str | None) -> list[str]:
    return parse_personas(text) if text is not None else [DEFAULT_PERSONA]


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """The flags of ``encsim run``, read once from the command line (see ``encsim run --help`` for each).

    The fields are in the order ``--help`` lists the flags.
    """

    scenarios: list[str] = flag(
        "--scenarios", action="append", default=[], metavar="X",
        help="scenario file, folder, id or suite name; repeatable or comma-separated (default: all)")
    model: str = flag(
        "--model", default="local",
        help="local (embedded SmolLM2), scripted:reference, scripted:natural, scripted:shallow, "
             "scripted:undertriage, or an endpoint's model name")
    base_url: str | None = flag("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    api_key_env: str | None = flag("--api-key-env", metavar="VAR",
                                   help="name of the environment variable holding the API key")
    call_timeout: float | None = flag(
        "--call-timeout", type=check_call_timeout, metavar="SECONDS",
        help="total deadline of one endpoint call attempt: connect, send, read the whole reply "
             "(default 30 s for the model, 60 s for remote judges); then the retry policy")
    gguf: Path | None = flag("--gguf", type=Path, help="with --model local: another GGUF model file")
    k: int = flag("--k", type=positive("--k"), default=10,
                  help=f"runs per scenario (default 10; at most {MAX_K}, and scenarios x K at most "
                       f"{MAX_ENCOUNTERS:,}, unless --i-know)")
    concurrency: int = flag("--concurrency", type=positive("--concurrency"), default=4, resume=True,
                            help=f"encounters at once (default 4; at most {MAX_CONCURRENCY} unless --i-know)")
    i_know: bool = flag("--i-know", action="store_true", default=False, resume=True,
                        help="allow a plan over the limits of --k and --concurrency (a typo like --k 3000000 would "
                             "otherwise run for days)")
    fail_fast: int = flag(
        "--fail-fast", type=int, default=DEFAULT_FAIL_FAST, metavar="N", resume=True,
        help=f"stop the run (exit 2) when the first N agent calls all fail with the same cause that "
             f"every call would repeat: connection refused, unknown host, HTTP 401/403/404 "
             f"(default {DEFAULT_FAIL_FAST}; 0 = never)")
    personas: list[str] = flag(
        "--personas", metavar="LIST", default=None, convert=_personas, value=[DEFAULT_PERSONA],
        help="a persona sweep: run every scenario K times under each of these patient presets, "
             "comma-separated, as separate encounters of one run directory (" + ", ".join(PERSONA_PRESETS)
             + "; default: default only); the summary and reports add each persona's mean, the worst "
             "persona and the drop from default. Replays and imaging items have no patient to vary: "
             "they run K times under default only")
    seed: int = flag("--seed", type=int, default=0)
    max_turns: int | None = flag("--max-turns", type=positive("--max-turns", TURN_LIMIT_CEILING, MAX_TURNS_WHY),
                                 help=f"override every scenario's turn limit (at most {TURN_LIMIT_CEILING})")
    out: Path | None = flag("--out", type=Path, help="run directory (default runs/<time>-<model>)")
    resume: Path | None = flag("--resume", type=Path, metavar="DIR", resume=True,
                               help="continue a killed run; the plan's flags come from its run.json")
    retry_errors: bool = flag("--retry-errors", action="store_true", default=False, resume=True,
                              help="with --resume: run errored encounters again")
    executor: str = flag(
        "--executor", choices=["local", "ray"], default="local", resume=True,
        help="where encounters run: local (this process, default) or ray (tasks on a Ray cluster; "
             "needs pip install encounter-sim[ray]); the run directory is the same either way")
    ray_address: str | None = flag(
        "--ray-address", metavar="ADDRESS", resume=True,
        help="with --executor ray: auto, HOST:PORT of a running head node, or ray://HOST:PORT "
             "(default: start a local Ray instance on 127.0.0.1 for this run)")
    ray_actors: int | None = flag(
        "--ray-actors", type=positive("--ray-actors"), metavar="N", resume=True,
        help="with --executor ray --mode voice: voice workers, each loading Piper and Whisper once "
             "(default: the cluster's CPUs)")
    processes: int = flag(
        "--processes", default="0", metavar="N", resume=True, convert=check_processes, value=0,
        help="with --executor local: run the encounters in N worker processes, each with its own GIL, "
             "while this process scores and writes (text runs; 2 suits a 2-core machine at "
             "--concurrency 16 or more); 0 (default): in this process")
    no_progress: bool = flag("--no-progress", action="store_true", default=False, resume=True,
                             help="print one line per encounter instead of a bar")
    quiet: bool = flag("--quiet", action="store_true", default=False, resume=True,
                       help="no progress output, only the final summary")
    tui: bool = flag("--tui", action="store_true", default=False, resume=True,
                     help="watch the run in the terminal dashboard while it runs")
    reviewer: str | None = flag("--reviewer", resume=True,
                                help="with --tui: the name annotations are saved under (default $USER)")
    judges: JudgeOptions = group(add_judge_args, JudgeOptions.from_namespace,
                                 resume=frozenset({"judge_concurrency"}))
    patient_model: str | None = flag(
        "--patient-model", metavar="MODEL",
        help="a model that also maps the agent's messages to fact ids (the patient's model layer; "
             "'local' = the embedded model); the answers stay the scenario's text")
    patient_base_url: str | None = flag("--patient-base-url", metavar="URL",
                                        help="the endpoint of a non-local --patient-model")
    patient_api_key_env: str | None = flag("--patient-api-key-env", metavar="VAR",
                                           help="key variable for --patient-model")
    mode: str = flag("--mode", choices=["text", "voice", "call"], default="text",
                     help="voice: Piper speaks both sides through channel effects and Whisper transcribes; call: "
                          "every encounter is a real-time voice call to the agent at --agent-url, whose own speech "
                          "the patient hears through Whisper")
    agent_url: str | None = flag(
        "--agent-url", metavar="URL",
        help="with --mode call: the voice agent, speaking --agent-protocol: a websocket (ws://127.0.0.1:8766) for "
             "pipecat and twilio, a Realtime endpoint (ws:// or http://.../v1) for openai-realtime, an "
             "OpenAI-compatible base URL (http://127.0.0.1:8000/v1) for chat-audio (encsim serve-agent serves the "
             "built-in one over each); --model names the agent's model, --api-key-env its key")
    agent_protocol: str | None = flag(
        "--agent-protocol", choices=["pipecat", "twilio", "openai-realtime", "chat-audio"], metavar="P",
        help="with --mode call: what the agent at --agent-url speaks: pipecat (pipecat's protobuf frames, 16 kHz "
             "PCM; default), twilio (the patient plays Twilio's side of Media Streams, mu-law 8 kHz, so a phone "
             "bot is tested with no phone number), openai-realtime (the OpenAI Realtime protocol through the "
             "openai SDK, PCM16 24 kHz) or chat-audio (chat completions with input_audio parts, as vLLM serves "
             "audio LLMs)")
    agent_turns: str | None = flag(
        "--agent-turns", choices=["server", "commit"],
        help="with --agent-protocol openai-realtime: the server's voice activity detection ends each patient turn "
             "(server, default), or the patient commits each turn and asks for the response (commit)")
    agent_reply: str | None = flag(
        "--agent-reply", choices=["audio", "text"],
        help="with --agent-protocol chat-audio: ask for a spoken reply, which the patient hears through Whisper "
             "(audio, default), or a text reply, spoken to the patient by the clinician's Piper voice (text)")
    agent_scenario_hint: bool = flag(
        "--agent-scenario-hint", action="store_true", default=False,
        help="with --mode call: tell the agent which scenario it is in (?encsim_scenario=ID). Only for the "
             "scripted controls served by encsim serve-agent without --scenario; never for an agent under test")
    call_time_limit: float | None = flag(
        "--call-time-limit", type=float, metavar="SECONDS",
        help="with --mode call: end a call after this long (default 300)")
    voice_preset: str | None = flag(
        "--voice-preset", choices=["clean", "phone", "noisy-phone", "bad-line"],
        help="channel effects for every scenario (default: each scenario's voice block, else clean)")
    audio_format: AudioFormat | None = flag(
        "--audio-format", choices=["flac", "opus", "wav"], metavar="FMT",
        help="with --mode voice or call: how the audio is stored: flac (default; lossless, about 0.4 of WAV's "
             "bytes), opus (Ogg/Opus, about a tenth of WAV, lossy, for large sweeps) or wav (16-bit PCM)")
    text_only: bool = flag(
        "--text-only", action="store_true", default=False,
        help="the model cannot take images: imaging items are reported not applicable and images in "
             "encounters are replaced by their description (--model local is always text-only)")
    allow_outside_images: bool = flag("--allow-outside-images", action="store_true", default=False,
                                      help="let scenario image paths point outside the scenario file's folder")
    profile: str | None = flag("--profile", help="evaluation profile: triage (default), clinical_decision_support, "
                                                 "patient_facing, or a JSON file")
    evaluator_modules: list[str] = flag(
        "--evaluator-module", action="append", default=[], metavar="MODULE_OR_PATH", dest="evaluator_module",
        help="import a module (dotted name or .py path) that registers custom evaluators; repeatable")
    failure_judges: Path | None = flag(
        "--failure-judges", type=Path, metavar="DIR",
        help="run the binary failure-mode judges in DIR (encsim judges build) on every encounter, "
             "with the --judge models; results are evaluators named failure:<mode>")

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> RunOptions:
        """Read and cross-check the flags of a parsed ``run`` command line.

        Only the checks of flags against each other happen here; what needs the scenarios, the profile or the
        environment is checked when the run starts (inside the dashboard's job with ``--tui``).

        Args:
            args: The parsed command line (from the ``run`` parser: it carries ``plan_flags``).

        Returns:
            The options.

        Raises:
            ConfigError: ``--retry-errors`` or ``--out`` or a plan flag with(out) ``--resume`` where that makes
                no sense, a bad ``--processes``, or a negative ``--fail-fast``.
            PersonaError: ``--personas`` names no preset or an unknown one.
        """
        if args.retry_errors and not args.resume:
            raise ConfigError("--retry-errors only applies with --resume DIR.")
        if args.resume and args.out:
            raise ConfigError("--out cannot be combined with --resume; the run directory is the one given to "
                              "--resume.")
        if args.resume and (given := _plan_flags_given(args)):
            raise ConfigError(f"{', '.join(given)} cannot be combined with --resume: a resumed run continues the plan "
                              f"stored in {args.resume / 'run.json'} (model, scenarios, K, personas, seed, judges, "
                              f"deadlines, ...), so these would be ignored. Drop them to continue the run as planned, "
                              f"or start a new run with --out. Only {_resume_flag_list()} apply to a resume.")
        if args.executor != "ray" and (args.ray_address is not None or args.ray_actors is not None):
            raise ConfigError("--ray-address and --ray-actors only apply with --executor ray; add --executor ray "
                              "or drop them.")
        _check_call_flags(args)
        values = {f.name: _read(f, args) for f in dataclasses.fields(cls)}
        if values["processes"] and args.executor == "ray":
            raise ConfigError(f"--processes {values['processes']} with --executor ray: Ray runs the encounters in "
                              "its own workers. Drop --processes (or use --executor local with it).")
        if args.fail_fast < 0:
            raise ConfigError(f"--fail-fast {args.fail_fast}: give how many first agent calls, all failing the same "
                              f"fatal way, stop the run (default {DEFAULT_FAIL_FAST}), or 0 to never stop early.")
        return cls(**values)


AGENT_URL_SCHEMES: dict[str, tuple[str, ...]] = {
    "pipecat": ("ws", "wss"), "twilio": ("ws", "wss"), "openai-realtime": ("ws", "wss", "http", "https"),
    "chat-audio": ("http", "https")}
"""The URL schemes ``--agent-url`` takes for each ``--agent-protocol``."""
AGENT_URL_EXAMPLES = {"pipecat": "ws://127.0.0.1:8766", "twilio": "ws://127.0.0.1:8766",
                      "openai-realtime": "ws://127.0.0.1:8766/v1", "chat-audio": "http://127.0.0.1:8766/v1"}


def _check_call_flags(args: argparse.Namespace) -> None:
    """The flags of ``--mode call`` against the others (a resumed run's mode is checked by ``plan_run``)."""
    if args.mode == "text" and args.audio_format is not None:
        raise ConfigError(f"--audio-format {args.audio_format} only applies with --mode voice or --mode call (a text "
                          "run stores no audio); add --mode voice or drop it.")
    if args.mode != "call":
        named = [name for name, value in (("--agent-url", args.agent_url), ("--agent-protocol", args.agent_protocol),
                                          ("--call-time-limit", args.call_time_limit),
                                          ("--agent-turns", args.agent_turns), ("--agent-reply", args.agent_reply),
                                          ("--agent-scenario-hint", args.agent_scenario_hint or None))
                 if value is not None]
        if named:
            raise ConfigError(f"{', '.join(named)} only apply with --mode call; add --mode call or drop them.")
        return
    if args.agent_url is None:
        raise ConfigError("--mode call needs --agent-url URL: the voice agent under test, e.g. "
                          "--agent-url ws://127.0.0.1:8766 (start the built-in one with `encsim serve-agent`).")
    protocol = args.agent_protocol or "pipecat"
    schemes = AGENT_URL_SCHEMES[protocol]
    if not args.agent_url.startswith(tuple(f"{s}://" for s in schemes)):
        raise ConfigError(f"--agent-url {args.agent_url[:80]!r}: --agent-protocol {protocol} takes a "
                          f"{' or '.join(s + '://' for s in schemes)} URL (e.g. {AGENT_URL_EXAMPLES[protocol]}).")
    if args.agent_turns is not None and protocol != "openai-realtime":
        raise ConfigError("--agent-turns only applies with --agent-protocol openai-realtime; drop it.")
    if args.agent_reply is not None and protocol != "chat-audio":
        raise ConfigError("--agent-reply only applies with --agent-protocol chat-audio; drop it.")
    if args.call_time_limit is not None and not 0 < args.call_time_limit < float("inf"):
        raise ConfigError(f"--call-time-limit {args.call_time_limit}: give a positive number of seconds (default "
                          "300).")
    for given, flag_name, why in ((args.processes != "0", "--processes", "each call already runs on the event loop "
                                   "with the voice models loaded once"),
                                  (args.executor == "ray", "--executor ray", "calls run in this process"),
                                  (args.patient_model is not None, "--patient-model", "the calling patient uses "
                                   "its deterministic layers only"),
                                  (args.voice_preset is not None, "--voice-preset", "a call has no channel "
                                   "effects yet")):
        if given:
            raise ConfigError(f"{flag_name} does not apply with --mode call ({why}); drop it.")


def _read(f: dataclasses.Field[Any], args: argparse.Namespace) -> Any:
    if (spec := f.metadata.get("group")) is not None:
        return spec.read(args)
    spec = f.metadata["flag"]
    value = getattr(args, spec.dest)
    return spec.convert(value) if spec.convert is not None else value


def _flag_fields() -> Iterator[tuple[dataclasses.Field[Any], FlagSpec | GroupSpec]]:
    for f in dataclasses.fields(RunOptions):
        yield f, f.metadata.get("flag") or f.metadata["group"]


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Every option of ``RunOptions`` on the ``run`` parser, in the fields' order, and the plan flags' list."""
    for _, spec in _flag_fields():
        if isinstance(spec, GroupSpec):
            spec.add(parser)
        else:
            parser.add_argument(*spec.names, **spec.argparse)
    parser.set_defaults(plan_flags=tuple((max(a.option_strings, key=len), a.dest, a.default)
                                         for a in parser._actions if a.option_strings and a.dest not in RESUME_FLAGS))


def _resume_dests() -> frozenset[str]:
    dests: set[str] = {"help"}
    for _, spec in _flag_fields():
        if isinstance(spec, GroupSpec):
            dests |= spec.resume_dests
        elif spec.resume:
            dests.add(spec.dest)
    return frozenset(dests)


# `run` flags that only say how to carry out the plan; every other flag is the plan, stored in run.json, and
# `--resume` continues that plan (so a flag of the plan given with --resume is an error, never silently ignored)
# (the executor is one of them: a run started with --executor ray can be resumed with local, and the other way)
RESUME_FLAGS = _resume_dests()


def _resume_flag_list() -> str:
    """The flags a resume accepts besides --resume itself, as the error message lists them."""
    names = [max(spec.names, key=len) for _, spec in _flag_fields()
             if isinstance(spec, FlagSpec) and spec.resume and spec.dest != "resume"]
    names += [f"--{d.replace('_', '-')}" for _, spec in _flag_fields() if isinstance(spec, GroupSpec)
              for d in sorted(spec.resume_dests)]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _plan_flags_given(args: argparse.Namespace) -> list[str]:
    """The plan flags given on a --resume command line (any value other than the parser's default)."""
    return [name for name, dest, default in args.plan_flags if getattr(args, dest) != default]
