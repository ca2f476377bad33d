"""``encsim demo``: the README's demo, the scripted controls on the library and the local model on a subset."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from sim.records import RunLayout

DEMO_SCENARIOS = ["acs_chest_pain", "viral_uri"]
DEMO_K = 2
DEMO_MAX_TURNS = 5


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``demo`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    demo = subparsers.add_parser("demo", help="the README's demo: scripted controls on the library, "
                                              "the local model on a subset")
    demo.set_defaults(handler=cmd_demo)


def cmd_demo(_: argparse.Namespace) -> int:
    """Controls on the whole library, then the embedded model on a small subset, side by side.

    Each part is an ``encsim run`` command line, parsed and run as the user would type it.

    Returns:
        The exit code: that of the first run that did not exit 0, else 0.
    """
    from sim.cli import _run_command
    from sim.cli._common import CliParser
    from sim.store import RunStore

    parser = CliParser(prog="encsim")  # the run command's own parser, as `encsim run` parses its line
    _run_command.register(parser.add_subparsers(dest="command", required=True, parser_class=CliParser))

    root = Path("runs") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}"
    plans = [
        ("scripted:reference", ["all"], 3, None, ["--quiet"]),
        ("scripted:natural", ["all"], 3, None, ["--quiet"]),
        ("scripted:undertriage", ["all"], 3, None, ["--quiet"]),
        ("local", DEMO_SCENARIOS, DEMO_K, DEMO_MAX_TURNS, []),
    ]
    rows = []
    for model, scen, k, max_turns, extra in plans:
        name = model.replace(":", "-")
        print(f"\n== {model}: scenarios {','.join(scen)}, K={k}" + (f", max turns {max_turns}" if max_turns else ""),
              file=sys.stderr)
        ns = parser.parse_args(["run", "--model", model, "--k", str(k), "--out", str(root / name),
                                        *[a for s in scen for a in ("--scenarios", s)],
                                        *(["--max-turns", str(max_turns)] if max_turns else []), *extra])
        code = _run_command.cmd_run(ns)
        if code:
            return code
        rows.append((model, RunStore(root / name).read_summary(), RunLayout(root / name).report))
    print("\nmodel                    aggregate  gate        scored  errors  report")
    for model, s, report in rows:
        agg = "n/a" if s.aggregate is None else f"{s.aggregate:.3f}"
        gate = "TRIGGERED" if s.safety_gate.triggered else s.safety_gate.state
        print(f"{model:24} {agg:>9}  {gate:10} {s.completed:>7} {s.errors:>7}  {report}")
    return 0
