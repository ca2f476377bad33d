"""Second person -> first or third person: an actor's brief ("You have had a cough ...") as the patient says it.

AgentClinic's NEJM cases tell the patient actor their story in the second person ("You are a 55-year-old woman who
has noticed your skin darkening. You've observed ..."). ``you`` is always the patient, so the rewrite needs no
guessing about who a pronoun means (unlike ``_person``'s third person):

- :func:`to_first_person`: ``you`` -> ``I`` as a subject, ``me`` as an object (after a preposition or a verb:
  "they told you" -> "they told me"); ``your`` -> ``my``, ``yours`` -> ``mine``, ``yourself`` -> ``myself``;
  ``you're`` -> ``I'm``, ``you've`` -> ``I've``, ``you'd`` -> ``I'd``, ``you'll`` -> ``I'll``. Only ``be`` has
  another form after ``I``: ``are`` -> ``am``, ``were`` -> ``was``, ``aren't`` -> ``am not``, ``weren't`` ->
  ``wasn't``, for the verb straight after the subject (adverbs skipped: "you also are") and for one joined to it
  by ``and`` / ``or`` / ``but`` in the same clause ("you are tired and are ..." -> "I am tired and am ...").
- :func:`to_third_person`: the same places with ``he`` / ``she`` / ``they`` (``him`` / ``her`` / ``them``,
  ``his`` / ``her`` / ``their``, ``himself`` ...), for a case a child's parent tells (``_osce_voice``): the
  verb after the subject agrees ("you have" -> "she has", "you notice" -> "she notices", "you don't" ->
  "she doesn't"; past tenses and modals are the same), and so does one joined to it.

Every other word is kept, in order. Curly apostrophes are read as straight ones.
"""

from __future__ import annotations

import re

from scenarios.importers._person import ADVERBS, VERBS, third_person

SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves)\b", re.I)

_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*|\d+(?:[.,]\d+)*|\s+|[^\sA-Za-z\d]")
_PREPOSITIONS = frozenset("""to for with at about from of by on in into onto upon around toward towards than like
unlike behind beside besides near over under after before without within between among against through throughout
past via despite except""".split())
# Words before "you" that are not verbs, so "you" after them is a subject ("that you have", "when you walk").
_NOT_VERBS = frozenset("""that when whenever while because although though if unless until since so and but or nor
as where which who what how why whether once then now also still only just even yet remember note""".split())
_MODALS = frozenset("""can could will would should may might must shall can't cannot couldn't won't wouldn't
shouldn't mightn't mustn't did didn't had hadn't""".split())
_PAST = frozenset("""went took felt saw came began became got gave ate drank fell woke thought knew left lost found kept
ran slept spent told wrote sat stood broke made heard held brought caught bought hit hurt cut put quit drove rode
swam threw wore grew flew bit bled fed led meant paid said sent shot sold spoke struck stuck taught understood won
forgot chose froze rose shook swore dug hung laid lit""".split())
# Verbs that take an object: "you" after one is its object ("told you", "gave you", "help you").
_OBJECT_VERBS = frozenset("""tell tells told give gives gave given show shows showed shown ask asks asked let lets help
helps helped make makes made keep keeps kept send sends sent see sees saw seen examine examines examined treat treats
treated refer refers referred advise advises advised prescribe prescribes prescribed bring brings brought take takes
took taken call calls called thank thanks thanked bother bothers bothered wake wakes woke worry worries
worried""".split())
_BREAKS = frozenset("""who which that whose when whenever while because although though if unless until whereas
where""".split()) | {".", ";", ":", "!", "?"}
# Words that can follow a subject without being its verb ("you both", "you yourself").
_NOT_A_VERB = frozenset("""all both each too not to and or but either neither yourself yourselves alone""".split())
_FIRST_BE = {"are": "am", "were": "was", "aren't": "am not", "weren't": "wasn't"}
_THIRD_AUX = {"are": "is", "were": "was", "aren't": "isn't", "weren't": "wasn't", "have": "has", "haven't": "hasn't",
              "do": "does", "don't": "doesn't", "go": "goes"}
_FORMS = {  # pronoun -> (subject, object, possessive, possessive pronoun, reflexive)
    "I": ("I", "me", "my", "mine", "myself"),
    "he": ("he", "him", "his", "his", "himself"),
    "she": ("she", "her", "her", "hers", "herself"),
    "they": ("they", "them", "their", "theirs", "themselves"),
}
_CONTRACTED = {  # "you're" ... -> the pronoun's contraction
    "I": {"re": "I'm", "ve": "I've", "d": "I'd", "ll": "I'll"},
    "he": {"re": "he's", "ve": "he's", "d": "he'd", "ll": "he'll"},
    "she": {"re": "she's", "ve": "she's", "d": "she'd", "ll": "she'll"},
    "they": {"re": "they're", "ve": "they've", "d": "they'd", "ll": "they'll"},
}


def _is_word(tok: str) -> bool:
    return tok[:1].isalpha()


class _Rewrite:
    def __init__(self, text: str, pronoun: str) -> None:
        self.t: list[str] = _TOKEN.findall(" ".join(text.replace("\u2019", "'").replace("\u2018", "'").split()))
        self.p = pronoun

    def low(self, i: int | None) -> str:
        return self.t[i].lower() if i is not None and 0 <= i < len(self.t) else ""

    def word_after(self, i: int, skip_adverbs: bool = False) -> int | None:
        for j in range(i + 1, len(self.t)):
            tok = self.t[j]
            if tok.isspace() or not tok:
                continue
            if skip_adverbs and tok.lower() in ADVERBS:
                continue
            return j if _is_word(tok) else None
        return None

    def token_before(self, i: int) -> str:
        for j in range(i - 1, -1, -1):
            if self.t[j] and not self.t[j].isspace():
                return self.t[j].lower()
        return ""

    def first(self, i: int) -> bool:
        return not any(_is_word(t) for t in self.t[:i])

    def verb_after_subject(self, i: int) -> None:
        """Make the verb after the subject at ``i`` agree with the new pronoun.

        The word after a subject is its verb: any such word agrees, not only the verbs ``_person`` knows.
        """
        j = self.word_after(i, skip_adverbs=True)
        if j is not None:
            self.agree(j, loose=True)

    def agree(self, j: int, *, loose: bool = False) -> None:
        """Rewrite the verb at ``j`` for the pronoun (``loose``: any word there is a verb, not only known ones)."""
        low = self.low(j)
        if self.p == "I":
            if low in _FIRST_BE:
                self.t[j] = _FIRST_BE[low]
            return
        if self.p == "they" or low in _MODALS or low in _PAST or low.endswith(("ed", "ing")) or \
                not low.replace("'", "").isalpha():
            return
        if low in _THIRD_AUX:
            self.t[j] = _THIRD_AUX[low]
        elif low in VERBS or (loose and low not in _NOT_A_VERB and not self.t[j][:1].isupper()):
            self.t[j] = third_person(low)

    def subject(self, i: int) -> bool:
        """Whether ``you`` at ``i`` is a subject (else an object)."""
        before = self.token_before(i)
        if before in _PREPOSITIONS:  # "like you can't tell": a subject all the same before an auxiliary
            after = self.low(self.word_after(i, skip_adverbs=True))
            return after in _MODALS or after in _FIRST_BE or after in _THIRD_AUX or after in ("am", "is", "was")
        if before in _NOT_VERBS or not before[:1].isalpha():
            return True
        after = self.low(self.word_after(i, skip_adverbs=True))
        if after in _MODALS or after in _FIRST_BE or after in ("have", "haven't", "do", "don't"):
            return True  # "they told you have ...", "found you are ...": the subject of what was told or found
        return not (before in _OBJECT_VERBS or (before.endswith("ed") and before not in ("need", "used"))
                    or before in _PAST)

    def run(self) -> str:
        subject, obj, poss, poss_pronoun, reflexive = _FORMS[self.p]
        in_clause = False  # the clause's subject is the patient: a verb joined by "and" agrees too
        for i, tok in enumerate(self.t):
            low = tok.lower()
            cap = tok[:1].isupper()
            new: str | None = None
            if low in ("you're", "you've", "you'd", "you'll", "youre", "youve"):
                new, in_clause = _CONTRACTED[self.p][low.split("'")[-1] if "'" in low else low[3:]], True
            elif low == "you":
                if self.subject(i):
                    new, in_clause = subject, True
                    self.verb_after_subject(i)
                else:
                    new = obj
            elif low == "your":
                new = poss
            elif low == "yours":
                new = poss_pronoun
            elif low in ("yourself", "yourselves"):
                new = reflexive
            elif low in _BREAKS:
                in_clause = False
            elif in_clause and low in ("and", "or", "but"):
                j = self.word_after(i, skip_adverbs=True)
                if j is not None and self.low(j) not in ("you", "your", "i", "he", "she", "they", "it"):
                    self.agree(j)
            if new is not None:
                self.t[i] = new[:1].upper() + new[1:] if cap else new
        out = "".join(self.t)
        return out[:1].upper() + out[1:] if out else out


def to_first_person(text: str) -> str:
    """``text`` (a brief to the patient actor) as the patient says it: ``you`` -> ``I`` (module docstring)."""
    return _Rewrite(text, "I").run()


def to_third_person(text: str, pronoun: str) -> str:
    """``text`` about the patient as someone else tells it: ``you`` -> ``pronoun`` (he, she or they)."""
    if pronoun not in ("he", "she", "they"):
        raise ValueError(f"pronoun must be he, she or they, got {pronoun!r}")
    return _Rewrite(text, pronoun).run()
