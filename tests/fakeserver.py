"""A real OpenAI-compatible HTTP server on 127.0.0.1 that misbehaves on purpose.

Used by the fault tests (no httpx patching: the client talks real HTTP over loopback) and by
bench/harness_overhead.py (a fixed latency). It runs its own asyncio loop in a background thread,
so it works from sync and async tests alike.

Each request takes the next action from ``script`` (then ``default``):

- ``("ok", text)``           200 with a chat completion whose content is ``text``
- ``("status", code, hdrs)`` that status, a JSON error body, extra headers (e.g. Retry-After)
- ``("hang", seconds)``      read the request, then say nothing for that long
- ``("malformed",)``         200 with a body that is not JSON
- ``("drop",)``              close the connection without answering
- ``("echo",)``              200 whose content echoes how many messages it received
- ``("trickle", total_s, interval_s)``  200 with a valid completion whose body dribbles out one byte
  every ``interval_s`` seconds; after ``total_s`` the rest is sent at once (a client bounding each
  read but not the whole call waits ``total_s`` and then gets a reply)
- ``("content", value)``     200 whose ``choices[0].message.content`` is exactly ``value`` (any JSON
  value: ``None`` for null, ``""``, whitespace, a number, a list of content parts ...)
- ``("no_choices",)``        200 without ``choices``; ``("no_choices", value)``: ``choices`` is ``value`` (``[]``)
- ``("length",)``            200 with ``finish_reason: "length"`` and empty content;
  ``("length", text)``: the same with ``text`` (a reply cut at max_tokens)
- ``("tool_calls",)``        200 whose message has ``tool_calls`` and null content
- ``("error200", message)``  200 whose body is an error object ``{"error": {"message": ..., "type": "server_error"}}``
- ``("json", obj)``          200 whose body is ``obj`` as JSON, whatever it is
- ``("reflect",)``           200 whose content is the request's headers as JSON (``Authorization``
  included), also in an extra top-level ``"request_headers"`` field
- ``("status_body", code, body[, hdrs])``  that status with ``body`` (str or bytes) sent raw, for
  error bodies full of ANSI/OSC sequences or echoing the Authorization header

``reply`` (a callable from the request body to text) overrides ``("ok", ...)`` for the default.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

Action = tuple[Any, ...]


class FakeChatServer:
    def __init__(self, *, script: list[Action] | None = None, default: Action = ("ok", "Hello."),
                 latency_s: float = 0.0, reply: Callable[[dict[str, Any]], str] | None = None,
                 tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls  # serve https with this context (tests/data/tls: a test-only CA and a 127.0.0.1 certificate)
        self.script = list(script or [])
        self.default = default
        self.latency_s = latency_s
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.request_times: list[float] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/v1"

    def _next(self) -> Action:
        with self._lock:
            return self.script.pop(0) if self.script else self.default

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:  # noqa: C901
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                data = json.loads(body) if body else {}
                with self._lock:
                    self.requests.append(data)
                    self.headers_seen.append(headers)
                    self.request_times.append(time.monotonic())
                action = self._next()
                if self.latency_s:
                    await asyncio.sleep(self.latency_s)
                kind = action[0]
                if kind == "drop":
                    writer.close()
                    return
                if kind == "hang":
                    await asyncio.sleep(action[1])
                    writer.close()
                    return
                json_type = {"content-type": "application/json"}
                if kind == "malformed":
                    self._write(writer, 200, b"{not json at all", json_type)
                elif kind == "status":
                    extra = action[2] if len(action) > 2 else {}
                    payload = json.dumps({"error": {"message": f"status {action[1]}"}}).encode()
                    self._write(writer, action[1], payload, {**json_type, **extra})
                elif kind == "status_body":
                    raw = action[2] if isinstance(action[2], bytes) else str(action[2]).encode()
                    self._write(writer, action[1], raw, {"content-type": "text/plain", **(action[3] if len(action) > 3
                                                                                          else {})})
                elif kind == "trickle":
                    payload = json.dumps(self._completion(data, "A reply that took its time.")).encode()
                    await self._trickle(writer, payload, total_s=action[1], interval_s=action[2])
                    return
                elif kind == "error200":
                    payload = json.dumps({"error": {"message": action[1], "type": "server_error", "code": None}})
                    self._write(writer, 200, payload.encode(), json_type)
                elif kind == "json":
                    self._write(writer, 200, json.dumps(action[1]).encode(), json_type)
                elif kind == "no_choices":
                    body_obj = self._completion(data, "unused")
                    if len(action) > 1:
                        body_obj["choices"] = action[1]
                    else:
                        del body_obj["choices"]
                    self._write(writer, 200, json.dumps(body_obj).encode(), json_type)
                else:
                    finish = "stop"
                    extra_fields: dict[str, Any] = {}
                    message_extra: dict[str, Any] = {}
                    if kind == "echo":
                        text: Any = f"received {len(data.get('messages', []))} messages"
                    elif kind == "length":
                        text, finish = (action[1] if len(action) > 1 else ""), "length"
                    elif kind == "tool_calls":
                        text, finish = None, "tool_calls"
                        message_extra["tool_calls"] = [{"id": "call_1", "type": "function", "function": {
                            "name": "lookup_guideline", "arguments": json.dumps({"topic": "chest pain"})}}]
                    elif kind == "reflect":
                        text = json.dumps(headers)
                        extra_fields["request_headers"] = headers
                    elif kind == "content":
                        text = action[1]
                    elif self.reply is not None and action is self.default:
                        text = self.reply(data)
                    else:
                        text = action[1]
                    body_obj = self._completion(data, text, finish=finish, **message_extra)
                    body_obj.update(extra_fields)
                    self._write(writer, 200, json.dumps(body_obj).encode(), json_type)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # stopped with a request in flight: end quietly (Python 3.11's stream
            pass  # callback logs a traceback for a handler task that ends cancelled)
        finally:
            if not writer.is_closing():
                writer.close()

    @staticmethod
    def _completion(request: dict[str, Any], content: Any, *, finish: str = "stop",
                    **message_extra: Any) -> dict[str, Any]:
        return {
            "id": "cmpl-1", "object": "chat.completion", "model": request.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message_extra},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    @staticmethod
    async def _trickle(writer: asyncio.StreamWriter, payload: bytes, *, total_s: float, interval_s: float) -> None:
        """Headers at once, then one byte per ``interval_s`` until ``total_s`` has passed, then the rest."""
        head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(payload)}\r\ncontent-type: application/json\r\n\r\n"
        writer.write(head.encode())
        await writer.drain()
        deadline = time.monotonic() + total_s
        sent = 0
        while sent < len(payload) - 1 and time.monotonic() < deadline:
            await asyncio.sleep(interval_s)
            if writer.is_closing():
                return
            writer.write(payload[sent : sent + 1])
            await writer.drain()
            sent += 1
        writer.write(payload[sent:])
        await writer.drain()
        writer.close()

    @staticmethod
    def _write(writer: asyncio.StreamWriter, status: int, body: bytes, headers: dict[str, str]) -> None:
        head = [f"HTTP/1.1 {status} X", f"content-length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)

    def start(self) -> FakeChatServer:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)

            async def boot() -> None:
                self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=256, ssl=self.tls)
                self.port = self._server.sockets[0].getsockname()[1]
                ready.set()

            self._loop.run_until_complete(boot())
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        loop = self._loop

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(5)
        self._loop = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
