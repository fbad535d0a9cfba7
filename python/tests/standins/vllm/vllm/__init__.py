"""A stand-in for vLLM's tool-parser interface, written for toolgate's tests.

vLLM needs torch and a GPU and cannot be installed on CI. This package
reproduces only the names, signatures and behaviour the plugin relies on,
as published by vLLM at commit 00cd9d767248a33eba1c079134547457cc641085:
`ToolParser(tokenizer, tools=None)` with `supports_required_and_named` and
`get_remaining_unstreamed_args` and `adjust_request`'s JSON constraint for
a `required` or named `tool_choice` (`vllm/tool_parsers/abstract_tool_parser.py`,
`get_json_schema_from_tools` in `vllm/tool_parsers/utils.py`,
`StructuredOutputsParams` in `vllm/sampling_params.py`), the protocol types (`vllm/entrypoints/generate/base/protocol.py`), the
request (`vllm/entrypoints/openai/chat_completion/protocol.py`) and how
the serving layer builds and drives a legacy tool parser (`Parser` and
`DelegatingParser` in `vllm/parser/abstract_parser.py`: the constructor
call, `adjust_request`, the routing of `required`/named `tool_choice`, the final delta's
unstreamed arguments), and the parser vLLM builds for a harmony model
(`HarmonyParser` in `vllm/parser/harmony.py`, picked by `ParserManager.get_parser`'s
`is_harmony`, with the `GptOssToolParser` it requires). `chat_completion/serving.py` keeps the end-of-choice
step of the older vLLM d0ac57910c16de107f5758d0e530b638d8b0f91b, whose
`ToolParser` took the tokenizer alone (the tests build that one too).
Plain dataclasses stand for vLLM's pydantic models (same field names and
defaults). It is not vLLM's code.
"""

__version__ = "0.0.0+standin.00cd9d7"
