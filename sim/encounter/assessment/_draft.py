"""A block of fields that is a draft, not the final assessment: the boundary that must never end an interview early.

Agents write provisional blocks mid-interview in every layout they write finals in. A block is a draft when:

- its marker, heading, a short line introducing it or a tag in it calls it unfinished (``_DRAFT``: provisional,
  draft, interim, preliminary, working, pending, TBD ...): "PRELIMINARY ASSESSMENT", "[Interim] ESI 3 | ...",
  "DRAFT | ESI=4";
- a status field anywhere in the reply says so (``_STATUS_LABEL`` with a value that is not final): "STATUS:
  INTERIM", "Final?: No", "final: no", "draft = true", "Assessment status: PENDING", a table's "Status" column
  reading "DRAFT", a JSON object's ``"final": false`` or ``"status": "in_progress"`` (nested ones too: a JSON object
  is read as lines), an XML attribute ``final="false"``;
- a triage level or escalation value defers (``_DEFERRED``): "TBD", "pending", "ESI 3?", "ESI 2 or 3",
  "emergency vs urgent", a template placeholder "<1-5>", "[1-5]", "[emergency / urgent / routine]";
- the reply says it has not decided (``_UNDECIDED``): "before I finalise", "I'm holding off on making this final",
  "if I had to finalise now it would look like this", "I can't settle the level until ...", "awaiting your answer",
  "at the end I'll give you an assessment in this form",
  "the format my final assessment will take", "I need a couple more answers before it's final",
  "Recommendation: to follow once I know ...", "in a moment I'll summarise it as:", "I can't say yet", "I need a
  reading first".

Words such as "provisional" inside a field's label ("Provisional diagnosis: X") or "so far" inside a sentence of
the advice do not make a draft: only the block's own marker, tags, status fields, level and escalation values, and
what the reply says about its decision count.
"""

from __future__ import annotations

import re

from sim.encounter.assessment._layout import _FIELD_KINDS, _field, _field_text, _fields, _Line

_DRAFT_WORDS = (r"provisional(?:ly)?|draft|interim|preliminary|tentative(?:ly)?|working|so far|in progress|pending"
                r"|not (?:yet )?final|tbd|tbc|to be (?:confirmed|decided|determined)|for now|incomplete|unconfirmed")
_DRAFT = re.compile(rf"\b(?:{_DRAFT_WORDS})\b", re.IGNORECASE)
_DEFERRED = re.compile(rf"\b(?:{_DRAFT_WORDS})\b|(?:^|\s)\?+\s*$|[1-5]\s*\?|<[^>]*>"
                       r"|\[\s*[1-5]\s*[-\u2013]\s*[1-5]\s*\]|\[[^\]]*[/|][^\]]*[/|][^\]]*\]"  # "[1-5]", "[a / b / c]"
                       r"|\b[1-5]\s*(?:or|to)\s*(?:esi\s*|level\s*)?[1-5]\b|\b[1-5]\s*/\s*[1-4]\b"
                       r"|\b(?:vs\.?|versus|or possibly)\b",
                       re.IGNORECASE)
# "her reliever isn't working", "the inhaler is not working": a treatment failing, not a working (draft) diagnosis
_NOT_WORKING = re.compile(r"\b(?:is|are|was|were|isn'?t|aren'?t|wasn'?t|not|stopped|still)\s+working\b",
                          re.IGNORECASE)
_STATUS_LABEL = re.compile(r"^(?:(?:assessment|triage|answer|decision|report) )?(?:status|state|stage|final\??|is final"
                           r"|draft|is draft|ready to finali[sz]e|complete|finali[sz]ed|done)$", re.IGNORECASE)
_NOT_FINAL_VALUE = re.compile(rf"^\W*(?:no|false|n|0|null|none|not yet|{_DRAFT_WORDS}|ongoing|open|partial)\b",
                              re.IGNORECASE)
_YES_VALUE = re.compile(r"^\W*(?:yes|true|y|1)\b", re.IGNORECASE)
_NOT_FINAL_ATTRIBUTE = re.compile(
    rf"\b(?:status|state|stage)\s*=\s*[\"']?(?:{_DRAFT_WORDS})|\b(?:final|is_final|complete)\s*=\s*[\"']?(?:false|no)\b"
    r"|\bdraft\s*=\s*[\"']?(?:true|yes)\b", re.IGNORECASE)
_UNDECIDED = re.compile(
    r"\b(?:before (?:i |)(?:finali[sz]e|finali[sz]ing|confirm|decide|commit|settle|give you my)"
    r"|(?:once|when) i (?:know|have|hear)\b[^.?!]*\b(?:i'?ll|i will|i can)"
    r"|(?:isn'?t|is not|not) (?:yet |my )?final|holding off|hold off"
    r"|if i (?:had|have) to (?:finali[sz]e|decide|give|commit)|would look (?:like|something like) this"
    r"|\bi (?:can'?t|cannot|won'?t|will not) (?:yet )?(?:settle|decide|finali[sz]e|confirm|be sure of)"
    r"|(?:awaiting|waiting (?:on|for)) (?:your|the) (?:answer|reply|reading|result|response)"
    r"|still need (?:to (?:know|ask|check|hear)|one more|your|an answer)|more questions to follow"
    r"|i(?:'ll| will) (?:finali[sz]e|confirm|give you) (?:my|the|this|your|an?) (?:final )?(?:assessment|triage"
    r"|decision|level|advice)(?! now)|(?:at the end|afterwards|after (?:that|your answers?))[^.?!]*\bi'?ll give"
    r"|before (?:it'?s|it is|this is|i make it) final|need (?:a couple|a few|some|two|one) more (?:answers?|questions?"
    r"|details?|things?)|\bto (?:follow|come) (?:once|when|after)\b|\bonce i know\b"
    r"|\bin a (?:second|moment|minute|bit)\b[^.?!]*\bi'?ll (?:summari[sz]e|give|sum up)"
    r"|\b(?:format|template|form|shape)\b[^.?!]{0,30}\bwill (?:take|look like|follow)\b"
    r"|\bcan'?t (?:say|tell|decide|be sure)(?: for sure)? yet\b|\bneed (?:a|the|your|her|his) (?:reading|number|result"
    r"|answer) first\b)",
    re.IGNORECASE)
_SHORT = 6  # words: a tag or title line, not a sentence
_LEADING_DRAFT = re.compile(rf"^\W*(?:\w+\W+){{0,2}}(?:{_DRAFT_WORDS})\b", re.IGNORECASE)  # in its first words


def _tagged(line: _Line) -> bool:
    """A short line that is a draft tag or title: "DRAFT", "[Interim]", "PRELIMINARY ASSESSMENT"."""
    text = line.body.replace("_", " ")
    f = _field(line)
    return len(re.findall(r"\w+", text)) <= _SHORT and (f is None or f.kind not in _FIELD_KINDS) and \
        bool(_LEADING_DRAFT.match(text) or (line.heading and _DRAFT.search(text)))


def _status_says_draft(line: _Line) -> bool:
    """A status field whose value is not final: "STATUS: INTERIM", "Final?: No", "draft = true"."""
    m = re.match(r"^(?P<label>[^:=]{1,40}?)\s*[:=]\s*(?P<value>.*)$", line.body.replace("_", " "))
    if m is None or not _STATUS_LABEL.match(" ".join(m["label"].lower().split())):
        return False
    label, value = m["label"].lower(), m["value"]
    if "draft" in label:
        return bool(_YES_VALUE.match(value))
    return bool(_NOT_FINAL_VALUE.match(value))


def is_draft(lines: list[_Line], start: int) -> bool:
    """Whether the block found at ``start`` is a draft, not the final assessment (the module docstring)."""
    before = next((k for k in range(start - 1, -1, -1) if lines[k].body), None)
    block = lines[start:] if before is None else [lines[before], *lines[start:]]
    if any(_tagged(line) for line in block) or \
            any(_status_says_draft(line) or _NOT_FINAL_ATTRIBUTE.search(line.raw) for line in lines):
        return True
    section = lines[start:]
    for j, f in _fields(section):
        # the value, not the sentences after it ("Escalation: urgent. ... a UTI, or possibly a stone")
        value = _NOT_WORKING.sub(" ", re.split(r"(?<=[.!])\s", _field_text(section, j, f), maxsplit=1)[0])
        if f.kind in ("level", "escalation") and _DEFERRED.search(value):
            return True
    return any(_UNDECIDED.search(line.body) for line in lines)
