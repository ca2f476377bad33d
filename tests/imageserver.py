"""A real HTTP server on 127.0.0.1 that serves images made with Pillow, and misbehaves on purpose.

For the image downloads of ``encsim import agentclinic --fetch-images`` (``imaging._fetch``): the client talks real
HTTP over loopback, nothing is patched, and the test machines need no internet. A request's ``id`` query parameter
(NEJM's ``...images?id=IC20240111``) or its path names what it gets:

- ``ok``: the default: a PNG (or a JPEG for an id ending in ``jpg``) drawn for that id, ``image/png``;
- ``html``: 200 with an HTML page (``text/html``): not an image;
- ``lie``: 200 ``image/png`` whose body is text: the header says image, the bytes are not one;
- ``big``: 200 ``image/png``, a real PNG of ``big_bytes`` bytes with its ``Content-Length``;
- ``big_chunked``: the same without a ``Content-Length`` (chunked): the size shows only while reading;
- ``loop``: 302 to itself, forever (a redirect loop);
- ``missing``: 404.

``modes`` maps an id to its behaviour; ``requests`` lists the paths asked for, in order.
"""

from __future__ import annotations

import io
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import numpy as np
from PIL import Image


def image_bytes(seed: str, fmt: str = "PNG", size: tuple[int, int] = (64, 48)) -> bytes:
    """A small picture drawn from ``seed`` (a different picture per seed), encoded as ``fmt``."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    pixels = rng.integers(0, 255, size=(size[1], size[0], 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(buf, format=fmt)
    return buf.getvalue()


class ImageServer:
    """The server (see the module docstring); use as a context manager."""

    def __init__(self, modes: dict[str, str] | None = None, *, big_bytes: int = 400_000) -> None:
        self.modes = dict(modes or {})
        self.big_bytes = big_bytes
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def url(self, image_id: str) -> str:
        """An NEJM-shaped URL for ``image_id`` on this server."""
        return f"http://127.0.0.1:{self.port}/ContentServer/images?id={image_id}&width=1500&height=4000"

    def _big_png(self) -> bytes:
        side = 64
        data = image_bytes("big", size=(side, side))
        while len(data) < self.big_bytes:  # noise does not compress: grow until the PNG is big enough
            side *= 2
            data = image_bytes("big", size=(side, side))
        return data

    def _answer(self, image_id: str, path: str) -> tuple[int, str | None, bytes, bool, dict[str, str]]:
        """(status, Content-Type, body, chunked, extra headers) for a request of ``image_id``."""
        mode = self.modes.get(image_id, "ok")
        answers: dict[str, tuple[int, str | None, bytes, bool, dict[str, str]]] = {
            "html": (200, "text/html; charset=utf-8", b"<html><body>Subscribe to read</body></html>", False, {}),
            "lie": (200, "image/png", b"this is text, not a PNG\n" * 20, False, {}),
            "loop": (302, None, b"", False, {"Location": path}),
            "missing": (404, "text/plain", b"not found", False, {}),
        }
        if mode in answers:
            return answers[mode]
        if mode in ("big", "big_chunked"):
            return 200, "image/png", self._big_png(), mode == "big_chunked", {}
        if image_id.lower().endswith("jpg"):
            return 200, "image/jpeg", image_bytes(image_id, "JPEG"), False, {}
        return 200, "image/png", image_bytes(image_id), False, {}

    def __enter__(self) -> ImageServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                return

            def _send(self, status: int, ctype: str | None, body: bytes, *, length: bool = True,
                      headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                if ctype:
                    self.send_header("Content-Type", ctype)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for i in range(0, len(body), 16384):
                        chunk = body[i:i + 16384]
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                image_id = (parse_qs(parts.query).get("id") or [parts.path.rsplit("/", 1)[-1]])[0]
                with server._lock:
                    server.requests.append(self.path)
                status, ctype, body, chunked, headers = server._answer(image_id, self.path)
                self._send(status, ctype, body, length=not chunked, headers=headers)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                return  # a client that stops reading (a size limit) breaks the pipe: expected, not news

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def closed_port() -> int:
    """A loopback port with nothing listening on it (bound, then closed)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
