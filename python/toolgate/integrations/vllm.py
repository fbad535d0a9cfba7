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

vLLM does not give ``extract_tool_calls`` the output's finish reason, so
a whole output is judged as cut by the length limit (``finish_reason:
"length"``, under which no missing closer is excused) when the tokenizer's
count of it (``model_tokenizer.encode(output, add_special_tokens=False)``)
reaches the request's ``max_completion_tokens`` or ``max_tokens``. This
keeps a call whose closer vLLM strips as a stop token (harmony's
``<|call|>``) from executing when the limit cut the output right where the
closer was due: an output that ended on the stop token counts at most the
limit minus one (the stop token is generated, then stripped). A tokenizer
that is missing or fails judges the output as cut (logged): a call missing
its stop-token closer at the end is then ``truncation``; a closed call and
every other verdict are unchanged. What the count cannot see: it
re-encodes the text, so special tokens vLLM dropped from it
(``skip_special_tokens``, on by default; formats made of special tokens
need it off to be read at all), a tokenization the model produced other
than the tokenizer's own, or the reasoning ``--reasoning-parser`` removes
before the parser is called make it smaller, and such a cut passes as
complete; the context length, when the request sets no limit or one
larger than the context leaves (vLLM lowers it), is not seen either. Set
``max_tokens``.

**gpt-oss (harmony) is refused.** vLLM serves a model whose
``hf_config.model_type`` is ``gpt_oss`` through its harmony path, which
builds tool calls from harmony's own parser (``openai_harmony``'s
``StreamableParser``) and never asks a tool parser about a *streamed*
output: ``chat_completion_stream_generator``'s ``use_harmony`` branch in
``vllm/entrypoints/openai/serving_chat.py`` (99c5632f; later
``extract_harmony_streaming_delta``), then ``HarmonyParser.parse_delta``
(``vllm/parser/harmony.py``, which ``ParserManager.get_parser(...,
is_harmony=...)`` returns for gpt-oss at 00cd9d76; its ``parse`` does the
same for a whole output). A plugin that is built and never asked would let
calls out unjudged while the user believes them gated. So the parser
refuses to be built for a harmony model with a ``ToolgateError`` naming the
reason and the workaround — run ``toolgate proxy`` in front of vLLM, which
judges what vLLM answers. vLLM does not tell a tool parser the model's
type; the plugin reads the tokenizer it is built with: every one of
harmony's ``<|start|>``, ``<|channel|>``, ``<|message|>``, ``<|call|>`` as a
token of its own (``get_added_vocab``, else ``get_vocab``), or a chat
template writing ``<|channel|>`` and ``<|call|>``. A tokenizer with neither
to read is not taken for harmony. vLLM builds the parser for every
harmony request at 00cd9d76 (``HarmonyParser`` then refuses any tool parser
but its ``GptOssToolParser`` itself); older vLLM builds it for a whole
output and for a stream with ``tool_choice`` ``auto``, so a gpt-oss *stream*
with ``tool_choice`` ``required`` or a named tool on such a vLLM never
builds it and is not refused: there, put the proxy in front. Older vLLM's
whole-output harmony call, ``extract_tool_calls("", request=...,
token_ids=...)`` with the text withheld, is refused too (``ToolgateError``).

``tool_choice`` ``required`` or a named tool goes through toolgate too
(``supports_required_and_named = False``: vLLM would otherwise build those
calls itself, unjudged). For those, vLLM's ``ToolParser.adjust_request``
constrains the output to JSON (``get_json_schema_from_tools`` at
00cd9d76): ``required`` to a list of ``{"name", "parameters"}`` objects,
one per call; a named tool to that tool's ``parameters`` object alone. Such
an output is judged with toolgate's ``json`` mode whatever the configured
profile (which would never read that JSON as a call): the ``required``
list as it is, the named tool's object as the call
``{"name": <the named tool>, "arguments": <the output>}``. An output that
is not one JSON object is refused for a named tool. The gates are the
same (the request's tools as allowlist, their schemas): arguments that
break the schema, or an unknown tool in the list, give content and no call;
a cut-off output is ``truncation``. A named tool without ``parameters``
gets no JSON constraint from vLLM, so its output is judged with the
profile, as for ``auto``.

vLLM gives a tool parser no end-of-stream call, so the stream's end is read
from the token ids: the tokenizer's EOS id (not with the request's
``ignore_eos``, where generation goes on past it) or one of the request's
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

With ``--reasoning-parser``, vLLM calls the tool parser only after the
reasoning and gives it the *content's* token ids: the tokens the reasoning
used are not counted, and neither the request nor any argument tells the
parser how many there were. ``max_tokens`` reached after reasoning is then
not seen: the held text (from the first call opener on) is never sent and
no call is released. The EOS and ``stop_token_ids`` ends are seen as
without a reasoning parser.

vLLM's own end-of-choice step reads the parser-wide ``prev_tool_call_arr``
and ``streamed_args_for_tool`` (for the ``finish_reason`` and for tool
arguments "not yet streamed"): the plugin sets them to each choice's
released calls right before its last delta (none for a choice that
releases nothing), and the last delta's first tool-call entry carries the
call's name without arguments, so that vLLM sends the delta as it is —
every released call and the content — instead of one call's arguments.

vLLM's protocol types moved between releases (``vllm.entrypoints.openai.
protocol`` → ``…engine.protocol`` → ``vllm.entrypoints.generate.base.
protocol``; ``vllm.entrypoints.openai.tool_parsers`` → ``vllm.tool_parsers``):
each name is imported from the first module that has it. The parser takes
the tokenizer alone (vLLM up to d0ac579) or the tokenizer and the request's
tools (later vLLM, which builds it as ``tool_parser_cls(tokenizer, tools)``).
To check the plugin against an installed vLLM::

    python -m toolgate.integrations.vllm --check
"""

from __future__ import annotations

import importlib
import json
import logging
import weakref
from typing import Any, Optional, Sequence

import toolgate
from toolgate.integrations._common import import_first, shown, tool_dicts

log = logging.getLogger("toolgate.vllm")

_PARSER_MODULES = (
    "vllm.tool_parsers.abstract_tool_parser",
    "vllm.tool_parsers",
    "vllm.entrypoints.openai.tool_parsers.abstract_tool_parser",
    "vllm.entrypoints.openai.tool_parsers",
)
_PROTOCOL_MODULES = (
    "vllm.entrypoints.generate.base.protocol",
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
        shown(result.reason),
        profile,
    )


def _token_limit(request: Any) -> Optional[int]:
    """The request's limit on generated tokens as vLLM reads it
    (``max_completion_tokens``, else ``max_tokens``); ``None`` when it sets
    none (vLLM then generates up to the context length, which the parser
    is not told)."""
    limit = getattr(request, "max_completion_tokens", None) or getattr(request, "max_tokens", None)
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        return limit
    return None


# Harmony's structural tokens (the o200k_harmony encoding gpt-oss's
# tokenizer carries as added special tokens): a call is
# ``<|start|>assistant<|channel|>commentary to=functions.f<|message|>…<|call|>``.
_HARMONY_TOKENS = ("<|start|>", "<|channel|>", "<|message|>", "<|call|>")


def _harmony_model(tokenizer: Any) -> Optional[str]:
    """Why the model the parser is built for is one vLLM serves through its
    harmony path (gpt-oss), which never consults a tool parser for a
    streamed output; ``None`` when nothing says so.

    vLLM picks that path by the model's ``hf_config.model_type ==
    "gpt_oss"``, which a tool parser is not given: it gets the tokenizer
    (and the request's tools). gpt-oss's tokenizer is read instead: its
    vocabulary holds every one of harmony's structural tokens
    (`_HARMONY_TOKENS`) as a token of its own, or its chat template writes
    ``<|channel|>`` and ``<|call|>``. Either refuses, whatever the model's
    type: a harmony-format model vLLM reads as text (any other type) is
    refused too (loudly, and the proxy serves it). A tokenizer without a
    vocabulary or template to read (no ``get_added_vocab``/``get_vocab``,
    or one that fails) is not taken for harmony.

    vLLM builds a parser per request with the server's one tokenizer, and
    ``get_vocab`` builds the whole vocabulary: the answer is kept per
    tokenizer object (`_HARMONY_SEEN`)."""
    if tokenizer is None:
        return None
    try:
        return _HARMONY_SEEN[tokenizer]
    except (KeyError, TypeError):  # not seen, or not weakly referable/hashable
        pass
    why = _read_harmony(tokenizer)
    try:
        _HARMONY_SEEN[tokenizer] = why
    except TypeError:  # not weakly referable or not hashable: read every time
        pass
    return why


# `_harmony_model`'s answers, per tokenizer object.
_HARMONY_SEEN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _read_harmony(tokenizer: Any) -> Optional[str]:
    """`_harmony_model` on a tokenizer not seen before."""
    for method in ("get_added_vocab", "get_vocab"):
        try:
            vocab = getattr(tokenizer, method)()
        except Exception:  # missing or failing: the next source is read
            continue
        if isinstance(vocab, dict) and all(t in vocab for t in _HARMONY_TOKENS):
            return "its tokenizer has harmony's " + ", ".join(_HARMONY_TOKENS) + " tokens"
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):  # a tokenizer's named templates
        template = "\n".join(t for t in template.values() if isinstance(t, str))
    if isinstance(template, str) and "<|channel|>" in template and "<|call|>" in template:
        return "its chat template writes harmony's <|channel|> and <|call|>"
    return None


def _content(parts: Sequence[str]) -> Optional[str]:
    text = "".join(parts)
    return text or None


def _forced_json(request: Any) -> Optional[tuple]:
    """What vLLM forces the output of `request` to be, as ``("required",
    None)`` (a JSON list of ``{"name", "parameters"}``) or ``("named",
    name)`` (the named tool's arguments object), else ``None``.

    The same rule as vLLM's ``ToolParser.adjust_request``: no tools, no
    constraint; ``required``: the list; a named tool: its ``parameters``
    schema, and no constraint when it has none (``get_json_schema_from_tools``
    returns ``None`` then)."""
    choice = getattr(request, "tool_choice", None)
    tools = _tools(request)
    if not tools:
        return None
    if choice == "required":
        return ("required", None)
    name = getattr(getattr(choice, "function", None), "name", None)
    if not isinstance(name, str):
        return None
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == name:
            return ("named", name) if function.get("parameters") is not None else None
    return None


def _named_call_text(output: str, name: str) -> Optional[str]:
    """The forced output of a named tool as the call toolgate's ``json``
    mode reads: ``{"name": <name>, "arguments": <output>}``, the output
    kept byte for byte so that toolgate parses the arguments itself.
    ``None`` when the output is not one JSON object: text that does not
    start with ``{`` (an array, a string, ``null``: no arguments object),
    or a complete object followed by more text (which the wrapping would
    turn into further keys of the call object). An object that does not
    parse (cut short by ``max_tokens``, malformed) is wrapped all the same:
    its arguments cannot parse either, and toolgate labels it
    (``truncation``, ``malformed_json``)."""
    text = output.strip()
    if not text.startswith("{"):
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):  # RecursionError: nested too deep for Python
        end = len(text)
    if end != len(text):
        return None
    return '{"name": ' + json.dumps(name, ensure_ascii=False) + ', "arguments": ' + text + "}"


class _ForcedJson:
    """toolgate's ``json`` mode on an output vLLM forced to JSON
    (`_forced_json`), with the `StreamParser` members the plugin uses.
    Every delta is held (the whole output is the call); ``finish`` judges
    the whole text. ``end_events`` then shows the output itself when no
    call is released, never the wrapped text of a named tool."""

    def __init__(self, forced: tuple, tools: list) -> None:
        self.kind, self.name = forced
        self.tools = tools
        self.parts: list = []
        self.end_events: list = []

    def feed(self, delta: str) -> list:
        self.parts.append(delta)
        return []

    def finish(self, hit_length_limit: bool = False) -> "toolgate.Result":
        output = "".join(self.parts)
        text = output if self.kind == "required" else _named_call_text(output, self.name)
        if text is None:
            result = toolgate.Result(
                decision="reject", calls=[], label="malformed_json", gate="parse",
                reason=f"the output forced for the named tool `{self.name}` "
                "is not one JSON object",
                reemit=None, telemetry={})
        else:
            stream = toolgate.StreamParser("json", self.tools)
            stream.feed(text)
            result = stream.finish(hit_length_limit=hit_length_limit)
        if not result.executed and output:
            self.end_events = [{"event": "text", "text": output}]
        return result


class _ChoiceStream:
    """One streamed choice: toolgate's stream parser on its text (a
    `_ForcedJson` for an output vLLM forces to JSON; ``None`` for a lost
    choice, which never releases a call) and whether its end was seen."""

    def __init__(self, stream: Any) -> None:
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
        # False: vLLM sends a `required` or named tool_choice through
        # `extract_tool_calls*` as for `auto` (`_stream` judges the JSON
        # vLLM forces for them). True (the base's) lets vLLM build those
        # calls itself from the output's JSON, never calling the parser:
        # calls toolgate never judged (a named call cut short by
        # max_tokens went out with cut arguments).
        supports_required_and_named = False

        def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
            # vLLM up to d0ac579 builds a tool parser with the tokenizer
            # alone; later vLLM (00cd9d76: `Parser.__init__` in
            # vllm/parser/abstract_parser.py) passes the request's tools as
            # well. Whatever the caller passes goes on to the base it
            # belongs to (the allowlist is read from each request).
            why = _harmony_model(tokenizer)
            if why is not None:
                # vLLM serves gpt-oss through its harmony path: a stream's
                # tool calls are built from harmony's own parser and sent
                # without this parser ever being asked (serving_chat.py's
                # `use_harmony` branch up to the `HarmonyParser` of
                # vllm/parser/harmony.py, which refuses any tool parser but
                # its own after building it). A plugin that is built and
                # never asked would let the user believe calls are gated.
                raise toolgate.ToolgateError(
                    f"toolgate: this vLLM tool parser is built for a harmony model (gpt-oss: {why}); "
                    "vLLM serves such a model through its harmony path, which builds tool calls "
                    "itself and does not ask a tool parser about a streamed output, so toolgate "
                    "cannot gate them here: run `toolgate proxy` in front of vLLM instead"
                )
            super().__init__(tokenizer, *args, **kwargs)
            # One stream state per choice, keyed by the text it has read
            # (`_take` says why).
            self._streams: dict = {}

        def _options(self, request: Any) -> dict:
            model = getattr(request, "model", None) if self.PROFILE == "auto" else None
            return {"profile": self.PROFILE, "model": model}

        def _stream(self, request: Any) -> Any:
            """A new judgment of one output of `request`: toolgate's
            ``json`` mode when vLLM forces the output to JSON
            (`_forced_json`), else the profile's stream parser."""
            forced = _forced_json(request)
            if forced is not None:
                return _ForcedJson(forced, _tools(request))
            opts = self._options(request)
            return toolgate.StreamParser(opts["profile"], _tools(request), model=opts["model"])

        def _profile(self, stream: Any) -> str:
            return "json" if isinstance(stream, _ForcedJson) else self.PROFILE

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

        def _cut_by_limit(self, model_output: str, request: Any) -> bool:
            """Whether a whole output of `request` is judged as cut by its
            length limit (``finish_reason: "length"``), which vLLM does not
            tell ``extract_tool_calls``: the tokenizer's count of
            `model_output` reaches the request's limit (`_token_limit`).

            A stop token vLLM strips from the text (harmony's ``<|call|>``)
            is one more generated token, so an output that ended on it
            counts one token under the limit at most; one the limit cut
            counts the limit. With no limit set, ``False`` (a cut by the
            context length is not seen; the module docstring says so).
            A tokenizer that is missing or fails gives ``True``, logged:
            the conservative reading, under which only a call whose
            declared stop-token closer is missing at the end is refused
            (``truncation``); a closed call is served as before."""
            limit = _token_limit(request)
            if limit is None:
                return False
            try:
                count = len(self.model_tokenizer.encode(model_output, add_special_tokens=False))
            except Exception as e:  # any failure (no tokenizer, no encode): conservative
                log.warning(
                    "toolgate: the tokenizer could not count the output (%s): judged as "
                    "cut by max_tokens, a call missing its stop-token closer is refused",
                    shown(f"{type(e).__name__}: {e}"),
                )
                return True
            return count >= limit

        def extract_tool_calls(
            self, model_output: str, request: Any, token_ids: Optional[Sequence[int]] = None
        ) -> Any:
            if token_ids and not model_output:
                # vLLM's harmony path (gpt-oss, `use_harmony`) withholds the
                # text: `extract_tool_calls("", request=..., token_ids=...)`.
                # Judging "" would send no call and no content (the model's
                # answer dropped); decoding the ids would send its analysis
                # channel as content. Refused, loudly (a ValueError).
                raise toolgate.ToolgateError(
                    "toolgate: vLLM's harmony path (gpt-oss) gives the tool parser token ids "
                    "without text, which toolgate does not judge; no call is released "
                    "(run `toolgate proxy` in front of vLLM instead)"
                )
            stream = self._stream(request)
            shown = [e["text"] for e in stream.feed(model_output) if e["event"] == "text"]
            result = stream.finish(hit_length_limit=self._cut_by_limit(model_output, request))
            _log(result, self._profile(stream))
            if not result.executed:
                return Extracted(tools_called=False, tool_calls=[], content=model_output)
            shown += [e["text"] for e in stream.end_events if e["event"] == "text"]
            return Extracted(
                tools_called=True, tool_calls=self._calls(result), content=_content(shown)
            )

        def _ended(self, current_token_ids, delta_token_ids, request) -> tuple:
            """(ended, by the length limit) from the token ids. With the
            request's ``ignore_eos`` vLLM generates on past an EOS, so only
            ``stop_token_ids`` and the length limit end it: reading an EOS
            as the end would release the calls so far and drop (never
            judge, never show) everything after it."""
            ends = set(getattr(request, "stop_token_ids", None) or [])
            eos = getattr(self.model_tokenizer, "eos_token_id", None)
            if isinstance(eos, int) and not getattr(request, "ignore_eos", False):
                ends.add(eos)
            if delta_token_ids and delta_token_ids[-1] in ends:
                return True, False
            limit = _token_limit(request)
            if limit is not None and len(current_token_ids) >= limit:
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
                return _ChoiceStream(self._stream(request))
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
                if self._ended(current_token_ids, delta_token_ids, request)[0]:
                    self._leave_for_vllm(None)
                return DeltaMessage(content=delta_text) if delta_text else None
            stream = state.stream
            shown = [e["text"] for e in stream.feed(delta_text) if e["event"] == "text"]
            ended, by_length = self._ended(current_token_ids, delta_token_ids, request)
            if not ended:
                return DeltaMessage(content=_content(shown)) if shown else None
            state.done = True
            result = stream.finish(hit_length_limit=by_length)
            _log(result, self._profile(stream))
            shown += [e["text"] for e in stream.end_events if e["event"] == "text"]
            calls = self._calls(result) if result.executed else []
            self._leave_for_vllm(result if calls else None)
            if not calls:
                return DeltaMessage(content=_content(shown)) if shown else None
            deltas = []
            for i, call in enumerate(calls):
                head = {"index": i, "id": call.id, "type": "function"}
                if i == 0:
                    # The first entry names the call without arguments: vLLM
                    # replaces a final delta whose first call carries
                    # arguments by one call's "unstreamed arguments"
                    # (`_leave_for_vllm`), which would drop every other
                    # call and the content.
                    deltas.append(DeltaToolCall(
                        **head, function=DeltaFunctionCall(name=call.function.name)))
                    deltas.append(DeltaToolCall(
                        index=0, function=DeltaFunctionCall(arguments=call.function.arguments)))
                    continue
                deltas.append(DeltaToolCall(**head, function=DeltaFunctionCall(
                    name=call.function.name, arguments=call.function.arguments)))
            return DeltaMessage(content=_content(shown), tool_calls=deltas)

        def _leave_for_vllm(self, result: Optional["toolgate.Result"]) -> None:
            """Sets the parser-wide state vLLM reads when a choice ends to
            this choice's released calls (`result`; ``None``: none).

            vLLM shares the parser by every choice and, on a choice's last
            delta, reads ``prev_tool_call_arr`` for its ``finish_reason``
            (``tool_calls`` when it is not empty) and, when the delta's
            first call carries arguments, replaces the delta by the
            arguments "not yet streamed" of ``prev_tool_call_arr[-1]``
            against ``streamed_args_for_tool[-1]``. Set here right before
            the last delta is returned (vLLM runs that code before it calls
            the parser for another choice): a choice that releases nothing
            leaves them empty (its finish reason is vLLM's own), and one
            that releases calls leaves exactly those, every argument
            counted as streamed, so that nothing is left to add."""
            calls = result.calls if result is not None else []
            self.prev_tool_call_arr = [{"name": c.name, "arguments": c.arguments} for c in calls]
            self.streamed_args_for_tool = [
                json.dumps(c.arguments, ensure_ascii=False) for c in calls]
            self.current_tool_id = len(calls) - 1
            self.current_tool_name_sent = bool(calls)

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
