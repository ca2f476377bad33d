"""Diagnosis matching that credits a given diagnosis only when it *names* the expected condition.

``names_condition(given, names, side)`` decides whether one diagnosis string from the agent's assessment
(already cleaned of numbering, labels and most hedges by ``sim.encounter.assessment``) names the condition
whose canonical name is ``names[0]``, whose synonyms are ``names[1:]`` and which is on ``side`` (left, right
or None). ``match_diagnoses`` applies it to a scenario's ranked ``expected.diagnoses`` (their ``side``
fields); ``synonym_problems`` lints a ``Diagnosis`` for synonyms that would credit a vague or a different,
benign answer, or the other side.

Both the given phrase and every name are normalised first (``scorers._diagnosis_text``): spelling, plurals,
standard synonyms and abbreviations ("upper GI bleeding" = "upper gastrointestinal haemorrhage", "NSTEMI" =
"non-ST elevation MI", "infective" = "infectious", "testicle" = "testicular", "L" = "left"). Each is tried in
several word orders: as written, with "X of [side] ORGAN" read as "[side] ORGAN X" ("torsion of the left testis" =
"left testicular torsion", ``of_variant``) and, for the given phrase, with a side moved to the start of its
clause ("twisted left testis" = "left twisted testis", ``side_first``); a name's own hedges are ignored
("possible sepsis" is the name "sepsis").

Matching (``names_condition``)
------------------------------
A given diagnosis names the condition when, for some name ``n`` in ``names``:

1. **Whole phrase**: the given phrase, boundaries ignored and leading/trailing hedges removed, equals
   ``n`` (and its qualifiers do not contradict, rule 4). Hedges: likely, most/more/very/highly likely,
   probable, probably, possible, possibly, suspected, presumed, presumptive, provisional, query (?),
   questionable, working/differential diagnosis (of), diagnosis of, impression of, consider(ing),
   concern(ing) for, suspicion of/for, suspicious of/for, high probability/likelihood of, features
   (suggestive) of, suggestive of, (clinical) picture of, consistent with, in keeping with, compatible
   with, typical of, evolving, rule out, r/o, to/need to/must rule out, (need) to exclude, exclude,
   cannot/can't exclude, cannot/can't rule out, don't/must not/not to miss. A trailing hedge ends the
   naming: "Appendicitis ?perforated", "PE likely given recent surgery" name the condition.
   A rule-out is a *consideration*: in a differential "rule out X", "r/o X", "X to be excluded",
   "X not excluded" and "X cannot be excluded" all mean X is being considered, so they count (and
   ``sim.encounter.assessment`` strips "Must rule out:" labels before this function sees the name anyway).
   The past tense is different: "ruled out X", "X ruled out", "X excluded" mean X is *not* the
   diagnosis and never count. So do negations ("not X", "no evidence of X", "X - probably not") and a
   stated improbability ("X unlikely", "unlikely to be X", "X less likely", "low suspicion for X"): the
   writer has judged against X, and counting it would credit the answer that dismissed the diagnosis.
2. **Head noun phrase**: otherwise ``n`` must occur in the given phrase as whole words, not across a
   clause boundary, as the head of its noun phrase:

   * *Before* it, back to the start of its clause (the phrase start, a boundary, or a connective:
     or, and, nor, vs, versus, v, /, query; with, due to, secondary to, caused by, from, because of,
     complicated by, leading to, causing, related to, triggered by, precipitated by, consistent with,
     compatible with, in keeping with; in, on, after, following, during, at, post; without), only
     modifiers may stand. After the leading hedges are removed they must not contain: a negation
     or exclusion (not, no, non, never, without, ruled out, excluded, negative for, unlikely, less
     likely, not likely, improbable, doubtful, doubt, absent, absence of, free of, resolved, history of,
     history, hx, previous, prior, past, old, remote, treated, status post, mimic(king), pseudo,
     rather than, instead of, other than, except, neither, low suspicion/probability/likelihood); a
     preposition (of, for, about, to, at, by, into,
     than, like, over, under, towards, regarding, re) - then ``n`` is the object of a preposition, not
     the head ("history of MI", "risk of sepsis", "torsion of the appendix testis" vs "testis"); a word
     that makes it a different structure (appendix, appendage, appendices, hydatid: "appendix testis").
     Contrasting modifiers are judged by rule 4.
   * The clause must be a *naming* clause: the first clause, one after a boundary (an aside or
     restatement: "Intracranial haemorrhage (SAH)"), after an alternative ("NSTEMI vs unstable angina")
     or after a cause/complication connective ("Chest pain secondary to ACS", "UTI with sepsis"). A
     clause after a context connective (in, on, after, following, during, at, post, given, in view of,
     based on, despite, failing, not responding to, unresponsive to, refractory to) describes a setting,
     not a diagnosis, and one after "without" is negated.
   * Negation carries forward along a chain of clauses linked by alternatives or cause connectives:
     "no evidence of pneumothorax or PE" names neither, "not consistent with ACS" does not name ACS,
     "without sepsis or shock" names neither; and across a boundary from a clause that is nothing but
     a negation, a label: "Ruled out: ACS", "Excluded - PE".
   * *After* it, only this may follow before the end of the phrase, a boundary or a connective: laterality
     (left, right, bilateral, unilateral, sided, side, both), trailing hedges (likely, probable, possible,
     suspected, presumed, query, most, more, very, highly), copulas (is, was), "until proven otherwise",
     and "of" + laterality or unknown/undetermined/uncertain/unclear + the rest of the clause ("cellulitis
     of the right leg", "sepsis of unknown source"); or copulas and modals leading to an exclusion word
     (judged next: "ACS is unlikely", "ACS to be ruled out"). Any other word means ``n`` modifies what
     follows ("appendix testis", "ACS features", "torsion of the appendix testis" vs "torsion").
   * Then, past boundaries, hedges and copulas (is, are, was, were, be, been, being, has, have, had, now,
     already, considered, felt, thought, deemed, clinically, essentially, effectively, largely, also,
     very, much, far), and past alternatives ("ACS or PE ruled out"), it must not be followed by an
     exclusion: ruled out, excluded, unlikely, less likely, not likely, improbable, doubtful, negative,
     not suspected, not supported, not favoured/favored, not present, absent, resolved, not found, not
     seen, not the diagnosis, not the cause - unless a modal or a negation stands between them (to,
     must, should, need(s), cannot, can't, can, not, yet, still, will, may, might, until: "ACS to be
     ruled out", "ACS not excluded", "torsion until excluded"); a final bare "not" is an exclusion too
     ("PE - probably not").
3. **Generic names** (``GENERIC``: a symptom, sign, finding, organ or category word such as "fever",
   "torsion", "hypertension", "chest pain", "aneurysm", "appendix") are held to more: they match only as
   the whole phrase, or as a head whose modifiers are all neutral (``NEUTRAL``: acute, severe, mild,
   moderate, high, low, uncontrolled, poorly controlled, known, new onset, recurrent, persistent,
   left, right, bilateral ...) with nothing after it but laterality before the end or a boundary. So
   "viral fever" does not name a condition listed as "fever", "abdominal aortic aneurysm" does not name
   one listed as "aneurysm", but "poorly controlled hypertension" names one listed as "hypertension".
   ``GENERIC`` holds symptoms and signs (pain, fever, headache, chest pain, bleeding, rash, syncope,
   anxiety ...), findings (hypertension, hyperglycaemia, low blood sugar ...), categories, mechanisms
   and lesions (infection, viral illness, injury, fracture, torsion, aneurysm, dissection, ulcer, gangrene, cyst,
   shock ...), and an organ or adjective used as a noun (appendix, ectopic). A broad name of a real
   diagnosis is not generic: sepsis, pneumonia, meningitis, migraine, conjunctivitis.

4. **Qualifiers that contradict** (``scorers._diagnosis_qualifiers``): the words that qualify the match -
   its clause up to where the name's phrase ends, each following aside made only of location words, hedges
   and qualifier words ("Stroke - right MCA territory", "Torsion (L)", "Asthma, moderate"), and a
   following "with / without" qualifier ("without severe features", "without aura") - must not
   *contradict* the expected diagnosis: its canonical name, the name matched and its ``side``. Two
   qualifier sets contradict when they hold values of one contrast class (``CONTRASTS``) and share none:

   * **side**: left / right (L, R, Lt, Rt, left-sided; bilateral is both). The expected side is the
     ``side`` field, else what the canonical name says. So "right MCA infarct", "Stroke - right hemisphere",
     "Pyelonephritis (R)" do not name a left-sided diagnosis; "left testicular torsion", "torsion of the
     left testis" and an answer that names no side do. The side is the *lesion's*: a stroke's side is its
     hemisphere ("right-sided stroke" is a right-hemisphere stroke, as clinicians write it), and a side in
     another clause describes something else ("Stroke with right-sided weakness" names no side). "Left" in
     a heart structure's name (left ventricular, left anterior descending, right bundle) is no side.
   * **subtype**, mutually exclusive kinds of one condition: ST elevation / non-ST elevation / unstable
     angina; MI type 1 (an ACS, a STEMI) / type 2 / type 3; infarct territory (anterior, inferior,
     lateral, posterior, septal; anterolateral is two); type 1 / type 2 / type A / type B; ischaemic
     (thrombotic, embolic, lacunar) / haemorrhagic stroke; ectopic (tubal, extrauterine) / intrauterine
     pregnancy; threatened / inevitable / incomplete / complete / missed / septic miscarriage; with /
     without aura (classic / common migraine); passive / active suicidal ideation (with plan or intent);
     upper / lower (a cystitis is lower, a pyelonephritis upper); proximal / distal / shaft; acute /
     chronic; early / late; localized / disseminated; medial / lateral / high (syndesmotic); primary /
     secondary; complicated (complex) / uncomplicated (simple); ruptured / unruptured; displaced /
     undisplaced; benign / malignant.
   * **look-alikes** named by a cause: viral / bacterial / fungal / parasitic / allergic / atopic /
     irritant / chemical / autoimmune / alcoholic / drug-induced (infectious = the first four, aseptic =
     not bacterial); diabetic (euglycaemic) / alcoholic / starvation; traumatic / spontaneous
     (non-traumatic). So "starvation ketoacidosis" or "alcoholic ketoacidosis" does not name "Diabetic
     ketoacidosis" even through a bare synonym "ketoacidosis", "allergic conjunctivitis" does not name
     "Acute bacterial conjunctivitis", but "infective conjunctivitis" can and "bacterial meningitis" names
     "Meningitis".
   * **severity**: mild (minor) / moderate / severe (life-threatening, near-fatal, critical, fulminant,
     massive, shock, with severe features; "without severe features" is mild or moderate); stable /
     unstable. So "moderate asthma exacerbation" does not name "Acute severe asthma exacerbation" and
     "mild sepsis" does not name "Septic shock"; "moderate to severe" shares "severe" and does.

   An answer that names no value of a class never contradicts it. **Parent terms** are credited exactly
   when the scenario lists them as a synonym (the library does where the parent is the working diagnosis a
   clinician writes and leads to the same immediate action: "acute coronary syndrome" and "myocardial
   infarction" for an anterior STEMI, "stroke" for an ischaemic stroke, "sepsis" for septic shock and for
   the febrile infant, "intracranial haemorrhage" for a subarachnoid one, "GI bleed" for an upper GI
   haemorrhage); the matcher never infers a parent, and a sibling subtype is refused even through a listed
   parent ("NSTEMI" is a myocardial infarction but contradicts the STEMI's "ST elevation").

The reverse direction (the given phrase contained in a name) is never a match: "headache" does not
name "thunderclap headache", "UTI" does not name "upper UTI", "hypertension" does not name
"pregnancy induced hypertension".

Limits: the rules read words, not meaning. A modifier list is open-ended, so a pre-modifier that
changes the condition but is in no contrast class still matches. Negation reaches across "or"/"and"/"with"
but not across commas: "no pneumothorax, PE or pneumonia" names PE (``sim.encounter.assessment`` splits such
lists before this function sees them). "of" after a name is accepted only before a side or "unknown ..."
("cellulitis of the right leg", "sepsis of unknown source") or as an organ phrase (``of_variant``). A
qualifier the scenario implies but does not write cannot contradict: the canonical name, the name matched
and ``side`` are all the matcher knows of the expected diagnosis (the thunderclap scenario's name says
"Non-traumatic" so that "traumatic SAH" is refused). The contrast classes need the contrasting word in the
canonical name or the matched synonym: a synonym "conjunctivitis" on a name without "bacterial" would credit
"allergic conjunctivitis" - ``synonym_problems`` flags exactly such synonyms. Negations that
``sim.encounter.assessment`` has already removed (it strips "(ruled out)" / "- unlikely" tails and "Unlikely:"
labels as qualifiers) cannot be seen here.

Where the code lives: this module matches (``names_condition``, ``match_diagnoses``);
``scorers._diagnosis_text`` normalises a phrase into words (its docstring has the rules);
``scorers._diagnosis_qualifiers`` reads a match's qualifiers and judges contradictions (``qualifiers``,
``contradicts``) and gives the "of" word order (``of_variant``); ``scorers._diagnosis_words`` holds the word lists
(hedges, negators, connectives, contrast classes ``CONTRASTS``, organs and locations, ``GENERIC``, ``NEUTRAL``,
``COMMON_BENIGN``); ``scorers._diagnosis_lint`` lints a diagnosis's synonyms and side (``synonym_problems``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from scenarios.schema import Scenario
from scorers._diagnosis_qualifiers import contradicts, of_variant, qualifiers, side_first
from scorers._diagnosis_text import BOUNDARY, Tokens, _flat, normalise
from scorers._diagnosis_words import (
    _CONNECTIVES,
    _CONSIDERATIONS,
    _COPULAS,
    _HEDGES,
    _LATERALITY,
    _NEGATORS,
    _OF_UNKNOWN,
    _OTHER_STRUCTURE,
    _PREPOSITIONS,
    _PROSPECTIVE,
    _TRAILING_HEDGES,
    _TRAILING_NEGATORS,
    _UNTIL_PROVEN,
    GENERIC,
    NEUTRAL,
    ClauseKind,
)
from sim.records import DiagnosisMatch

_ENDING_HEDGES = _TRAILING_HEDGES - {"is", "was", "most", "more", "very", "highly"}


# ----------------------------------------------------------------------------------------------- helpers
# id of a module-level phrase list (only those are passed) -> the words its phrases start with
_FIRST_WORDS: dict[int, frozenset[str]] = {}


def _phrase_at(tokens: Tokens, i: int, phrases: tuple[Tokens, ...]) -> Tokens | None:
    """The first (longest) phrase of ``phrases`` that starts at ``tokens[i]``."""
    first = _FIRST_WORDS.get(id(phrases))
    if first is None:
        first = _FIRST_WORDS[id(phrases)] = frozenset(p[0] for p in phrases if p)
    if i >= len(tokens) or tokens[i] not in first:
        return None
    for p in phrases:
        if p and tuple(tokens[i:i + len(p)]) == p:
            return p
    return None


def _strip_leading_hedges(words: Tokens) -> Tokens:
    changed = True
    while changed and words:
        changed = False
        p = _phrase_at(words, 0, _HEDGES)
        if p is not None:
            words, changed = words[len(p):], True
    return words


def _strip_hedges(words: Tokens) -> Tokens:
    words = _strip_leading_hedges(words)
    while words and words[-1] in _TRAILING_HEDGES - {"is", "was"}:
        words = words[:-1]
    return words


def _negated(words: Tokens) -> bool:
    """Whether ``words`` hold a negation or exclusion that is not part of a consideration ("cannot exclude")."""
    masked = list(words)
    for i in range(len(masked)):
        p = _phrase_at(tuple(masked), i, _CONSIDERATIONS)
        if p is not None:
            masked[i:i + len(p)] = ["_"] * len(p)
    m = tuple(masked)
    return any(_phrase_at(m, i, _NEGATORS) is not None for i in range(len(m)))


def _connective_ending_at(tokens: Tokens, k: int) -> tuple[int, ClauseKind] | None:
    """(start index, kind) of the longest connective that ends at ``tokens[k]``."""
    for phrase, kind in _CONNECTIVES:
        start = k - len(phrase) + 1
        if start >= 0 and tokens[start:k + 1] == phrase:
            return start, kind
    return None


def _connective_at(tokens: Tokens, k: int) -> tuple[int, ClauseKind] | None:
    """(length, kind) of the longest connective that starts at ``tokens[k]``."""
    for phrase, kind in _CONNECTIVES:
        if tokens[k:k + len(phrase)] == phrase:
            return len(phrase), kind
    if tokens[k].startswith("post") and len(tokens[k]) > 4:  # a joined "post-op", "post-surgery"
        return 1, "context"
    return None


def _clause_start(tokens: Tokens, i: int) -> tuple[int, ClauseKind, int]:
    """For the word at ``i``: (first word of its clause, how the clause starts, index of that connective or -1)."""
    k = i - 1
    while k >= 0:
        if tokens[k] == BOUNDARY:
            return k + 1, "boundary", k
        conn = _connective_ending_at(tokens, k)
        if conn is not None:
            return k + 1, conn[1], conn[0]
        k -= 1
    return 0, "start", -1


def _only_negation(words: Tokens) -> bool:
    """Whether ``words`` are nothing but negations or exclusions (a label: "Ruled out: X", "Excluded - X")."""
    k = 0
    while k < len(words):
        p = _phrase_at(words, k, _NEGATORS) or _phrase_at(words, k, _TRAILING_NEGATORS)
        if p is None or _phrase_at(words, k, _CONSIDERATIONS) is not None:
            return False
        k += len(p)
    return k > 0


def _inherits_negation(tokens: Tokens, kind: ClauseKind, conn_start: int) -> bool:
    """Whether a clause inherits a negation from the left.

    Through an alternative or cause connective from any negated clause, through a boundary from a clause that
    is only a negation (a label).
    """
    if kind == "boundary" and conn_start > 0:
        start, _, _ = _clause_start(tokens, conn_start)
        return _only_negation(tokens[start:conn_start])
    while kind in ("alt", "cause") and conn_start > 0:
        start, prev_kind, prev_conn = _clause_start(tokens, conn_start)
        if _negated(tokens[start:conn_start]) or (prev_kind == "neg" and kind == "alt"):
            return True
        kind, conn_start = prev_kind, prev_conn
    return False


def _followed_ok(tokens: Tokens, j: int, *, generic: bool) -> int | None:
    """Past the trailing words a head may carry, the index where the clause ends.

    None if ``tokens[j:]`` continues the noun phrase (the match is a modifier).
    """
    k = j
    n = len(tokens)
    if not generic and k + 1 < n and tokens[k] == "of" and tokens[k + 1] in _LATERALITY | _OF_UNKNOWN:
        k += 1
        while k < n and tokens[k] != BOUNDARY and _connective_at(tokens, k) is None:
            k += 1
        return k
    skippable = _LATERALITY if generic else _LATERALITY | _TRAILING_HEDGES
    while k < n and tokens[k] in skippable:
        k += 1
    if not generic and tokens[k:k + len(_UNTIL_PROVEN)] == _UNTIL_PROVEN:
        k += len(_UNTIL_PROVEN)
    if k == n or tokens[k] == BOUNDARY:
        return k
    if not generic and _connective_at(tokens, k) is not None:
        return k
    if not generic and set(tokens[j:k]) & _ENDING_HEDGES:  # "appendicitis ?perforated", "PE likely given surgery"
        return k
    q = k  # a trailing exclusion or consideration ("ACS ruled out", "ACS cannot be excluded"): judged by the caller
    while q < n and (tokens[q] in _COPULAS or tokens[q] in _PROSPECTIVE):
        q += 1
    if q < n and _phrase_at(tokens, q, _TRAILING_NEGATORS) is not None:
        return k
    return None


def _excluded_after(tokens: Tokens, k: int) -> bool:
    """Whether an exclusion ("ruled out", "unlikely" ...) follows the head whose clause ends at ``k``."""
    n = len(tokens)
    between: set[str] = set()
    while k < n:
        if tokens[k] == BOUNDARY or tokens[k] in _ENDING_HEDGES:
            k += 1
            continue
        if tokens[k] == "not" and (k + 1 == n or tokens[k + 1] == BOUNDARY):  # "PE - probably not"
            return True
        neg = _phrase_at(tokens, k, _TRAILING_NEGATORS)
        if neg is not None:
            return not between & _PROSPECTIVE
        if tokens[k] in _COPULAS or tokens[k] in _PROSPECTIVE:
            between.add(tokens[k])
            k += 1
            continue
        conn = _connective_at(tokens, k)
        if conn is not None and conn[1] == "alt":  # "ACS or PE ruled out": skip the other alternative
            k += conn[0]
            while k < n and tokens[k] != BOUNDARY and _connective_at(tokens, k) is None \
                    and _phrase_at(tokens, k, _TRAILING_NEGATORS) is None:
                k += 1
            continue
        return False
    return False


def _names_at(tokens: Tokens, i: int, name: Tokens, reference: Tokens, *, generic: bool) -> bool:
    """Whether the occurrence of ``name`` at ``tokens[i]`` is the head of a naming clause (module doc, rule 2).

    ``reference`` is the expected diagnosis (canonical name, matched name, side) its qualifiers must not contradict.
    """
    start, kind, conn_start = _clause_start(tokens, i)
    if kind in ("context", "neg"):
        return False
    if _inherits_negation(tokens, kind, conn_start):
        return False
    modifiers = _strip_leading_hedges(tokens[start:i])
    if _negated(modifiers) or set(modifiers) & _PREPOSITIONS or set(modifiers) & _OTHER_STRUCTURE:
        return False
    if generic and not set(modifiers) <= NEUTRAL:
        return False
    end = _followed_ok(tokens, i + len(name), generic=generic)
    if end is None or _excluded_after(tokens, end):
        return False
    return not contradicts(qualifiers(tokens, start, end), reference)


@lru_cache(maxsize=8192)
def _name_forms(raw: str) -> tuple[tuple[Tokens, bool], ...]:
    """A name's forms to look for, each with whether it is generic.

    As written (boundaries kept and dropped), without its hedges, "of" reordered.
    """
    bounded = normalise(raw)
    flat = _flat(bounded)
    forms = {f for form in (bounded, flat, _strip_hedges(flat)) for f in (form, of_variant(form)) if f}
    return tuple((f, _flat(f) in GENERIC) for f in sorted(forms))


@lru_cache(maxsize=8192)
def _given_forms(given: str) -> tuple[Tokens, frozenset[Tokens], frozenset[Tokens]]:
    """The given phrase's words, its word orders (module doc), and its whole forms with and without hedges."""
    tokens = normalise(given)
    variants = frozenset(v for t in (tokens, of_variant(tokens)) for v in (t, side_first(t)))
    return tokens, variants, frozenset(w for v in variants for w in (_flat(v), _strip_hedges(_flat(v))))


def _names_in(tokens: Tokens, form: Tokens, reference: Tokens, *, generic: bool) -> bool:
    """Whether ``form`` (one form of a name) stands in ``tokens`` as the head of a naming clause."""
    n = len(form)
    return any(tokens[i] == form[0] and tokens[i:i + n] == form
               and _names_at(tokens, i, form, reference, generic=generic) for i in range(len(tokens) - n + 1))


# ---------------------------------------------------------------------------------------------- public API
def names_condition(given: str, names: Sequence[str], side: str | None = None) -> bool:
    """Whether the diagnosis ``given`` names the condition called ``names[0]`` (canonical) or ``names[1:]``.

    ``side`` ("left" or "right"): the side the expected diagnosis is on; an answer naming the other is not it.
    """
    tokens, variants, whole = _given_forms(given)
    if not _flat(tokens) or not names:
        return False
    words = frozenset(w for v in variants for w in v)
    canonical = _flat(normalise(names[0]))
    tail = (BOUNDARY, side) if side else ()
    for raw in names:
        for form, generic in _name_forms(raw):
            if form[0] not in words:
                continue
            reference = (*canonical, BOUNDARY, *_flat(form), *tail)
            if form in whole and not contradicts(_flat(tokens), reference):
                return True
            if any(_names_in(v, form, reference, generic=generic) for v in variants):
                return True
    return False


TOP3_CREDIT = 0.7  # the expected top diagnosis named second or third, not first


def match_diagnoses(scenario: Scenario, given: list[str]) -> DiagnosisMatch:
    """Top-1 / top-3 of the expected top diagnosis among ``given`` (ranked), the expected ones named, and a score.

    The score (the composite's ``diagnosis`` part, see ``scorers._deterministic``) is
    ``0.7 x top + 0.3 x matched / expected``, where ``top`` is 1 for the expected top diagnosis named first,
    ``TOP3_CREDIT`` for it named second or third, and 0 otherwise.
    """
    expected = scenario.expected.diagnoses
    if not expected:
        return DiagnosisMatch(top1=False, top3=False, matched=[])
    top = expected[0]
    hits = [i for i, g in enumerate(given) if names_condition(g, [top.name, *top.synonyms], top.side)]
    matched = [d.name for d in expected if any(names_condition(g, [d.name, *d.synonyms], d.side) for g in given)]
    top1, top3 = bool(hits) and hits[0] == 0, any(i < 3 for i in hits)
    score = 0.7 * (1.0 if top1 else TOP3_CREDIT if top3 else 0.0) + 0.3 * len(matched) / len(expected)
    return DiagnosisMatch(top1=top1, top3=top3, matched=matched, score=score)
