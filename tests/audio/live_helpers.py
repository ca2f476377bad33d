"""Shared pieces of the live-call tests: pipecat's logging muted for a module, and a call clock a test sets."""

from __future__ import annotations

from collections.abc import Iterator

from loguru import logger

from audio.live._recording import CallClock


def muted_pipecat() -> Iterator[None]:
    """pipecat logs every frame type it meets at DEBUG through loguru: muted while the generator is suspended."""
    logger.disable("pipecat")
    try:
        yield
    finally:
        logger.enable("pipecat")


class SetClock(CallClock):
    """A call clock that reads ``at``, which the test sets."""

    def __init__(self) -> None:
        super().__init__()
        self.at = 0.0

    def now(self) -> float:
        return self.at
