"""Errors a user can cause, under the one root ``scenarios.errors.UserError``.

The CLI prints the message (one paragraph: what, where, how to fix) and exits non-zero without a
traceback. Anything else escaping is a bug.
"""

from __future__ import annotations

from scenarios.errors import UserError


class EncSimError(UserError):
    """The user-facing errors of every package above ``scenarios`` (sim, scorers, audio, tui)."""


class ConfigError(EncSimError):
    """A CLI flag, environment variable or run directory that cannot be used as given."""


class AgentError(EncSimError):
    """The agent under test failed for good (after retries) on one call."""

    def __init__(self, message: str, *, retryable: bool = False, kind: str = "agent_error") -> None:
        super().__init__(message)
        self.retryable = retryable
        self.kind = kind
