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


# -- streamed responses (async_post_call_streaming_iterator_hook) ----------

from toolgate import ToolgateError  # noqa: E402

DATA = {"model": "Qwen/Qwen3-8B", "tools": TOOLS}


def chunk(content=None, tool_calls=None, finish=None, index=0, **delta):
    d = dict(delta)
    if content is not None:
        d["content"] = content
    if tool_calls is not None:
        d["tool_calls"] = tool_calls
    return litellm.ModelResponseStream(
        id="chatcmpl-1", model="Qwen/Qwen3-8B",
        choices=[{"index": index, "delta": d, "finish_reason": finish}])


def run_stream(chunks, data=DATA, profile="auto"):
    """What the client gets: the chunks the hook yields (or the exception
    it raised, with the chunks yielded before it)."""
    async def source():
        for c in chunks:
            yield c

    async def collect():
        out = []
        try:
            async for item in ToolgateGuardrail(profile).async_post_call_streaming_iterator_hook(
                    None, source(), data):
                out.append(item)
        except ToolgateError as e:
            return out, e
        return out, None

    return asyncio.run(collect())


def streamed_calls(out):
    return [(c.function.name, c.function.arguments) for ch in out for choice in ch.choices
            for c in (choice.delta.tool_calls or [])]


def streamed_text(out):
    return "".join(c.choices[0].delta.content or "" for c in out if c.choices)


def finishes(out):
    return [c.choices[0].finish_reason for c in out if c.choices and c.choices[0].finish_reason]


def test_a_streamed_unallowlisted_native_call_never_reaches_the_client():
    out, error = run_stream([
        chunk("Deleting. ", role="assistant"),
        chunk(tool_calls=[{"index": 0, "id": "c", "type": "function",
                           "function": {"name": "rm_rf", "arguments": ""}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"path": "/"}'}}]),
        chunk(finish="tool_calls"),
    ])
    assert error is None
    assert streamed_calls(out) == []
    assert streamed_text(out) == "Deleting. "
    assert finishes(out) == ["stop"]
    verdict = out[-1]._hidden_params["toolgate"][0]
    assert (verdict["decision"], verdict["gate"], verdict["label"]) == (
        "reject", "allowlist", "wrong_tool")


def test_a_streamed_raw_call_is_held_then_sent_as_tool_calls():
    text = 'Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'
    pieces = [text[i:i + 7] for i in range(0, len(text), 7)]
    out, error = run_stream([chunk(p) for p in pieces] + [chunk(finish="stop")])
    assert error is None
    # Prose went out as it came; the call markup never did.
    assert streamed_text(out) == "Let me check. "
    assert all("<tool_call>" not in (c.choices[0].delta.content or "") for c in out)
    assert [(n, json.loads(a)) for n, a in streamed_calls(out)] == [("get_weather", {"city": "Antwerp"})]
    assert finishes(out) == ["tool_calls"]
    # The calls come only in the last chunk.
    assert out[-1].choices[0].delta.tool_calls


def test_a_streamed_rejected_raw_call_is_shown_as_text():
    text = '<tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call>'
    out, error = run_stream([chunk(text[:20]), chunk(text[20:]), chunk(finish="stop")])
    assert error is None and streamed_calls(out) == []
    assert streamed_text(out) == text and finishes(out) == ["stop"]


def test_streamed_native_deltas_are_judged_whole():
    out, error = run_stream([
        chunk(tool_calls=[{"index": 0, "id": "c0", "type": "function",
                           "function": {"name": "get_weather", "arguments": '{"ci'}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": 'ty": "Gent"}'}}]),
        chunk(finish="tool_calls"),
    ])
    assert error is None
    assert streamed_calls(out) == [("get_weather", '{"city": "Gent"}')]
    assert finishes(out) == ["tool_calls"]
    # One bad call of two: none goes.
    out, _ = run_stream([
        chunk(tool_calls=[{"index": 0, "id": "c0", "type": "function",
                           "function": {"name": "get_weather", "arguments": '{"city": "Gent"}'}}]),
        chunk(tool_calls=[{"index": 1, "id": "c1", "type": "function",
                           "function": {"name": "get_weather", "arguments": '{"city": 42}'}}]),
        chunk(finish="tool_calls"),
    ])
    assert streamed_calls(out) == [] and finishes(out) == ["stop"]


def test_a_stream_that_ends_without_a_finish_reason_is_judged_as_the_proxy_judges_it():
    # The proxy judges such a choice at [DONE] (litellm ends a stream the
    # same way with or without one, adding a finish_reason itself).
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'
    out, error = run_stream([chunk("Sure. "), chunk(text)])
    assert error is None and streamed_text(out) == "Sure. "
    assert [(n, json.loads(a)) for n, a in streamed_calls(out)] == [
        ("get_weather", {"city": "Antwerp"})]
    assert finishes(out) == ["tool_calls"]


def test_a_stream_that_fails_releases_nothing():
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'

    async def source():
        yield chunk("Sure. ")
        yield chunk(text)
        raise ConnectionError("upstream reset")

    async def collect():
        out = []
        with pytest.raises(ConnectionError):
            async for item in ToolgateGuardrail().async_post_call_streaming_iterator_hook(
                    None, source(), DATA):
                out.append(item)
        return out

    out = asyncio.run(collect())
    assert streamed_calls(out) == [] and streamed_text(out) == "Sure. "


def test_a_streamed_chunk_keeps_every_field_but_what_is_held():
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices, Usage

    def mk(delta, finish=None, **kw):
        return ModelResponseStream(id="c1", created=1, model="claude", choices=[
            StreamingChoices(index=0, delta=delta, finish_reason=finish)], **kw)

    blocks = [{"type": "thinking", "thinking": "Hm", "signature": "SIG-1"}]
    out, error = run_stream([
        mk(Delta(role="assistant", reasoning_content="Hm", thinking_blocks=blocks),
           system_fingerprint="fp_1"),
        mk(Delta(content="Here.", provider_specific_fields={"citations": ["u"]}, refusal="r")),
        mk(Delta(tool_calls=[{"index": 0, "id": "t1", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city": "Oslo"}'}}])),
        mk(Delta(), finish="tool_calls",
           usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)),
    ])
    assert error is None
    assert out[0].choices[0].delta.thinking_blocks == blocks
    assert out[0].system_fingerprint == "fp_1"
    assert out[1].choices[0].delta.provider_specific_fields == {"citations": ["u"]}
    assert out[1].choices[0].delta.refusal == "r"
    assert streamed_calls(out) == [("get_weather", '{"city": "Oslo"}')]
    assert out[-1].usage.total_tokens == 15
    assert sum(getattr(c, "usage", None) is not None for c in out) == 1


def test_a_real_litellm_stream_is_judged_like_the_response():
    text = 'Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'

    async def go():
        stream = await litellm.acompletion(
            model="openai/Qwen/Qwen3-8B", messages=[{"role": "user", "content": "weather?"}],
            mock_response=text, stream=True)
        return [c async for c in ToolgateGuardrail().async_post_call_streaming_iterator_hook(
            None, stream, DATA)]

    out = asyncio.run(go())
    calls = [(c.function.name, json.loads(c.function.arguments))
             for ch in out for c in (ch.choices[0].delta.tool_calls or [])]
    whole = hook(respond(text))
    assert calls == [(c.function.name, json.loads(c.function.arguments))
                     for c in whole.choices[0].message.tool_calls]
    assert streamed_text(out) == whole.choices[0].message.content
    assert finishes(out)[-1] == whole.choices[0].finish_reason == "tool_calls"


# -- legacy function_call ---------------------------------------------------

def legacy(name, arguments):
    return litellm.ModelResponse(choices=[{"message": {
        "role": "assistant", "content": None,
        "function_call": {"name": name, "arguments": arguments}},
        "finish_reason": "function_call"}])


def test_a_legacy_function_call_is_judged_as_a_call():
    bad = hook(legacy("rm_rf", '{"path": "/"}'))
    assert bad.choices[0].message.function_call is None
    assert bad.choices[0].finish_reason == "stop"
    v = bad._hidden_params["toolgate"][0]
    assert (v["decision"], v["gate"], v["label"]) == ("reject", "allowlist", "wrong_tool")
    ok = hook(legacy("get_weather", '{"city": "Gent"}'))
    assert ok.choices[0].message.function_call.name == "get_weather"
    assert ok.choices[0].finish_reason == "function_call"
    assert ok._hidden_params["toolgate"][0]["decision"] == "execute"
    # The request's legacy `functions` are allowlisted too.
    r = legacy("get_weather", '{"city": "Gent"}')
    asyncio.run(ToolgateGuardrail().async_post_call_success_hook(
        {"model": "m", "functions": [TOOLS[0]["function"]]}, None, r))
    assert r.choices[0].message.function_call is not None


def test_a_legacy_call_and_native_calls_are_one_set():
    r = respond(tool_calls=[("get_weather", '{"city": "Antwerp"}')])
    r.choices[0].message.function_call = litellm.types.utils.FunctionCall(
        name="rm_rf", arguments="{}")
    hook(r)
    assert r.choices[0].message.tool_calls is None and r.choices[0].message.function_call is None


# -- dict responses and content parts ---------------------------------------

def test_dict_responses_are_written_back_as_dicts():
    raw = '<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'
    d = {"choices": [{"message": {"role": "assistant", "content": "Sure. " + raw},
                      "finish_reason": "stop"}]}
    verdicts = ToolgateGuardrail().judge(d, TOOLS, "Qwen/Qwen3-8B")
    msg = d["choices"][0]["message"]
    assert verdicts[0]["decision"] == "execute"
    assert msg["content"] == "Sure. " and d["choices"][0]["finish_reason"] == "tool_calls"
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in msg["tool_calls"]] == [("get_weather", {"city": "Antwerp"})]
    bad = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "x", "type": "function", "function": {"name": "rm", "arguments": "{}"}}]},
        "finish_reason": "tool_calls"}]}
    asyncio.run(ToolgateGuardrail().async_post_call_success_hook(DATA, None, bad))
    assert bad["choices"][0]["message"]["tool_calls"] is None
    assert bad["choices"][0]["finish_reason"] == "stop"


def test_content_parts_are_refused_as_the_proxy_refuses_them():
    # One rule with `toolgate proxy --mode enforce`: content that is not a
    # string cannot be checked (litellm's Message.content is a string).
    raw = '<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'
    for parts in ([{"type": "text", "text": raw}], [{"type": "text"}]):
        r = respond("x")
        r.choices[0].message.content = parts
        with pytest.raises(ToolgateError,
                           match=r"the answer cannot be checked: `content` is not text"):
            hook(r)
        assert not r.choices[0].message.tool_calls


def test_a_raw_call_beside_native_calls_joins_their_set():
    # As the proxy judges it: the text's calls and the native ones are one
    # set, and an unallowlisted raw call rejects the approved native one.
    r = respond(content='<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',
                tool_calls=[("get_weather", '{"city": "Antwerp"}')])
    hook(r)
    assert r.choices[0].message.tool_calls is None
    assert r.choices[0].finish_reason == "stop"
    assert r._hidden_params["toolgate"][0]["decision"] == "reject"


def test_tool_choice_none_changes_nothing_as_in_the_proxy():
    # toolgate proxy keeps the request's whole tool list under
    # `tool_choice: "none"` (vLLM without a tool parser needs "none" to
    # accept tools): the guardrail decides the same way.
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>'
    r = respond(text)
    asyncio.run(ToolgateGuardrail().async_post_call_success_hook(
        dict(DATA, tool_choice="none"), None, r))
    assert r._hidden_params["toolgate"][0]["decision"] == "execute"


# -- streamed calls are assembled as the proxy assembles them -----------------

def test_a_second_name_at_the_same_index_is_part_of_the_name_not_a_rename():
    # Names streamed at one index under one id are one name
    # (`get_weatherrm_rf`), as in `toolgate proxy --mode enforce`: not the
    # first name with the second's arguments.
    out, error = run_stream([
        chunk(tool_calls=[{"index": 0, "id": "a", "type": "function",
                           "function": {"name": "get_weather", "arguments": ""}}], role="assistant"),
        chunk(tool_calls=[{"index": 0, "type": "function",
                           "function": {"name": "rm_rf", "arguments": '{"city": "/"}'}}]),
        chunk(finish="tool_calls"),
    ])
    assert error is None and streamed_calls(out) == [] and finishes(out) == ["stop"]
    v = out[-1]._hidden_params["toolgate"][0]
    assert (v["decision"], v["gate"], v["label"]) == ("reject", "allowlist", "wrong_tool")
    assert "get_weatherrm_rf" in v["reason"]
    # Under another id too, while the first call's arguments are not whole
    # JSON (once they are, a named delta under another id is the next call,
    # below): a rename never runs under the first name.
    out, error = run_stream([
        chunk(tool_calls=[{"index": 0, "id": "a", "type": "function",
                           "function": {"name": "get_weather", "arguments": ""}}], role="assistant"),
        chunk(tool_calls=[{"index": 0, "id": "b", "type": "function",
                           "function": {"name": "rm_rf", "arguments": '{"city": "/"}'}}]),
        chunk(finish="tool_calls"),
    ])
    assert error is None and streamed_calls(out) == [] and finishes(out) == ["stop"]
    v = out[-1]._hidden_params["toolgate"][0]
    assert v["decision"] == "reject" and "rm_rf" in v["reason"]


def test_indexless_calls_are_placed_as_the_proxy_and_the_importer_place_them():
    # Probe s48: Gemini's OpenAI endpoint and older Ollama/LM Studio/
    # llama.cpp servers send each parallel call whole in one delta without
    # ``index``, some with an empty id (LiteLLM's own chunks fill in index
    # 0; a guardrail fed plain deltas must not merge them either). The
    # placement is the proxy's (``_native.CallSlots``).
    from toolgate.integrations.litellm import _Choice

    def whole(name, args):
        return {"id": "", "type": "function", "function": {"name": name, "arguments": args}}

    state = _Choice("auto", TOOLS, None)
    state.add_native_delta(whole("get_weather", '{"city": "Paris"}'))
    state.add_native_delta(whole("get_weather", '{"city": "Rome"}'))
    state.finish = "tool_calls"
    served = state.end()
    assert served["verdict"]["decision"] == "execute", served["verdict"]
    assert [c["function"]["arguments"] for c in served["native_calls"]] == [
        '{"city": "Paris"}', '{"city": "Rome"}']
    # Arguments without a name after a whole call: cannot be placed.
    state = _Choice("auto", TOOLS, None)
    state.add_native_delta(whole("get_weather", '{"city": "Paris"}'))
    with pytest.raises(ToolgateError, match="without `index` adds arguments"):
        state.add_native_delta({"id": "", "function": {"arguments": '{"city": "Rome"}'}})


def test_parallel_calls_streamed_at_one_index_are_two_calls_as_in_the_proxy():
    # Ollama and Gemini's OpenAI shims stream parallel calls each at index 0
    # under its own id: two calls, both executed (they were merged into one
    # malformed `get_weatherget_weather`).
    out, error = run_stream([
        chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city": "Paris"}'}}], role="assistant"),
        chunk(tool_calls=[{"index": 0, "id": "c2", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city": "Rome"}'}}]),
        chunk(finish="tool_calls"),
    ])
    assert error is None
    assert streamed_calls(out) == [
        ("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Rome"}')]
    ids = [c.id for ch in out for choice in ch.choices for c in (choice.delta.tool_calls or [])]
    assert ids == ["c1", "c2"]
    assert finishes(out) == ["tool_calls"]


def _served_by_litellm(events):
    """The chunks `litellm.acompletion(stream=True)` makes of an OpenAI-
    compatible server's stream of `events` (chunk dicts), served on
    loopback: litellm's own ``CustomStreamWrapper`` objects."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Upstream(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for e in events:
                self.wfile.write(f"data: {json.dumps(e)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    async def stream():
        return await litellm.acompletion(
            model="openai/m", api_base=f"http://127.0.0.1:{server.server_address[1]}/v1",
            api_key="x", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS,
            stream=True)
    return server, stream


def test_litellm_filled_in_index_of_whole_indexless_calls_is_not_their_index():
    # Stop 49: Gemini's OpenAI endpoint, LM Studio and llama.cpp servers send
    # each parallel call whole in a delta of its own without ``index`` (some
    # with an empty id); litellm's ``Delta`` fills in ``index`` 0, and the
    # guardrail read two calls as one ``{…}{…}`` (``malformed_json``, the
    # model blamed) where the proxy reading the same bytes executes both.
    # litellm's index is placed as the filler it may be (CallSlots'
    # ``index_filled``). Calls under distinct ids were already two.
    def event(delta, finish=None):
        return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def whole(city, id=""):
        return event({"tool_calls": [{"id": id, "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps({"city": city})}}]})

    def judged(events):
        server, stream = _served_by_litellm(events)
        try:
            async def collect():
                out = []
                async for c in ToolgateGuardrail("hermes").async_post_call_streaming_iterator_hook(
                        None, await stream(), DATA):
                    out.append(c)
                return out
            out = asyncio.run(collect())
        finally:
            server.shutdown()
        v = out[-1]._hidden_params["toolgate"][0]
        return (v["decision"], v["label"]), streamed_calls(out)

    end = event({}, "tool_calls")
    two = [("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Rome"}')]
    assert judged([whole("Paris"), whole("Rome"), end]) == (("execute", "pass"), two)
    assert judged([whole("Paris", "a"), whole("Rome", "b"), end]) == (("execute", "pass"), two)
    # Argument text without a name after a whole call still never passes:
    # it continues that call, which fails to parse (the proxy cuts the
    # stream there), as it does without litellm.
    rest = event({"tool_calls": [{"id": "", "function": {"arguments": '{"city": "Rome"}'}}]})
    assert judged([whole("Paris"), rest, end]) == (("reject", "malformed_json"), [])
    # An index the upstream gave (plain chunks, not litellm's ``Delta``)
    # says which call it is, as in the proxy: the two are one call.
    out, error = run_stream([
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [
            dict(whole(city)["choices"][0]["delta"]["tool_calls"][0], index=0)]}}]}
        for city in ("Paris", "Rome")] + [end])
    assert error is None
    assert [c for ch in out for c in ch["choices"][0]["delta"].get("tool_calls") or []] == []
    assert out[-1]["choices"][0]["finish_reason"] == "stop"


SIGNATURE = {"google": {"thought_signature": "CqMBAdHtim"}}


def test_geminis_thought_signature_goes_out_with_its_call():
    # Gemini's OpenAI-compatible API sends each call's thought signature in
    # `extra_content`; Gemini 3 refuses the next turn without it back. The
    # guardrail relays it as the proxy does, non-streamed and streamed.
    call = {"extra_content": SIGNATURE, "id": "function-call-1", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    answer = {"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
              "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    verdicts = ToolgateGuardrail("hermes").judge(answer, TOOLS)
    assert verdicts[0]["decision"] == "execute"
    assert answer["choices"][0]["message"]["tool_calls"] == [call]
    out, error = run_stream([
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {
            "role": "assistant", "tool_calls": [dict(call, index=0)]}}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {},
                                               "finish_reason": "tool_calls"}]},
    ], profile="hermes")
    assert error is None
    served = [c for ch in out for c in ch["choices"][0]["delta"].get("tool_calls") or []]
    assert [c.get("extra_content") for c in served] == [SIGNATURE]
    assert [c["function"]["name"] for c in served] == ["get_weather"]

    # A call hidden in it is refused, as the proxy refuses it.
    hidden = dict(call, extra_content={"google": {"functionCall": {"name": "rm_rf"}}})
    bad = {"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
           "message": {"role": "assistant", "content": None, "tool_calls": [hidden]}}]}
    with pytest.raises(ToolgateError, match="call-bearing field `functionCall`"):
        hook(bad, profile="hermes")


def test_a_second_legacy_name_is_part_of_the_name_not_a_rename():
    chunks = [
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {
            "role": "assistant", "function_call": {"name": "get_weather", "arguments": ""}}}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {
            "function_call": {"name": "rm_rf", "arguments": '{"city": "/"}'}}}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {},
                                               "finish_reason": "function_call"}]},
    ]
    out, error = run_stream(chunks, data={"model": "m", "functions": [TOOLS[0]["function"]]},
                            profile="hermes")
    assert error is None
    last = out[-1]["choices"][0]
    assert "function_call" not in last["delta"] and last["finish_reason"] == "stop"


def test_a_legacy_name_repeated_in_every_fragment_is_read_once():
    # Stop 49: a legacy ``function_call`` repeating its name in every
    # fragment (as MiniMax through NVIDIA NIM does for ``tool_calls``) was
    # ``get_weatherget_weatherget_weather``, a correct call rejected as
    # ``wrong_tool``; its name is read by the rule of every streamed call
    # (``CallSlots.place_legacy``), as the proxy and the importer read it.
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    def piece(arguments, finish=None):
        return ModelResponseStream(id="c", model="m", choices=[StreamingChoices(
            index=0, finish_reason=finish, delta=Delta(function_call={
                "name": "get_weather", "arguments": arguments}))])

    out, error = run_stream([piece(""), piece('{"city": '), piece('"Paris"}'),
                             chunk(finish="function_call")],
                            data={"model": "m", "functions": [TOOLS[0]["function"]]},
                            profile="hermes")
    assert error is None
    v = out[-1]._hidden_params["toolgate"][0]
    assert (v["decision"], v["label"]) == ("execute", "pass"), v
    served = [ch.choices[0].delta.function_call for ch in out
              if ch.choices and ch.choices[0].delta.function_call]
    assert [(f.name, f.arguments) for f in served] == [("get_weather", '{"city": "Paris"}')]
    assert finishes(out) == ["function_call"]


def test_a_missing_tool_call_index_is_its_position_and_a_null_one_is_refused():
    # A missing index reads as the call's position in the delta (0), so
    # both deltas build one call; the first id stands (a later fragment's
    # id is not the call's), as in the proxy and the importer.
    chunks = [
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"id": "a", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": '}}]}}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "b", "function": {"arguments": '"Gent"}'}}]},
            "finish_reason": "tool_calls"}]},
    ]
    out, error = run_stream(chunks)
    assert error is None
    calls = out[-1]["choices"][0]["delta"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("a", "get_weather", '{"city": "Gent"}')]
    # Without an id, the call gets the proxy's.
    out, _ = run_stream([
        chunk(tool_calls=[{"index": 3, "function": {"name": "get_weather",
                                                     "arguments": '{"city": "Gent"}'}}]),
        chunk(finish="tool_calls"),
    ])
    assert [c.id for c in out[-1].choices[0].delta.tool_calls] == ["call_upstream3"]
    # index null is a delta the proxy cannot check: the stream is cut.
    chunks[0]["choices"][0]["delta"]["tool_calls"][0]["index"] = None
    out, error = run_stream(chunks)
    assert "the stream cannot be checked: a tool call's index is not a number" in str(error)
    assert out == []


def test_two_choices_without_an_index_in_one_chunk_are_two_choices():
    # Regression: both were read as choice 0, so two halves of a call, one
    # per choice, made one call that executed. A missing index is the
    # choice's position in the chunk's `choices`, as in the importer and
    # the proxy: each half is judged alone, and neither executes.
    first = '<tool_call>{"name":"get_weather",'
    second = '"arguments":{"city":"A"}}</tool_call>'
    out, error = run_stream([
        {"id": "c", "model": "m", "choices": [
            {"delta": {"content": first}, "finish_reason": None},
            {"delta": {"content": second}, "finish_reason": None}]},
        {"id": "c", "model": "m", "choices": [
            {"delta": {}, "finish_reason": "stop"}, {"delta": {}, "finish_reason": "stop"}]},
    ])
    assert error is None
    choices = [choice for c in out for choice in c["choices"]]
    assert [c["delta"].get("tool_calls") for c in choices] == [None] * len(choices)
    text: dict = {}
    for choice in choices:
        text[choice["index"]] = text.get(choice["index"], "") + (
            choice["delta"].get("content") or "")
    assert text == {0: first, 1: second}
    assert [(c["index"], c["finish_reason"]) for c in choices if c.get("finish_reason")] == [
        (0, "stop"), (1, "stop")]


def test_a_choices_own_fields_are_passed_on_and_held_texts_logprobs_are_not():
    # Regression: every chunk kept only index and delta, so `logprobs`,
    # `stop_reason`, `matched_stop` never reached the client. They are
    # relayed as the proxy relays them; but a chunk whose text is held
    # (here from the call opener on) has its `logprobs` null, so the held
    # tokens do not leak before the decision.
    lp = {"content": [{"token": "hi", "logprob": -0.1, "bytes": [104, 105],
                       "top_logprobs": []}]}
    held = {"content": [{"token": "<tool_call>", "logprob": -0.2, "bytes": [60],
                         "top_logprobs": []}]}
    out, error = run_stream([
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {
            "role": "assistant", "content": "hi"}, "logprobs": lp, "finish_reason": None,
            "stop_reason": None}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {
            "content": " <tool_call>"}, "logprobs": held, "text": " <tool_call>",
            "finish_reason": None}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "logprobs": None,
            "finish_reason": "stop", "stop_reason": 128009, "matched_stop": 128009}]},
    ])
    assert error is None
    choices = [c["choices"][0] for c in out]
    assert choices[0] == {"index": 0, "delta": {"role": "assistant", "content": "hi"},
                          "logprobs": lp}
    # " " is forwarded, "<tool_call>" held: the chunk's logprobs are null,
    # and Together's copy of the content as `text` is what was forwarded.
    assert choices[1] == {"index": 0, "delta": {"content": " "}, "logprobs": None,
                          "text": " "}
    assert choices[2] == {"index": 0, "delta": {}, "stop_reason": 128009,
                          "matched_stop": 128009}
    assert choices[3]["finish_reason"] == "stop"
    assert len(choices) == 4
    # litellm's own chunks keep them too.
    out, error = run_stream([
        litellm.ModelResponseStream(id="c", model="m", choices=[
            {"index": 0, "delta": {"content": "hi"}, "logprobs": lp}]),
        chunk(finish="stop"),
    ])
    assert error is None
    assert out[0].choices[0].logprobs.model_dump(exclude_none=True) == lp


# -- responses that are not chat completions ----------------------------------

def test_a_responses_api_response_or_an_anthropic_message_is_refused():
    from litellm.types.llms.openai import ResponsesAPIResponse

    base = asyncio.run(litellm.aresponses(model="openai/gpt-4o", input="hi", mock_response="x"))
    r = ResponsesAPIResponse(**{**base.model_dump(), "output": [{
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "rm_rf",
        "arguments": '{"path": "/"}', "status": "completed"}]})
    with pytest.raises(ToolgateError, match="ResponsesAPIResponse .*not a chat completion"):
        hook(r)
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
               "content": [{"type": "tool_use", "id": "tu_1", "name": "rm_rf",
                            "input": {"path": "/"}}], "stop_reason": "tool_use"}
    with pytest.raises(ToolgateError, match=r"dict \(message\) is not a chat completion"):
        hook(message)


def test_any_other_answer_without_choices_is_refused():
    # Fail closed: shapes the guardrail does not know may carry calls —
    # Gemini's generateContent (agenerate_content), the Interactions API
    # (acreate_interaction) — and are not returned.
    gemini = {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "rm_rf", "args": {"path": "/"}}}]},
        "finishReason": "STOP", "index": 0}], "modelVersion": "gemini-2.0-flash"}
    with pytest.raises(ToolgateError, match=r"dict \(None\) is not a chat completion"):
        hook(gemini)
    interaction = {"id": "i1", "object": "interaction", "status": "completed", "outputs": [
        {"type": "function_call", "name": "rm_rf", "arguments": {"path": "/"}, "id": "fc1"}]}
    with pytest.raises(ToolgateError, match=r"dict \(interaction\) is not a chat completion"):
        hook(interaction)
    with pytest.raises(ToolgateError, match="not a chat completion"):
        hook({"object": "list", "data": [{"object": "function_call", "name": "rm_rf"}]})
    # A text completion has choices but no message: its text cannot be checked.
    text = litellm.TextCompletionResponse(choices=[{"text": "x", "index": 0,
                                                    "finish_reason": "stop"}])
    with pytest.raises(ToolgateError, match="cannot be checked: a choice has no message"):
        hook(text)


def test_a_response_that_cannot_carry_calls_passes_unchanged():
    embedding = litellm.EmbeddingResponse(model="m", data=[{"object": "embedding", "index": 0,
                                                            "embedding": [0.5]}])
    before = embedding.model_dump()
    assert hook(embedding) is embedding and embedding.model_dump() == before
    image = litellm.ImageResponse(data=[{"url": "http://x/y.png"}])
    assert hook(image) is image
    assert hook(litellm.TranscriptionResponse(text="hi")).text == "hi"
    as_dict = {"object": "list", "model": "m",
               "data": [{"object": "embedding", "index": 0, "embedding": [0.5]}]}
    assert hook(as_dict) is as_dict
    images = {"created": 1, "data": [{"b64_json": "AAAA"}]}
    assert hook(images) is images


def test_a_real_litellm_response_passes_the_shape_check():
    # litellm's own keys (provider_specific_fields, thinking_blocks,
    # annotations, usage…) are not call-bearing: the proxy's rule passes them.
    from litellm.types.utils import ChatCompletionMessageToolCall, Function, Message

    r = respond("Just prose.")
    message = Message(content="Just prose.", reasoning_content="t", annotations=[],
                      thinking_blocks=[{"type": "thinking", "thinking": "t", "signature": "s"}],
                      provider_specific_fields={"a": 1})
    r.choices[0].message = message
    assert hook(r).choices[0].message.content == "Just prose."
    call = ChatCompletionMessageToolCall(
        id="c0", type="function", function=Function(name="get_weather",
                                                    arguments='{"city": "Ghent"}'),
        provider_specific_fields={"thought_signature": "abc"})
    r = respond(tool_calls=[("get_weather", '{"city": "Ghent"}')])
    r.choices[0].message.tool_calls = [call]
    hook(r)
    assert r.choices[0].message.tool_calls == [call]
    assert r.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("message, choice, top, why", [
    ({"Tool_Calls": [{"id": "c", "type": "function",
                      "function": {"name": "rm_rf", "arguments": "{}"}}]}, {}, {},
     "an unknown call-bearing field `Tool_Calls`"),
    ({"function_calls": []}, {}, {}, "an unknown call-bearing field `function_calls`"),
    ({}, {"tool_calls": []}, {}, "an unknown call-bearing field `tool_calls`"),
    ({}, {}, {"tool_calls": []}, "an unknown call-bearing field `tool_calls`"),
    # Go and Json.NET clients read `Message` as `message` (probe 44).
    ({}, {"Message": {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "rm_rf", "arguments": "{}"}}]}}, {},
     "a field `Message` that clients matching keys in any case read as `message`"),
    ({"Content": "x"}, {}, {},
     "a field `Content` that clients matching keys in any case read as `content`"),
    # Another vendor's shape beside `choices` (Cohere v2, Ollama): a client
    # reading it too would run the call (probe f2).
    ({}, {}, {"message": {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "rm_rf", "arguments": "{}"}}]}},
     "a call-bearing field `message.tool_calls` inside a field not read"),
    ({}, {"messages": [{"role": "assistant", "tool_calls": []}]}, {},
     r"a call-bearing field `choices\[0\]\.messages\[0\]\.tool_calls` inside a field not read"),
    ({"tool_calls": [{"id": "c", "type": "function",
                      "function": {"name": "get_weather", "arguments": {"city": "A"}}}]},
     {}, {}, "a call's arguments is not a string"),
    ({"tool_calls": [{"id": None, "type": "function",
                      "function": {"name": "get_weather", "arguments": "{}"}}]},
     {}, {}, "a tool call's id is not a string"),
    ({"tool_calls": [{"id": "c", "type": "function", "extra": 1,
                      "function": {"name": "get_weather", "arguments": "{}"}}]},
     {}, {}, "a tool call has an unknown field `extra`"),
    ({"tool_calls": [{"id": "c", "type": "custom",
                      "custom": {"name": "get_weather", "input": "x"}}]},
     {}, {}, 'a tool call of type "custom" \\(only function is checked\\)'),
])
def test_fields_the_proxy_cannot_check_are_refused(message, choice, top, why):
    d = {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
         "choices": [{"index": 0, "finish_reason": "tool_calls",
                      "message": {"role": "assistant", "content": None, **message}, **choice}],
         **top}
    with pytest.raises(ToolgateError, match="the answer cannot be checked: " + why):
        hook(d)
    delta = {"id": "x", "choices": [{"index": 0, "finish_reason": "tool_calls", "delta": {
        "role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {
            "name": "rm_rf", "arguments": "{}"}}]}}]}
    with pytest.raises(ToolgateError, match="a `delta` in place of `message`"):
        hook(delta)


def test_a_tool_list_entry_that_is_not_a_tool_allowlists_nothing(caplog):
    import logging

    from toolgate.integrations.litellm import allowlist

    caplog.set_level(logging.WARNING, logger="toolgate.litellm")
    assert allowlist({"tools": ["get_weather"]}) == []
    assert allowlist({"tools": [TOOLS[0], 5]}) == []
    assert allowlist({"tools": TOOLS, "functions": ["x"]}) == []
    assert "tools[1] is a int (5), not a tool definition in the request's `tools`" in caplog.text
    assert "in the request's `functions`" in caplog.text
    # The guardrail then rejects every call instead of failing the request.
    r = respond(tool_calls=[("get_weather", '{"city": "Antwerp"}')])
    asyncio.run(ToolgateGuardrail().async_post_call_success_hook(
        {"model": "m", "tools": ["get_weather"]}, None, r))
    assert r.choices[0].message.tool_calls is None and r.choices[0].finish_reason == "stop"


def test_a_tool_choice_that_names_a_tool_narrows_the_allowlist_as_the_proxy_does(caplog):
    # Probe s46: a call of a tool the request's `tool_choice` left out ran
    # against the whole `tools` list when the upstream ignored the choice.
    import logging

    from toolgate.integrations.litellm import allowlist

    two = TOOLS + [{"type": "function", "function": {"name": "get_time"}}]
    named = {"type": "function", "function": {"name": "get_time"}}
    allowed = {"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": "get_time"}}]}}
    for choice, served in [("auto", True), ("none", True), (None, True),
                           ({"type": "function", "function": {"name": "get_weather"}}, True),
                           (named, False), (allowed, False)]:
        data = {"model": "m", "tools": two, "tool_choice": choice}
        names = [t["function"]["name"] for t in allowlist(data)]
        assert names == (["get_weather", "get_time"] if choice in ("auto", "none", None)
                         else ["get_weather"] if served else ["get_time"]), choice
        r = respond(tool_calls=[("get_weather", '{"city": "Antwerp"}')])
        asyncio.run(ToolgateGuardrail().async_post_call_success_hook(data, None, r))
        verdict = r._hidden_params["toolgate"][0]
        if served:
            assert verdict["decision"] == "execute", (choice, verdict)
            assert r.choices[0].message.tool_calls[0].function.name == "get_weather"
        else:
            assert (verdict["decision"], verdict["label"], verdict["gate"]) == (
                "reject", "wrong_tool", "allowlist"), (choice, verdict)
            assert r.choices[0].message.tool_calls is None
    # The legacy `function_call` too; a choice that cannot be read
    # allowlists nothing (logged), as the proxy refuses the request.
    assert allowlist({"functions": [{"name": "a"}, {"name": "b"}],
                      "function_call": {"name": "b"}})[0]["function"]["name"] == "b"
    caplog.set_level(logging.WARNING, logger="toolgate.litellm")
    assert allowlist({"tools": two, "tool_choice": {"type": "function"}}) == []
    assert "`tool_choice`" in caplog.text and "names no tool" in caplog.text


def test_a_stream_the_proxy_breaks_is_cut_here_too():
    # More choices than the proxy's cap, or a choice that goes on after
    # its finish_reason: the proxy breaks such a stream; so does the
    # guardrail. `""` and `"null"` are no finish (SGLang 0.4.3, KoboldCpp).
    import toolgate._native as native

    many = [{"id": "c", "model": "m", "choices": [
        {"index": i, "delta": {"content": "x"}} for i in range(native.MAX_CHOICES + 1)]}]
    _, error = run_stream(many)
    assert f"more than {native.MAX_CHOICES} choices" in str(error)
    after = [
        chunk(content="hi", role="assistant"),
        chunk(finish="stop"),
        chunk(tool_calls=[{"index": 0, "id": "x", "type": "function",
                           "function": {"name": "rm_rf", "arguments": "{}"}}]),
    ]
    out, error = run_stream(after)
    assert "went on after its finish_reason" in str(error)
    assert streamed_calls(out) == []
    empty_finish = [
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "Hel"},
                                               "finish_reason": ""}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "lo"},
                                               "finish_reason": "null"}]},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    out, error = run_stream(empty_finish)
    assert error is None
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in out if c["choices"]) \
        == "Hello"


def test_parallel_tool_calls_false_rejects_two_calls_as_the_proxy_does():
    # Regression (the fifth probe, stop 42): two calls answered to a
    # request that set parallel_tool_calls: false were executed; the proxy
    # and the guardrail now reject the whole set at `single`.
    two = [("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Rome"}')]
    data = {"model": "Qwen/Qwen3-8B", "tools": TOOLS, "parallel_tool_calls": False}
    r = asyncio.run(ToolgateGuardrail("hermes").async_post_call_success_hook(
        data, None, respond(tool_calls=two)))
    v = r._hidden_params["toolgate"][0]
    assert (v["decision"], v["gate"], v["label"]) == ("reject", "single", "pass")
    assert r.choices[0].message.tool_calls is None
    ok = ToolgateGuardrail("hermes").judge(respond(tool_calls=two), TOOLS, parallel_tool_calls=True)
    assert ok[0]["decision"] == "execute"
    out, error = run_stream([
        chunk(tool_calls=[{"index": 0, "id": "a", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city": "Paris"}'}}], role="assistant"),
        chunk(tool_calls=[{"index": 1, "id": "b", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city": "Rome"}'}}]),
        chunk(finish="tool_calls"),
    ], data=dict(DATA, parallel_tool_calls=False))
    assert error is None
    assert streamed_calls(out) == []
    assert out[-1]._hidden_params["toolgate"][0]["gate"] == "single"


def test_the_guardrail_runs_on_every_response_whatever_the_metadata_says():
    # Regression (probe 44): LiteLLM's registry builds the guardrail with
    # `default_on` from the config (None unless set) and skips a guardrail
    # whose `should_run_guardrail` is not True, so a request that did not
    # name `toolgate` got its calls through unjudged; with `default_on`,
    # key or team metadata could opt out.
    from litellm.types.guardrails import GuardrailEventHooks

    post = GuardrailEventHooks.post_call
    admin_off = {"user_api_key_metadata": {"disable_global_guardrails": True,
                                           "opted_out_global_guardrails": ["toolgate"]}}
    for default_on in (None, False, True):
        # What litellm.proxy.guardrails.guardrail_registry passes.
        g = ToolgateGuardrail(guardrail_name="toolgate", event_hook="post_call",
                              default_on=default_on)
        for metadata in ({}, {"guardrails": ["other"]}, admin_off,
                         {"disable_global_guardrail": True}):
            data = {"model": "m", "metadata": metadata}
            assert g.should_run_guardrail(data, post) is True, (default_on, metadata)
            assert g.should_run_guardrail({**data, "stream": True}, post) is True
            assert g.should_run_guardrail({"model": "m", "litellm_metadata": metadata},
                                          post) is True
    # Other events keep LiteLLM's rule: the guardrail has no hook for them.
    g = ToolgateGuardrail(guardrail_name="toolgate", event_hook="post_call")
    assert g.should_run_guardrail({"model": "m", "metadata": {}},
                                  GuardrailEventHooks.pre_call) is False


def test_a_lone_surrogate_is_named_as_the_core_api_names_it():
    # Regression (probe 44): a lone surrogate in content or arguments gave
    # "the answer is not valid JSON: unexpected end of hex escape at line 1
    # column 207", naming neither the surrogate nor where it was.
    content = {"role": "assistant", "content": "hi \ud800"}
    with pytest.raises(ToolgateError, match=(
            "^toolgate: the answer cannot be checked: choices\\[0\\].message.content is not "
            "valid Unicode: a lone surrogate at index 3 cannot be encoded as UTF-8: "
            "it is not returned$")):
        hook({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop", "message": content}]})
    with pytest.raises(ToolgateError, match=(
            "choices\\[0\\].message.tool_calls\\[0\\].function.arguments is not valid "
            "Unicode: a lone surrogate at index 9 ")):
        hook(respond(tool_calls=[("get_weather", '{"city":"\udc00"}')]))
    out, error = run_stream([chunk("x \ud800", role="assistant")])
    assert out == []
    assert "the stream cannot be checked: choices[0].delta.content is not valid Unicode: " \
        "a lone surrogate at index 2 " in str(error)


def test_a_reason_quoting_the_models_text_is_logged_without_its_escapes(caplog):
    # Regression: the guardrail logged the verdict's reason raw: the ESC and
    # newline of a tool name the model made up reached the proxy's log.
    import logging

    text = '<tool_call>{"name": "x\\u001b]0;pwned\\u0007\\nforged", "arguments": {}}</tool_call>'
    with caplog.at_level(logging.INFO, logger="toolgate.litellm"):
        r = hook(respond(text))
    assert r.choices[0].message.tool_calls is None
    [message] = [r.getMessage() for r in caplog.records if r.name == "toolgate.litellm"]
    assert "reject label=wrong_tool gate=allowlist" in message
    assert "\x1b" not in message and "\x07" not in message and "\n" not in message
    assert "x\\x1b]0;pwned\\x07\\nforged" in message


class HermesGuardrail(ToolgateGuardrail):
    """A subclass as a config names one: a profile set, nothing else."""

    def __init__(self, **kwargs):
        super().__init__("hermes", **kwargs)


RM_RF_STREAM = [
    chunk("Deleting. ", role="assistant"),
    chunk(tool_calls=[{"index": 0, "id": "c", "type": "function",
                       "function": {"name": "rm_rf", "arguments": '{"path": "/"}'}}]),
    chunk(finish="tool_calls"),
]


def test_a_subclass_of_the_guardrail_keeps_its_streaming_hook_where_litellm_looks():
    # Regression (fail open): LiteLLM 1.110.2 wraps a stream with a
    # callback's `async_post_call_streaming_iterator_hook` only when
    # `type(callback).__dict__` has it (`ProxyLogging.callback_capabilities`,
    # litellm/proxy/utils.py), not when a base class does. A subclass of the
    # guardrail was never wrapped: its stream went out unjudged.
    hook = "async_post_call_streaming_iterator_hook"
    assert hook in HermesGuardrail.__dict__
    assert HermesGuardrail.__dict__[hook] is ToolgateGuardrail.__dict__[hook]

    class Deeper(HermesGuardrail):
        pass

    assert hook in Deeper.__dict__

    class Own(ToolgateGuardrail):
        async def async_post_call_streaming_iterator_hook(self, user_api_key_dict, response,
                                                          request_data):
            async for c in response:
                yield c

    # A subclass's own hook is its own.
    assert Own.__dict__[hook] is not ToolgateGuardrail.__dict__[hook]

    async def collect():
        async def source():
            for c in RM_RF_STREAM:
                yield c
        return [c async for c in Deeper().async_post_call_streaming_iterator_hook(
            None, source(), DATA)]

    out = asyncio.run(collect())
    assert streamed_calls(out) == [] and finishes(out) == ["stop"]
    assert out[-1]._hidden_params["toolgate"][0]["label"] == "wrong_tool"


def test_litellm_s_proxy_streams_through_a_subclass_of_the_guardrail():
    # The same through LiteLLM's own proxy code (needs the proxy's extras:
    # fastapi and the rest; skipped without them).
    try:
        from litellm.caching.caching import DualCache
        from litellm.proxy._types import UserAPIKeyAuth
        from litellm.proxy.utils import ProxyLogging
    except ImportError as e:
        pytest.skip(f"litellm's proxy cannot be imported here: {e}")

    async def run(guard):
        async def source():
            for c in RM_RF_STREAM:
                yield c
        saved = litellm.callbacks
        litellm.callbacks = [guard]
        try:
            logging_obj = ProxyLogging(user_api_key_cache=DualCache())
            out = [c async for c in logging_obj.async_post_call_streaming_iterator_hook(
                user_api_key_dict=UserAPIKeyAuth(), response=source(),
                request_data=dict(DATA))]
            return out, logging_obj.needs_iterator_wrap()
        finally:
            litellm.callbacks = saved

    for guard in (ToolgateGuardrail(guardrail_name="toolgate"),
                  HermesGuardrail(guardrail_name="toolgate")):
        name = type(guard).__name__
        out, wrapped = asyncio.run(run(guard))
        # Before: the subclass's stream passed as the upstream sent it, the
        # call included.
        assert streamed_calls(out) == [], name
        assert streamed_text(out) == "Deleting. " and finishes(out) == ["stop"], name
        assert out[-1]._hidden_params["toolgate"][0]["label"] == "wrong_tool", name
        # What the proxy's SSE writer asks before it wraps the stream at all.
        assert wrapped, name
