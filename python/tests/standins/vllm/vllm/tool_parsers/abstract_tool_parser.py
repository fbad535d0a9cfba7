"""Stand-in: `ToolParser` and `ToolParserManager` as vLLM 00cd9d76 publishes
them (the class flags the serving layer reads, the constructor with the
request's tools, ``get_remaining_unstreamed_args``, ``adjust_request``'s
JSON constraint for a ``required`` or named tool_choice, the two extraction
methods, eager registration, lookup and loading a plugin file by path).
Up to d0ac579 the constructor took the tokenizer alone."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Sequence

from vllm.sampling_params import StructuredOutputsParams
from vllm.tool_parsers.utils import get_json_schema_from_tools


class ToolParser:
    # True: the serving layer builds the calls of a `required` or named
    # tool_choice itself (JSON), never calling the parser; False: it calls
    # `extract_tool_calls`/`extract_tool_calls_streaming` as for `auto`.
    supports_required_and_named: bool = True
    structural_tag_model = None
    engine_based_streaming: bool = False

    def __init__(self, tokenizer, tools=None):
        self.prev_tool_call_arr: list = []
        self.current_tool_id: int = -1
        self.current_tool_name_sent: bool = False
        self.streamed_args_for_tool: list = []
        self.model_tokenizer = tokenizer
        self.tools = list(tools) if tools else []

    def get_remaining_unstreamed_args(self) -> str:
        # The last call's arguments in `prev_tool_call_arr` past what
        # `streamed_args_for_tool` says was streamed.
        if not self.prev_tool_call_arr:
            return ""
        index = len(self.prev_tool_call_arr) - 1
        args = self.prev_tool_call_arr[index].get("arguments", {})
        expected = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        actual = (self.streamed_args_for_tool[index]
                  if index < len(self.streamed_args_for_tool) else "")
        if expected.startswith(actual):
            return expected[len(actual):]
        return ""

    def adjust_request(self, request):
        # The base's JSON-schema step: a `required` or named tool_choice
        # constrains the output to `get_json_schema_from_tools`'s schema,
        # overriding any response format the request set. (Parsers with a
        # `structural_tag_model` get structural tags from the
        # DelegatingParser instead; the stand-in has none.)
        if not request.tools:
            return request
        schema = get_json_schema_from_tools(request.tool_choice, request.tools)
        if schema is not None:
            request.structured_outputs = StructuredOutputsParams(json=schema)
            request.response_format = None
        return request

    def extract_tool_calls(self, model_output: str, request):
        raise NotImplementedError

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request,
    ):
        raise NotImplementedError


class ToolParserManager:
    tool_parsers: dict = {}
    lazy_parsers: dict = {}

    @classmethod
    def get_tool_parser(cls, name: str):
        if name in cls.tool_parsers:
            return cls.tool_parsers[name]
        raise KeyError(f"Tool parser '{name}' not found.")

    @classmethod
    def register_module(cls, name=None, force: bool = True, module=None):
        if not isinstance(force, bool):
            raise TypeError(f"force must be a boolean, but got {type(force)}")
        if module is None:
            raise NotImplementedError("the stand-in registers modules eagerly only")
        if not issubclass(module, ToolParser):
            raise TypeError(f"module must be subclass of ToolParser, but got {type(module)}")
        names = [name] if isinstance(name, str) else (name or [module.__name__])
        for n in names:
            if not force and n in cls.tool_parsers:
                raise KeyError(f"{n} is already registered")
            cls.tool_parsers[n] = module
        return module

    @classmethod
    def list_registered(cls) -> list:
        return sorted(set(cls.tool_parsers) | set(cls.lazy_parsers))

    @classmethod
    def import_tool_parser(cls, plugin_path: str) -> None:
        # vLLM's `--tool-parser-plugin`: the file is imported under its stem.
        module_name = os.path.splitext(os.path.basename(plugin_path))[0]
        spec = importlib.util.spec_from_file_location(module_name, plugin_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
