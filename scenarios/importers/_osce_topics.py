"""What a statement of a case is about: the lexicon's intents whose topic the statement names.

The shared lexicon's cues (``scenarios/intents.yaml``) are written for *questions*: a one-word cue there stands for
its topic because the question is asked within it ("Have you made any attempts?" after questions about suicide). In
a statement of a case the same word is often incidental: "attempting to conceive" is not about suicide attempts,
"high-risk sexual behaviours" not about confusion, "a mass in her left breast" not about how a baby feeds, "bloody
stools" not about blood tests. ``topic_intents(text)`` therefore keeps an intent whose cue the statement matches only
when the statement is about the intent's topic:

- a cue of two or more words matched (a phrase, or a cue of several parts: "short of breath", [tried, to, kill]); or
- the statement names a topic of the intent: all the content words of its id ("previous_attempts": previous and
  attempts; "fever") or of one item of its description (``description``, split at commas, semicolons, colons,
  brackets, dashes and "or", an alternative after "X:" keeping X: "previous suicide attempts, overdoses, past
  self-harm" -> [suicide, attempts], [overdoses], [self, harm]; "a baby's feeding: bottle or breast" -> [baby,
  feeding, bottle], [baby, feeding, breast]); or
- two different words of the intent's topic occur (its one-word cues, and the content words of its description and
  of its phrasings): "drinks two to three beers", "respiratory distress with grunting"; or
- the cue is what a short item of the statement names: an item of a list, or the whole statement, of one word or
  of one word qualified by one modifier ("Denies fever, nausea or dysuria": dysuria; "Peripheral cyanosis"; "Easy
  bruising"; not "Enjoys cycling", "Delivered vaginally" or "Recent weight loss attempt").

One incidental word in a longer statement is never enough. Words are compared after the lexicon's own normalisation
(``normalise``: lower case, the ``words`` table, stemming), as cues are.
"""

from __future__ import annotations

import re
from functools import lru_cache

from scenarios.importers._text import STOPWORDS, WEAK_WORDS
from scenarios.lexicon import compiled_intents, intents_in, load_lexicon, normalise, padded

# Words that say nothing of a topic: function words, time words (``STOPWORDS``), and these.
_FILLER = {normalise(w)[0] for w in STOPWORDS | {"kind", "any", "anything", "everything", "someone", "well", "able",
                                                 "whether", "get", "got", "thing", "things", "way", "else", "often"}
           if normalise(w)}


_WEAK = {normalise(w)[0] for w in WEAK_WORDS if normalise(w)}
# Words of a write-up around the thing it names ("a history of easy bruising", "episodes of ...").
_WRITE_UP = {normalise(w)[0] for w in ("history", "episodes", "signs", "symptoms", "complaints", "reports", "known")}


def _content(text: str) -> frozenset[str]:
    return frozenset(w for w in normalise(text) if w not in _FILLER and not w.isdigit() and len(w) > 1)


@lru_cache(maxsize=1)
def _topics() -> dict[str, tuple[tuple[frozenset[str], ...], frozenset[str]]]:
    """Each intent's topic phrases (its id, the items of its description) and its topic words."""
    out = {}
    for iid, intent in load_lexicon().intents.items():
        own = frozenset(normalise(iid.replace("_", " ")))  # every word of the id, "previous" too
        phrases = tuple(p for p in (own, *_description_items(intent.description)) if p)
        single = {c.phrases[0].strip() for c in compiled_intents()[iid][0]
                  if len(c.phrases) == 1 and len(c.phrases[0].split()) == 1}
        vocabulary = (single | _content(intent.description) | {w for q in intent.phrasings for w in _content(q)}) \
            - _WEAK
        out[iid] = (phrases, frozenset(vocabulary))
    return out


_MODIFIER = re.compile(r"(?:al|ic|ous|ive|ful|less|ent|ant|ary|ory|ile|ar|y)$")


def _modifier(word: str) -> bool:
    """A word that can qualify a noun ("peripheral", "easy", "recent", "severe"); not a verb or an adverb."""
    return word in WEAK_WORDS or (bool(_MODIFIER.search(word)) and not word.endswith("ly"))


def _heads(text: str) -> set[str]:
    """What the short items of a statement name.

    Each item (of a list, or the whole statement) of one word, or of a word qualified by one modifier ("Peripheral
    cyanosis", "easy bruising", "No fever"), gives its last word.
    """
    heads = set()
    for part in re.split(r"[,;:()]|\b(?:and|or|nor|but|with|without|no|not|denies|denied|except)\b", text.lower()):
        raw = [w for w in re.findall(r"[a-z]+", part) if (n := normalise(w)) and n[0] not in _FILLER | _WRITE_UP]
        if len(raw) == 1 or (len(raw) == 2 and _modifier(raw[0])):
            heads.add(normalise(raw[-1])[-1])
    return heads


def _description_items(description: str) -> list[frozenset[str]]:
    """The content words of each item of a description.

    Items are split at commas, semicolons, brackets, dashes and "or"; after "X:" each alternative keeps X ("a baby's
    feeding: bottle or breast" -> [baby, feeding, bottle], [baby, feeding, breast]).
    """
    out = []
    for part in re.split(r"[,;()\[\]]|\s[-–—]\s", description):
        head, _, rest = part.rpartition(":") if ":" in part else ("", "", part)
        for alternative in re.split(r"\bor\b|\band/or\b", rest):
            out.append(_content(f"{head} {alternative}"))
    return out


def _specific(phrases: tuple[str, ...]) -> bool:
    """A cue of two or more words."""
    return len(phrases) > 1 or len(phrases[0].split()) > 1


def topic_intents(text: str) -> set[str]:
    """The intents a statement is about: matched by a cue, and about the intent's topic (see the module docstring)."""
    p = padded(re.sub(r"[,;:()]", " and ", text))  # list items apart
    if not p:
        return set()
    words = set(p.split())
    heads = _heads(text)
    found: set[str] = set()
    compiled = compiled_intents()
    for iid in intents_in(text):  # matched and not vetoed; then which cues matched, and is it the topic
        hits = [c for c in compiled[iid][0] if c.hit(p)]
        phrases, vocabulary = _topics()[iid]
        if any(_specific(c.phrases) for c in hits) or any(ph <= words for ph in phrases) \
                or len(vocabulary & words) >= 2 \
                or any(c.phrases[0].strip() in heads for c in hits):
            found.add(iid)
    return found
