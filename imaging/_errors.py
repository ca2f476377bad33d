"""The one exception type of the imaging package.

Every problem a user can cause with an image (a missing or unreadable file, a format we do not read,
an image too large to decode safely, a path outside the scenario folder) raises :class:`ImagingError`
with a one-paragraph message that names the file and says what to do; the CLI prints it without a
traceback. Programming errors (a negative ``max_side``, an unknown ``fmt``) stay ``ValueError``.
"""

from __future__ import annotations

from scenarios.errors import UserError

__all__ = ["ImageOutsideFolder", "ImagingError"]


class ImagingError(UserError):
    """An image that cannot be used; the message is one paragraph naming the file and the fix."""


class ImageOutsideFolder(ImagingError):
    """An image path that leaves the scenario folder while the run does not allow it (``--allow-outside-images``).

    Unlike a missing or corrupt file, this is the run's choice, not the scenario's defect: a run refuses to start.
    """
