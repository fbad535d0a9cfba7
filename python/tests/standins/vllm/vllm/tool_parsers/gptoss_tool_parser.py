"""Stand-in: ``GptOssToolParser`` (``vllm/tool_parsers/gptoss_tool_parser.py``),
vLLM's own tool parser for gpt-oss, only as the class `HarmonyParser` accepts
(``--tool-call-parser openai``). Its methods are not reproduced: the harmony
path builds the calls itself. Reproduced for toolgate's tests; not vLLM's
code."""

from __future__ import annotations

from vllm.tool_parsers.abstract_tool_parser import ToolParser


class GptOssToolParser(ToolParser):
    pass
