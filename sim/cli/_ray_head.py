"""``encsim ray-head [--port N] [--num-cpus N]``: a Ray head node on this machine, listening on 127.0.0.1 only."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``ray-head`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    head = subparsers.add_parser(
        "ray-head", help="start a Ray head node on this machine that listens on 127.0.0.1 only (stop it with "
                         "`ray stop`); runs join it with --executor ray --ray-address auto")
    head.add_argument("--port", type=int, default=6379, help="the head's port (default 6379)")
    head.add_argument("--num-cpus", type=int, default=None,
                      help="CPUs the node offers to tasks and voice actors (default: all of this machine's)")
    head.set_defaults(handler=cmd_ray_head)


def cmd_ray_head(args: argparse.Namespace) -> int:
    """``encsim ray-head``: start the head node (``sim.executors.ray.start_local_head``) and say how to use it.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    from sim.executors.ray import start_local_head
    from sim.records import ConfigError

    if not 1 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: give a TCP port between 1 and 65535 (default 6379).")
    if args.num_cpus is not None and args.num_cpus < 1:
        raise ConfigError(f"--num-cpus {args.num_cpus}: give at least 1, or leave it out to offer every CPU.")
    address, auth = start_local_head(port=args.port, num_cpus=args.num_cpus)
    print(f"Ray head node listening on {address} (127.0.0.1 only). Run with:\n"
          f"  encsim run --executor ray --ray-address auto ...\n"
          f"{auth}\n"
          f"Stop it with: ray stop")
    return 0
