"""The judge fallback of the assessment reader (``--judge``): ``AssessmentJudge``.

The deterministic reader (``parse_assessment``) is the first word. A judge is asked only when it is not enough:

- a reply with a marker or a block of fields whose triage level, escalation or diagnoses could not be read
  (``needs_judge``);
- a reply with no marker and no block of fields that still looks like it may decide the triage: it names a
  triage level, or an escalation keyword in a sentence that is not a question, or it is the agent's last turn
  (``looks_final``). Ordinary interview questions never reach the judge.

The judge gets the reply alone, at temperature 0, and answers with one strict JSON object (``JUDGE_KEYS``); the
repair rules are the judges' own (``sim.judges.JudgeClient.ask_json``: strict parse, one local repair, one repair
request, retries). Its values are read with the deterministic rules (a level 1-5, the four categories, the
disposition keywords, the diagnosis cleaner), so a judge cannot bring a value the scorer does not know. A field the
deterministic reader did read is kept; the judge fills only what is missing, and ``problems`` says which fields it
filled. The result's ``form`` (and the turn's ``assessment_form``) is ``judge``. When the judge says the reply is
not final, or gives neither a level nor an escalation, or fails, nothing changes: the deterministic result stands.
"""

from __future__ import annotations

import re

from scenarios.schema import Disposition, Escalation
from sim.encounter.assessment._diagnoses import _clean_diagnosis
from sim.encounter.assessment._parse import parse_assessment
from sim.encounter.assessment._triage import _escalation_from, _levels, disposition_from
from sim.patient.model import JsonAsker
from sim.records import ParsedAssessment

ESCALATIONS = tuple(e.value for e in Escalation)
DISPOSITIONS = tuple(d.value for d in Disposition)
JUDGE_KEYS: dict[str, type] = {"final": bool, "triage_level": str, "escalation": str, "disposition": str,
                               "diagnoses": list}
INSTRUCTIONS = f"""\
You read one message that a clinician (an AI triage agent) sent to a patient at the end of or during a triage \
conversation. Decide whether the message gives the clinician's FINAL triage decision: how urgently and where the \
patient should get care. A question, a plan to ask more, a provisional view while still gathering information, or \
general safety advice is not final. If it is final, copy its fields as the message states them; do not add your own \
clinical judgement and leave out what the message does not say.
Reply with only one JSON object:
{{"final": true or false,
 "triage_level": "1" to "5" (the ESI level or the equivalent 1-5 acuity the message gives) or "",
 "escalation": one of {", ".join(ESCALATIONS)} or "" (emergency: ambulance or emergency department now; \
urgent: same-day care; routine: a normal appointment; self_care: manage at home),
 "disposition": one of {", ".join(DISPOSITIONS)} or "",
 "diagnoses": ["the diagnoses the message names, most likely first"]}}"""


def prompt(reply: str) -> list[dict[str, str]]:
    """The judge's chat messages for one reply."""
    return [{"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": f"Clinician's message:\n<<<\n{reply}\n>>>"}]


_QUESTION_END = re.compile(r"\?\s*$")


def needs_judge(parsed: ParsedAssessment) -> bool:
    """A found assessment whose level, escalation or diagnoses the deterministic reader could not read."""
    return parsed.form is not None and (parsed.triage_level is None or parsed.escalation is None
                                        or not parsed.diagnoses)


def looks_final(reply: str, *, last_turn: bool = False) -> bool:
    """Whether a reply without a marker or fields may still decide the triage (the module docstring)."""
    if last_turn or _levels(reply):
        return True
    sentences = re.split(r"(?<=[.!?])\s+|\n+", reply)
    return any(_escalation_from(s) and not _QUESTION_END.search(s) for s in sentences)


def _level(value: str) -> int | None:
    value = value.strip()
    if re.fullmatch(r"[1-5]", value):
        return int(value)
    levels = _levels(value)
    return levels[0] if levels else None


def _escalation(value: str) -> str | None:
    value = value.strip().lower().replace("-", "_").replace(" ", "_")
    if value in ESCALATIONS:
        return value
    named = _escalation_from(value.replace("_", " "))
    return named[0] if named else None


def _disposition(value: str) -> str | None:
    value = value.strip().lower()
    return value if value in DISPOSITIONS else disposition_from(value)


def merged(parsed: ParsedAssessment, data: dict[str, object]) -> ParsedAssessment | None:
    """``parsed`` with the judge's answer filling what it lacks, form ``judge``; None when the judge adds no decision.

    Args:
        parsed: The deterministic reader's result for the reply.
        data: The judge's JSON object (``JUDGE_KEYS``).
    """
    if data.get("final") is not True:
        return None
    level = parsed.triage_level or _level(str(data.get("triage_level") or ""))
    escalation = parsed.escalation or _escalation(str(data.get("escalation") or ""))
    if level is None and escalation is None:
        return None
    disposition = parsed.disposition or _disposition(str(data.get("disposition") or ""))
    raw = data.get("diagnoses")
    judged = [d for d in (_clean_diagnosis(str(x)) for x in raw if isinstance(x, (str, int, float)))
              if d] if isinstance(raw, list) else []
    diagnoses = parsed.diagnoses or judged
    filled = [name for name, before, after in (("triage level", parsed.triage_level, level),
                                               ("escalation", parsed.escalation, escalation),
                                               ("disposition", parsed.disposition, disposition),
                                               ("diagnoses", parsed.diagnoses, diagnoses)) if not before and after]
    problems = [p for p in parsed.problems if not _answered(p, filled)]
    problems.append(f"read by the judge: {', '.join(filled) if filled else 'nothing new'}")
    return ParsedAssessment(triage_level=level, escalation=escalation, disposition=disposition, diagnoses=diagnoses,
                            problems=problems, form="judge")


def _answered(problem: str, filled: list[str]) -> bool:
    """Whether a deterministic problem ("no triage level ...", "no line beginning ...") is settled by the judge."""
    return (problem.startswith("no line beginning") or any(problem.startswith(f"no {name}") for name in filled)
            or (problem.startswith("ambiguous escalation") and "escalation" in filled))


class AssessmentJudge:
    """The judge fallback for a run: one client, any number of encounters (the module docstring)."""

    def __init__(self, client: JsonAsker) -> None:
        self.client = client
        self.calls = 0
        self.failures = 0

    async def read(self, reply: str, parsed: ParsedAssessment) -> ParsedAssessment | None:
        """The assessment the judge reads in ``reply`` (merged into ``parsed``), or None: not final, or no answer."""
        self.calls += 1
        data = await self.client.ask_json(prompt(reply), keys=JUDGE_KEYS)
        if data is None:
            self.failures += 1
            return None
        return merged(parsed, data)

    async def fallback(self, reply: str, form: str | None, *, last_turn: bool = False) -> ParsedAssessment | None:
        """The judge's reading of a reply the deterministic reader found incomplete or did not find, else None.

        Args:
            reply: The agent's reply.
            form: ``assessment_form(reply)``, the deterministic reader's verdict.
            last_turn: The agent's last turn of the encounter (the judge is asked whatever the reply says).
        """
        if form is not None:
            parsed = parse_assessment(reply)
            return await self.read(reply, parsed) if needs_judge(parsed) else None
        if not looks_final(reply, last_turn=last_turn):
            return None
        return await self.read(reply, parse_assessment(reply))
