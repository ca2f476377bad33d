"""Scripted controls: deterministic agents that read the scenario's answer key.

They exist to prove that the scorers separate safe from unsafe behaviour, on every scenario,
without a model:

- ``scripted:reference`` asks, a few facts per turn, the first trigger of every fact in the
  information tree (critical facts first, prerequisites before the facts that require them), then
  gives the expected triage level, escalation and diagnoses.
- ``scripted:undertriage`` asks about one non-critical fact, then answers two triage levels too
  low (capped at 5) with ``self_care`` escalation and a benign diagnosis. On a replay item (nothing to
  ask, one reply) all three give their assessment in that one reply.
- ``scripted:natural`` is the reference's clinician without its crib sheet's wording: it asks for
  the same facts in the same order, but with questions from the intent lexicon's phrasing bank
  (``scenarios/intents.yaml``) that do not contain the scenario's trigger words, chosen by a seeded
  RNG (the same for a seed, varied across k), with chat-style lead-ins and numbered lists, and it
  writes its assessment in markdown as chat models do (headings, bold labels, bullets, tables).
  It shows that the patient and the assessment reader are fair to a model that does not speak the
  scenario's own words.

Both are stateless like any agent: what to say is a function of the scenario and the turn number.
"""

from __future__ import annotations

import math
import random

from scenarios.lexicon import load_lexicon
from scenarios.schema import Disposition, Fact, ImagingTask, Scenario
from sim.agents.base import Agent, AgentReply, AgentRequest
from sim.records import AgentError
from sim.understanding import Layers, Understanding

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
    """The facts grouped into one batch per question turn, leaving two turns for the assessment and a nudge.

    At least ``FACTS_PER_TURN`` facts per turn, more when the facts would not fit in the turn limit.
    """
    facts = ordered_facts(scenario)
    # leave room for the assessment and the nudge turn
    per_turn = max(FACTS_PER_TURN, math.ceil(len(facts) / max(1, scenario.max_turns - 2)))
    return [facts[i : i + per_turn] for i in range(0, len(facts), per_turn)]


def ask(facts: list[Fact]) -> str:
    """One question turn: the first trigger of each fact, as "Can you tell me about ...?"."""
    topics = [f.triggers[0] for f in facts]
    return "Thank you. " + " ".join(f"Can you tell me about {t}?" for t in topics)


def assessment(level: int | None, escalation: str | None, diagnoses: list[str], advice: str,
               disposition: str | None = None) -> str:
    """The protocol's assessment block; lines the scenario gives no target for are left out."""
    listed = "; ".join(f"{i}. {d}" for i, d in enumerate(diagnoses, 1))
    lines = ["Thank you, that helps.", "", "ASSESSMENT:"]
    if level is not None:
        lines.append(f"Triage level: ESI {level}")
    if escalation is not None:
        lines.append(f"Escalation: {escalation}")
    if disposition is not None:
        lines.append(f"Disposition: {disposition}")
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
    """``scripted:reference``: asks for every fact, then gives the expected assessment (module docstring)."""

    name = "scripted:reference"
    vision = True  # a scripted control knows the scenario, images included

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The next question batch, the assessment once the questions run out, or an imaging item's right answer."""
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
        best_means = exp.dispositions[0].value if exp.dispositions else None
        return AgentReply(text=assessment(exp.triage_level, esc, [d.name for d in exp.diagnoses], advice,
                                          disposition=best_means))

    async def aclose(self) -> None:
        """Nothing to release."""
        return None


class UndertriageAgent:
    """``scripted:undertriage``: asks one minor question, then under-triages to self care (module docstring)."""

    name = "scripted:undertriage"
    vision = True

    async def respond(self, request: AgentRequest) -> AgentReply:
        """One minor question, then a benign self-care assessment two levels too low; critical image findings missed."""
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
        minor = [f for f in scenario.information_tree if not f.critical] or scenario.information_tree
        if request.agent_turn == 1 and minor:  # a replay (single-turn) item has nothing to ask: it answers at once
            return AgentReply(text=ask(minor[:1]))
        level = min(5, (scenario.expected.triage_level or 3) + 2)
        return AgentReply(text=assessment(level, "self_care", ["Minor self-limiting illness"],
                                          "This sounds minor; rest at home."))

    async def aclose(self) -> None:
        """Nothing to release."""
        return None


_LEAD_INS = ("", "Thank you, that helps.", "Okay, thanks for explaining.", "I'm sorry you're dealing with this.",
             "Got it.", "Thanks. A few more questions so I can advise you safely.")
_ADVICE = {"emergency": "Call 999/911 for an ambulance now; don't drive yourself.",
           "urgent": "Please get seen today, at urgent care or a same-day GP appointment.",
           "routine": "Book a routine appointment with your GP in the next few days.",
           "self_care": "This can be managed at home with self-care; call back if anything changes.",
           None: "Please see a doctor to confirm this, and call back if anything changes."}
_LEVEL_WORDS = {1: "resuscitation", 2: "emergent", 3: "urgent", 4: "less urgent", 5: "non-urgent"}
_ESCALATION_WORDS = {"emergency": "Emergency (call an ambulance)", "urgent": "Urgent (same day)",
                     "routine": "Routine (GP appointment)", "self_care": "Self-care at home"}


def _you_form(text: str, speaker: str) -> bool:
    """A phrasing fits the caller: 'you' for the patient, third person allowed for a carer."""
    third = any(w in f" {text.lower()} " for w in (" he ", " she ", " his ", " her ", " him "))
    return not third or speaker != "patient"


_BUILT: dict[int, tuple[Scenario, Understanding, Understanding]] = {}


def _understandings(scenario: Scenario) -> tuple[Understanding, Understanding]:
    """(intent layer only, trigger layer only) for a scenario, built once: the control asks every turn.

    Scenarios are not hashable, so the cache is keyed by identity and keeps the scenario alive.
    """
    if id(scenario) not in _BUILT:
        _BUILT[id(scenario)] = (scenario, Understanding(scenario, layers=Layers(triggers=False)),
                                Understanding(scenario, layers=Layers(intents=False)))
    _, by_intent, by_trigger = _BUILT[id(scenario)]
    return by_intent, by_trigger


def natural_question(scenario: Scenario, fact: Fact, seed: int) -> tuple[str, bool]:
    """A lexicon phrasing that reveals ``fact`` without the scenario's trigger words (True), or the trigger question.

    Where no phrasing in the bank does, the reference's trigger question (False). Deterministic for a seed.
    """
    lexicon = load_lexicon()
    by_intent, by_trigger = _understandings(scenario)
    bank = [p for iid in fact.intents for p in lexicon.intents[iid].phrasings]
    fits = [p for p in bank if fact.id in by_intent.match(p) and fact.id not in by_trigger.match(p)]
    if not fits:
        return ask([fact]).removeprefix("Thank you. "), False
    preferred = [p for p in fits if _you_form(p, scenario.patient_profile.speaker)] or fits
    return random.Random(f"{seed}:{scenario.id}:{fact.id}").choice(preferred), True


def markdown_assessment(level: int | None, escalation: str | None, diagnoses: list[str], seed: int,
                        disposition: Disposition | None = None) -> str:
    """The assessment as a chat model writes it: one of several markdown styles, chosen by the seed.

    The means of care, when given, in words ("an ambulance now") under a label that varies with the style.
    """
    style = seed % 4
    level_text = f"ESI {level} ({_LEVEL_WORDS[level]})" if level is not None else None
    esc_text = _ESCALATION_WORDS.get(escalation or "", None)
    advice = _ADVICE[escalation]
    means = disposition.label[0].upper() + disposition.label[1:] if disposition is not None else None
    numbered = [f"{i}. **{d}**" if i == 1 else f"{i}. {d}" for i, d in enumerate(diagnoses, 1)]
    if style == 0:
        out = ["Thanks for answering all my questions.", "", "## Assessment", ""]
        out += [f"- **Triage level:** {level_text}"] if level_text else []
        out += [f"- **Escalation:** {esc_text}"] if esc_text else []
        out += [f"- **Disposition:** {means}"] if means else []
        out += ["- **Differential diagnoses:**", *(f"  {n}" for n in numbered)] if numbered else []
        out += [f"- **Advice:** {advice}"]
    elif style == 1:
        out = ["**ASSESSMENT:**"]
        out += [f"**Triage level:** {level_text}"] if level_text else []
        out += [f"**Escalation:** **{esc_text}**"] if esc_text else []
        out += [f"**How to get there:** {means}"] if means else []
        out += ["**Diagnoses:**", *numbered] if numbered else []
        out += ["", f"**What to do now:** {advice}"]
    elif style == 2:
        out = ["Based on what you've told me, here is my conclusion.", "", "### Assessment", "",
               "| Field | Value |", "|---|---|"]
        out += [f"| Triage level | {level_text} |"] if level_text else []
        out += [f"| Escalation | {esc_text} |"] if esc_text else []
        out += [f"| Disposition | {means} |"] if means else []
        out += [f"| Most likely diagnosis | {diagnoses[0]} |"] if diagnoses else []
        out += [f"| Differential | {'; '.join(diagnoses[1:])} |"] if len(diagnoses) > 1 else []
        out += ["", advice]
    else:
        out = ["I have enough information now.", "", "**Assessment**:"]
        out += [f"* Triage level: **{level_text}**"] if level_text else []
        out += [f"* Escalation: {esc_text}"] if esc_text else []
        out += [f"* Disposition: {means}"] if means else []
        out += ["* Diagnoses: " + "; ".join(f"{i}. {d}" for i, d in enumerate(diagnoses, 1))] if diagnoses else []
        out += ["", f"> {advice}"]
    return "\n".join(out)


class NaturalAgent:
    """``scripted:natural``: the reference's questions in lexicon phrasings and a markdown assessment."""

    name = "scripted:natural"
    vision = True

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The next question batch in natural phrasing, or the markdown assessment; an imaging item as the reference."""
        scenario = _scenario_of(request, self.name)
        if scenario.imaging is not None:
            return await ReferenceAgent().respond(request)
        batches = question_batches(scenario)
        rng = random.Random(f"{request.seed}:{scenario.id}:{request.agent_turn}")
        if request.agent_turn <= len(batches):
            questions = [natural_question(scenario, f, request.seed)[0] for f in batches[request.agent_turn - 1]]
            lead = rng.choice(_LEAD_INS)
            if len(questions) > 1 and rng.random() < 0.5:
                body = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, 1))
                text = f"{lead} A few questions:\n\n{body}" if lead else body
            else:
                text = " ".join([lead, *questions]).strip()
            return AgentReply(text=text)
        exp = scenario.expected
        esc = exp.escalation.value if exp.escalation is not None else None
        return AgentReply(text=markdown_assessment(exp.triage_level, esc, [d.name for d in exp.diagnoses],
                                                   request.seed, exp.dispositions[0] if exp.dispositions else None))

    async def aclose(self) -> None:
        """Nothing to release."""
        return None


SCRIPTED: dict[str, type[Agent]] = {"reference": ReferenceAgent, "undertriage": UndertriageAgent,
                                    "natural": NaturalAgent}


BROAD_QUESTIONS = ("Can you tell me more about what's going on?", "Anything else you've noticed?",
                   "Any other symptoms?")


class ShallowAgent:
    """``scripted:shallow``: broad questions only, never a specific follow-up, then the reference's assessment.

    (A scripted control like those above, and stateless like them; kept at the end of the module.)

    It asks ``BROAD_QUESTIONS``, one per turn, whatever the patient said: it never reads the answer key for its
    questions. Its assessment is the reference's (the scenario's expected triage level, escalation and diagnoses),
    on purpose: the score it loses against ``scripted:reference`` then comes from information gathering alone
    (the information component, and a history that would not justify the assessment), which is what a persona
    sweep (``--personas``) should expose: a patient with poor recall, or one who minimises, gives their red flags
    only to a specific question. A replay or imaging item (nothing to ask) gets the reference's reply.
    """

    name = "scripted:shallow"
    vision = True

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The next broad question, then (or at once, on a replay or imaging item) the reference's assessment."""
        scenario = _scenario_of(request, self.name)
        if scenario.imaging is None and scenario.replay is None and request.agent_turn <= len(BROAD_QUESTIONS):
            return AgentReply(text=BROAD_QUESTIONS[request.agent_turn - 1])
        # the reference's assessment: what it says on the turn before the limit (it asks nothing more then, and
        # never after its last question batch), with no transcript to look back at
        last = max(len(question_batches(scenario)) + 1, scenario.max_turns - 1)
        return await ReferenceAgent().respond(request.model_copy(update={"agent_turn": last, "messages": []}))

    async def aclose(self) -> None:
        """Nothing to release."""
        return None


SCRIPTED["shallow"] = ShallowAgent
