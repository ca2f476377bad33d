"""A stand-in for llama-cpp-python's server that loads, answers, and then crashes like a native build on a CPU
whose AMX state the hypervisor does not enable: ``GET /v1/models`` answers, the first ``--die-after`` chat
completions answer, and the next one kills the process with ``--signal`` (default SIGSEGV), as ``ldtilecfg``
does. Run as ``python dying_llama.py --port P --die-after N``; 127.0.0.1 only."""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "smollm2-135m-instruct"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--die-after", type=int, default=0, help="chat completions answered before the crash")
    parser.add_argument("--signal", default="SIGSEGV")
    ns = parser.parse_args()
    answered = 0

    class Handler(BaseHTTPRequestHandler):
        def _json(self, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._json({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "me"}]})

        def do_POST(self) -> None:
            nonlocal answered
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if answered >= ns.die_after:
                print("llama_context: n_ctx = 8192\nggml_backend_cpu: AMX tile config", file=sys.stderr, flush=True)
                if ns.signal == "SIGSEGV":
                    ctypes.string_at(0)  # a real invalid read in this thread, as ldtilecfg without tile state
                os.kill(os.getpid(), getattr(signal, ns.signal))
                time.sleep(60)  # never answer: the signal ends the process (it may reach another thread first)
            answered += 1
            self._json({"id": f"c{answered}", "object": "chat.completion", "model": MODEL, "created": 0,
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": "Do you have any chest pain?"}}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}})

        def log_message(self, *args: object) -> None:
            pass

    print("INFO: Uvicorn running on 127.0.0.1", file=sys.stderr, flush=True)
    ThreadingHTTPServer(("127.0.0.1", ns.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
