"""Stand-in: ``StructuredOutputsParams`` (``vllm/sampling_params.py``), the
constraint a tool parser's ``adjust_request`` puts on a request: only the
fields that step sets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class StructuredOutputsParams:
    json: Optional[Any] = None
    structural_tag: Optional[str] = None
