"""A stdlib OpenAI-compatible chat-completions endpoint for tests/run.rs.

Prints its port on the first line of stdout, then serves until stdin closes.

- Requires `Authorization: Bearer <MOCK_API_KEY>` when that variable is set.
- Model `right`: the last user message is `CALL <json>…` (one JSON call
  object per line) or `NOCALL <text>`; it answers with hermes `<tool_call>`
  blocks for the calls, or with prose.
- Model `prose`: always answers in prose.
- Model `down`: always HTTP 503.  Model `refused`: HTTP 400.
- A last user message containing `FLAKY` fails twice with HTTP 500 (per
  model and seed), then answers.
- Every answer waits MOCK_DELAY_MS (default 0) first.
- Model `slow`: answers after 5 s (for timeouts).
- GET /stats: {"answered": N, "posts": M, "max_inflight": K}.
- GET /reset: waits (up to 5 s) until no request is in flight — a killed
  client's requests finish on the server after the client is gone — then
  restarts the max_inflight count.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = os.environ.get("MOCK_API_KEY")
DELAY = int(os.environ.get("MOCK_DELAY_MS", "0")) / 1000.0
LOCK = threading.Lock()
STATS = {"answered": 0, "posts": 0, "inflight": 0, "max_inflight": 0}
FLAKY = {}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            with LOCK:
                self.send_json(200, dict(STATS))
        elif self.path == "/reset":
            deadline = time.time() + 5
            while time.time() < deadline:
                with LOCK:
                    if STATS["inflight"] == 0:
                        break
                time.sleep(0.01)
            with LOCK:
                STATS["max_inflight"] = STATS["inflight"]
                self.send_json(200, dict(STATS))
        else:
            self.send_json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        with LOCK:
            STATS["inflight"] += 1
            STATS["max_inflight"] = max(STATS["max_inflight"], STATS["inflight"])
        try:
            self.post()
        finally:
            with LOCK:
                STATS["inflight"] -= 1

    def post(self):
        length = int(self.headers.get("content-length", "0"))
        req = json.loads(self.rfile.read(length) or b"{}")
        with LOCK:
            STATS["posts"] += 1
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": {"message": "not found"}})
        if KEY and self.headers.get("authorization") != "Bearer " + KEY:
            return self.send_json(401, {"error": {"message": "bad key"}})
        model = req.get("model")
        user = [m for m in req.get("messages", []) if m.get("role") == "user"][-1]["content"]
        if model == "down":
            return self.send_json(503, {"error": {"message": "overloaded"}})
        if model == "refused":
            return self.send_json(400, {"error": {"message": "no such model"}})
        if model == "slow":
            time.sleep(5)
        if "FLAKY" in user:
            key = (model, req.get("seed"), user)
            with LOCK:
                FLAKY[key] = FLAKY.get(key, 0) + 1
                n = FLAKY[key]
            if n <= 2:
                return self.send_json(500, {"error": {"message": "flaky %d" % n}})
        time.sleep(DELAY)
        if model == "right" and user.startswith("CALL "):
            calls = [json.loads(line.removeprefix("CALL "))
                     for line in user.splitlines() if line.startswith("CALL ")]
            content = "\n".join("<tool_call>%s</tool_call>" % json.dumps(c) for c in calls)
        elif model == "right":
            content = "Happy to help: " + user.removeprefix("NOCALL ")
        else:
            content = "I would rather answer in prose."
        with LOCK:
            STATS["answered"] += 1
        self.send_json(200, {
            "id": "chatcmpl-mock", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
        })


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client killed mid-request (the resume test does that)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # the test closes stdin (or dies): stop


if __name__ == "__main__":
    main()
