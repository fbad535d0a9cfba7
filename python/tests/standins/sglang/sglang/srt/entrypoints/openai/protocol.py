"""Stand-in: the request's tool definitions (field names as in SGLang)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class Function:
    name: Optional[str] = None
    description: Optional[str] = None
    parameters: Optional[dict] = None
    strict: bool = False


@dataclass
class Tool:
    function: Function
    type: str = "function"

    def model_dump(self, **_: Any) -> dict:
        f = {"name": self.function.name}
        if self.function.description is not None:
            f["description"] = self.function.description
        if self.function.parameters is not None:
            f["parameters"] = self.function.parameters
        return {"type": self.type, "function": f}
