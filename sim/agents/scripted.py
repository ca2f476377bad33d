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

Both interview like a careful clinician with a patient who is hard to interview (``sim.patient.persona``): they read
the patient's last reply in the transcript and, when it was vague ("I can't remember exactly"), when a carer
said they would have to ask the patient, when the question was not understood ("Sorry, I don't understand")
or when an open question got "nothing else comes to mind", they ask the previous turn's facts again along
with the next batch: plainly (short words) once a question was not understood, specifically (never with an
open question of the lexicon, ``broad``) once something was held back, and with "Could you ask her?" to a
carer. Such replies are recognised by what they mean, in several phrasings (``reply_problems``), not by the
patient simulator's own lines. A fact is asked again at most ``MAX_ASKS`` times, and the assessment comes
by the turn before the limit.

Both are stateless like any agent: what to say is a function of the scenario, the turn number and the
patient's replies in the transcript.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field

from scenarios import is_red_flag_fact
from scenarios.lexicon import load_lexicon
from scenarios.schema import Disposition, Fact, ImagingTask, Scenario
from sim.agents.base import Agent, AgentReply, AgentRequest, ChatMessage
from sim.patient.persona import red_flag_ids
from sim.patient.understanding import Layers, Understanding
from sim.records import AgentError

FACTS_PER_TURN = 3
MAX_ASKS = 3  # how many times a control asks for one fact at most

# What a patient's reply means, by its meaning, in several phrasings (not the simulator's own lines).
_PROBLEMS: dict[str, re.Pattern[str]] = {
    "vague": re.compile(r"\b(?:can(?:no|')?t|cannot|don't|do not|couldn't|could not)\s+(?:quite\s+|really\s+)?"
                        r"(?:remember|recall)\b|\bblur\b|lost track|\bmemory\b|\bforg[eo]t|\bmuddled\b|"
                        r"not sure exactly|hard to (?:say|remember)|ask me again", re.I),
    "not_known": re.compile(r"\b(?:have|need|got)\s+to\s+(?:ask|check with)\s+(?:her|him|them)\b|"
                            r"\b(?:ask|check with)\s+(?:her|him|them)\s+(?:about|first)\b|"
                            r"\bI'?ll\s+(?:ask|check with)\s+(?:her|him|them)\b|don't know (?:that|about that)", re.I),
    "not_understood": re.compile(r"\b(?:don't|do not|didn't|did not|not)\s+understand\b|what does (?:that|it) mean|"
                                 r"\b(?:say|put|ask)\s+it\s+(?:more\s+)?(?:simple|simply|simpler|another way|"
                                 r"differently)|\b(?:big|hard|long|difficult)\s+words?\b", re.I),
    # an answer that gives nothing ("Nothing much.", "I can't think of anything else."), not a downplaying
    # remark after an answer ("It's probably nothing much, though.")
    "withheld": re.compile(r"^\W*(?:(?:oh|well|um+|er+|hmm+)\W+)?(?:nothing\b(?! like that)|not really\b|"
                           r"I can(?:no|')?t think of anything)|nothing else (?:comes|springs) to mind", re.I),
}


_WORDS = re.compile(r"[a-z']+")


def reply_problems(text: str, scenario: Scenario | None = None) -> set[str]:
    """What in a patient's reply calls for asking again: vague, not_known, not_understood, withheld.

    With ``scenario``, a sentence that is (mostly) the words of one of its facts' answers is left out: a
    patient's own story may say "I don't remember that bit" and is still an answer.
    """
    answers = [set(_WORDS.findall(f.answer.lower())) for f in scenario.information_tree] if scenario else []
    kinds: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])[\"']?\s+", text):
        words = _WORDS.findall(sentence.lower())
        if words and any(sum(w in a for w in words) >= 0.8 * len(words) for a in answers):
            continue
        kinds |= {kind for kind, pattern in _PROBLEMS.items() if pattern.search(sentence)}
    return kinds


@dataclass
class InterviewStep:
    """One question turn of a control: the facts to ask, how, or the assessment (``facts`` empty)."""

    facts: list[Fact] = field(default_factory=list)
    plain: bool = False  # a question was not understood: short words from now on
    specific: bool = False  # something was held back from an open question: specific questions from now on
    check: bool = False  # a carer said they would have to ask: "Could you ask her?"


def plan_step(scenario: Scenario, messages: list[ChatMessage], agent_turn: int) -> InterviewStep:
    """The control's step at ``agent_turn``, replayed from the patient's replies in the transcript.

    Each turn asks the next batch (``question_batches``); when the patient's previous reply calls for it
    (``reply_problems``) the previous turn's facts are asked again first. No facts left, or only the turn
    before the limit left: the assessment.
    """
    batches = question_batches(scenario)
    replies = [m.text for m in messages if m.role == "user"]
    next_batch = 0
    previous: list[Fact] = []
    asks: dict[str, int] = {}
    plain = specific = False
    step = InterviewStep()
    for turn in range(1, agent_turn + 1):
        problems = reply_problems(replies[turn - 1], scenario) if 1 < turn <= len(replies) else set()
        plain = plain or "not_understood" in problems
        specific = specific or "withheld" in problems
        again = [f for f in previous if asks.get(f.id, 0) < MAX_ASKS] if problems else []
        new = batches[next_batch] if next_batch < len(batches) else []
        if turn >= scenario.max_turns - 1:
            again, new = [], []
        if new:
            next_batch += 1
        facts = list({f.id: f for f in [*again, *new]}.values())
        for f in facts:
            asks[f.id] = asks.get(f.id, 0) + 1
        previous = facts
        step = InterviewStep(facts=facts, plain=plain, specific=specific, check="not_known" in problems)
    return step


def _simplest(texts: list[str]) -> str:
    """The text whose longest word is shortest (then the shortest text): the plainest way to ask."""
    def key(t: str) -> tuple[int, int]:
        return (max((len(w) for w in re.findall(r"[A-Za-z]+", t)), default=0), len(t))
    return min(texts, key=key)


def _must_be_specific(scenario: Scenario, fact: Fact) -> bool:
    """A critical fact or a red flag: what a patient with poor recall or a minimiser keeps from an open question."""
    return fact.critical or is_red_flag_fact(fact, scenario)


def _topic(scenario: Scenario, fact: Fact, *, plain: bool = False) -> str:
    """The trigger the reference asks about: the first (the plainest with ``plain``).

    For a critical fact or a red flag, among the triggers that ask for it specifically (``Understanding.specific``:
    not the words of an open question such as "medications").
    """
    topics = fact.triggers
    if _must_be_specific(scenario, fact):
        whole = _understanding(scenario)
        topics = [t for t in topics if fact.id in whole.specific(f"Can you tell me about {t}?")] or topics
    return _simplest(topics) if plain else topics[0]


def _pronoun(scenario: Scenario) -> str:
    return {"female": "her", "male": "him"}.get(scenario.patient_profile.sex, "them")


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
        raise AgentError(f"{name} plays a scripted part and must know the scenario: pass --scenario ID, or call "
                         "with --agent-scenario-hint "
                         "(e.g. `encsim serve-agent --model scripted:reference --scenario acs_chest_pain`).")
    return request.scenario


def imaging_answer(task: ImagingTask, *, findings: list[str], escalation: str | None, choice: str | None) -> str:
    """A reply in the imaging item format (see sim.encounter.imaging_item)."""
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
        step = plan_step(scenario, request.messages, request.agent_turn)
        if step.facts:
            text = "Thank you. " + " ".join(f"Can you tell me about {_topic(scenario, f, plain=step.plain)}?"
                                            for f in step.facts)
            if step.check:
                text = f"Could you ask {_pronoun(scenario)}, please? {text}"
            return AgentReply(text=text)
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


def reassurance(scenario: Scenario, advice: str) -> str:
    """The under-triaging assessment: two levels too low (at most 5), self care, a benign diagnosis."""
    level = min(5, (scenario.expected.triage_level or 3) + 2)
    return assessment(level, "self_care", ["Minor self-limiting illness"], advice)


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
        return AgentReply(text=reassurance(scenario, "This sounds minor; rest at home."))

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
_WHOLE: dict[int, tuple[Scenario, Understanding]] = {}


def _understanding(scenario: Scenario) -> Understanding:
    """All deterministic layers for a scenario, built once (keyed by identity, like ``_understandings``)."""
    if id(scenario) not in _WHOLE:
        _WHOLE[id(scenario)] = (scenario, Understanding(scenario))
    return _WHOLE[id(scenario)][1]


def _understandings(scenario: Scenario) -> tuple[Understanding, Understanding]:
    """(intent layer only, trigger layer only) for a scenario, built once: the control asks every turn.

    Scenarios are not hashable, so the cache is keyed by identity and keeps the scenario alive.
    """
    if id(scenario) not in _BUILT:
        _BUILT[id(scenario)] = (scenario, Understanding(scenario, layers=Layers(triggers=False)),
                                Understanding(scenario, layers=Layers(intents=False)))
    _, by_intent, by_trigger = _BUILT[id(scenario)]
    return by_intent, by_trigger


def natural_question(scenario: Scenario, fact: Fact, seed: int, *, plain: bool = False,
                     specific: bool = False) -> tuple[str, bool]:
    """A lexicon phrasing that reveals ``fact`` without the scenario's trigger words (True), or the trigger question.

    Where no phrasing in the bank does, the reference's trigger question (False). Deterministic for a seed.
    A critical fact or a red flag is asked with a phrasing that asks for it specifically where the bank has one
    (``Understanding.specific``). ``specific``: only phrasings of intents that are not open questions (the
    lexicon's ``broad``). ``plain``:
    the phrasing with the shortest longest word (and, without a fitting phrasing, the plainest trigger).
    """
    lexicon = load_lexicon()
    by_intent, by_trigger = _understandings(scenario)
    intents = [i for i in fact.intents if not (specific and lexicon.intents[i].broad)]
    bank = [p for iid in intents for p in lexicon.intents[iid].phrasings]
    fits = [p for p in bank if fact.id in by_intent.match(p) and fact.id not in by_trigger.match(p)]
    if fits and _must_be_specific(scenario, fact):  # never an open question for a critical fact or a red flag
        whole = _understanding(scenario)
        fits = [p for p in fits if fact.id in whole.specific(p)]
    if not fits:
        return f"Can you tell me about {_topic(scenario, fact, plain=plain)}?", False
    preferred = [p for p in fits if _you_form(p, scenario.patient_profile.speaker)] or fits
    if plain:
        return _simplest(preferred), True
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
        step = plan_step(scenario, request.messages, request.agent_turn)
        rng = random.Random(f"{request.seed}:{scenario.id}:{request.agent_turn}")
        if step.facts:
            questions = [natural_question(scenario, f, request.seed, plain=step.plain, specific=step.specific)[0]
                         for f in step.facts]
            lead = rng.choice(_LEAD_INS)
            if step.check:
                lead = f"Could you ask {_pronoun(scenario)} for me, please? {lead}".strip()
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


BROAD_QUESTIONS = ("Can you tell me more about what's going on?", "Anything else you've noticed?",
                   "Any other symptoms?", "Is there anything else bothering you?")
HEARD_SHARE = 0.6  # of a red flag's answer's content words (its first sentence) in one patient message: heard


def heard_red_flags(scenario: Scenario, patient_lines: list[str]) -> set[str]:
    """The scenario's red-flag facts whose answer the patient has said, as far as the words show.

    A persona rewords answers (a tag, lay words, only the first sentence), so a red flag counts as heard when
    ``HEARD_SHARE`` of the content words of its answer's first sentence are in one patient message.
    """
    lines = [set(_content_words(x)) for x in patient_lines]
    flags = red_flag_ids(scenario)
    heard = set()
    for fact in scenario.information_tree:
        if fact.id not in flags:
            continue
        words = set(_content_words(re.split(r"(?<=[.!?])\s", fact.answer.strip(), maxsplit=1)[0]))
        if words and any(len(words & line) >= HEARD_SHARE * len(words) for line in lines):
            heard.add(fact.id)
    return heard


def _content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9']+", text.lower()) if len(w) > 3]


class ShallowAgent:
    """``scripted:shallow``: broad questions only, never a specific follow-up; it escalates only what it heard.

    It asks ``BROAD_QUESTIONS``, one per turn, whatever the patient said: it never reads the answer key for its
    questions, so it learns only what the patient volunteers (``sim.patient``: to an open question about their
    symptoms a patient brings up the next one, critical first, up to three in an encounter). Then, like a
    clinician who takes a history at face value: if the scenario has red flags (``expected.red_flags`` and facts
    of category ``red_flag``) and none of them was heard (``heard_red_flags``), it reassures, as
    ``scripted:undertriage`` does (two levels too low, self care, a benign diagnosis); otherwise it gives the
    reference's assessment. So it loses the information it never asked for under every persona, and the
    escalation as well under a persona that keeps red flags back from open questions (poor recall keeps every
    critical fact back, a minimiser every red flag), which is what a persona sweep (``--personas``) should
    expose. A replay or imaging item (nothing to ask) gets the reference's reply.
    """

    name = "scripted:shallow"
    vision = True

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The next broad question, then (or at once, on a replay or imaging item) its assessment."""
        scenario = _scenario_of(request, self.name)
        if scenario.imaging is None and scenario.replay is None:
            if request.agent_turn <= len(BROAD_QUESTIONS):
                return AgentReply(text=BROAD_QUESTIONS[request.agent_turn - 1])
            patient = [m.text for m in request.messages if m.role == "user"]
            if red_flag_ids(scenario) and not heard_red_flags(scenario, patient):
                return AgentReply(text=reassurance(scenario, "From what you've told me this sounds minor; rest at "
                                                             "home."))
        # the reference's assessment: what it says on the turn before the limit (it asks nothing more then, and
        # never after its last question batch), with no transcript to look back at
        last = max(len(question_batches(scenario)) + 1, scenario.max_turns - 1)
        return await ReferenceAgent().respond(request.model_copy(update={"agent_turn": last, "messages": []}))

    async def aclose(self) -> None:
        """Nothing to release."""
        return None


SCRIPTED: dict[str, type[Agent]] = {"reference": ReferenceAgent, "undertriage": UndertriageAgent,
                                    "natural": NaturalAgent, "shallow": ShallowAgent}
