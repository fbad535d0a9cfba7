"""Pieces the serving-stack integrations (vLLM, SGLang) share."""

import importlib
from typing import Any, Sequence


def import_first(stack: str, name: str, modules: Sequence[str]) -> Any:
    """`name` from the first of `modules` that has it: a stack's protocol
    types move between its releases, so each is looked for in every place
    it has lived. Raises ImportError naming every place tried."""
    errors = []
    for module in modules:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError as e:
            errors.append(f"{module}: {e}")
            continue
        if found is not None:
            return found
        errors.append(f"{module}: no {name}")
    raise ImportError(f"{stack}'s {name} not found ({'; '.join(errors)})")


def tool_dicts(tools: Any) -> list:
    """A request's tools as JSON-ready dicts (pydantic models or dicts)."""
    out = []
    for tool in tools or []:
        if isinstance(tool, dict):
            out.append(tool)
        elif hasattr(tool, "model_dump"):
            out.append(tool.model_dump(exclude_none=True))
        else:  # pragma: no cover - an unknown shape is passed as it is
            out.append(dict(tool))
    return out
