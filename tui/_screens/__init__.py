"""The dashboard's screens, one module each.

Main (``_main``), encounter, coding, judge disagreements, reliability, live, gate and help. Screens read the
app's ``RunState`` and annotation drafts through ``tui._dashboard.Dashboard`` (what they use of the app), never
through ``tui._app``; the app calls ``refresh_state(res)`` on every screen in its stack after each poll that
changed something. ``BaseScreen`` (``_base``) is what they have in common.
"""

from __future__ import annotations

from tui._screens._base import BaseScreen
from tui._screens._coding import CodingScreen
from tui._screens._disagreements import DisagreementScreen
from tui._screens._encounter import EncounterScreen
from tui._screens._gate import GateScreen, gate_renderable, marker_legend
from tui._screens._help import KEYS, HelpScreen, help_renderable
from tui._screens._live import LiveScreen
from tui._screens._main import FILTER_HELP, MainScreen
from tui._screens._reliability import ReliabilityScreen

__all__ = [
    "FILTER_HELP", "KEYS", "BaseScreen", "CodingScreen", "DisagreementScreen", "EncounterScreen", "GateScreen",
    "HelpScreen", "LiveScreen", "MainScreen", "ReliabilityScreen", "gate_renderable", "help_renderable",
    "marker_legend",
]
