"""A case's demographics text -> the scenario's patient profile (age, sex, pregnancy, context flags).

``parse_demographics`` reads the forms case write-ups and demographics fields use:

- age: "64-year-old", "64 year old", "64 years old", "sixty-four-year-old", "64-yr-old", "64 yo", "64yo", "64 y/o",
  "aged 64", "age: 64", "Mr Jones, 64, ...", "64M", "64 F", "M 64", "F/64" (a sex letter beside the number, at the
  start of the text), "18-month-old", "6-week-old", "3 days old", "2 and a half year old", "newborn"; a short field
  may be the bare age ("45", "18 months", "2.5"). An age under a year, or given in months, weeks or days, keeps its
  precision: the profile's ``age`` is in years to two decimals (18 months -> 1.5, 6 weeks -> 0.11, 3 days -> 0.01;
  a newborn is 0) and ``age_detail`` says it as the source does ("18 months", "6 weeks", "newborn").
- an approximate age, from the text's own words when it gives no number: "in his sixties" (65; "early" 62, "late"
  68), "teenager" / "adolescent" (15), "toddler" (2), "infant" / "baby" (0.5), "school-age child" (9), "child" (8),
  "young man" / "young adult" (25), "middle-aged" (50), "elderly" (75), "octogenarian" (85) and the like.
  ``age_detail`` keeps the words ("in his sixties"), the tag ``profile:age_approximate`` and a warning say it is an
  estimate.
- sex: the nouns of the text (woman, man, female, male, girl, boy, lady, gentleman, mother, father, son, daughter,
  Mr, Mrs, Ms ...; not a relative after a possessive: "her husband"), else its pronouns (she, he, him, herself,
  himself), else a sex letter beside the age; a sex the text does not give is taken from the case's history when
  that names only one.

An age the text does not give at all is **not stated**: the schema requires a number, so the profile gets
``DEFAULT_AGE`` (40, which sets neither the pediatric nor the geriatric context) as a placeholder, with
``age_detail: not stated``, the tag ``profile:age_unknown`` and a warning in the import report; an unknown sex is
``DEFAULT_SEX`` (``other``) with ``profile:sex_unknown`` and a warning. Both the AgentClinic and the vignette
importers use it; a gestational age ("born at 33 weeks of gestation") is not the baby's age.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scenarios.importers._text import snippet

DEFAULT_AGE = 40
DEFAULT_SEX = "other"
AGE_NOT_STATED = "not stated"

_UNITS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORDS = {w: i for i, w in enumerate(_UNITS, 1)} | {w: 10 * i for i, w in enumerate(_TENS, 2)}
_WORD_NUMBER = rf"(?:(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(_UNITS[:9])}))?|{'|'.join(_UNITS)})"
_NUM = rf"(?:\d{{1,3}}(?:\.\d+)?|{_WORD_NUMBER})"
_UNIT = r"(?:years?|yrs?|months?|mos?|weeks?|wks?|days?|hours?|hrs?)"
_HALF = r"(?:\s*-?\s*and\s*-?\s*a\s*-?\s*half)"
# "64-year-old", "64 years old", "18-month-old", "sixty-four-year-old", "2 and a half year old"
AGE_PHRASE = rf"\b{_NUM}{_HALF}?\s*-?\s*{_UNIT}\s*-?\s*old\b"
_OLD = re.compile(rf"\b(?P<n>{_NUM})(?P<half>{_HALF})?\s*-?\s*(?P<unit>{_UNIT})\s*-?\s*old\b", re.I)
_YO = re.compile(r"\b(?P<n>\d{1,3})\s*-?\s*(?:y/o|y\.o\.?|yo|yrs?\.?\s*old)(?![a-z])", re.I)
# "Mr Jones, 70, presents ...", "a man, 70, with ..."
_COMMA_AGE = re.compile(r"\b(?:man|woman|male|female|boy|girl|gentleman|lady|patient|(?:mr|mrs|ms|miss)\.?\s+\w+)\s*,"
                        r"\s*(?P<n>\d{1,3})\s*(?=,|\.|$|\s+(?:presents|has|is|was|with|who|comes|reports)\b)", re.I)
_AGED = re.compile(rf"(?<!gestational )(?<!bone )\bage(?:d|:)?\s*(?P<n>\d{{1,3}}(?:\.\d+)?)(?:\s*(?P<unit>{_UNIT}))?"
                   r"(?![\d.])", re.I)
_SEX_AGE = re.compile(r"^\W*(?:(?:a|an|patient|pt)\s*:?\s+)?(?:(?P<n>\d{1,3})\s*[-/,]?\s*(?P<s>[mf])|(?P<s2>[mf])\s*"
                      r"[-/,]?\s*(?P<n2>\d{1,3}))(?![a-z\d])", re.I)
_SEX_LETTER = re.compile(r"\b\d{1,3}\s*(?:-?\s*(?:yo|y/o|y\.o\.|yrs?|years?)(?:\s*-?\s*old)?)?\s*[-/,]?\s*(?P<s>[mf])"
                         r"(?![a-z\d])|^\W*(?P<s2>[mf])\s*[-/,]?\s*\d{1,3}(?![a-z\d])", re.I)
_FIELD = re.compile(rf"^\W*(?P<n>\d{{1,3}}(?:\.\d+)?)\s*(?P<unit>{_UNIT}|[ymwd])?\.?\s*(?:old)?\s*(?:[,;]|$|\s+"
                    r"(?:male|female|man|woman|boy|girl|[mf])\b)", re.I)
_GESTATIONAL = re.compile(r"\b(?:born\s+)?(?:at|after|before)?\s*(?:the\s+)?\d{1,2}\s*(?:st|nd|rd|th)?\s*[- ]?\s*"
                          r"(?:gestational\s+)?weeks?'?\s*(?:of\s+)?(?:gestation(?:al)?(?:\s+age)?|gestational\s+week)"
                          r"|\b\d{1,2}\s*(?:st|nd|rd|th)\s+gestational\s+week", re.I)
_NEWBORN = re.compile(r"\b(?:new[- ]?born|neonate|neonatal|"
                      r"hours?\s+(?:old|post[- ]?(?:delivery|partum)|after\s+birth))\b", re.I)
_GESTATION = re.compile(r"(\d{1,2})\s*[- ]?\s*weeks?'?\s*(?:of\s+)?(?:gestation|pregnan)|\bat\s+(\d{1,2})\s*weeks\b",
                        re.I)
_DECADES = {"teens": 10, "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
            "seventies": 70, "eighties": 80, "nineties": 90}
_DECADE = re.compile(r"\bin\s+(?:his|her|their|the)\s+(?P<q>early|mid|late)?[\s-]*(?P<d>teens|twenties|thirties|"
                     r"forties|fifties|sixties|seventies|eighties|nineties|[2-9]0'?s)\b", re.I)
_VAGUE: list[tuple[str, float]] = [  # (pattern, age in years): the text's words give no number
    (r"\bteen(?:ager|age)?s?\b|\badolescen(?:t|ce)\b", 15), (r"\btoddler\b", 2), (r"\b(?:infant|baby)\b", 0.5),
    (r"\bpre-?school(?:er)?\b", 4), (r"\bschool[- ]?(?:age[d]?|boy|girl|child)\b", 9), (r"\b(?:child|kid)\b", 8),
    (r"\byoung\s+(?:man|woman|adult|lady|gentleman|male|female)\b", 25), (r"\bmiddle[- ]aged?\b", 50),
    (r"\b(?:elderly|older)\b", 75), (r"\bsexagenarian\b", 65), (r"\bseptuagenarian\b", 75),
    (r"\boctogenarian\b", 85), (r"\bnonagenarian\b", 95),
]
_FEMALE_NOUNS = re.compile(r"\b(?:female|woman|women|girl|lady|mother|daughter|wife|sister|grandmother|mrs|ms|miss|"
                           r"pregnant)\b", re.I)
_MALE_NOUNS = re.compile(r"\b(?:male|man|men|boy|gentleman|father|son|husband|brother|grandfather|mr)\b", re.I)
_FEMALE_PRONOUNS = re.compile(r"\b(?:she|her|herself)\b", re.I)
_MALE_PRONOUNS = re.compile(r"\b(?:he|his|him|himself)\b", re.I)
_SOMEONE_ELSE = re.compile(r"\b(?:his|her|their|my|your)\s+(?:[\w-]+\s+){0,2}(?:husband|wife|partner|mother|father|son|"
                           r"daughter|brother|sister|parents?|boyfriend|girlfriend|grandmother|grandfather)\b", re.I)

# In a case's history only the patient's own pronouns and nouns say the sex: "the mother", "her pregnancy"
# and "his father" are about the parents of a newborn, not the patient.
_HISTORY_FEMALE = re.compile(r"\b(?:she|girl|woman|lady)\b", re.I)
_HISTORY_MALE = re.compile(r"\b(?:he|boy|man|gentleman)\b", re.I)


@dataclass(frozen=True)
class Age:
    """An age read from a text: in years (two decimals below two years), as the source says it, and how sure."""

    years: float
    detail: str | None = None
    approximate: bool = False


def _number(text: str) -> float:
    low = text.lower().replace("-", " ")
    if low[:1].isdigit():
        return float(low)
    return float(sum(_NUMBER_WORDS[w] for w in low.split()))


def _age(n: float, unit: str | None, half: bool = False) -> Age | None:
    n += 0.5 if half else 0
    u = (unit or "y").lower()
    if u.startswith(("y", "yr")):
        years, word = n, None
    elif u.startswith("mo") or u == "m":
        years, word = n / 12, "month"
    elif u.startswith("w"):
        years, word = n * 7 / 365.25, "week"
    elif u.startswith("d"):
        years, word = n / 365.25, "day"
    else:  # hours
        years, word = 0.0, "hour"
    if not 0 <= years <= 120:
        return None
    if word is None:
        return Age(int(years) if years == int(years) else years)
    return Age(round(years, 2), f"{n:g} {word}{'' if n == 1 else 's'}")


def read_age(text: str, *, field: bool = False, vague: bool = True) -> Age | None:
    """The age a text states ("64-year-old", "64 yo", "aged 64", "64M", "18-month-old", "newborn"), else None.

    ``field``: the text is a demographics field, which may be the bare age ("45", "18 months"). ``vague``: read an
    approximate age from words ("in his sixties", "teenager") when there is no number.
    """
    text = _GESTATIONAL.sub(" ", text)
    for pattern in (_OLD, _YO, _AGED, _COMMA_AGE):
        if m := pattern.search(text):
            unit = m.groupdict().get("unit")
            return _age(_number(m.group("n")), unit, bool(m.groupdict().get("half")))
    if m := _SEX_AGE.search(text):
        return _age(float(m.group("n") or m.group("n2")), None)
    if field and (m := _FIELD.search(text)):
        return _age(float(m.group("n")), m.group("unit"))
    if _NEWBORN.search(text):
        return Age(0, "newborn")
    return _vague_age(text) if vague else None


def find_age(text: str) -> str | None:
    """The first age phrase a text states with a number ("64-year-old", "64 yo", "aged 64"), as written, else None."""
    text = _GESTATIONAL.sub(" ", text)
    found = [m for m in (p.search(text) for p in (_OLD, _YO, _AGED, _COMMA_AGE)) if m]
    return min(found, key=lambda m: m.start()).group(0) if found else None


def _vague_age(text: str) -> Age | None:
    if m := _DECADE.search(text):
        decade = m.group("d").lower()
        base = _DECADES.get(decade) or int(decade[0]) * 10
        low, high = (13, 19) if base == 10 else (base, base + 9)
        q = (m.group("q") or "").lower()
        years = {"early": low + 1, "late": high - 1}.get(q, (low + high + 1) // 2)
        return Age(years, " ".join(m.group(0).split()), approximate=True)
    for pattern, estimate in _VAGUE:
        if m := re.search(pattern, text, re.I):
            return Age(estimate, m.group(0).lower(), approximate=True)
    return None


def sex_in(text: str) -> str | None:
    """The sex a text gives its subject, or None when it gives none or both.

    Its nouns ("woman", "Mr", "son"; not "her husband"), else its pronouns, else a sex letter beside the age
    ("64M", "F 34").
    """
    own = _SOMEONE_ELSE.sub(" ", text)
    for female_re, male_re in ((_FEMALE_NOUNS, _MALE_NOUNS), (_FEMALE_PRONOUNS, _MALE_PRONOUNS)):
        female, male = bool(female_re.search(own)), bool(male_re.search(own))
        if female != male:
            return "female" if female else "male"
        if female and male:
            return None
    for m in _SEX_LETTER.finditer(text):  # "64M", "F 34"; not a temperature ("a fever of 101 F")
        if not re.search(r"(?:temp\w*|fever|pyrexia|of|to|at|[\d.°])\s*$", text[:m.start()], re.I):
            return "female" if (m.group("s") or m.group("s2")).lower() == "f" else "male"
    return None


def history_sex(history: str) -> str | None:
    """The sex a case's history gives the patient: the only one its he / she / boy / girl / man / woman name."""
    female, male = bool(_HISTORY_FEMALE.search(history)), bool(_HISTORY_MALE.search(history))
    return "female" if female and not male else "male" if male and not female else None


def parse_demographics(text: Any, history: Any = None) -> tuple[dict[str, Any], list[str], list[str]]:
    """``Demographics`` -> (patient_profile data, warnings, tags); see the module docstring.

    ``history`` (the case's own text) gives the sex when the demographics do not ("he", "she", "boy", "girl").
    """
    demo = text if isinstance(text, str) else ""
    warnings: list[str] = []
    tags: list[str] = []
    age = read_age(demo, field=len(demo.split()) <= 6)
    if age is None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: the age is not stated; {DEFAULT_AGE} is a placeholder "
                        f"(age_detail '{AGE_NOT_STATED}', tag profile:age_unknown)")
        tags.append("profile:age_unknown")
        age = Age(DEFAULT_AGE, AGE_NOT_STATED)
    elif age.approximate:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no number for the age; {age.years:g} estimated from "
                        f"{age.detail!r} (tag profile:age_approximate)")
        tags.append("profile:age_approximate")
    sex = sex_in(demo)
    if sex is None and isinstance(history, str) and (sex := history_sex(history)) is not None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no sex given; {sex} from the case's history")
    if sex is None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no sex found, using {DEFAULT_SEX!r}")
        tags.append("profile:sex_unknown")
        sex = DEFAULT_SEX
    profile: dict[str, Any] = {"age": age.years, "sex": sex}
    if age.detail is not None:
        profile["age_detail"] = age.detail
    context: dict[str, bool] = {}
    if sex == "female" and re.search(r"\bpregnan", demo, re.I):
        profile["pregnant"] = True
        context["pregnancy"] = True
        if (g := _GESTATION.search(demo)) and 1 <= (weeks := int(g.group(1) or g.group(2))) <= 43:
            profile["gestation_weeks"] = weeks
    if age.years < 18:
        context["pediatric"] = True
    if age.years >= 65:
        context["geriatric"] = True
    if context:
        profile["context"] = context
    return profile, warnings, tags
