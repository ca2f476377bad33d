"""Binary per-failure-mode judges: one question per failure mode of a run's taxonomy, answered true or false.

A judge is built (``build_failure_judge``) from a failure mode's name and one-sentence definition and a few
labelled examples: traces people coded with the mode (true) or passed (false), taken from the **train** split
only (``split_of``), so the dev and test splits stay unseen for validation. It is written to
``judges/<mode>.yaml`` (``FailureJudgeSpec``), which a person may edit; ``hash`` covers the prompt-defining
fields so an edited judge is told apart.

Run on an encounter (``run_failure_judge``), each judge model is asked "Does this transcript show <mode>?
Answer true or false." under the same strict-JSON rules as the rubric judges (``Judge.ask_json``, keys
``explanation`` and ``answer``); several judges vote (a tie is no verdict). The result is an
``EvaluatorResult`` named ``failure:<mode>``: passed when the mode is absent; a judge that fails gives no
verdict (not applicable, never a pass or a fail). Its details carry ``verdict``, the ``votes`` per judge model,
``judge_hash`` (as built) and ``prompt_hash`` (``computed_hash()`` of the prompt actually asked), which a run's
summary matches against the judge's validation record.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, StrictInt, field_validator

from scenarios import load_model_file
from scorers._judge import Judge
from scorers._judge_validation import DEFAULT_SPLIT, split_of
from scorers.evaluators import EvaluatorError
from sim.records import EvaluatorResult, Finding, check_mode_name

EXCERPT_CHARS = 1500  # of a few-shot example's transcript, from its end (where the assessment is)
SYSTEM = ("You check a clinician's conversation with a patient for one failure mode. Judge only what the clinician "
          "said, in the context of the conversation. Reply with one JSON object and nothing else: "
          '{"explanation": "<one or two sentences>", "answer": true|false} where true means the conversation shows '
          "the failure mode.")


class JudgeExample(BaseModel):
    """A labelled trace shown to the judge as an example (train split only)."""

    trace_id: str
    label: bool = Field(description="True: people coded this trace with the failure mode")
    excerpt: str = Field(description="the end of the transcript")


class FailureJudgeSpec(BaseModel):
    """A binary judge for one failure mode, as ``judges/<mode>.yaml`` holds it."""

    mode: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    examples: list[JudgeExample] = []
    built_from: str | None = Field(default=None, description="the run directory whose annotations it came from")
    split: list[float] = Field(default=list(DEFAULT_SPLIT), description="train, dev, test shares")
    seed: StrictInt = 0
    version: StrictInt = 1
    hash: str = Field(default="", description="sha256 of mode, definition and examples as built")

    @field_validator("mode")
    @classmethod
    def _mode(cls, mode: str) -> str:
        return check_mode_name(mode)

    @field_validator("split")
    @classmethod
    def _split(cls, split: list[float]) -> list[float]:
        if len(split) != 3 or not all(0 <= share <= 1 for share in split) or abs(sum(split) - 1) > 1e-6:
            raise ValueError(f"split {split[:5]}: give three shares for train, dev and test that sum to 1, e.g. "
                             "[0.2, 0.4, 0.4]")
        return split

    def computed_hash(self) -> str:
        """The sha256 of the fields that define the prompt."""
        data = {"mode": self.mode, "definition": self.definition,
                "examples": [e.model_dump() for e in self.examples]}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    @property
    def evaluator_name(self) -> str:
        """``failure:<mode>``, the name its results carry."""
        return f"failure:{self.mode}"


def _excerpt(conversation: str) -> str:
    return conversation if len(conversation) <= EXCERPT_CHARS else "..." + conversation[-EXCERPT_CHARS:]


def build_failure_judge(mode: str, definition: str, labelled: Mapping[str, tuple[bool, str]], *,
                        n_examples: int = 4, fractions: tuple[float, float, float] = DEFAULT_SPLIT, seed: int = 0,
                        built_from: str | None = None) -> FailureJudgeSpec:
    """Build the judge of one failure mode from its definition and few-shot examples of the train split.

    Args:
        mode: The failure mode's name.
        definition: Its one-sentence definition.
        labelled: Trace id -> (shows the mode, transcript text), every labelled trace of the run.
        n_examples: How many examples at most, half showing the mode and half not where the train split has them.
        fractions: The train, dev and test shares of ``split_of``.
        seed: The split's seed.
        built_from: The run directory, recorded.

    Returns:
        The judge, with its hash.
    """
    train = sorted(t for t in labelled if split_of(t, fractions=fractions, seed=seed) == "train")
    positives = [t for t in train if labelled[t][0]]
    negatives = [t for t in train if not labelled[t][0]]
    take_pos = min(len(positives), max(n_examples - min(len(negatives), n_examples // 2), 0))
    chosen = positives[:take_pos] + negatives[:n_examples - take_pos]
    examples = [JudgeExample(trace_id=t, label=labelled[t][0], excerpt=_excerpt(labelled[t][1])) for t in chosen]
    spec = FailureJudgeSpec(mode=mode, definition=definition, examples=examples, built_from=built_from,
                            split=list(fractions), seed=seed)
    return spec.model_copy(update={"hash": spec.computed_hash()})


def failure_prompt(spec: FailureJudgeSpec, conversation: str) -> list[dict[str, str]]:
    """The chat messages asking whether ``conversation`` shows the judge's failure mode.

    Args:
        spec: The judge.
        conversation: The transcript (``transcript_text``).

    Returns:
        The system and user messages.
    """
    shots = "".join(f"\n\nExample ({'shows' if e.label else 'does not show'} {spec.mode}):\n{e.excerpt}\n"
                    f"Answer: {'true' if e.label else 'false'}" for e in spec.examples)
    user = (f"Failure mode: {spec.mode}\nDefinition: {spec.definition}{shots}\n\nConversation:\n\n{conversation}\n\n"
            f"Does this transcript show {spec.mode}? Answer true or false.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


async def run_failure_judge(spec: FailureJudgeSpec, conversation: str, judges: Sequence[Judge]) -> EvaluatorResult:
    """Ask every judge whether ``conversation`` shows the failure mode; the majority is the verdict.

    Args:
        spec: The failure mode's judge.
        conversation: The transcript (``transcript_text``).
        judges: The judge models (at least one).

    Returns:
        ``failure:<mode>``: passed when the mode is absent, failed with a finding when present; not applicable
        (no verdict) when no judge answered or the judges tied.
    """
    messages = failure_prompt(spec, conversation)
    answers = await asyncio.gather(*(j.ask_json(messages, keys={"explanation": str, "answer": bool}) for j in judges))
    votes = {j.name: (a["answer"] if a is not None else None) for j, a in zip(judges, answers, strict=True)}
    shows = sum(v is True for v in votes.values())
    absent = sum(v is False for v in votes.values())
    details = {"votes": votes, "judge_hash": spec.hash, "prompt_hash": spec.computed_hash()}
    if shows == absent:  # no answer at all, or a tie
        return EvaluatorResult(name=spec.evaluator_name, score=0.0, passed=False, applicable=False,
                               details={**details, "verdict": None})
    present = shows > absent
    explanation = next((a["explanation"] for a in answers if a is not None and a["answer"] is present), "")
    findings = [Finding(code=f"failure_mode:{spec.mode}", severity="high", message=f"{spec.mode}: {explanation}"[:300])
                ] if present else []
    return EvaluatorResult(name=spec.evaluator_name, score=0.0 if present else 1.0, passed=not present,
                           findings=findings, fail_reasons=[f.message for f in findings],
                           details={**details, "verdict": present})


def write_failure_judge(spec: FailureJudgeSpec, folder: Path) -> Path:
    """Write ``folder/<mode>.yaml`` (atomically); returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec.mode}.yaml"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("# a binary failure-mode judge (encsim judges build); editable: the hash tells an edit apart\n"
                   + yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=120),
                   encoding="utf-8")
    tmp.replace(path)
    return path


def load_failure_judges(folder: str | Path) -> list[FailureJudgeSpec]:
    """Every judge (``*.yaml``) of ``folder``, sorted by mode.

    Raises:
        EvaluatorError: The folder or a file cannot be used; the message names it and the fix.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise EvaluatorError(f"--failure-judges {folder}: no such folder. Give the folder `encsim judges build` "
                             "wrote (judges/<mode>.yaml).")
    specs = []
    for path in sorted(folder.glob("*.yaml")):
        spec = load_model_file(path, FailureJudgeSpec, what="a failure-mode judge", error=EvaluatorError,
                               syntax="yaml", fix="Fix the file or rebuild it with `encsim judges build`.")
        if spec.mode != path.stem:  # one judge per mode, and its file is named after it (write_failure_judge)
            raise EvaluatorError(f"{path}: the judge's mode is {spec.mode!r}, but the file is named {path.name}; "
                                 f"a judge's file is named after its mode. Rename the file to {spec.mode}.yaml or "
                                 f"set mode: {path.stem} (two judges of one mode cannot both be used).")
        specs.append(spec)
    if not specs:
        raise EvaluatorError(f"--failure-judges {folder}: holds no judge (*.yaml). Build them with "
                             "`encsim judges build RUN_DIR --taxonomy FILE --out DIR`.")
    return sorted(specs, key=lambda s: s.mode)
