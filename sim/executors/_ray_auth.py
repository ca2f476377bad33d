"""Ray 2.60's token authentication, made explicit so that whether a run can join a head does not depend on history.

Ray 2.60 turns token authentication on for every new local instance (``ray.init()``) and, when
``~/.ray/auth_token`` is missing, writes a fresh token there. A head node (``ray start --head``) then uses token
authentication if that file exists when it starts, but a process joining a cluster by an explicit address never
sends the token unless ``RAY_AUTH_MODE=token`` is set. So whether ``encsim ray-head`` followed by
``encsim run --ray-address 127.0.0.1:PORT`` worked depended on whether any earlier run on the machine had started
a local instance: CI, where one had, saw the run refused, with only "Failed to connect to Ray cluster" and a line a
second of ``InvalidAuthToken`` on its stderr.

What this module does instead:

- **A run's own local instance** (no ``--ray-address``) gets a token of its own, in the environment only
  (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``; its GCS, raylet and workers inherit it): no file is read or
  written, and the environment is put back as it was when the instance stops.
- **``encsim ray-head``** turns token authentication on explicitly (a loopback head still serves every local
  user) with the token in ``~/.ray/auth_token``, created if missing.
- **A run joining a head on this machine** (a loopback address, or ``auto``) sends the token of
  ``~/.ray/auth_token`` when there is one, as Ray itself does for ``auto`` (a head without authentication
  accepts it). A run joining another machine sends a token only when the user says so (``RAY_AUTH_MODE=token``
  with ``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH``), Ray's rule, so this machine's token never goes elsewhere.
- **A join that the head refuses** is a one-paragraph error that says so, not "could not connect"
  (``sim.executors.ray.connect`` keeps what Ray writes to file descriptor 2 during the join and looks for it).

A user's own ``RAY_AUTH_MODE``, ``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH`` is always kept as it is. The token is
never printed or written to a run directory.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import secrets
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

AUTH_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
REFUSED = ("InvalidAuthToken", "Unauthenticated", "AuthenticationError")
"""What Ray says (in the exception or on fd 2) when the head refuses this process's token."""


def _raylet() -> Any:  # ray._raylet, a compiled module without type stubs
    return importlib.import_module("ray._raylet")


def _refresh() -> None:
    """Make this process's Ray see the environment as it is now (Ray caches its config and the token)."""
    raylet = _raylet()
    if not hasattr(raylet, "AuthenticationTokenLoader"):  # a Ray without token authentication: nothing cached
        return
    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()


def private_token() -> Callable[[], None]:
    """Give the Ray instance this process is about to start a token of its own, in the environment only.

    Returns:
        What puts the environment back (call it after ``ray.shutdown()``). Nothing changes when the user set any
        of ``AUTH_ENV``.
    """
    if any(name in os.environ for name in AUTH_ENV):
        return lambda: None
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    _refresh()

    def restore() -> None:
        for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
            os.environ.pop(name, None)
        _refresh()

    return restore


def join_token(address: str) -> Callable[[], None]:
    """Send this machine's token (``~/.ray/auth_token``) when joining a head on this machine (module docstring).

    Args:
        address: The address being joined (``auto``, HOST:PORT, ray://HOST:PORT).

    Returns:
        What puts the environment back (call it after ``ray.shutdown()``).
    """
    host = address.removeprefix("ray://").rsplit(":", 1)[0].strip("[]")
    if any(name in os.environ for name in AUTH_ENV) or host not in ("auto", "127.0.0.1", "localhost", "::1"):
        return lambda: None
    if not _raylet().AuthenticationTokenLoader.instance().has_token(ignore_auth_mode=True):
        return lambda: None  # no token here: a head on this machine has none either (or the error says so)
    os.environ["RAY_AUTH_MODE"] = "token"
    _refresh()

    def restore() -> None:
        os.environ.pop("RAY_AUTH_MODE", None)
        _refresh()

    return restore


def head_token() -> str:
    """Turn token authentication on for a head node this process starts; create ``~/.ray/auth_token`` if missing.

    Returns:
        A sentence for the user saying where the token is (or that their own setting is used).
    """
    if any(name in os.environ for name in AUTH_ENV):
        return "Ray authentication: as your RAY_AUTH_* environment says."
    from ray._private.authentication.authentication_token_setup import _get_default_token_path, generate_and_save_token

    os.environ["RAY_AUTH_MODE"] = "token"
    _refresh()
    if not _raylet().AuthenticationTokenLoader.instance().has_token(ignore_auth_mode=True):
        generate_and_save_token()
        _refresh()
    return (f"Token authentication is on: runs on this machine read the token from {_get_default_token_path()}; "
            "another machine needs the same token (RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH).")


def refused(text: str) -> bool:
    """Whether Ray's words (an exception, its stderr) say that the head refused this process's token."""
    return any(word in text for word in REFUSED)


@contextlib.contextmanager
def fd2_kept(sink: list[str]) -> Iterator[None]:
    """Inside, whatever is written to file descriptor 2 (Ray's C++ client logs there) is appended to ``sink``."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as kept:
        os.dup2(kept.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            kept.seek(0)
            sink.append(kept.read().decode("utf-8", "replace"))
