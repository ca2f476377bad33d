"""Message content for models: OpenAI-compatible multimodal parts, and the text-only stand-in.

Format
------
:func:`content_parts` builds the ``content`` list of an OpenAI-compatible chat message::

    [{"type": "text", "text": "..."},
     {"type": "image_url", "image_url": {"url": "data:image/png;base64,...", "detail": "auto"}}, ...]

The text comes first (it is left out when empty, since several servers reject an empty text part),
then one ``image_url`` part per image, in order. A model declared text-only gets
:func:`text_placeholder` instead: one bracketed line per image carrying the scenario's description.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from imaging._encode import PreparedImage

__all__ = ["content_parts", "text_placeholder"]


def content_parts(text: str, images: Sequence[PreparedImage], *,
                  detail: Literal["auto", "low", "high"] = "auto") -> list[dict[str, Any]]:
    """The ``content`` list of a user message with ``text`` followed by ``images``."""
    if detail not in ("auto", "low", "high"):
        raise ValueError(f"detail must be 'auto', 'low' or 'high', got {detail!r}")
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [{"type": "image_url", "image_url": {"url": image.data_url, "detail": detail}} for image in images]
    return parts


def text_placeholder(descriptions: Sequence[str]) -> str:
    """What a text-only model is told in place of images: one line per image description."""
    lines = []
    for description in descriptions:
        said = " ".join(description.split()).rstrip(".") or "no description was given"
        lines.append(f"[The patient sent an image: {said}. This model cannot view images, so only this "
                     "description is given.]")
    return "\n".join(lines)
