"""Stand-in: the request a tool parser is given (the fields it reads)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class FunctionDefinition:
    name: str
    description: Optional[str] = None
    parameters: Optional[dict] = None


@dataclass
class ChatCompletionToolsParam:
    function: FunctionDefinition
    type: str = "function"

    def model_dump(self, **_: Any) -> dict:
        f = {"name": self.function.name}
        if self.function.description is not None:
            f["description"] = self.function.description
        if self.function.parameters is not None:
            f["parameters"] = self.function.parameters
        return {"type": self.type, "function": f}


@dataclass
class ChatCompletionNamedFunction:
    name: str


@dataclass
class ChatCompletionNamedToolChoiceParam:
    """A named ``tool_choice`` (``{"type": "function", "function": {"name": …}}``)."""

    function: ChatCompletionNamedFunction
    type: str = "function"


@dataclass
class ChatCompletionRequest:
    model: Optional[str] = None
    messages: list = field(default_factory=list)
    tools: Optional[list] = None
    tool_choice: Any = "auto"
    max_tokens: Optional[int] = None
    max_completion_tokens: Optional[int] = None
    stop_token_ids: Optional[list] = None
    ignore_eos: bool = False
    # Set by a tool parser's `adjust_request`.
    structured_outputs: Any = None
    response_format: Any = None
