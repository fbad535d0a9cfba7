"""Stand-in: the protocol types a tool parser returns, where vLLM 00cd9d76
keeps them (``vllm/entrypoints/generate/base/protocol.py``; d0ac579 had
them in ``vllm/entrypoints/openai/engine/protocol.py``). Field names and
defaults as there; ``FunctionCall`` has the ``id`` the serving layer
carries from a parser's call."""

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
    id: Optional[str] = None


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
