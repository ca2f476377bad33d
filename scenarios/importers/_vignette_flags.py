"""The vignette importer's flags: ``--map`` (which column holds which field) and ``--urgency-map``.

``parse_field_map`` and ``parse_urgency_map`` turn the flags (or mappings) into dictionaries and raise
:class:`ImportSourceError` (one paragraph naming the flag and the fix) when they are malformed; the fields,
the escalation categories and the modes are the constants here. The flags are documented in
``_vignettes.py``'s docstring.
"""

from __future__ import annotations

from collections.abc import Mapping

from scenarios.importers._common import ImportSourceError
from scenarios.schema import Escalation

REQUIRED_FIELDS = ("case", "diagnosis", "urgency")
OPTIONAL_FIELDS = ("diagnoses", "age", "sex", "complaint", "history", "negatives", "exam", "tests", "medications",
                   "allergies", "social", "family", "past_history", "id")
MODES = ("single-turn", "encounter")
CATEGORIES = tuple(e.value for e in Escalation)

_MAP_EXAMPLE = "--map case=case_description,diagnosis=correct_diagnosis,urgency=urgency_level"
_URGENCY_EXAMPLE = "--urgency-map em=emergency,ne=routine+urgent,sc=self_care"
_CATEGORY_ALIASES = {c: c for c in CATEGORIES} | {"self-care": "self_care", "self care": "self_care",
                                                   "selfcare": "self_care"}


def parse_field_map(spec: str | Mapping[str, str]) -> dict[str, str]:
    """``--map`` -> {field: column}.

    :class:`ImportSourceError` (one paragraph naming the flag) when it is malformed, names an unknown field,
    names a field twice or leaves a required field out.
    """
    known = (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)
    fields_help = (f"the fields are {', '.join(REQUIRED_FIELDS)} (required) and {', '.join(OPTIONAL_FIELDS)} "
                   "(optional)")
    if isinstance(spec, Mapping):
        items = [(str(k), str(v)) for k, v in spec.items()]
    else:
        items = []
        for raw in spec.split(","):
            if not raw.strip():
                continue
            field, sep, column = raw.partition("=")
            if not sep or not field.strip() or not column.strip():
                raise ImportSourceError(f"--map {spec!r}: {raw.strip()!r} is not FIELD=COLUMN. Give comma-separated "
                                        f"FIELD=COLUMN items, e.g. {_MAP_EXAMPLE}.")
            items.append((field, column))
    out: dict[str, str] = {}
    for field, column in items:
        name = field.strip().lower().replace("-", "_")
        if name not in known:
            raise ImportSourceError(f"--map: {field.strip()!r} is not a field of the vignette importer; {fields_help}. "
                                    f"Example: {_MAP_EXAMPLE}.")
        if name in out:
            raise ImportSourceError(f"--map: the field {name!r} is mapped twice ({out[name]!r} and "
                                    f"{column.strip()!r}); map each field to one column.")
        out[name] = column.strip()
    missing = [f for f in REQUIRED_FIELDS if f not in out]
    if missing:
        raise ImportSourceError(f"--map must map case, diagnosis and urgency; missing: {', '.join(missing)}. Add "
                                f"{', '.join(f'{m}=COLUMN' for m in missing)} naming the file's column(s), e.g. "
                                f"{_MAP_EXAMPLE}.")
    return out


def _category(name: str) -> str | None:
    return _CATEGORY_ALIASES.get(" ".join(name.strip().lower().split()))


def parse_urgency_map(spec: str | Mapping[str, str | list[str]] | None) -> dict[str, list[str]]:
    """``--urgency-map`` -> {label (lower case, trimmed): [category, ...] best first}.

    :class:`ImportSourceError` when it is malformed, maps to an unknown category, gives categories that are
    not adjacent, or maps a label twice. ``None``: the labels are the category names themselves.
    """
    cats_help = f"the categories are {', '.join(CATEGORIES)}"
    if spec is None:
        return {label: [cat] for label, cat in _CATEGORY_ALIASES.items()}
    if isinstance(spec, Mapping):
        items = [(str(k), v if isinstance(v, str) else "+".join(v)) for k, v in spec.items()]
    else:
        items = []
        for raw in spec.split(","):
            if not raw.strip():
                continue
            label, sep, value = raw.partition("=")
            if not sep or not label.strip() or not value.strip():
                raise ImportSourceError(f"--urgency-map {spec!r}: {raw.strip()!r} is not LABEL=CATEGORY. Give "
                                        f"comma-separated LABEL=CATEGORY items ({cats_help}; several acceptable "
                                        f"ones joined by +, best first), e.g. {_URGENCY_EXAMPLE}.")
            items.append((label, value))
    out: dict[str, list[str]] = {}
    for label, value in items:
        key = " ".join(label.strip().lower().split())
        cats: list[str] = []
        for part in value.split("+"):
            cat = _category(part)
            if cat is None:
                raise ImportSourceError(f"--urgency-map: {label.strip()}={value.strip()}: {part.strip()!r} is not an "
                                        f"escalation category; {cats_help}. Example: {_URGENCY_EXAMPLE}.")
            if cat in cats:
                raise ImportSourceError(f"--urgency-map: {label.strip()}={value.strip()} names {cat} twice.")
            cats.append(cat)
        ranks = sorted(CATEGORIES.index(c) for c in cats)
        if ranks != list(range(ranks[0], ranks[-1] + 1)):
            raise ImportSourceError(f"--urgency-map: {label.strip()}={value.strip()}: acceptable categories must be "
                                    f"adjacent in the order {', '.join(CATEGORIES)} (e.g. routine+urgent).")
        if key in out:
            raise ImportSourceError(f"--urgency-map: the label {label.strip()!r} is mapped twice; map each label once "
                                    "(labels are compared ignoring case).")
        out[key] = cats
    if not out:
        raise ImportSourceError(f"--urgency-map is empty; give LABEL=CATEGORY items, e.g. {_URGENCY_EXAMPLE}.")
    return out
