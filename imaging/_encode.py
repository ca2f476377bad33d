"""Prepare a scenario image for a multimodal model: resolve, load, downscale, encode, cache.

Output format
-------------
A :class:`PreparedImage` carries a ``data:`` URL (``data:image/png;base64,...`` or
``data:image/jpeg;base64,...``) ready for an OpenAI-compatible ``image_url`` part, the SHA-256 of the
encoded bytes (the content hash that transcripts and caches use), the size after and before
downscaling, and the reference as the scenario wrote it (never the absolute path of a user file:
an absolute reference is reported by its file name only).

The picture comes from :func:`imaging.load_image` (mode ``L``/``RGB``, metadata already gone), is
downscaled with Lanczos so that its longer side is at most ``max_side`` (aspect ratio kept, never
upscaled), and is encoded with no metadata at all: PNG without text/iTXt/zTXt chunks, ICC or EXIF;
JPEG (baseline, ``optimize`` off for speed) without EXIF, ICC or comment segments.

Cache
-----
Preparing is CPU-bound (decode, resample, deflate), so async callers use
:func:`prepare_image_async`, which runs it in the default executor. Results live in a process-wide,
thread-safe LRU keyed by the SHA-256 of the *source file bytes* and every option that can change the
result or its checks; an edited file therefore gets a new entry, and two threads asking for the same
image wait for one preparation. The LRU holds at most 256 images and 256 MiB of data URLs.
:func:`cache_info` reports hits, misses and size.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import functools
import hashlib
import io
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from PIL import Image

from imaging._errors import ImagingError
from imaging._load import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_PIXELS,
    DICOM_SUFFIXES,
    decode_image,
    read_image_bytes,
)
from imaging._resolve import resolve_image_path

__all__ = [
    "DEFAULT_MAX_SIDE",
    "CacheInfo",
    "PreparedImage",
    "cache_info",
    "prepare_image",
    "prepare_image_async",
]

DEFAULT_MAX_SIDE = 1024

_MIME = {"png": "image/png", "jpeg": "image/jpeg"}


@dataclass(frozen=True)
class PreparedImage:
    """An image ready to send: a base64 ``data:`` URL plus what reports and transcripts need."""

    data_url: str = dataclasses.field(repr=False)
    mime: str
    sha256: str
    width: int
    height: int
    original_width: int
    original_height: int
    source: str
    nbytes: int


class CacheInfo(NamedTuple):
    """Counters of the process-wide prepared-image cache."""

    hits: int
    misses: int
    entries: int
    nbytes: int
    max_entries: int
    max_bytes: int


class _PreparedCache:
    """A thread-safe LRU bounded by entry count and total data-URL size, with one build per key."""

    def __init__(self, *, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, PreparedImage] = OrderedDict()
        self._building: dict[Hashable, threading.Event] = {}
        self._nbytes = 0
        self.hits = 0
        self.misses = 0

    def get_or_build(self, key: Hashable, build: Callable[[], PreparedImage]) -> PreparedImage:
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return self._items[key]
                pending = self._building.get(key)
                if pending is None:
                    pending = self._building[key] = threading.Event()
                    self.misses += 1
                    break
            pending.wait()  # another thread is preparing the same image; then look again
        try:
            value = build()
            with self._lock:
                self._store(key, value)
            return value
        finally:
            with self._lock:
                self._building.pop(key, None)
            pending.set()

    def _store(self, key: Hashable, value: PreparedImage) -> None:
        size = len(value.data_url)
        if size > self.max_bytes:
            return
        self._items[key] = value
        self._nbytes += size
        while len(self._items) > self.max_entries or self._nbytes > self.max_bytes:
            _, old = self._items.popitem(last=False)
            self._nbytes -= len(old.data_url)

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self.hits, self.misses, len(self._items), self._nbytes, self.max_entries, self.max_bytes)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._nbytes = 0
            self.hits = self.misses = 0


_CACHE = _PreparedCache(max_entries=256, max_bytes=256 * 1024 * 1024)


def cache_info() -> CacheInfo:
    """Hits, misses, entries and bytes of the process-wide prepared-image cache."""
    return _CACHE.info()


def prepare_image(ref: str, *, base_dir: Path, allow_outside: bool = False,
                  max_side: int = DEFAULT_MAX_SIDE, fmt: Literal["png", "jpeg"] = "png", jpeg_quality: int = 90,
                  max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                  max_pixels: int = DEFAULT_MAX_PIXELS) -> PreparedImage:
    """Resolve ``ref``, load it, downscale to ``max_side``, encode without metadata; cached per process.

    Args:
        ref: a scenario image reference: a path relative to ``base_dir``, or ``pydicom:NAME``.
        base_dir: the scenario file's folder.
        allow_outside: accept paths outside ``base_dir`` (the CLI's ``--allow-outside-images``).
        max_side: the longer side after downscaling, in pixels; smaller images are left as they are.
        fmt: ``"png"`` (lossless, the default: radiographs keep their grey levels) or ``"jpeg"``.
        jpeg_quality: 1-100, for ``fmt="jpeg"``.
        max_file_bytes: refuse larger source files before reading them.
        max_pixels: refuse sources with more pixels (width x height) before decoding them.

    Raises:
        ImagingError: the reference or the file cannot be used; the message says why and what to do.
    """
    if isinstance(max_side, bool) or not isinstance(max_side, int) or max_side < 1:
        raise ValueError(f"max_side must be a positive int, got {max_side!r}")
    if fmt not in _MIME:
        raise ValueError(f"fmt must be 'png' or 'jpeg', got {fmt!r}")
    if isinstance(jpeg_quality, bool) or not isinstance(jpeg_quality, int) or not 1 <= jpeg_quality <= 100:
        raise ValueError(f"jpeg_quality must be an int from 1 to 100, got {jpeg_quality!r}")

    path = resolve_image_path(ref, base_dir=base_dir, allow_outside=allow_outside)
    data = read_image_bytes(path, max_file_bytes=max_file_bytes)
    source = _report_name(ref)
    key = (hashlib.sha256(data).hexdigest(), path.suffix.lower() in DICOM_SUFFIXES, max_side, fmt,
           jpeg_quality if fmt == "jpeg" else None, max_file_bytes, max_pixels)

    def build() -> PreparedImage:
        img = decode_image(data, path=path, max_pixels=max_pixels)
        return _encode(img, source=source, max_side=max_side, fmt=fmt, jpeg_quality=jpeg_quality)

    prepared = _CACHE.get_or_build(key, build)
    return prepared if prepared.source == source else dataclasses.replace(prepared, source=source)


async def prepare_image_async(ref: str, **kwargs: Any) -> PreparedImage:
    """:func:`prepare_image` in the default executor, so the event loop keeps running."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(prepare_image, ref, **kwargs))


def _report_name(ref: str) -> str:
    if ref.startswith("pydicom:"):
        return ref
    as_path = Path(ref)
    return as_path.name if as_path.is_absolute() else ref


def _encode(img: Image.Image, *, source: str, max_side: int, fmt: str, jpeg_quality: int) -> PreparedImage:
    original_width, original_height = img.size
    longer = max(original_width, original_height)
    if longer > max_side:
        scale = max_side / longer
        size = (max(1, round(original_width * scale)), max(1, round(original_height * scale)))
        img = img.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    buf = io.BytesIO()
    try:
        if fmt == "png":
            img.save(buf, format="PNG", optimize=False, compress_level=6)
        else:
            img.save(buf, format="JPEG", quality=jpeg_quality, optimize=False, progressive=False)
    except OSError as exc:  # pragma: no cover - encoding an in-memory L/RGB image does not fail in practice
        raise ImagingError(f"Image {source} could not be encoded as {fmt.upper()} ({exc}); try the other fmt.") \
            from None
    encoded = buf.getvalue()
    mime = _MIME[fmt]
    return PreparedImage(
        data_url=f"data:{mime};base64,{base64.b64encode(encoded).decode('ascii')}",
        mime=mime,
        sha256=hashlib.sha256(encoded).hexdigest(),
        width=img.width,
        height=img.height,
        original_width=original_width,
        original_height=original_height,
        source=source,
        nbytes=len(encoded),
    )
