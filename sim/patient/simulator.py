"""The simulated patient: answers the agent from the scenario's information tree.

What the patient understands is decided by ``sim.patient.understanding`` (normalisation, the question
filter, the scenario's triggers, the shared intent lexicon) and, optionally, by a model
(``sim.patient.model``) whose fact ids are passed in as ``model_ids``. Then:

1. Several facts can be asked for by one message; their answers are joined in the order of the
   information tree. The answers are always the scenario's scripted text.
2. A fact whose ``requires`` fact has not been revealed (before or in the same message) stays
   hidden. A fact asked about again gets the same answer again.
3. Every newly revealed fact records the layer that revealed it (``trigger``, ``intent`` or
   ``model``; the first that fired, in that order).
4. A message that reveals nothing is answered by what it asks, and never with a denial of something
   the patient has (``kind`` of the reply):

   - ``unsure``: it asks for a fact that is still locked behind its ``requires`` fact, or for an intent
     that one of the scenario's facts is about in a wider sense (``Understanding.near``: a fact lists
     the intent, or one of the same ``related`` group of the lexicon, or its triggers match one). The
     patient neither reveals nor denies: a line of ``UNSURE_LINES``.
   - ``negative``: the lexicon recognises what is asked and no fact is about it: the scenario's world
     is closed, so the patient does not have it: a line of ``NEGATIVE_LINES`` ("No, nothing like that.").
     A question only about how, when or where something is (``ATTRIBUTE_INTENTS``: onset, severity,
     location ...) gets an ``unsure`` line instead, since "no" does not answer it.
   - ``fallback``: nothing is recognised, or only intents "no" cannot answer (``UNANSWERABLE_BY_NO``: the
     story of the complaint, an examination, a test, with no fact about them): one of the scenario's
     ``fallback_lines``, which are non-committal ("Sorry, what do you mean?"; ``encsim scenarios validate``
     refuses lines that deny or suggest a symptom).

   An open question about the patient's symptoms ("Anything else you've noticed?": the intents
   ``VOLUNTEER_INTENTS``) that asks for no fact is answered by **volunteering**: the next untold symptom,
   red flag or part of the story (``VOLUNTEER_CATEGORIES``; critical first, then tree order), one per
   question and ``VOLUNTEER_MAX`` per encounter, recorded with the layer ``volunteered``; after that, while
   something of those kinds is untold, a line of ``NOTHING_MORE_LINES``, never a "no". A persona decides
   what it would not volunteer (``sim.patient.persona.PersonaBehaviour.may_volunteer``).

   On a live call with ``voice: {barge_in_red_flag: true}`` the patient also cuts in once with its most important
   red flag not told yet (``barge_in_red_flag``): recorded with the layer ``barge_in``.

   Each line is picked by a seeded RNG (never the same line twice in a row), so that a given seed
   always gives the same conversation.
5. A persona whose values change the text (``sim.patient.persona.changes_text``: poor recall, a minimiser, a
   catastrophiser, rambling asides, the lay table, limited English, a carer relaying) holds some facts back
   for a turn and rewords the answers around the scripted text; the reply records the facts it held back
   (``held``) and a note, and its kind may be ``withheld``, ``vague``, ``not_known`` or ``not_understood``
   (``sim.patient.persona``). Any other persona gives exactly the text above.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from scenarios.facts import is_red_flag_fact
from scenarios.lexicon import normalise, stem
from scenarios.schema import Fact, FactCategory, Scenario
from sim.patient.persona import PersonaBehaviour, changes_text
from sim.patient.understanding import Layer, Layers, Understanding

__all__ = ["NEGATIVE_LINES", "UNSURE_LINES", "PatientReply", "PatientSimulator", "normalise", "stem"]


AnswerKind = Literal["facts", "unsure", "negative", "fallback", "withheld", "vague", "not_known", "not_understood"]

NEGATIVE_LINES = ("No, nothing like that.", "No, not that I've noticed.", "No, I don't think so. Nothing like that.")
NOTHING_MORE_LINES = ("Nothing else comes to mind just now.", "I can't think of anything else right now.")
UNSURE_LINES = ("I'm not sure, to be honest.", "I couldn't really say, sorry.", "Hmm, I'm not sure how to answer that.")
# Intents that ask how, when, where or how much of something, not whether it is there: "no" does not answer them.
ATTRIBUTE_INTENTS = frozenset({
    "onset_timing", "onset_speed", "onset_activity", "course", "location", "radiation", "character", "severity",
    "aggravating_relieving", "frequency", "last_known_well", "blood_pressure", "other_measurements", "gestation",
    "pregnancy_lmp", "eating_drinking", "infant_feeding", "wet_nappies", "urine_appearance", "social_living",
    "photo", "talk_in_sentences", "weight_bearing", "injury_mechanism", "sleep", "mood", "safety_now",
    "protective_factors", "birth_history", "vaccinations", "fetal_movements",
})

# Intents that ask for a story, an examination or a test: a case without a fact about them has no answer
# to give, not a "no" (a triage call has no examination; "Tell me more" is not a yes/no question), so
# they leave the message to the scenario's fallback lines, as if the lexicon did not know them.
UNANSWERABLE_BY_NO = frozenset({
    "presenting_complaint", "occupation", "vital_signs", "physical_exam", "exam_cardiac", "exam_respiratory",
    "exam_abdominal", "exam_neuro", "exam_skin", "exam_ent", "exam_eye", "exam_neck", "exam_limbs", "exam_msk",
    "exam_pelvic", "test_blood", "test_urine", "test_imaging", "test_cardiac", "test_microbiology",
    "test_pathology", "test_other",
})

# Volunteering: to an open question about their symptoms ("Anything else you've noticed?", "Tell me what's been
# happening"), and to nothing else, a patient brings up one thing they have not been asked about yet: the next
# symptom, critical first, then in the tree's order, up to VOLUNTEER_MAX in an encounter. A persona decides what
# it would not bring up (``PersonaBehaviour.may_volunteer``). Revealed by the layer ``volunteered``.
VOLUNTEER_INTENTS = frozenset({"other_symptoms", "presenting_complaint"})
VOLUNTEER_CATEGORIES = frozenset({FactCategory.symptoms, FactCategory.red_flag, FactCategory.history})
VOLUNTEER_MAX = 3
_ASIDE = re.compile(r"^(?:(?:oh|well|um|erm|actually|now you mention it|now that you mention it)[,.!]?\s+)+", re.I)
_YES = re.compile(r"^(?:yes|yeah|yep|yes,? i have|yes,? there is)\b[,.!]?\s*", re.I)


@dataclass
class PatientReply:
    """One answer: the text, the facts it newly revealed (tree order), the layer of each, and what kind it is.

    The kind of answer is ``facts``, ``unsure``, ``negative`` or ``fallback``, and with a persona that changes
    the text also ``withheld``, ``vague``, ``not_known`` or ``not_understood``; see the module docstring.
    ``held`` lists the facts the persona held back this turn and ``persona_note`` says why.
    """

    text: str
    revealed: list[str] = field(default_factory=list)
    revealed_by: dict[str, Layer] = field(default_factory=dict)
    kind: AnswerKind = "facts"
    held: list[str] = field(default_factory=list)
    persona_note: str | None = None


class PatientSimulator:
    """Stateful patient for one encounter. Not thread-safe; one per encounter."""

    def __init__(self, scenario: Scenario, *, seed: int = 0, layers: Layers = Layers()) -> None:
        self.scenario = scenario
        self.understanding = Understanding(scenario, layers=layers)
        self._rng = random.Random(f"{scenario.id}:{seed}")
        self._order = {f.id: i for i, f in enumerate(scenario.information_tree)}
        self.gathered_info: list[str] = []
        self.revealed_by: dict[str, Layer] = {}
        self._last: dict[str, int] = {}
        self.persona = (PersonaBehaviour(scenario, self.understanding, seed=seed)
                        if changes_text(scenario.patient_profile.persona) else None)
        self._opening: str | None = None
        self.volunteered: list[str] = []

    @property
    def opening_line(self) -> str:
        """The scenario's opening line: what the patient says first (as the persona says it)."""
        if self.persona is None:
            return self.scenario.opening_line
        if self._opening is None:
            self._opening = self.persona.opening(self.scenario.opening_line)
        return self._opening

    def answer_openings(self) -> list[str]:
        """The lines a reply of this patient starts with, most likely first, for a voice to synthesise ahead.

        The opening line, every fact's scripted answer as asked and as volunteered (a reply joins its facts' answers
        in tree order, so it starts with one of them), then the lines of a reply that reveals nothing and the
        scenario's fallback lines. A persona that rewords answers starts some replies otherwise: those are simply
        synthesised when they come.
        """
        facts = self.scenario.information_tree
        lines = [self.opening_line, *(f.answer for f in facts), *(volunteered_answer(f) for f in facts),
                 *NEGATIVE_LINES, *UNSURE_LINES, *NOTHING_MORE_LINES, *self.scenario.fallback_lines]
        return list(dict.fromkeys(line.strip() for line in lines if line.strip()))

    def asked_for(self, message: str, model_ids: Iterable[str] = ()) -> dict[str, Layer]:
        """Fact id -> layer for every fact ``message`` asks for, regardless of ``requires``."""
        found = self.understanding.match(message)
        for fid in model_ids:
            if fid in self._order:
                found.setdefault(fid, "model")
        return found

    def triggered_facts(self, message: str) -> list[Fact]:
        """Facts that ``message`` asks for (deterministic layers), regardless of ``requires``."""
        return self.understanding.facts(self.asked_for(message))

    def reveal_facts(self, message: str, model_ids: Iterable[str] = ()) -> tuple[list[Fact], list[Fact]]:
        """Apply one agent message: return (newly revealed, asked again) facts and update state."""
        return self._reveal(self.asked_for(message, model_ids))

    def _reveal(self, asked: dict[str, Layer]) -> tuple[list[Fact], list[Fact]]:
        triggered = self.understanding.facts(asked)
        pending = [f for f in triggered if f.id not in self.gathered_info]
        repeated = [f for f in triggered if f.id in self.gathered_info]
        new: list[Fact] = []
        progress = True
        while progress:  # a prerequisite asked for in the same message unlocks its dependant
            progress = False
            for fact in list(pending):
                if fact.requires is None or fact.requires in self.gathered_info:
                    self.gathered_info.append(fact.id)
                    self.revealed_by[fact.id] = asked[fact.id]
                    new.append(fact)
                    pending.remove(fact)
                    progress = True
        new.sort(key=lambda f: self._order[f.id])
        return new, repeated

    def respond(self, message: str, model_ids: Iterable[str] = ()) -> PatientReply:
        """The patient's answer to one agent message, with what it newly revealed and how."""
        asked = self.asked_for(message, model_ids)
        if self.persona is not None:
            return self._respond_persona(message, asked)
        new, repeated = self._reveal(asked)
        if new or repeated:
            parts = sorted([*new, *repeated], key=lambda f: self._order[f.id])
            return PatientReply(" ".join(f.answer for f in parts), [f.id for f in new],
                                {f.id: self.revealed_by[f.id] for f in new})
        if not asked and (offered := self._volunteer(message)) is not None:
            return PatientReply(volunteered_answer(offered), [offered.id], {offered.id: "volunteered"})
        return self._plain_reply(message, asked)

    def barge_in_red_flag(self, *, denied: Callable[[str], bool] = lambda _answer: False) -> PatientReply | None:
        """The line a patient cuts in with to tell its most important red flag not told yet; None when none is left.

        The red flags are the scenario's red-flag facts (``scenarios.facts.is_red_flag_fact``) whose answer is not
        ``denied`` (a pertinent negative, "No, my breathing's fine", is nothing to cut in with; the caller passes
        the graders' reading, which the patient does not import), unlocked (``requires`` told), critical first,
        then in ``expected.red_flags`` order, then the tree's. The fact is revealed now, with the layer
        ``barge_in``; the line is its answer as said unasked, without a leading "oh," or "now you mention it,",
        after "Sorry, but".
        """
        flags = self.scenario.expected.red_flags
        candidates = [f for f in self.scenario.information_tree
                      if is_red_flag_fact(f, self.scenario) and f.id not in self.gathered_info
                      and (f.requires is None or f.requires in self.gathered_info) and not denied(f.answer)]
        if not candidates:
            return None
        fact = min(candidates, key=lambda f: (not f.critical, flags.index(f.id) if f.id in flags else len(flags),
                                              self._order[f.id]))
        self.gathered_info.append(fact.id)
        self.revealed_by[fact.id] = "barge_in"
        said = _ASIDE.sub("", volunteered_answer(fact), count=1)
        if not re.match(r"I\b|[A-Z]{2}", said):  # "I ...", "ECG ..." keep their capital
            said = said[:1].lower() + said[1:]
        return PatientReply(f"Sorry, but {said}", [fact.id], {fact.id: "barge_in"})

    def _open_question(self, message: str) -> bool:
        """Whether ``message`` asks only the open question about symptoms (``VOLUNTEER_INTENTS``)."""
        intents = self.understanding.recognised(message)
        return bool(intents) and intents <= VOLUNTEER_INTENTS

    def _untold(self) -> list[Fact]:
        """The symptoms, red flags and story not revealed yet (``VOLUNTEER_CATEGORIES``), critical first."""
        done = set(self.gathered_info)
        untold = [f for f in self.scenario.information_tree if f.category in VOLUNTEER_CATEGORIES and f.id not in done]
        return sorted(untold, key=lambda f: (not f.critical, self._order[f.id]))

    def _volunteer(self, message: str) -> Fact | None:
        """The fact the patient brings up to an open question about their symptoms, if any (and record it)."""
        if len(self.volunteered) >= VOLUNTEER_MAX or not self._open_question(message):
            return None
        for fact in self._untold():
            if ((fact.requires is not None and fact.requires not in self.gathered_info)
                    or (self.persona is not None and not self.persona.may_volunteer(fact))):
                continue
            self.gathered_info.append(fact.id)
            self.revealed_by[fact.id] = "volunteered"
            self.volunteered.append(fact.id)
            return fact
        return None

    def _respond_persona(self, message: str, asked: dict[str, Layer]) -> PatientReply:
        """``respond`` with the persona's behaviours: some facts held back, the answers reworded."""
        assert self.persona is not None
        turn = self.persona.decide(message, asked, self.gathered_info)
        new, repeated = self._reveal(turn.asked)
        parts = sorted([*new, *repeated], key=lambda f: self._order[f.id])
        held = [fid for fid in turn.held if fid not in self.gathered_info]
        reasons = [turn.held[fid] for fid in held]
        base: PatientReply | None = None
        if not parts and not held and not turn.not_understood and not turn.asked:
            offered = self._volunteer(message)
            if offered is not None:
                new, parts = [offered], [offered]
        if not parts and not held and not turn.not_understood:
            base = self._plain_reply(message, turn.asked)
        text = self.persona.answer(parts, turn, base.text if base is not None else None)
        kind: AnswerKind
        if parts:
            kind = "facts"
        elif base is not None:
            kind = base.kind
        else:
            kind = next((k for k in ("not_understood", "not_known", "vague", "withheld")
                         if k in reasons or (k == "not_understood" and turn.not_understood)), "unsure")
        return PatientReply(text, [f.id for f in new], {f.id: self.revealed_by[f.id] for f in new}, kind,
                            held=held, persona_note=turn.note())

    def _plain_reply(self, message: str, asked: dict[str, Layer]) -> PatientReply:
        """The reply of a message that reveals nothing (unsure, fallback or negative; module docstring)."""
        if asked:
            return PatientReply(self._pick("unsure", UNSURE_LINES), kind="unsure")
        if self._open_question(message) and self._untold():  # "anything else?" with more to tell: never a "no"
            return PatientReply(self._pick("nothing_more", NOTHING_MORE_LINES), kind="unsure")
        intents = self.understanding.recognised(message) - UNANSWERABLE_BY_NO
        if not intents:
            return PatientReply(self._pick("fallback", self.scenario.fallback_lines), kind="fallback")
        if self.understanding.near(intents) or intents <= ATTRIBUTE_INTENTS:
            return PatientReply(self._pick("unsure", UNSURE_LINES), kind="unsure")
        return PatientReply(self._pick("negative", NEGATIVE_LINES), kind="negative")

    def reply(self, message: str) -> tuple[str, list[str]]:
        """The patient's answer and the ids of the facts it newly revealed (deterministic layers only)."""
        r = self.respond(message)
        return r.text, r.revealed

    def _pick(self, kind: str, lines: Sequence[str]) -> str:
        """A line of ``lines``, seeded, never the one this kind of answer gave last time."""
        last = self._last.get(kind)
        choices = [i for i in range(len(lines)) if i != last] or [0]
        self._last[kind] = self._rng.choice(choices)
        return lines[self._last[kind]]


def volunteered_answer(fact: Fact) -> str:
    """A fact's scripted answer as said unasked: without the "Yes," that answered a question."""
    text = _YES.sub("", fact.answer.strip(), count=1)
    return text[:1].upper() + text[1:] if text else fact.answer
