"""The exception types of the imaging package, and the helpers that word their messages.

Every problem a user can cause with an image (a missing or unreadable file, a format we do not read,
an image too large to decode safely, a path outside the scenario folder) raises :class:`ImagingError`
with a one-paragraph message that names the file and says what to do; the CLI prints it without a
traceback. Programming errors (a negative ``max_side``, an unknown ``fmt``) stay ``ValueError``.
"""

from __future__ import annotations

from pathlib import Path

from scenarios.errors import UserError

__all__ = ["ImageOutsideFolder", "ImagingError", "exception_reason", "pixel_limit_error"]


class ImagingError(UserError):
    """An image that cannot be used; the message is one paragraph naming the file and the fix."""


class ImageOutsideFolder(ImagingError):
    """An image path that leaves the scenario folder while the run does not allow it (``--allow-outside-images``).

    Unlike a missing or corrupt file, this is the run's choice, not the scenario's defect: a run refuses to start.
    """


def exception_reason(exc: BaseException, *, limit: int = 240) -> str:
    """A decoder exception as one short line, for the middle of a one-paragraph message."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def pixel_limit_error(path: Path, detail: str, max_pixels: int) -> ImagingError:
    """The error for an image over ``max_pixels`` (``detail`` says how large), before it is decoded."""
    return ImagingError(f"Image file {path} is {detail}, over the pixel limit of {max_pixels:,} pixels "
                        f"(max_pixels), so it is not decoded: such sizes are a decompression bomb or far larger "
                        "than any model input. Downscale the image (e.g. to 4096 px on the longer side) and "
                        "reference the smaller file.")
