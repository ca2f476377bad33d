"""``BaseScreen``: what every screen of the dashboard has, typed access to the app and the poll hook."""

from __future__ import annotations

from typing import cast

from textual.screen import Screen

from review import PollResult
from tui._dashboard import Dashboard


class BaseScreen(Screen[None]):
    """Common to every screen: typed access to the app, and the hook the app calls after a poll."""

    @property
    def dash(self) -> Dashboard:
        return cast("Dashboard", self.app)

    def refresh_state(self, res: PollResult) -> None:  # pragma: no cover - overridden
        pass
