"""Whether an examination finding, a vital sign or a test result is abnormal (for ``critical``).

``abnormal(text, name, adult)`` reads one finding or result (``text``, with the finding's or test's ``name`` when
the text is only a value) clause by clause. A clause is abnormal when:

- it has a word of an abnormal finding not negated in the clause (``_ABNORMAL``: elevated, reduced, positive,
  mass, effusion, free fluid, obstruction, crackles, murmur, count fingers, ...; the suffixes of disease and
  abnormal-value words: -megaly, -itis, -emia, -penia, -cytosis, -uria, hyper-, hypo-, tachy-, brady-), or the
  absence of something normally there ("no light perception", "absent pulses", "no bowel sounds");
- it points at a finding ("shows", "reveals", "consistent with", "present", "growth of") and says nothing normal
  ("clear", "normal", "intact", ...; a normal structure that is present, such as bowel sounds or pulses, is normal);
- a value is outside the reference range the text gives ("8 g/dL (reference 12-16)", "reference range: 13-17"), or
  flagged ("(H)", "(L)", "high", "low");
- a measure with a standard threshold is beyond it (``_THRESHOLDS``): FEV1/FVC below 0.70, FEV1, FVC or DLCO below
  80% of predicted, ejection fraction below 50%, oxygen saturation below 94%, ankle-brachial index below 0.9,
  T-score below -1, intraocular pressure above 21 mmHg, HbA1c of 6.5% or more, visual acuity worse than 20/40
  (6/12), a temperature of 38.0 C (100.4 F) or more or below 35 C, a blood pressure of 140/90 or more; and, for an
  adult (``adult``), a systolic pressure below 90, a heart rate above 100 or below 50, a respiratory rate above 20 or
  below 10.

An entirely normal text ("Normal", "Within normal limits", "Clear", "No abnormalities detected") is not abnormal.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_ABNORMAL = re.compile(
    r"\b(?:elevated|elevations?|raised|high|increased|low|decreased|reduced|diminished|depressed|positive|abnormal\w*|"
    r"enlarged|enlargement|swollen|swelling|mass|masses|lesions?|nodules?|nodular|effusions?|consolidat\w*|opacit\w*|"
    r"infiltrat\w*|fractures?|fractured|tender(?:ness)?|rash|murmurs?|crackles|crepitations?|crepitus|rales|wheez\w*|"
    r"rhonchi|stridor|absent|weak|weakness|distended|distension|distention|guarding|rigid\w*|rebound|jaundice\w*|"
    r"icter\w*|pallor|pale|cyanos\w*|cyanotic|edema|oedema|edematous|erythema\w*|ulcer\w*|deformit\w*|atrophy|"
    r"atrophic|ptosis|nystagmus|dilat\w*|thicken\w*|stenos\w*|stenotic|occlu\w*|thromb\w*|embol\w*|infarct\w*|"
    r"ischa?emi\w*|h(?:a)?emorrhag\w*|bleed\w*|inflam\w*|necro\w*|malignan\w*|tumou?rs?|carcinoma\w*|metasta\w*|"
    r"cysts?|cystic|stones?|calculi|obstruct\w*|irregular\w*|asymmetr\w*|exudat\w*|vesic\w*|papul\w*|plaques?|"
    r"pustul\w*|petechia\w*|purpura|bruis\w*|free (?:fluid|air)|fluid collections?|air[- ]fluid|pneumothorax|"
    r"collapse[ds]?|atelecta\w*|clubbing|dull(?:ness)?|bruits?|gallops?|rubs?|s3|s4|thrills?|heaves?|prominent|"
    r"impaired|impairment|limited|restricted|prolonged|delayed|blunted|poor\w*|loss of|lost|fail\w*|deficits?|"
    r"narrow\w*|deviat\w*|displace\w*|herniat\w*|ruptur\w*|tears?|torn|dissection|aneurysm\w*|perforat\w*|"
    r"abscess\w*|purulent|pus|polyps?|atypical|dysplas\w*|blasts?|spikes?|epileptiform|slowing|fibrillation|"
    r"flutter|block|inversions?|q waves?|st (?:elevation|depression)|sclero\w*|fibros\w*|calcifi\w*|"
    r"echogenic\w*|mottl\w*|fluctuan\w*|reactive|count(?:ing)? fingers|finger count\w*|hand (?:motions?|movements?)|"
    r"light perception|grew|febrile|fever|compress\w*|pain\w*|"
    r"\w+megaly|\w+itis|\w+a?emia|\w+penia|\w+cytosis|\w+uria|\w+philia|"
    r"hyper\w+|hypo\w+|tachy\w+|brady\w+)\b"
    r"|\((?:h|l|high|low|abnormal)\)", re.I)
# Words of a neutral report that point at a finding: abnormal when the clause says nothing normal.
_POINTER = re.compile(r"\b(?:shows?|showed|showing|reveal\w*|demonstrat\w*|consistent with|suggestive of|suggest\w*|"
                      r"indicat\w*|compatible with|in keeping with|seen|noted|detected|identified|found|present|"
                      r"presence|evidence of|isolated|growth of|reported)\b", re.I)
_NORMAL_WORD = re.compile(r"\b(?:normal\w*|unremarkable|clear|intact|wnl|within (?:normal )?(?:limits|range)|regular|"
                          r"symmetric\w*|equal|appropriate|physiologic\w*|sinus rhythm|negative|benign|stable|healthy|"
                          r"good|adequate|unchanged|non-?tender|soft|resonant|afebrile|reassuring|nonreactive|"
                          r"non-?reactive)\b", re.I)
# Normal structures and signs: present is normal, absent is abnormal.
_NORMALLY_PRESENT = (r"(?:bowel sounds|peristalsis|pulses?|reflex(?:es)?|red reflex|breath sounds|air entry|"
                     r"light perception|sensation|fetal (?:movements?|heart (?:sounds|tones|rate))|heart sounds)")
_ABSENT_NORMAL = re.compile(rf"\b(?:no|absent|absence of|loss of|without)\s+(?:(?:audible|palpable|detectable|"
                            rf"appreciable|peripheral|distal|pedal|radial|femoral|carotid|popliteal|dorsalis pedis|"
                            rf"deep tendon|ankle|knee|patellar|corneal|gag|pupillary)\s+){{0,2}}{_NORMALLY_PRESENT}\b|"
                            rf"\b{_NORMALLY_PRESENT}\s+(?:are\s+|is\s+)?(?:absent|not (?:heard|felt|palpable|present))",
                            re.I)
_PRESENT_NORMAL = re.compile(rf"\b{_NORMALLY_PRESENT}\b", re.I)
_NORMAL_ONLY = re.compile(r"^(?:\W*(?:normal|within normal (?:limits|range)|wnl|unremarkable|negative|none|nil|"
                          r"no abnormalit\w*(?: detected)?|clear|intact|non[- ]?tender|soft|regular|symmetric(?:al)?|"
                          r"normothermic|afebrile|not detected|no growth|nad|non-?reactive)\W*)+$", re.I)
_NEGATED = re.compile(r"\bno\s+(?:\w+\s+){0,3}(?:seen|detected|noted|present|found)\b|\b(?:no|not|without|absence of|"
                      r"negative for|nor|never|denies|free of|resolved|ruled out|unlikely)\b", re.I)
# Compounds whose "high" or "low" says nothing about the result.
_NEUTRAL_COMPOUNDS = re.compile(r"\b(?:high|low)[- ](?:resolution|power|dose|sensitivity|field|risk (?:factors?|"
                                r"screen\w*))\b|\bcomplete blood count\b|\bblood count\b|\bbone marrow\b", re.I)

_NUMBER = r"(-?\d+(?:\.\d+)?)"
_REFERENCE = re.compile(
    rf"{_NUMBER}\s*[^\d;()]{{0,25}}?[(\[;,]?\s*\b(?:reference|ref\.?|normal|nl|range|ref range)\s*(?:range|values?|"
    rf"interval)?\s*[:=]?\s*(?:is\s+)?{_NUMBER}\s*(?:-|–|to)\s*{_NUMBER}"
    rf"|{_NUMBER}\s*[a-zA-Zµμ/%^*.0-9 ]{{0,20}}?\(\s*{_NUMBER}\s*(?:-|–)\s*{_NUMBER}\s*\)", re.I)
_REFERENCE_BOUND = re.compile(
    rf"{_NUMBER}\s*[^\d;()]{{0,25}}?[(\[;,]?\s*\b(?:reference|ref\.?|normal|nl|range|ref range)\s*(?:range|values?)?\s*"
    rf"[:=]?\s*(?P<op><|>|≤|≥|less than|greater than|under|over|below|above)\s*{_NUMBER}", re.I)


def _number_after(text: str, name: re.Pattern[str]) -> float | None:
    """The first number within a few words after ``name`` in ``text`` (``FEV1/FVC ratio of 0.62`` -> 0.62)."""
    m = name.search(text)
    if not m:
        return None
    tail = re.match(rf"[^\d;-]{{0,30}}?(?:of|is|was|at|:|=)?\s*{_NUMBER}", text[m.end():])
    return float(tail.group(1)) if tail else None


def _pct(v: float) -> float:
    return v * 100 if v <= 1.5 else v


def _visual_acuity(text: str) -> bool:
    for num, den in re.findall(r"\b(20|6)\s*/\s*(\d{1,3})\b", text):
        if int(den) > (40 if num == "20" else 12):
            return True
    return False


def _temperature(v: float) -> bool:
    return (v >= 100.4 or v < 95) if v > 45 else (v >= 38.0 or v < 35.0)


def _blood_pressure(text: str, adult: bool) -> bool:
    """140/90 or more at any age (a child's limits are lower still); a systolic below 90 in an adult."""
    m = re.search(r"\b(\d{2,3})\s*/\s*(\d{2,3})\b", text)
    if not m:
        return False
    systolic, diastolic = int(m.group(1)), int(m.group(2))
    return systolic >= 140 or diastolic >= 90 or (adult and systolic < 90)


# (the measure's name, whether a value is abnormal, adults only)
_THRESHOLDS: list[tuple[re.Pattern[str], Callable[[float], bool], bool]] = [
    (re.compile(r"\bfev1?\s*(?:/|to|:)\s*fvc\b|\bfev1\s+fvc\b|\btiffeneau\b", re.I), lambda v: _pct(v) < 70, False),
    (re.compile(r"(?<![/:])\b(?:fev1|fvc|dlco|tlco)\b(?!\s*(?:/|to|:)\s*fvc)(?=[^;]*(?:%|percent|predicted))", re.I),
     lambda v: v < 80, False),
    (re.compile(r"\bejection fraction\b|\blvef\b|\bef\b", re.I), lambda v: _pct(v) < 50, False),
    (re.compile(r"\boxygen saturation\b|\bspo2\b|\bsao2\b|\bo2 sat\w*|\bpulse oximetry\b", re.I),
     lambda v: 50 <= v < 94, False),
    (re.compile(r"\bankle[- ]brachial\b|\babi\b", re.I), lambda v: v < 0.9, False),
    (re.compile(r"\bt[- ]score\b", re.I), lambda v: v < -1.0, False),
    (re.compile(r"\bintraocular pressure\b|\biop\b", re.I), lambda v: v > 21, False),
    (re.compile(r"\bhba1c\b|\ba1c\b|\bglycated ha?emoglobin\b", re.I), lambda v: 6.5 <= v <= 20, False),
    (re.compile(r"\btemperature\b|\btemp\b", re.I), _temperature, False),
    (re.compile(r"\bheart rate\b|\bpulse rate\b|\bhr\b|\bpulse\b(?=\W{0,3}\d{2,3}\b)", re.I),
     lambda v: v > 100 or v < 50, True),
    (re.compile(r"\brespiratory rate\b|\brr\b", re.I), lambda v: v > 20 or v < 10, True),
]


def _beyond_threshold(text: str, adult: bool) -> bool:
    if re.search(r"\bvisual acuity\b|\bvision\b|\bacuity\b", text, re.I) and _visual_acuity(text):
        return True
    if re.search(r"\bblood pressure\b|\bbp\b", text, re.I) and _blood_pressure(text, adult):
        return True
    for name, beyond, adults_only in _THRESHOLDS:
        if adults_only and not adult:
            continue
        v = _number_after(text, name)
        if v is not None and beyond(v):
            return True
    return False


def _outside_reference(text: str) -> bool:
    for m in _REFERENCE.finditer(text):
        v, lo, hi = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5), m.group(6))
        if not float(lo) <= float(v) <= float(hi):
            return True
    for m in _REFERENCE_BOUND.finditer(text):
        v, bound, op = float(m.group(1)), float(m.group(3)), m.group("op").lower()
        below = op in ("<", "≤", "less than", "under", "below")
        if (below and v > bound) or (not below and v < bound):
            return True
    return False


def _clause_abnormal(clause: str) -> bool:
    if _ABSENT_NORMAL.search(clause):
        return True
    c = _NEUTRAL_COMPOUNDS.sub(" ", clause)
    if _ABNORMAL.search(c) and not _NEGATED.search(c):
        return True
    if _POINTER.search(c) and not _NEGATED.search(c) and not _NORMAL_WORD.search(c):
        return not _PRESENT_NORMAL.search(c)  # "bowel sounds present" is normal
    return False


_BARE = re.compile(r"^\W*(?:(?P<yes>present|yes|positive|seen|detected|found|reactive)|"
                   r"(?P<no>absent|not present|no|none|negative|not seen|not detected|not found|not palpable))\W*$",
                   re.I)


def _bare_value(t: str, name: str) -> bool | None:
    """A value that is only "present" / "absent" (or yes / no, positive / negative): abnormal or not by what is named.

    A sign that is abnormal when there ("Murmur: present", "Tenderness: absent"), a structure that is normal when there
    ("Bowel sounds: present", "Pulses: absent"); of anything else, present is abnormal and absent is not.
    """
    m = _BARE.match(t)
    if not m:
        return None
    there = m.group("yes") is not None
    if _NORMAL_WORD.search(name):  # "Within normal limits: yes"
        return not there
    return not there if _PRESENT_NORMAL.search(name) and not _ABNORMAL.search(name) else there


def abnormal(text: str, name: str = "", adult: bool = True) -> bool:
    """Whether a finding or result is abnormal (see the module docstring); ``name`` is the finding's or test's name."""
    t = re.sub(r"(\d),(\d{3})\b", r"\1\2", " ".join(text.split()))  # 9,500 -> 9500
    if (bare := _bare_value(t, name)) is not None:
        return bare
    # "non-tender", "nonreactive" say nothing abnormal; "normocalcaemia" is normal
    t = re.sub(r"\bnormo\w+", "normal", re.sub(r"\bnon-?\w+", "", t, flags=re.I), flags=re.I)
    if not t or _NORMAL_ONLY.match(t):
        return False
    named = f"{name}: {t}" if name else t
    if _outside_reference(t) or _beyond_threshold(named, adult):
        return True
    return any(_sentence_abnormal(s) for s in re.split(r"[;.](?!\d)|\bbut\b|\bwhile\b|\balthough\b", t) if s.strip())


def affirmed(text: str) -> list[str]:
    """What a finding affirms: each clause up to its negation.

    "Splenomegaly without hepatomegaly" -> "Splenomegaly"; "No evidence of pneumonia" -> nothing.
    """
    out = []
    for clause in re.split(r"[;,.](?!\d)|\band\b|\bbut\b|\bor\b", text):
        negation = _NEGATED.search(clause)
        part = clause[:negation.start()] if negation else clause
        if part.strip():
            out.append(part)
    return out


_CLAUSE_SPLIT = re.compile(r",|\band\b|\bor\b|\bnor\b|(?<!consistent )(?<!compatible )(?<!keeping )\bwith\b")


def _sentence_abnormal(sentence: str) -> bool:
    """Clause by clause; a negation carries along a list ("No murmurs, rubs, or gallops")."""
    carry = False
    for clause in _CLAUSE_SPLIT.split(sentence):
        if not clause.strip():
            continue
        negation = _NEGATED.search(clause)
        if negation and not _ABSENT_NORMAL.search(clause):
            carry = True  # what follows the negation is negated; a finding named before it is not
            if _ABNORMAL.search(_NEUTRAL_COMPOUNDS.sub(" ", clause[:negation.start()])):
                return True
            continue
        if carry and len(clause.split()) <= 8:  # a further item of the negated list ("no murmurs, rubs, or gallops")
            continue
        carry = False
        if _clause_abnormal(clause):
            return True
    return False
