"""A case's demographics text -> the scenario's patient profile (age, sex, pregnancy, context flags).

``parse_demographics`` reads "45-year-old male", "6-month-old girl", "72 F", "pregnant woman, 32 weeks",
"Newborn, female"; a sex the text does not give is taken from the case's history when that names only one.
What cannot be read defaults to ``DEFAULT_AGE`` / ``DEFAULT_SEX`` with a warning and a ``profile:*_unknown``
tag. Both the AgentClinic and the vignette importers use it; the rules are in ``_agentclinic.py``'s docstring
(``patient_profile``).
"""

from __future__ import annotations

import re
from typing import Any

from scenarios.importers._text import snippet

DEFAULT_AGE = 40
DEFAULT_SEX = "other"

_AGE_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*[- ]?\s*(years?|yrs?|y/?o|months?|mos?|weeks?|wks?|days?)\b(?:[- ]?old)?",
                       re.I)
_AGE_BARE = re.compile(r"(?:\bage[d:]?\s*|^\s*)(\d{1,3})(?:\s*[mf]\b|\s*,|\s*$)", re.I)
_FEMALE = re.compile(r"(?:\b|(?<=\d))(?:female|woman|women|girl|lady|mother|she|her|pregnant|f)\b", re.I)
_MALE = re.compile(r"(?:\b|(?<=\d))(?:male|man|men|boy|gentleman|father|he|his|m)\b", re.I)
_GESTATIONAL = re.compile(r"\b(?:born\s+)?(?:at|after|before)?\s*(?:the\s+)?\d{1,2}\s*(?:st|nd|rd|th)?\s*[- ]?\s*"
                          r"(?:gestational\s+)?weeks?'?\s*(?:of\s+)?(?:gestation(?:al)?(?:\s+age)?|gestational\s+week)"
                          r"|\b\d{1,2}\s*(?:st|nd|rd|th)\s+gestational\s+week", re.I)
_NEWBORN = re.compile(r"\b(?:new[- ]?born|neonate|neonatal|"
                      r"hours?\s+(?:old|post[- ]?(?:delivery|partum)|after\s+birth))\b", re.I)
_GESTATION = re.compile(r"(\d{1,2})\s*[- ]?\s*weeks?'?\s*(?:of\s+)?(?:gestation|pregnan)|\bat\s+(\d{1,2})\s*weeks\b",
                        re.I)


# In a case's history only the patient's own pronouns and nouns say the sex: "the mother", "her pregnancy"
# and "his father" are about the parents of a newborn, not the patient.
_HISTORY_FEMALE = re.compile(r"\b(?:she|girl|woman|lady)\b", re.I)
_HISTORY_MALE = re.compile(r"\b(?:he|boy|man|gentleman)\b", re.I)


def _sex_in(text: str, female_re: re.Pattern[str] = _FEMALE, male_re: re.Pattern[str] = _MALE) -> str | None:
    """The sex a text names, when it names only one ("a 3-day-old boy", "she has been feeding poorly")."""
    female, male = len(female_re.findall(text)), len(male_re.findall(text))
    return "female" if female and not male else "male" if male and not female else None


def parse_demographics(text: Any, history: Any = None) -> tuple[dict[str, Any], list[str], list[str]]:  # noqa: C901
    """``Demographics`` -> (patient_profile data, warnings, tags); see the module docstring.

    ``history`` (the case's own text) gives the sex when the demographics do not ("he", "she", "boy", "girl").
    """
    demo = text if isinstance(text, str) else ""
    warnings: list[str] = []
    tags: list[str] = []
    age: float | None = None
    detail: str | None = None
    demo_age = _GESTATIONAL.sub(" ", demo)  # "born at 33 weeks of gestation" is not the baby's age
    if m := _AGE_UNIT.search(demo_age):
        n, unit = float(m.group(1)), m.group(2).lower()
        age = n / 12 if unit.startswith("mo") else n / 52 if unit.startswith("w") else n / 365 if unit.startswith(
            "d") else n
        if age < 1:
            word = {"mo": "month", "w": "week", "d": "day"}[next(k for k in ("mo", "w", "d") if unit.startswith(k))]
            detail = f"{m.group(1)} {word}{'' if n == 1 else 's'}"
    elif _NEWBORN.search(demo):
        age, detail = 0.0, "newborn"
    elif m := _AGE_BARE.search(demo_age):
        age = float(m.group(1))
    if age is not None and not 0 <= age <= 120:
        age = None
    if age is None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no age found, using {DEFAULT_AGE}")
        tags.append("profile:age_unknown")
        age = DEFAULT_AGE
    age = 0 if age < 1 else round(age)  # newborns and infants: age 0, the stated age in age_detail
    sex = _sex_in(_AGE_UNIT.sub(" ", demo))
    if sex is None and isinstance(history, str) and \
            (sex := _sex_in(history, _HISTORY_FEMALE, _HISTORY_MALE)) is not None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no sex given; {sex} from the case's history")
    if sex is None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no sex found, using {DEFAULT_SEX!r}")
        tags.append("profile:sex_unknown")
        sex = DEFAULT_SEX
    profile: dict[str, Any] = {"age": age, "sex": sex}
    if detail is not None:
        profile["age_detail"] = detail
    context: dict[str, bool] = {}
    if sex == "female" and re.search(r"\bpregnan", demo, re.I):
        profile["pregnant"] = True
        context["pregnancy"] = True
        if g := _GESTATION.search(demo):
            weeks = int(g.group(1) or g.group(2))
            if 1 <= weeks <= 43:
                profile["gestation_weeks"] = weeks
    if age < 18:
        context["pediatric"] = True
    if age >= 65:
        context["geriatric"] = True
    if context:
        profile["context"] = context
    return profile, warnings, tags
