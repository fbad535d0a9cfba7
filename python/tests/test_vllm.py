"""The vLLM plugin against a stand-in of vLLM's tool-parser interface
(python/tests/standins/vllm: vLLM at commit 00cd9d7), on every bundled
transcript: batch and streaming, fail closed."""

from __future__ import annotations

import json
import logging
import random
import re
import sys
from pathlib import Path

import pytest

STANDIN = Path(__file__).parent / "standins" / "vllm"


@pytest.fixture(scope="module")
def vllm():
    if "vllm" in sys.modules and not hasattr(sys.modules["vllm"], "__version__"):
        pytest.skip("another vllm is imported")
    sys.path.insert(0, str(STANDIN))
    try:
        import vllm as standin

        assert standin.__version__.endswith("standin.00cd9d7"), "not the stand-in"
        from toolgate.integrations import vllm as plugin
        from vllm.tool_parsers import ToolParserManager

        ToolParserManager.import_tool_parser(plugin.plugin_path())
        yield ToolParserManager
    finally:
        sys.path.remove(str(STANDIN))


class Tokenizer:
    eos_token_id = 2


def request_for(obj, model=None):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(
        model=model, messages=[{"role": "user", "content": "x"}], tools=obj.get("tools")
    )


def stream(cls, output, request, rng):
    """vLLM's streaming loop: one call per delta; the last delta's token ids
    end with EOS and go through vLLM's end-of-choice step. Returns the
    content sent and the tool calls assembled."""
    from vllm.entrypoints.openai.chat_completion.serving import end_of_choice

    parser = cls(Tokenizer())
    cuts = sorted(rng.sample(range(1, len(output)), min(len(output) - 1, 9))) if len(output) > 1 else []
    bounds = [0, *cuts, len(output)]
    deltas = [output[a:b] for a, b in zip(bounds, bounds[1:])] or [""]
    previous, prev_ids, content, calls = "", [], [], {}
    for i, delta in enumerate(deltas):
        last = i == len(deltas) - 1
        ids = [100 + i] + ([Tokenizer.eos_token_id] if last else [])
        msg = parser.extract_tool_calls_streaming(
            previous, previous + delta, delta, prev_ids, prev_ids + ids, ids, request
        )
        previous, prev_ids = previous + delta, prev_ids + ids
        if last:
            msg, _ = end_of_choice(parser, msg, "stop", False)
        if msg is None:
            continue
        if msg.content:
            content.append(msg.content)
        for tc in msg.tool_calls:
            slot = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            slot["name"] += tc.function.name or ""
            slot["arguments"] += tc.function.arguments or ""
    return "".join(content), [calls[i] for i in sorted(calls)]


def test_the_parsers_are_registered(vllm):
    import toolgate

    names = vllm.list_registered()
    assert "toolgate_auto" in names
    for name in [*toolgate.profiles(), *toolgate.modes()]:
        assert f"toolgate_{name}" in names


@pytest.mark.parametrize("parser", ["toolgate_auto", "toolgate_hermes", "toolgate_default"])
def test_batch_and_stream_agree_and_fail_closed_on_the_corpus(vllm, parser, caplog):
    import toolgate
    from test_cli_agreement import FLAT

    cls = vllm.get_tool_parser(parser)
    profile = parser.removeprefix("toolgate_")
    rng = random.Random(7)
    executed = rejected = 0
    caplog.set_level(logging.INFO, logger="toolgate.vllm")
    for f, obj in FLAT:
        output, model = obj["output"], obj.get("model")
        request = request_for(obj, model)
        expected = toolgate.parse(
            output, obj.get("tools"), profile=profile, model=model if profile == "auto" else None
        )
        got = cls(Tokenizer()).extract_tool_calls(output, request)
        calls = [
            {"name": c.function.name, "arguments": json.loads(c.function.arguments)}
            for c in got.tool_calls
        ]
        if expected.decision == "execute":
            executed += 1
            assert got.tools_called, f
            assert calls == [c.to_dict() for c in expected.calls], f
        else:
            rejected += 1
            # Fail closed: no call at all, the whole output as content.
            assert not got.tools_called and got.tool_calls == [], f
            assert got.content == output, f
        s_content, s_calls = stream(cls, output, request, rng)
        assert s_content == (got.content or ""), f
        assert [
            {"name": c["name"], "arguments": json.loads(c["arguments"])} for c in s_calls
        ] == calls, f
    assert executed > 10 and rejected > 10
    assert "label=" in caplog.text and "gate=" in caplog.text


def test_a_rejected_parallel_set_sends_no_call(vllm):
    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"], "additionalProperties": False}}}
    ]
    # The first call is fine, the second names a tool that is not allowed.
    output = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>\n'
        '<tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call>'
    )
    request = request_for({"tools": tools})
    got = cls(Tokenizer()).extract_tool_calls(output, request)
    assert not got.tools_called and got.tool_calls == [] and got.content == output
    for seed in range(20):
        content, calls = stream(cls, output, request, random.Random(seed))
        assert calls == [] and content == output


def test_a_stream_without_an_end_sign_sends_no_call(vllm):
    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    parser = cls(Tokenizer())
    request = request_for({"tools": tools})
    text = 'ok <tool_call>{"name": "f", "arguments": {}}</tool_call>'
    msg = parser.extract_tool_calls_streaming("", text, text, [], [5], [5], request)
    # The prose is forwarded; the call is held (no EOS yet), never sent half-judged.
    assert msg.content == "ok " and msg.tool_calls == []


def test_a_parser_shared_by_two_choices_judges_each_alone(vllm):
    # vLLM's streaming with n > 1 shares one parser by every choice
    # (`[self.tool_parser(tokenizer)] * num_choices`). Choice 0 writes the
    # head of a call and ends; choice 1 writes the rest of one, then prose.
    # Read as one stream they made a get_weather call no choice made.
    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    request = request_for({"tools": tools})
    steps = [
        ['<tool_call>{"name": "get_weather", ', '"arguments": {"city": "Paris"}}</tool_call>'],
        ["", " and more prose"],
    ]
    shared = cls(Tokenizer())
    previous, ids = ["", ""], [[], []]
    content, calls = ["", ""], [[], []]
    for step, deltas in enumerate(steps):
        for i, delta in enumerate(deltas):
            new = [100 + step] + ([Tokenizer.eos_token_id] if step == 1 else [])
            msg = shared.extract_tool_calls_streaming(
                previous[i], previous[i] + delta, delta, ids[i], ids[i] + new, new, request
            )
            previous[i], ids[i] = previous[i] + delta, ids[i] + new
            if msg is not None:
                content[i] += msg.content or ""
                calls[i] += msg.tool_calls
    # Each choice gets what it alone gets: a truncated call is text; prose is text.
    assert calls == [[], []]
    assert content == ["".join(s[0] for s in steps), "".join(s[1] for s in steps)]
    for i in range(2):
        alone = cls(Tokenizer()).extract_tool_calls(previous[i], request)
        assert not alone.tools_called and alone.content == content[i]


def test_two_choices_with_equal_text_each_get_their_call(vllm):
    # Same text, same state: two choices writing the same call each send it once.
    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    request = request_for({"tools": tools})
    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    shared = cls(Tokenizer())
    got = []
    for i in range(2):
        shared.extract_tool_calls_streaming("", text[:5], text[:5], [], [1], [1], request)
    for i in range(2):
        msg = shared.extract_tool_calls_streaming(text[:5], text, text[5:], [1], [1, 2], [2], request)
        got.append([tc.function.name for tc in msg.tool_calls if tc.function.name])
    assert got == [["f"], ["f"]]


def test_a_previous_text_no_choice_has_releases_no_call(vllm, caplog):
    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    request = request_for({"tools": tools})
    parser = cls(Tokenizer())
    parser.extract_tool_calls_streaming("", "hi ", "hi ", [], [1], [1], request)
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    caplog.set_level(logging.WARNING, logger="toolgate.vllm")
    # Text this parser never read: its deltas pass as content, never as a call.
    msg = parser.extract_tool_calls_streaming("elsewhere ", "elsewhere " + call, call, [1], [1, 2], [2], request)
    assert msg.content == call and msg.tool_calls == []
    assert "matches no stream state" in caplog.text
    msg = parser.extract_tool_calls_streaming("elsewhere " + call, "elsewhere " + call + "!", "!", [1, 2], [1, 2, 2], [2], request)
    assert msg.content == "!" and msg.tool_calls == []


def test_an_end_token_the_parser_is_not_shown_releases_nothing(vllm):
    # Llama 3.1: EOS 128009, but generation_config also ends on 128008
    # (<|eom_id|>), which the parser never sees: the held call stays held.
    class Llama:
        eos_token_id = 128009

    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    request = request_for({"tools": tools})
    parser = cls(Llama())
    deltas = ['I will check. <tool_call>{"name": "f", ', '"arguments": {}}</tool_call>']
    previous, ids, sent = "", [], []
    for i, delta in enumerate(deltas):
        new = [10 + i] + ([128008] if i == len(deltas) - 1 else [])
        sent.append(parser.extract_tool_calls_streaming(
            previous, previous + delta, delta, ids, ids + new, new, request))
        previous, ids = previous + delta, ids + new
    assert sent[0].content == "I will check. " and sent[0].tool_calls == []
    assert sent[1] is None
    # Named in the request's stop_token_ids, the same end is seen and judged.
    request.stop_token_ids = [128008]
    parser = cls(Llama())
    previous, ids = "", []
    for i, delta in enumerate(deltas):
        new = [10 + i] + ([128008] if i == len(deltas) - 1 else [])
        msg = parser.extract_tool_calls_streaming(
            previous, previous + delta, delta, ids, ids + new, new, request)
        previous, ids = previous + delta, ids + new
    assert [tc.function.name for tc in msg.tool_calls if tc.function.name] == ["f"]


def choices_through_vllm(cls, outputs, request, size=7):
    """vLLM's loop for ``n = len(outputs)`` choices sharing one parser,
    round robin, `size` characters per delta, each choice's last delta
    through vLLM's end-of-choice step. Returns per choice the content, the
    calls assembled by index (id, name, arguments) and the finish reason."""
    from vllm.entrypoints.openai.chat_completion.serving import end_of_choice

    shared = cls(Tokenizer())
    n = len(outputs)
    pos, previous = [0] * n, [""] * n
    content, calls, finish, streamed = [""] * n, [{} for _ in outputs], [None] * n, [False] * n
    while any(pos[i] < len(outputs[i]) for i in range(n)):
        for i in range(n):
            if pos[i] >= len(outputs[i]):
                continue
            delta = outputs[i][pos[i]:pos[i] + size]
            pos[i] += len(delta)
            last = pos[i] >= len(outputs[i])
            ids = [5] + ([Tokenizer.eos_token_id] if last else [])
            msg = shared.extract_tool_calls_streaming(
                previous[i], previous[i] + delta, delta, [], ids, ids, request)
            previous[i] += delta
            if last:
                msg, finish[i] = end_of_choice(shared, msg, "stop", streamed[i])
            if msg is None:
                continue
            content[i] += msg.content or ""
            streamed[i] = streamed[i] or bool(msg.tool_calls)
            for tc in msg.tool_calls:
                slot = calls[i].setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = slot["id"] or tc.id
                slot["name"] += (tc.function.name or "") if tc.function else ""
                slot["arguments"] += (tc.function.arguments or "") if tc.function else ""
    return [(content[i], [calls[i][k] for k in sorted(calls[i])], finish[i]) for i in range(n)]


TWO_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
             for n in ("get_weather", "get_time")]


def call_text(name, arguments):
    return f'<tool_call>{{"name": "{name}", "arguments": {json.dumps(arguments)}}}</tool_call>'


def test_vllm_end_of_choice_sends_exactly_the_released_calls(vllm):
    cls = vllm.get_tool_parser("toolgate_hermes")
    request = request_for({"tools": TWO_TOOLS})
    one = "Sure. " + call_text("get_weather", {"city": "Antwerp"})
    [(content, calls, finish)] = choices_through_vllm(cls, [one], request)
    assert content == "Sure. " and finish == "tool_calls"
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("get_weather", {"city": "Antwerp"})]
    assert all(c["id"] for c in calls)
    # Two calls: vLLM used to replace the last delta by the second call's
    # "unstreamed" arguments, so the client got only a cut second call.
    two = (call_text("get_weather", {"city": "Antwerp"}) + "\n"
           + call_text("get_time", {"tz": "Europe/Brussels", "fmt": "24h"}))
    [(content, calls, finish)] = choices_through_vllm(cls, [two], request)
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("get_weather", {"city": "Antwerp"}),
        ("get_time", {"tz": "Europe/Brussels", "fmt": "24h"})]
    assert all(c["id"] for c in calls) and finish == "tool_calls"


def test_n2_a_choice_that_releases_nothing_keeps_its_own_finish_reason(vllm):
    cls = vllm.get_tool_parser("toolgate_hermes")
    request = request_for({"tools": TWO_TOOLS})
    ok = call_text("get_weather", {"city": "Oslo"})
    for second in (call_text("rm_rf", {"path": "/"}), "Just prose, no call."):
        # The executing choice ends first, then the other, and the reverse.
        for outputs in ([ok, second + " " * 80], [ok + " " * 80, second]):
            executed, other = choices_through_vllm(cls, outputs, request)
            assert [c["name"] for c in executed[1]] == ["get_weather"]
            assert executed[2] == "tool_calls"
            assert other[1] == [] and other[2] == "stop", (second, other)
            assert other[0] == outputs[1]


def test_with_ignore_eos_an_eos_is_not_the_end(vllm):
    # Regression (probe 44): with the request's `ignore_eos` vLLM generates
    # on past an EOS; the plugin read the EOS as the end, released the
    # first call and dropped everything after it, a failing call included.
    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "delete_all", "parameters": {
            "type": "object", "properties": {}, "additionalProperties": False}}},
    ]
    request = request_for({"tools": tools})
    request.ignore_eos = True
    request.max_tokens = 4
    first = '<tool_call>{"name": "get_weather", "arguments": {"city": "A"}}</tool_call>'
    second = ' more text <tool_call>{"name": "delete_all", "arguments": {"x": 1}}</tool_call>'
    parser = cls(Tokenizer())
    msg = parser.extract_tool_calls_streaming(
        "", first, first, [], [5, Tokenizer.eos_token_id], [5, Tokenizer.eos_token_id], request)
    # Not the end: the call is held, not released.
    assert msg is None
    msg = parser.extract_tool_calls_streaming(
        first, first + second, second, [5, 2], [5, 2, 6, 7], [6, 7], request)
    # The end (max_tokens): the whole text is judged, and rejected.
    assert msg.tool_calls == [] and msg.content == first + second
    batch = cls(Tokenizer()).extract_tool_calls(first + second, request)
    assert not batch.tools_called and batch.content == first + second


def test_vllm_00cd9d7_builds_the_parser_with_the_tools_and_gets_every_call(vllm):
    # Regression (probe 44): current vLLM builds a legacy tool parser as
    # `tool_parser_cls(tokenizer, tools)`; the plugin took the tokenizer
    # alone, so every chat request failed with a TypeError.
    from vllm.parser.abstract_parser import make_parser

    cls = vllm.get_tool_parser("toolgate_hermes")
    request = request_for({"tools": TWO_TOOLS})
    two = ("Sure. " + call_text("get_weather", {"city": "Antwerp"}) + "\n"
           + call_text("get_time", {"tz": "Europe/Brussels"}))
    parser = make_parser(cls)(Tokenizer(), request.tools)
    _, content, calls = parser.parse(two, request, enable_auto_tools=True)
    assert content == "Sure. "
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("get_weather", {"city": "Antwerp"}), ("get_time", {"tz": "Europe/Brussels"})]
    # Streamed, the final delta gets the last call's "unstreamed" arguments
    # appended (`finalize_generation`): nothing is left to add, every call
    # arrives whole.
    parser = make_parser(cls)(Tokenizer(), request.tools)
    pieces = [two[i:i + 7] for i in range(0, len(two), 7)]
    got, text = {}, ""
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        msg = parser.parse_delta(piece, [5] + ([Tokenizer.eos_token_id] if last else []),
                                 request, finished=last)
        if msg is None:
            continue
        text += msg.content or ""
        for tc in msg.tool_calls:
            slot = got.setdefault(tc.index, {"name": "", "arguments": ""})
            slot["name"] += tc.function.name or ""
            slot["arguments"] += tc.function.arguments or ""
    assert text == "Sure. "
    assert [(c["name"], json.loads(c["arguments"])) for c in got.values()] == [
        ("get_weather", {"city": "Antwerp"}), ("get_time", {"tz": "Europe/Brussels"})]
    assert parser.tool_parser.get_remaining_unstreamed_args() == ""


def test_a_vllm_that_passes_the_tokenizer_alone_still_builds_the_parser(vllm, monkeypatch):
    # vLLM up to d0ac579: `ToolParser.__init__(self, tokenizer)`.
    from toolgate.integrations import vllm as plugin
    from vllm.tool_parsers import ToolParser

    def old_init(self, tokenizer):
        self.prev_tool_call_arr, self.streamed_args_for_tool = [], []
        self.current_tool_id, self.current_tool_name_sent = -1, False
        self.model_tokenizer = tokenizer

    monkeypatch.setattr(ToolParser, "__init__", old_init)
    parser = plugin.build("hermes")(Tokenizer())
    request = request_for({"tools": TWO_TOOLS})
    got = parser.extract_tool_calls(call_text("get_weather", {"city": "Oslo"}), request)
    assert got.tools_called and got.tool_calls[0].function.name == "get_weather"


def forced(tool_choice, tools=None):
    """A request with `tool_choice` as vLLM generates it: its tools are
    vLLM's `ChatCompletionToolsParam`, and the serving layer's
    `adjust_request` has set the JSON the output is constrained to."""
    from vllm.entrypoints.openai.chat_completion.protocol import (
        ChatCompletionNamedFunction,
        ChatCompletionNamedToolChoiceParam,
        ChatCompletionRequest,
        ChatCompletionToolsParam,
        FunctionDefinition,
    )
    from vllm.parser.abstract_parser import make_parser

    tools = tools or {
        "get_weather": {"type": "object", "properties": {"city": {"type": "string"}},
                        "required": ["city"], "additionalProperties": False},
        "get_time": {"type": "object", "properties": {"tz": {"type": "string"}}},
    }
    request = ChatCompletionRequest(
        messages=[{"role": "user", "content": "x"}],
        tools=[ChatCompletionToolsParam(FunctionDefinition(n, parameters=p))
               for n, p in tools.items()],
        tool_choice=tool_choice if isinstance(tool_choice, str) else
        ChatCompletionNamedToolChoiceParam(ChatCompletionNamedFunction(tool_choice[0])))
    cls = vllm_parser("toolgate_hermes")
    return make_parser(cls)(Tokenizer(), request.tools).adjust_request(request)


def vllm_parser(name):
    from vllm.tool_parsers import ToolParserManager

    return ToolParserManager.get_tool_parser(name)


def conforms(output, request):
    """Whether `output` is JSON vLLM's constraint on `request` allows."""
    import jsonschema

    try:
        jsonschema.validate(json.loads(output), request.structured_outputs.json)
    except (ValueError, jsonschema.ValidationError):
        return False
    return True


def parse_forced(output, request):
    from vllm.parser.abstract_parser import make_parser

    parser = make_parser(vllm_parser("toolgate_hermes"))(Tokenizer(), request.tools)
    _, content, calls = parser.parse(output, request, enable_auto_tools=True)
    return content, [(c.name, json.loads(c.arguments)) for c in calls or []]


def stream_forced(output, request, by_length=False):
    """`output` through vLLM's streaming path in 5-character deltas, one
    token each; the last ends with EOS (`by_length`: with the request's
    `max_tokens` reached instead)."""
    from vllm.parser.abstract_parser import make_parser

    parser = make_parser(vllm_parser("toolgate_hermes"))(Tokenizer(), request.tools)
    pieces = [output[i:i + 5] for i in range(0, len(output), 5)]
    if by_length:
        request.max_tokens = len(pieces)
    text, got = "", {}
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        ids = [5] + ([Tokenizer.eos_token_id] if last and not by_length else [])
        msg = parser.parse_delta(piece, ids, request, finished=last)
        if msg is None:
            continue
        text += msg.content or ""
        for tc in msg.tool_calls:
            slot = got.setdefault(tc.index, {"name": "", "arguments": ""})
            slot["name"] += tc.function.name or ""
            slot["arguments"] += tc.function.arguments or ""
    return text, [(c["name"], json.loads(c["arguments"])) for c in got.values()]


def test_required_and_named_tool_choice_go_through_toolgate(vllm):
    # Regression (probe 44): with `supports_required_and_named` left True,
    # vLLM built the calls of a `required` or named tool_choice itself and
    # never called the plugin: a named call cut short by max_tokens went
    # out with cut arguments, a required one for any tool.
    cls = vllm.get_tool_parser("toolgate_hermes")
    assert cls.supports_required_and_named is False
    request = forced(("get_weather",))
    cut = '{"city": "Ant'
    assert parse_forced(cut, request) == (cut, [])
    assert stream_forced(cut, forced(("get_weather",)), by_length=True) == (cut, [])
    request = forced("required")
    unknown = '[{"name": "rm_rf", "parameters": {"path": "/"}}]'
    assert parse_forced(unknown, request) == (unknown, [])


def test_vllm_forces_json_for_required_and_named_tool_choice(vllm):
    # What vLLM's base `adjust_request` constrains the output to (00cd9d7):
    # `required`, a list of {"name", "parameters"} objects; a named tool,
    # its parameters object alone; a named tool without parameters, nothing.
    required = forced("required").structured_outputs.json
    assert required["type"] == "array" and required["minItems"] == 1
    assert [a["properties"]["name"] for a in required["items"]["anyOf"]] == [
        {"type": "string", "enum": ["get_weather"]}, {"type": "string", "enum": ["get_time"]}]
    named = forced(("get_time",)).structured_outputs.json
    assert named == {"type": "object", "properties": {"tz": {"type": "string"}}}
    assert forced(("free",), {"free": None}).structured_outputs is None
    assert forced("auto").structured_outputs is None


def test_a_forced_required_list_is_judged_with_the_json_mode(vllm, caplog):
    # Regression (probe 44): vLLM forces a `required` output to a JSON list,
    # which the hermes profile never reads as a call: no call ever came
    # out. The list is now judged with toolgate's `json` mode, through the
    # allowlist and schema gates, batch and streamed.
    caplog.set_level(logging.INFO, logger="toolgate.vllm")
    two = ('[{"name": "get_weather", "parameters": {"city": "Oslo"}}, '
           '{"name": "get_time", "parameters": {"tz": "UTC"}}]')
    want = [("get_weather", {"city": "Oslo"}), ("get_time", {"tz": "UTC"})]
    assert conforms(two, forced("required"))
    assert parse_forced(two, forced("required")) == (None, want)
    assert stream_forced(two, forced("required")) == ("", want)
    # Arguments the tool's schema refuses: rejected, never executed (the
    # whole output comes back as content).
    bad = '[{"name": "get_weather", "parameters": {"city": "Oslo", "days": 3}}]'
    assert not conforms(bad, forced("required"))
    assert parse_forced(bad, forced("required")) == (bad, [])
    assert stream_forced(bad, forced("required")) == (bad, [])
    assert "label=hallucinated_param gate=schema" in caplog.text
    assert "profile=json" in caplog.text
    # Only the forced JSON is read: the profile's syntax is no call here.
    hermes = call_text("get_weather", {"city": "Oslo"})
    assert parse_forced(hermes, forced("required")) == (hermes, [])


def test_a_forced_named_tool_object_is_judged_as_that_tool_s_call(vllm, caplog):
    # Regression (probe 44): vLLM forces a named tool's output to its
    # arguments object alone, which no profile reads as a call. It is now
    # judged as {"name": <the named tool>, "arguments": <the output>} with
    # toolgate's `json` mode, batch and streamed.
    caplog.set_level(logging.INFO, logger="toolgate.vllm")
    ok = '{"city": "Oslo"}'
    assert conforms(ok, forced(("get_weather",)))
    assert parse_forced(ok, forced(("get_weather",))) == (None, [("get_weather", {"city": "Oslo"})])
    assert stream_forced(ok, forced(("get_weather",))) == ("", [("get_weather", {"city": "Oslo"})])
    bad = '{"city": 3}'
    assert not conforms(bad, forced(("get_weather",)))
    assert parse_forced(bad, forced(("get_weather",))) == (bad, [])
    assert stream_forced(bad, forced(("get_weather",))) == (bad, [])
    assert "label=type_coercion gate=schema" in caplog.text
    caplog.clear()
    # Cut short by max_tokens: truncation, no call.
    assert stream_forced('{"city": "Ant', forced(("get_weather",)), by_length=True) == (
        '{"city": "Ant', [])
    assert "label=truncation" in caplog.text
    # Not one JSON object: refused, and text after an object cannot rename
    # the call or replace its arguments.
    for other in ('[{"city": "Oslo"}]', "null", '"Oslo"', '{"city": "Oslo"} and more',
                  '{"city": "Oslo"}, "name": "get_time", "arguments": {}',
                  '{"city": "Oslo"}, "id": "x"'):
        assert parse_forced(other, forced(("get_weather",))) == (other, []), other
        assert stream_forced(other, forced(("get_weather",))) == (other, []), other
    # A named tool without parameters is not constrained by vLLM: its
    # output is judged with the profile, as for `auto`.
    free = call_text("free", {})
    assert parse_forced(free, forced(("free",), {"free": None})) == (None, [("free", {})])


def test_a_reason_quoting_the_models_text_is_logged_without_its_escapes(vllm, caplog):
    # Regression: the reason quotes the tool name the model made up; read
    # back from the native JSON it held a raw ESC and newline, and the
    # plugin logged it as it was: an ANSI sequence on vLLM's terminal and
    # a forged log line.
    cls = vllm.get_tool_parser("toolgate_hermes")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    evil = "x\x1b[2J\nINFO toolgate: execute label=pass\u202e"
    output = '<tool_call>{"name": %s, "arguments": {}}</tool_call>' % json.dumps(evil)
    with caplog.at_level(logging.INFO, logger="toolgate.vllm"):
        got = cls(Tokenizer()).extract_tool_calls(output, request_for({"tools": tools}))
    assert not got.tools_called
    [record] = [r for r in caplog.records if r.name == "toolgate.vllm"]
    message = record.getMessage()
    assert "reject label=wrong_tool gate=allowlist" in message
    assert "\x1b" not in message and "\n" not in message and "\u202e" not in message
    assert "x\\x1b[2J\\nINFO toolgate: execute label=pass\\u{202e}" in message


class CountingTokenizer(Tokenizer):
    """A tokenizer whose tokens are harmony's special tokens and single
    characters (vLLM's `encode(text, add_special_tokens=...)`)."""

    def encode(self, text, add_special_tokens=True):
        import re

        return [7] * len(re.findall(r"<\|[a-z_]+\|>|.", text, re.S))


class FailingTokenizer(Tokenizer):
    def encode(self, text, add_special_tokens=True):
        raise RuntimeError("no vocabulary")


WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
# A harmony call without its `<|call|>`: vLLM strips that stop token, so a
# complete call looks the same as one `max_tokens` cut right there.
HARMONY_CALL = ('<|channel|>commentary to=functions.get_weather <|constrain|>json'
                '<|message|>{"city": "Oslo"}')


def test_a_stop_token_call_cut_at_max_tokens_is_not_served_as_a_call(vllm, caplog):
    # Regression: vLLM gives `extract_tool_calls` no finish reason, and the
    # missing `<|call|>` was excused even when `max_tokens` had cut the
    # output exactly there: the call executed. The tokenizer's count of
    # the output reaching the limit now judges it as `length`.
    from vllm.parser.abstract_parser import make_parser

    caplog.set_level(logging.INFO, logger="toolgate.vllm")
    cls = vllm.get_tool_parser("toolgate_harmony")
    tokenizer = CountingTokenizer()
    n = len(tokenizer.encode(HARMONY_CALL))
    for field in ("max_tokens", "max_completion_tokens"):
        request = request_for({"tools": WEATHER})
        setattr(request, field, n)
        got = cls(tokenizer).extract_tool_calls(HARMONY_CALL, request)
        assert not got.tools_called and got.tool_calls == [], field
        assert got.content == HARMONY_CALL, field
        assert "reject label=truncation gate=parse" in caplog.text, field
        caplog.clear()
        # Through vLLM's serving layer: content, no call.
        parser = make_parser(cls)(tokenizer, request.tools)
        assert parser.parse(HARMONY_CALL, request, enable_auto_tools=True)[1:] == (
            HARMONY_CALL, None), field
        # One token under the limit: the output ended on the stripped stop
        # token (the limit's last token), the call is served.
        setattr(request, field, n + 1)
        got = cls(tokenizer).extract_tool_calls(HARMONY_CALL, request)
        assert got.tools_called, field
        assert [(c.function.name, json.loads(c.function.arguments)) for c in got.tool_calls] == [
            ("get_weather", {"city": "Oslo"})], field
        assert "execute label=pass" in caplog.text, field
        caplog.clear()
    # A call whose closer is there is complete at the limit too.
    closed = HARMONY_CALL + "<|call|>"
    request = request_for({"tools": WEATHER})
    request.max_tokens = len(tokenizer.encode(closed))
    assert cls(tokenizer).extract_tool_calls(closed, request).tools_called
    # Streamed, the token ids say the same: max_tokens reached is `length`.
    request.max_tokens = n
    ids = [7] * n
    msg = cls(tokenizer).extract_tool_calls_streaming(
        "", HARMONY_CALL, HARMONY_CALL, [], ids, ids, request)
    assert msg.tool_calls == [] and msg.content == HARMONY_CALL


def test_without_a_working_tokenizer_a_call_missing_its_stop_token_is_refused(vllm, caplog):
    # The conservative reading: a request with a limit whose output cannot
    # be counted (no tokenizer, no `encode`, `encode` failing) is judged as
    # cut by it, logged; only a call missing its stop-token closer is
    # refused by that, a closed call is still served.
    caplog.set_level(logging.INFO, logger="toolgate.vllm")
    cls = vllm.get_tool_parser("toolgate_harmony")
    request = request_for({"tools": WEATHER})
    request.max_tokens = 1000
    for tokenizer, error in ((None, "AttributeError"), (Tokenizer(), "AttributeError"),
                             (FailingTokenizer(), "RuntimeError: no vocabulary")):
        got = cls(tokenizer).extract_tool_calls(HARMONY_CALL, request)
        assert not got.tools_called and got.content == HARMONY_CALL, error
        assert "reject label=truncation gate=parse" in caplog.text, error
        assert f"the tokenizer could not count the output ({error}" in caplog.text, error
        caplog.clear()
        assert cls(tokenizer).extract_tool_calls(HARMONY_CALL + "<|call|>", request).tools_called
    # No limit set: nothing to count (and nothing seen: the context length
    # is not given to the parser), the call is served.
    request.max_tokens = None
    assert cls(None).extract_tool_calls(HARMONY_CALL, request).tools_called


def test_vllm_s_harmony_path_without_text_is_refused_with_a_toolgate_error(vllm):
    # vLLM serves gpt-oss through its harmony path, which calls the tool
    # parser as `extract_tool_calls("", request=request, token_ids=token_ids)`
    # (serving_chat.py, `use_harmony`): a TypeError before. Judging "" would
    # send neither a call nor the answer; the call is refused, by name.
    from toolgate import ToolgateError

    cls = vllm.get_tool_parser("toolgate_harmony")
    request = request_for({"tools": WEATHER})
    with pytest.raises(ToolgateError, match=r"harmony path \(gpt-oss\) gives the tool parser "
                                            r"token ids without text"):
        cls(CountingTokenizer()).extract_tool_calls("", request=request, token_ids=[200005, 7])
    # Text given beside ids is judged as ever.
    got = cls(CountingTokenizer()).extract_tool_calls(
        HARMONY_CALL + "<|call|>", request=request, token_ids=[7])
    assert got.tools_called


class GptOssTokenizer(CountingTokenizer):
    """gpt-oss's tokenizer as vLLM hands it to a tool parser: harmony's
    structural tokens are added special tokens (o200k_harmony's ids) and
    its chat template writes them."""

    eos_token_id = 200002
    ADDED = {"<|return|>": 200002, "<|constrain|>": 200003, "<|channel|>": 200005,
             "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008,
             "<|call|>": 200012}
    chat_template = ("{{- '<|start|>assistant<|channel|>commentary to=functions.' "
                     "+ tool_call.name + '<|message|>' + tool_call.arguments + '<|call|>' }}")

    def get_added_vocab(self):
        return dict(self.ADDED)

    def get_vocab(self):
        return {"a": 64, **self.ADDED}


class VocabOnly(Tokenizer):
    """A harmony vocabulary read through `get_vocab` alone."""

    def get_vocab(self):
        return dict(GptOssTokenizer.ADDED)


class TemplateOnly(Tokenizer):
    """A tokenizer whose vocabulary cannot be read; its template writes harmony."""

    chat_template = {"default": GptOssTokenizer.chat_template}

    def get_added_vocab(self):
        raise NotImplementedError

    get_vocab = get_added_vocab


class QwenTokenizer(CountingTokenizer):
    """Another model's tokenizer: a vocabulary and a template, no harmony."""

    eos_token_id = 151645
    chat_template = "{{- '<tool_call>' + tool_call | tojson + '</tool_call>' }}"

    def get_added_vocab(self):
        return {"<|im_start|>": 151644, "<|im_end|>": 151645, "<tool_call>": 151657,
                "</tool_call>": 151658, "<|start|>": 1, "<|message|>": 2}

    get_vocab = get_added_vocab


@pytest.mark.parametrize("parser", ["toolgate_auto", "toolgate_harmony", "toolgate_hermes"])
def test_the_plugin_refuses_to_be_built_for_a_harmony_model(vllm, parser):
    # Regression (fail open): vLLM serves gpt-oss through its harmony path,
    # which builds a stream's tool calls from harmony's own parser and never
    # calls `extract_tool_calls_streaming` (serving_chat.py's `use_harmony`
    # branch; `HarmonyParser.parse_delta` now). The plugin was built and
    # never asked: the calls went out unjudged while the user believed
    # them gated. It now refuses to be built for a harmony tokenizer, by
    # name, pointing at the proxy.
    from toolgate import ToolgateError
    from vllm.parser.abstract_parser import make_parser

    cls = vllm.get_tool_parser(parser)
    request = request_for({"tools": WEATHER})
    for tokenizer, why in ((GptOssTokenizer(), "its tokenizer has harmony's"),
                           (VocabOnly(), "its tokenizer has harmony's"),
                           (TemplateOnly(), "its chat template writes harmony's")):
        name = type(tokenizer).__name__
        with pytest.raises(ToolgateError, match=r"built for a harmony model \(gpt-oss: "
                                                + re.escape(why)) as e:
            cls(tokenizer)
        assert "run `toolgate proxy` in front of vLLM instead" in str(e.value), name
        # As vLLM builds it: the tokenizer alone (up to d0ac579), with the
        # tools (00cd9d76), inside the serving layer's parser.
        with pytest.raises(ToolgateError, match="built for a harmony model"):
            cls(tokenizer, request.tools)
        with pytest.raises(ToolgateError, match="built for a harmony model"):
            make_parser(cls)(tokenizer, request.tools)
        # vLLM 00cd9d76 picks `HarmonyParser` for gpt-oss, which builds the
        # tool parser first: toolgate's reason comes before vLLM's own.
        with pytest.raises(ToolgateError, match="built for a harmony model"):
            make_parser(cls, is_harmony=True)(tokenizer, request.tools)


def test_the_plugin_is_built_and_judges_for_a_model_that_is_not_harmony(vllm):
    # The other side: a vocabulary without harmony's tokens (some of them
    # alone are not harmony), a template without `<|call|>`, a tokenizer
    # with nothing to read (None, no vocabulary, one that fails): built,
    # and the calls are judged as before.
    cls = vllm.get_tool_parser("toolgate_hermes")
    request = request_for({"tools": WEATHER})
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    for tokenizer in (QwenTokenizer(), Tokenizer(), CountingTokenizer(),
                      None, FailingTokenizer()):
        got = cls(tokenizer, request.tools).extract_tool_calls(call, request)
        assert [(c.function.name, json.loads(c.function.arguments))
                for c in got.tool_calls] == [("get_weather", {"city": "Oslo"})], tokenizer
        assert not cls(tokenizer).extract_tool_calls(
            call.replace("get_weather", "rm_rf"), request).tools_called
    # vLLM's harmony parser refuses toolgate's parser itself for a gpt-oss
    # model whose tokenizer toolgate cannot read (its own ValueError).
    with pytest.raises(ValueError, match="Harmony requires GptOssToolParser, got "
                                         "ToolgateHermesToolParser"):
        from vllm.parser.abstract_parser import make_parser

        make_parser(cls, is_harmony=True)(Tokenizer(), request.tools)


def test_the_tokenizer_is_read_once_per_tokenizer(vllm):
    # vLLM builds a parser per request with the server's one tokenizer;
    # `get_vocab` builds the whole vocabulary, so it is read once.
    class Counting(QwenTokenizer):
        reads = 0

        def get_vocab(self):
            Counting.reads += 1
            return super().get_vocab()

    cls = vllm.get_tool_parser("toolgate_hermes")
    tokenizer = Counting()
    for _ in range(3):
        cls(tokenizer)
    assert Counting.reads == 1
    cls(Counting())
    assert Counting.reads == 2
