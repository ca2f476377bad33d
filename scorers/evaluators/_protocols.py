"""The red-flag protocol data: which protocols exist, when each applies, and its flags.

Read from ``scorers/data/red_flag_protocols.yaml`` (or another file in the same format: that file's
header and scorers/evaluators/README.md). The evaluators that use them (``red_flags``, and
``escalation`` and ``completeness`` for the chest-pain protocol) import this data module, not one
another.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scenarios import load_model_file
from scenarios.schema import Escalation, Fact, Scenario
from scorers.evaluators._base import EvaluatorError
from scorers.evaluators._text import complaint_text, contexts, find_keyword, is_denial, per_scenario


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Conditions(_Frozen):
    """Patient conditions that must all hold (fields left unset are not checked)."""

    contexts: list[Literal["pediatric", "geriatric", "pregnancy"]] = []
    sex: Literal["female", "male", "other"] | None = None
    min_age: float | None = None
    max_age: float | None = None
    min_gestation_weeks: int | None = None

    def hold(self, scenario: Scenario) -> bool:
        p = scenario.patient_profile
        if not set(self.contexts) <= contexts(scenario):
            return False
        if self.sex is not None and p.sex != self.sex:
            return False
        if self.min_age is not None and p.age < self.min_age:
            return False
        if self.max_age is not None and p.age > self.max_age:
            return False
        if self.min_gestation_weeks is not None and (p.gestation_weeks or 0) < self.min_gestation_weeks:
            return False
        return True


class Applicability(Conditions):
    """``Conditions`` plus: any of ``tags`` / ``complaint`` / ``answers`` must match, when any is given."""

    tags: list[str] = []
    complaint: list[str] = Field(default=[], description="keywords in the chief complaint or opening line")
    answers: list[str] = Field(default=[], description="keywords in a fact answer that is not a denial")

    def matches(self, scenario: Scenario) -> bool:
        if not self.hold(scenario):
            return False
        if not (self.tags or self.complaint or self.answers):
            return True
        if set(self.tags) & set(scenario.tags):
            return True
        if self.complaint and find_keyword(complaint_text(scenario), self.complaint):
            return True
        return bool(self.answers) and any(
            find_keyword(f.answer, self.answers) and not is_denial(f.answer) for f in scenario.information_tree)


class RedFlag(_Frozen):
    """One red flag of a protocol: the keywords and fact ids that cover it, an optional threshold and conditions."""

    id: str
    label: str
    keywords: list[str] = Field(min_length=1)
    fact_ids: list[str] = []
    escalation_threshold: Escalation | None = None
    when: Conditions | None = None

    def covers(self, fact: Fact) -> bool:
        """Whether ``fact`` covers this flag: its id is listed, or a keyword matches one of its triggers or its id."""
        if fact.id in self.fact_ids:
            return True
        return any(find_keyword(t, self.keywords) for t in (*fact.triggers, fact.id.replace("_", " ")))


class RedFlagProtocol(_Frozen):
    """A red-flag protocol: which scenarios it applies to, its escalation threshold, alarm terms and flags.

    The format is in ``scorers/data/red_flag_protocols.yaml`` and the evaluators' README.
    """

    id: str
    title: str
    applies_when: Applicability
    escalation_threshold: Escalation
    alarm_terms: list[str] = []
    flags: list[RedFlag] = Field(min_length=1)

    def applies(self, scenario: Scenario) -> bool:
        """Whether the protocol applies to ``scenario`` (its ``applies_when``)."""
        return self.applies_when.matches(scenario)


class _ProtocolFile(_Frozen):
    version: int = 1
    protocols: list[RedFlagProtocol] = Field(min_length=1)


@lru_cache(maxsize=1)
def default_protocols_path() -> Path:
    return Path(str(resources.files("scorers") / "data" / "red_flag_protocols.yaml"))


@lru_cache(maxsize=8)
def _load(path: str) -> tuple[RedFlagProtocol, ...]:
    parsed = load_model_file(path, _ProtocolFile, what="a red-flag protocol file", error=EvaluatorError,
                             syntax="yaml", fix="Fix the file (YAML with a top-level 'protocols' list; "
                                                "scorers/evaluators/README.md has the format) or point to another one.")
    ids = [p.id for p in parsed.protocols]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise EvaluatorError(f"red-flag protocol file {path} uses protocol id(s) {', '.join(dupes)} more than once; "
                             "protocol ids must be unique.")
    return tuple(parsed.protocols)


def load_red_flag_protocols(path: str | Path | None = None) -> list[RedFlagProtocol]:
    """The protocols in ``path`` (default: the shipped ``scorers/data/red_flag_protocols.yaml``)."""
    return list(_load(str(Path(path) if path is not None else default_protocols_path())))


def shipped_protocols() -> tuple[RedFlagProtocol, ...]:
    """The shipped protocols, one shared tuple (``load_red_flag_protocols`` gives a new list each call)."""
    return _load(str(default_protocols_path()))


def applicable_protocols(scenario: Scenario,
                         protocols: Sequence[RedFlagProtocol] | None = None) -> list[RedFlagProtocol]:
    """The protocols (the shipped ones by default) that apply to ``scenario`` (computed once per scenario)."""
    return list(_applicable(scenario, protocols if protocols is not None else shipped_protocols()))


@per_scenario
def _applicable(scenario: Scenario, protocols: Sequence[RedFlagProtocol]) -> tuple[RedFlagProtocol, ...]:
    return tuple(p for p in protocols if p.applies(scenario))
