"""Stand-in: how vLLM builds the parser of a harmony model (gpt-oss).

At 00cd9d76 the serving layer asks ``ParserManager.get_parser(...,
is_harmony=self.model_config.hf_config.model_type == "gpt_oss")``
(``vllm/entrypoints/openai/chat_completion/serving.py``), which returns
``HarmonyParser`` (``vllm/parser/harmony.py``) for such a model whatever
``--tool-call-parser`` names. ``HarmonyParser.__init__`` first builds the
tool parser as every ``DelegatingParser`` does (``Parser.__init__``:
``tool_parser_cls(tokenizer, tools)``), then refuses one that is not a
``GptOssToolParser`` (the check is in every version of
``vllm/parser/harmony.py`` read for this stand-in). Its ``parse`` and
``parse_delta`` build tool calls from harmony's ``StreamableParser`` and
never call the tool parser's ``extract_tool_calls*``; they are not
reproduced. Reproduced for toolgate's tests; not vLLM's code."""

from __future__ import annotations

from vllm.parser.abstract_parser import DelegatingParser
from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser


class HarmonyParser(DelegatingParser):
    def __init__(self, tokenizer, tools=None):
        super().__init__(tokenizer, tools)
        if self.tool_parser and not isinstance(self.tool_parser, GptOssToolParser):
            raise ValueError(
                "Harmony requires GptOssToolParser, "
                f"got {self.tool_parser.__class__.__name__}."
            )
