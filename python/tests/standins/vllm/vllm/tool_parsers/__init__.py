from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

__all__ = ["ToolParser", "ToolParserManager"]
