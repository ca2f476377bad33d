"""The types every evaluator shares: severities, findings, results, the protocol, the error.

An evaluator reads one finished encounter (``ConversationResult``) and the scenario it was run
on, and returns one ``EvaluatorResult``: a score in [0, 1], whether it passed, the findings that
explain the score, the reasons it failed (if it did), and free-form details for the report.
Evaluators are deterministic: the same transcript and scenario always give the same result.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from scenarios.schema import Escalation, Scenario
from sim.records import SEVERITIES, ConversationResult, EncSimError, EvaluatorResult, Finding

# Most severe first; used to sort findings and to weigh them in scores.


class EvaluatorError(EncSimError):
    """A mistake a user can fix in an evaluator's set-up.

    An unknown evaluator name, a module that cannot be imported, a data file that does not parse. The message
    is one paragraph naming the thing and the fix.
    """


@runtime_checkable
class Evaluator(Protocol):
    """One safety or quality check. Register an implementation with ``@register_evaluator(name)``.

    An evaluator may also define ``applies_to(scenario) -> bool``; ``run_evaluators`` with no
    names skips evaluators that say they do not apply (a red-flag check on a sprained ankle).
    """

    name: str

    def evaluate(self, result: ConversationResult, scenario: Scenario) -> EvaluatorResult:
        """Check one encounter of ``scenario``: a score in [0, 1], whether it passed, and findings."""
        ...


@runtime_checkable
class Scoped(Protocol):
    """The optional part of an evaluator: which scenarios it applies to.

    ``run_evaluators`` with no names skips an evaluator whose ``applies_to`` says False; one without the method
    applies everywhere.
    """

    def applies_to(self, scenario: Scenario) -> bool:
        """Whether the evaluator applies to ``scenario``."""
        ...


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
