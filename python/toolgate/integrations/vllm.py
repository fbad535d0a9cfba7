"""toolgate as vLLM tool parsers: fail-closed tool calls for `vllm serve`.

Use the plugin file with vLLM's OpenAI server::

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-parser-plugin "$(python -m toolgate.integrations.vllm --plugin-path)" \\
        --tool-call-parser toolgate_auto          # or toolgate_hermes, toolgate_qwen3-coder, …

It registers ``toolgate_auto`` (the profile ``auto`` picks for the request's
model name) and ``toolgate_<name>`` for every built-in profile and mode.
Each runs toolgate's pipeline with the request's ``tools`` as the
allowlist:

- ``extract_tool_calls``: ``execute`` returns the calls (arguments exactly
  as the model wrote them, validated by the tool's schema) and the text
  before them as content; anything else returns the whole output as
  content and no tool call — never part of a rejected set.
- ``extract_tool_calls_streaming``: text that cannot be part of a call is
  streamed at once; from the first call opener on, text is held until the
  output ends, then the decision on the whole text is sent: the calls, or
  the held text as content. With ``n > 1`` vLLM shares one parser by
  every choice; each choice keeps its own state, found by its
  ``previous_text`` (a text matching no choice's releases no call).

Every decision is logged (logger ``toolgate.vllm``) with its label, gate
and reason.

vLLM gives a tool parser no end-of-stream call, so the stream's end is read
from the token ids: the tokenizer's EOS id or one of the request's
``stop_token_ids`` ending ``delta_token_ids``, or ``max_tokens`` reached
(then a still-open call is ``truncation``). A stream cut by a stop *string*
ends without that sign: its held text and calls are never sent (fail
closed). Set ``include_stop_str_in_output`` or use stop token ids.

The same holds for any end the parser is not shown: it gets only the
tokenizer and the request, so an end token vLLM takes from the model's
``generation_config.json`` (Llama 3.1's ``<|eom_id|>`` beside the
tokenizer's ``<|eot_id|>``), or the context length reached when the
request sets no ``max_tokens``, ends the stream unseen: everything held
from the first call opener on is never sent, and no call is released.
Name such tokens in the request's ``stop_token_ids``, and set
``max_tokens``.

vLLM's protocol types moved between releases (``vllm.entrypoints.openai.
protocol`` → ``…engine.protocol``; ``vllm.entrypoints.openai.tool_parsers``
→ ``vllm.tool_parsers``): each name is imported from the first module that
has it. To check the plugin against an installed vLLM::

    python -m toolgate.integrations.vllm --check
"""

from __future__ import annotations

import importlib
import json
import logging
from typing import Any, Optional, Sequence

import toolgate
from toolgate.integrations._common import import_first, tool_dicts

log = logging.getLogger("toolgate.vllm")

_PARSER_MODULES = (
    "vllm.tool_parsers.abstract_tool_parser",
    "vllm.tool_parsers",
    "vllm.entrypoints.openai.tool_parsers.abstract_tool_parser",
    "vllm.entrypoints.openai.tool_parsers",
)
_PROTOCOL_MODULES = (
    "vllm.entrypoints.openai.engine.protocol",
    "vllm.entrypoints.openai.protocol",
)


def _import(name: str, modules: Sequence[str]) -> Any:
    """`name` from the first of `modules` that has it (vLLM's layout moves)."""
    return import_first("vLLM", name, modules)


def _tools(request: Any) -> list:
    """The request's tools as JSON-ready dicts (pydantic models or dicts)."""
    return tool_dicts(getattr(request, "tools", None))


def _log(result: "toolgate.Result", profile: str) -> None:
    log.info(
        "toolgate: %s label=%s gate=%s reason=%s profile=%s",
        result.decision,
        result.label,
        result.gate,
        result.reason,
        profile,
    )


def _content(parts: Sequence[str]) -> Optional[str]:
    text = "".join(parts)
    return text or None


class _ChoiceStream:
    """One streamed choice: toolgate's stream parser on its text (``None``
    for a lost choice, which never releases a call) and whether its end
    was seen."""

    def __init__(self, stream: Optional["toolgate.StreamParser"]) -> None:
        self.stream = stream
        self.done = False


def build(profile: str) -> type:
    """The vLLM tool parser class judging with `profile` (``auto``: by the
    request's model name)."""
    ToolParser = _import("ToolParser", _PARSER_MODULES)
    Extracted = _import("ExtractedToolCallInformation", _PROTOCOL_MODULES)
    ToolCall = _import("ToolCall", _PROTOCOL_MODULES)
    FunctionCall = _import("FunctionCall", _PROTOCOL_MODULES)
    DeltaMessage = _import("DeltaMessage", _PROTOCOL_MODULES)
    DeltaToolCall = _import("DeltaToolCall", _PROTOCOL_MODULES)
    DeltaFunctionCall = _import("DeltaFunctionCall", _PROTOCOL_MODULES)

    class ToolgateToolParser(ToolParser):
        """toolgate's fail-closed pipeline as a vLLM tool parser."""

        PROFILE = profile

        def __init__(self, tokenizer: Any) -> None:
            super().__init__(tokenizer)
            # One stream state per choice, keyed by the text it has read
            # (`_take` says why).
            self._streams: dict = {}

        def _options(self, request: Any) -> dict:
            model = getattr(request, "model", None) if self.PROFILE == "auto" else None
            return {"profile": self.PROFILE, "model": model}

        def _calls(self, result: "toolgate.Result") -> list:
            return [
                ToolCall(
                    type="function",
                    function=FunctionCall(
                        name=c.name, arguments=json.dumps(c.arguments, ensure_ascii=False)
                    ),
                )
                for c in result.calls
            ]

        def extract_tool_calls(self, model_output: str, request: Any) -> Any:
            opts = self._options(request)
            stream = toolgate.StreamParser(opts["profile"], _tools(request), model=opts["model"])
            shown = [e["text"] for e in stream.feed(model_output) if e["event"] == "text"]
            result = stream.finish()
            _log(result, self.PROFILE)
            if not result.executed:
                return Extracted(tools_called=False, tool_calls=[], content=model_output)
            shown += [e["text"] for e in stream.end_events if e["event"] == "text"]
            return Extracted(
                tools_called=True, tool_calls=self._calls(result), content=_content(shown)
            )

        def _ended(self, current_token_ids, delta_token_ids, request) -> tuple:
            """(ended, by the length limit) from the token ids."""
            ends = set(getattr(request, "stop_token_ids", None) or [])
            eos = getattr(self.model_tokenizer, "eos_token_id", None)
            if isinstance(eos, int):
                ends.add(eos)
            if delta_token_ids and delta_token_ids[-1] in ends:
                return True, False
            limit = getattr(request, "max_completion_tokens", None) or getattr(
                request, "max_tokens", None
            )
            if limit and len(current_token_ids) >= limit:
                return True, True
            return False, False

        def _take(self, previous_text: str, request: Any) -> "_ChoiceStream":
            """The stream state of the choice whose text so far is
            `previous_text`, taken out of `_streams`.

            vLLM builds one parser per request and, with ``n > 1``, shares
            it by every choice (``[self.tool_parser(tokenizer)] *
            num_choices``), calling it for each choice in turn with no
            choice index. A choice is therefore found by its text: the
            state whose accumulated text equals `previous_text`. Two states
            with the same text have read the same input, so either serves.
            A live state is taken before an ended one; ``""`` with no live
            state starts a new choice.

            A `previous_text` that matches no state (text this parser never
            read, or a `current_text` that is not `previous_text` +
            `delta_text`) fails closed: the choice gets a *lost* state that
            passes its deltas as content and never releases a call; what
            its lost state held is not sent. This is logged."""
            states = self._streams.get(previous_text, [])
            live = [s for s in states if not s.done]
            # An ended choice is never called again, so only a choice that
            # has not begun can be at "": it never takes an ended state.
            state = (live or ([] if previous_text == "" else states) or [None])[0]
            if state is not None:
                states.remove(state)
                if not states:
                    del self._streams[previous_text]
                return state
            if previous_text == "":
                opts = self._options(request)
                return _ChoiceStream(
                    toolgate.StreamParser(opts["profile"], _tools(request), model=opts["model"])
                )
            log.warning(
                "toolgate: a streamed choice's previous text matches no stream state: "
                "its deltas pass as content, no call is released"
            )
            return _ChoiceStream(None)

        def extract_tool_calls_streaming(
            self,
            previous_text: str,
            current_text: str,
            delta_text: str,
            previous_token_ids: Sequence[int],
            current_token_ids: Sequence[int],
            delta_token_ids: Sequence[int],
            request: Any,
        ) -> Any:
            state = self._take(previous_text, request)
            if current_text != previous_text + delta_text and state.stream is not None:
                log.warning(
                    "toolgate: current_text is not previous_text + delta_text: "
                    "the choice passes as content, no call is released"
                )
                state.stream = None
            self._streams.setdefault(current_text, []).append(state)
            if state.done:
                return None
            if state.stream is None:  # lost: fail closed, the text as content
                return DeltaMessage(content=delta_text) if delta_text else None
            stream = state.stream
            shown = [e["text"] for e in stream.feed(delta_text) if e["event"] == "text"]
            ended, by_length = self._ended(current_token_ids, delta_token_ids, request)
            if not ended:
                return DeltaMessage(content=_content(shown)) if shown else None
            state.done = True
            result = stream.finish(hit_length_limit=by_length)
            _log(result, self.PROFILE)
            shown += [e["text"] for e in stream.end_events if e["event"] == "text"]
            if not result.executed:
                return DeltaMessage(content=_content(shown)) if shown else None
            deltas = []
            for i, call in enumerate(self._calls(result)):
                deltas.append(
                    DeltaToolCall(
                        index=i,
                        id=call.id,
                        type="function",
                        function=DeltaFunctionCall(
                            name=call.function.name, arguments=call.function.arguments
                        ),
                    )
                )
                # What vLLM reads at the end to send unstreamed arguments:
                # everything has been sent.
                self.prev_tool_call_arr.append(
                    {"name": call.function.name, "arguments": result.calls[i].arguments}
                )
                self.streamed_args_for_tool.append(call.function.arguments)
            self.current_tool_id = len(deltas) - 1
            return DeltaMessage(content=_content(shown), tool_calls=deltas)

    ToolgateToolParser.__name__ = ToolgateToolParser.__qualname__ = (
        "Toolgate" + "".join(p.capitalize() for p in profile.replace("-", "_").split("_")) + "ToolParser"
    )
    return ToolgateToolParser


def parser_names() -> list:
    """``toolgate_auto`` and ``toolgate_<name>`` for every built-in profile
    and mode."""
    names = ["auto", *toolgate.profiles(), *toolgate.modes()]
    seen, out = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def register() -> list:
    """Registers every toolgate parser with vLLM's ``ToolParserManager``;
    returns the names registered."""
    manager = _import("ToolParserManager", _PARSER_MODULES)
    registered = []
    for name in parser_names():
        manager.register_module(name=f"toolgate_{name}", module=build(name))
        registered.append(f"toolgate_{name}")
    return registered


def plugin_path() -> str:
    """The file to give ``--tool-parser-plugin``."""
    from pathlib import Path

    return str(Path(__file__).with_name("toolgate_vllm_plugin.py"))


def _main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m toolgate.integrations.vllm")
    ap.add_argument("--plugin-path", action="store_true", help="print the plugin file's path")
    ap.add_argument(
        "--check",
        action="store_true",
        help="load the plugin into the installed vLLM and run one output through it",
    )
    args = ap.parse_args(argv)
    if args.plugin_path or not args.check:
        print(plugin_path())
        return 0
    manager = _import("ToolParserManager", _PARSER_MODULES)
    manager.import_tool_parser(plugin_path())
    cls = manager.get_tool_parser("toolgate_hermes")
    Request = _import(
        "ChatCompletionRequest",
        ("vllm.entrypoints.openai.chat_completion.protocol", "vllm.entrypoints.openai.protocol"),
    )
    request = Request(
        model="check",
        messages=[{"role": "user", "content": "weather?"}],
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}}],
    )
    out = cls(None).extract_tool_calls(
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>', request
    )
    print(f"vLLM {importlib.import_module('vllm').__version__}: {out}")
    return 0 if out.tools_called else 1


if __name__ == "__main__":
    raise SystemExit(_main())
