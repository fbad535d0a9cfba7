"""End-to-end checks of `toolgate proxy --mode enforce` with the official
OpenAI Python client, streaming and not.

Usage: python scenarios.py BASE_URL

The proxy must be in front of `toolgate mock-upstream tests/py/upstream`
with `--profile hermes --retries 2`. The mock answers by the last user
message (the scenario name). Exits non-zero with a message on the first
failed check; prints one line per passed scenario.
"""

import json
import sys

from openai import OpenAI

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def ask(client, scenario, stream):
    """Returns (headers, content, tool_calls as dicts, finish_reason)."""
    raw = client.chat.completions.with_raw_response.create(
        model="qwen3-8b",
        messages=[
            {"role": "system", "content": "You can call tools."},
            {"role": "user", "content": scenario},
        ],
        tools=TOOLS,
        stream=stream,
    )
    headers = raw.headers
    parsed = raw.parse()
    if not stream:
        choice = parsed.choices[0]
        calls = [
            {"id": c.id, "type": c.type, "name": c.function.name, "arguments": c.function.arguments}
            for c in (choice.message.tool_calls or [])
        ]
        return headers, choice.message.content, calls, choice.finish_reason
    content = ""
    calls = {}
    finish = None
    for chunk in parsed:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        if delta.content:
            content += delta.content
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": None, "type": None, "name": "", "arguments": ""})
            if tc.id:
                slot["id"] = tc.id
            if tc.type:
                slot["type"] = tc.type
            if tc.function and tc.function.name:
                slot["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                slot["arguments"] += tc.function.arguments
        if choice.finish_reason:
            finish = choice.finish_reason
    return headers, content or None, [calls[i] for i in sorted(calls)], finish


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def expect_weather_call(name, calls, finish):
    check(len(calls) == 1, f"{name}: one tool call, got {calls}")
    call = calls[0]
    check(call["id"] and call["id"].startswith("call_"), f"{name}: a call_ id, got {call['id']}")
    check(call["type"] == "function", f"{name}: type function")
    check(call["name"] == "get_weather", f"{name}: get_weather, got {call['name']}")
    check(json.loads(call["arguments"]) == {"city": "Antwerp"}, f"{name}: exact arguments, got {call['arguments']}")
    check(finish == "tool_calls", f"{name}: finish_reason tool_calls, got {finish}")


def main():
    base = sys.argv[1]
    client = OpenAI(base_url=base, api_key="sk-toolgate-e2e-secret", max_retries=0, timeout=30)
    for stream in (False, True):
        kind = "stream" if stream else "batch"

        h, content, calls, finish = ask(client, "correct", stream)
        expect_weather_call(f"correct/{kind}", calls, finish)
        check(content is None, f"correct/{kind}: no content left, got {content!r}")
        print(f"ok correct/{kind}")

        h, content, calls, finish = ask(client, "prose", stream)
        check(content == "The weather in Antwerp is sunny.", f"prose/{kind}: unchanged, got {content!r}")
        check(calls == [], f"prose/{kind}: no tool calls")
        check(finish == "stop", f"prose/{kind}: finish stop, got {finish}")
        print(f"ok prose/{kind}")

        for scenario, label in (("malformed", "malformed_json"), ("forbidden", "wrong_tool")):
            h, content, calls, finish = ask(client, scenario, stream)
            check(calls == [], f"{scenario}/{kind}: never a tool call, got {calls}")
            check(content and "<tool_call>" in content, f"{scenario}/{kind}: the text comes back")
            check(finish == "stop", f"{scenario}/{kind}: finish stop, got {finish}")
            if not stream:
                check(h.get("x-toolgate-decision") == "reject", f"{scenario}: decision header")
                check(h.get("x-toolgate-label") == label, f"{scenario}: label {h.get('x-toolgate-label')}")
            print(f"ok {scenario}/{kind}")

        h, content, calls, finish = ask(client, "flaky", stream)
        expect_weather_call(f"flaky/{kind}", calls, finish)
        check(h.get("x-toolgate-attempts") == "2", f"flaky/{kind}: re-rolled once, got {h.get('x-toolgate-attempts')}")
        print(f"ok flaky/{kind} (re-rolled)")


if __name__ == "__main__":
    main()
