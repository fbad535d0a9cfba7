"""toolgate as a LiteLLM guardrail: fail-closed tool calls on every response.

On the LiteLLM proxy it is a post-call guardrail (``guardrails:`` in
config.yaml, ``guardrail: toolgate.integrations.litellm.ToolgateGuardrail``,
``mode: post_call``): ``async_post_call_success_hook`` judges every
response before it is returned. With the SDK, call
``ToolgateGuardrail().judge(response, tools, model)`` on what
``litellm.completion`` returns (success callbacks run after the response
is returned, too late to change it). On each chat completion response, per
choice:

- **raw text** (a server that returns tool syntax in ``content``): toolgate's
  pipeline runs on it with the request's ``tools`` as the allowlist (the
  profile ``auto`` picks for the request's model unless ``profile=`` is
  given). ``execute`` turns the calls into ``tool_calls`` (the text before
  them stays the content, ``finish_reason`` becomes ``tool_calls``);
  anything else leaves the text as it is, with no tool call.
- **native ``tool_calls``**: judged as one set by the ``native`` mode's
  gates (allowlist, strict schema). A rejected set is removed whole — never
  part of it — and the choice finishes with ``stop``.

Each verdict is logged (logger ``toolgate.litellm``) and kept on the
response in ``response._hidden_params["toolgate"]`` (one per choice:
decision, label, gate, reason).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any, Optional

import toolgate

log = logging.getLogger("toolgate.litellm")

try:  # the guardrail base of current LiteLLM; a plain logger otherwise
    from litellm.integrations.custom_guardrail import CustomGuardrail as _Base
except ImportError:  # pragma: no cover - depends on the LiteLLM version
    from litellm.integrations.custom_logger import CustomLogger as _Base


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _plain(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    if isinstance(obj, list):
        return [_plain(o) for o in obj]
    return obj


class ToolgateGuardrail(_Base):
    """The post-call hook; ``profile``: a toolgate profile or ``auto``."""

    def __init__(self, profile: str = "auto", **kwargs: Any) -> None:
        kwargs.setdefault("guardrail_name", "toolgate")
        try:
            super().__init__(**kwargs)
        except TypeError:  # a CustomLogger without guardrail arguments
            super().__init__()
        self.profile = profile

    def judge(self, response: Any, tools: Optional[list], model: Optional[str] = None) -> list:
        """Applies toolgate to every choice of `response` (in place);
        returns the verdicts."""
        tools = _plain(tools) or []
        verdicts = []
        for choice in _get(response, "choices", None) or []:
            message = _get(choice, "message")
            if message is None:
                continue
            native = _get(message, "tool_calls")
            content = _get(message, "content") or ""
            if native:
                verdict = self._native(choice, message, native, content, tools)
            else:
                verdict = self._text(choice, message, content, tools, model)
            log.info(
                "toolgate: %s label=%s gate=%s reason=%s",
                verdict["decision"], verdict["label"], verdict["gate"], verdict["reason"],
            )
            verdicts.append(verdict)
        hidden = getattr(response, "_hidden_params", None)
        if isinstance(hidden, dict):
            hidden["toolgate"] = verdicts
        return verdicts

    def _text(self, choice, message, content, tools, model) -> dict:
        profile = self.profile
        stream = toolgate.StreamParser(profile, tools, model=model if profile == "auto" else None)
        shown = [e["text"] for e in stream.feed(content) if e["event"] == "text"]
        r = stream.finish()
        if r.executed:
            from litellm.types.utils import ChatCompletionMessageToolCall, Function

            shown += [e["text"] for e in stream.end_events if e["event"] == "text"]
            message.tool_calls = [
                ChatCompletionMessageToolCall(
                    id=f"call_{uuid.uuid4().hex[:24]}",
                    type="function",
                    function=Function(
                        name=c.name, arguments=json.dumps(c.arguments, ensure_ascii=False)
                    ),
                )
                for c in r.calls
            ]
            message.content = "".join(shown) or None
            choice.finish_reason = "tool_calls"
        return {"decision": r.decision, "label": r.label, "gate": r.gate, "reason": r.reason}

    def _native(self, choice, message, native, content, tools) -> dict:
        calls = [_plain(c) for c in native]
        record = toolgate.label(
            {"output": content, "tools": tools, "tool_calls": calls}, profile="native"
        )
        p = record["profile"]
        verdict = {"decision": p["decision"], "label": p["label"], "gate": p["gate"],
                   "reason": None}
        if p["decision"] != "execute":
            # Fail closed: the whole set goes, never part of it.
            message.tool_calls = None
            choice.finish_reason = "stop"
            verdict["reason"] = f"native tool_calls rejected at the {p['gate']} gate"
        return verdict

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any, response: Any):
        self.judge(response, data.get("tools"), data.get("model"))
        return response
