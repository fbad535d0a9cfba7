"""toolgate as a LiteLLM guardrail: fail-closed tool calls on every response.

On the LiteLLM proxy it is a post-call guardrail (``guardrails:`` in
config.yaml, ``guardrail: toolgate.integrations.litellm.ToolgateGuardrail``,
``mode: post_call``): ``async_post_call_success_hook`` judges every
response before it is returned, and ``async_post_call_streaming_iterator_hook``
every streamed one. With the SDK, call
``ToolgateGuardrail().judge(response, tools, model)`` on what
``litellm.completion`` returns (success callbacks run after the response
is returned, too late to change it). The allowlist is the request's
``tools`` (and legacy ``functions``), whatever ``tool_choice`` says, as in
``toolgate proxy``; tools that cannot be read allowlist nothing.

Each choice is judged as ``toolgate proxy --mode enforce`` judges it: the
pipeline on the text of ``content`` (the profile ``auto`` picks for the
request's model unless ``profile=`` is given) and the ``native`` mode's
gates on the native ``tool_calls`` and a legacy ``function_call``, **as one
set**: one failing call — raw or native — rejects them all.

- **rejected**: no ``tool_calls``, no ``function_call``; the content stays
  as it was; ``finish_reason`` ``tool_calls``/``function_call`` becomes
  ``stop``.
- **executed**: the native calls as sent, then the text's calls with fresh
  ``call_…`` ids; the text before the calls stays the content;
  ``finish_reason`` becomes ``tool_calls`` (``function_call`` for an
  approved legacy call alone).
- **no call**: the choice is left as it is.

``content`` may be a string, null, or a list of parts: ``text`` and
``output_text`` parts are read (``refusal``/``reference`` parts hold no
model text); any other part cannot be checked and raises
:class:`toolgate.ToolgateError` — fail closed, nothing is returned
unchecked. Responses and messages may be litellm objects or plain dicts;
each is written back the way it was read.

Only chat completions are judged. A response of another shape that can
carry tool calls — a Responses API response (``/v1/responses``, its
``function_call`` items) or an Anthropic message (``/v1/messages``, its
``tool_use`` blocks) — raises :class:`toolgate.ToolgateError`, as an
unknown streamed chunk does; responses that carry no tool calls
(embeddings, images, audio, moderations) pass unchanged.

**Streaming**: text that cannot be part of a call is forwarded as it
arrives; everything from the first call opener on, every native
``tool_calls``/``function_call`` delta and every ``finish_reason`` are held
until the stream ends, then the decision above is sent as one last chunk per
choice (the held text, the calls, the finish reason). A stream that ends
before every choice has a ``finish_reason``, or that fails, releases no call
and raises :class:`toolgate.ToolgateError` (``toolgate proxy`` cuts such a
stream the same way).

Each verdict is logged (logger ``toolgate.litellm``) and kept on the
response in ``response._hidden_params["toolgate"]`` (one per choice:
decision, label, gate, reason; on a stream, on its last chunk).
"""

from __future__ import annotations

import json
import logging
from typing import Any, AsyncGenerator, Optional

import toolgate
from toolgate import ToolgateError, _native
from toolgate.integrations._common import tool_dicts

log = logging.getLogger("toolgate.litellm")

try:  # the guardrail base of current LiteLLM; a plain logger otherwise
    from litellm.integrations.custom_guardrail import CustomGuardrail as _Base
except ImportError:  # pragma: no cover - depends on the LiteLLM version
    from litellm.integrations.custom_logger import CustomLogger as _Base


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _set(obj: Any, key: str, value: Any) -> None:
    """Writes `key` the way `_get` reads it."""
    if isinstance(obj, dict):
        obj[key] = value
    else:
        setattr(obj, key, value)


def _plain(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    if isinstance(obj, list):
        return [_plain(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj


#: Content parts read as model text (as the importers and the proxy read them).
_TEXT_PARTS = ("text", "output_text")
#: Parts that hold no model text.
_SKIPPED_PARTS = ("refusal", "reference")


def _content_text(content: Any) -> str:
    """The model text of a message's (or delta's) ``content``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for i, part in enumerate(content):
            kind = _get(part, "type")
            text = _get(part, "text")
            if kind in _TEXT_PARTS and isinstance(text, str):
                out.append(text)
            elif kind in _SKIPPED_PARTS:
                continue
            else:
                raise ToolgateError(
                    f"toolgate: `content[{i}]` is not a text part (type {kind or 'missing'}): "
                    "the response cannot be checked for tool calls, so it is not returned"
                )
        return "".join(out)
    raise ToolgateError(
        f"toolgate: `content` is a {type(content).__name__}, not text or a list of parts: "
        "the response cannot be checked for tool calls, so it is not returned"
    )


def _content_back(original: Any, text: Optional[str]) -> Any:
    """`text` (what is left of the content on execute) in the shape
    `original` had: a string (None when empty), or its parts with the text
    parts replaced by one part holding `text`."""
    if not isinstance(original, list):
        return text
    out, placed = [], False
    for part in original:
        if _get(part, "type") in _TEXT_PARTS:
            if not placed and text:
                kind = _get(part, "type")
                out.append({"type": kind, "text": text} if isinstance(part, dict) else
                           type(part)(**{**_plain(part), "text": text}))
            placed = True
            continue
        out.append(part)
    return out or None


def allowlist(data: dict) -> list:
    """The request's ``tools`` and legacy ``functions`` as tool definitions;
    anything unreadable allowlists nothing (logged)."""
    tools = []
    raw = data.get("tools")
    if raw is not None:
        if not isinstance(raw, list):
            log.warning("toolgate: the request's `tools` are not a list: nothing is allowlisted")
            return []
        try:
            tools += tool_dicts(raw)
        except ToolgateError as e:
            log.warning("%s in the request's `tools`: nothing is allowlisted", e)
            return []
    functions = data.get("functions")
    if isinstance(functions, list):
        try:
            tools += [{"type": "function", "function": f} for f in tool_dicts(functions)]
        except ToolgateError as e:
            log.warning("%s in the request's `functions`: nothing is allowlisted", e)
            return []
    elif functions is not None:
        log.warning("toolgate: the request's `functions` are not a list: nothing is allowlisted")
        return []
    return tools


def _stream_index(index: Any, default: int) -> int:
    """A streamed ``index`` as the proxy reads it (serde's ``as_u64``): a
    non-negative integer, else `default`."""
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < 2**64:
        return index
    return default


def _append_pieces(into: dict, function: Any) -> None:
    """Concatenates the string ``name`` and ``arguments`` of a streamed
    function piece onto `into` (anything else is ignored, as the proxy
    ignores it)."""
    if function is None:
        return
    for key in ("name", "arguments"):
        piece = _get(function, key)
        if isinstance(piece, str):
            into[key] += piece


class _Choice:
    """One choice being judged: its text through toolgate's stream parser
    (so that prose can be forwarded while it streams), its native calls,
    legacy call, reasoning and finish reason, and at the end the decision
    on all of it as one set."""

    def __init__(self, profile: str, tools: list, model: Optional[str]) -> None:
        self.tools = tools
        self.profile = profile
        self.model = model
        self.stream = toolgate.StreamParser(
            profile, tools, model=model if profile == "auto" else None
        )
        self.text: list = []
        self.forwarded = 0
        self.reasoning: list = []
        self.native: dict = {}  # index -> {"id", "type", "function": {"name", "arguments"}}
        self.native_objects: list = []  # the upstream's own objects (non-streamed)
        self.legacy: Optional[dict] = None
        self.finish: Optional[str] = None

    def feed(self, text: str) -> str:
        """Pushes content text; returns what may be forwarded now."""
        if not text:
            return ""
        self.text.append(text)
        shown = "".join(e["text"] for e in self.stream.feed(text) if e["event"] == "text")
        self.forwarded += len(shown)
        return shown

    def add_native_delta(self, delta: Any, position: int = 0) -> None:
        """Adds one streamed ``tool_calls`` entry, assembled exactly as
        ``toolgate proxy`` assembles it, so both judge the same set: the
        call is the one at its ``index`` (`position` in the delta's list
        when the index is not a non-negative integer); a non-null ``id``
        replaces the one before (``call_upstream<index>`` without one);
        ``name`` and ``arguments`` pieces are concatenated (only strings: a
        name sent twice is one longer name, never a rename the arguments
        could run under)."""
        index = _stream_index(_get(delta, "index"), position)
        call = self.native.setdefault(index, {
            # The id the proxy gives a call streamed without one.
            "id": f"call_upstream{index}", "type": "function",
            "function": {"name": "", "arguments": ""},
        })
        if _get(delta, "id") is not None:
            call["id"] = _get(delta, "id")
        _append_pieces(call["function"], _get(delta, "function"))

    def add_legacy_delta(self, delta: Any) -> None:
        """Adds one streamed legacy ``function_call`` as ``toolgate proxy``
        does: ``name`` and ``arguments`` pieces concatenated."""
        if self.legacy is None:
            self.legacy = {"name": "", "arguments": ""}
        _append_pieces(self.legacy, delta)

    def end(self) -> dict:
        """The decision on the whole choice: the verdict and what is served
        (``tool_calls`` to send as dicts, ``function_call``, the content
        still to show from what was forwarded on, ``finish_reason``,
        whether the text's calls execute). Decided by the same code as
        ``toolgate proxy --mode enforce`` (the validator's ``output``
        judgment): the text and the native set as one set."""
        calls = [self.native[i] for i in sorted(self.native)]
        report, problems = _native.judge_choice(
            "".join(self.text),
            json.dumps(self.tools, ensure_ascii=False),
            json.dumps(calls, ensure_ascii=False) if calls else None,
            json.dumps(self.legacy, ensure_ascii=False) if self.legacy is not None else None,
            self.profile,
            self.model if self.profile == "auto" else None,
            "".join(self.reasoning) or None,
            self.finish if isinstance(self.finish, str) else None,
            self.forwarded,
        )
        for problem in problems:
            log.warning("toolgate: tools: %s", problem)
        j = json.loads(report)
        verdict = {"decision": j["decision"], "label": j["label"], "gate": j["gate"],
                   "reason": j["reason"]}
        return {
            "verdict": verdict,
            "native_calls": j["native_calls"],
            "text_calls": j["text_calls"],
            "function_call": j["function_call"],
            "finish_reason": j["finish_reason"],
            "rest": j["content"] or "",
            "executes_text": j["text_calls_execute"],
            "changes": j["decision"] != "no_call",
        }


def _carries_calls(response: Any) -> bool:
    """Whether a response that is not a chat completion could still hold
    tool calls the guardrail cannot read: a Responses API response
    (``object: "response"``, ``output`` items such as ``function_call``)
    or an Anthropic message (``type: "message"``, ``tool_use`` blocks).
    Embeddings, images, audio, moderations… hold none."""
    if _get(response, "object", None) == "response" or isinstance(
            _get(response, "output", None), list):
        return True
    return _get(response, "type", None) == "message" or (
        _get(response, "role", None) == "assistant"
        and isinstance(_get(response, "content", None), list))


def _log(verdict: dict) -> None:
    log.info(
        "toolgate: %s label=%s gate=%s reason=%s",
        verdict["decision"], verdict["label"], verdict["gate"], verdict["reason"],
    )


class ToolgateGuardrail(_Base):
    """The post-call hooks; ``profile``: a toolgate profile or ``auto``."""

    def __init__(self, profile: str = "auto", **kwargs: Any) -> None:
        kwargs.setdefault("guardrail_name", "toolgate")
        try:
            super().__init__(**kwargs)
        except TypeError:  # a CustomLogger without guardrail arguments
            super().__init__()
        self.profile = profile

    def judge(self, response: Any, tools: Optional[list], model: Optional[str] = None) -> list:
        """Applies toolgate to every choice of `response` (in place);
        returns the verdicts. `tools`: the request's tools (``None``: the
        request declared none, so nothing is allowlisted)."""
        return self._judge(response, allowlist({"tools": _plain(tools)}), model)

    def _judge(self, response: Any, tools: list, model: Optional[str]) -> list:
        choices = _get(response, "choices", None)
        if choices is None and _carries_calls(response):
            raise ToolgateError(
                f"toolgate: a {type(response).__name__} "
                f"({_get(response, 'object', None) or _get(response, 'type', None)}) "
                "is not a chat completion: its tool calls cannot be checked, so it is not returned"
            )
        verdicts = []
        for choice in choices or []:
            message = _get(choice, "message")
            if message is None:
                continue
            verdicts.append(self._judge_choice(choice, message, tools, model))
        hidden = getattr(response, "_hidden_params", None)
        if isinstance(hidden, dict):
            hidden["toolgate"] = verdicts
        return verdicts

    def _judge_choice(self, choice: Any, message: Any, tools: list, model: Optional[str]) -> dict:
        content = _get(message, "content")
        state = _Choice(self.profile, tools, model)
        state.feed(_content_text(content))
        reasoning = _get(message, "reasoning_content")
        if isinstance(reasoning, str):
            state.reasoning.append(reasoning)
        native = _get(message, "tool_calls") or []
        for i, call in enumerate(native):
            plain = _plain(call)
            state.native[i] = {"id": _get(plain, "id"), "type": _get(plain, "type") or "function",
                               "function": _plain(_get(plain, "function"))}
        legacy = _get(message, "function_call")
        if legacy is not None:
            state.legacy = _plain(legacy)
        state.finish = _get(choice, "finish_reason")
        served = state.end()
        verdict = served["verdict"]
        _log(verdict)
        if not served["changes"]:
            return verdict
        if verdict["decision"] == "reject":
            # Fail closed: the whole set goes, never part of it.
            if native or _get(message, "tool_calls") is not None:
                _set(message, "tool_calls", None)
            if legacy is not None:
                _set(message, "function_call", None)
        else:
            new = served["text_calls"]
            if new:
                if not isinstance(message, dict):
                    from litellm.types.utils import ChatCompletionMessageToolCall, Function

                    new = [ChatCompletionMessageToolCall(
                        id=c["id"], type="function", function=Function(**c["function"]))
                        for c in new]
                # The native calls as the upstream sent them, then the text's.
                _set(message, "tool_calls", list(native) + new)
            if served["executes_text"]:
                text = "".join(state.text)[: state.forwarded] + served["rest"]
                # What is left beside the calls; only whitespace is no content.
                _set(message, "content", _content_back(content, text if text.strip() else None))
        _set(choice, "finish_reason", served["finish_reason"])
        return verdict

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any, response: Any):
        self._judge(response, allowlist(data), data.get("model"))
        return response

    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict
    ) -> AsyncGenerator[Any, None]:
        """Forwards prose as it streams, holds every possible call, and
        sends the decision on the whole choice once the stream has ended
        (module docstring). A stream that ends before every choice
        finished releases nothing and raises ToolgateError."""
        data = request_data or {}
        tools = allowlist(data)
        model = data.get("model")
        states: dict = {}
        after: list = []  # chunks without choices (usage): sent after the decisions
        last: Any = None
        async for chunk in response:
            choices = _get(chunk, "choices")
            if choices is None:
                raise ToolgateError(
                    f"toolgate: a streamed {type(chunk).__name__} is not a chat completion chunk: "
                    "the stream cannot be checked for tool calls, so it is cut"
                )
            last = chunk
            if not choices:
                after.append(chunk)
                continue
            out = []
            for c in choices:
                index = _stream_index(_get(c, "index"), 0)
                state = states.get(index)
                if state is None:
                    state = states[index] = _Choice(self.profile, tools, model)
                delta = _get(c, "delta")
                shown = state.feed(_content_text(_get(delta, "content")))
                reasoning = _get(delta, "reasoning_content")
                if isinstance(reasoning, str) and reasoning:
                    state.reasoning.append(reasoning)
                for position, call in enumerate(_get(delta, "tool_calls") or []):
                    state.add_native_delta(call, position)
                legacy = _get(delta, "function_call")
                if legacy is not None:
                    state.add_legacy_delta(legacy)
                finish = _get(c, "finish_reason")
                if finish:
                    state.finish = finish
                role = _get(delta, "role")
                if shown or reasoning or role:
                    d = {"content": shown or None}
                    if role:
                        d["role"] = role
                    if reasoning:
                        d["reasoning_content"] = reasoning
                    out.append({"index": index, "delta": d})
            if out:
                yield _chunk_like(chunk, out)
        unfinished = sorted(i for i, s in states.items() if s.finish is None)
        if unfinished:
            raise ToolgateError(
                "toolgate: the stream ended before choice "
                + ", ".join(map(str, unfinished))
                + " finished: its held text and calls are not released"
            )
        verdicts = []
        for index in sorted(states):
            served = states[index].end()
            verdicts.append(served["verdict"])
            _log(served["verdict"])
            delta: dict = {"content": served["rest"] or None}
            calls = served["native_calls"] + served["text_calls"]
            if calls:
                delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(calls)]
            if served["function_call"] is not None:
                delta["function_call"] = served["function_call"]
            final = _chunk_like(last, [{"index": index, "delta": delta,
                                        "finish_reason": served["finish_reason"]}])
            if index == max(states):
                hidden = getattr(final, "_hidden_params", None)
                if isinstance(hidden, dict):
                    final._hidden_params = {**hidden, "toolgate": verdicts}
            yield final
        for chunk in after:
            yield chunk


def _chunk_like(chunk: Any, choices: list) -> Any:
    """A chunk with `choices`, the id, created time and model of `chunk`
    (a litellm ``ModelResponseStream``, or a dict for a dict)."""
    head = {"id": _get(chunk, "id"), "created": _get(chunk, "created"),
            "model": _get(chunk, "model")}
    if isinstance(chunk, dict):
        return {**head, "object": "chat.completion.chunk", "choices": choices}
    import litellm

    return litellm.ModelResponseStream(choices=choices, **head)
