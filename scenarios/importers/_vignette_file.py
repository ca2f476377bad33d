"""Reading a vignette file: CSV or JSON Lines, its columns, and its cells as text.

``read_vignette_file`` gives the rows (with their 1-based line numbers, or the reason a row cannot be read)
and the columns; ``_resolve_columns`` matches ``--map``'s column names to the file's (exactly, else ignoring
case and spaces); ``_text`` reads one cell as one line of text. A file that cannot be read at all raises
:class:`ImportSourceError`. The format is documented in ``_vignettes.py``'s docstring.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from scenarios.importers._common import ImportSourceError, RowError, SourceRow, read_jsonl, read_source

_JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json", ".jl"}
_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}


def _read_bytes(source: Path) -> bytes:
    raw = read_source(source, ".csv or .jsonl file")
    if not raw.strip():
        raise ImportSourceError(f"{source}: the file is empty. Give a CSV file with a header row or a JSON Lines "
                                "file with one vignette per line.")
    return raw


def _is_jsonl(source: Path, raw: bytes) -> bool:
    suffix = source.suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return True
    if suffix in _CSV_SUFFIXES:
        return False
    return raw.lstrip().startswith(b"{")


def _read_csv(source: Path, raw: bytes) -> tuple[list[SourceRow], list[str]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportSourceError(f"{source}: not UTF-8 text (byte {exc.start}). Save the file as UTF-8 (in a "
                                "spreadsheet: 'CSV UTF-8') and import it again.") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_CSV_SUFFIXES.get(source.suffix.lower(), ","))
    header: list[str] | None = None
    rows: list[SourceRow] = []
    end = 0
    try:
        for record in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in record):
                continue
            if header is None:
                header = [" ".join(c.split()) for c in record]
                blank = [str(i) for i, c in enumerate(header, 1) if not c]
                dupes = sorted({c for c in header if c and header.count(c) > 1})
                if blank or dupes:
                    what = (f"column(s) {', '.join(blank)} have no name" if blank else
                            f"the column name(s) {', '.join(map(repr, dupes))} appear more than once")
                    raise ImportSourceError(f"{source}: the header row (line {start}) is not usable: {what}. Give "
                                            "every column a unique name in the first row.")
                continue
            if len(record) > len(header) and any(c.strip() for c in record[len(header):]):
                rows.append((start, RowError(f"has {len(record)} cells but the header has {len(header)} columns "
                                             "(a comma inside an unquoted value?); quote values that contain commas")))
                continue
            rows.append((start, {name: (record[i] if i < len(record) else "") for i, name in enumerate(header)}))
    except csv.Error as exc:
        raise ImportSourceError(f"{source}: not readable as CSV at line {reader.line_num} ({exc}). Check the quoting "
                                "there, or give a JSON Lines file.") from None
    if header is None or not rows:
        raise ImportSourceError(f"{source}: has a header row but no vignette rows. Give one row per vignette under "
                                "the header.")
    return rows, header


def read_vignette_file(source: str | Path) -> tuple[list[SourceRow], list[str]]:
    """The rows of a vignette file (JSON Lines or CSV, see the module docstring) and its columns.

    The columns are the CSV header; for JSON Lines every key any row has, in the order first seen.
    """
    src = Path(source)
    raw = _read_bytes(src)
    if not _is_jsonl(src, raw):
        return _read_csv(src, raw)
    rows = read_jsonl(src)
    columns: dict[str, None] = {}
    for _, row in rows:
        if isinstance(row, dict):
            columns.update(dict.fromkeys(str(k) for k in row))
    return rows, list(columns)


def _resolve_columns(mapping: dict[str, str], columns: list[str], source: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for field, column in mapping.items():
        if column in columns:
            out[field] = column
            continue
        loose = [c for c in columns if " ".join(c.split()).lower() == " ".join(column.split()).lower()]
        if len(loose) == 1:
            out[field] = loose[0]
            continue
        shown = ", ".join(repr(c) for c in columns) or "(none)"
        raise ImportSourceError(f"--map {field}={column}: {source.name} has no column {column!r}; its columns are "
                                f"{shown}. Map {field} to one of them.")
    return out


def _text(value: Any) -> str:
    """A cell as one line of text (a JSON list: its items joined by '; ')."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(t for t in (_text(v) for v in value) if t)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return " ".join(str(value).split())
