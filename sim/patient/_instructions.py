"""Instructions to examine or observe something now, told apart from advice (``sim.patient.understanding``).

``instructs`` says whether a sentence tells the listener to examine or observe something now and report it (a
request for a finding); ``manoeuvre`` whether it tells them to do a manoeuvre now (read with the question after it).
"""

from __future__ import annotations

import re

# An instruction to examine or observe something now and report it is a request, however politely it opens
# ("Can you ask him to smile?", "Please send a photo of the rash.", "Wiggle your toes for me.", "I'd like you to
# press where it hurts and tell me if it's sore."); advice is not ("Keep him warm and let me know if he gets worse.",
# "Give her ten puffs now.", "Take him straight to A&E.", "Ask your friend to stay with you."):
# - an observation that is itself the report (check, measure, count, have a look, send a photo, take a reading);
# - having someone else do a manoeuvre ("ask him to smile", "get her to blow into the meter", "have him grip");
# - a manoeuvre (press, wiggle, stand, hold up, run your fingers over...) with a report asked in the same sentence
#   ("... and tell me", "... for me", "... and see if", "... so I can read it").
_POLITE = re.compile(
    r"^(?:(?:(?:can|could|would|will) you(?: please)?(?: just)?(?: also)?|(?:would|do) you mind|"
    r"(?:i|we)(?:'d| would) (?:also )?like you to|(?:i|we) (?:need|want) you to|if you (?:can|could),?|"
    r"(?:try|trying) (?:to|and)|now|just|also|then|quickly|gently|carefully|first)\s+)*", re.I)


_VERBS = ("press push prod poke touch feel put pop place hold lift raise wiggle move bend straighten squeeze grip "
          "clench stand walk step hop open close shut smile show blow cough breathe turn tilt point follow say repeat "
          "read undress pull swallow tap look watch count hum talk speak frown smell sniff listen time weigh check "
          "measure shine")


def _manoeuvres(ing: bool) -> str:
    """The manoeuvres a listener may be asked to do, as a regex; with their -ing forms ("Try putting ...") or not."""
    verbs: list[str] = []
    for verb in _VERBS.split():
        verbs.append(verb)
        if ing:
            verbs += [f"{verb}ing", f"{verb[:-1]}ing" if verb.endswith("e") else f"{verb}{verb[-1]}ing"]
    g = "(?:ing)?" if ing else ""
    return (r"(?:(?:" + "|".join(sorted(set(verbs), key=len, reverse=True)) + r")"
            rf"|stick{g} out|puff{g} out|run{'(?:ning)?' if ing else ''} (?:your|his|her|a) (?:finger|hand)s?|"
            rf"tak{'(?:e|ing)' if ing else 'e'} (?:a|some|\w+) (?:deep |big )?(?:breaths?|steps?)|"
            rf"tak{'(?:e|ing)' if ing else 'e'} (?:your|his|her|their|the) \w+ off|"
            rf"giv{'(?:e|ing)' if ing else 'e'} (?:a|me a|us a) (?:big |good |little )?cough)")


_MANOEUVRE = _manoeuvres(ing=False)
_TRY_DO = re.compile(r"^(?:try|trying) " + _manoeuvres(ing=True) + r"\b", re.I)  # "Try putting your weight on it"
_OBSERVE = re.compile(
    r"^(?:check(?! on\b)|measure|count|feel (?:for|her|his|their|your|the)|"
    r"(?:have|take) a (?:quick |good |close |proper )?look|"
    r"look (?:at|in|into|inside|under|closely)|watch (?:his|her|their|the|him|them)\b|"
    r"see (?:if|whether) (?:he|she|they|you) can " + _MANOEUVRE + r"|"
    r"(?:send|upload|snap|text|email|share|show|pop|grab|drop|fire|whatsapp|attach|forward|get)(?: (?:me|us))?"
    r"(?: (?:a|an|the|some|a few))?(?: (?:quick|clear|close|good))? "
    r"(?:photo|picture|pic|image|photograph|snap|video)s?|"
    r"take (?:a|her|his|their|your|the|another|a new)?\s*(?:quick |fresh )?(?:reading|temperature|temp|pulse|"
    r"blood pressure|bp|sats|oxygen|peak flow|sugar|glucose|photo|picture|pic|photograph)s?)\b", re.I)
# "Have her sit upright" is an instruction, not the question "Have her symptoms changed?".
HAVE_SOMEONE = re.compile(
    r"^(?:have|get|make|let) (?:him|her|them|someone|somebody|the (?:baby|child|patient|little one)) (?:to )?"
    r"(?:sit|lie|stay|take|drink|keep|rest|use|wear|call|ring|phone|go|come|stop|avoid|eat|wait|sip|try|bring|give|"
    r"carry|sleep|be|wash|change|put|hold|breathe|move|stand|walk|look|check|lift|raise|smile|show|blow|open|count|"
    r"read|say|repeat|press|push|point|follow|squeeze|grip|touch|feel|speak|talk)\b", re.I)
_HAVE_DO = re.compile(
    r"^(?:ask|get|have) (?:him|her|them|the (?:baby|child|patient|little one)|your (?:\w+ )?\w+) (?:to )?"
    + _MANOEUVRE + r"\b", re.I)
_DO = re.compile(r"^" + _MANOEUVRE + r"\b", re.I)
_REPORT = re.compile(
    r"\b(?:tell me|tell us|read (?:me|us|out|it out)|for me|and see\b|see (?:if|whether|what|how)|"
    r"let me know (?:what|how|whether|which|where)|so (?:that )?(?:i|we) can (?:see|read|hear|check|look)|"
    r"what (?:you|he|she|they|it) (?:see|feel|notice|find|looks?|reads?|says?)|(?:and|to) (?:check|count|measure))",
    re.I)
# Advice and safety-netting: what to do until help comes, later, regularly, or if something changes.
_ADVICE = re.compile(
    r"\b(?:until|till|while (?:you|we|they|waiting|the|help|an?)\b|in case|when (?:the|they|you get|you arrive|help)|"
    r"(?:if|should) [^,.;]{0,30}?\b(?:gets?|becomes?|starts?|changes?|stops?|goes|feels? worse|worsens?|spreads?|"
    r"develops?|comes? back|does(?:n't| not) (?:improve|settle|get better))\b|every \w+|"
    r"each (?:morning|day|night|hour)|"
    r"tonight|tomorrow|overnight|through the night|later|regularly|from now on|over the next|at a time|"
    r"in (?:an?|one|two|three|a few|\d+) (?:hours?|days?)|in (?:two|three|a few|\d+) minutes|"
    r"for (?:the next|a few|two|three|\d+) (?:hours|days)|"
    r"(?:call|ring|phone) (?:back|us|999|111|an ambulance)|go (?:to|straight)|come (?:in|back))\b",
    re.I)
# A short heading before an instruction ("Face: ask him to smile.", "**Arms**: get him to lift both arms.").
_HEADING = re.compile(r"^[A-Za-z][\w'/&-]*(?: [\w'/&-]+){0,2}:\s+(?=\S)")


# A time clause before an instruction ("When you next go, have a look in the pan.", "Once she's up, ask her to
# smile."): the instruction is still for now; advice in it is still advice (``_ADVICE`` reads the whole sentence).
_WHEN = re.compile(r"^(?:when|once|after|as soon as|(?:the )?next time)\b[^,.;:?!]{1,40},\s*", re.I)


def _instruction(s: str) -> str:
    """``s`` without a short heading, a time clause, and the polite frame of an instruction ("Could you")."""
    return _POLITE.sub("", _WHEN.sub("", _HEADING.sub("", s)))


# After a manoeuvre, "tell me if ..." asks for the finding now ("Press on it and tell me if it spreads."), not to
# report a change later: the condition it opens is not safety-netting (``_ADVICE``), a time word still is.
_REPORT_IF = re.compile(r"\b(?:tell (?:me|us)|and see) (?:if|whether)\b", re.I)


def _advises(s: str) -> bool:
    """Whether ``s`` gives advice (``_ADVICE``), a manoeuvre's "tell me if" aside."""
    if not _ADVICE.search(s):
        return False
    bare = _instruction(s)
    if _DO.match(bare) or _TRY_DO.match(bare) or _HAVE_DO.match(bare):
        return bool(_ADVICE.search(_REPORT_IF.sub("tell me", s)))
    return True


def instructs(s: str) -> bool:
    """Whether ``s`` (filler stripped) tells the listener to examine or observe something now and report it."""
    if _advises(s):
        return False
    s = _instruction(s)
    return bool(_OBSERVE.match(s) or _HAVE_DO.match(s) or ((_DO.match(s) or _TRY_DO.match(s)) and _REPORT.search(s)))


def manoeuvre(s: str) -> bool:
    """Whether ``s`` tells the listener to do a manoeuvre now, not to follow advice.

    Such a sentence is read with the question after it ("Ask him to smile. Is it even?", "Press on the bone. Does
    that hurt?").
    """
    if _advises(s):
        return False
    s = _instruction(s)
    return bool(_DO.match(s) or _TRY_DO.match(s) or _HAVE_DO.match(s))
