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
    """A request's tools as JSON-ready dicts (pydantic models or dicts).

    Raises ToolgateError naming the first entry that is neither (a string,
    a number…), or naming `tools` when it is not a list: an unreadable
    tool list is refused, never guessed at."""
    from toolgate import ToolgateError

    if tools is None:
        return []
    if not isinstance(tools, (list, tuple)):
        raise ToolgateError(
            f"toolgate: the tools are a {type(tools).__name__}, not a list of tool definitions"
        )
    out = []
    for i, tool in enumerate(tools):
        if isinstance(tool, dict):
            out.append(tool)
        elif hasattr(tool, "model_dump"):
            out.append(tool.model_dump(exclude_none=True))
        else:
            raise ToolgateError(
                f"toolgate: tools[{i}] is a {type(tool).__name__} ({tool!r:.40}), "
                "not a tool definition"
            )
    return out


def shown(text: Any) -> Any:
    """`text` as it may go into a log line: a verdict's ``reason`` quotes
    the model's own text (a tool name it made up), which may hold an ANSI
    escape, a bidi override or a newline that forges a log line. Shown by
    the rule of everything toolgate prints (``toolgate._native.one_line``:
    such characters become visible escapes); anything not a str as it is."""
    from toolgate import _native

    return _native.one_line(text) if isinstance(text, str) else text
