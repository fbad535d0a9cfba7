"""Stand-in: `BaseFormatDetector`'s state and the methods a detector
provides (one-shot, streaming increment, end of stream)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from sglang.srt.function_call.core_types import StreamingParseResult


class BaseFormatDetector(ABC):
    def __init__(self):
        self._buffer = ""
        self.prev_tool_call_arr = []
        self.current_tool_id = -1
        self.current_tool_name_sent = False
        self.streamed_args_for_tool = []
        self.bot_token = ""
        self.eot_token = ""
        self.tool_call_separator = ", "

    @abstractmethod
    def detect_and_parse(self, text, tools) -> StreamingParseResult:
        raise NotImplementedError

    def parse_streaming_increment(self, new_text, tools) -> StreamingParseResult:
        raise NotImplementedError

    def finish(self, tools) -> StreamingParseResult:
        # The base releases what it still holds as normal text.
        held, self._buffer = self._buffer, ""
        return StreamingParseResult(normal_text=held)

    @abstractmethod
    def has_tool_call(self, text: str) -> bool:
        raise NotImplementedError

    def structure_info(self):
        raise NotImplementedError

    def supports_structural_tag(self) -> bool:
        return False
