"""The images of imported NEJM cases: what the importer asks for, what it is told, and what the report counts.

The source file holds only each case's image URL, and the images are not ours to redistribute; the user gets them.
The importer asks an :class:`ImageProvider` for each case's image, by URL and file name (:func:`image_name`), to be
put in the output folder's ``images/`` (``IMAGES_DIR``); the provider answers with a :class:`ProvidedImage`:

- ``fetched``: downloaded now (``encsim import ... --fetch-images``);
- ``present``: already there, from an earlier fetch, or copied from the folder the user gave (``--images DIR``);
- ``missing``: no image: none asked for, not in the folder, the URL unreachable or answering with an error;
- ``refused``: an answer that is not kept: not an image, over the size limit, a redirect loop, a file of the folder
  that is not an image.

The providers live in ``imaging`` (``imaging.ImportImages``: Pillow checks every image), which this package may not
import; without one (``images=None``) every image is missing. A case without its image is imported as text only
(its imaging item has ``image_unavailable``, both its scenarios the tag ``image:not_available``), never dropped, and
each case's outcome is in the import report (:class:`ImageOutcome`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

from scenarios.importers._common import ImageOutcome, ImageStatus, sha_hex

IMAGES_DIR = "images"
"""The sub-folder of the output folder that holds the cases' images."""

@dataclass(frozen=True)
class ProvidedImage:
    """A provider's answer for one image: how it went, the file in the images folder, and why not."""

    status: ImageStatus
    path: Path | None = None  # the image file, for fetched and present
    reason: str | None = None  # what happened: why missing or refused, where a present image came from


class ImageProvider(Protocol):
    """Gets the images of an import (``imaging.ImportImages``)."""

    def start(self, total: int) -> None:
        """Called once before the first image with how many cases have an image URL (for a progress bar)."""

    def provide(self, url: str, name: str, folder: Path) -> ProvidedImage:
        """The image at ``url`` as ``folder/<name>.<ext>``; never raises for a bad URL, answer or file."""

    def finish(self) -> None:
        """Called once after the last image."""


def image_name(url: str) -> str:
    """The file name (without extension) of the image at ``url``.

    The ``id`` query parameter when there is one (NEJM's ``...images?id=IC20240111&width=1500`` -> ``IC20240111``),
    else the last path segment's stem, letters, digits, ``.``, ``_`` and ``-`` kept; ``image_<8 hex>`` of the URL
    when nothing is left.
    """
    parts = urlsplit(url.strip())
    query = parse_qs(parts.query)
    candidate = next((query[k][0] for k in ("id", "image", "img", "file", "name") if query.get(k)), "") or \
        PurePosixPath(parts.path).stem
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", candidate).strip("._-")[:60]
    return name or f"image_{sha_hex(url)}"


class NoImages:
    """The provider of an import without one: every image is missing."""

    def start(self, total: int) -> None:
        """Nothing to prepare."""

    def provide(self, url: str, name: str, folder: Path) -> ProvidedImage:
        """Missing, always."""
        return ProvidedImage("missing", reason="no image source was given (encsim import ... --fetch-images, or "
                                               "--images DIR with the images)")

    def finish(self) -> None:
        """Nothing to close."""


__all__ = ["IMAGES_DIR", "ImageOutcome", "ImageProvider", "NoImages", "ProvidedImage", "image_name"]
