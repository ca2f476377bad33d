"""HealthBench rows -> replay scenarios graded by their rubric.

The format (one JSON object per line, OpenAI's HealthBench release)::

    {"prompt_id": "...",
     "prompt": [{"role": "system" | "user" | "assistant", "content": "..."}, ...],
     "rubrics": [{"criterion": "...", "points": 7, "tags": ["level:example", "axis:completeness"]}, ...],
     "example_tags": ["theme:...", ...],
     "ideal_completions_data": {...} | null,
     "canary": "..."}

Mapping (each choice is what ``scenarios/README.md`` documents for imported HealthBench items):

- ``id``: ``hb_<prompt_id>`` when the prompt id is already lower-case letters, digits, ``-`` and
  ``_`` (64 characters at most), else ``hb_<slug of it>_<8 hex of sha256(prompt_id)>``; stable
  across imports and unique per prompt id. The file is ``<id>.yaml``.
- ``replay``: the prompt's messages, ``user`` -> ``patient`` and ``assistant`` -> ``agent``.
  ``system``/``developer`` messages are **dropped** (the harness gives every agent its own system
  prompt; folding one into the patient's words would put it in the wrong mouth); such scenarios get
  the tag ``healthbench:system_message_dropped`` and the report a warning. After dropping, the
  conversation must end with a user message, which the agent answers once; otherwise the row fails.
- ``rubrics``: every criterion with its points and all its tags; ``axis`` is the value of its
  ``axis:...`` tag. Points must be non-zero and within -10..10 (the loader reports others).
- ``canary``: the row's ``canary`` with ``" <id>"`` appended when it has at least 16 characters
  (a data set often repeats one canary on every row, but the loader needs each scenario's canary
  unique; grepping for the data set's canary still finds every file), else
  ``encsim-canary-<8 hex of sha256(prompt_id)>-hb``.
- ``patient_profile``: HealthBench gives no age or sex: age 40, sex ``other``, tag ``profile:unknown``.
- ``chief_complaint``: the first ~80 characters of the first user message; ``opening_line`` that
  message in full (a replay scenario does not speak it); ``fallback_lines``: ``["I'm not sure."]``.
- ``suite: ddx``, ``tier: A`` (HealthBench is public), ``expected: {}`` (no triage or diagnosis
  target: the rubric is the score), ``tags``: ``example_tags`` + ``source:healthbench``,
  ``source: healthbench:<prompt_id>``. ``ideal_completions_data`` is not imported (the schema has
  no reference answer).
"""

from __future__ import annotations

import re
from typing import Any

from scenarios.importers._common import Converted, RowContext, RowError, sha_hex, slug
from scenarios.importers._text import snippet

DEFAULT_AGE = 40
DEFAULT_SEX = "other"
FALLBACK_LINES = ["I'm not sure."]
_ROLES = {"user": "patient", "assistant": "agent"}
_DROPPED_ROLES = {"system", "developer"}
_ID_OK = re.compile(r"^[a-z0-9][a-z0-9_\-]{0,63}$")


def healthbench_id(prompt_id: str) -> str:
    """The scenario id of a HealthBench prompt id (see the module docstring)."""
    if _ID_OK.match(prompt_id):
        return f"hb_{prompt_id}"
    return f"hb_{slug(prompt_id, 40) or 'item'}_{sha_hex(prompt_id)}"


def _content(msg: Any, i: int) -> str:
    content = msg.get("content")
    if isinstance(content, list):  # chat "content parts": keep the text parts
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if len(texts) != len(content) or not all(isinstance(t, str) for t in texts):
            raise RowError(f"prompt[{i}].content has non-text parts; only text conversations can be imported")
        content = "\n".join(t for t in texts if isinstance(t, str))  # all of them, checked above
    if not isinstance(content, str) or not content.strip():
        raise RowError(f"prompt[{i}].content is missing or empty")
    return content


def _replay(prompt: Any) -> tuple[list[dict[str, str]], bool]:
    if not isinstance(prompt, list) or not prompt:
        raise RowError("'prompt' is missing or not a non-empty list of {role, content} messages")
    out: list[dict[str, str]] = []
    dropped = False
    for i, msg in enumerate(prompt):
        if not isinstance(msg, dict):
            raise RowError(f"prompt[{i}] is not a {{role, content}} object")
        role = msg.get("role")
        if role in _DROPPED_ROLES:
            dropped = True
            continue
        if role not in _ROLES:
            raise RowError(f"prompt[{i}].role is {role!r}; expected user, assistant or system")
        out.append({"role": _ROLES[role], "content": _content(msg, i)})
    if not out:
        raise RowError("the conversation has no user or assistant message")
    if out[-1]["role"] != "patient":
        raise RowError("the conversation ends with an assistant message; a replay item must end with the user's "
                       "message for the agent to answer")
    return out, dropped


def _rubrics(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not raw:
        raise RowError("'rubrics' is missing or empty; a HealthBench item is graded by its rubric")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise RowError(f"rubrics[{i}] is not an object with criterion, points and tags")
        criterion, points, tags = item.get("criterion"), item.get("points"), item.get("tags", [])
        if not isinstance(criterion, str) or not criterion.strip():
            raise RowError(f"rubrics[{i}].criterion is missing or empty")
        if isinstance(points, bool) or not isinstance(points, int | float):
            raise RowError(f"rubrics[{i}].points is {points!r}; expected a number")
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise RowError(f"rubrics[{i}].tags is not a list of strings")
        axis = next((t.split(":", 1)[1] for t in tags if t.startswith("axis:")), None)
        entry: dict[str, Any] = {"criterion": criterion, "points": points}
        if axis:
            entry["axis"] = axis
        entry["tags"] = list(tags)
        out.append(entry)
    return out


def convert_healthbench_row(row: dict[str, Any], ctx: RowContext) -> Converted:
    """One HealthBench row -> the data of one replay scenario (raises RowError if unusable)."""
    prompt_id = row.get("prompt_id")
    if not isinstance(prompt_id, str) or not prompt_id.strip():
        raise RowError("'prompt_id' is missing or not a string")
    replay, dropped = _replay(row.get("prompt"))
    rubrics = _rubrics(row.get("rubrics"))
    example_tags = row.get("example_tags") or []
    if not isinstance(example_tags, list) or not all(isinstance(t, str) for t in example_tags):
        raise RowError("'example_tags' is not a list of strings")
    scenario_id = healthbench_id(prompt_id)
    canary = row.get("canary")
    if isinstance(canary, str) and len(canary.strip()) >= 16:
        canary = f"{canary.strip()} {scenario_id}"
    else:
        canary = f"encsim-canary-{sha_hex(prompt_id)}-hb"
    first_user = next(m["content"] for m in replay if m["role"] == "patient")
    tags = [*example_tags, "source:healthbench", "profile:unknown"]
    warnings = []
    if dropped:
        tags.append("healthbench:system_message_dropped")
        warnings.append("system message dropped (the harness sends its own system prompt)")
    data: dict[str, Any] = {
        "id": scenario_id,
        "title": f"HealthBench: {snippet(first_user, 70)}",
        "suite": "ddx",
        "tags": list(dict.fromkeys(tags)),
        "tier": "A",
        "canary": canary,
        "patient_profile": {"age": DEFAULT_AGE, "sex": DEFAULT_SEX},
        "chief_complaint": snippet(first_user, 80),
        "opening_line": first_user,
        "fallback_lines": list(FALLBACK_LINES),
        "replay": replay,
        "rubrics": rubrics,
        "expected": {},
        "source": f"healthbench:{prompt_id}",
    }
    return Converted(data=data, warnings=warnings)
