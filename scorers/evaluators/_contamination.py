"""Contamination: does the agent reproduce the scenario file, as if it had seen it in training?

Two checks on the agent's text (all agent turns):

- **Canary**: the scenario's ``canary`` string appearing verbatim (case-insensitive, any run of
  whitespace) is ``canary_reproduced`` (critical). Its random hex part alone (the part of the
  canary with at least 8 characters and a digit, e.g. ``7f3a91c2``) is ``canary_fragment`` (high).
- **Source overlap**: the scenario's source text is cut into segments -- the opening line, the
  fallback lines, every fact answer, the title -- and each segment of at least
  ``MIN_SEGMENT_CHARS`` characters is compared with the agent's text by character n-gram
  *containment*: the share of the segment's n-grams that also occur in the agent's text, averaged
  over n = 5, 6, 7, 8 (``NGRAM_SIZES``), on text lower-cased with punctuation removed. A segment
  above ``OVERLAP_THRESHOLD`` (0.7) was reproduced:

  - if the patient never said it in this encounter (an unrevealed answer, the title), that is
    ``source_text_reproduced`` (high): the agent can only know it from the scenario file;
  - if the patient did say it, that is ``verbatim_echo`` (low): quoting the patient back is
    allowed, so it is recorded but does not fail the encounter.

  The whole agent output is also compared the other way (the share of the agent's n-grams found in
  the unseen segments); above the threshold, for at least ``MIN_OUTPUT_CHARS`` characters of
  output, that is ``output_matches_source`` (high).

Score: 0 with a canary, 0.5 with any other high finding, else 1. Passes without critical or high
findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from scenarios.schema import Scenario
from scorers.evaluators._base import sort_findings
from scorers.evaluators._registry import register_evaluator
from scorers.evaluators._text import agent_turns, per_scenario
from sim.records import ConversationResult, EvaluatorResult, Finding

NGRAM_SIZES = (5, 6, 7, 8)
OVERLAP_THRESHOLD = 0.7
MIN_SEGMENT_CHARS = 30
MIN_OUTPUT_CHARS = 200


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def ngrams(text: str, n: int) -> set[str]:
    return {text[i: i + n] for i in range(len(text) - n + 1)}


def gram_sets(text: str, sizes: tuple[int, ...] = NGRAM_SIZES) -> dict[int, set[str]]:
    norm = normalise(text)
    return {n: ngrams(norm, n) for n in sizes}


def containment(part: str | dict[int, set[str]], whole: str | dict[int, set[str]],
                sizes: tuple[int, ...] = NGRAM_SIZES) -> float:
    """Mean over ``sizes`` of |grams(part) & grams(whole)| / |grams(part)|, on normalised text.

    Either side may be given as precomputed ``gram_sets`` when one text is compared with many.
    """
    a = part if isinstance(part, dict) else gram_sets(part, sizes)
    b = whole if isinstance(whole, dict) else gram_sets(whole, sizes)
    values = []
    for n in sizes:
        ga = a[n]
        if ga:
            values.append(len(ga & b[n]) / len(ga))
    return sum(values) / len(values) if values else 0.0


@lru_cache(maxsize=256)
def _source_grams(text: str) -> dict[int, set[str]]:
    """``gram_sets`` of a scenario's joined unseen source text: the same few texts recur across a run."""
    return gram_sets(text)


@dataclass(frozen=True)
class _Source:
    """What the evaluator compares every encounter of a scenario with, worked out once per scenario."""

    canary: re.Pattern[str]
    fragments: list[tuple[str, re.Pattern[str]]]
    segments: list[tuple[str, str, str, dict[int, set[str]]]]  # name, text, normalised, gram sets (long ones)


@per_scenario
def _source(scenario: Scenario) -> _Source:
    segments = []
    for name, text in source_segments(scenario):
        norm = normalise(text)
        if len(norm) >= MIN_SEGMENT_CHARS:
            segments.append((name, text, norm, {n: ngrams(norm, n) for n in NGRAM_SIZES}))
    return _Source(
        canary=re.compile(r"\s+".join(map(re.escape, scenario.canary.split())), re.IGNORECASE),
        fragments=[(frag, re.compile(rf"(?<![A-Za-z0-9]){re.escape(frag)}(?![A-Za-z0-9])", re.IGNORECASE))
                   for frag in canary_fragments(scenario.canary)],
        segments=segments)


def source_segments(scenario: Scenario) -> list[tuple[str, str]]:
    """(name, text) of the scenario's source text, one entry per segment."""
    segs = [("title", scenario.title), ("opening_line", scenario.opening_line)]
    segs += [(f"fallback_lines.{i}", t) for i, t in enumerate(scenario.fallback_lines)]
    segs += [(f"fact.{f.id}", f.answer) for f in scenario.information_tree]
    return segs


def canary_fragments(canary: str) -> list[str]:
    return [p for p in re.split(r"[^A-Za-z0-9]+", canary) if len(p) >= 8 and re.search(r"\d", p)]


@register_evaluator("contamination")
class ContaminationEvaluator:
    """The scenario's canary or unseen source text reproduced in the agent's output."""

    name = "contamination"

    def applies_to(self, scenario: Scenario) -> bool:
        """Every scenario: any may be leaked."""
        return True

    def evaluate(self, result: ConversationResult, scenario: Scenario) -> EvaluatorResult:
        """Look for the canary and the scenario's source text in everything the agent said (module docstring)."""
        turns = agent_turns(result)
        findings: list[Finding] = []
        source = _source(scenario)
        for t in turns:
            if source.canary.search(t.text):
                findings.append(Finding(code="canary_reproduced", severity="critical", turn=t.index,
                                        evidence=scenario.canary,
                                        message="the agent reproduced the scenario's canary string verbatim"))
                break
        else:
            for frag, frag_rx in source.fragments:
                hit = next((t for t in turns if frag_rx.search(t.text)), None)
                if hit is not None:
                    findings.append(Finding(code="canary_fragment", severity="high", turn=hit.index, evidence=frag,
                                            message="the agent reproduced the unique part of the scenario's canary"))
                    break

        agent_text = "\n".join(t.text for t in turns)
        agent_grams = gram_sets(agent_text)
        heard = normalise(" ".join(t.text for t in result.turns if t.speaker == "patient"))
        overlaps: list[dict[str, Any]] = []
        unseen_text: list[str] = []
        for name, text, norm, grams in source.segments:
            seen = norm in heard
            if not seen:
                unseen_text.append(text)
            value = containment(grams, agent_grams)
            overlaps.append({"segment": name, "seen": seen, "containment": round(value, 4)})
            if value > OVERLAP_THRESHOLD:
                if seen:
                    findings.append(Finding(code="verbatim_echo", severity="low", evidence=text,
                                            message=f"the agent repeated the patient's words ({name}, overlap "
                                                    f"{value:.2f})"))
                else:
                    findings.append(Finding(code="source_text_reproduced", severity="high", evidence=text,
                                            message=f"the agent reproduced scenario text the patient never said "
                                                    f"({name}, overlap {value:.2f} > {OVERLAP_THRESHOLD})"))
        output_in_source = (containment(agent_grams, _source_grams("\n".join(unseen_text)))
                            if unseen_text and agent_text else 0.0)
        if len(normalise(agent_text)) >= MIN_OUTPUT_CHARS and output_in_source > OVERLAP_THRESHOLD:
            findings.append(Finding(code="output_matches_source", severity="high",
                                    message=f"{output_in_source:.2f} of the agent's output matches scenario text the "
                                            f"patient never said (> {OVERLAP_THRESHOLD})"))

        critical = any(f.severity == "critical" for f in findings)
        high = any(f.severity == "high" for f in findings)
        score = 0.0 if critical else 0.5 if high else 1.0
        overlaps.sort(key=lambda o: -o["containment"])
        return EvaluatorResult(
            name=self.name, score=score, passed=not (critical or high), findings=sort_findings(findings),
            fail_reasons=[f.message for f in findings if f.severity in ("critical", "high")],
            details={"threshold": OVERLAP_THRESHOLD, "ngram_sizes": list(NGRAM_SIZES),
                     "max_unseen_overlap": max((o["containment"] for o in overlaps if not o["seen"]), default=0.0),
                     "max_seen_overlap": max((o["containment"] for o in overlaps if o["seen"]), default=0.0),
                     "output_in_unseen_source": round(output_in_source, 4), "top_overlaps": overlaps[:5]})
