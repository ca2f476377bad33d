"""The images of an import: already in the output folder, copied from a folder the user has, or downloaded once.

:class:`ImportImages` is the image provider of ``encsim import agentclinic`` for AgentClinic's NEJM image cases
(``scenarios.importers.ImageProvider``): the source file holds only each case's image URL, and the images are not the
project's to redistribute. For each case it puts ``<name>.<ext>`` in the output folder's ``images/`` and answers
with a ``scenarios.importers.ProvidedImage``:

1. **present**: a file ``<name>.*`` already there that Pillow reads (an earlier import fetched it): nothing is
   downloaded again.
2. With ``folder`` (``--images DIR``): the file ``DIR/<name>.*`` (``<name>`` as the import names it, e.g. NEJM's
   ``IC20240111``), at most ``max_bytes``, read by Pillow, copied in (**present**); a file that is not an image or
   is too big is **refused**, none is **missing**.
3. With ``fetch`` (``--fetch-images``): one GET of the URL over httpx (http and https only; at most
   ``MAX_REDIRECTS`` redirects; ``timeout_s`` to connect and between reads), ``delay_s`` after the start of the
   previous download (a polite rate limit), status 200 with a ``Content-Type`` of ``image/*``, at most ``max_bytes``
   (a larger ``Content-Length`` is refused before reading, a longer body while streaming), and bytes Pillow decodes
   (``imaging._load.decode_image``); written under the extension of the format Pillow found, by a rename, so an
   interrupted download leaves nothing half-written. An unreachable host, a timeout or an HTTP error status is
   **missing**; an answer that is not an image, too big, or a redirect loop is **refused**; either way with the
   reason, and the import goes on.
4. Otherwise **missing**: nothing was asked for.

A progress bar on stderr (one line, redrawn) when it is a terminal, else one line per case downloaded.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import urlsplit

from PIL import Image

from imaging._errors import ImagingError
from imaging._load import DEFAULT_MAX_PIXELS, DICOM_SUFFIXES, decode_image

if TYPE_CHECKING:
    import httpx

    from scenarios.importers import ImageStatus, ProvidedImage

__all__ = ["DEFAULT_FETCH_DELAY_S", "DEFAULT_FETCH_MAX_BYTES", "MAX_REDIRECTS", "ImportImages"]

DEFAULT_FETCH_MAX_BYTES = 20 * 1024 * 1024
DEFAULT_FETCH_DELAY_S = 1.0
DEFAULT_FETCH_TIMEOUT_S = 30.0
MAX_REDIRECTS = 5
USER_AGENT = "encounter-sim (encsim import --fetch-images; one request per image, rate-limited)"
_EXTENSIONS = {"PNG": ".png", "JPEG": ".jpg", "MPO": ".jpg", "GIF": ".gif", "WEBP": ".webp", "TIFF": ".tif",
               "BMP": ".bmp"}
_LOOKED_FOR = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".tif", ".tiff", ".bmp", ".dcm")


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} bytes"


def image_suffix(data: bytes, label: str) -> str:
    """The file extension of the image in ``data`` after Pillow (or pydicom) decoded it whole.

    Raises:
        ImagingError: the bytes are not an image this project reads (named by ``label``), or too many pixels.
    """
    if data[128:132] == b"DICM":
        decode_image(data, path=Path(f"{label}.dcm"), max_pixels=DEFAULT_MAX_PIXELS)
        return ".dcm"
    decode_image(data, path=Path(label), max_pixels=DEFAULT_MAX_PIXELS)
    with Image.open(io.BytesIO(data)) as img:
        return _EXTENSIONS.get(img.format or "", ".img")


def _write_atomically(folder: Path, name: str, suffix: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{name}{suffix}"
    tmp = folder / f".{name}{suffix}.part"
    tmp.write_bytes(data)
    os.replace(tmp, final)
    return final


class ImportImages:
    """Gets the images of an import (module docstring); a ``scenarios.importers.ImageProvider``.

    Args:
        folder: ``--images DIR``: a folder of images the user already has (None: none).
        fetch: ``--fetch-images``: download what is not there yet.
        max_bytes: the largest image kept, downloaded or copied.
        delay_s: seconds from the start of one download to the start of the next.
        timeout_s: seconds to connect, and between two reads of an answer.
        progress: show progress on ``stream`` (a bar on a terminal, else a line per case).
        stream: where progress goes (stderr).
    """

    def __init__(self, *, folder: Path | None = None, fetch: bool = False, max_bytes: int = DEFAULT_FETCH_MAX_BYTES,
                 delay_s: float = DEFAULT_FETCH_DELAY_S, timeout_s: float = DEFAULT_FETCH_TIMEOUT_S,
                 progress: bool = True, stream: TextIO | None = None) -> None:
        if max_bytes < 1 or delay_s < 0 or timeout_s <= 0:
            raise ValueError("max_bytes must be at least 1, delay_s at least 0 and timeout_s above 0")
        self.folder, self.fetch, self.max_bytes = folder, fetch, max_bytes
        self.delay_s, self.timeout_s = delay_s, timeout_s
        self.stream = stream or sys.stderr
        self.progress = progress
        self.tty = progress and self.stream.isatty()
        self.total = self.done = 0
        self.counts = {"fetched": 0, "present": 0, "missing": 0, "refused": 0}
        self._client: httpx.Client | None = None
        self._last_request: float | None = None

    # --- the provider protocol ---------------------------------------------------------------------

    def start(self, total: int) -> None:
        """Open the HTTP client (with ``fetch``) for ``total`` cases."""
        self.total, self.done = total, 0
        if self.fetch and self._client is None:
            import httpx  # only an import that fetches loads httpx

            self._client = httpx.Client(follow_redirects=True, max_redirects=MAX_REDIRECTS,
                                        timeout=httpx.Timeout(self.timeout_s), headers={"User-Agent": USER_AGENT})

    def provide(self, url: str, name: str, folder: Path) -> ProvidedImage:
        """The image of one case as ``folder/<name>.<ext>`` (module docstring); never raises for a bad image."""
        got = self._provide(url, name, folder)
        self.done += 1
        self.counts[got.status] += 1
        self._show(name, got)
        return got

    def finish(self) -> None:
        """Close the HTTP client and end the progress bar's line."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.tty and self.total:
            self.stream.write("\n")
            self.stream.flush()

    # --- the steps ---------------------------------------------------------------------------------

    def _provide(self, url: str, name: str, folder: Path) -> ProvidedImage:
        there = self._existing(folder, name)
        if there is not None:
            return _answer("present", there, "already in the output folder")
        if self.folder is not None:
            return self._copy(name, folder)
        if self.fetch:
            return self._download(url, name, folder)
        return _answer("missing", reason="not fetched: run with --fetch-images, or give --images DIR holding "
                                               f"{name}.jpg (or .png, ...)")

    def _existing(self, folder: Path, name: str) -> Path | None:
        for suffix in _LOOKED_FOR:
            path = folder / f"{name}{suffix}"
            if path.is_file() and path.stat().st_size <= self.max_bytes:
                try:
                    image_suffix(path.read_bytes(), path.name)
                except (ImagingError, OSError):
                    continue  # not a usable image: fetched or copied again
                return path
        return None

    def _copy(self, name: str, folder: Path) -> ProvidedImage:
        assert self.folder is not None
        found = [self.folder / f"{name}{s}" for s in _LOOKED_FOR if (self.folder / f"{name}{s}").is_file()]
        found += [p for p in self.folder.glob(f"{name}.*") if p.is_file() and p not in found]
        if not found:
            return _answer("missing", reason=f"no file {name}.jpg (or .png, ...) in --images {self.folder}")
        src = found[0]
        try:
            size = src.stat().st_size
            if size > self.max_bytes:
                return _answer("refused", reason=f"{src} is {_size(size)}, over the {_size(self.max_bytes)} "
                                                       "limit (--max-image-mb)")
            data = src.read_bytes()
            suffix = ".dcm" if src.suffix.lower() in DICOM_SUFFIXES else image_suffix(data, src.name)
        except ImagingError as exc:
            return _answer("refused", reason=f"{src} is not an image this project reads ({_first_sentence(exc)})")
        except OSError as exc:
            return _answer("missing", reason=f"{src} cannot be read ({exc.strerror or exc})")
        folder.mkdir(parents=True, exist_ok=True)
        dest = folder / f"{name}{suffix}"
        if dest.resolve() != src.resolve():
            shutil.copyfile(src, dest)
        return _answer("present", dest, f"copied from --images {self.folder}")

    def _wait(self) -> None:
        """Sleep until ``delay_s`` has passed since the previous download started."""
        now = time.monotonic()
        if self._last_request is not None:
            left = self._last_request + self.delay_s - now
            if left > 0:
                time.sleep(left)
        self._last_request = time.monotonic()

    def _download(self, url: str, name: str, folder: Path) -> ProvidedImage:
        import httpx

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return _answer("refused", reason=f"{url[:120]!r} is not an http(s) URL")
        assert self._client is not None, "start() opens the client"
        self._wait()
        host = parts.netloc
        try:
            with self._client.stream("GET", url) as answer:
                if answer.status_code != 200:
                    return _answer("missing", reason=f"{host} answered HTTP {answer.status_code}")
                ctype = answer.headers.get("content-type", "").split(";")[0].strip().lower()
                if not ctype.startswith("image/"):
                    return _answer("refused", reason=f"{host} sent {ctype or 'no Content-Type'}, not an image "
                                                           "(Content-Type image/...)")
                declared = answer.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_bytes:
                    return _answer("refused", reason=f"the image is {_size(int(declared))}, over the "
                                                           f"{_size(self.max_bytes)} limit (--max-image-mb)")
                data = bytearray()
                for chunk in answer.iter_bytes():
                    data += chunk
                    if len(data) > self.max_bytes:
                        return _answer("refused", reason=f"the image is over the {_size(self.max_bytes)} limit "
                                                               "(--max-image-mb); the download was stopped there")
        except httpx.TooManyRedirects:
            return _answer("refused", reason=f"more than {MAX_REDIRECTS} redirects from {host} (a redirect loop)")
        except httpx.TimeoutException:
            return _answer("missing", reason=f"{host} did not answer within {self.timeout_s:g} s")
        except httpx.HTTPError as exc:
            return _answer("missing", reason=f"{host} is unreachable ({type(exc).__name__}: "
                                                   f"{_one_line(exc) or 'no detail'})")
        try:
            suffix = image_suffix(bytes(data), f"{name} from {host}")
        except ImagingError as exc:
            return _answer("refused", reason=f"{host} sent {ctype} but not an image Pillow reads "
                                            f"({_first_sentence(exc)})")
        path = _write_atomically(folder, name, suffix, bytes(data))
        return _answer("fetched", path, f"{_size(len(data))} from {host}")

    def _show(self, name: str, got: ProvidedImage) -> None:
        if not self.progress or not (self.fetch or self.folder is not None) or (not self.tty and not self.fetch):
            return  # off a terminal, a line per download; copying from a folder is quick and reported after
        if self.tty:
            width = 30
            filled = int(width * self.done / max(1, self.total))
            counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
            self.stream.write(f"\rimages [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {counts}")
        else:
            why = f" ({got.reason})" if got.reason else ""
            self.stream.write(f"images [{self.done}/{self.total}] {name}: {got.status}{why}\n")
        self.stream.flush()


def _answer(status: ImageStatus, path: Path | None = None, reason: str | None = None) -> ProvidedImage:
    """The provider's answer (``scenarios.importers`` is loaded by an import only, not by ``import imaging``)."""
    from scenarios.importers import ProvidedImage

    return ProvidedImage(status, path, reason)


def _first_sentence(exc: BaseException) -> str:
    """What went wrong, without the advice of the message (written for a scenario's image file)."""
    text = _one_line(exc)
    for stop in (": ", ". "):
        head, sep, _ = text.partition(stop)
        if sep and len(head) > 20:
            return head
    return text


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]
