"""The root of every error a user can cause: ``UserError``.

It lives here, in the bottom layer, so that every package can subclass it: ``scenarios`` and ``imaging``
directly (``ScenarioError``, ``LexiconError``, ``ImagingError``), the others through ``sim.records.EncSimError``
(``ConfigError``, ``AgentError``, the scorers', the voice stack's and the dashboard's errors). The CLI catches
``UserError`` once: it prints the message (one paragraph: what, where, how to fix) and exits 2, with no
traceback. Anything else escaping is a bug.
"""

from __future__ import annotations

__all__ = ["UserError"]


class UserError(Exception):
    """Something the user gave (a file, a flag, an endpoint, an image) cannot be used.

    The message says how to fix it.
    """
