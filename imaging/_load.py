"""Read an image file into a clean in-memory picture: mode ``L`` or ``RGB``, no metadata.

Formats handled
---------------
* **PNG, JPEG (including camera multi-picture files), WebP, TIFF, GIF, BMP** through Pillow. Multi-frame files (TIFF
  pages, animated GIF/WebP) give their first frame.
* **DICOM** (``.dcm`` / ``.dicom``, or any file with the ``DICM`` magic at offset 128) through
  pydicom; see :mod:`imaging._dicom` for the pixel pipeline.

Anything else (SVG, PDF, HEIC, text) is refused with :class:`ImagingError` listing these formats.

What comes out
--------------
A new :class:`PIL.Image.Image` that shares nothing with the file: mode ``L`` (grey) or ``RGB``,
an empty ``info`` dict, no EXIF, no ICC profile, no text chunks. On the way:

* the EXIF orientation is applied first (:func:`PIL.ImageOps.exif_transpose`), so a phone photo
  taken sideways is upright once the EXIF that said so is gone;
* an embedded ICC profile of an RGB or CMYK picture is used to convert it to sRGB (best effort,
  with Little CMS); otherwise CMYK is converted naively;
* modes are reduced: ``1`` -> ``L``; ``P``/``PA``/``RGBA``/``LA`` and ``tRNS`` transparency ->
  composited on white (a palette that is all grey gives ``L``); ``CMYK``/``YCbCr``/``LAB``/``HSV``
  -> ``RGB``; 16-bit and 32-bit grey (``I;16*``, ``I``, ``F``) -> ``L`` scaled by the picture's own
  minimum and maximum.

Limits
------
The file size is checked against ``max_file_bytes`` before anything is read. The pixel count
(width x height, read from the header because :func:`PIL.Image.open` is lazy; Rows x Columns for
DICOM) is checked against ``max_pixels`` before any pixel is decoded, so a crafted header cannot
make us allocate gigabytes. Pillow's own decompression-bomb guard stays in place (we never change
``Image.MAX_IMAGE_PIXELS`` or ``ImageFile.LOAD_TRUNCATED_IMAGES``): its error and warning are
turned into the same pixel-limit :class:`ImagingError`. Truncated and corrupt files raise
:class:`ImagingError` naming the file, never a decoder traceback.
"""

from __future__ import annotations

import io
import threading
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from imaging._errors import ImagingError, exception_reason, pixel_limit_error

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_PIXELS",
    "DICOM_SUFFIXES",
    "SUPPORTED_FORMATS",
    "decode_image",
    "exception_reason",
    "load_image",
    "read_image_bytes",
]

DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_PIXELS = 40_000_000

SUPPORTED_FORMATS = "PNG, JPEG, WebP, TIFF, GIF, BMP and DICOM (.dcm)"
_PIL_FORMATS = ("PNG", "JPEG", "WEBP", "TIFF", "GIF", "BMP")  # Pillow's JPEG plugin also opens MPO
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".jpe", ".jfif", ".mpo", ".webp", ".tif", ".tiff", ".gif", ".bmp",
                   ".dib"}
DICOM_SUFFIXES = {".dcm", ".dicom"}
_HIGH_BIT_GREY = {"I", "F", "I;16", "I;16L", "I;16B", "I;16N", "I;16S", "I;32", "I;32L", "I;32B", "I;32S"}

# warnings filters are process-global: serialise our short catch_warnings windows around Image.open
_WARNINGS_LOCK = threading.Lock()


def load_image(path: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
               max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Read ``path`` into a new ``L`` or ``RGB`` image without metadata; see the module docstring.

    Raises:
        ImagingError: the file is missing, too large, corrupt, truncated, has too many pixels, or is
            not in one of the supported formats.
    """
    path = Path(path)
    data = read_image_bytes(path, max_file_bytes=max_file_bytes)
    return decode_image(data, path=path, max_pixels=max_pixels)


def read_image_bytes(path: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, refusing a file larger than ``max_file_bytes`` before reading it."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ImagingError(f"Image file {path} was not found: check the path and that the file exists.") from None
    except OSError as exc:
        raise ImagingError(f"Image file {path} cannot be read ({exc.strerror or exc}): check its permissions.") \
            from None
    if not path.is_file():
        raise ImagingError(f"Image path {path} is not a file: give the path of an image file.")
    if size > max_file_bytes:
        raise ImagingError(f"Image file {path} is {_mib(size)}, over the {_mib(max_file_bytes)} limit for one image: "
                           "downscale or recompress it (a model sees at most about 1024 px per side anyway), or "
                           "raise max_file_bytes if you really need it.")
    try:
        with path.open("rb") as f:
            data = f.read(max_file_bytes + 1)
    except OSError as exc:
        raise ImagingError(f"Image file {path} cannot be read ({exc.strerror or exc}): check its permissions.") \
            from None
    if len(data) > max_file_bytes:  # it grew after stat()
        raise ImagingError(f"Image file {path} is over the {_mib(max_file_bytes)} limit for one image: downscale or "
                           "recompress it, or raise max_file_bytes.")
    return data


def decode_image(data: bytes, *, path: Path, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Decode the bytes of an image file (``path`` names it in errors and picks DICOM by extension)."""
    path = Path(path)
    if path.suffix.lower() in DICOM_SUFFIXES or data[128:132] == b"DICM":
        from imaging._dicom import decode_dicom  # pydicom is imported only when a DICOM file shows up

        return strip_metadata(decode_dicom(data, path=path, max_pixels=max_pixels))
    return strip_metadata(_decode_with_pillow(data, path=path, max_pixels=max_pixels))


def strip_metadata(img: Image.Image) -> Image.Image:
    """A fresh image with the same pixels and nothing else: no info, EXIF, ICC or text chunks."""
    if img.mode not in ("L", "RGB"):  # pragma: no cover - the decoders normalise first
        raise AssertionError(f"strip_metadata expects L or RGB, got {img.mode}")
    return Image.frombytes(img.mode, img.size, img.tobytes())


def _decode_with_pillow(data: bytes, *, path: Path, max_pixels: int) -> Image.Image:
    try:
        with _WARNINGS_LOCK, warnings.catch_warnings():
            # our own max_pixels check below replaces Pillow's warning when the caller allows more
            action: Literal["error", "ignore"] = "error" if max_pixels <= (Image.MAX_IMAGE_PIXELS or 0) else "ignore"
            warnings.simplefilter(action, Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data), formats=_PIL_FORMATS)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise pixel_limit_error(path, f"too large to decode safely ({exception_reason(exc)})", max_pixels) \
            from None
    except UnidentifiedImageError:
        if path.suffix.lower() in _IMAGE_SUFFIXES:
            raise ImagingError(f"Image file {path} could not be decoded: it is corrupt or not really a "
                               f"{path.suffix.lower().lstrip('.').upper()} file (Pillow does not recognise its "
                               "content). Re-export or re-download the image and try again.") from None
        raise ImagingError(f"Image file {path} is not in a supported format; supported are {SUPPORTED_FORMATS}. "
                           "Convert it (e.g. an SVG or PDF page rendered to PNG) and reference the converted "
                           "file.") from None
    except Exception as exc:  # untrusted bytes: any decoder failure is the file's fault, not ours
        raise _corrupt(path, exc) from None

    with img:
        width, height = img.size
        if width <= 0 or height <= 0:
            raise ImagingError(f"Image file {path} declares an empty size ({width}x{height}): the file is "
                               "corrupt. Re-export the image and try again.")
        if width * height > max_pixels:
            raise pixel_limit_error(path, f"{width}x{height} ({width * height:,} pixels)", max_pixels)
        try:
            img.load()
            upright = _exif_upright(img)
            return to_l_or_rgb(_to_srgb(upright))
        except Image.DecompressionBombError as exc:
            raise pixel_limit_error(path, f"too large to decode safely ({exception_reason(exc)})", max_pixels) \
                from None
        except ImagingError:
            raise
        except Exception as exc:  # truncated data, bad chunks, zlib errors, ...
            raise _corrupt(path, exc) from None


def _corrupt(path: Path, exc: BaseException) -> ImagingError:
    return ImagingError(f"Image file {path} could not be decoded ({exception_reason(exc)}): it is truncated or "
                        "corrupt. Re-export or re-download the image and try again.")


def _exif_upright(img: Image.Image) -> Image.Image:
    try:
        out = ImageOps.exif_transpose(img)
    except Exception:  # a damaged EXIF block must not block an otherwise good picture; keep it as stored
        return img
    return out if out is not None else img


def _to_srgb(img: Image.Image) -> Image.Image:
    """Convert an RGB/RGBA/CMYK picture with an embedded ICC profile to sRGB; best effort."""
    icc = img.info.get("icc_profile")
    if not icc or img.mode not in ("RGB", "RGBA", "CMYK"):
        return img
    try:
        from PIL import ImageCms

        src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        if img.mode != "CMYK" and ImageCms.getProfileDescription(src).strip().lower().startswith("srgb"):
            return img
        return ImageCms.profileToProfile(img, src, ImageCms.createProfile("sRGB"),
                                         outputMode="RGBA" if img.mode == "RGBA" else "RGB") or img
    except Exception:  # an unusable profile: fall back to the plain conversion, colours may be a little off
        return img


def to_l_or_rgb(img: Image.Image) -> Image.Image:
    """Reduce any Pillow mode to ``L`` or ``RGB`` (alpha composited on white, high bit depths scaled)."""
    mode = img.mode
    if mode in _HIGH_BIT_GREY:
        return _scale_to_l(np.asarray(img))
    if mode == "1":
        return img.convert("L")
    if mode == "P":
        grey = _palette_is_grey(img)
        if "transparency" in img.info:
            return _on_white(img.convert("LA") if grey else img.convert("RGBA"))
        return img.convert("L" if grey else "RGB")
    if mode in ("L", "RGB"):
        if "transparency" in img.info:
            return _on_white(img.convert("LA" if mode == "L" else "RGBA"))
        return img
    if mode in ("LA", "La"):
        return _on_white(img.convert("LA"))
    if mode in ("RGBA", "RGBa", "PA"):
        return _on_white(img.convert("RGBA"))
    return img.convert("RGB")  # CMYK, YCbCr, LAB, HSV, RGBX


def _on_white(img: Image.Image) -> Image.Image:
    """Composite an ``LA`` or ``RGBA`` image on a white background."""
    base = "L" if img.mode == "LA" else "RGB"
    white = Image.new(base, img.size, 255 if base == "L" else (255, 255, 255))
    return Image.composite(img.convert(base), white, img.getchannel("A"))


def _palette_is_grey(img: Image.Image) -> bool:
    palette = img.getpalette() or []
    if not palette:
        return False
    entries = np.asarray(palette, dtype=np.int16).reshape(-1, 3)
    used = entries[: max(int(np.asarray(img).max()) + 1, 1)]
    return bool(np.all(used[:, 0] == used[:, 1]) and np.all(used[:, 1] == used[:, 2]))


def _scale_to_l(arr: np.ndarray) -> Image.Image:
    """Scale a 2-D array of any numeric type into 8-bit grey by its own minimum and maximum."""
    values = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    lo, hi = float(values.min()), float(values.max())
    if hi > lo:
        out = (values - lo) * (255.0 / (hi - lo))
    else:  # a flat picture: keep it black if its value is 0, else white
        out = np.full(values.shape, 255.0 if hi > 0 else 0.0)
    return Image.fromarray(np.clip(np.rint(out), 0, 255).astype(np.uint8))


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n:,} bytes"
