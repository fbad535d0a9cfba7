"""Stand-in: the protocol types a tool parser returns (field names and
defaults as in vLLM d0ac579)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Optional


def make_tool_call_id() -> str:
    return f"chatcmpl-tool-{uuid.uuid4().hex}"


@dataclass
class FunctionCall:
    name: str
    arguments: str


@dataclass
class ToolCall:
    function: FunctionCall
    id: str = field(default_factory=make_tool_call_id)
    type: str = "function"


@dataclass
class DeltaFunctionCall:
    name: Optional[str] = None
    arguments: Optional[str] = None


@dataclass
class DeltaToolCall:
    index: int
    id: Optional[str] = None
    type: Optional[str] = None
    function: Optional[DeltaFunctionCall] = None


@dataclass
class ExtractedToolCallInformation:
    tools_called: bool
    tool_calls: list
    content: Optional[str] = None


@dataclass
class DeltaMessage:
    role: Optional[str] = None
    content: Optional[str] = None
    reasoning: Optional[str] = None
    tool_calls: list = field(default_factory=list)
