"""toolgate: fail-closed LLM tool calling, from Python.

Every model output gets a verdict: a ``decision`` (``execute``, ``no_call``
or ``reject``), the normalized ``calls`` (only when executed), a ``label``
(what the model did: ``pass`` or one of eleven failures), the ``gate`` that
rejected it and a ``reason``. The work is done by toolgate's Rust library
(the extension module ``toolgate._native``), the same code the ``toolgate``
binary runs, and the values are the binary's:

- :func:`parse` is ``toolgate parse``;
- :func:`label` is one record of ``toolgate label --format json``;
- :class:`StreamParser` is ``toolgate parse --stream``;
- :func:`relabel_batch` labels an Arrow record batch of transcripts
  (``toolgate label --format jsonl`` per row), with the GIL released.

>>> import toolgate
>>> tools = [{"name": "get_weather", "parameters": {"type": "object",
...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
>>> r = toolgate.parse('<tool name="get_weather">{"city": "Antwerp"}</tool>', tools)
>>> r.decision, r.calls[0].arguments
('execute', {'city': 'Antwerp'})

Errors (bad tools, an unknown profile, a transcript that is not JSON) raise
:class:`ToolgateError`, a ``ValueError``, with the binary's message. A
``str`` holding a lone surrogate (``"\ud800"``: no UTF-8 text, so no model
output, can hold one) is a :class:`ToolgateError` too, naming the argument
and the index, never a bare ``UnicodeEncodeError``.
Unlike the binary, the package does not read ``toolgate.toml`` from the
working directory: custom patterns, declared formats and the ``[models]``
table are the binary's.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

from . import _native
from ._native import ToolgateError

__all__ = [
    "Call",
    "Gate",
    "Result",
    "StreamParser",
    "ToolgateError",
    "label",
    "label_text",
    "modes",
    "parse",
    "profiles",
    "relabel_batch",
]

__version__: str = _native.__version__

log = logging.getLogger("toolgate")

#: Tool definitions: a list of OpenAI-style (``{"type": "function",
#: "function": {...}}``) or bare (``{"name", "parameters"}``) tools, a
#: transcript object with a ``tools`` list, or that JSON as text. ``None``
#: means the tool list is *unknown* (SPEC §4), which is not ``[]`` (no tool
#: is allowed): nothing executes either way, but with ``None`` the label is
#: decided without the tool definitions (a call is not blamed as
#: ``wrong_tool`` for a list nobody gave) and the result carries the
#: finding ``tools_unknown`` — what :func:`label` gives a transcript without
#: ``tools``.
Tools = Union[Sequence[Mapping[str, Any]], Mapping[str, Any], str, None]


def _utf8(data: Union[bytes, bytearray], what: str) -> str:
    """`data` decoded as UTF-8; bytes that are not are a ToolgateError
    naming the argument (as a str holding a lone surrogate is), not a bare
    UnicodeDecodeError."""
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ToolgateError(
            f"{what} is not valid UTF-8 (first bad byte at offset {e.start})"
        ) from None


def _tools_json(tools: Tools) -> Optional[str]:
    if tools is None:
        return None
    if isinstance(tools, str):
        return tools
    if isinstance(tools, (bytes, bytearray)):
        return _utf8(tools, "tools")
    return json.dumps(tools, ensure_ascii=False)


def _warn_tools(problems: Sequence[str]) -> None:
    for problem in problems:
        log.warning("toolgate: tools: %s", problem)


@dataclass(frozen=True)
class Call:
    """A normalized call: ``{"name": ..., "arguments": {...}}``."""

    name: str
    arguments: dict

    def to_dict(self) -> dict:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class Result:
    """The verdict on one output: what ``toolgate parse`` prints (with
    ``tools=None``, plus the ``findings`` member)."""

    #: ``execute``, ``no_call`` or ``reject``.
    decision: str
    #: The calls to run: empty unless ``decision == "execute"``.
    calls: list
    #: The label of the selected candidates (gates never change it).
    label: str
    #: The first gate that failed (``intent``, ``single``, ``size``,
    #: ``parse``, ``allowlist``, ``schema``), else ``None``.
    gate: Optional[str]
    #: Why it was rejected.
    reason: Optional[str]
    #: For several fallback candidates: the message asking the model to
    #: re-emit in the primary format.
    reemit: Optional[str]
    #: The telemetry record (``parse_mode``, ``fallback_used``, …).
    telemetry: dict
    #: With ``model=``: the profile chosen and why (``name``, ``source``,
    #: ``source_detail``), else ``None``.
    profile: Optional[dict] = None
    #: Findings about the input, as ``label`` records them: with
    #: ``tools=None``, ``[{"kind": "tools_unknown", "detail": ...}]``;
    #: otherwise empty.
    findings: list = field(default_factory=list)
    #: The whole report, exactly as ``toolgate parse`` prints it.
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def executed(self) -> bool:
        """Whether the calls may run."""
        return self.decision == "execute"

    def to_dict(self) -> dict:
        """The report as ``toolgate parse`` prints it."""
        return self.raw

    @classmethod
    def _from_report(cls, text: str) -> "Result":
        raw = json.loads(text)
        return cls(
            decision=raw["decision"],
            calls=[Call(c["name"], c["arguments"]) for c in raw["calls"]],
            label=raw["label"],
            gate=raw["gate"],
            reason=raw["reason"],
            reemit=raw["reemit"],
            telemetry=raw["telemetry"],
            profile=raw.get("profile"),
            findings=raw.get("findings", []),
            raw=raw,
        )


def parse(
    output: str,
    tools: Tools = None,
    *,
    profile: str = "auto",
    model: Optional[str] = None,
    reasoning: Optional[str] = None,
) -> Result:
    """Runs the profile's fail-closed pipeline on one model output.

    ``tools`` is the allowlist: ``[]`` allows no tool; ``None`` (the
    default) means the tool list is unknown — every call is rejected at the
    ``allowlist`` gate, the label is decided without the tool definitions
    and :attr:`Result.findings` holds ``tools_unknown`` (SPEC §4). ``profile``
    is a built-in profile, a mode name or a TOML profile file; ``"auto"``
    is the default profile, or with ``model`` the profile chosen for that
    model (``toolgate parse --model``). ``reasoning`` is the server's
    separate reasoning text (never searched for executable calls).
    """
    report, problems = _native.parse(
        output, _tools_json(tools), profile, model, reasoning
    )
    _warn_tools(problems)
    return Result._from_report(report)


class Gate:
    """A tool list and a profile made ready once, for deciding many outputs:
    ``gate.parse(output, reasoning=None)`` is the native call itself (no
    Python in between) and returns a ``Verdict`` whose values are read
    from the pipeline's result on demand: ``decision``, ``label``,
    ``gate``, ``reason``, ``executed``, ``calls`` (a list of
    ``{"name", "arguments"}`` dicts) and ``to_dict()`` (exactly the report
    of :func:`parse`). ``tools=None`` is an unknown tool list, as for
    :func:`parse`. The GIL is released while an output is judged.

    >>> gate = toolgate.Gate(tools, profile="hermes")      # doctest: +SKIP
    >>> gate.parse(output).decision                         # doctest: +SKIP
    """

    __slots__ = ("_native", "parse", "tool_problems")

    def __init__(
        self, tools: Tools = None, *, profile: str = "auto", model: Optional[str] = None
    ) -> None:
        self._native = _native.Gate(_tools_json(tools), profile, model)
        self.tool_problems = list(self._native.tool_problems)
        _warn_tools(self.tool_problems)
        self.parse = self._native.parse


class StreamParser:
    """``toolgate parse --stream`` for one output arriving in deltas.

    :meth:`feed` returns the events for each delta: ``{"event": "text",
    "text": ...}`` for text that may be forwarded now (it cannot be part of
    a call) and, once, ``{"event": "open", ...}`` when a call opener is
    seen. :meth:`finish` returns the final :class:`Result`, the same as
    :func:`parse` on the whole text; :attr:`end_events` then holds the last
    events (``call`` per candidate, the held text still to show, ``end``).
    ``tools=None`` is an unknown tool list, as for :func:`parse`. The GIL
    is released while a delta is scanned and while the output is judged.
    """

    def __init__(
        self,
        profile: str = "auto",
        tools: Tools = None,
        *,
        model: Optional[str] = None,
    ) -> None:
        self._native = _native.StreamParser(profile, _tools_json(tools), model)
        _warn_tools(self._native.tool_problems)
        self.end_events: list = []

    def feed(self, delta: str) -> list:
        """Pushes a delta; returns its events."""
        return [json.loads(e) for e in self._native.feed(delta)]

    def held(self) -> str:
        """The text pushed so far and not forwarded."""
        return self._native.held()

    def finish(
        self, reasoning: Optional[str] = None, hit_length_limit: bool = False
    ) -> Result:
        """Ends the output: the decision on the whole text."""
        events, report = self._native.finish(reasoning, hit_length_limit)
        self.end_events = [json.loads(e) for e in events]
        return Result._from_report(report)


def _transcript_text(
    transcript: Union[str, bytes, Mapping[str, Any]], path: str, line: Optional[int]
) -> str:
    if isinstance(transcript, str):
        return transcript
    if isinstance(transcript, (bytes, bytearray)):
        # Bytes at a file's start (a `.json` file, line 1) that are UTF-16/32
        # or compressed get the binary's error for that file (`PATH: why`),
        # as label()'s other load errors do; a later line is read as the
        # binary reads it (it looks at a file's first bytes only).
        why = _native.not_text(bytes(transcript[:8])) if line in (None, 1) else None
        if why is not None:
            raise ToolgateError(f"{path}: {why}" if line is None else f"{path}:{line}: {why}")
        return _utf8(transcript, "the transcript")
    return json.dumps(transcript, ensure_ascii=False)


def label_text(
    text: Union[str, bytes],
    path: str,
    *,
    profile: str = "auto",
) -> list:
    """The records of ``toolgate label --format json`` for the text of one
    file as if read from ``path`` (``.json``: one transcript, ``.jsonl``:
    one per line, or a capture another stack wrote). An unreadable
    transcript is a record ``{"path", "error", "schema_version"}``.

    Bytes are read as the binary reads a file's bytes: in a JSONL file of
    transcripts, a line that is not UTF-8 is such a record (``line N: not
    valid UTF-8 (first bad byte at offset K)``) and the other lines are
    labeled; any other file that is not UTF-8 is one such record. Bytes of
    UTF-16/32 or of a compressed file are one record naming what they are,
    as the binary refuses that file (a ``.jsonl`` file's on line 1)."""
    if isinstance(text, (bytes, bytearray)):
        rows = _native.label_bytes(bytes(text), path, profile)
    else:
        rows = _native.label_text(text, path, None, profile)
    return [json.loads(r) for r, _ in rows]


def label(
    transcript: Union[str, bytes, Mapping[str, Any]],
    *,
    profile: str = "auto",
    path: str = "<input>",
    line: Optional[int] = None,
) -> dict:
    """Every mode's label, the profile row and the findings of one
    transcript: its record of ``toolgate label --format json``.

    ``transcript`` is a transcript object or its JSON text. ``path`` and
    ``line`` say where it was read from (they give the record's ``path`` and
    the default ``id``: the file stem, ``stem:LINE`` for a JSONL line).
    ``profile="auto"`` chooses the profile by the model as the binary does.
    Bytes at a file's start (no ``line``, or line 1) that are UTF-16/32 or
    compressed raise the binary's error for that file (``PATH: UTF-16LE
    text …, not UTF-8: not read …``).
    """
    if line is not None and not (
        isinstance(line, int) and not isinstance(line, bool) and 0 <= line < 2**64
    ):
        raise ToolgateError(f"line must be a line number (an integer from 0), not {line!r}")
    text = _transcript_text(transcript, path, line)
    rows = _native.label_text(text, path, line, profile)
    if len(rows) != 1:
        raise ToolgateError(
            f"{path}: holds {len(rows)} transcripts; label_text() labels them all"
        )
    record, error = rows[0]
    if error is not None:
        raise ToolgateError(error)
    return json.loads(record)


def modes() -> list:
    """The built-in parse modes, in replay order."""
    return list(_native.modes())


def profiles() -> list:
    """The built-in profiles (every mode is a one-mode profile too)."""
    return list(_native.profiles())


def relabel_batch(batch: Any, **kwargs: Any) -> Any:
    """Labels an Arrow record batch of transcripts; see
    :func:`toolgate.arrow.relabel_batch` (needs ``pyarrow``)."""
    from .arrow import relabel_batch as relabel

    return relabel(batch, **kwargs)
