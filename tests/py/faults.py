"""The proxy's fault model with the official OpenAI Python client.

Usage: python faults.py BASE_URL

The proxy must be `toolgate proxy --mode enforce` WITHOUT --profile (so
`auto`) and a short --timeout, in front of `toolgate mock-upstream
tests/py/upstream --native`; the mock misbehaves on the request header
`x-mock-fault`. Every scenario checks that the client never gets a tool
call it could act on from an answer the proxy could not check or from a
stream that did not end properly, and never part of a rejected set (native
`tool_calls` or the legacy `function_call`). Prints one `ok` line per scenario; exits
non-zero with a message on the first failed check.
"""

import json
import sys
import urllib.request
import urllib.error

import openai
from openai import OpenAI

from scenarios import TOOLS, check


def ask(client, scenario, stream, fault=None):
    """Returns (headers, tool_calls, finish, error) — error is the exception
    the client raised, and tool_calls what it collected before it."""
    headers = {"x-mock-fault": fault} if fault else {}
    calls = []
    finish = None
    try:
        raw = client.chat.completions.with_raw_response.create(
            model="qwen3-8b",
            messages=[{"role": "user", "content": scenario}],
            tools=TOOLS,
            stream=stream,
            extra_headers=headers,
        )
        parsed = raw.parse()
        if not stream:
            choice = parsed.choices[0]
            calls = [c.function.name for c in (choice.message.tool_calls or [])]
            if choice.message.function_call:
                calls.append(choice.message.function_call.name)
            return raw.headers, calls, choice.finish_reason, None
        for chunk in parsed:
            for choice in chunk.choices:
                for tc in choice.delta.tool_calls or []:
                    if tc.function and tc.function.name:
                        calls.append(tc.function.name)
                if choice.finish_reason:
                    finish = choice.finish_reason
        return raw.headers, calls, finish, None
    except Exception as e:  # the client's own error types, or httpx's
        return None, calls, finish, e


def main():
    base = sys.argv[1]
    client = OpenAI(base_url=base, api_key="sk-toolgate-e2e-secret", max_retries=0, timeout=20)

    # Defaults: `auto` chooses hermes for qwen3-8b by name.
    h, calls, finish, err = ask(client, "correct", False)
    check(err is None, f"auto/correct: no error, got {err!r}")
    check(calls == ["get_weather"], f"auto/correct: the Hermes call executes, got {calls}")
    check(h.get("x-toolgate-profile") == "hermes", f"auto: profile header {h.get('x-toolgate-profile')}")
    check("by name" in (h.get("x-toolgate-profile-source") or ""),
          f"auto: source header {h.get('x-toolgate-profile-source')}")
    print("ok auto profile")

    # Answers the proxy cannot check: a 502 (or a broken stream), never a call.
    for fault in ("bad_utf8", "lone_surrogate", "wrong_type", "unknown_call_field"):
        for stream in (False, True):
            h, calls, finish, err = ask(client, "forbidden", stream, fault)
            check(err is not None, f"{fault}/stream={stream}: the client sees an error")
            check(calls == [], f"{fault}/stream={stream}: no call, got {calls}")
            if isinstance(err, openai.APIStatusError):
                check(err.status_code == 502, f"{fault}: 502, got {err.status_code}")
            print(f"ok unchecked {fault}/stream={stream} ({type(err).__name__})")

    # Broken streams after a complete call: an error, never the call.
    for fault in ("reset", "stall", "end_early", "error_event", "not_json"):
        h, calls, finish, err = ask(client, "correct", True, fault)
        check(err is not None, f"{fault}: the client sees an error (got finish {finish})")
        check(calls == [], f"{fault}: no call from an unfinished stream, got {calls}")
        check(finish is None, f"{fault}: no finish_reason, got {finish}")
        print(f"ok broken stream {fault} ({type(err).__name__})")

    # SPEC 4: one failing native call rejects the whole set, streamed or not.
    for stream in (False, True):
        h, calls, finish, err = ask(client, "half_plan", stream)
        check(err is None, f"half_plan/stream={stream}: no error, got {err!r}")
        check(calls == [], f"half_plan/stream={stream}: no part of the set, got {calls}")
        check(finish == "stop", f"half_plan/stream={stream}: finish stop, got {finish}")
        if not stream:
            check(h.get("x-toolgate-decision") == "reject", "half_plan: decision header")
        print(f"ok half a plan/stream={stream}")

    # The legacy function_call is judged; the request's `functions` allowlist it.
    for stream in (False, True):
        h, calls, finish, err = ask(client, "native_forbidden", stream, "legacy")
        check(err is None and calls == [], f"legacy forbidden/stream={stream}: {calls} {err!r}")
        check(finish != "function_call", f"legacy forbidden/stream={stream}: finish {finish}")
        raw = client.chat.completions.with_raw_response.create(
            model="qwen3-8b",
            messages=[{"role": "user", "content": "native_weather"}],
            functions=[TOOLS[0]["function"]],
            stream=stream,
            extra_headers={"x-mock-fault": "legacy"},
        )
        parsed = raw.parse()
        if stream:
            name, finish = "", None
            for chunk in parsed:
                for choice in chunk.choices:
                    if choice.delta.function_call and choice.delta.function_call.name:
                        name += choice.delta.function_call.name
                    finish = choice.finish_reason or finish
        else:
            fc = parsed.choices[0].message.function_call
            name, finish = (fc.name if fc else ""), parsed.choices[0].finish_reason
        check(name == "get_weather", f"legacy allowed/stream={stream}: {name!r}")
        check(finish == "function_call", f"legacy allowed/stream={stream}: finish {finish}")
        print(f"ok legacy function_call/stream={stream}")

    # A body the proxy cannot parse: a 400 that says why. (The client
    # itself refuses to send NaN, so these go out as raw bytes.)
    for name, body, says in (
        ("NaN", b'{"model": "qwen3-8b", "temperature": NaN, "messages": []}', "not valid JSON"),
        ("not json", b"{not json", "not valid JSON"),
        ("stream string", b'{"model": "qwen3-8b", "stream": "true", "messages": []}',
         "must be true or false"),
    ):
        req = urllib.request.Request(base + "/chat/completions", data=body,
                                     headers={"content-type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=20)
            check(False, f"{name}: refused")
        except urllib.error.HTTPError as e:
            check(e.code == 400, f"{name}: 400, got {e.code}")
            check(says in e.read().decode(), f"{name}: the reason")
        print(f"ok unparseable {name}")


if __name__ == "__main__":
    main()
