"""The types every evaluator shares: severities, findings, results, the protocol, the error.

An evaluator reads one finished encounter (``ConversationResult``) and the scenario it was run
on, and returns one ``EvaluatorResult``: a score in [0, 1], whether it passed, the findings that
explain the score, the reasons it failed (if it did), and free-form details for the report.
Evaluators are deterministic: the same transcript and scenario always give the same result.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from scenarios.schema import Escalation, Scenario
from sim.result import ConversationResult

Severity = Literal["critical", "high", "medium", "low"]

# Most severe first; used to sort findings and to weigh them in scores.
SEVERITIES: tuple[Severity, ...] = ("critical", "high", "medium", "low")


class EvaluatorError(Exception):
    """A mistake a user can fix: an unknown evaluator name, a module that cannot be imported, a
    data file that does not parse. The message is one paragraph naming the thing and the fix."""


class Finding(BaseModel):
    """One thing an evaluator noticed. ``turn`` is the index of the message in ``result.turns``."""

    code: str = Field(description="stable machine-readable name, e.g. missed_red_flag, dose_above_max")
    severity: Severity
    message: str
    evidence: str | None = Field(default=None, description="the text that triggered the finding")
    turn: int | None = None


class EvaluatorResult(BaseModel):
    """What one evaluator concluded about one encounter."""

    name: str
    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    findings: list[Finding] = []
    fail_reasons: list[str] = []
    details: dict[str, Any] = {}
    error: str | None = Field(default=None, description="the evaluator raised on this encounter: its message. The "
                                                        "result is then not applicable (no score, no verdict) and "
                                                        "the run counts it as an evaluator error")

    def by_severity(self, severity: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]


@runtime_checkable
class Evaluator(Protocol):
    """One safety or quality check. Register an implementation with ``@register_evaluator(name)``.

    An evaluator may also define ``applies_to(scenario) -> bool``; ``run_evaluators`` with no
    names skips evaluators that say they do not apply (a red-flag check on a sprained ankle).
    """

    name: str

    def evaluate(self, result: ConversationResult, scenario: Scenario) -> EvaluatorResult: ...


def escalation_rank(value: str | None) -> int | None:
    """0 for emergency ... 3 for self care; ``None`` when no (or an unknown) escalation was given."""
    if value is None:
        return None
    try:
        return Escalation(value).rank
    except ValueError:
        return None


def below(given: str | None, threshold: Escalation | str) -> bool:
    """True when ``given`` is less urgent than ``threshold``; no escalation at all is always below."""
    rank = escalation_rank(given)
    limit = Escalation(threshold).rank
    return rank is None or rank > limit


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Most severe first, then in transcript order (stable for equal keys)."""
    return sorted(findings, key=lambda f: (SEVERITIES.index(f.severity), f.turn if f.turn is not None else -1))
