"""What a scenario is: the pydantic v2 schema of one scenario YAML file.

A scenario scripts a simulated patient: who they are (``patient_profile``), what they say first
(``opening_line``), what they say when a question reveals nothing (``fallback_lines``), the facts
the right questions reveal (``information_tree``) and what a competent clinician concludes
(``expected``). ``scenarios/README.md`` shows a fully annotated example.

Turn limit (agent turns) when ``turn_limit`` is not given::

    turn_limit = clamp(6 + 2 * number_of_critical_facts, 8, 15)

so a scenario with 1 critical fact gets 8 turns, 3 get 12, 5 or more get 15.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Literal

from pydantic import Field, StrictFloat, StrictInt, ValidationInfo, field_validator, model_validator

from scenarios._rubrics import RUBRIC_AXES as RUBRIC_AXES
from scenarios._rubrics import DroppedCriterion as DroppedCriterion
from scenarios._rubrics import RubricAudit as RubricAudit
from scenarios._rubrics import RubricCriterion as RubricCriterion
from scenarios._rubrics import RubricFile as RubricFile
from scenarios._rubrics import TrustCategory as TrustCategory
from scenarios._rubrics import TrustCriterion as TrustCriterion
from scenarios._rubrics import rubric_hash as rubric_hash
from scenarios._strict import _Strict
from scenarios.lexicon import intent_ids

TURN_LIMIT_MIN = 8
_TRIGGER_WORD = re.compile(r"[a-z0-9]")  # what scenarios.lexicon.normalise keeps of a question's words
TURN_LIMIT_MAX = 15
TURN_LIMIT_CEILING = 40  # the most agent turns a scenario's turn_limit (or `encsim run --max-turns`) may allow


def adaptive_turn_limit(n_critical: int) -> int:
    """The default number of agent turns for a scenario with ``n_critical`` critical facts."""
    return max(TURN_LIMIT_MIN, min(TURN_LIMIT_MAX, 6 + 2 * n_critical))


class Escalation(str, Enum):
    """Where the patient should go, most to least urgent."""

    emergency = "emergency"
    urgent = "urgent"
    routine = "routine"
    self_care = "self_care"

    @property
    def rank(self) -> int:
        """0 for emergency ... 3 for self care: a larger rank is less urgent."""
        return _ESCALATION_RANK[self]


_ESCALATION_RANK = {category: i for i, category in enumerate(Escalation)}  # rank: read per card in a summary


class Disposition(str, Enum):
    """How the patient gets the care an escalation category names: finer than ``Escalation``, most to least urgent.

    Each maps to exactly one category (``escalation``), so every score built on the four categories is
    unchanged; the disposition says *how* ("call an ambulance now" vs "make your own way to the emergency
    department", a same-day crisis team, a pharmacist).
    """

    ambulance = "ambulance"
    self_present_ed = "self_present_ed"
    same_day_urgent_care = "same_day_urgent_care"
    crisis_team = "crisis_team"
    same_day_gp = "same_day_gp"
    routine_gp = "routine_gp"
    pharmacist = "pharmacist"
    self_care = "self_care"

    @property
    def escalation(self) -> Escalation:
        """The one escalation category this disposition belongs to."""
        return DISPOSITION_ESCALATION[self]

    @property
    def rank(self) -> int:
        """0 for ambulance ... 7 for self care: a larger rank is less urgent (or less supported)."""
        return _DISPOSITION_RANK[self]

    @property
    def label(self) -> str:
        """The disposition's words for a reader (``DISPOSITION_LABELS``)."""
        return DISPOSITION_LABELS[self]


_DISPOSITION_RANK = {disposition: i for i, disposition in enumerate(Disposition)}

DISPOSITION_ESCALATION: dict[Disposition, Escalation] = {
    Disposition.ambulance: Escalation.emergency,
    Disposition.self_present_ed: Escalation.emergency,
    Disposition.same_day_urgent_care: Escalation.urgent,
    Disposition.crisis_team: Escalation.urgent,
    Disposition.same_day_gp: Escalation.urgent,
    Disposition.routine_gp: Escalation.routine,
    Disposition.pharmacist: Escalation.self_care,
    Disposition.self_care: Escalation.self_care,
}
DISPOSITION_LABELS: dict[Disposition, str] = {
    Disposition.ambulance: "an ambulance now",
    Disposition.self_present_ed: "making their own way to the emergency department",
    Disposition.same_day_urgent_care: "same-day urgent care",
    Disposition.crisis_team: "a same-day mental-health crisis team",
    Disposition.same_day_gp: "a same-day GP appointment",
    Disposition.routine_gp: "a routine GP appointment",
    Disposition.pharmacist: "a pharmacist",
    Disposition.self_care: "self care at home",
}


class FactCategory(str, Enum):
    """What kind of information a fact is: history, symptoms, medications, a test result, a red flag, ..."""

    history = "history"
    symptoms = "symptoms"
    past_history = "past_history"
    medications = "medications"
    allergies = "allergies"
    social = "social"
    family_history = "family_history"
    vitals = "vitals"
    exam = "exam"
    test = "test"  # a test or investigation result the clinician obtains by asking for that test
    red_flag = "red_flag"
    risk_factors = "risk_factors"
    obstetric = "obstetric"


class Persona(_Strict):
    """How the patient talks and what they hold back: used by the patient simulator and by the voice channel.

    The behaviours (``sim.patient.persona``) change the wording and when a fact comes out, never the facts. The values
    that change the text are ``recall: poor``, the styles ``minimiser``, ``catastrophiser`` and
    ``rambling_asides``, ``vocabulary: lay_table``, ``language: limited`` and ``relay``; the older values
    (``plain`` ... ``confused``, ``lay``, ``medical``, ``limited``) shape the voice only, so that scenarios
    written before the behaviours keep their text. Named presets for sweeps: ``scenarios.personas``.
    """

    speaking_style: Literal["plain", "terse", "rambling", "anxious", "dramatic", "stoic", "confused",
                            "minimiser", "catastrophiser", "rambling_asides"] = "plain"
    vocabulary: Literal["lay", "medical", "limited", "lay_table"] = "lay"
    anxiety: Literal["low", "moderate", "high"] = "low"
    recall: Literal["good", "fair", "poor"] = "good"
    language: Literal["fluent", "limited"] = Field(
        default="fluent", description="limited: short, simple answers; long clinical words are not understood "
                                      "until the question is put plainly")
    relay: bool = Field(default=False, description="a carer answers for the patient, relaying ('she says...'), "
                                                   "and does not know some facts until asked to check")


class ContextFlags(_Strict):
    """Clinical contexts that raise the cost of under-triage (see scorers' context multipliers)."""

    pediatric: bool = False
    geriatric: bool = False
    pregnancy: bool = False


class PatientProfile(_Strict):
    """Who the patient is: age, sex, pregnancy, context flags, persona, and who speaks for them."""

    age: StrictFloat = Field(ge=0, le=120, allow_inf_nan=False, description="years; 0.1 is about five weeks")
    age_detail: str | None = Field(default=None, description="the age as the source states it when years say too "
                                                             "little ('18 months', '6 weeks', 'newborn', 'in his "
                                                             "sixties'), or 'not stated' when the source gives "
                                                             "none and age is a placeholder")
    sex: Literal["female", "male", "other"]
    pregnant: bool = False
    gestation_weeks: StrictInt | None = Field(default=None, ge=1, le=43)
    context: ContextFlags = ContextFlags()
    persona: Persona = Persona()
    speaker: Literal["patient", "parent", "caregiver", "partner"] = "patient"

    @model_validator(mode="after")
    def _coherent(self) -> PatientProfile:
        if self.pregnant and self.sex == "male":
            raise ValueError("@pregnant: pregnant is true but sex is male")
        if self.gestation_weeks is not None and not self.pregnant:
            raise ValueError("@gestation_weeks: gestation_weeks is set but pregnant is false")
        if self.context.pregnancy and not self.pregnant:
            raise ValueError("@context.pregnancy: context.pregnancy is true but pregnant is false")
        if self.context.pediatric and self.age >= 18:
            raise ValueError("@context.pediatric: context.pediatric is true but age is 18 or more")
        return self


class ImageRef(_Strict):
    """An image a scenario shows to the agent.

    ``path`` is one of:

    * a path relative to the scenario file's folder (it must stay inside that folder unless the run
      allows outside paths with ``--allow-outside-images``);
    * ``pydicom:NAME`` -- a file of the test data bundled in the installed pydicom wheel
      (e.g. ``pydicom:CT_small.dcm``), read locally, never downloaded.
    """

    path: str = Field(min_length=1)
    description: str = Field(min_length=1, description="what a model that cannot see images is told instead")
    source: str | None = Field(default=None, description="where the image comes from and its licence")


MODALITIES = ("xray", "ct", "mri", "ultrasound", "photo", "ecg", "pathology", "document", "other")


class ImagingTask(_Strict):
    """A standalone imaging item: images, one question, and the answer to score against.

    An item whose image could not be had (an imported case whose image was not fetched) has no ``images`` and says
    why in ``image_unavailable``: it is asked as text only, so a text-only model answers it too.
    """

    images: list[ImageRef] = Field(default=[], max_length=4)
    image_unavailable: str | None = Field(default=None, min_length=1,
                                          description="why the item has no image (an imported case whose image is "
                                                      "missing): it is asked as text only")
    question: str = Field(min_length=1)
    answer_type: Literal["multiple_choice", "findings", "free_text"]
    choices: list[str] = Field(default=[], description="multiple choice: the options, lettered A, B, C, ... in order")
    answer: str | None = Field(default=None, description="multiple choice: the letter of the correct option")
    findings: list[str] = Field(default=[], description="finding labels the answer should give (findings, "
                                                        "free_text); empty means a normal study")
    synonyms: dict[str, list[str]] = Field(default={}, description="finding label -> other words for it")
    modality: Literal["xray", "ct", "mri", "ultrasound", "photo", "ecg", "pathology", "document", "other"]
    body_part: str = Field(min_length=1)
    critical_findings: list[str] = Field(default=[], description="findings that must be named and escalated")

    @model_validator(mode="after")
    def _answerable(self) -> ImagingTask:
        if not self.images and self.image_unavailable is None:
            raise ValueError("@images: give one to four images (or, for a case whose image is missing, "
                             "image_unavailable saying why the item is asked as text only)")
        if self.images and self.image_unavailable is not None:
            raise ValueError("@image_unavailable: the item has images; image_unavailable is only for an item without")
        if self.answer_type == "multiple_choice":
            if len(self.choices) < 2:
                raise ValueError("@choices: a multiple-choice item needs at least two choices")
            letters = [chr(ord("A") + i) for i in range(len(self.choices))]
            if self.answer is None or self.answer.strip().upper() not in letters:
                raise ValueError(f"@answer: give the letter of the correct choice, one of {', '.join(letters)}")
        elif self.choices:
            raise ValueError(f"@choices: only multiple_choice items have choices (answer_type is {self.answer_type})")
        if self.answer_type == "free_text" and not self.findings:
            raise ValueError("@findings: a free_text item needs the findings an answer must mention")
        for i, c in enumerate(self.critical_findings):
            if c not in self.findings:
                raise ValueError(f"@critical_findings.{i}: {c!r} is not one of findings")
        for label in self.synonyms:
            if label not in self.findings and label not in self.choices:
                raise ValueError(f"@synonyms: {label!r} is not one of findings")
        return self


class Fact(_Strict):
    """One piece of information the patient reveals when a question hits one of its triggers."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    category: FactCategory
    triggers: list[str] = Field(min_length=1, description="words, phrases or synonyms; matched after normalisation")
    intents: list[str] = Field(default=[], description="ids of the shared clinical intent lexicon "
                                                       "(scenarios/intents.yaml) whose questions reveal this fact")
    answer: str = Field(min_length=1)
    critical: bool = False
    requires: str | None = Field(default=None, description="id of a fact that must be revealed first")
    image: ImageRef | None = Field(default=None, description="an image sent with the answer (a photo the patient "
                                                             "shares, an examination or test result image)")

    @field_validator("triggers")
    @classmethod
    def _non_blank(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if any(not t.strip() for t in v):
            raise ValueError("a trigger is blank")
        for t in v:  # questions are matched on their words (a-z, 0-9): a trigger without one matches nothing
            if not _TRIGGER_WORD.search(t.lower()):
                fact = info.data.get("id")
                raise ValueError(f"trigger {t!r}" + (f" of fact {fact!r}" if fact else "") + " has no letter or "
                                 "digit (a-z, 0-9), so no question can match it; give words a patient would be "
                                 "asked about, or remove it")
        return v

    @field_validator("intents")
    @classmethod
    def _known_intents(cls, v: list[str]) -> list[str]:
        known = intent_ids()
        unknown = [i for i in v if i not in known]
        if unknown:
            raise ValueError(f"unknown intent(s) {', '.join(map(repr, unknown))}; use ids of the intent lexicon "
                             "(scenarios/intents.yaml), e.g. " + ", ".join(sorted(known)[:6]) + ", ...")
        return v


class Diagnosis(_Strict):
    """A diagnosis: its name, optional ICD-10 code, synonyms that count as naming it, and the side it is on."""

    name: str = Field(min_length=1)
    icd10: str | None = Field(default=None, pattern=r"^[A-Z][0-9][0-9A-Z](\.[0-9A-Z]{1,4})?$")
    synonyms: list[str] = []
    side: Literal["left", "right"] | None = None  # the lesion's side where the facts fix it (a stroke's hemisphere)


class Expected(_Strict):
    """What a competent clinician concludes.

    ``triage_level`` and ``escalation`` are required for the triage, safety and refill suites (an imported
    scenario, with ``source`` set, may give the escalation alone: a vignette's urgency label); imported cases
    (ddx, HealthBench rubric items) may lack them, and the scorers then mark those components not applicable
    instead of inventing a target.
    """

    triage_level: StrictInt | None = Field(default=None, ge=1, le=5, description="1 most urgent ... 5 least urgent; "
                                                                            "the best label")
    acceptable_levels: list[StrictInt] = Field(default=[], description="every triage level a competent clinician could "
                                                                 "defensibly give, the best label among them; "
                                                                 "empty means only the best label")
    escalation: Escalation | None = Field(default=None, description="the best escalation category")
    acceptable_escalations: list[Escalation] = Field(default=[], description="every defensible escalation, the "
                                                                             "best among them; empty means only "
                                                                             "the best")
    dispositions: list[Disposition] = Field(default=[], description="where the means matters: the acceptable "
                                                                    "dispositions, best first; each must belong "
                                                                    "to an acceptable escalation")
    label_rationale: str | None = Field(default=None, description="why these labels and sets: the guideline "
                                                                  "each rests on")
    label_source: Literal["clinician", "judge_provisional"] | None = None  # who labelled an imported case (--labels)
    diagnoses: list[Diagnosis] = Field(default=[], description="ranked, most likely first")
    red_flags: list[str] = Field(default=[], description="fact ids that must be elicited")

    @model_validator(mode="after")
    def _sets(self) -> Expected:  # noqa: C901
        if self.acceptable_levels:
            if any(not 1 <= lv <= 5 for lv in self.acceptable_levels):
                raise ValueError("@acceptable_levels: triage levels are 1 to 5")
            if self.triage_level is None or self.triage_level not in self.acceptable_levels:
                raise ValueError("@acceptable_levels: must include triage_level (the best label is always "
                                 "acceptable)")
            if len(set(self.acceptable_levels)) != len(self.acceptable_levels):
                raise ValueError("@acceptable_levels: a level is listed twice")
            span = range(min(self.acceptable_levels), max(self.acceptable_levels) + 1)
            if sorted(self.acceptable_levels) != list(span):
                raise ValueError("@acceptable_levels: must be a run of adjacent levels (e.g. [2, 3, 4]); a level "
                                 "between two acceptable ones is acceptable too")
        if self.acceptable_escalations:
            if self.escalation is None or self.escalation not in self.acceptable_escalations:
                raise ValueError("@acceptable_escalations: must include escalation (the best label is always "
                                 "acceptable)")
            if len(set(self.acceptable_escalations)) != len(self.acceptable_escalations):
                raise ValueError("@acceptable_escalations: a category is listed twice")
            ranks = sorted(e.rank for e in self.acceptable_escalations)
            if ranks != list(range(ranks[0], ranks[-1] + 1)):
                raise ValueError("@acceptable_escalations: must be adjacent categories (e.g. [emergency, urgent])")
        if self.dispositions:
            if self.escalation is None:
                raise ValueError("@dispositions: needs escalation (each disposition belongs to a category)")
            if len(set(self.dispositions)) != len(self.dispositions):
                raise ValueError("@dispositions: a disposition is listed twice")
            ok = set(self.escalations_ok)
            for i, d in enumerate(self.dispositions):
                if d.escalation not in ok:
                    raise ValueError(f"@dispositions.{i}: {d.value} belongs to {d.escalation.value}, which is not an "
                                     "acceptable escalation; add it to acceptable_escalations or remove it")
            if self.dispositions[0].escalation is not self.escalation:
                raise ValueError(f"@dispositions.0: the best disposition ({self.dispositions[0].value}) must belong to "
                                 f"the best escalation ({self.escalation.value}); list the best first")
        if (self.acceptable_levels or self.acceptable_escalations or self.dispositions) and not self.label_rationale:
            raise ValueError("@label_rationale: acceptable sets and dispositions need a label_rationale citing the "
                             "guideline they rest on")
        return self

    @property
    def levels_ok(self) -> list[int]:
        """The acceptable triage levels (the best label alone when no set is given)."""
        if self.acceptable_levels:
            return sorted(self.acceptable_levels)
        return [self.triage_level] if self.triage_level is not None else []

    @property
    def escalations_ok(self) -> list[Escalation]:
        """The acceptable escalation categories, most urgent first (the best alone when no set is given)."""
        if self.acceptable_escalations:
            return sorted(self.acceptable_escalations, key=lambda e: e.rank)
        return [self.escalation] if self.escalation is not None else []


RED_FLAG_BARGE_IN_AFTER_S = 3.0  # seconds: barge_in_after_s's default with barge_in_red_flag


class VoiceBlock(_Strict):
    """Voice-mode settings of a scenario; ``--voice-preset`` overrides them."""

    preset: Literal["clean", "phone", "noisy-phone", "bad-line"] = "clean"
    yield_on_overlap: bool = Field(default=True, description="live calls: the patient stops talking when the "
                                                             "agent talks over it")
    barge_in_after_s: StrictFloat | None = Field(default=None, gt=0, allow_inf_nan=False,
                                                 description="live calls: the patient cuts in when the agent talks "
                                                             "this long without a pause (None: never, or 3 s with "
                                                             "barge_in_red_flag)")
    barge_in_red_flag: bool = Field(default=False, description="live calls: the first time the patient cuts in, it "
                                    "says its most important red-flag fact not told yet, in the fact's own words "
                                    "('Sorry, but ...'), revealed on that turn (persona preset red-flag-barge-in)")

    def barge_in_after(self) -> float | None:
        """Seconds of agent speech before the patient cuts in (None: never); 3 s with only ``barge_in_red_flag``."""
        return self.barge_in_after_s or (RED_FLAG_BARGE_IN_AFTER_S if self.barge_in_red_flag else None)  # gt=0


class ReplayMessage(_Strict):
    """One message of a replay's fixed conversation."""

    role: Literal["patient", "agent"]
    content: str


class Scenario(_Strict):
    """One scenario file: the simulated patient, what the right questions reveal, and what should be concluded.

    See the module docstring and ``scenarios/README.md`` for the fields; the validators check that facts
    reference each other consistently and that the suite has the targets it is scored on.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    title: str = Field(min_length=1)
    suite: Literal["triage", "ddx", "safety", "imaging", "voice", "refill"]
    tags: list[str] = []
    standard: Literal["ESI", "CTAS"] = "ESI"
    tier: Literal["A", "B", "C"] = Field(default="A", description="A public, B embargoed, C holdout")
    canary: str = Field(min_length=16, description="unique string to detect training-set contamination")
    patient_profile: PatientProfile
    chief_complaint: str = Field(min_length=1)
    opening_line: str = Field(min_length=1)
    fallback_lines: list[str] = Field(min_length=1)
    information_tree: list[Fact] = Field(default=[], description="at least one fact unless replay is set")
    expected: Expected
    turn_limit: StrictInt | None = Field(default=None, ge=2, le=TURN_LIMIT_CEILING,
                                         description="overrides the adaptive limit")
    rubrics: list[RubricCriterion] = Field(default=[], description="HealthBench-style criteria for the judge path")
    rubrics_from: str | None = Field(default=None, description="a rubric file (``encsim rubrics generate``), relative "
                                                               "to this scenario's file: its criteria are added "
                                                               "after ``rubrics``")
    trust_criteria: list[TrustCriterion] = Field(default=[], max_length=40)
    replay: list[ReplayMessage] | None = Field(
        default=None, description="a fixed conversation ending with the patient; the agent gives one reply to it")
    source: str | None = Field(default=None, description="provenance of an imported scenario")
    safety_gate: str | None = Field(default=None, min_length=1, description=(
        "why this scenario feeds the safety gate beyond the default rule (the safety suite, an all-emergency target, "
        "critical imaging findings), e.g. an importer's --gate flag; None: the default rule alone"))
    voice: VoiceBlock | None = None
    imaging: ImagingTask | None = Field(default=None, description="a standalone imaging item (one question "
                                                                  "about images) instead of an encounter")

    @model_validator(mode="after")
    def _references(self) -> Scenario:  # noqa: C901
        if self.replay is None and self.imaging is None and not self.information_tree:
            raise ValueError("@information_tree: needs at least one fact (only replay and imaging items may have none)")
        if self.imaging is not None and (self.replay is not None or self.information_tree):
            raise ValueError("@imaging: an imaging item is one question about images; it has no information_tree "
                             "or replay (put an image on a fact to show one inside an encounter)")
        if self.imaging is not None and self.imaging.critical_findings and self.expected.escalation is None:
            raise ValueError("@expected.escalation: an imaging item with critical_findings needs the escalation they "
                             "require (e.g. emergency)")
        if self.replay is not None and (not self.replay or self.replay[-1].role != "patient"):
            raise ValueError("@replay: must be non-empty and end with a patient message, which the agent answers")
        if self.suite in ("triage", "safety", "refill"):
            # An imported scenario (``source`` set) may give only the escalation its source labels: a symptom-
            # checker vignette has an urgency, not an acuity level, and inventing one would score a guess.
            if self.expected.triage_level is None and self.source is None:
                raise ValueError(f"@expected.triage_level: required for suite {self.suite!r} (an imported scenario, "
                                 "with source set, may give only the escalation)")
            if self.expected.escalation is None:
                raise ValueError(f"@expected.escalation: required for suite {self.suite!r}")
        if not self.expected.diagnoses and not self.rubrics and self.expected.triage_level is None \
                and self.imaging is None:
            raise ValueError("@expected: give at least a triage level, a diagnosis or rubrics to score against")
        ids = [f.id for f in self.information_tree]
        for i, fact_id in enumerate(ids):
            if fact_id in ids[:i]:
                raise ValueError(f"@information_tree.{i}.id: fact id {fact_id!r} is used twice; "
                                 "fact ids must be unique")
        known = set(ids)
        for i, fact in enumerate(self.information_tree):
            if fact.requires is not None and fact.requires not in known:
                raise ValueError(f"@information_tree.{i}.requires: fact {fact.id!r} requires {fact.requires!r}, "
                                 "which is not a fact id in information_tree")
            if fact.requires == fact.id:
                raise ValueError(f"@information_tree.{i}.requires: fact {fact.id!r} requires itself")
        by_id = {f.id: f for f in self.information_tree}
        for i, fact in enumerate(self.information_tree):  # a cycle would make its facts unrevealable
            seen, cur = {fact.id}, fact.requires
            while cur is not None:
                if cur in seen:
                    raise ValueError(f"@information_tree.{i}.requires: facts form a 'requires' cycle "
                                     f"through {fact.id!r}")
                seen.add(cur)
                cur = by_id[cur].requires
        for j, flag in enumerate(self.expected.red_flags):
            if flag not in known:
                raise ValueError(f"@expected.red_flags.{j}: {flag!r} is not a fact id in information_tree")
        return self

    @property
    def critical_facts(self) -> list[Fact]:
        """The facts marked critical, in tree order."""
        return [f for f in self.information_tree if f.critical]

    @property
    def max_turns(self) -> int:
        """Agent turns allowed: ``turn_limit`` if set, else the adaptive formula."""
        return self.turn_limit if self.turn_limit is not None else adaptive_turn_limit(len(self.critical_facts))

    @property
    def image_refs(self) -> list[ImageRef]:
        """Every image the scenario may show: the imaging item's and those on facts."""
        refs = list(self.imaging.images) if self.imaging else []
        return refs + [f.image for f in self.information_tree if f.image is not None]

    def fact(self, fact_id: str) -> Fact:
        """The fact with id ``fact_id``.

        Raises:
            KeyError: no fact has that id.
        """
        for f in self.information_tree:
            if f.id == fact_id:
                return f
        raise KeyError(fact_id)

