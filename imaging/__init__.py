"""Images for encounter-sim: load, normalise, strip metadata, DICOM, encode as message parts.

The public face of the package; the work is done in ``_``-prefixed modules, each of which documents
the format it owns:

* :mod:`imaging._resolve` -- the two reference forms of a scenario image (a path relative to the
  scenario file, ``pydicom:NAME``) and the outside-the-folder rule;
* :mod:`imaging._load` -- PNG/JPEG/WebP/TIFF/GIF/BMP through Pillow into ``L``/``RGB`` without
  metadata, EXIF orientation, the size and pixel limits;
* :mod:`imaging._dicom` -- DICOM through pydicom: rescale, window, MONOCHROME1, colour, the middle frame;
* :mod:`imaging._encode` -- downscale, metadata-free PNG/JPEG, the ``data:`` URL and the process-wide cache;
* :mod:`imaging._parts` -- OpenAI-compatible content parts and the text-only placeholder;
* :mod:`imaging._fetch` -- the images of an import (``encsim import agentclinic --fetch-images`` / ``--images``):
  downloaded once with limits, or copied from a folder, each checked by Pillow.

It may import ``scenarios`` only (and Pillow, pydicom, numpy). See ``imaging/README.md``.
"""

from __future__ import annotations

from imaging._encode import (
    DEFAULT_MAX_SIDE,
    CacheInfo,
    PreparedImage,
    cache_info,
    prepare_image,
    prepare_image_async,
)
from imaging._errors import ImageOutsideFolder, ImagingError
from imaging._fetch import DEFAULT_FETCH_DELAY_S, DEFAULT_FETCH_MAX_BYTES, MAX_REDIRECTS, ImportImages
from imaging._load import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_PIXELS, load_image
from imaging._parts import content_parts, text_placeholder
from imaging._resolve import resolve_image_path

__all__ = [
    "DEFAULT_FETCH_DELAY_S",
    "DEFAULT_FETCH_MAX_BYTES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_PIXELS",
    "DEFAULT_MAX_SIDE",
    "CacheInfo",
    "ImageOutsideFolder",
    "ImportImages",
    "MAX_REDIRECTS",
    "ImagingError",
    "PreparedImage",
    "cache_info",
    "content_parts",
    "load_image",
    "prepare_image",
    "prepare_image_async",
    "resolve_image_path",
    "text_placeholder",
]
