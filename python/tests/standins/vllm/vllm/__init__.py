"""A stand-in for vLLM's tool-parser interface, written for toolgate's tests.

vLLM needs torch and a GPU and cannot be installed on CI. This package
reproduces only the names, signatures and behaviour the plugin relies on,
as published by vLLM at commit d0ac57910c16de107f5758d0e530b638d8b0f91b
(`vllm/tool_parsers/abstract_tool_parser.py`,
`vllm/entrypoints/openai/engine/protocol.py`,
`vllm/entrypoints/openai/chat_completion/protocol.py`). Plain dataclasses
stand for vLLM's pydantic models (same field names and defaults). It is
not vLLM's code.
"""

__version__ = "0.0.0+standin.d0ac579"
