"""Stand-in: `FunctionCallParser`, its registry of detectors and the calls
SGLang's server makes on it."""

from __future__ import annotations

import inspect
from typing import Dict, Type

from sglang.srt.function_call.base_format_detector import BaseFormatDetector


class FunctionCallParser:
    ToolCallParserEnum: Dict[str, Type[BaseFormatDetector]] = {}

    def __init__(self, tools, tool_call_parser: str, tokenizer=None):
        detector_class = self.ToolCallParserEnum.get(tool_call_parser)
        if detector_class:
            kwargs = {}
            if tokenizer is not None:
                if "tokenizer" in inspect.signature(detector_class).parameters:
                    kwargs["tokenizer"] = tokenizer
            detector = detector_class(**kwargs)
        else:
            raise ValueError(f"Unsupported tool_call_parser: {tool_call_parser}")
        self.detector = detector
        self.tools = tools

    def has_tool_call(self, text: str) -> bool:
        if not self.tools:
            return False
        return self.detector.has_tool_call(text)

    def parse_non_stream(self, full_text: str):
        if not self.tools:
            return full_text, []
        has_tool_call = self.detector.has_tool_call(full_text)
        parsed = self.detector.detect_and_parse(full_text, self.tools)
        if parsed.calls or has_tool_call:
            return parsed.normal_text, parsed.calls
        return full_text, []

    def parse_stream_chunk(self, chunk_text: str):
        if not self.tools:
            return chunk_text, []
        normal, calls = "", []
        sp = self.detector.parse_streaming_increment(chunk_text, self.tools)
        if sp.normal_text:
            normal = sp.normal_text
        if sp.calls:
            calls.extend(sp.calls)
            normal = sp.normal_text
        return normal, calls

    def parse_stream_end(self):
        if not self.tools:
            return "", []
        sp = self.detector.finish(self.tools)
        return sp.normal_text, sp.calls
