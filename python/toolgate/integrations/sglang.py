"""toolgate as an SGLang function-call detector: fail-closed tool calls for
``sglang.launch_server``.

``install()`` registers ``toolgate_auto`` and ``toolgate_<name>`` (every
built-in profile and mode) in SGLang's ``FunctionCallParser`` registry; run
it before the server builds its parsers (e.g. in a launcher script that
then starts the server), and pass ``--tool-call-parser toolgate_hermes``
(or any other name). ``toolgate_auto`` judges by the profile ``auto`` picks
for the model given to ``install(model=...)`` (a detector does not see the
request's model).

The detector runs toolgate's pipeline with the request's tools as the
allowlist:

- ``detect_and_parse``: ``execute`` gives the calls and the text before them
  as normal text; anything else gives the whole output as normal text and
  no call — never part of a rejected set;
- ``parse_streaming_increment``: text that cannot be part of a call is
  returned at once, everything from the first call opener on is held;
- ``finish`` (SGLang's end of stream, ``parse_stream_end``): the decision on
  the whole text — the calls (whole arguments), or the held text as normal
  text.

Every decision is logged (logger ``toolgate.sglang``) with label, gate and
reason. SGLang's module layout is imported version-tolerantly.

A detector is not told why the output ended, and cannot find out:
SGLang builds it as ``FunctionCallParser(tools, tool_call_parser)`` and
hands it the text alone (``parse_non_stream(text)`` →
``detect_and_parse(text, tools)``; streamed, the increments and
``finish(tools)``); the finish reason stays with the serving layer
(``_process_tool_calls`` in ``serving_chat.py``), and neither the request's
``max_tokens`` nor a tokenizer reaches the detector. So an output the
length limit cut right where a stop-token closer was due (harmony's
``<|call|>``, a stop token of gpt-oss; SGLang's own gpt-oss detector
accepts the call without it) cannot be told from one that ended on that stop token:
the missing closer is excused, as wherever toolgate is given no finish
reason, and the call executes. Every other cut (arguments or markup left
open) is still ``truncation``. SGLang keeps ``finish_reason: "length"`` on
such a choice beside its calls: refuse calls under ``length`` in the client,
or run toolgate's proxy in front of SGLang (without a tool-call parser),
which sees the finish reason.

gpt-oss's output reaches the detector as any other model's (unlike
vLLM's harmony path): at 00828e5 ``is_gpt_oss`` only keeps special tokens in
the text and checks the reasoning effort; whole outputs go through
``_process_tool_calls`` → ``parse_non_stream``, streams through
``_process_tool_call_stream`` → ``parse_stream_chunk`` and, on a finish that
is not ``abort``, ``parse_stream_end`` (an aborted stream sends nothing
held).

``tool_choice`` ``required`` or a named tool never reaches the detector:
SGLang constrains such an output to a JSON list of calls
(``get_structure_constraint`` → ``json_schema``) and reads it with its own
JSON array parser. Those calls are not judged by toolgate; use ``auto``.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Optional, Sequence

import toolgate
from toolgate.integrations._common import import_first, shown, tool_dicts

log = logging.getLogger("toolgate.sglang")


def _import(name: str, modules: Sequence[str]) -> Any:
    return import_first("SGLang", name, modules)


def _tools(tools: Any) -> list:
    return tool_dicts(tools)


def build(profile: str, model: Optional[str] = None) -> type:
    """The detector class judging with `profile` (``auto``: by `model`)."""
    Base = _import("BaseFormatDetector", ("sglang.srt.function_call.base_format_detector",))
    Result = _import("StreamingParseResult", ("sglang.srt.function_call.core_types",))
    Item = _import("ToolCallItem", ("sglang.srt.function_call.core_types",))

    class ToolgateDetector(Base):
        PROFILE = profile
        MODEL = model

        def __init__(self) -> None:
            super().__init__()
            self._stream: Optional[toolgate.StreamParser] = None

        def _parser(self, tools: Any) -> "toolgate.StreamParser":
            m = self.MODEL if self.PROFILE == "auto" else None
            return toolgate.StreamParser(self.PROFILE, _tools(tools), model=m)

        def _items(self, result: "toolgate.Result") -> list:
            return [
                Item(tool_index=i, name=c.name,
                     parameters=json.dumps(c.arguments, ensure_ascii=False))
                for i, c in enumerate(result.calls)
            ]

        def _log(self, r: "toolgate.Result") -> None:
            log.info("toolgate: %s label=%s gate=%s reason=%s profile=%s",
                     r.decision, r.label, r.gate, shown(r.reason), self.PROFILE)

        def has_tool_call(self, text: str) -> bool:
            m = self.MODEL if self.PROFILE == "auto" else None
            return toolgate.parse(text, None, profile=self.PROFILE, model=m).telemetry[
                "candidate_count"] > 0

        def detect_and_parse(self, text: str, tools: Any) -> Any:
            stream = self._parser(tools)
            shown = [e["text"] for e in stream.feed(text) if e["event"] == "text"]
            r = stream.finish()
            self._log(r)
            if not r.executed:
                return Result(normal_text=text, calls=[])
            shown += [e["text"] for e in stream.end_events if e["event"] == "text"]
            return Result(normal_text="".join(shown), calls=self._items(r))

        def parse_streaming_increment(self, new_text: str, tools: Any) -> Any:
            if self._stream is None:
                self._stream = self._parser(tools)
            shown = [e["text"] for e in self._stream.feed(new_text) if e["event"] == "text"]
            return Result(normal_text="".join(shown), calls=[])

        def finish(self, tools: Any) -> Any:
            if self._stream is None:
                return Result(normal_text="", calls=[])
            stream, self._stream = self._stream, None
            r = stream.finish()
            self._log(r)
            tail = "".join(e["text"] for e in stream.end_events if e["event"] == "text")
            if not r.executed:
                return Result(normal_text=tail, calls=[])
            self.current_tool_id = len(r.calls) - 1
            return Result(normal_text=tail, calls=self._items(r))

        def structure_info(self):  # no constrained decoding: toolgate judges after
            raise NotImplementedError("toolgate does not constrain decoding")

        def supports_structural_tag(self) -> bool:
            return False

    ToolgateDetector.__name__ = ToolgateDetector.__qualname__ = f"Toolgate_{profile}_Detector"
    return ToolgateDetector


def install(model: Optional[str] = None) -> list:
    """Registers the detectors with SGLang's ``FunctionCallParser``; returns
    the names."""
    parser = _import("FunctionCallParser", ("sglang.srt.function_call.function_call_parser",))
    names = []
    for name in dict.fromkeys(["auto", *toolgate.profiles(), *toolgate.modes()]):
        parser.ToolCallParserEnum[f"toolgate_{name}"] = build(name, model)
        names.append(f"toolgate_{name}")
    return names
