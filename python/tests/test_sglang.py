"""The SGLang detector against a stand-in of SGLang's function-call parser
(python/tests/standins/sglang: SGLang at commit 00828e5), on every bundled
transcript: one-shot and streaming, fail closed."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

STANDIN = Path(__file__).parent / "standins" / "sglang"


@pytest.fixture(scope="module")
def sglang():
    sys.path.insert(0, str(STANDIN))
    try:
        import sglang as standin

        assert standin.__version__.endswith("standin.00828e5"), "not the stand-in"
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
        from toolgate.integrations import sglang as integration

        yield FunctionCallParser, integration
    finally:
        sys.path.remove(str(STANDIN))


def tools_of(obj):
    from sglang.srt.entrypoints.openai.protocol import Function, Tool

    out = []
    for t in obj.get("tools") or []:
        f = t.get("function", t)
        out.append(Tool(function=Function(name=f.get("name"), description=f.get("description"),
                                          parameters=f.get("parameters"))))
    return out


@pytest.mark.parametrize("name", ["toolgate_auto", "toolgate_hermes", "toolgate_default"])
def test_one_shot_and_stream_agree_and_fail_closed(sglang, name):
    import toolgate
    from test_cli_agreement import FLAT

    FunctionCallParser, integration = sglang
    rng = random.Random(11)
    executed = rejected = 0
    profile = name.removeprefix("toolgate_")
    for f, obj in FLAT:
        tools = tools_of(obj)
        if not tools:
            continue
        integration.install(model=obj.get("model"))
        output = obj["output"]
        expected = toolgate.parse(output, obj.get("tools"), profile=profile,
                                  model=obj.get("model") if profile == "auto" else None)
        text, calls = FunctionCallParser(tools, name).parse_non_stream(output)
        got = [{"name": c.name, "arguments": json.loads(c.parameters)} for c in calls]
        if expected.decision == "execute":
            executed += 1
            assert got == [c.to_dict() for c in expected.calls], f
        else:
            rejected += 1
            assert calls == [] and text == output, f
        # Streaming: deltas, then SGLang's end of stream.
        parser = FunctionCallParser(tools, name)
        cuts = sorted(rng.sample(range(1, len(output)), min(len(output) - 1, 9))) if len(output) > 1 else []
        bounds = [0, *cuts, len(output)]
        shown, streamed = [], []
        for a, b in zip(bounds, bounds[1:]):
            t, c = parser.parse_stream_chunk(output[a:b])
            shown.append(t)
            streamed += c
        t, c = parser.parse_stream_end()
        shown.append(t)
        streamed += c
        assert [{"name": x.name, "arguments": json.loads(x.parameters)} for x in streamed] == got, f
        assert "".join(shown) == text, f
    assert executed > 10 and rejected > 10


def test_install_registers_every_name(sglang):
    import toolgate

    FunctionCallParser, integration = sglang
    names = integration.install()
    assert "toolgate_auto" in FunctionCallParser.ToolCallParserEnum
    for n in toolgate.modes():
        assert f"toolgate_{n}" in names


def test_a_tool_list_entry_that_is_not_a_tool_is_a_toolgate_error(sglang):
    from toolgate import ToolgateError

    FunctionCallParser, integration = sglang
    integration.install()
    tools = tools_of({"tools": [{"type": "function", "function": {"name": "f"}}]})
    detector = FunctionCallParser(tools, "toolgate_hermes").detector
    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    with pytest.raises(ToolgateError, match=r"tools\[0\] is a str \('x'\), not a tool definition"):
        detector.detect_and_parse(text, ["x"])
    with pytest.raises(ToolgateError, match=r"tools\[1\] is a int"):
        detector.detect_and_parse(text, [*tools, 5])


def test_a_reason_quoting_the_models_text_is_logged_without_its_escapes(sglang, caplog):
    # Regression: the raw reason (an ESC, a newline from the model's tool
    # name) went into SGLang's log as it was.
    import logging

    FunctionCallParser, integration = sglang
    integration.install()
    from sglang.srt.entrypoints.openai.protocol import Function, Tool

    tools = [Tool(function=Function(name="get_weather", parameters={"type": "object"}))]
    output = '<tool_call>{"name": "x\\u001b[31m\\nforged", "arguments": {}}</tool_call>'
    with caplog.at_level(logging.INFO, logger="toolgate.sglang"):
        text, calls = FunctionCallParser(tools, "toolgate_hermes").parse_non_stream(output)
    assert calls == [] and text == output
    [message] = [r.getMessage() for r in caplog.records if r.name == "toolgate.sglang"]
    assert "reject label=wrong_tool gate=allowlist" in message
    assert "\x1b" not in message and "\n" not in message
    assert "x\\x1b[31m\\nforged" in message


def test_a_detector_is_given_no_finish_reason_so_a_stripped_stop_token_is_excused(sglang):
    # The documented limit (module docstring): SGLang hands a detector the
    # text and the tools, never the finish reason, `max_tokens` or a
    # tokenizer, so a harmony call missing its `<|call|>` (a stop token)
    # cannot be told from one cut there and is excused; a payload left
    # open is still `truncation`.
    import inspect

    import toolgate

    FunctionCallParser, integration = sglang
    integration.install()
    assert list(inspect.signature(FunctionCallParser.parse_non_stream).parameters) == [
        "self", "full_text"]
    tools = tools_of({"tools": [{"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object"}}}]})
    whole = ('<|channel|>commentary to=functions.get_weather <|constrain|>json'
             '<|message|>{"city": "Oslo"}')
    _, calls = FunctionCallParser(tools, "toolgate_harmony").parse_non_stream(whole)
    assert [(c.name, json.loads(c.parameters)) for c in calls] == [
        ("get_weather", {"city": "Oslo"})]
    cut = whole[:-3]
    text, calls = FunctionCallParser(tools, "toolgate_harmony").parse_non_stream(cut)
    assert calls == [] and text == cut
    assert toolgate.parse(cut, [t.model_dump() for t in tools], profile="harmony").label == (
        "truncation")
