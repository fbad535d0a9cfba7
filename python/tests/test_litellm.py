"""The LiteLLM guardrail with the real `litellm` package (no network:
responses come from litellm's `mock_response`)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# CI installs litellm (TOOLGATE_REQUIRE_INTEGRATIONS=1): there a failed import fails.
if os.environ.get("TOOLGATE_REQUIRE_INTEGRATIONS"):
    import litellm
else:
    litellm = pytest.importorskip("litellm")

from toolgate.integrations.litellm import ToolgateGuardrail  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": False}}}
]


def respond(content=None, tool_calls=None):
    mock = content
    if tool_calls is not None:
        from litellm.types.utils import ChatCompletionMessageToolCall, Function

        mock = litellm.ModelResponse(choices=[{"message": {
            "role": "assistant", "content": content,
            "tool_calls": [ChatCompletionMessageToolCall(
                id=f"c{i}", type="function", function=Function(name=n, arguments=a))
                for i, (n, a) in enumerate(tool_calls)]},
            "finish_reason": "tool_calls"}])
        return mock
    return litellm.completion(
        model="openai/Qwen/Qwen3-8B", messages=[{"role": "user", "content": "weather?"}],
        mock_response=mock,
    )


def hook(response, profile="auto"):
    data = {"model": "Qwen/Qwen3-8B", "tools": TOOLS}
    return asyncio.run(ToolgateGuardrail(profile).async_post_call_success_hook(data, None, response))


def test_raw_text_calls_become_tool_calls():
    r = hook(respond('Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'))
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls"
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == [
        ("get_weather", {"city": "Antwerp"})]
    assert msg.content == "Let me check. "
    assert r._hidden_params["toolgate"][0]["decision"] == "execute"


def test_a_rejected_raw_call_stays_text():
    text = '<tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call>'
    r = hook(respond(text))
    assert not r.choices[0].message.tool_calls
    assert r.choices[0].message.content == text
    v = r._hidden_params["toolgate"][0]
    assert (v["decision"], v["gate"], v["label"]) == ("reject", "allowlist", "wrong_tool")


def test_native_tool_calls_are_judged_as_one_set():
    ok = hook(respond(tool_calls=[("get_weather", '{"city": "Antwerp"}')]))
    assert ok.choices[0].message.tool_calls and ok._hidden_params["toolgate"][0]["decision"] == "execute"
    bad = hook(respond(tool_calls=[("get_weather", '{"city": "Antwerp"}'),
                                   ("get_weather", '{"city": 42}')]))
    # One bad call: the whole set is removed, never part of it.
    assert bad.choices[0].message.tool_calls is None
    assert bad.choices[0].finish_reason == "stop"
    assert bad._hidden_params["toolgate"][0]["gate"] == "schema"


def test_judge_on_an_sdk_response():
    r = respond('<tool_call>{"name": "get_weather", "arguments": {"city": "Gent"}}</tool_call>')
    verdicts = ToolgateGuardrail("hermes").judge(r, TOOLS)
    assert verdicts[0]["decision"] == "execute"
    assert r.choices[0].message.tool_calls[0].function.name == "get_weather"
