"""How well the final-assessment reader reads chat models' finals, and ignores mid-conversation mentions.

    .venv/bin/python bench/assessment_reader.py [--data FILE ...] [--by-format] [--misses]
        [--judge MODEL --judge-base-url URL [--judge-api-key-env VAR] | --judge local]

Data (YAML; default: every ``bench/data/assessment_*.yaml``). Each set was written blind to the parser by a different
author who read no code and saw no other set: the ``assessment_dev*`` sets were then tuned on (each file's header
says what it scored before), ``assessment_check.yaml`` never was::

    finals:                          # each must be read as the final assessment, with these fields
      - {format: json_code_block, text: "...", triage_level: 2, escalation: emergency,
         disposition: ambulance, diagnoses: [Acute coronary syndrome, Aortic dissection]}
    mentions:                        # mid-conversation turns: must not be taken as the final
      - {format: question_with_assessment_word, text: "..."}

Three readers, each on every reply:

- **deterministic**: ``assessment_form`` and ``parse_assessment`` alone (what a run without ``--judge`` does);
- **judge**: the judge alone (``AssessmentJudge.read`` on every reply, nothing deterministic);
- **both**: what a run with ``--judge`` does (``AssessmentJudge.fallback``: the deterministic reader, and the judge
  where it finds the fields incomplete or a reply may decide without fields).

A final is **read right** when it is taken as final and its triage level and escalation equal the expected ones (a
field the data leaves null must be read as None) and, when the data lists diagnoses, the first one read names the
first one expected (either contains the other, case and punctuation aside). A mention is **ignored** when it is not
taken as final. Printed per reader: finals read right, mentions ignored, and per-field accuracy; with a judge, the
agreement between the deterministic reader and the judge on whether each reply is final and on its level and
escalation. Goal (issue 35): at least 95% of finals read right and 100% of mentions ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.encounter.assessment import AssessmentJudge, assessment_form, parse_assessment
from sim.records import ParsedAssessment

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_DATA = sorted(DATA.glob("assessment_*.yaml"))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def same_diagnosis(read: str, expected: str) -> bool:
    """Whether the name read is the name expected: either contains the other, case and punctuation aside."""
    a, b = _norm(read), _norm(expected)
    return bool(a and b) and (a in b or b in a)


@dataclass
class Tally:
    finals: int = 0
    right: int = 0
    mentions: int = 0
    ignored: int = 0
    fields: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    by_format: dict[str, list[int]] = field(default_factory=dict)


def check_final(case: dict[str, Any], parsed: ParsedAssessment | None) -> dict[str, bool]:
    """Field by field: whether ``parsed`` (None: not taken as final) reads ``case`` right."""
    if parsed is None:
        return {"found": False, "level": False, "escalation": False, "diagnosis": False}
    want_dx = case.get("diagnoses") or []
    dx_ok = (not want_dx and not parsed.diagnoses) if not want_dx else \
        bool(parsed.diagnoses) and same_diagnosis(parsed.diagnoses[0], str(want_dx[0]))
    return {"found": True, "level": parsed.triage_level == case.get("triage_level"),
            "escalation": parsed.escalation == case.get("escalation"), "diagnosis": dx_ok or not want_dx}


def tally(tal: Tally, case: dict[str, Any], parsed: ParsedAssessment | None, final: bool) -> None:
    fmt = str(case.get("format", "?"))
    per = tal.by_format.setdefault(fmt, [0, 0])
    if final:
        checks = check_final(case, parsed)
        ok = all(checks.values())
        tal.finals += 1
        tal.right += ok
        tal.fields.update(k for k, v in checks.items() if v)
        per[0] += ok
        per[1] += 1
        if not ok:
            got = "not found" if parsed is None else (f"level {parsed.triage_level}, {parsed.escalation}, "
                                                      f"dx {parsed.diagnoses[:1]}")
            wrong = ", ".join(k for k, v in checks.items() if not v)
            tal.misses.append(f"[final {fmt}] {wrong}: got {got}; want level {case.get('triage_level')}, "
                              f"{case.get('escalation')}, dx {(case.get('diagnoses') or [])[:1]}\n    "
                              + case["text"][:160].replace("\n", " | "))
    else:
        ignored = parsed is None
        tal.mentions += 1
        tal.ignored += ignored
        if not ignored:
            tal.misses.append(f"[mention {fmt}] taken as final\n    " + case["text"][:160].replace("\n", " | "))


def deterministic(text: str) -> ParsedAssessment | None:
    return parse_assessment(text) if assessment_form(text) is not None else None


async def measure(data: dict[str, Any], judge: AssessmentJudge | None,
                  alone_by_text: dict[str, ParsedAssessment | None]) -> dict[str, Tally]:
    """Every reply through each reader; the judge's own readings are kept in ``alone_by_text``."""
    readers: dict[str, Tally] = {"deterministic": Tally()}
    if judge is not None:
        readers["judge"] = Tally()
        readers["both"] = Tally()
    for final, cases in ((True, data.get("finals") or []), (False, data.get("mentions") or [])):
        for case in cases:
            text = case["text"]
            det = deterministic(text)
            tally(readers["deterministic"], case, det, final)
            if judge is None:
                continue
            alone = alone_by_text[text] = await judge.read(text, ParsedAssessment())
            tally(readers["judge"], case, alone, final)
            fallback = await judge.fallback(text, assessment_form(text))
            tally(readers["both"], case, fallback or det, final)
    return readers


def report(readers: dict[str, Tally], *, by_format: bool, misses: bool) -> None:
    print(f"{'reader':14} {'finals read right':>20} {'mentions ignored':>18}   per field (finals)")
    for name, t in readers.items():
        fields = "  ".join(f"{k} {t.fields[k]}/{t.finals}" for k in ("found", "level", "escalation", "diagnosis"))
        print(f"{name:14} {t.right:>4}/{t.finals:<4} {t.right / max(1, t.finals):>6.1%}   "
              f"{t.ignored:>4}/{t.mentions:<4} {t.ignored / max(1, t.mentions):>6.1%}   {fields}")
    if by_format:
        for name, t in readers.items():
            print(f"\n{name}: finals read right per format")
            for fmt, (ok, n) in sorted(t.by_format.items()):
                if n:
                    print(f"  {fmt:40} {ok}/{n}")
    if misses:
        for name, t in readers.items():
            print(f"\n{name}: misses")
            for line in t.misses:
                print(f"  {line}")


async def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=DEFAULT_DATA)
    ap.add_argument("--by-format", action="store_true")
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--judge", metavar="MODEL", help="a judge model ('local' = the embedded model)")
    ap.add_argument("--judge-base-url", metavar="URL")
    ap.add_argument("--judge-api-key-env", metavar="VAR")
    args = ap.parse_args(argv)
    judge: AssessmentJudge | None = None
    stop = None
    if args.judge:
        judge, stop = await _judge(args)
    try:
        for path in args.data:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            print(f"\n{path.name}: {len(data.get('finals') or [])} finals "
                  f"({len({c.get('format') for c in data.get('finals') or []})} formats), "
                  f"{len(data.get('mentions') or [])} mentions")
            alone: dict[str, ParsedAssessment | None] = {}
            readers = await measure(data, judge, alone)
            report(readers, by_format=args.by_format, misses=args.misses)
            if judge is not None:
                _print_agreement(data, alone)
    finally:
        if stop is not None:
            await stop()
    return 0


async def _judge(args: argparse.Namespace) -> tuple[AssessmentJudge, Any]:
    import os

    from sim.agents.local import LlamaServer
    from sim.judges import JudgeClient

    server = None
    if args.judge == "local":
        server = await LlamaServer().start()
        client = JudgeClient(model="smollm2-135m-instruct", base_url=server.base_url, timeout_s=120.0, retries=0,
                             max_tokens=160)
    elif not args.judge_base_url:
        raise SystemExit("--judge MODEL needs --judge-base-url URL (or --judge local)")
    else:
        key = os.environ.get(args.judge_api_key_env) if args.judge_api_key_env else None
        client = JudgeClient(model=args.judge, base_url=args.judge_base_url, api_key=key)

    async def stop() -> None:
        await client.aclose()
        if server is not None:
            server.stop()

    return AssessmentJudge(client), stop


def _print_agreement(data: dict[str, Any], alone: dict[str, ParsedAssessment | None]) -> None:
    """How often the deterministic reader and the judge agree: on final or not, and on level and escalation."""
    final_agree = fields_agree = both_final = n = 0
    for case in [*(data.get("finals") or []), *(data.get("mentions") or [])]:
        det = deterministic(case["text"])
        jud = alone[case["text"]]
        n += 1
        final_agree += (det is None) == (jud is None)
        if det is not None and jud is not None:
            both_final += 1
            fields_agree += (det.triage_level, det.escalation) == (jud.triage_level, jud.escalation)
    print(f"\nagreement: final or not {final_agree}/{n} ({final_agree / max(1, n):.1%}); level and escalation where "
          f"both read a final {fields_agree}/{both_final} ({fields_agree / max(1, both_final):.1%})")


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
