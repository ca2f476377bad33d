"""Third person -> first person: a case write-up sentence in the words of the person who tells it.

Case write-ups speak about the patient ("She has had a cough for two weeks and smokes 20 a day. Her husband says
she snores."); the simulated patient speaks as ``I`` ("I have had a cough for two weeks and smoke 20 a day. My
husband says I snore."). :func:`speak` rewrites one sentence for a :class:`Speaker`: the patient, or a child's carer
(then the carer is ``I`` and the child stays ``he`` / ``she``; the carer's own rewrites are in ``_voice``).

The rules, on whole sentences:

- The speaker's subject (``he`` / ``she`` of the speaker's sex, ``the patient``, a name the case gives the speaker,
  a subject-less opening verb: "Smokes 10 a day.") becomes ``I``, and so does any later one ("... when he breathes
  in" -> "... when I breathe in"). The speaker's object, possessive and reflexive pronouns become ``me``, ``my``
  (``her`` before a noun), ``mine``, ``myself``; ``the patient's`` -> ``my``.
- The verb agrees with ``I``: ``has`` -> ``have``, ``is`` -> ``am``, ``does`` -> ``do``, ``hasn't`` ->
  ``haven't``, ``doesn't`` -> ``don't``, ``isn't`` -> ``am not``, ``he's`` -> ``I'm`` / ``I've``, any ``-s``
  verb -> its base form (``breathes`` -> ``breathe``, ``worries`` -> ``worry``, ``arches`` -> ``arch``); past
  tenses and modals are the same. Verbs joined to the same subject agree too ("I feel hot, have a headache, am
  coughing and complain of aches"), up to a clause of its own (``who``, ``which``, ``that``, ``when``, ``;`` ...).
- The write-up's reporting verbs become what a patient says: "The patient reports that X" -> "X"; "reports /
  endorses / mentions / experiences X" -> "I've had X" ("I've been feeling ..." before an -ing word);
  "notes X" -> "I've noticed X"; "complains of X" and "presents with X" -> "I have X"; "denies X" -> "I haven't
  had any X" ("denies the use of" -> "I haven't used").
- Someone else in the sentence: a relative or friend of the speaker's sex or of no stated sex ("his father",
  "her partner") makes the pronouns after it ambiguous, so they are kept as written, except a possessive before a
  relative ("his brother" -> "my brother") and, when the relative is the speaker's own, a subject straight after a
  reporting verb ("Her partner says she snores" -> "My partner says I snore"). Someone of the other sex ("her
  husband") changes nothing.

Every other word is kept, in order. The speaker's sex is given when the case says it; otherwise it is read from the
sentence (a possessive before a relative, else the only pronoun set it uses); when that is not clear, no pronoun is
changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PRONOUNS = {"male": frozenset({"he", "him", "his", "himself"}), "female": frozenset({"she", "her", "hers", "herself"})}


@dataclass(frozen=True)
class Speaker:
    """Who tells the case: the patient (or a child's carer), their sex when known, and the names the case uses.

    ``names``: single words the case calls the speaker by ("Y" for "Mr. Y", "Elizabeth"); a title before one is
    dropped with it. ``subjectless``: whether a sentence opening with a verb ("Smokes 10 a day.") is the speaker's.
    """

    sex: str | None = None
    names: tuple[str, ...] = ()
    patient_words: bool = True  # "the patient" is the speaker (False for a carer: the patient is the child)
    subjectless: bool = True


ADVERBS = frozenset("""also still never often usually sometimes occasionally recently previously currently frequently
only further now regularly rarely additionally initially subsequently then just already always generally normally
typically otherwise immediately finally later reportedly apparently probably really even actually eventually gradually
suddenly first last consistently intermittently repeatedly constantly mostly""".split())
_AUX = {"has": "have", "is": "am", "was": "was", "does": "do", "hasn't": "haven't", "isn't": "am not",
        "wasn't": "wasn't", "doesn't": "don't", "goes": "go"}
_MODALS = frozenset("""had did can could will would should may might must shall can't cannot couldn't won't wouldn't
shouldn't didn't hadn't""".split())
_PAST = frozenset("""went took felt saw came began became got gave ate drank fell woke thought knew left lost found kept
ran slept spent told wrote sat stood broke made heard held brought caught bought hit hurt cut put quit drove rode
swam threw wore grew flew bit bled fed led meant paid said sent shot sold spoke struck stuck taught understood won
forgot chose froze rose shook swore dug hung laid lit""".split())
# Base forms of verbs a case write-up uses; their -s forms are verbs wherever they stand (coordinated too).
VERBS = frozenset("""accept ache admit agree appear arch arrive ask attend avoid become begin believe bleed breathe
bring bruise burn buy call care carry catch cause change check chew choke claim clench climb come complain consume
continue cope cough cry decide decline deny describe develop die drink drive drop eat enjoy endorse exercise
experience explain extend faint fall feed feel find finish flex follow forget get give go grab hate have hear help
hold hope hurt ignore improve include insist intend itch jog keep kick know last lay lead learn leave lie lift like
limp live look lose love make manage mean mention miss move need note notice own pass pay plan play point prefer
prepare present prevent pull push put rate reach read realise realize recall receive recount refuse remain remember
report require rest return rise run say see seem sell send share shiver sit sleep smell smoke sneeze snore speak spend
stand start state stay stop struggle study suffer suppose swallow sweat swim take talk teach tell tend think throw
tire touch travel treat try turn understand use visit vomit wake walk want wash watch wear weigh wheeze wish wonder
work worry write""".split())
# Verbs whose -s form is as often a plural noun ("changes in appetite", "falls", "pains"): after "and" or a comma
# they are verbs only before an object ("and changes his dressing").
NOUNISH = frozenset("""ache bruise burn call change cough cramp cut drop fall note plan point rate report rest result
sweat test visit""".split())
# -s words that are usually nouns in a case ("fever and chills"): never read as verbs after "and".
_PLURAL_NOUNS = frozenset("""chills sweats aches pains cramps spasms rigors fevers headaches seizures symptoms episodes
times days weeks months years hours minutes legs arms eyes ears hands feet joints stools tablets pills drinks cigarettes
units rashes""".split())
_COMPLEMENT = frozenset("his her their its it him me my myself herself himself up out a an the".split())
# Relatives and friends: someone a pronoun of their sex may mean instead of the speaker.
_OTHERS = {
    "male": frozenset("""husband father dad son brother boyfriend grandfather grandson uncle nephew stepfather fiance
stepson""".split()),
    "female": frozenset("""wife mother mum mom daughter sister girlfriend grandmother granddaughter aunt niece
stepmother fiancee stepdaughter""".split()),
    None: frozenset("""partner spouse friend sibling cousin colleague coworker roommate flatmate classmate neighbour
neighbor carer caregiver relative someone""".split()),
}
_ALL_OTHERS = frozenset().union(*_OTHERS.values())
_RELATIVES = _ALL_OTHERS | frozenset({"parents", "family", "children", "friends", "doctor",
                                                              "gp", "physician", "baby", "child", "sons",
                                                              "daughters", "brothers", "sisters", "kids"})
_REPORTING = frozenset("""reports states notes mentions says explains adds recalls admits claims insists reported stated
noted mentioned said explained added recalled admitted claimed""".split())
_HAD_OBJECT = {"reports": "had", "endorses": "had", "mentions": "had", "experiences": "had", "recounts": "had",
               "describes": "had", "notes": "noticed"}
_SUBJECTLESS = frozenset("""works lives smokes drinks does attends uses takes exercises walks eats enjoys plays studies
sleeps drives travels denies reports has is was had quit stopped started used drank smoked worked lived complains
endorses notes feels states describes mentions admits recalls says explains""".split())
_BREAKS = frozenset("""who which that whose when whenever while because although though if unless until whereas
where""".split())
_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*|\d+(?:[.,]\d+)*|\s+|[^\sA-Za-z\d]")
_TITLE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr)\.?\s+(?=[A-Z])")


def third_person(base: str) -> str:
    """``go`` -> ``goes``, ``try`` -> ``tries``, ``arch`` -> ``arches``, ``take`` -> ``takes``."""
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ies"
    return base + ("es" if base.endswith(("s", "sh", "ch", "x", "zz", "o")) else "s")


def base_form(verb: str) -> str | None:
    """The form a verb takes after ``I`` (``has`` -> ``have``, ``breathes`` -> ``breathe``); None if not an -s verb."""
    low = verb.lower()
    if low in _AUX:
        return _AUX[low]
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if re.search(r"(?:ss|sh|ch|x|zz|o)es$", low):
        return low[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is", "'s")) and len(low) > 3:
        return low[:-1]
    return None


def is_verb_form(word: str, *, strict: bool = True) -> bool:
    """Whether ``word`` is a third-person verb (``has``, ``smokes``); ``strict``: only known verbs."""
    low = word.lower()
    if low in _AUX:
        return True
    base = base_form(low)
    return base is not None and (base in VERBS or (not strict and low not in _PLURAL_NOUNS))


def _is_word(tok: str) -> bool:
    return tok[:1].isalpha()


class _Sentence:
    """One sentence as tokens (words, numbers, spaces, punctuation), and the rewrites done on them.

    It knows which pronouns are the speaker's; a token dropped is an empty string.
    """

    def __init__(self, text: str, speaker: Speaker) -> None:
        for name in speaker.names:
            text = re.sub(rf"{_TITLE.pattern}(?={re.escape(name)}\b)", "", text)
        self.t = _TOKEN.findall(text)
        self.speaker = speaker
        self.pronouns = self._pronouns()
        self.own_rival = False  # the rival is the speaker's own relative ("his father"), not someone else's
        self.ambiguous_from = self._competitor()

    # --- reading -------------------------------------------------------------------------------

    def word_after(self, i: int | None, skip_adverbs: bool = False) -> int | None:
        """The index of the next word after token ``i`` (only spaces between), or None."""
        if i is None:
            return None
        for j in range(i + 1, len(self.t)):
            tok = self.t[j]
            if not tok or tok.isspace() or (skip_adverbs and tok.lower() in ADVERBS):
                continue
            return j if _is_word(tok) else None
        return None

    def word_before(self, i: int | None) -> int | None:
        return max((k for k in range(i or 0) if _is_word(self.t[k])), default=None)

    def low(self, i: int | None) -> str:
        return self.t[i].lower() if i is not None and 0 <= i < len(self.t) else ""

    def first(self, i: int) -> bool:
        """Whether token ``i`` is the sentence's first word."""
        return not any(_is_word(t) for t in self.t[:i])

    def _pronouns(self) -> frozenset[str]:
        """The speaker's pronoun set: of their sex, else the one a possessive before a relative or the only set used."""
        if self.speaker.sex in _PRONOUNS:
            return _PRONOUNS[self.speaker.sex]
        words = [w.lower() for w in self.t if _is_word(w)]
        for k, w in enumerate(words[:-1]):  # "her husband": the possessive is the speaker's
            if w in ("his", "her") and words[k + 1] in _RELATIVES:
                return _PRONOUNS["male" if w == "his" else "female"]
            if w in _ALL_OTHERS or w.rstrip("s") in _ALL_OTHERS:  # "The mother ... her daughter": not the speaker's
                break
        used = [sex for sex, forms in _PRONOUNS.items() if forms & set(words)]
        return _PRONOUNS[used[0]] if len(used) == 1 else frozenset()

    def _competitor(self) -> int:
        """The index of the first relative or friend a pronoun of the speaker's set could mean, else the end."""
        sex = next((s for s, forms in _PRONOUNS.items() if forms == self.pronouns), None)
        rivals = _OTHERS[None] | (_OTHERS[sex] if sex else frozenset())
        for i, tok in enumerate(self.t):
            if tok.lower().rstrip("s") in rivals or tok.lower() in rivals:
                prev = self.low(self.word_before(i))
                self.own_rival = prev in self.pronouns and prev in ("his", "her")
                return i
        return len(self.t)

    def mine(self, i: int | None) -> bool:
        """Whether the pronoun at ``i`` is the speaker's (see the module docstring on someone else)."""
        low = self.low(i).split("'")[0]
        if i is None or low not in self.pronouns:
            return False
        if i < self.ambiguous_from:
            return True
        if not self.own_rival:  # "The mother ... her daughter": her is the mother's
            return False
        if low in ("his", "her") and self.low(self.word_after(i)) in _RELATIVES:
            return True
        prev = self.word_before(i)
        if self.low(prev) == "that":
            prev = self.word_before(prev)
        return low in ("he", "she") and self.low(prev) in _REPORTING | {"says", "say", "thinks", "feels"}

    def verbish(self, j: int | None) -> bool:
        """Whether the word at ``j`` can be the verb of a subject before it."""
        low = self.low(j)
        return bool(low) and (low in _AUX or low in _MODALS or low in _PAST or low.endswith("ed")
                              or is_verb_form(low, strict=False))

    # --- writing -------------------------------------------------------------------------------

    def drop(self, i: int | None, j: int | None) -> None:
        """Remove tokens ``i`` .. ``j`` and the space after them."""
        if i is None or j is None:
            return
        for k in range(i, j + 1):
            self.t[k] = ""
        if j + 1 < len(self.t) and self.t[j + 1].isspace():
            self.t[j + 1] = ""

    def text(self) -> str:
        out = re.sub(r"\s{2,}", " ", "".join(self.t)).strip()
        out = re.sub(r"\s+(?=[,.;:!?])", "", out)
        out = re.sub(r"^I and (my \w+)\b", lambda m: f"{m.group(1).capitalize()} and I", out)  # my wife and I
        return out[:1].upper() + out[1:] if out else out


_ME_BEFORE = frozenset("""to and at in on for with from that as by a an the up down out off back again about of into
over through if when so or but is was has had since because after before while until home this these those some any
anything something nothing feel feeling look seem twice once every not how what why where who he she i it they we
you during despite without within throughout among around against toward towards onto upon beside behind below above
under near like unlike except than then too very much more less most least all both each enough yesterday today
tonight""".split())
# -ly words after "her" are adverbs ("affected her badly": me), except these adjectives and nouns ("her elderly
# mother", "her family": my).
_LY_ADJECTIVES = frozenset("""early elderly daily weekly monthly nightly yearly hourly only lovely friendly lonely
family belly supply reply anomaly assembly""".split())


# Verbs after which "her" is the object, whatever follows ("makes her dizzy", "let her sleep").
_OBJECT_THEN = frozenset("""make makes made making leave leaves leaving keep keeps kept keeping let lets letting help
helps helped helping""".split())


# Verbs that take two objects: "gave her 2 tablets", "sent her home" -> "me".
_TWO_OBJECTS = frozenset("""give gives gave given send sends sent show shows showed offer offers offered prescribe
prescribes prescribed hand hands handed lend lends lent""".split())


def _her(s: _Sentence, i: int) -> str:
    """``her`` as ``my`` before a word that is not a preposition, article, pronoun or verb, else ``me``.

    After a verb that takes an object and a complement ("makes her dizzy") it is ``me``, and after one that takes
    two objects ("gave her 2 tablets") unless a relative follows ("gave her daughter a hug"); before a number, ``my``
    when a word goes on ("her 3-week-old son", "her 30th week"), else ``me`` ("called her 111.").
    """
    after = [t for t in s.t[i + 1:] if t and not t.isspace()][:2]
    nxt, then = (after + ["", ""])[:2]
    prev = s.low(s.word_before(i))
    if prev in _OBJECT_THEN or (prev in _TWO_OBJECTS and nxt.lower() not in _RELATIVES):
        return "me"
    if nxt[:1].isdigit():
        return "my" if _is_word(then) or then == "-" else "me"
    adverb = nxt.lower().endswith("ly") and nxt.lower() not in _LY_ADJECTIVES
    return "me" if not _is_word(nxt) or adverb or nxt.lower() in _ME_BEFORE else "my"


def _object_form(s: _Sentence, i: int) -> str | None:
    """The speaker's non-subject pronoun at ``i`` in the first person, or None."""
    low = s.low(i)
    if low in ("he", "she") or not s.mine(i):
        return None
    return {"his": "my", "him": "me", "hers": "mine", "himself": "myself", "herself": "myself"}.get(low) or (
        _her(s, i) if low == "her" else None)


def _contraction(low: str, nxt: str) -> str:
    """``he's`` / ``she's`` / ``he'd`` ... as ``I'm`` / ``I've`` / ``I'd``."""
    if low.endswith("'s"):
        perfect = nxt in {"been", "had", "got", "gotten", "done", "seen", "taken", "never", "always", "already",
                          "just"} or (nxt.endswith("ed") and nxt not in {"worried", "tired", "scared", "concerned"})
        return "I've" if perfect else "I'm"
    return "I" + low[low.index("'"):]


def _subject_span(s: _Sentence, i: int) -> int | None:
    """The last token of the speaker's subject starting at ``i`` ("he", "the patient", a name, ``I``), else None."""
    low = s.low(i)
    if (low in ("he", "she") and s.mine(i)) or s.t[i] == "I":
        return i
    if s.t[i] in s.speaker.names:  # "Ms. B flew home": a name opening the sentence is its subject
        return i if s.first(i) or s.verbish(s.word_after(i, skip_adverbs=True)) else None
    if not s.speaker.patient_words:
        return None
    if low == "patient" and s.first(i):  # "Patient denies ...", "Patient is a smoker"
        return i if s.verbish(s.word_after(i, skip_adverbs=True)) else None
    end = s.word_after(i)
    if low == "the" and s.low(end) == "patient":
        return end if s.first(i) or s.verbish(s.word_after(end, skip_adverbs=True)) else None
    return None


# -ing words that name a symptom ("denies vomiting" -> "haven't had any vomiting", not "haven't been vomiting").
_SYMPTOM_ING = frozenset("""vomiting bleeding coughing wheezing sweating itching sneezing fainting choking shivering
snoring swelling bruising tingling burning aching cramping limping numbness palpitations""".split())


def _verb_ing(s: _Sentence, k: int | None) -> bool:
    """Whether the word at ``k`` is an -ing verb ("taking any tablets", "feeling dizzy", "smoking or drinking").

    Not a symptom ("vomiting") nor the first of a list of things ("smoking, alcohol or drug use").
    """
    low = s.low(k)
    if k is None or not low.endswith("ing"):
        return False
    rest = [t.lower() for t in s.t[k + 1:] if t and not t.isspace()]
    nxt = rest[0] if rest else "."
    if nxt in (",", ";", ")"):
        return False
    if nxt in (".", "!", "?") or (nxt in ("or", "and", "nor") and len(rest) > 1 and rest[1].endswith("ing")):
        return low not in _SYMPTOM_ING
    return nxt not in ("or", "and", "nor")


def _denial(s: _Sentence, j: int, tense: str) -> str:
    """``denies [any] [history of] X`` -> ``haven't had any X``.

    ``haven't been`` before an -ing verb; ``haven't used`` before "the use of".
    """
    k = s.word_after(j)
    if s.low(k) == "any":
        s.drop(k, k)
        k = s.word_after(k)
    of = s.word_after(k)
    if s.low(k) in ("history", "episodes") and s.low(of) == "of":
        s.drop(k, of)
        k = s.word_after(of)
    neg, have = ("haven't", "had") if tense == "present" else ("didn't", "have")
    use = s.word_after(k) if s.low(k) == "the" else k
    if s.low(use) == "use" and s.low(s.word_after(use)) == "of":
        s.drop(k, s.word_after(use))
        return f"{neg} {'used' if tense == 'present' else 'use'}"
    if _verb_ing(s, k):
        return f"{neg} been" if tense == "present" else neg
    if k is None or s.low(k) in ("a", "an", "the", "no", "all", "ever", "being", "having", "that", "this", "these"):
        return f"{neg} {have}"
    return f"{neg} {have} any"


def _verb_phrase(s: _Sentence, j: int, *, initial: bool) -> str | None:
    """The first-person form of the verb at ``j`` (and the words it takes with it), or None to keep it.

    ``initial``: the verb follows ``I`` (contractions allowed: "I've had"); else it is a verb joined to one.
    """
    low, nxt = s.low(j), s.word_after(j)
    after = s.low(nxt)
    if low in ("complains", "complained", "presents", "presented") and after in ("of", "with"):
        s.drop(nxt, nxt)
        return "have" if low.endswith("s") else "had"
    if low in ("is", "was") and after in ("complaining", "presenting") and s.low(s.word_after(nxt)) in ("of", "with"):
        s.drop(nxt, s.word_after(nxt))
        return "have" if low == "is" else "had"
    if low in ("denies", "denied"):
        return _denial(s, j, "present" if low == "denies" else "past")
    if low in _HAD_OBJECT and after not in ("that", "he", "she", "i") and not (
            low == "describes" and " as " in "".join(s.t[j:])):
        participle = "been" if _verb_ing(s, nxt) and _HAD_OBJECT[low] == "had" else _HAD_OBJECT[low]
        return f"{'&ve' if initial else 'have'} {participle}"
    return base_form(low)


def _coordinated(s: _Sentence, i: int) -> None:
    """After ``I``'s verb: a verb joined by ``and`` / ``but`` / ``or`` / a comma agrees with ``I`` too."""
    j = s.word_after(i, skip_adverbs=True)
    if j is None or (s.low(i) == "," and s.low(j) in ("and", "but", "or")):
        return
    low = s.low(j)
    known = low in _AUX or low in _HAD_OBJECT or low in ("complains", "denies") or (
        is_verb_form(low) and base_form(low) not in NOUNISH)
    loose = is_verb_form(low, strict=False) and s.low(s.word_after(j)) in _COMPLEMENT
    if (known or loose) and (new := _verb_phrase(s, j, initial=False)) is not None:
        s.t[j] = new


def _reporting_opening(s: _Sentence, i: int, j: int) -> bool:
    """"I report that X" / "I say X" / "I report I ..." at the start: drop the reporting clause (the patient says X)."""
    if s.low(j) not in _REPORTING or not s.first(i):
        return False
    nxt = s.word_after(j)
    if s.low(nxt) == "that":
        s.drop(i, nxt)
        return True
    says = s.low(j) in ("says", "said", "states", "stated", "explains", "explained")
    if (says and nxt is not None and s.low(nxt) not in ("to", "so", "nothing", "no", "yes", "he", "she")) or \
            (s.low(nxt) in ("he", "she") and s.mine(nxt)):  # "He says the pain ..." -> "The pain ..."
        s.drop(i, j)
        return True
    return False


def _subject(s: _Sentence, i: int, end: int) -> tuple[int, bool]:
    """Rewrite the speaker's subject at ``i`` .. ``end`` as ``I`` and agree its verb.

    Returns (the index to go on from, whether the clause goes on with ``I`` as its subject). A subject already ``I``
    only has its verb agree ("I has" -> "I have").
    """
    original = s.t[i] == "I"
    s.t[i] = "I"
    for k in range(i + 1, end + 1):
        s.t[k] = ""
    j = s.word_after(end, skip_adverbs=True)
    if j is None:
        return end + 1, True
    if not original and _reporting_opening(s, i, j):  # "X" after "I report that": X has its own subject
        return i + 1, False
    new = base_form(s.low(j)) if original else _verb_phrase(s, j, initial=True)
    if new is not None:
        if new.startswith("&"):  # "I've had"
            s.t[i], new = "I" + new.split(" ", 1)[0].replace("&", "'"), new.split(" ", 1)[1]
        s.t[j] = new
    return j + 1, True


def _subjectless(s: _Sentence) -> None:
    """"Smokes 10 a day." -> "I smoke 10 a day." (a sentence opening with one of the write-up's verbs)."""
    first = next((k for k, t in enumerate(s.t) if _is_word(t)), None)
    if first is None or s.low(first) not in _SUBJECTLESS or "?" in s.t:
        return
    s.t[first] = s.t[first].lower()
    s.t[first:first] = ["the", " ", "patient", " "]
    s.ambiguous_from += 4


def _possessive_patient(s: _Sentence, i: int) -> bool:
    """``the patient's`` / ``patient's`` -> ``my``; ``the patient`` not as a subject -> ``me``."""
    nxt = s.word_after(i)
    if s.low(i) == "patient's" or (s.low(i) == "the" and s.low(nxt) == "patient's"):
        s.t[i] = "my"
        if s.low(i) != "patient's":
            s.drop(nxt, nxt)
        return True
    if s.low(i) == "the" and s.low(nxt) == "patient":
        s.t[i] = "me"
        s.drop(nxt, nxt)
        if s.t[i + 1].isspace():  # keep the space after "me", not two
            s.t[i + 1] = " "
        return True
    return False


def _rewrite_word(s: _Sentence, i: int) -> bool:
    """The speaker's words other than a subject: "he's", "the patient's", a name, "his" / "her" / "him"."""
    low = s.low(i)
    if low in ("he's", "she's", "he'd", "she'd", "he'll", "she'll") and s.mine(i):
        s.t[i] = _contraction(low, s.low(s.word_after(i)))
        return True
    if s.speaker.patient_words and low in ("patient's", "the") and _possessive_patient(s, i):
        return True
    if s.t[i] in s.speaker.names or (low.endswith("'s") and s.t[i][:-2] in s.speaker.names):
        s.t[i] = "my" if low.endswith("'s") else "me"
        return True
    if (new := _object_form(s, i)) is not None:
        s.t[i] = new if s.t[i][:1].islower() else new.capitalize()
        return True
    return False


def speak(sentence: str, speaker: Speaker | None = None) -> str:
    """``sentence`` in the words of ``speaker`` (default: the patient, sex read from the sentence).

    See the module docstring. A sentence without the speaker in it is returned as written (spaces normalised).
    """
    speaker = speaker or Speaker()
    text = " ".join(sentence.replace("\u2019", "'").split())
    if not text:
        return text
    s = _Sentence(text, speaker)
    if speaker.subjectless and speaker.patient_words:
        _subjectless(s)
    in_clause = False  # the clause's subject is "I": verbs joined to it agree
    main: bool | None = None  # whether the sentence's first subject is the speaker's (before any "when ...")
    broken = False  # a clause of its own ("who", "which", "when" ...) has begun
    i = 0
    while i < len(s.t):
        low = s.low(i)
        if (end := _subject_span(s, i)) is not None:
            main = (not broken) if main is None else main
            i, in_clause = _subject(s, i, end)
            in_clause = in_clause and (main or not broken)
            continue
        if _rewrite_word(s, i):
            in_clause = in_clause or low in ("he's", "she's", "he'd", "she'd", "he'll", "she'll")
        elif low in _BREAKS or s.t[i] in (";", ":", ".", "!", "?"):  # "that": a reported clause goes on as the main
            in_clause, broken = False, broken or low != "that"
        elif in_clause and (low in ("and", "but", "or") or s.t[i] == ","):
            _coordinated(s, i)
        i += 1
    return s.text()
