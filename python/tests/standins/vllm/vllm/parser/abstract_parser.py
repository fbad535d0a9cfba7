"""Stand-in: how vLLM 00cd9d76 drives a legacy tool parser
(``vllm/parser/abstract_parser.py``: ``Parser.__init__``,
``DelegatingParser.adjust_request``, ``_extract_tool_calls``,
``_extract_tool_calls_streaming``, ``parse``, ``parse_delta`` and
``finalize_generation``), without a
reasoning parser and without structural tags. The serving layer holds one
parser per request, built as ``tool_parser_cls(tokenizer, tools)``.
Reproduced for toolgate's tests; not vLLM's code."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    FunctionCall,
)
from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionNamedToolChoiceParam,
)


@dataclass
class StreamState:
    previous_text: str = ""
    previous_token_ids: list = field(default_factory=list)
    function_name_returned: bool = False


class DelegatingParser:
    tool_parser_cls = None

    def __init__(self, tokenizer, tools=None):
        self.model_tokenizer = tokenizer
        # Legacy ToolParser classes get the tokenizer and the tools.
        self._tool_parser = self.tool_parser_cls(tokenizer, tools)
        self._stream_state = StreamState()

    @property
    def tool_parser(self):
        return self._tool_parser

    def adjust_request(self, request):
        """What the renderer calls before generation (``preprocess_chat``,
        for any tool_choice but ``none``): structural tags first, for a
        tool parser with a ``structural_tag_model`` (none here), then the
        tool parser's own ``adjust_request``."""
        return self._tool_parser.adjust_request(request)

    def _extract_tool_calls(self, content, request, enable_auto_tools=False):
        """(tool calls, content) of a whole output."""
        tool_parser = self._tool_parser
        if request.tool_choice == "none":
            return [], content
        supports = tool_parser.supports_required_and_named
        named = isinstance(request.tool_choice, ChatCompletionNamedToolChoiceParam)
        required = request.tool_choice == "required"
        auto = enable_auto_tools and (
            request.tool_choice == "auto" or request.tool_choice is None
            or (not supports and (named or required)))
        if named and supports:
            if content is None or not content.strip():
                return [], None
            # The output is taken as the arguments, unread.
            return [FunctionCall(name=request.tool_choice.function.name,
                                 arguments=content)], None
        if required and supports:
            calls = []
            try:
                parsed = json.loads(content or "")
            except ValueError:
                parsed = []
            for tc in parsed if isinstance(parsed, list) else []:
                if isinstance(tc, dict) and isinstance(tc.get("name"), str):
                    calls.append(FunctionCall(
                        name=tc["name"],
                        arguments=json.dumps(tc.get("parameters"), ensure_ascii=False)))
            return calls, None
        if auto:
            info = tool_parser.extract_tool_calls(content or "", request=request)
            if info is not None and info.tools_called:
                content = info.content
                if content and content.strip() == "":
                    content = None
                return [FunctionCall(id=tc.id, name=tc.function.name,
                                     arguments=tc.function.arguments)
                        for tc in info.tool_calls], content
            if (required or named) and (content is None or not content.strip()):
                return [], None
            return None, content
        return [], content

    def parse(self, model_output, request, enable_auto_tools=False):
        """(reasoning, content, tool calls) of a whole output."""
        tool_calls, content = self._extract_tool_calls(model_output, request, enable_auto_tools)
        return None, content, tool_calls

    def _extract_tool_calls_streaming(self, previous_text, current_text, delta_text,
                                      previous_token_ids, current_token_ids,
                                      delta_token_ids, request):
        tool_parser = self._tool_parser
        state = self._stream_state
        supports = tool_parser.supports_required_and_named
        if request.tool_choice == "none":
            return DeltaMessage(content=delta_text) if delta_text else None
        if supports and isinstance(request.tool_choice, ChatCompletionNamedToolChoiceParam):
            # `extract_named_tool_call_streaming`: the name once, then the
            # text as arguments, unread.
            if not delta_text:
                return None
            if not state.function_name_returned:
                state.function_name_returned = True
                return DeltaMessage(tool_calls=[DeltaToolCall(
                    index=0, id="chatcmpl-tool-named", type="function",
                    function=DeltaFunctionCall(name=request.tool_choice.function.name,
                                               arguments=delta_text))])
            return DeltaMessage(tool_calls=[DeltaToolCall(
                index=0, function=DeltaFunctionCall(arguments=delta_text))])
        if supports and request.tool_choice == "required":
            # `extract_required_tool_call_streaming` reads the JSON list
            # itself; the parser is never called.
            return None
        return tool_parser.extract_tool_calls_streaming(
            previous_text, current_text, delta_text, previous_token_ids,
            current_token_ids, delta_token_ids, request)

    def _append_unstreamed_tool_args(self, delta_message):
        if delta_message and delta_message.tool_calls and (
                last := delta_message.tool_calls[-1]).function:
            last.function.arguments = (
                (last.function.arguments or "")
                + self._tool_parser.get_remaining_unstreamed_args())

    def finalize_generation(self, delta_message, request, state):
        self._append_unstreamed_tool_args(delta_message)
        return delta_message

    def parse_delta(self, delta_text, delta_token_ids, request, prompt_token_ids=None,
                    *, finished):
        """One streamed delta (no reasoning parser): the tool parser on
        the text so far, then, on the last delta, the final step."""
        state = self._stream_state
        current_text = state.previous_text + delta_text
        current_token_ids = state.previous_token_ids + list(delta_token_ids)
        delta_message = self._extract_tool_calls_streaming(
            state.previous_text, current_text, delta_text, state.previous_token_ids,
            current_token_ids, list(delta_token_ids), request)
        state.previous_text, state.previous_token_ids = current_text, current_token_ids
        if finished:
            delta_message = self.finalize_generation(delta_message, request, state)
        return delta_message


def make_parser(tool_parser_cls, is_harmony=False):
    """The parser class the serving layer builds for a legacy tool parser
    (``ParserManager.get_parser``): ``HarmonyParser`` for a harmony model
    (`is_harmony`: the model's ``hf_config.model_type == "gpt_oss"``)."""
    base = DelegatingParser
    if is_harmony:
        from vllm.parser.harmony import HarmonyParser as base
    return type(f"{tool_parser_cls.__name__}Parser", (base,),
                {"tool_parser_cls": tool_parser_cls})
