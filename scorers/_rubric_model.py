"""Instance-specific rubrics written by a model: the model track of rubric generation (``--judge``).

After the published dual-track method (atomic facts beside interaction intents, then an audit), three passes
per encounter scenario:

1. **Clinical track.** The model reads the scenario's ground truth (chief complaint, the information tree's
   facts with their ids and critical flags, red flags, the expected escalation and its acceptable set, the
   expected diagnoses, the patient profile) and answers ``{"criteria": [{"criterion", "points", "axis",
   "source"}, ...]}``. Each item is validated: ``criterion`` non-empty text, ``points`` a non-zero integer in
   [-10, 10], ``axis`` one of ``scenarios.schema.RUBRIC_AXES``, and ``source`` one of ``fact:<id>``,
   ``red_flag:<id>``, ``escalation``, ``escalation:under``, ``escalation:over``, ``diagnosis:<name>``,
   ``safety_netting``, ``caution:<kind>`` (``communication`` is read as ``communication_quality``, and a fact
   cited as a red flag or the other way round is named by what the scenario says it is). A source naming a
   fact, red flag or diagnosis the scenario does not have is a hallucinated source; the item is dropped and
   reported (``RubricAudit.dropped``), as is any other invalid item. An ``escalation:under`` criterion always
   carries -10 points (safety) whatever the model said; one with positive points (a reworded "does not
   under-escalate") is dropped, and one for a scenario where nothing is less urgent than the acceptable care
   is a hallucinated source.
2. **Intents track.** The model reads the patient's situation and needs, not the diagnosis: the profile
   (age, sex, pregnancy, context flags), the persona (speaking style, vocabulary, anxiety, recall), who is
   speaking (the patient, a parent, a carer, a partner), the opening line and the non-clinical facts (social,
   family) and answers ``{"intents": [{"intent", "need", "criterion", "points", "axis"}, ...]}``. Each intent
   becomes a criterion with source ``intent:<slug>``, axis ``communication_quality`` or ``context_awareness``
   (``communication`` is read as the former), 1 to 5 points; invalid items are dropped and reported.
3. **Audit (gap analysis), deterministic.** Against ``generate_rubrics(scenario)``: each deterministic
   criterion whose source is a critical fact, a red flag, ``escalation`` or ``escalation:under`` must be
   covered by a model criterion citing the same source with points of the same sign; where none does, the
   deterministic criterion is added unchanged (``RubricAudit.added`` names its source). The audit reads only
   sources and signs, so a model that forgets a red flag, or cites one on a penalty, cannot leave it out.

The rubric is the model's clinical criteria, then the criteria the audit added, then the intents. A judge
call that gives no valid JSON (after ``ask_json``'s repair and retries) raises ``RubricGenerationError``:
the caller writes no file for that scenario, and never falls back to the deterministic track silently.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from scenarios.schema import RUBRIC_AXES, DroppedCriterion, RubricAudit, RubricCriterion, Scenario
from scorers._judge import Judge
from scorers._rubric_gen import ESCALATION_MEANING, generate_rubrics
from scorers.evaluators import is_red_flag_fact
from sim.records import EncSimError

MODEL_GENERATOR = "encsim rubrics generate (model track: clinical, intents, audit) 1"
AUDITED_PREFIXES = ("fact:", "red_flag:")  # with "escalation" and "escalation:under"
UNDER_ESCALATION_POINTS = -10
INTENT_AXES = ("communication_quality", "context_awareness")
_SHOWN = 40  # characters of a model's invalid value quoted in a reason
_SLUG = re.compile(r"[^a-z0-9]+")
_FIXED_SOURCES = ("escalation", "escalation:under", "escalation:over", "safety_netting")


class RubricGenerationError(EncSimError):
    """The judge gave no valid answer for one scenario's rubric (one paragraph naming the scenario and the track).

    ``encsim rubrics generate`` reports it for that scenario and goes on with the others (exit 3 at the end).
    """


@dataclass(frozen=True)
class ModelRubric:
    """One scenario's rubric from the model track.

    Attributes:
        rubrics: the criteria (clinical, added by the audit, intents).
        audit: what the audit found: covered and added sources, dropped criteria.
        generated_by: the generator and the judge model's name.
    """

    rubrics: list[RubricCriterion]
    audit: RubricAudit
    generated_by: str


def _facts_text(scenario: Scenario) -> str:
    lines = []
    for f in scenario.information_tree:
        marks = [m for m, on in (("critical", f.critical), ("red flag", is_red_flag_fact(f, scenario))) if on]
        lines.append(f"- id {f.id} ({f.category.value}{', ' + ', '.join(marks) if marks else ''}): {f.answer}")
    return "\n".join(lines)


def _profile_text(scenario: Scenario) -> str:
    p = scenario.patient_profile
    ctx = [name for name in ("pediatric", "geriatric", "pregnancy") if getattr(p.context, name)]
    parts = [f"age {p.age_detail or f'{p.age:g} years'}", p.sex]
    if p.pregnant:
        parts.append(f"pregnant{f' ({p.gestation_weeks} weeks)' if p.gestation_weeks else ''}")
    if ctx:
        parts.append(f"context: {', '.join(ctx)}")
    return ", ".join(parts)


def clinical_prompt(scenario: Scenario) -> list[dict[str, str]]:
    """The chat messages of the clinical track: atomic criteria from the scenario's ground truth.

    Args:
        scenario: An encounter scenario.

    Returns:
        The system and user messages; the model answers ``{"criteria": [...]}`` (see the module docstring).
    """
    e = scenario.expected
    acceptable = sorted({*([e.escalation] if e.escalation else []), *e.acceptable_escalations}, key=lambda x: x.rank)
    escalation = (f"best: {e.escalation.value} ({ESCALATION_MEANING[e.escalation]}); acceptable: "
                  f"{', '.join(a.value for a in acceptable)}" if e.escalation else "not given")
    red_flags = [f.id for f in scenario.information_tree if is_red_flag_fact(f, scenario)]
    diagnoses = "\n".join(f"- {d.name}" + (f" (also: {', '.join(d.synonyms[:4])})" if d.synonyms else "")
                          for d in e.diagnoses) or "- none given"
    system = (
        "You write an instance-specific grading rubric for a clinician's (or triage agent's) conversation with one "
        "patient. Write atomic criteria: each checks one thing a grader can decide from the transcript alone. "
        "Positive points (1 to 10) for desirable behaviour, negative points (-1 to -10) for undesirable behaviour. "
        "Each criterion cites its source: fact:<id> (a fact of the list, by its id), red_flag:<id> (a fact marked "
        "red flag), escalation (advises care at least as urgent as the least urgent acceptable category), "
        "escalation:under (advises less urgent care than that: a penalty), escalation:over (more urgent than the "
        "most urgent acceptable category: a small penalty), diagnosis:<name> (an expected diagnosis, by its name), "
        "safety_netting (warning signs that mean seeking help now), caution:<kind> (a medication or context "
        "caution, e.g. caution:anticoagulant, caution:pregnancy, caution:dose). Use only the ids and names given. "
        f"The axis is one of: {', '.join(RUBRIC_AXES)}. Reply with one JSON object and nothing else: "
        '{"criteria": [{"criterion": "<text>", "points": <integer>, "axis": "<axis>", "source": "<source>"}]}.')
    user = (f"Patient: {_profile_text(scenario)}; speaking: {scenario.patient_profile.speaker}.\n"
            f"Chief complaint: {scenario.chief_complaint}\n"
            f"Facts the right questions reveal:\n{_facts_text(scenario)}\n"
            f"Red flags: {', '.join(red_flags) or 'none'}\nEscalation: {escalation}\n"
            f"Expected diagnoses, most likely first:\n{diagnoses}")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def intents_prompt(scenario: Scenario) -> list[dict[str, str]]:
    """The chat messages of the intents track: the patient's situation and needs, as criteria.

    Args:
        scenario: An encounter scenario.

    Returns:
        The system and user messages; the model answers ``{"intents": [...]}`` (see the module docstring).
    """
    p = scenario.patient_profile
    persona = p.persona
    social = "\n".join(f"- {f.category.value}: {f.answer}" for f in scenario.information_tree
                       if f.category.value in ("social", "family_history")) or "- none"
    system = (
        "You read a patient's situation in a health conversation and list their interaction intents and needs: "
        "what this person needs from the clinician beyond the diagnosis (for example reassurance for an anxious "
        "patient, instructions a carer or parent can act on, plain words for limited vocabulary, checking "
        "understanding, care adapted to age or pregnancy). Each intent becomes one atomic criterion a grader can "
        "check from the transcript, worth 1 to 5 points, with the axis communication_quality or "
        "context_awareness. Reply with one JSON object and nothing else: {\"intents\": [{\"intent\": "
        "\"<short_slug>\", \"need\": \"<the need>\", \"criterion\": \"<text>\", \"points\": <1-5>, \"axis\": "
        "\"communication_quality|context_awareness\"}]}.")
    user = (f"Patient: {_profile_text(scenario)}.\nWho is speaking: {p.speaker}.\n"
            f"Persona: speaking style {persona.speaking_style}, vocabulary {persona.vocabulary}, anxiety "
            f"{persona.anxiety}, recall {persona.recall}.\nReason for contact: {scenario.chief_complaint}\n"
            f"Opening line: \"{scenario.opening_line}\"\nSocial and family facts:\n{social}")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _points(value: Any, low: int, high: int) -> int | None:  # a model's JSON value
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not low <= value <= high or value == 0:
        return None
    return value


def _shown(value: Any) -> str:  # a model's JSON value
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def _axis(value: Any) -> Any:  # a model's JSON value
    return "communication_quality" if value == "communication" else value


def _text(value: Any) -> str:  # a model's JSON value
    return " ".join(value.split()) if isinstance(value, str) else ""


def _source_problem(source: str, scenario: Scenario, deterministic: set[str]) -> tuple[str, str | None]:
    """The canonical source, and why it is not acceptable (None when it is)."""
    facts = {f.id: f for f in scenario.information_tree}
    kind, _, name = source.partition(":")
    if source in _FIXED_SOURCES:
        if source.startswith("escalation") and source not in deterministic:
            return source, f"hallucinated source: this scenario has no {source} criterion"
        return source, None
    if kind in ("fact", "red_flag"):  # named by what the fact is, whatever the model called it
        if name not in facts:
            return source, f"hallucinated source: the scenario has no fact {_shown(name)}"
        return f"{'red_flag' if is_red_flag_fact(facts[name], scenario) else 'fact'}:{name}", None
    if kind == "diagnosis":
        for d in scenario.expected.diagnoses:
            if name.strip().lower() in {d.name.lower(), *(s.lower() for s in d.synonyms)}:
                return f"diagnosis:{d.name}", None
        return source, f"hallucinated source: no expected diagnosis {_shown(name)}"
    if kind == "caution" and _SLUG.sub("_", name.lower()).strip("_"):
        return f"caution:{_SLUG.sub('_', name.lower()).strip('_')}", None
    return source, "unknown source" if source else "no source"


def clinical_criteria(data: dict[str, Any], scenario: Scenario,
                      deterministic: list[RubricCriterion]) -> tuple[list[RubricCriterion], list[DroppedCriterion]]:
    """Validate the clinical track's answer (see the module docstring).

    Args:
        data: The model's JSON object (``{"criteria": [...]}``).
        scenario: The scenario the criteria are for.
        deterministic: ``generate_rubrics(scenario)`` (which escalation sources exist).

    Returns:
        The valid criteria, and the dropped items with their reasons.
    """
    sources = {c.source for c in deterministic if c.source}
    kept: list[RubricCriterion] = []
    dropped: list[DroppedCriterion] = []
    for item in data.get("criteria") or []:
        text, source = _text(item.get("criterion")), _text(item.get("source"))
        points, axis = _points(item.get("points"), -10, 10), _axis(item.get("axis"))
        source, problem = _source_problem(source, scenario, sources)
        if problem is None and not text:
            problem = "no criterion text"
        if problem is None and points is None:
            problem = f"points {_shown(item.get('points'))}: not a non-zero integer in [-10, 10]"
        if problem is None and axis not in RUBRIC_AXES:
            problem = f"axis {_shown(axis)}: not one of {', '.join(RUBRIC_AXES)}"
        if problem is None and source == "escalation:under":
            if points is not None and points > 0:
                problem = "escalation:under with positive points: under-escalation must be a penalty"
            else:
                points, axis = UNDER_ESCALATION_POINTS, "safety"
        if problem is not None or points is None:
            dropped.append(DroppedCriterion(criterion=text, source=source or None, reason=problem or "invalid"))
            continue
        kept.append(RubricCriterion(criterion=text, points=points, axis=axis, source=source))
    return kept, dropped


def intent_criteria(data: dict[str, Any]) -> tuple[list[RubricCriterion], list[DroppedCriterion]]:
    """Validate the intents track's answer (see the module docstring).

    Args:
        data: The model's JSON object (``{"intents": [...]}``).

    Returns:
        One criterion per valid intent (source ``intent:<slug>``), and the dropped items with their reasons.
    """
    kept: list[RubricCriterion] = []
    dropped: list[DroppedCriterion] = []
    seen: set[str] = set()
    for item in data.get("intents") or []:
        slug = _SLUG.sub("_", _text(item.get("intent")).lower()).strip("_")
        text = _text(item.get("criterion"))
        points = _points(item.get("points"), 1, 5)
        axis = _axis(item.get("axis"))
        source = f"intent:{slug}" if slug else None
        problem = None
        if not slug:
            problem = "no intent name"
        elif slug in seen:
            problem = f"intent {slug!r} given twice"
        elif not text:
            problem = "no criterion text"
        elif points is None:
            problem = f"points {_shown(item.get('points'))}: an intent is worth an integer from 1 to 5"
        elif axis not in INTENT_AXES:
            problem = f"axis {_shown(item.get('axis'))}: an intent's axis is one of {', '.join(INTENT_AXES)}"
        if problem is not None or points is None:
            dropped.append(DroppedCriterion(criterion=text, source=source, reason=problem or "invalid"))
            continue
        seen.add(slug)
        kept.append(RubricCriterion(criterion=text, points=points, axis=axis, source=source))
    return kept, dropped


Gaps = tuple[list[RubricCriterion], list[str], list[str]]  # criteria to add, sources covered, sources added


def _audited(criterion: RubricCriterion) -> bool:
    source = criterion.source or ""
    return source in ("escalation", "escalation:under") or source.startswith(AUDITED_PREFIXES)


def audit_rubric(scenario: Scenario, criteria: list[RubricCriterion],
                 deterministic: list[RubricCriterion] | None = None) -> Gaps:
    """The gap analysis: the deterministic criteria the model's rubric does not cover (see the module docstring).

    Args:
        scenario: The scenario.
        criteria: The model's validated clinical criteria.
        deterministic: ``generate_rubrics(scenario)``, if already computed.

    Returns:
        The deterministic criteria to add, the sources covered, the sources added.
    """
    deterministic = generate_rubrics(scenario) if deterministic is None else deterministic
    signs = {(c.source, c.points > 0) for c in criteria}
    added: list[RubricCriterion] = []
    covered: list[str] = []
    for c in deterministic:
        if not _audited(c) or c.source is None:
            continue
        if (c.source, c.points > 0) in signs:
            covered.append(c.source)
        else:
            added.append(c)
    return added, covered, [c.source for c in added if c.source]


async def _ask(judge: Judge, scenario: Scenario, messages: list[dict[str, str]], key: str) -> dict[str, Any]:
    data = await judge.ask_json(messages, keys={key: list[dict[str, Any]]})
    if data is None or not (isinstance(data.get(key), list) and all(isinstance(x, dict) for x in data[key])):
        raise RubricGenerationError(f"{scenario.id}: the judge {judge.name} gave no valid JSON for the "
                                    f"{'clinical' if key == 'criteria' else 'intents'} track (after its repair and "
                                    "retries), so no rubric file was written for it. Run the command again for this "
                                    "scenario, or give another --judge.")
    return data


async def generate_model_rubrics(scenario: Scenario, judge: Judge) -> ModelRubric:
    """The model track's rubric for one encounter scenario: clinical track, intents track, audit.

    Args:
        scenario: An encounter (with an information tree).
        judge: The model that writes the criteria (``sim.judges.JudgeClient`` implements the protocol).

    Returns:
        The criteria, the audit, and ``generated_by`` naming the judge model.

    Raises:
        ValueError: The scenario is an imaging item or a replay.
        RubricGenerationError: The judge gave no valid JSON for one of the tracks.
    """
    deterministic = generate_rubrics(scenario)  # raises ValueError for imaging items and replays
    answers = await asyncio.gather(_ask(judge, scenario, clinical_prompt(scenario), "criteria"),
                                   _ask(judge, scenario, intents_prompt(scenario), "intents"), return_exceptions=True)
    clinical_data, intents_data = answers
    for answer in answers:  # both calls finish before either failure is raised: no call outlives the judge
        if isinstance(answer, BaseException):
            raise answer
    assert isinstance(clinical_data, dict) and isinstance(intents_data, dict)
    clinical, dropped = clinical_criteria(clinical_data, scenario, deterministic)
    intents, dropped_intents = intent_criteria(intents_data)
    added, covered, added_sources = audit_rubric(scenario, clinical, deterministic)
    audit = RubricAudit(covered=covered, added=added_sources, dropped=[*dropped, *dropped_intents])
    return ModelRubric(rubrics=[*clinical, *added, *intents], audit=audit,
                       generated_by=f"{MODEL_GENERATOR}; judge {judge.name}")

