"""A minimal local web page for a voice triage call with the simulated patient, from a browser.

The page
    ``start_call_page(ws_url=..., title=...)`` serves, on a loopback address only, one page with a
    heading (``title``), a *Start call* button (browsers only open the microphone and start audio
    after a user gesture), *Hang up*, a status line, a microphone level meter and a live transcript.
    On *Start call* it opens the microphone (``getUserMedia`` with echo cancellation, noise
    suppression and automatic gain), captures it through an AudioWorklet
    (``/capture-worklet.js``; a ScriptProcessorNode where worklets are unavailable), resamples it
    to 16 kHz mono int16 and sends one 20 ms frame (320 samples) per websocket message to the
    patient. Audio from the patient (any rate, e.g. 16 kHz or
    22.05 kHz mono) is scheduled gap-free on the AudioContext behind an 80 ms jitter buffer; an
    interruption frame drops everything still scheduled.

What the page says about the scenario
    The page is for the person being evaluated, so it must not give the answer away: the live code
    (``sim.live.run_live``) passes ``title=caller_line(scenario.patient_profile)``, a neutral line
    built from who is calling and the patient's age band and sex only ("Incoming triage call: parent
    calling about a 6-week-old baby boy"), never the scenario's title, chief complaint, diagnoses,
    triage level, escalation, tags, suite or id. That line is the only scenario information the page
    gets: it is in ``<title>`` and ``<h1>``; the scripts and style are static files, the only other
    injected value is the websocket URL, and the patient's websocket messages carry only transcripts
    of what was said aloud, status text and the call's end reason (see below).

The wire format
    The patient is a pipecat pipeline behind ``SingleClientWebsocketServerTransport`` with
    ``ProtobufFrameSerializer``: every websocket binary message is one protobuf ``pipecat.Frame``
    (``pipecat/frames/frames.proto``) whose oneof is ``text`` = 1, ``audio`` = 2 (``AudioRawFrame``:
    id = 1, name = 2, audio = 3 int16 little-endian PCM, sample_rate = 4, num_channels = 5, pts = 6),
    ``transcription`` = 3, ``message`` = 4 (``MessageFrame``: data = 1, a JSON string) or
    ``interruption`` = 5. ``web/codec.js`` encodes and decodes exactly these by hand (varints and
    length-delimited fields; no library), in the browser and in node (the tests check it against
    the real serializer). JSON messages:

    - page -> patient: ``{"type": "hangup"}`` when the user hangs up (then the socket is closed).
      pipecat delivers it as an ``InputTransportMessageFrame``.
    - patient -> page: ``{"type": "transcript", "speaker": "agent"|"patient", "text": ...}`` (a
      transcript line; "agent" is the person using the page), ``{"type": "status", "text": ...}``
      (the status line), ``{"type": "call_ended", "reason": ...}`` (stops the microphone, shows the
      reason, closes the socket once the last audio has played). Other types are ignored, as are
      text and transcription frames.

Security choices
    - Loopback only: ``host`` must be 127.0.0.1, localhost (bound as 127.0.0.1) or ::1, else
      ``ValueError``. Requests whose ``Host`` header is not this loopback address and port are
      refused (421), so a DNS-rebinding site cannot read the page.
    - Nothing external: the page, its script, style and worklet are files of this package served by
      this server; the only URL in the page is the patient's websocket URL, injected HTML-escaped
      into ``<meta name="encsim-ws">`` (the title too, in ``<title>`` and ``<h1>``); no value is ever
      pasted into JavaScript, and the page script uses ``textContent`` for everything it shows.
    - Every response carries ``Content-Security-Policy: default-src 'none'; script-src 'self';
      style-src 'self'; connect-src <the websocket URL's origin>; img-src 'self'; base-uri 'none';
      form-action 'none'; frame-ancestors 'none'`` (no inline script or style, no eval; AudioWorklet
      modules fall under script-src, so no blob: is needed), plus ``Cache-Control: no-store``,
      ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``, ``X-Frame-Options:
      DENY``, ``Cross-Origin-Opener-Policy: same-origin``, ``Cross-Origin-Resource-Policy:
      same-origin`` and ``Permissions-Policy: microphone=(self), camera=(), geolocation=()``.
    - http://127.0.0.1 is a secure context for the browser, so the microphone works without TLS.
    - The patient's websocket (``audio.live``) accepts only this page's origin (and ``--allow-origin``
      ones): a page of any other site open in the same browser gets HTTP 403 at the handshake. The
      page becomes the caller with its first audio frame (it starts capturing as soon as the socket
      opens); a connection that sends no audio within the join window (``--join-window``, 10 s) is
      closed and is no call.

The files live in ``audio/web/`` beside this module and are read via ``importlib.resources``, so they
are found when the package is installed provided the package data includes ``web/*`` (see the
``[tool.setuptools.package-data]`` table in pyproject.toml).
"""

from __future__ import annotations

import errno
import html
import ipaddress
import re
import socket
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from aiohttp import web

from sim.records import EncSimError

if TYPE_CHECKING:
    from scenarios.schema import PatientProfile

__all__ = ["CallPageServer", "CallPagePortError", "caller_line", "start_call_page", "content_security_policy"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

# Served path -> (file in audio/web/, content type). Everything else is 404.
_FILES: dict[str, tuple[str, str]] = {
    "/": ("call.html", "text/html; charset=utf-8"),
    "/codec.js": ("codec.js", "text/javascript; charset=utf-8"),
    "/dsp.js": ("dsp.js", "text/javascript; charset=utf-8"),
    "/call.js": ("call.js", "text/javascript; charset=utf-8"),
    "/capture-worklet.js": ("capture-worklet.js", "text/javascript; charset=utf-8"),
    "/call.css": ("call.css", "text/css; charset=utf-8"),
}

_PLACEHOLDER = re.compile(r"\{\{(ws_url|title)\}\}")
# Characters that cannot appear in a URL we put into a CSP header or trust as one origin.
_BAD_URL_CHARS = re.compile(r"[\s;,'\"<>\\`\x00-\x1f\x7f]")


_SPEAKERS = ("patient", "parent", "caregiver", "partner")
_WEEKS_PER_YEAR = 52.1775


def _described(age: float, sex: str) -> str:
    """The person the call is about, by age band and sex only: "adult woman", "6-week-old baby boy"."""
    if age < 1:
        weeks = round(age * _WEEKS_PER_YEAR)
        months = int(age * 12)
        old = f"{max(1, weeks)}-week-old" if weeks < 13 else f"{max(3, months)}-month-old"
        return f"{old} baby" + {"male": " boy", "female": " girl"}.get(sex, "")
    if age < 13:
        return {"male": "boy", "female": "girl"}.get(sex, "child")
    if age < 18:
        return {"male": "teenage boy", "female": "teenage girl"}.get(sex, "teenager")
    person = {"male": "man", "female": "woman"}.get(sex)
    if age < 65:
        return f"adult {person}" if person else "adult"
    return f"older {person or 'adult'}"


def _article(phrase: str) -> str:
    """"a" or "an" before ``phrase`` ("an adult", "an 8-week-old", "an 11-month-old", "a 6-week-old")."""
    first = phrase.split("-", 1)[0].split(" ", 1)[0]
    if first.isdigit():
        return "an" if first.startswith("8") or first in ("11", "18") else "a"
    return "an" if first[:1].lower() in "aeiou" else "a"


def caller_line(profile: PatientProfile) -> str:
    """The neutral line the live call page shows the person taking the call, from the patient profile alone.

    Built only from ``profile.speaker`` (who is on the phone: the patient, or a parent, caregiver or
    partner calling about them), the age band (baby under 1 year, with its age in weeks or months;
    child under 13; teenager under 18; adult under 65; older adult from 65) and ``profile.sex``. It
    never uses the scenario's title, chief complaint, expected diagnoses, triage level, escalation,
    tags, suite or id: any of them would give the answer away to the person being evaluated (the
    reviewer views, reports and the dashboard, keep showing the title). Examples: "Incoming triage
    call: adult woman", "Incoming triage call: parent calling about a 6-week-old baby boy",
    "Incoming triage call: caregiver calling about an older man".

    ``profile`` is a ``scenarios.PatientProfile`` (or anything with ``age`` in years, ``sex`` of
    female / male / other and ``speaker``).
    """
    who = _described(float(profile.age), str(profile.sex))
    speaker = str(getattr(profile, "speaker", "patient") or "patient")
    if speaker not in _SPEAKERS or speaker == "patient":
        return f"Incoming triage call: {who}"
    return f"Incoming triage call: {speaker} calling about {_article(who)} {who}"


class CallPagePortError(EncSimError, OSError):
    """The call page could not listen on the requested port (usually: already in use)."""


def _read_web_file(name: str) -> bytes:
    return resources.files("audio").joinpath("web", name).read_bytes()


def _ws_origin(ws_url: str) -> str:
    """The origin of a ws:// or wss:// URL, for connect-src; ValueError if it is not a plain one."""
    if not isinstance(ws_url, str) or not ws_url:
        raise ValueError("ws_url must be a non-empty ws:// or wss:// URL")
    if _BAD_URL_CHARS.search(ws_url):
        raise ValueError(f"ws_url contains characters not allowed in a websocket URL: {ws_url!r}")
    parts = urlsplit(ws_url)
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"ws_url must start with ws:// or wss://, got {ws_url!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError("ws_url must not carry credentials")
    host = parts.hostname
    if not host:
        raise ValueError(f"ws_url has no host: {ws_url!r}")
    if ":" in host:
        # CSP host-source has no syntax for IPv6 literals, so connect-src could not name it.
        raise ValueError(f"ws_url must not use an IPv6 literal host (CSP cannot name it); use 127.0.0.1: {ws_url!r}")
    if not re.fullmatch(r"[A-Za-z0-9.-]+", host):
        raise ValueError(f"ws_url host is not a plain host name or IPv4 address: {ws_url!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"ws_url has an invalid port: {ws_url!r}") from exc
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def content_security_policy(ws_url: str) -> str:
    """The Content-Security-Policy header the page is served with for this websocket URL."""
    return "; ".join([
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        f"connect-src {_ws_origin(ws_url)}",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ])


def _render_page(template: str, *, ws_url: str, title: str) -> str:
    values = {"ws_url": html.escape(ws_url, quote=True), "title": html.escape(title, quote=True)}
    # One pass, so a title containing "{{ws_url}}" stays literal text.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


@dataclass
class CallPageServer:
    """A running call page. ``url`` is what to open in the browser."""

    host: str
    port: int
    ws_url: str
    _runner: web.AppRunner = field(repr=False)

    @property
    def url(self) -> str:
        """The page's address (``http://host:port/``, an IPv6 host in brackets)."""
        netloc = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{netloc}:{self.port}/"

    async def close(self) -> None:
        """Stop serving the page."""
        await self._runner.cleanup()

    async def __aenter__(self) -> CallPageServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _build_app(*, ws_url: str, title: str, allowed_hosts: set[str]) -> web.Application:
    csp = content_security_policy(ws_url)
    bodies: dict[str, tuple[bytes, str]] = {}
    for path, (name, ctype) in _FILES.items():
        data = _read_web_file(name)
        if name == "call.html":
            data = _render_page(data.decode("utf-8"), ws_url=ws_url, title=title).encode("utf-8")
        bodies[path] = (data, ctype)

    @web.middleware
    async def check_host(request: web.Request, handler):  # type: ignore[no-untyped-def]
        if request.headers.get("Host", "").lower() not in allowed_hosts:
            return web.Response(status=421, text="Misdirected request: this page answers on its loopback address only.")
        return await handler(request)

    async def serve(request: web.Request) -> web.Response:
        body, ctype = bodies[request.path]
        return web.Response(body=body, headers={"Content-Type": ctype})

    async def add_headers(request: web.Request, response: web.StreamResponse) -> None:
        response.headers["Content-Security-Policy"] = csp
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
        response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
        response.headers["Permissions-Policy"] = "microphone=(self), camera=(), geolocation=()"

    app = web.Application(middlewares=[check_host])
    for path in bodies:
        app.router.add_get(path, serve)
    app.on_response_prepare.append(add_headers)
    return app


async def start_call_page(*, ws_url: str, title: str, host: str = "127.0.0.1", port: int = 0) -> CallPageServer:
    """Serve the call page on ``host:port`` (port 0: a free one) and return the running server.

    ``ws_url`` is the patient's websocket (ws:// or wss://); ``title`` is shown as the page title and
    heading, to the person taking the call: pass ``caller_line(profile)``, never the scenario's title.
    Raises ValueError for a non-loopback ``host`` or a bad ``ws_url`` / ``port``, and
    CallPagePortError (an OSError) when the port cannot be used.
    """
    if host not in LOOPBACK_HOSTS:
        raise ValueError(f"host must be one of {', '.join(LOOPBACK_HOSTS)} (the call page serves loopback only); "
                         f"got host={host!r}")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be an integer from 0 to 65535, got port={port!r}")
    if not isinstance(title, str):
        raise ValueError("title must be a string")
    bind = "127.0.0.1" if host == "localhost" else host

    # Bind the socket ourselves so port 0 resolves to one known port before the app is built.
    family = socket.AF_INET6 if ipaddress.ip_address(bind).version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((bind, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CallPagePortError(exc.errno, f"port {port} on {bind} is already in use; choose another with --port "
                                               f"(or --port 0 for a free one)") from exc
        raise CallPagePortError(exc.errno, f"cannot listen on {bind} port {port}: {exc.strerror or exc}; "
                                           f"choose another with --port") from exc
    sock.setblocking(False)
    bound_port = sock.getsockname()[1]
    netloc_host = f"[{bind}]" if family == socket.AF_INET6 else bind
    allowed = {f"{netloc_host}:{bound_port}"}
    if host == "localhost":
        allowed.add(f"localhost:{bound_port}")

    try:
        app = _build_app(ws_url=ws_url, title=title, allowed_hosts=allowed)
    except BaseException:
        sock.close()
        raise
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
    except BaseException:
        await runner.cleanup()
        sock.close()
        raise
    return CallPageServer(host=bind, port=bound_port, ws_url=ws_url, _runner=runner)
