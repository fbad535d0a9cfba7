"""Stand-in: what vLLM d0ac579's ``OpenAIServingChat.chat_completion_stream_generator``
does with a tool parser's delta when the choice finishes (auto tool choice,
no structured output): the "unstreamed tool arg tokens" step
(``_should_check_for_unstreamed_tool_arg_tokens`` and
``_create_remaining_args_delta``) and the choice's ``finish_reason``. The
parser is shared by every choice (``[self.tool_parser(tokenizer)] *
num_choices``), so this reads parser-wide state. Reproduced for toolgate's
tests; not vLLM's code. (vLLM 00cd9d76 does this step in
``DelegatingParser.finalize_generation``: `vllm/parser/abstract_parser.py`.)"""

from __future__ import annotations

import json

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
)


def _should_check_for_unstreamed_tool_arg_tokens(delta_message, finish_reason) -> bool:
    return bool(
        finish_reason is not None
        and delta_message
        and delta_message.tool_calls
        and delta_message.tool_calls[0]
        and delta_message.tool_calls[0].function
        and delta_message.tool_calls[0].function.arguments is not None
    )


def _create_remaining_args_delta(delta_message, remaining_call, index):
    # Keeps the id, type and name of the call at `index`, nothing else.
    original = next((tc for tc in delta_message.tool_calls if tc.index == index), None)
    fn = original.function if original else None
    return DeltaMessage(tool_calls=[DeltaToolCall(
        index=index,
        id=original.id if original else None,
        type=original.type if original else None,
        function=DeltaFunctionCall(name=fn.name if fn else None, arguments=remaining_call),
    )])


def end_of_choice(tool_parser, delta_message, finish_reason, tools_streamed):
    """The delta vLLM sends on a choice's last output and its
    ``finish_reason``. `finish_reason`: the engine's (``stop``,
    ``length``); `tools_streamed`: whether an earlier delta of this choice
    carried tool calls."""
    auto_tools_called = len(tool_parser.prev_tool_call_arr) > 0
    index = len(tool_parser.prev_tool_call_arr) - 1 if auto_tools_called else 0
    if _should_check_for_unstreamed_tool_arg_tokens(delta_message, finish_reason):
        latest_delta_len = 0
        function = delta_message.tool_calls[0].function
        if isinstance(function, DeltaFunctionCall) and isinstance(function.arguments, str):
            latest_delta_len = len(function.arguments)
        expected_call = json.dumps(
            tool_parser.prev_tool_call_arr[index].get("arguments", {}), ensure_ascii=False)
        actual_call = tool_parser.streamed_args_for_tool[index]
        if latest_delta_len > 0:
            actual_call = actual_call[:-latest_delta_len]
        remaining_call = expected_call.replace(actual_call, "", 1)
        delta_message = _create_remaining_args_delta(delta_message, remaining_call, index)
    if auto_tools_called or tools_streamed or (delta_message and delta_message.tool_calls):
        finish_reason = "tool_calls"
    return delta_message, finish_reason
