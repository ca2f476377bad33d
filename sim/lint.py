"""``encsim scenarios lint`` and ``encsim scenarios validate``'s label checks (``label_problems``).

``encsim scenarios lint`` finds facts a natural clinician cannot reach and triggers that misfire.

Findings per scenario file (every one names the fact and the trigger):

- ``unreachable``: no question of the intent lexicon's phrasing bank (any intent's) reveals the fact
  through the patient's deterministic layers, so a model that does not guess the trigger words
  cannot get it. Fix: give the fact ``intents:`` from ``scenarios/intents.yaml``.
- ``common-word trigger``: a trigger that is one common word ("information", "provided", "pain",
  "history"): it fires on unrelated questions. Fix: use a phrase.
- ``statement trigger``: a one-word trigger that at least two typical statements on *other* topics
  contain (the lexicon's ``statements`` whose intents are not the fact's: "We'll make a plan
  together." and "Let's plan what to do if it gets worse." hit a suicide-plan fact's ``plan``):
  without the question filter it would leak, and it fires on unrelated questions too. Fix: use a
  more specific phrase.
- ``image without photo intent``: a fact that carries an ``image:`` but not the ``photo`` intent. Its other
  intents name what the image shows, so every question on that topic ("Is it itchy?") hands over the photo, credit
  the agent did not earn. Fix: ``intents: [photo]`` (and triggers for the ways of asking to see it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scenarios.lexicon import intents_in, load_lexicon, padded
from scenarios.schema import Scenario
from sim.patient.understanding import Understanding

# One-word triggers too common to mean one fact: everyday words, and clinical words every interview uses.
COMMON_WORDS = frozenset("""
a about after again age all also an and any anything are as ask at back bad be been before being better blood body
but by can case check come conditions could day days describe detail details did do does doing done down each else
ever every explain explicit feel feeling felt find for from get getting give go going good had has have having he
health help her here him his history home how i if ill in information is issue issues it its just know last left
let like little long look lot made make many may me medical more most much my need new no normal not now of off
ok okay on one only or other out over pain part people plan please point problem problems provided question
questions recent recently right said say see she should side since so some something sometimes start started
still such sure symptom symptoms take tell than that the their them then there these they thing things think this
time times to today told too two up us use used usual very want was way we week well went were what when where
which while who why will with work worse would yes yet you your
complete specific specifics given noted reported patient presents presented
""".split())


STATEMENT_HITS = 2  # one-word triggers found in this many other-topic statements are flagged


@dataclass(frozen=True)
class Finding:
    """One lint finding: the scenario and fact it is about, its kind (``unreachable``, ...) and the message."""

    scenario_id: str
    fact_id: str
    kind: str
    message: str


def lint_scenario(scenario: Scenario) -> list[Finding]:
    """Every finding of one scenario (none for replay and imaging items, which have no tree)."""
    lexicon = load_lexicon()
    out: list[Finding] = []
    bank = [p for intent in lexicon.intents.values() for p in intent.phrasings]
    understanding = Understanding(scenario)
    reached: set[str] = set()
    for phrasing in bank:
        reached.update(understanding.match(phrasing))
    statements = [(s, padded(s), intents_in(s)) for s in lexicon.statements]
    # a fact's topics: its declared intents, and those its own words match (for a fact that declares none)
    topics = {f.id: set(f.intents).union(*(intents_in(t) for t in [*f.triggers, f.answer]))
              for f in scenario.information_tree}
    for fact in scenario.information_tree:
        if fact.image is not None and "photo" not in fact.intents and fact.intents:
            out.append(Finding(scenario.id, fact.id, "image without photo intent",
                               f"it carries an image but its intents ({', '.join(fact.intents)}) are about what the "
                               "image shows, so any question on that topic hands over the image; give it the "
                               "'photo' intent"))
        if fact.id not in reached:
            hint = ("it lists no intents" if not fact.intents
                    else f"its intents {', '.join(fact.intents)} do not reach it")
            out.append(Finding(scenario.id, fact.id, "unreachable",
                               f"no question in the intent lexicon's phrasing bank reveals it ({hint}); add "
                               "intents from scenarios/intents.yaml"))
        for trigger in fact.triggers:
            words = trigger.lower().split()
            if len(words) == 1 and words[0].strip(".,?!") in COMMON_WORDS:
                out.append(Finding(scenario.id, fact.id, "common-word trigger",
                                   f"trigger {trigger!r} is one common word and fires on unrelated questions; "
                                   "use a phrase"))
                continue
            p = padded(trigger)
            own = topics[fact.id]  # a statement on the fact's own topic naming it is expected; one on another is not
            hits = [s for s, ps, about in statements if p and p in ps and not about & own]
            if len(words) == 1 and len(hits) >= STATEMENT_HITS:
                out.append(Finding(scenario.id, fact.id, "statement trigger",
                                   f"trigger {trigger!r} occurs in {len(hits)} typical statements on other topics "
                                   f"(e.g. {hits[0]!r}); use a more specific phrase"))
    return out


# ------------------------------------------------------------------------------- validate: label checks
# A fallback line answers a message the patient did not understand, so it must neither deny ("Not that I've
# noticed.", "No, I'm alright otherwise.") nor put a symptom in the clinician's mind ("It's mostly just the
# pain."). Hedges are allowed: "not sure", "don't know", "didn't catch that", "can't remember".
_HEDGES = re.compile(
    r"\b(?:(?:i'?m|i am|am)\s+not\s+(?:quite\s+|really\s+|totally\s+|entirely\s+)?(?:sure|certain|following)|"
    r"not\s+(?:quite\s+|really\s+)?sure|(?:i\s+)?(?:don'?t|do not|didn'?t|did not|can'?t|cannot|couldn'?t|could not)\s+"
    r"(?:quite\s+|really\s+|always\s+)?(?:know|understand|follow|catch|get|hear|remember|"
    r"say(?!\s+(?:i|i'?ve|that|so)\b)|tell|think of|work out)|"
    r"(?:can'?t|cannot) think(?: straight| clearly| properly)?|no idea|not with you)\b", re.IGNORECASE)
_DENIAL = re.compile(
    r"\b(?:no|not|never|nothing|none|nobody|nowhere|nope|neither|nor|without|haven'?t|hasn'?t|hadn'?t|didn'?t|"
    r"doesn'?t|don'?t|isn'?t|wasn'?t|aren'?t|weren'?t|won'?t|wouldn'?t|can'?t|cannot|couldn'?t|fine|alright|"
    r"all right|okay|ok|otherwise|normal|apart from|except|other than|(?:just|only|mostly|mainly)\s+(?:the|my|a|an|"
    r"this|that|his|her|their))\b", re.IGNORECASE)
# Words that name a symptom, a body part or a clinical matter (stems, as ``padded`` gives them).
_SYMPTOM_WORDS = frozenset(padded("""
pain ache aching hurt hurts sore sick vomit nausea dizzy faint bleed bleeding blood fever temperature hot cold
cough breath breathing rash itch swelling swollen numb tingling weak tired headache head chest tummy stomach belly
abdomen back leg legs arm arms eye eyes ear throat heart skin wee pee urine poo stool period pregnant baby
feeding symptom symptoms medicine medication tablets allergy injury fall fell lump spot burning stiff
""").split())


def fallback_problems(scenario: Scenario) -> list[str]:
    """Why each of the scenario's fallback lines is unsafe: a denial, or a symptom it suggests."""
    out = []
    for i, line in enumerate(scenario.fallback_lines):
        rest = _HEDGES.sub(" ", line)
        denial = _DENIAL.search(rest)
        named = (set(padded(line).split()) & _SYMPTOM_WORDS) | intents_in(line)
        if denial:
            out.append(f"fallback_lines.{i}: {line!r} denies or reassures ({denial.group(0)!r}); a fallback line "
                       "answers a message the patient did not understand, so it must be non-committal, e.g. "
                       "\"Sorry, what do you mean?\" (state a pertinent negative as a fact of its own)")
        elif named:
            out.append(f"fallback_lines.{i}: {line!r} suggests a symptom or topic ({', '.join(sorted(named))}); "
                       "a fallback line must be non-committal, e.g. \"Sorry, could you put that another way?\"")
    return out


def label_problems(scenario: Scenario) -> list[str]:
    """What ``encsim scenarios validate`` refuses beyond the schema.

    Fallback lines that deny or suggest a symptom, and diagnosis names or synonyms that a generic or benign
    answer would match.
    """
    from scorers import synonym_problems

    out = fallback_problems(scenario)
    for i, dx in enumerate(scenario.expected.diagnoses):
        out.extend(f"expected.diagnoses.{i}: {msg}" for msg in synonym_problems(dx))
    return out
