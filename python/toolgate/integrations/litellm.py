"""toolgate as a LiteLLM guardrail: fail-closed tool calls on every response.

On the LiteLLM proxy it is a post-call guardrail (``guardrails:`` in
config.yaml, ``guardrail: toolgate.integrations.litellm.ToolgateGuardrail``,
``mode: post_call``): ``async_post_call_success_hook`` judges every
response before it is returned, and ``async_post_call_streaming_iterator_hook``
every streamed one — every request's, without ``default_on``, whether or
not the request names the guardrail in its metadata, and no metadata turns
it off (``disable_global_guardrails``, ``opted_out_global_guardrails``):
``should_run_guardrail`` is always true for ``post_call``. A subclass (to
set ``profile``, say) streams through the guardrail too: LiteLLM wraps a
stream only with an ``async_post_call_streaming_iterator_hook`` the
callback's own class defines (``ProxyLogging.callback_capabilities``,
1.110.2), so every subclass gets the hook in its own class. With the SDK, call
``ToolgateGuardrail().judge(response, tools, model)`` on what
``litellm.completion`` returns (success callbacks run after the response
is returned, too late to change it). The allowlist is the request's
``tools`` (and legacy ``functions``), narrowed as ``toolgate proxy``
narrows it by a ``tool_choice`` that names a tool or lists
``allowed_tools`` (a call of another tool is ``wrong_tool``; ``"none"``
keeps them all); tools, or a choice, that cannot be read allowlist
nothing.

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

Before judging, every response (and every streamed chunk) goes through
the proxy's own shape check (``toolgate_core::answer``, through
``toolgate._native.check_answer``/``check_chunk``): what ``toolgate proxy
--mode enforce`` answers with a 502 "could not be checked" raises
:class:`toolgate.ToolgateError` with the same reason ("the answer cannot
be checked: …") — an unknown call-bearing key (``function_calls``,
``Tool_Calls``, a choice's or the answer's ``tool_calls``), a key that
clients matching keys in any case read as one the check reads
(``Message`` beside ``message``, ``Content``), a key the check does
not know holding an object (or a list of objects) with a call-bearing key
(a top-level ``message`` with ``tool_calls`` beside ``choices``, a choice's
``messages`` list), a ``delta``
where the ``message`` belongs, a call whose ``id`` is not a string, whose
``arguments`` are not a string, with an unknown field or of another type
than ``function``, and ``content`` that is not a string or null (litellm's
``Message.content`` is a string; a list of parts is refused as the proxy
refuses it). litellm's own keys (``provider_specific_fields``,
``thinking_blocks``, ``annotations``…) are not call-bearing and pass; the
one litellm key the proxy's rule would refuse, ``provider_specific_fields``
on a tool call (Gemini's thought signature), is litellm's, not the
upstream's, and is left out of the check. Responses and messages may be
litellm objects or plain dicts; each is written back the way it was read.

Only chat completions are judged, and a response without ``choices`` is
refused (:class:`toolgate.ToolgateError`) unless it is of a kind that
cannot carry a tool call: litellm's embedding, image, transcription,
speech, rerank and moderation responses (or, as dicts, an embedding list or
an image response). A Responses API response, an Anthropic message, a
Gemini ``generateContent`` answer, an Interactions response — anything else
— may carry calls the guardrail cannot read: fail closed. A text completion
has ``choices`` without a ``message`` and is refused by the shape check.

**Streaming**: text that cannot be part of a call is forwarded as it
arrives, and so is every other delta field (``role``, ``reasoning_content``,
``thinking_blocks`` with their signatures, ``refusal``, ``audio``,
``provider_specific_fields``…), each choice's own fields (``logprobs``,
``stop_reason``, ``matched_stop``…: ``logprobs`` is null, and Together's
copy of the content as ``text`` is what was forwarded, in a chunk whose
text is held in part, as the proxy sends it, so the held tokens do not
leak) and each chunk's top-level fields (``usage``,
``system_fingerprint``, provider fields); everything from the
first call opener on, every native ``tool_calls``/``function_call`` delta
and every ``finish_reason`` are held until the stream ends, then the
decision above is sent as one last chunk per choice (the held text, the
calls, the finish reason; the last one also carries the ``usage`` of a
chunk that was held). A streamed choice without an ``index`` is the one at
its position in the chunk's ``choices``, as the importer and the proxy read
it. Each chunk first passes the proxy's shape check; one
that fails it raises :class:`toolgate.ToolgateError` and the stream is cut
with nothing held released. A stream whose iterator fails releases no call
either. A stream that ends cleanly is judged choice by choice, a choice
without a ``finish_reason`` as the proxy judges it at ``[DONE]``. The
guardrail cannot tell ``[DONE]`` from an upstream that closed cleanly
without it (which the proxy treats as broken when a choice has not
finished): litellm ends its stream the same way for both, and adds a
``finish_reason`` itself.

Each verdict is logged (logger ``toolgate.litellm``) and kept on the
response in ``response._hidden_params["toolgate"]`` (one per choice:
decision, label, gate, reason; on a stream, on its last chunk).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, AsyncGenerator, Optional

import toolgate
from toolgate import ToolgateError, _native
from toolgate.integrations._common import shown, tool_dicts

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


def _content_text(content: Any) -> str:
    """The model text of a message's (or delta's) ``content``: a string or
    null (anything else was refused by the shape check, as the proxy
    refuses it)."""
    return content if isinstance(content, str) else ""


def _check_shape(response: Any, chunk: bool = False) -> None:
    """Runs ``toolgate proxy --mode enforce``'s shape check
    (``toolgate_core::answer``) on the plain form of `response` (a chat
    completion, or one stream chunk when `chunk`): where the proxy answers
    502 "unchecked", this raises :class:`toolgate.ToolgateError` with the
    same reason. litellm's own ``provider_specific_fields`` on a tool call
    (where it keeps e.g. Gemini's thought signature) is not the upstream's
    and carries no call (its name is not call-bearing), so it is not part
    of what is checked."""
    plain = _plain(response)
    for choice in (plain.get("choices") if isinstance(plain, dict) else None) or []:
        body = choice.get("delta" if chunk else "message") if isinstance(choice, dict) else None
        calls = body.get("tool_calls") if isinstance(body, dict) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                call.pop("provider_specific_fields", None)
    try:
        text = json.dumps(plain, allow_nan=False)
    except (TypeError, ValueError) as e:
        why = f"it is not JSON ({e})"
    else:
        why = (_native.check_chunk if chunk else _native.check_answer)(text)
    if why is not None:
        # json.dumps writes a lone surrogate as a `\ud800` escape, which
        # the check refuses as JSON it cannot read ("unexpected end of hex
        # escape"): say what it is and where, as the core API does.
        lone = _lone_surrogate(plain)
        if lone is not None:
            where, at = lone
            why = (f"{where} is not valid Unicode: a lone surrogate at index {at} "
                   "cannot be encoded as UTF-8")
    if why is not None:
        what = "the stream" if chunk else "the answer"
        raise ToolgateError(
            f"toolgate: {what} cannot be checked: {why}: "
            + ("it is cut" if chunk else "it is not returned")
        )


#: A surrogate code point: in a Python str, always a lone one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any, where: str = "the answer") -> Optional[tuple]:
    """(where, index) of the first lone surrogate in a string of `value`
    (a plain response: dicts, lists, strings), or None."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return (where, found.start()) if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _SURROGATE.search(key) if isinstance(key, str) else None
            if found is not None:
                return (f"a key of {where}", found.start())
            inner = key if where == "the answer" else f"{where}.{key}"
            lone = _lone_surrogate(item, inner)
            if lone is not None:
                return lone
    elif isinstance(value, list):
        for i, item in enumerate(value):
            lone = _lone_surrogate(item, f"{where}[{i}]")
            if lone is not None:
                return lone
    return None


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
    return _narrowed(tools, data)


def _tool_name(tool: Any) -> Any:
    function = tool.get("function") if isinstance(tool, dict) else None
    if isinstance(function, dict):
        return function.get("name")
    return tool.get("name") if isinstance(tool, dict) else None


def _narrowed(tools: list, data: dict) -> list:
    """`tools` narrowed by the request's ``tool_choice`` (and legacy
    ``function_call``) as ``toolgate proxy`` narrows them
    (``toolgate._native.allowed_names``); a choice that cannot be read
    allowlists nothing (logged)."""
    choice = {k: data[k] for k in ("tool_choice", "function_call") if data.get(k) is not None}
    if not choice:
        return tools
    try:
        names = _native.allowed_names(json.dumps(choice, default=_plain))
    except (ValueError, TypeError) as e:
        log.warning("toolgate: %s: nothing is allowlisted", shown(str(e)))
        return []
    if names is None:
        return tools
    return [t for t in tools if _tool_name(t) in names]


def _stream_index(index: Any, default: int) -> int:
    """A streamed ``index`` as the proxy reads it (serde's ``as_u64``): a
    non-negative integer, else `default`."""
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < 2**64:
        return index
    return default


def _says_something(delta: dict) -> bool:
    """Whether a streamed delta adds to its choice (as the proxy reads it):
    text, reasoning, a call or a legacy call; a role or "" adds nothing."""
    for key in ("content", "reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str) and delta[key]:
            return True
    return bool(delta.get("tool_calls")) or delta.get("function_call") is not None


def _fills_index(delta: Any) -> bool:
    """Whether `delta` is litellm's ``Delta``, whose constructor sets a
    tool call's missing ``index`` to its position in the list (0 for a
    server that sends each call whole in a delta of its own without
    ``index``): its indexes may be that filler, not the upstream's, and
    are placed as ``_native.CallSlots`` places a filled one."""
    try:
        from litellm.types.utils import Delta
    except ImportError:  # pragma: no cover - a delta cannot be one then
        return False
    return isinstance(delta, Delta)


class _Choice:
    """One choice being judged: its text through toolgate's stream parser
    (so that prose can be forwarded while it streams), its native calls,
    legacy call, reasoning and finish reason, and at the end the decision
    on all of it as one set."""

    def __init__(self, profile: str, tools: list, model: Optional[str],
                 one_call: bool = False) -> None:
        self.tools = tools
        self.profile = profile
        self.model = model
        # The request set ``parallel_tool_calls: false``.
        self.one_call = one_call
        self.stream = toolgate.StreamParser(
            profile, tools, model=model if profile == "auto" else None
        )
        self.text: list = []
        self.forwarded = 0
        self.reasoning: list = []
        # (index, calls before it at that index) -> {"id", "type", "function":
        # {"name", "arguments"}, "given_id", maybe "extra_content"}
        # ("given_id" is never sent).
        self.native: dict = {}
        # Which call of `native` each streamed fragment belongs to (the
        # proxy's rule), and the calls' names.
        self.slots = _native.CallSlots()
        # Whether the answer had a ``tool_calls`` list (even an empty one:
        # the proxy judges ``[]`` as a list and serves none).
        self.has_list = False
        self.native_objects: list = []  # the upstream's own objects (non-streamed)
        self.legacy: Optional[dict] = None
        # The streamed legacy call's name, by the rule of every streamed
        # call (``_native.CallSlots.place_legacy``).
        self.legacy_slots = _native.CallSlots()
        self.finish: Optional[str] = None

    def feed(self, text: str) -> str:
        """Pushes content text; returns what may be forwarded now."""
        if not text:
            return ""
        self.text.append(text)
        shown = "".join(e["text"] for e in self.stream.feed(text) if e["event"] == "text")
        self.forwarded += len(shown)
        return shown

    def add_native_delta(self, delta: Any, position: int = 0, index_filled: bool = False) -> None:
        """Adds one streamed ``tool_calls`` entry, assembled exactly as
        ``toolgate proxy`` assembles it, so both judge the same set: the
        proxy's and the importer's rule (``_native.CallSlots``) says which
        call it belongs to — by ``id``, else the latest call at its
        ``index`` (`position` in the delta's list without one), or the next
        call there (Ollama and Gemini's OpenAI shims stream parallel calls
        each at index 0, or without index, each whole in one delta) — and
        its name (a second name joins the first, never a rename the
        arguments could run under); ``arguments`` pieces are concatenated.
        `index_filled`: the delta came through litellm's ``Delta``, which
        sets a missing ``index`` to the delta's position (:func:`_fills_index`).
        Raises :class:`ToolgateError` (the proxy breaks the stream there)
        on a delta that cannot be placed, or one call too many."""
        raw_index = _get(delta, "index")
        index = _stream_index(raw_index, -1)
        new_id = _get(delta, "id")
        if not isinstance(new_id, str) or new_id == "":
            new_id = None  # an empty id is none, as in the proxy
        function = _get(delta, "function")
        name = _get(function, "name")
        arguments = _get(function, "arguments")
        place, reuse, number = self.slots.place(
            index if index >= 0 else None, position,
            new_id, name if isinstance(name, str) else None,
            arguments if isinstance(arguments, str) else None,
            _native.MAX_STREAMED_CALLS, index_filled)
        call = self.native.setdefault((place, reuse), {
            # The id the proxy gives a call streamed without one.
            "id": f"call_upstream{place}" if reuse == 0 else f"call_upstream{place}_{reuse}",
            "type": "function",
            "function": {"name": "", "arguments": ""},
            "given_id": None,
            "number": number,
        })
        # The first id stands, as in the proxy and the importer.
        if new_id is not None and call["given_id"] is None:
            call["id"] = new_id
            call["given_id"] = new_id
        # The call's vendor metadata (Gemini's thought signature, which
        # Gemini 3 needs back on the next turn), first sent, relayed as the
        # proxy relays it; the shape check refused one that could bear a call.
        extra = _get(delta, "extra_content")
        if extra is not None and "extra_content" not in call:
            call["extra_content"] = _plain(extra)
        if isinstance(arguments, str):
            call["function"]["arguments"] += arguments

    def add_legacy_delta(self, delta: Any) -> None:
        """Adds one streamed legacy ``function_call`` as ``toolgate proxy``
        and the importer do: its one call, named by the rule of every
        streamed call (``_native.CallSlots.place_legacy``: a name repeated
        in every fragment is read once, another joins it), ``arguments``
        pieces concatenated (anything but strings is ignored, as the proxy
        ignores it)."""
        if self.legacy is None:
            self.legacy = {"name": "", "arguments": ""}
        name = _get(delta, "name")
        arguments = _get(delta, "arguments")
        self.legacy_slots.place_legacy(name if isinstance(name, str) else None,
                                       arguments if isinstance(arguments, str) else None)
        self.legacy["name"] = self.legacy_slots.name(0)
        if isinstance(arguments, str):
            self.legacy["arguments"] += arguments

    def end(self) -> dict:
        """The decision on the whole choice: the verdict and what is served
        (``tool_calls`` to send as dicts, ``function_call``, the content
        still to show from what was forwarded on, ``finish_reason``,
        whether the text's calls execute). Decided by the same code as
        ``toolgate proxy --mode enforce`` (the validator's ``output``
        judgment): the text and the native set as one set."""
        calls = []
        for i in sorted(self.native):
            call = {k: v for k, v in self.native[i].items()
                    if k not in ("given_id", "number")}
            if "number" in self.native[i]:  # streamed: the slots hold its name
                call["function"] = dict(call["function"],
                                        name=self.slots.name(self.native[i]["number"]))
            calls.append(call)
        report, problems = _native.judge_choice(
            "".join(self.text),
            json.dumps(self.tools, ensure_ascii=False),
            json.dumps(calls, ensure_ascii=False) if calls or self.has_list else None,
            json.dumps(self.legacy, ensure_ascii=False) if self.legacy is not None else None,
            self.profile,
            self.model if self.profile == "auto" else None,
            "".join(self.reasoning) or None,
            self.finish if isinstance(self.finish, str) else None,
            self.forwarded,
            self.one_call,
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


def _no_call_types() -> tuple:
    """litellm's response types that cannot carry a tool call: embeddings,
    images, transcriptions, speech, reranks, moderations (those this
    litellm has)."""
    import litellm

    names = ("EmbeddingResponse", "ImageResponse", "TranscriptionResponse",
             "RerankResponse", "OpenAIModerationResponse", "HttpxBinaryResponseContent")
    return tuple(t for t in (getattr(litellm, n, None) for n in names) if isinstance(t, type))


#: The keys of one item of an image response (OpenAI's ``data[i]``).
_IMAGE_KEYS = frozenset(("url", "b64_json", "revised_prompt"))


def _carries_no_calls(response: Any) -> bool:
    """Whether a response without ``choices`` is of a kind that cannot
    carry a tool call: one of litellm's embedding, image, transcription,
    speech, rerank or moderation types, or as a dict an embedding list
    (``object: "list"``, every item ``object: "embedding"``) or an image
    response (every ``data`` item only ``url``/``b64_json``/
    ``revised_prompt``). Everything else — a Responses API response, an
    Anthropic message, a Gemini ``generateContent`` answer, an Interactions
    response, whatever comes next — may hold calls the guardrail cannot
    read, so it is refused: fail closed."""
    if not isinstance(response, dict):
        return isinstance(response, _no_call_types())
    data = response.get("data")
    if not isinstance(data, list) or set(response) - {"object", "data", "model", "usage",
                                                      "created"}:
        return False
    if response.get("object") == "list":
        return all(isinstance(d, dict) and d.get("object") == "embedding" for d in data)
    return "object" not in response and all(
        isinstance(d, dict) and set(d) <= _IMAGE_KEYS for d in data)


def _log(verdict: dict) -> None:
    log.info(
        "toolgate: %s label=%s gate=%s reason=%s",
        verdict["decision"], verdict["label"], verdict["gate"], shown(verdict["reason"]),
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

    # The hooks LiteLLM only calls when the callback's own class defines
    # them (`_LEAF_HOOKS`); `__init_subclass__` keeps them there.
    _LEAF_HOOKS = ("async_post_call_streaming_iterator_hook",)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass (to set a profile, a name) gets the streaming hook in
        its own class dict. LiteLLM (1.110.2, ``ProxyLogging.
        callback_capabilities``) wraps a stream with a callback's
        ``async_post_call_streaming_iterator_hook`` only when
        ``type(callback).__dict__`` has it, not its bases: a subclass that
        inherited it was never wrapped, its stream went out unjudged, and
        the success hook ran on the assembled response after it was sent.
        A subclass's own hook is kept."""
        super().__init_subclass__(**kwargs)
        for name in ToolgateGuardrail._LEAF_HOOKS:
            if name not in cls.__dict__:
                setattr(cls, name, getattr(cls, name))

    def should_run_guardrail(self, data: Any, event_type: Any) -> Any:
        """The post-call hooks run on every response, whatever the request
        says. LiteLLM's own rule runs a guardrail only when the request names
        it in ``metadata.guardrails`` unless the config sets ``default_on:
        true``, and even then lets metadata opt out
        (``disable_global_guardrails``, ``opted_out_global_guardrails``; a
        request's ``disable_global_guardrail`` in older LiteLLM): a
        fail-closed gate that metadata can switch off, or that a config
        without ``default_on`` never switches on, lets calls through
        unjudged. Other
        event types (the guardrail has no hooks for them) keep LiteLLM's
        rule."""
        if getattr(event_type, "value", event_type) == "post_call":
            return True
        base = getattr(super(), "should_run_guardrail", None)
        return base(data, event_type) if base is not None else False

    def judge(self, response: Any, tools: Optional[list], model: Optional[str] = None,
              parallel_tool_calls: Optional[bool] = None) -> list:
        """Applies toolgate to every choice of `response` (in place);
        returns the verdicts. `tools`: the request's tools (``None``: the
        request declared none, so nothing is allowlisted);
        `parallel_tool_calls`: the request's (``False``: more than one call
        rejects the choice, as the proxy rejects it)."""
        return self._judge(response, allowlist({"tools": _plain(tools)}), model,
                           parallel_tool_calls is False)

    def _judge(self, response: Any, tools: list, model: Optional[str],
               one_call: bool = False) -> list:
        choices = _get(response, "choices", None)
        if choices is None and not _carries_no_calls(response):
            raise ToolgateError(
                f"toolgate: a {type(response).__name__} "
                f"({_get(response, 'object', None) or _get(response, 'type', None)}) "
                "is not a chat completion: it cannot be checked for tool calls, "
                "so it is not returned"
            )
        if choices is not None:
            _check_shape(response)
        verdicts = []
        for choice in choices or []:
            # Every choice has a message object (checked above).
            verdicts.append(self._judge_choice(choice, _get(choice, "message"), tools, model,
                                               one_call))
        hidden = getattr(response, "_hidden_params", None)
        if isinstance(hidden, dict):
            hidden["toolgate"] = verdicts
        return verdicts

    def _judge_choice(self, choice: Any, message: Any, tools: list, model: Optional[str],
                      one_call: bool = False) -> dict:
        """Judges one checked choice and writes back what the proxy serves:
        the same ``tool_calls`` (none on reject, and no empty list), content
        and ``finish_reason``."""
        content = _get(message, "content")
        state = _Choice(self.profile, tools, model, one_call)
        state.feed(_content_text(content))
        # Read as the proxy reads it: ``reasoning_content``, else
        # ``reasoning`` (not read beside a null ``reasoning_content``).
        plain = _plain(message)
        reasoning = (plain.get("reasoning_content") if "reasoning_content" in plain
                     else plain.get("reasoning"))
        if isinstance(reasoning, str):
            state.reasoning.append(reasoning)
        listed = _get(message, "tool_calls")
        native = listed or []
        state.has_list = listed is not None
        for i, call in enumerate(native):
            # Judged as the upstream sent it, as the proxy judges it.
            state.native[(i, 0)] = _plain(call)
        legacy = _get(message, "function_call")
        if legacy is not None:
            state.legacy = _plain(legacy)
        state.finish = _get(choice, "finish_reason")
        served = state.end()
        verdict = served["verdict"]
        _log(verdict)
        sends = bool(served["native_calls"] or served["text_calls"])
        if not sends and listed is not None:
            # Fail closed on reject (the whole set goes, never part of
            # it); an empty list is dropped as the proxy drops it.
            _set(message, "tool_calls", None)
        if served["function_call"] is None and legacy is not None:
            _set(message, "function_call", None)
        if sends and served["text_calls"]:
            new = served["text_calls"]
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
            _set(message, "content", text if text.strip() else None)
        # Always the served one, as the proxy serves it (a null one is stop).
        if served["finish_reason"] != state.finish:
            _set(choice, "finish_reason", served["finish_reason"])
        return verdict

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any, response: Any):
        self._judge(response, allowlist(data), data.get("model"),
                    data.get("parallel_tool_calls") is False)
        return response

    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict
    ) -> AsyncGenerator[Any, None]:
        """Forwards prose (and every other delta field) as it streams,
        holds every possible call, and sends the decision on the whole
        choice once the stream has ended (module docstring). A stream that
        fails releases nothing; a chunk the proxy could not check raises
        ToolgateError."""
        data = request_data or {}
        tools = allowlist(data)
        model = data.get("model")
        one_call = data.get("parallel_tool_calls") is False
        states: dict = {}
        after: list = []  # chunks without choices (usage): sent after the decisions
        last: Any = None
        usage: Any = None  # the usage of a chunk that was held (sent with the decisions)
        async for chunk in response:
            choices = _get(chunk, "choices")
            if choices is None:
                raise ToolgateError(
                    f"toolgate: a streamed {type(chunk).__name__} is not a chat completion chunk: "
                    "the stream cannot be checked for tool calls, so it is cut"
                )
            _check_shape(chunk, chunk=True)
            last = chunk
            if not choices:
                after.append(chunk)
                continue
            out = []
            for position, c in enumerate(choices):
                # A choice without an ``index`` is the one at its position in
                # this chunk's ``choices``, as the importer and the proxy read
                # it (an index that is not a non-negative integer was refused
                # by the shape check).
                index = _stream_index(_get(c, "index"), position)
                state = states.get(index)
                if state is None:
                    if len(states) >= _native.MAX_CHOICES:
                        raise ToolgateError(
                            f"toolgate: the stream has more than {_native.MAX_CHOICES} choices: "
                            "it cannot be checked, so it is cut"
                        )
                    state = states[index] = _Choice(self.profile, tools, model, one_call)
                raw_delta = _get(c, "delta")
                index_filled = _fills_index(raw_delta)
                delta = _plain(raw_delta) or {}
                if state.finish is not None and _says_something(delta):
                    # What it would add was never judged with its set (the
                    # proxy breaks such a stream too).
                    raise ToolgateError(
                        f"toolgate: choice {index} went on after its finish_reason: "
                        "the stream cannot be checked, so it is cut"
                    )
                text = _content_text(delta.get("content"))
                shown = state.feed(text)
                # `reasoning_content`, else `reasoning`, as the proxy reads it.
                reasoning = delta.get("reasoning_content")
                if not isinstance(reasoning, str):
                    reasoning = delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    state.reasoning.append(reasoning)
                for position, call in enumerate(delta.get("tool_calls") or []):
                    try:
                        state.add_native_delta(call, position, index_filled)
                    except ToolgateError as e:
                        # The proxy breaks the stream there too.
                        raise ToolgateError(
                            f"toolgate: choice {index}: {e}: "
                            "the stream cannot be checked, so it is cut"
                        ) from None
                legacy = delta.get("function_call")
                if legacy is not None:
                    state.add_legacy_delta(legacy)
                finish = _get(c, "finish_reason")
                # `""` and `"null"` are no finish (SGLang 0.4.3, KoboldCpp);
                # the first finish stands, as in the proxy.
                if isinstance(finish, str) and finish not in ("", "null") and state.finish is None:
                    state.finish = finish
                # Everything but what is held: the content not yet shown,
                # the calls, the finish reason.
                d = {k: v for k, v in delta.items()
                     if k not in _HELD and v is not None and v != ""}
                if shown:
                    d["content"] = shown
                # The choice's own fields beside its delta (``logprobs``,
                # ``stop_reason``, ``matched_stop``…) are passed on, as the
                # proxy relays them; but when some of this chunk's text is
                # held, so are its tokens: ``logprobs`` becomes null (the
                # proxy's rule, measured in UTF-8 bytes as it measures).
                own = {k: v for k, v in (_plain(c) or {}).items()
                       if k not in ("index", "delta", "finish_reason") and v is not None}
                withheld = len(shown.encode("utf-8")) < len(text.encode("utf-8"))
                if withheld and "logprobs" in own:
                    own["logprobs"] = None
                # Together repeats the delta's content as the choice's
                # ``text``: it says what is forwarded, as the proxy sends it.
                if withheld and isinstance(own.get("text"), str):
                    own["text"] = shown
                if d or any(v is not None for k, v in own.items() if k != "logprobs"):
                    out.append({"index": index, "delta": d, **own})
            if out:
                yield _chunk_like(chunk, out)
            elif _get(chunk, "usage") is not None:
                usage = _get(chunk, "usage")
        # The stream ended as litellm ends it: after the upstream's [DONE],
        # or at a clean close (where litellm adds a finish_reason itself).
        # A choice without a finish_reason is judged as the proxy judges it
        # at [DONE].
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
                                        "finish_reason": served["finish_reason"]}],
                                usage=usage if index == max(states) else None)
            if index == max(states):
                hidden = getattr(final, "_hidden_params", None)
                if isinstance(hidden, dict):
                    final._hidden_params = {**hidden, "toolgate": verdicts}
            yield final
        for chunk in after:
            yield chunk


#: Delta fields the stream hook holds until the decision.
_HELD = frozenset(("content", "tool_calls", "function_call"))


#: `_chunk_like`'s default: the chunk's own usage.
_OWN = object()


def _chunk_like(chunk: Any, choices: list, usage: Any = _OWN) -> Any:
    """A chunk with `choices` and every other top-level field of `chunk`
    (id, created, model, system_fingerprint, usage, provider fields…), its
    ``usage`` replaced by `usage` when given (the decision chunks carry the
    usage of a chunk that was held, or none). A litellm
    ``ModelResponseStream``, or a dict for a dict."""
    head = {k: v for k, v in (_plain(chunk) or {}).items() if k != "choices"}
    if usage is not _OWN:
        head["usage"] = _plain(usage)
    if head.get("usage") is None:
        head.pop("usage", None)
    if isinstance(chunk, dict):
        return {**head, "object": "chat.completion.chunk", "choices": choices}
    import litellm

    head.pop("object", None)
    return litellm.ModelResponseStream(choices=choices, **head)
