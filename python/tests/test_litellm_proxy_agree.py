"""The LiteLLM guardrail and ``toolgate proxy --mode enforce`` serve the same
choice for the same answer: both call the validator's whole-output
judgment (text + native set as one set). A small upstream on 127.0.0.1
answers each case; the proxy's served message is compared with what the
guardrail makes of the same answer (as a dict)."""

from __future__ import annotations

import copy
import http.server
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
if os.environ.get("TOOLGATE_REQUIRE_INTEGRATIONS"):
    import litellm  # noqa: F401
else:
    pytest.importorskip("litellm")

from toolgate import ToolgateError  # noqa: E402
from toolgate.integrations.litellm import ToolgateGuardrail  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": False}}}
]


def native(name, arguments, id="call_n0"):
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Ghent"}}</tool_call>'
BAD = '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'

#: (content, tool_calls, function_call, finish_reason)
CASES = [
    ("Just prose.", None, None, "stop"),
    ("Let me check. " + CALL, None, None, "stop"),
    ("Careful. " + BAD, None, None, "stop"),
    (None, [native("get_weather", '{"city": "Oslo"}')], None, "tool_calls"),
    (None, [native("get_weather", '{"city": "Oslo"}'), native("rm_rf", "{}", "c1")], None,
     "tool_calls"),
    (None, [native("get_weather", '{"city": 3}')], None, "tool_calls"),
    ("Also " + CALL, [native("get_weather", '{"city": "Oslo"}')], None, "tool_calls"),
    (BAD, [native("get_weather", '{"city": "Oslo"}')], None, "tool_calls"),
    (None, None, {"name": "get_weather", "arguments": '{"city": "Rome"}'}, "function_call"),
    (None, None, {"name": "rm_rf", "arguments": "{}"}, "function_call"),
    (None, [native("get_weather", "")], None, "length"),
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Gh', None, None, "length"),
    # An empty list: no call, served as stop without the list.
    ("Hi.", [], None, "tool_calls"),
    # No finish reason: a null one is judged and served as the proxy does.
    (None, [native("get_weather", '{"city": "Oslo"}')], None, None),
    ("Just prose.", None, None, None),
]


def answer(case):
    content, tool_calls, function_call, finish = case
    message = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    if function_call is not None:
        message["function_call"] = function_call
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
            "model": "Qwen/Qwen3-8B",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def unchecked(message=None, choice=None, top=None):
    """An answer with `message` keys, `choice` keys and `top` keys added."""
    a = answer((None, None, None, "tool_calls"))
    a["choices"][0]["message"].update(message or {})
    a["choices"][0].update(choice or {})
    a.update(top or {})
    return a


BAD_CALLS = [native("rm_rf", "{}")]
#: Answers the proxy cannot check (its 502 "unchecked"), each refused by
#: the guardrail with the same reason.
UNCHECKED = {
    "function_calls": unchecked({"function_calls": BAD_CALLS}),
    "Tool_Calls": unchecked({"Tool_Calls": BAD_CALLS}),
    "choice tool_calls": unchecked(choice={"tool_calls": BAD_CALLS}),
    "top tool_calls": unchecked(top={"tool_calls": BAD_CALLS}),
    "delta for message": {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                          "choices": [{"index": 0, "finish_reason": "tool_calls", "delta": {
                              "role": "assistant", "tool_calls": BAD_CALLS}}]},
    "arguments object": unchecked({"tool_calls": [
        {"id": "c", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}),
    "null id": unchecked({"tool_calls": [native("get_weather", '{"city": "Oslo"}', None)]}),
    "extra call field": unchecked({"tool_calls": [
        dict(native("get_weather", '{"city": "Oslo"}'), custom={"name": "rm_rf"})]}),
    "custom type": unchecked({"tool_calls": [
        {"id": "c", "type": "custom", "custom": {"name": "get_weather", "input": "x"}}]}),
    "content parts": unchecked({"content": [{"type": "text", "text": CALL}]}),
    "text part without text": unchecked({"content": [{"type": "text"}]}),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def proxy(cli):
    bin_path = str(cli)
    current = {}

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.dumps(current["answer"]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = free_port()
    proc = subprocess.Popen(
        [bin_path, "proxy", "--upstream", f"http://127.0.0.1:{upstream.server_address[1]}/v1",
         "--listen", f"127.0.0.1:{port}", "--mode", "enforce", "--profile", "hermes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                upstream.shutdown()
                pytest.fail("the proxy did not start")
            time.sleep(0.05)

    def ask(case):
        current["answer"] = case if isinstance(case, dict) else answer(case)
        request = {"model": "Qwen/Qwen3-8B", "tools": TOOLS,
                   "messages": [{"role": "user", "content": "weather?"}]}
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(request).encode(),
            headers={"Content-Type": "application/json"})
        try:
            r = urllib.request.urlopen(req, timeout=30)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())
        with r:
            return json.loads(r.read()), {
                k: r.headers.get(f"x-toolgate-{k}") for k in ("decision", "label", "gate")}

    yield ask
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
    upstream.shutdown()


def without_ids(message):
    """The message with the text calls' fresh ids blanked (each side draws
    its own)."""
    message = copy.deepcopy(message)
    for call in message.get("tool_calls") or []:
        if call["id"].startswith("call_") and call["id"] != "call_n0":
            call["id"] = "fresh"
    return message


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_guardrail_serves_what_the_proxy_serves(proxy, case):
    served, verdict = proxy(case)
    mine = answer(case)
    verdicts = ToolgateGuardrail("hermes").judge(mine, TOOLS, "Qwen/Qwen3-8B")
    assert {k: verdicts[0][k] for k in ("decision", "label", "gate")} == verdict
    theirs = served["choices"][0]
    ours = mine["choices"][0]
    assert ours["finish_reason"] == theirs["finish_reason"]
    # The guardrail writes back removed keys as None; the proxy removes them.
    ours_message = {k: v for k, v in ours["message"].items() if v is not None}
    theirs_message = {k: v for k, v in theirs["message"].items() if v is not None}
    assert without_ids(ours_message) == without_ids(theirs_message)


@pytest.mark.parametrize("name", list(UNCHECKED))
def test_what_the_proxy_cannot_check_the_guardrail_refuses(proxy, name):
    status, body = proxy(UNCHECKED[name])
    assert status == 502
    why = body["error"]["message"].split("could not be checked: ", 1)[1]
    with pytest.raises(ToolgateError, match="the answer cannot be checked: ") as e:
        ToolgateGuardrail("hermes").judge(copy.deepcopy(UNCHECKED[name]), TOOLS, "Qwen/Qwen3-8B")
    assert why in str(e.value)
