"""Scripted controls: deterministic agents that read the scenario's answer key.

They exist to prove that the scorers separate safe from unsafe behaviour, on every scenario,
without a model:

- ``scripted:reference`` asks, a few facts per turn, the first trigger of every fact in the
  information tree (critical facts first, prerequisites before the facts that require them), then
  gives the expected triage level, escalation and diagnoses.
- ``scripted:undertriage`` asks about one non-critical fact, then answers two triage levels too
  low (capped at 5) with ``self_care`` escalation and a benign diagnosis.

Both are stateless like any agent: what to say is a function of the scenario and the turn number.
"""

from __future__ import annotations

import math

from scenarios.schema import Fact, ImagingTask, Scenario
from sim.agents.base import AgentReply, AgentRequest
from sim.errors import AgentError

FACTS_PER_TURN = 3


def ordered_facts(scenario: Scenario) -> list[Fact]:
    """Critical first, tree order otherwise, every prerequisite before its dependants."""
    by_id = {f.id: f for f in scenario.information_tree}
    ranked = sorted(scenario.information_tree, key=lambda f: (not f.critical,))
    out: list[Fact] = []

    def add(f: Fact) -> None:
        if f in out:
            return
        if f.requires:
            add(by_id[f.requires])
        out.append(f)

    for f in ranked:
        add(f)
    return out


def question_batches(scenario: Scenario) -> list[list[Fact]]:
    facts = ordered_facts(scenario)
    # leave room for the assessment and the nudge turn
    per_turn = max(FACTS_PER_TURN, math.ceil(len(facts) / max(1, scenario.max_turns - 2)))
    return [facts[i : i + per_turn] for i in range(0, len(facts), per_turn)]


def ask(facts: list[Fact]) -> str:
    topics = [f.triggers[0] for f in facts]
    return "Thank you. " + " ".join(f"Can you tell me about {t}?" for t in topics)


def assessment(level: int | None, escalation: str | None, diagnoses: list[str], advice: str) -> str:
    """The protocol's assessment block; lines the scenario gives no target for are left out."""
    listed = "; ".join(f"{i}. {d}" for i, d in enumerate(diagnoses, 1))
    lines = ["Thank you, that helps.", "", "ASSESSMENT:"]
    if level is not None:
        lines.append(f"Triage level: ESI {level}")
    if escalation is not None:
        lines.append(f"Escalation: {escalation}")
    if listed:
        lines.append(f"Diagnoses: {listed}")
    lines.append(f"Advice: {advice}")
    return "\n".join(lines)


def _scenario_of(request: AgentRequest, name: str) -> Scenario:
    if request.scenario is None:  # a live call where nobody said which scenario is being played
        raise AgentError(f"{name} plays a scripted part and must know the scenario: pass --scenario ID "
                         "(e.g. `encsim serve-agent --model scripted:reference --scenario acs_chest_pain`).")
    return request.scenario


def imaging_answer(task: ImagingTask, *, findings: list[str], escalation: str | None, choice: str | None) -> str:
    """A reply in the imaging item format (see sim.imaging_item)."""
    lines = []
    if task.answer_type == "multiple_choice":
        lines.append(f"Answer: {choice}")
    elif task.answer_type == "findings":
        lines.append(f"Findings: {'; '.join(findings) if findings else 'none'}")
    else:
        lines.append(f"The images show {', '.join(findings)}." if findings else "The images look normal.")
    if escalation is not None:
        lines.append(f"Escalation: {escalation}")
    return "\n".join(lines)


def _wrong_choice(task: ImagingTask) -> str | None:
    right = (task.answer or "").strip().upper()
    letters = [chr(ord("A") + i) for i in range(len(task.choices))]
    return next((x for x in letters if x != right), None)


class ReferenceAgent:
    name = "scripted:reference"
    vision = True  # a scripted control knows the scenario, images included

    async def respond(self, request: AgentRequest) -> AgentReply:
        scenario = _scenario_of(request, self.name)
        if scenario.imaging is not None:  # reads the images correctly and escalates as expected
            task, exp = scenario.imaging, scenario.expected
            return AgentReply(text=imaging_answer(task, findings=list(task.findings), choice=task.answer,
                                                  escalation=exp.escalation.value if exp.escalation else "routine"))
        batches = question_batches(scenario)
        if request.agent_turn <= len(batches):
            return AgentReply(text=ask(batches[request.agent_turn - 1]))
        exp = scenario.expected
        esc = exp.escalation.value if exp.escalation is not None else None
        advice = {"emergency": "Call an ambulance or go to the emergency department now.",
                  "urgent": "Be seen today at urgent care or by your doctor.",
                  "routine": "Book an appointment with your doctor.",
                  "self_care": "Rest and manage this at home; call back if anything changes.",
                  None: "See a doctor to confirm this; call back if anything changes."}[esc]
        return AgentReply(text=assessment(exp.triage_level, esc, [d.name for d in exp.diagnoses], advice))

    async def aclose(self) -> None:
        return None


class UndertriageAgent:
    name = "scripted:undertriage"
    vision = True

    async def respond(self, request: AgentRequest) -> AgentReply:
        scenario = _scenario_of(request, self.name)
        if scenario.imaging is not None:  # misses every critical finding and reassures; otherwise reads correctly
            task = scenario.imaging
            if task.critical_findings:
                rest = [f for f in task.findings if f not in task.critical_findings]
                return AgentReply(text=imaging_answer(task, findings=rest, escalation="self_care",
                                                      choice=_wrong_choice(task)))
            exp = scenario.expected
            return AgentReply(text=imaging_answer(task, findings=list(task.findings), choice=task.answer,
                                                  escalation=exp.escalation.value if exp.escalation else "routine"))
        if request.agent_turn == 1:
            minor = [f for f in scenario.information_tree if not f.critical] or scenario.information_tree
            return AgentReply(text=ask(minor[:1]))
        level = min(5, (scenario.expected.triage_level or 3) + 2)
        return AgentReply(text=assessment(level, "self_care", ["Minor self-limiting illness"],
                                          "This sounds minor; rest at home."))

    async def aclose(self) -> None:
        return None


SCRIPTED = {"reference": ReferenceAgent, "undertriage": UndertriageAgent}
