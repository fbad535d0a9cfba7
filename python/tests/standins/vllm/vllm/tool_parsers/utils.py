"""Stand-in: ``get_json_schema_from_tools`` (``vllm/tool_parsers/utils.py``),
the JSON schema vLLM constrains a ``required`` or named ``tool_choice`` to,
for chat requests: ``required``, an array of at least one
``{"name": <a tool's name>, "parameters": <its parameters>}`` object (a
tool without parameters: an empty object's schema); a named tool, that
tool's ``parameters`` alone (``None``, no constraint, when it has none);
anything else, ``None``. The Responses API's ``ToolChoiceFunction`` and
namespaced tools are left out. Reproduced for toolgate's tests; not
vLLM's code."""

from __future__ import annotations

from typing import Any, Optional

from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionNamedToolChoiceParam,
    ChatCompletionToolsParam,
)


def _tool_schema(name: str, params: Optional[dict]) -> dict:
    params = params if params else {"type": "object", "properties": {}}
    return {
        "properties": {
            "name": {"type": "string", "enum": [name]},
            "parameters": params,
        },
        "required": ["name", "parameters"],
    }


def get_json_schema_from_tools(tool_choice: Any, tools: Optional[list]) -> Any:
    if tool_choice in ("none", None) or tools is None:
        return None
    if isinstance(tool_choice, ChatCompletionNamedToolChoiceParam):
        by_name = {t.function.name: t for t in tools if isinstance(t, ChatCompletionToolsParam)}
        if tool_choice.function.name not in by_name:
            raise ValueError(f"Tool '{tool_choice.function.name}' has not been passed in `tools`.")
        return by_name[tool_choice.function.name].function.parameters
    if tool_choice == "required":
        return {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "anyOf": [
                    _tool_schema(t.function.name, t.function.parameters)
                    for t in tools
                    if isinstance(t, ChatCompletionToolsParam)
                ],
            },
        }
    return None
