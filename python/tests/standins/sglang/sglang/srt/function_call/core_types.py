"""Stand-in: the results a detector returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ToolCallItem:
    tool_index: int
    name: Optional[str] = None
    parameters: str = ""


@dataclass
class StreamingParseResult:
    normal_text: str = ""
    calls: list = field(default_factory=list)
