"""The Python surface itself: unknown tools (SPEC §4), the GIL released
around the Rust work (compiling the tools too), Python-style reprs."""

from __future__ import annotations

import json
import threading
import time

import pytest

import toolgate
from test_cli_agreement import FLAT

TOOLS = [{"name": "get_weather", "parameters": {"type": "object",
          "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
CALL = '<tool name="get_weather">{"city": "Antwerp"}</tool>'


def streamed(tools, deltas, **kwargs):
    parser = toolgate.StreamParser("auto", tools, **kwargs)
    events = [e for d in deltas for e in parser.feed(d)]
    result = parser.finish()
    return events + parser.end_events, result


def test_tools_none_is_unknown_as_label_judges_a_transcript_without_tools():
    record = toolgate.label({"output": CALL})
    row = record["profile"]
    assert (row["decision"], row["gate"], row["label"]) == ("reject", "allowlist", "pass")
    assert [f["kind"] for f in record["findings"]] == ["tools_unknown"]
    for unknown in (toolgate.parse(CALL), toolgate.parse(CALL, None)):
        # Nothing executes, and the model is not blamed for a list nobody gave.
        assert (unknown.decision, unknown.gate, unknown.label) == ("reject", "allowlist", "pass")
        assert not unknown.calls
        assert unknown.findings == record["findings"]
        assert unknown.to_dict()["findings"] == record["findings"]
    # `[]` stays "no tool is allowed": the model called a tool it was not given.
    empty = toolgate.parse(CALL, [])
    assert (empty.decision, empty.gate, empty.label) == ("reject", "allowlist", "wrong_tool")
    assert empty.findings == [] and "findings" not in empty.to_dict()
    # Gate and StreamParser alike.
    assert toolgate.Gate(None).parse(CALL).to_dict() == toolgate.parse(CALL).to_dict()
    assert toolgate.Gate().parse(CALL).label == "pass"
    assert toolgate.Gate([]).parse(CALL).to_dict() == empty.to_dict()
    events, result = streamed(None, ["Checking. <tool name=", CALL[10:]])
    assert result.to_dict() == toolgate.parse("Checking. <tool name=" + CALL[10:]).to_dict()
    assert events[-1]["event"] == "end" and events[-1]["findings"] == record["findings"]
    # Every held byte is shown: nothing was executed.
    assert "".join(e["text"] for e in events if e["event"] == "text") == (
        "Checking. <tool name=" + CALL[10:])
    _, result = streamed([], [CALL])
    assert result.to_dict() == empty.to_dict()


def test_tools_none_gives_labels_profile_row_on_every_output():
    checked = 0
    for f, obj in FLAT:
        bare = {"output": obj["output"]}
        row = toolgate.label(bare)["profile"]
        for r in (toolgate.parse(obj["output"]), toolgate.Gate().parse(obj["output"])):
            assert (r.decision, r.gate, r.label) == (
                row["decision"], row["gate"], row["label"]), f
            assert r.decision != "execute", f
        checked += 1
    assert checked > 250


def test_verdict_repr_is_python():
    gate = toolgate.Gate(TOOLS)
    assert repr(gate.parse(CALL)) == "Verdict(decision='execute', label='pass', gate=None)"
    assert repr(gate.parse('<tool name="rm_rf">{}</tool>')) == (
        "Verdict(decision='reject', label='wrong_tool', gate='allowlist')")


def ticks_during(call) -> tuple:
    """How often a sleeping thread woke while `call` ran, and how long it
    ran: a thread that needs the GIL to wake cannot while the GIL is held."""
    stop, ticks, ready = threading.Event(), [0], threading.Event()

    def ticker():
        ready.set()
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.002)

    t = threading.Thread(target=ticker)
    t.start()
    ready.wait()
    time.sleep(0.02)
    before = ticks[0]
    began = time.perf_counter()
    call()
    elapsed = time.perf_counter() - began
    during = ticks[0] - before
    stop.set()
    t.join()
    return during, elapsed


@pytest.mark.parametrize("what", ["Gate.parse", "StreamParser.feed", "StreamParser.finish"])
def test_the_gil_is_released_during_long_work(what):
    # A large output: long enough in a debug build for many wake-ups.
    big = '<tool name="get_weather">{"city": "' + "x" * 4_000_000 + '"}</tool>' + " y" * 3_000_000
    gate = toolgate.Gate(TOOLS)
    parser = toolgate.StreamParser("auto", TOOLS)
    if what == "Gate.parse":
        call = lambda: gate.parse(big)
    elif what == "StreamParser.feed":
        # Many deltas in one call would go through Python: one big delta of
        # prose, which the hold-back scans in Rust.
        prose = "no call here, " * 700_000
        call = lambda: parser.feed(prose)
    else:
        parser.feed(big)
        call = lambda: parser.finish()
    during, elapsed = ticks_during(call)
    # Held, the ticker cannot wake at all (at most once at the edges);
    # released, it wakes every few milliseconds of the call.
    assert elapsed > 0.02, f"the call was too short to tell ({elapsed:.3f}s)"
    assert during >= 20, (what, during, elapsed)


@pytest.mark.parametrize("what", ["Gate", "StreamParser"])
def test_the_gil_is_released_while_the_tools_compile(what):
    # Regression (probe 44): Gate(...) and StreamParser(...) read and
    # compiled the tools with the GIL held (another thread woke 2 times in
    # 0.7 s). 300 tools of 50 `pattern` properties, named afresh so that
    # no cache holds them compiled.
    fresh = f"{what}{time.perf_counter_ns()}"
    tools = [{"name": f"{fresh}_{i}", "parameters": {"type": "object", "properties": {
        f"p{j}": {"type": "string", "pattern": "^a+b$"} for j in range(50)}}}
        for i in range(300)]
    if what == "Gate":
        call = lambda: toolgate.Gate(tools, profile="hermes")
    else:
        call = lambda: toolgate.StreamParser("hermes", tools)
    during, elapsed = ticks_during(call)
    assert elapsed > 0.02, f"the call was too short to tell ({elapsed:.3f}s)"
    assert during >= 10, (what, during, elapsed)


def test_a_gate_over_a_list_too_heavy_for_the_cache_compiles_it_once():
    # Over a quarter of the engine cache's weight, a list was compiled again
    # on every Gate.parse (1,200 tools: 220 ms each); the Gate keeps it compiled.
    from toolgate import _native

    tools = [{"name": f"t{i}", "parameters": {"type": "object", "properties": {
        "x": {"type": "string", "enum": [str(j) for j in range(50)]}}}} for i in range(1200)]
    before = _native._tool_compilations("hermes")
    gate = toolgate.Gate(tools, profile="hermes")
    assert _native._tool_compilations("hermes") == before + 1
    for _ in range(3):
        v = gate.parse('<tool_call>{"name": "t1", "arguments": {"x": "1"}}</tool_call>')
        assert v.decision == "execute"
    assert _native._tool_compilations("hermes") == before + 1


def test_label_rejects_two_calls_where_the_request_set_parallel_tool_calls_false():
    # Probe s47: a transcript (or a logged chat exchange) whose request set
    # parallel_tool_calls: false, answered with two calls, was decided
    # `execute` by label, where the proxy and the LiteLLM guardrail reject
    # it at the `single` gate. The label stays the model's.
    two = CALL + "\n" + CALL.replace("Antwerp", "Ghent")
    for flag, want in [(False, ("reject", "single", "pass")),
                       (True, ("execute", None, "pass")),
                       (None, ("execute", None, "pass"))]:
        t = {"tools": TOOLS, "output": two}
        if flag is not None:
            t["parallel_tool_calls"] = flag
        row = toolgate.label(t, profile="default")["profile"]
        assert (row["decision"], row["gate"], row["label"]) == want, (flag, row)
    native = [{"id": c, "type": "function", "function": {
        "name": "get_weather", "arguments": '{"city": "%s"}' % city}}
        for c, city in [("a", "Paris"), ("b", "Rome")]]
    pair = {"request": {"model": "gpt-4o", "parallel_tool_calls": False,
                        "tools": [{"type": "function", "function": TOOLS[0]}]},
            "response": {"object": "chat.completion", "choices": [{"index": 0,
                         "message": {"role": "assistant", "content": None,
                                     "tool_calls": native},
                         "finish_reason": "tool_calls"}]}}
    [record] = toolgate.label_text(json.dumps(pair), "log.json", profile="native")
    row = record["profile"]
    assert (row["decision"], row["gate"]) == ("reject", "single"), row
    # A value that is not a boolean is an error naming it, as in import.
    pair["request"]["parallel_tool_calls"] = "false"
    [record] = toolgate.label_text(json.dumps(pair), "log.json", profile="native")
    assert "`parallel_tool_calls` must be true or false" in record["error"], record
