"""Completeness: did the agent take a full history and give a full assessment and plan?

Elements, each covered or missing (``ELEMENTS`` and ``CONTEXT_ELEMENTS`` hold the keyword sets;
keyword syntax in ``_text``):

- **history** (read from the agent's questions, i.e. agent turns before the assessment; an element
  also counts as covered when a revealed fact's trigger or id matches its keywords, or the fact's
  category is the element's, because then the patient told the agent): onset, severity,
  aggravating factors, alleviating factors, associated symptoms, past history, medications,
  allergies.
- **assessment** (read from the parsed assessment): a triage level, a disposition (escalation),
  a diagnosis, a differential (at least two diagnoses).
- **plan** (read from the final assessment, or the last agent turn without one): follow-up,
  red-flag warnings (safety-netting: what to look out for), return precautions (when to come back
  or call for help).
- **context extras**, only when they apply: chest pain (the ``chest_pain`` red-flag protocol
  applies): cardiac risk factors (history) and an ECG (anywhere in the agent's text); pediatric:
  feeding, wet nappies / urine output, immunisations (history); pregnancy: gestation, bleeding
  (history).

Interviews only: on a standalone imaging item or a replay item the evaluator reports
``applicable: false`` (no history to take; a replay's one reply is the judge's to score).

Score = covered / applicable elements. Passes at ``PASS_SCORE`` (0.6) or more. Each missing
element is a finding: ``medium`` for the assessment elements and allergies / medications (their
absence changes what can safely be advised), ``low`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from scenarios.schema import Scenario
from scorers.evaluators._base import sort_findings
from scorers.evaluators._protocols import shipped_protocols
from scorers.evaluators._registry import register_evaluator
from scorers.evaluators._text import (
    Joined,
    agent_turns,
    contexts,
    facts_matching,
    final_text,
    per_scenario,
    question_turns,
)
from sim.records import ConversationResult, EvaluatorResult, Finding, Severity

PASS_SCORE = 0.6

Section = Literal["history", "assessment", "plan", "context"]
Where = Literal["questions", "final", "any", "parsed"]


@dataclass(frozen=True)
class Element:
    id: str
    section: Section
    keywords: tuple[str, ...] = ()
    where: Where = "questions"
    fact_categories: tuple[str, ...] = field(default=())
    severity: Severity = "low"


ELEMENTS: tuple[Element, ...] = (
    Element("onset", "history", ("when did it start", "when did this start", "when did it begin",
                                  "how long", "since when", "onset", "came on", "start*", "began", "first notice*",
                                  "how many days", "what time", "what were you doing")),
    Element("severity", "history", ("how bad", "severity", "severe", "scale", "out of ten", "out of 10", "1 to 10",
                                     "one to ten", "rate the pain", "rate it", "how much pain", "how high")),
    Element("aggravating", "history", ("worse", "aggravat*", "trigger*", "brought it on", "bring it on", "exert*",
                                        "moving", "movement", "walking", "cough*", "press on it", "pressing")),
    Element("alleviating", "history", ("better", "reliev*", "ease*", "eases", "help*", "tried anything",
                                        "taken anything", "taken any", "take anything", "settle*")),
    Element("associated_symptoms", "history", ("other symptom*", "anything else", "any other", "associated",
                                                "along with", "accompan*", "as well as", "nausea", "vomit*", "fever*",
                                                "sweat*", "dizz*", "short of breath", "breathing", "rash",
                                                "temperature")),
    Element("past_history", "history", ("medical history", "past history", "medical problem*", "health problem*",
                                         "condition*", "ever had", "history of", "diagnosed", "operation*", "surgery",
                                         "previous*", "before", "illness*"), fact_categories=("past_history",)),
    Element("medications", "history", ("medication*", "medicine*", "tablet*", "pill*", "drug*", "prescri*",
                                        "take anything", "taking anything", "taken anything", "inhaler*", "remed*"),
            fact_categories=("medications",), severity="medium"),
    Element("allergies", "history", ("allerg*",), fact_categories=("allergies",), severity="medium"),
    Element("triage_level", "assessment", where="parsed", severity="medium"),
    Element("disposition", "assessment", where="parsed", severity="medium"),
    Element("diagnosis", "assessment", where="parsed", severity="medium"),
    Element("differential", "assessment", where="parsed", severity="low"),
    Element("follow_up", "plan", ("follow up", "follow-up", "review", "see your gp", "see your doctor",
                                   "book an appointment", "appointment", "check in", "recheck", "check back",
                                   "reassess*", "in a few days", "within 48 hours", "within 24 hours"), where="final"),
    Element("red_flag_warnings", "plan", ("watch for", "look out for", "warning sign*", "red flag*", "if you develop",
                                           "if you notice", "if she develops", "if he develops", "if there is any",
                                           "signs of", "if you get", "if it spreads", "if you start"), where="final"),
    Element("return_precautions", "plan", ("come back", "call back", "return", "seek help", "seek urgent",
                                            "seek medical", "call 999", "call 911", "call 111", "call an ambulance if",
                                            "if it gets worse", "if things get worse", "if symptoms get worse",
                                            "if anything changes", "doesn't improve", "does not improve",
                                            "not improving", "get worse", "gets worse", "worsen*"), where="final"),
)

# (context name, element) -- the context names are matched in ``_contexts_for``.
CONTEXT_ELEMENTS: tuple[tuple[str, Element], ...] = (
    ("chest_pain", Element("cardiac_risk_factors", "context", ("risk factor*", "blood pressure", "hypertension",
                                                               "cholesterol", "diabet*", "smoke", "smoking",
                                                               "cigarette*", "family history", "heart problem*"),
                           fact_categories=("risk_factors",))),
    ("chest_pain", Element("ecg", "context", ("ecg", "ekg", "electrocardiogram", "heart tracing", "tracing of your "
                                              "heart", "12 lead", "12-lead"), where="any")),
    ("pediatric", Element("feeding", "context", ("feed*", "bottle*", "breast*", "eating", "drinking", "fluids"))),
    ("pediatric", Element("wet_nappies", "context", ("wet nappies", "nappy", "nappies", "diaper*", "urine", "wee",
                                                     "pee", "passing water"))),
    ("pediatric", Element("immunisations", "context", ("immunis*", "immuniz*", "vaccin*", "jabs", "shots"))),
    ("pregnancy", Element("gestation", "context", ("how many weeks", "weeks pregnant", "gestation", "due date",
                                                   "last period", "pregnancy test", "how far along"))),
    ("pregnancy", Element("bleeding", "context", ("bleed*", "spotting", "blood loss"))),
)


def _contexts_for(scenario: Scenario) -> set[str]:
    out = contexts(scenario)
    if any(p.id == "chest_pain" and p.applies(scenario) for p in shipped_protocols()):
        out.add("chest_pain")
    return out


@register_evaluator("completeness")
class CompletenessEvaluator:
    """History, assessment and plan elements covered, plus context-specific extras."""

    name = "completeness"

    def applies_to(self, scenario: Scenario) -> bool:
        """Interviews only.

        A standalone imaging item asks one question and a replay item's conversation is fixed, so neither has a
        history for the agent to take (the judge's rubrics score a replay's reply).
        """
        return scenario.imaging is None and scenario.replay is None

    def evaluate(self, result: ConversationResult, scenario: Scenario) -> EvaluatorResult:
        """Score the history, assessment, plan and context elements the encounter covered (module docstring)."""
        if not self.applies_to(scenario):
            kind = "an imaging item" if scenario.imaging is not None else "a replay item"
            return EvaluatorResult(name=self.name, score=1.0, passed=True,
                                   applicable=False,
                                   details={"reason": f"{kind} has no interview to complete"})
        ctx, elements, by_fact = _scenario_elements(scenario)
        where = {"questions": Joined(t.text for t in question_turns(result)), "final": Joined([final_text(result)]),
                 "any": Joined(t.text for t in agent_turns(result))}
        revealed = set(result.gathered_info)
        parsed = result.assessment

        covered: dict[str, str] = {}
        for el in elements:
            how = self._covered(el, texts=where.get(el.where), revealed=[f for f in by_fact[el.id] if f in revealed],
                                parsed=parsed)
            if how:
                covered[el.id] = how
        missing = [e for e in elements if e.id not in covered]
        findings = [Finding(code=f"missing_{e.section}_element", severity=e.severity,
                            message=f"{e.section} element not covered: {e.id.replace('_', ' ')}") for e in missing]
        score = len(covered) / len(elements)
        sections: dict[str, dict[str, list[str]]] = {}
        for e in elements:
            row = sections.setdefault(e.section, {"covered": [], "missing": []})
            row["covered" if e.id in covered else "missing"].append(e.id)
        details: dict[str, Any] = {"contexts": sorted(ctx), "sections": sections,
                                   "covered": covered, "missing": [e.id for e in missing],
                                   "total": len(elements)}
        return EvaluatorResult(
            name=self.name, score=score, passed=score >= PASS_SCORE, findings=sort_findings(findings),
            fail_reasons=[] if score >= PASS_SCORE else
            [f"completeness {score:.2f} is below {PASS_SCORE}: missing {', '.join(e.id for e in missing)}"],
            details=details)

    @staticmethod
    def _covered(el: Element, *, texts: Joined | None, revealed: list[str], parsed: Any) -> str | None:
        """How ``el`` was covered, or None.

        ``texts``: what the agent said where the element is looked for (its questions, the final message, or
        everything). ``revealed``: the revealed facts that cover the element by their category or triggers, in the
        information tree's order (``_scenario_elements``).
        """
        if el.where == "parsed":
            value = {"triage_level": parsed.triage_level is not None, "disposition": parsed.escalation is not None,
                     "diagnosis": len(parsed.diagnoses) >= 1, "differential": len(parsed.diagnoses) >= 2}[el.id]
            return "assessment" if value else None
        found = texts.first(el.keywords) if texts is not None else None
        if found:
            return f"said: {found[1]}"
        if el.where == "questions" and revealed:
            return f"revealed: {revealed[0]}"
        return None


@per_scenario
def _scenario_elements(scenario: Scenario) -> tuple[set[str], list[Element], dict[str, list[str]]]:
    """The scenario's contexts, its elements, and per element the facts that cover it when revealed.

    A fact covers a "questions" element by its category or when one of the element's keywords matches one of its
    triggers or its id: all of it the scenario's own, so worked out once per scenario, in the tree's order.
    """
    ctx = _contexts_for(scenario)
    elements = [*ELEMENTS, *(e for c, e in CONTEXT_ELEMENTS if c in ctx)]
    by_fact: dict[str, list[str]] = {}
    for el in elements:
        if el.where != "questions":
            by_fact[el.id] = []
            continue
        matched = facts_matching(scenario, el.keywords)
        by_fact[el.id] = [f.id for f in scenario.information_tree
                          if f.category.value in el.fact_categories or f.id in matched]
    return ctx, elements, by_fact
