"""Type stubs of the extension module `toolgate._native` (crates/python).

`tools_json=None` is an unknown tool list (SPEC §4: nothing allowlisted,
labels decided without the tool definitions, the report's `findings` hold
`tools_unknown`), not `"[]"` (no tool allowed). `parse`, `Gate.parse`,
`StreamParser.feed` and `StreamParser.finish` release the GIL while the
Rust work runs."""

from typing import Optional

__version__: str

class ToolgateError(ValueError): ...

MAX_CHOICES: int

def parse(
    output: str,
    tools_json: Optional[str] = None,
    profile: Optional[str] = None,
    model: Optional[str] = None,
    reasoning: Optional[str] = None,
) -> tuple[str, list[str]]: ...
def judge_choice(
    content: str,
    tools_json: str,
    tool_calls_json: Optional[str] = None,
    function_call_json: Optional[str] = None,
    profile: Optional[str] = None,
    model: Optional[str] = None,
    reasoning: Optional[str] = None,
    finish_reason: Optional[str] = None,
    forwarded: int = 0,
    one_call: bool = False,
) -> tuple[str, list[str]]: ...
def check_answer(json_text: str) -> Optional[str]: ...
def check_chunk(json_text: str) -> Optional[str]: ...
def label_text(
    text: str, path: str, line: Optional[int] = None, profile: Optional[str] = None
) -> list[tuple[str, Optional[str]]]: ...
def label_bytes(
    data: bytes, path: str, profile: Optional[str] = None
) -> list[tuple[str, Optional[str]]]: ...
def relabel_columns(
    data: bytes,
    offsets: bytes,
    start: int,
    n: int,
    paths: Optional[list[Optional[str]]] = None,
    lines: Optional[list[Optional[int]]] = None,
    default_path: str = "<batch>",
    profile: Optional[str] = None,
    choices: Optional[str] = None,
    ends: Optional[list[Optional[bool]]] = None,
) -> list[tuple[str, bytes, bytes, bytes]]: ...
def detect_columns(
    data: bytes,
    offsets: bytes,
    start: int,
    n: int,
    paths: Optional[list[Optional[str]]] = None,
    lines: Optional[list[Optional[int]]] = None,
    default_path: str = "<batch>",
    ends: Optional[list[Optional[bool]]] = None,
) -> str: ...
def merge_counts(counts: list[str]) -> str: ...
def choose(counts: str) -> str: ...
def bench_parse(
    items: list[tuple[str, Optional[str]]], reps: int, profile: Optional[str] = None
) -> float: ...
def modes() -> list[str]: ...
def one_line(text: str) -> str: ...
def error_record(path: str, reason: str, line: Optional[int] = None) -> str: ...
def not_text(head: bytes) -> Optional[str]: ...
def named_unread(path: str) -> Optional[str]: ...
def profiles() -> list[str]: ...
def _tool_compilations(profile: Optional[str] = None) -> int: ...

class StreamParser:
    tool_problems: list[str]
    def __init__(
        self,
        profile: Optional[str] = None,
        tools_json: Optional[str] = None,
        model: Optional[str] = None,
    ) -> None: ...
    def feed(self, delta: str) -> list[str]: ...
    def finish(
        self, reasoning: Optional[str] = None, hit_length_limit: bool = False
    ) -> tuple[list[str], str]: ...
    def held(self) -> str: ...

class Verdict:
    @property
    def decision(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def gate(self) -> Optional[str]: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def executed(self) -> bool: ...
    @property
    def calls(self) -> list[dict]: ...
    def to_dict(self) -> dict: ...
    def calls_json(self) -> str: ...
    def report_json(self) -> str: ...
    def __repr__(self) -> str: ...  # Verdict(decision='reject', label='wrong_tool', gate='allowlist')

class Gate:
    tool_problems: list[str]
    def __init__(
        self,
        tools_json: Optional[str] = None,
        profile: Optional[str] = None,
        model: Optional[str] = None,
    ) -> None: ...
    def parse(self, output: str, reasoning: Optional[str] = None) -> Verdict: ...
