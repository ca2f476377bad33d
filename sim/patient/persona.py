"""Persona behaviours: how a hard-to-interview patient changes what the simulated patient says and when.

The scenario's ``profile.persona`` (``scenarios.schema.Persona``; named presets in ``scenarios.personas``)
decides which behaviours are on. They sit on top of the scripted answers in ``sim.patient`` and never change
a fact: a fact is either held back this turn (and its id recorded in ``Turn.persona_held``) or given with its
scripted answer, reworded around it. Every choice is made by an RNG seeded with the scenario id and the
encounter seed, so a seed always gives the same conversation. The older persona values (``plain`` ...
``confused``, ``lay``, ``medical``, ``limited``, ``recall: fair``) shape the voice only; a scenario that sets
none of the values below gets exactly the text it always had.

- ``recall: poor``: a critical fact comes out only when asked *specifically* (a trigger, or an intent that is
  not one of the lexicon's ``broad`` open questions: ``Understanding.specific``); to an open question the
  patient says nothing of it (kind ``withheld`` when nothing else is said). Some facts about timing, onset and
  amounts (a seeded choice) get a vague answer the first time they are asked (kind ``vague``) and the full
  answer when asked again.
- ``speaking_style: minimiser``: the opening line and answers downplay ("it's probably nothing"); a red flag
  (``expected.red_flags`` or a fact of category ``red_flag``) comes out only on a specific question.
- ``speaking_style: catastrophiser``: alarming words around benign (non-critical, non-red-flag) answers.
- ``speaking_style: rambling_asides``: each answer carries one seeded irrelevant sentence (``ASIDES``, none of
  which the intent lexicon reads as clinical).
- ``vocabulary: lay_table``: clinical words replaced from ``scenarios/lay_words.yaml`` (``scenarios.lay``).
- ``relay``: a carer answers. When the scenario's speaker is the patient, the carer quotes them ("She says,
  '...'"), with the patient's sex for the pronoun. Some facts (a seeded choice, non-critical first) get "I'd
  have to ask her" (kind ``not_known``) until asked again or until the clinician asks the carer to check
  ("Could you ask her?"). Below ``RELAY_MIN_AGE`` the patient cannot be asked (an infant's parent already
  speaks for them), so ``relay`` does nothing there. When the scenario's speaker is already a parent, carer
  or partner, their words are kept and only the "I'd have to ask him" part applies.
- ``language: limited``: short answers (the first sentence of each) in lay words; a question sentence with a
  long clinical word (``hard_words``) gets "Sorry, I don't understand" (kind ``not_understood``) and reveals
  nothing until it is put plainly.

Model-layer fact ids (``--patient-model``) count as specific questions: the model does not say how it was asked.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from scenarios import is_red_flag_fact
from scenarios.lay import to_lay
from scenarios.personas import RELAY_MIN_AGE
from scenarios.schema import Fact, Persona, Scenario
from sim.patient.understanding import Layer, Understanding

__all__ = ["ASIDES", "RELAY_MIN_AGE", "HoldReason", "PersonaBehaviour", "PersonaTurn", "changes_text",
           "hard_words", "red_flag_ids", "relays"]

HoldReason = Literal["withheld", "vague", "not_known", "not_understood"]


# Intents whose facts are about when, how long or how much: the candidates for a vague first answer.
VAGUE_INTENTS = frozenset({"onset_timing", "onset_speed", "course", "frequency", "last_known_well", "severity",
                           "previous_episodes", "pregnancy_lmp", "gestation", "eating_drinking", "infant_feeding",
                           "wet_nappies", "weight_change", "alcohol_drugs", "smoking"})
_QUANTITY = re.compile(r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|hours?|days?|"
                       r"weeks?|months?|years?|yesterday|morning|night|since|ago|minutes?)\b", re.I)

VAGUE_LINES = ("Oh, I can't remember exactly... it's all a bit of a blur, sorry.",
               "Hmm, I'm trying to remember. I'm not sure, to be honest, it's hard to say exactly.",
               "I can't quite recall... my memory's not what it was. Could you ask me again in a minute?")
WITHHELD_LINES = {"recall": ("Nothing else comes to mind just now.", "I can't think of anything else, off hand."),
                  "minimiser": ("Oh, nothing worth bothering you with, really.",
                                "Nothing much. I don't want to make a fuss.")}
NOT_KNOWN_LINES = ("I'd have to ask {obj} about that.", "I'm not sure, I'd need to check with {obj}.",
                   "I don't know that one, sorry, I'd have to ask {obj}.")
NOT_UNDERSTOOD_LINES = ("Sorry, I don't understand.", "Sorry, I don't understand the words. Say it simple, please?",
                        "Sorry, I don't understand that question.")
MINIMISER_OPENINGS = ("It's probably nothing, and I'm sorry to bother you, but", "It's probably nothing, but")
MINIMISER_TAGS = ("It's probably nothing, though.", "I'm sure it's nothing much.", "It's not that bad, really.")
MINIMISER_RED_FLAG_TAGS = ("I didn't think it was worth mentioning.", "I didn't want to make a fuss about it.")
CATASTROPHISER_OPENING = ("I'm really frightened.", "I'm so scared, I think something terrible is happening.")
CATASTROPHISER_TAGS = ("I'm terrified it's something serious.", "What if it's something really bad?",
                       "I keep thinking the worst, I can't help it.")
# Irrelevant sentences for ``rambling_asides``: nothing here may read as a symptom, a body part or a treatment
# (tests/sim/test_persona.py checks them against the intent lexicon).
ASIDES = ("The neighbour's dog was barking at the postman again, that dog never stops.",
          "I nearly missed the bus this morning, the timetable changed again.",
          "My sister phoned earlier about the garden fence, she goes on about it.",
          "We're meant to be having the grandchildren round on Sunday.",
          "The window cleaner is due on Thursday, if he bothers to turn up.",
          "They've dug up the road outside again, the noise is something else.",
          "I was halfway through the crossword at the kitchen table, I never finished it.",
          "Our cat brought a bird in yesterday, what a business that was.")
RELAY_OPENING = "Hello, I'm ringing for {obj}, {sub}'s here with me. {Sub} says, \"{text}\""
RELAY_QUOTES = ("{Sub} says, \"{text}\"", "{Sub}'s telling me, \"{text}\"", "I asked {obj}, and {sub} says, \"{text}\"")

# Asking the carer to check with the patient ("Could you ask her?", "Can you check with him?").
_CHECK_WITH = re.compile(r"\b(?:ask|check with|find out from|confirm with|speak to|talk to)\s+(?:her|him|them|"
                         r"the patient|your (?:mum|mom|mother|dad|father|husband|wife|partner|son|daughter|"
                         r"friend|brother|sister|gran|grandma|grandad|grandfather|grandmother))\b", re.I)

# Long clinical words a speaker of limited English does not know (besides the rule in ``hard_words``).
HARD_WORD_LIST = frozenset("""
haemoptysis hemoptysis dyspnoea dyspnea paraesthesia paresthesia paraesthesiae radiating radiate radiates
radiation syncope syncopal presyncope orthopnoea orthopnea haematemesis hematemesis melaena melena
haematuria hematuria dysuria photophobia diaphoresis diaphoretic palpitations anticoagulant anticoagulants
anticoagulation exertional exertion pleuritic nocturnal intermittent neurological cardiovascular respiratory
gastrointestinal haemorrhage hemorrhage contraindications symptomatology abdominal epigastric suprapubic
unilateral bilateral incontinence consciousness hypertension hypotension tachycardia bradycardia
""".split())
_MEDICAL_AFFIX = re.compile(r"(?:itis|osis|algia|aemia|emia|uria|ptysis|pnoea|pnea|esthesia|aesthesia|ectomy|"
                            r"ology|otomy|scopy|graphy|phagia|cardia|tension|aemic|emic)$|^(?:hyper|hypo|anti|"
                            r"dys|brady|tachy|haem|hem|neuro|cardio|gastro)(?=\w{5})", re.I)
# Long words that are everyday English, not clinical jargon.
_PLAIN_LONG = frozenset("""
anything everything something everybody anybody somebody particularly unfortunately immediately
information appointment emergency ambulance medicine medicines medication medications yesterday actually
absolutely definitely difficulty originally especially situation usually already temperature comfortable
basically completely understand""".split())
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


def syllables(word: str) -> int:
    """A rough syllable count (vowel groups, a silent final 'e' left out); good enough to spot long words."""
    w = word.lower()
    n = len(_VOWEL_GROUPS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee", "ie")) and n > 1:
        n -= 1
    return max(1, n)


def hard_words(text: str) -> list[str]:
    """The words of ``text`` a patient with limited English does not understand.

    A word of ``HARD_WORD_LIST``, a word with a clinical affix (-itis, -algia, hyper-, dys- ...) of three or
    more syllables, or any word of five or more syllables that is not everyday English.
    """
    out: list[str] = []
    for word in re.findall(r"[A-Za-z]+", text):
        w = word.lower()
        if w in _PLAIN_LONG:
            continue
        n = syllables(w)
        if w in HARD_WORD_LIST or (n >= 3 and _MEDICAL_AFFIX.search(w)) or n >= 5:
            out.append(word)
    return out


def red_flag_ids(scenario: Scenario) -> set[str]:
    """The ids of the scenario's red-flag facts (``scenarios.is_red_flag_fact``).

    A fact of category ``red_flag``, or listed in ``expected.red_flags``.
    """
    return {f.id for f in scenario.information_tree if is_red_flag_fact(f, scenario)}


def relays(scenario: Scenario) -> bool:
    """Whether ``relay`` acts for this scenario: it is set and the patient is old enough to be asked."""
    profile = scenario.patient_profile
    return profile.persona.relay and profile.age >= RELAY_MIN_AGE


def changes_text(persona: Persona) -> bool:
    """Whether any value of ``persona`` changes what the patient says (the rest shape the voice only)."""
    return (persona.recall == "poor" or persona.speaking_style in ("minimiser", "catastrophiser", "rambling_asides")
            or persona.vocabulary == "lay_table" or persona.language == "limited" or persona.relay)


def _first_sentence(text: str) -> str:
    m = re.match(r"(.+?[.!?])(?:\s|$)", text.strip())
    return m.group(1) if m else text.strip()


@dataclass
class PersonaTurn:
    """What the persona decided for one message: the facts it lets through and those it holds back."""

    asked: dict[str, Layer]
    held: dict[str, HoldReason] = field(default_factory=dict)
    not_understood: list[str] = field(default_factory=list)  # the hard words of the question

    def note(self) -> str | None:
        """One line for ``Turn.persona_note``: what was held back and why, or None when nothing was."""
        parts = [f"{reason}: {fid}" for fid, reason in self.held.items()]
        if self.not_understood and not any(r == "not_understood" for r in self.held.values()):
            parts.append("not_understood")
        if self.not_understood:
            parts.append(f"hard words: {', '.join(dict.fromkeys(w.lower() for w in self.not_understood))}")
        return "; ".join(parts) or None


class PersonaBehaviour:
    """The persona behaviours for one encounter (stateful: what was asked once, what is still to check)."""

    def __init__(self, scenario: Scenario, understanding: Understanding, *, seed: int = 0) -> None:
        self.scenario = scenario
        self.persona = scenario.patient_profile.persona
        self.understanding = understanding
        self._rng = random.Random(f"persona:{scenario.id}:{seed}")
        p = self.persona
        self.poor_recall = p.recall == "poor"
        self.style = p.speaking_style
        self.lay = p.vocabulary == "lay_table" or p.language == "limited"
        self.limited = p.language == "limited"
        self.relay = relays(scenario)
        self.quotes = self.relay and scenario.patient_profile.speaker == "patient"
        sex = scenario.patient_profile.sex
        self.sub, self.obj = {"female": ("she", "her"), "male": ("he", "him")}.get(sex, ("they", "them"))
        tree = scenario.information_tree
        red = red_flag_ids(scenario)
        self.red_flags = red
        self.specific_only: set[str] = set()
        if self.poor_recall:
            self.specific_only |= {f.id for f in tree if f.critical}
        if self.style == "minimiser":
            self.specific_only |= red
        self.vague: set[str] = set()
        if self.poor_recall:
            cands = [f for f in tree if set(f.intents) & VAGUE_INTENTS or _QUANTITY.search(f.answer)]
            self.vague = {f.id for f in cands if self._rng.random() < 0.5}
            if cands and not self.vague:
                self.vague = {self._rng.choice(cands).id}
        self.not_known: set[str] = set()
        if self.relay:
            minor = [f for f in tree if not f.critical]
            self.not_known = {f.id for f in minor if self._rng.random() < 0.4}
            if not self.not_known:
                self.not_known = {self._rng.choice(minor or tree).id}
        self._asked_once: set[str] = set()  # vague or not-known facts already answered once
        self._to_check: dict[str, Layer] = {}  # not-known facts the carer has said they would have to ask about

    def may_volunteer(self, fact: Fact) -> bool:
        """Whether this patient would bring ``fact`` up unasked (``sim.patient``'s volunteering).

        Not a critical fact with poor recall, not a red flag for a minimiser, not what a carer would have to check.
        """
        return fact.id not in self.specific_only and fact.id not in self.not_known

    # ------------------------------------------------------------------------------------------ deciding

    def decide(self, message: str, asked: dict[str, Layer], revealed: Iterable[str]) -> PersonaTurn:  # noqa: C901
        """Which of the facts ``message`` asks for come out now, and which are held back (and why)."""
        done = set(revealed)
        allowed = dict(asked)
        turn = PersonaTurn(asked=allowed)
        if self.limited:
            plain: dict[str, Layer] = {}
            hard_ids: set[str] = set()
            for unit, found in self.understanding.match_by_unit(message):
                hard = hard_words(unit)
                if hard:
                    turn.not_understood.extend(hard)
                    hard_ids.update(found)
                else:
                    for fid, layer in found.items():
                        plain.setdefault(fid, layer)
            for fid in hard_ids - set(plain):
                if fid in allowed and allowed[fid] != "model":
                    del allowed[fid]
                    if fid not in done:
                        turn.held[fid] = "not_understood"
        if self.specific_only & set(allowed):
            specific = self.understanding.specific(message)
            for fid in list(allowed):
                if (fid in self.specific_only and fid not in done and allowed[fid] != "model"
                        and fid not in specific):
                    del allowed[fid]
                    turn.held[fid] = "withheld"
        if self.relay and self._to_check and _CHECK_WITH.search(message):
            for fid, layer in self._to_check.items():
                allowed.setdefault(fid, layer)
            self._to_check.clear()
        for fid in list(allowed):
            if fid in done or fid in self._asked_once:
                continue
            reason: HoldReason | None = ("not_known" if fid in self.not_known
                                         else "vague" if fid in self.vague else None)
            if reason is not None and self._requires_met(fid, done, allowed):
                self._asked_once.add(fid)
                if reason == "not_known":
                    self._to_check[fid] = allowed[fid]
                del allowed[fid]
                turn.held[fid] = reason
        for fid in allowed:
            self._to_check.pop(fid, None)
        return turn

    def _requires_met(self, fid: str, done: set[str], allowed: dict[str, Layer]) -> bool:
        req = next(f.requires for f in self.scenario.information_tree if f.id == fid)
        return req is None or req in done or req in allowed

    # ------------------------------------------------------------------------------------------ wording

    def opening(self, text: str) -> str:
        """The scenario's opening line as this persona says it."""
        if self.limited:
            text = _first_sentence(text)
        if self.style == "minimiser":
            lead = self._rng.choice(MINIMISER_OPENINGS)
            text = f"{lead} {_lower_first(text)}"
        elif self.style == "catastrophiser":
            text = f"{self._rng.choice(CATASTROPHISER_OPENING)} {text}"
        if self.quotes:
            text = RELAY_OPENING.format(obj=self.obj, sub=self.sub, Sub=self.sub.capitalize(), text=text)
        return self._finish(text)

    def answer(self, facts: list[Fact], turn: PersonaTurn, base: str | None) -> str:
        """The reply: the facts' answers reworded around them, the held-back lines, and the persona's asides.

        ``base`` is the simulator's own reply when no fact comes out and nothing is held (unsure, negative,
        fallback lines).
        """
        reasons = set(turn.held.values())
        pieces: list[str] = []
        if facts:
            answers = [_first_sentence(f.answer) if self.limited else f.answer for f in facts]
            said = " ".join(answers)
            if self.quotes:
                said = self._rng.choice(RELAY_QUOTES).format(obj=self.obj, sub=self.sub,
                                                             Sub=self.sub.capitalize(), text=said)
            pieces.append(said)
            if self.style == "minimiser":
                red = any(f.id in self.red_flags for f in facts)
                pieces.append(self._rng.choice(MINIMISER_RED_FLAG_TAGS if red else MINIMISER_TAGS))
            elif self.style == "catastrophiser" and any(not f.critical and f.id not in self.red_flags for f in facts):
                pieces.append(self._rng.choice(CATASTROPHISER_TAGS))
        if "not_understood" in reasons or (turn.not_understood and not facts):
            pieces.append(self._rng.choice(NOT_UNDERSTOOD_LINES))
        if "not_known" in reasons:
            pieces.append(self._rng.choice(NOT_KNOWN_LINES).format(obj=self.obj))
        if "vague" in reasons:
            pieces.append(self._rng.choice(VAGUE_LINES))
        if not pieces and "withheld" in reasons:
            pieces.append(self._rng.choice(WITHHELD_LINES["minimiser" if self.style == "minimiser" else "recall"]))
        if not pieces and base is not None:
            pieces.append(base)
        if self.style == "rambling_asides":
            pieces.append(self._rng.choice(ASIDES))
        return self._finish(" ".join(pieces))

    def _finish(self, text: str) -> str:
        return to_lay(text) if self.lay else text


def _lower_first(text: str) -> str:
    """``text`` to follow a lead-in: its first letter lower-cased unless it is "I" or a name-like capital."""
    first = text.split(" ", 1)[0]
    if first in ("I", "I'm", "I've", "I'd", "I'll") or (len(first) > 1 and first[1:2].isupper()):
        return text
    return text[:1].lower() + text[1:]
