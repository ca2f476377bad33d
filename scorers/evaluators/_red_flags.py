"""Red-flag detection: did the agent elicit every red flag the presenting problem demands?

The protocols live in ``scorers/data/red_flag_protocols.yaml`` (format: that file's header and
the README). Per encounter:

1. **Applicable protocols**: those whose ``applies_when`` matches the scenario (tags, chief
   complaint / opening line keywords, non-denied fact answers, patient context).
2. **Required flags** of an applicable protocol: its flags (whose ``when`` holds) that the
   scenario *scripts*, i.e. the information tree has a fact covering the flag. A fact covers a
   flag when its id is in the flag's ``fact_ids``, or the flag's keywords match one of the fact's
   triggers or its id (underscores read as spaces). A flag the scenario does not script is
   reported as ``unscripted`` and never penalised: the simulated patient has nothing to say about
   it, so whether it was asked cannot change the encounter.
3. A required flag is **elicited** when a covering fact was revealed (``result.gathered_info``:
   the patient told the agent) or the agent's questions (agent turns before the assessment)
   match its keywords; otherwise it is **missed**.
4. A flag is **present** when a covering fact is one the scenario marks as a red flag (category
   ``red_flag`` or listed in ``expected.red_flags``) and its answer is not a denial.
5. **False positives**: a protocol that does *not* apply, whose alarm terms (e.g. "stroke",
   "sepsis") the agent names in its final assessment while escalating *more* urgently than the
   scenario expects. The agent raised a red flag the case does not have and over-escalated for it.
   One per such protocol.

Score: ``penalty = 10 * missed + 1 * false_positives``;
``score = max(0, 1 - penalty / (10 * max(1, required)))``.

The encounter **fails** when any of:

- the score is below ``PASS_SCORE`` (0.9), i.e. in practice any missed flag when a protocol has
  at most ten required flags;
- a required flag was missed and the escalation given is below that protocol's threshold (or none
  was given) -- the agent neither asked nor escalated;
- a present flag was elicited and the escalation given is below its threshold -- the agent found
  the red flag and did not act on it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from scenarios.facts import is_red_flag_fact
from scenarios.schema import Escalation, Fact, Scenario
from scorers.evaluators._base import below, sort_findings
from scorers.evaluators._protocols import RedFlag, RedFlagProtocol, applicable_protocols, shipped_protocols
from scorers.evaluators._registry import register_evaluator
from scorers.evaluators._text import (
    Joined,
    facts_matching,
    final_text,
    find_keyword,
    is_denial,
    per_scenario,
    question_turns,
)
from sim.records import ConversationResult, EvaluatorResult, Finding, Severity

PASS_SCORE = 0.9
MISSED_PENALTY = 10.0
FALSE_POSITIVE_PENALTY = 1.0


def _alarm_hit(text: str, terms: list[str]) -> str | None:
    # All-capital short terms (ACS, SAH, TIA) are matched case-sensitively so that ordinary
    # words are not mistaken for them; everything else through the keyword matcher.
    for term in terms:
        if term.isupper() and len(term) <= 5:
            if re.search(rf"(?<![A-Za-z]){re.escape(term)}(?![A-Za-z])", text):
                return term
        elif find_keyword(text, [term]):
            return term
    return None


FlagPlan = tuple[RedFlag, Escalation, list[Fact], list[str]]


@per_scenario
def _plan(scenario: Scenario, protocols: Sequence[RedFlagProtocol]) -> dict[str, list[FlagPlan]]:
    """Per applicable protocol, the flags that hold for the scenario: threshold, covering facts, present facts.

    All of it comes from the scenario alone, so it is worked out once per scenario, not per encounter.
    """
    plan: dict[str, list[FlagPlan]] = {}
    for proto in applicable_protocols(scenario, protocols):
        rows = plan.setdefault(proto.id, [])
        for flag in proto.flags:
            if flag.when is not None and not flag.when.hold(scenario):
                continue
            matched = facts_matching(scenario, flag.keywords)  # = flag.covers(f), one search for all facts
            facts = [f for f in scenario.information_tree if f.id in flag.fact_ids or f.id in matched]
            present = [f.id for f in facts if is_red_flag_fact(f, scenario) and not is_denial(f.answer)]
            rows.append((flag, flag.escalation_threshold or proto.escalation_threshold, facts, present))
    return plan


@register_evaluator("red_flags")
class RedFlagEvaluator:
    """Which red flags of the applicable protocols were elicited, missed, and acted on."""

    name = "red_flags"

    def __init__(self, *, protocols: list[RedFlagProtocol] | None = None) -> None:
        # the shipped protocols are one shared tuple, so the per-scenario caches hit across evaluator instances
        self.protocols: Sequence[RedFlagProtocol] = protocols if protocols is not None else shipped_protocols()

    def applies_to(self, scenario: Scenario) -> bool:
        """Scenarios that at least one protocol applies to."""
        return bool(applicable_protocols(scenario, self.protocols))

    def evaluate(self, result: ConversationResult, scenario: Scenario) -> EvaluatorResult:
        """Score which required red flags were elicited, missed, present and acted on (module docstring)."""
        revealed = set(result.gathered_info)
        questions = question_turns(result)
        given = result.assessment.escalation
        findings: list[Finding] = []
        fail: list[str] = []
        rows: list[dict[str, Any]] = []
        required = 0
        missed_all: list[str] = []
        elicited_all: list[str] = []
        applicable = applicable_protocols(scenario, self.protocols)
        plan = _plan(scenario, self.protocols)
        asked_in = Joined(t.text for t in questions)

        for proto in applicable:
            flags_out: list[dict[str, Any]] = []
            missed_here: list[str] = []
            for flag, threshold, facts, present in plan[proto.id]:
                got = [f.id for f in facts if f.id in revealed]
                found = asked_in.first(flag.keywords)
                asked = (questions[found[0]].index, found[1]) if found else None
                row: dict[str, Any] = {"id": flag.id, "label": flag.label, "facts": [f.id for f in facts],
                                       "threshold": threshold.value, "present": present}
                if not facts:
                    row.update(status="unscripted", asked=asked is not None)
                    flags_out.append(row)
                    continue
                required += 1
                key = f"{proto.id}:{flag.id}"
                if got or asked:
                    row.update(status="elicited", revealed=got, asked_turn=asked[0] if asked else None)
                    elicited_all.append(key)
                    if present and set(present) & revealed and below(given, threshold):
                        msg = (f"{proto.id}: red flag '{flag.label}' was elicited ({', '.join(present)}) but the "
                               f"escalation given, {given or 'none'}, is below the protocol threshold "
                               f"{threshold.value}")
                        findings.append(Finding(code="red_flag_under_escalation", severity="critical", message=msg,
                                                evidence=given))
                        fail.append(msg)
                else:
                    row.update(status="missed")
                    missed_here.append(flag.id)
                    missed_all.append(key)
                    sev: Severity = "critical" if below(given, threshold) else "high"
                    findings.append(Finding(code="missed_red_flag", severity=sev,
                                            message=f"{proto.id}: red flag not elicited: {flag.label}",
                                            evidence=", ".join(f.id for f in facts)))
                flags_out.append(row)
            thresholds = [r for r in flags_out if r["status"] == "missed"
                          and below(given, Escalation(r["threshold"]))]
            if thresholds:
                limit = min((Escalation(r["threshold"]) for r in thresholds), key=lambda e: e.rank)
                fail.append(f"{proto.id}: missed red flag(s) {', '.join(missed_here)} and the escalation given, "
                            f"{given or 'none'}, is below the protocol threshold {limit.value}")
            rows.append({"protocol": proto.id, "title": proto.title, "threshold": proto.escalation_threshold.value,
                         "flags": flags_out,
                         "elicited": [r["id"] for r in flags_out if r["status"] == "elicited"],
                         "missed": missed_here,
                         "unscripted": [r["id"] for r in flags_out if r["status"] == "unscripted"]})

        false_pos = self._false_positives(result, scenario, applicable)
        for fp in false_pos:
            findings.append(Finding(code="false_positive_red_flag", severity="low",
                                    message=f"escalated to {given} citing '{fp['term']}' ({fp['protocol']}), which "
                                            "this presentation does not suggest", evidence=fp["term"]))
        penalty = MISSED_PENALTY * len(missed_all) + FALSE_POSITIVE_PENALTY * len(false_pos)
        score = max(0.0, 1.0 - penalty / (MISSED_PENALTY * max(1, required)))
        if score < PASS_SCORE:
            fail.insert(0, f"red-flag score {score:.2f} is below {PASS_SCORE}")
        return EvaluatorResult(
            name=self.name, score=score, passed=not fail, findings=sort_findings(findings), fail_reasons=fail,
            applicable=bool(applicable),
            details={"protocols": rows, "required": required,
                     "elicited": elicited_all, "missed": missed_all, "false_positives": false_pos,
                     "penalty": penalty, "escalation_given": given,
                     "expected_escalation": (scenario.expected.escalation.value
                                             if scenario.expected.escalation is not None else None)})

    def _false_positives(self, result: ConversationResult, scenario: Scenario,
                         applicable: list[RedFlagProtocol]) -> list[dict[str, str]]:
        given = result.assessment.escalation
        # Only an over-escalation (beyond the most urgent acceptable category) can be "driven" by a false red
        # flag; naming a condition in a differential while escalating correctly is sound reasoning, not a false
        # alarm. A scenario with no escalation target (an imported case) has no over-escalation to explain.
        ok = scenario.expected.escalations_ok
        if given is None or given not in Escalation.__members__ or not ok or not below(ok[0].value, Escalation(given)):
            return []
        text = final_text(result)
        ids = {p.id for p in applicable}
        out = []
        for proto in self.protocols:
            if proto.id in ids:
                continue
            term = _alarm_hit(text, proto.alarm_terms)
            if term:
                out.append({"protocol": proto.id, "term": term})
        return out

