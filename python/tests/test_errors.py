"""Errors are Python exceptions with the binary's messages."""

from __future__ import annotations

import subprocess

import pytest

import toolgate
from conftest import REPO


def cli_error(cli, *args) -> str:
    done = subprocess.run([str(cli), *args], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2
    return done.stderr.strip()


def test_unknown_profile_says_what_the_binary_says(cli, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("hi")
    message = cli_error(cli, "parse", "--profile", "nope", str(out))
    with pytest.raises(toolgate.ToolgateError) as e:
        toolgate.parse("hi", profile="nope")
    assert message == f"toolgate: error: {e.value}"
    with pytest.raises(ValueError):
        toolgate.StreamParser("nope")
    with pytest.raises(toolgate.ToolgateError):
        toolgate.label({"output": "x"}, profile="nope")


def test_a_transcript_that_is_not_json_says_what_the_binary_says(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done = subprocess.run(
        [str(cli), "label", "--format", "json", str(bad)], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2
    with pytest.raises(toolgate.ToolgateError) as e:
        toolgate.label("{not json", path=str(bad))
    assert f"toolgate: {e.value}" in done.stderr.splitlines()
    # label_text keeps it as the binary's error record.
    import json

    assert toolgate.label_text("{not json", str(bad)) == json.loads(done.stdout)


def test_bad_tools_are_refused():
    with pytest.raises(toolgate.ToolgateError, match="expected an array of tool definitions"):
        toolgate.parse("hi", 42)
    with pytest.raises(toolgate.ToolgateError, match="not valid JSON"):
        toolgate.parse("hi", "[")


def test_model_with_another_profile_is_refused_as_by_the_binary():
    with pytest.raises(toolgate.ToolgateError, match="cannot be used with"):
        toolgate.parse("hi", [], profile="hermes", model="qwen3-8b")


def test_finished_stream_refuses_more():
    s = toolgate.StreamParser("hermes", [])
    s.feed("hello")
    s.finish()
    with pytest.raises(toolgate.ToolgateError, match="finished"):
        s.feed("more")
    with pytest.raises(toolgate.ToolgateError, match="finished"):
        s.finish()


@pytest.mark.parametrize(
    "output",
    [
        "",
        "\x00\x01\x7f\u202e",
        "<tool_call>" * 2000,
        '<tool name="f">' + "[" * 5000,
        '{"name": "f", "arguments": ' + '{"a":' * 3000,
        "[f(" + "x=[" * 3000,
        "\ud7ff\ue000" * 100,
    ],
)
def test_hostile_outputs_give_a_verdict_not_a_crash(output):
    for profile in ["auto", *toolgate.profiles(), *toolgate.modes()]:
        r = toolgate.parse(output, [{"name": "f"}], profile=profile)
        assert r.decision in ("execute", "no_call", "reject")


def test_lone_surrogates_are_a_toolgate_error_saying_where():
    bad = "ok \ud800 text"
    calls = {
        "parse": lambda: toolgate.parse(bad, []),
        "parse reasoning": lambda: toolgate.parse("x", [], reasoning=bad),
        "tools": lambda: toolgate.parse("x", [{"name": "f\udc00"}]),
        "Gate.parse": lambda: toolgate.Gate([]).parse(bad),
        "Gate tools": lambda: toolgate.Gate([{"name": "f\udc00"}]),
        "StreamParser.feed": lambda: toolgate.StreamParser("auto", []).feed(bad),
        "StreamParser.finish": lambda: toolgate.StreamParser("auto", []).finish(reasoning=bad),
        "label": lambda: toolgate.label({"output": bad}),
    }
    for name, call in calls.items():
        with pytest.raises(toolgate.ToolgateError, match="not valid Unicode: a lone surrogate at index") as e:
            call()
        assert not isinstance(e.value, UnicodeError), name
    with pytest.raises(toolgate.ToolgateError, match="^output is not valid Unicode: a lone surrogate at index 3 "):
        toolgate.parse(bad, [])


def test_a_lone_surrogate_in_model_or_profile_is_a_toolgate_error_naming_it():
    bad = "m\ud800"
    calls = {
        "model": [lambda: toolgate.parse("x", [], model=bad),
                  lambda: toolgate.Gate([], model=bad),
                  lambda: toolgate.StreamParser("auto", [], model=bad)],
        "profile": [lambda: toolgate.parse("x", [], profile=bad),
                    lambda: toolgate.Gate([], profile=bad),
                    lambda: toolgate.StreamParser(bad, [])],
    }
    for what, group in calls.items():
        for call in group:
            with pytest.raises(toolgate.ToolgateError,
                               match=f"^{what} is not valid Unicode: a lone surrogate at index 1 "):
                call()


def test_bytes_that_are_not_utf8_are_a_toolgate_error_naming_the_argument():
    calls = {
        "the transcript": lambda: toolgate.label(b'{"output": "\xff"}'),
        "tools": lambda: toolgate.parse("x", tools=b"[\xff]"),
        "tools ": lambda: toolgate.Gate(b"\xff"),
    }
    for what, call in calls.items():
        with pytest.raises(toolgate.ToolgateError) as e:
            call()
        assert str(e.value).startswith(f"{what.strip()} is not valid UTF-8 (first bad byte at offset")
        assert not isinstance(e.value, UnicodeError), what
    with pytest.raises(toolgate.ToolgateError, match=r"at offset 12\)$"):
        toolgate.label(b'{"output": "\xff"}')


def test_label_text_of_bytes_reads_them_as_the_binary_reads_the_file(cli, tmp_path):
    # Regression: bytes were decoded whole, so one line that is not UTF-8
    # raised UnicodeDecodeError and every valid line was lost. The binary
    # labels the other lines and gives the bad one its error record; a
    # whole `.json` file that is not UTF-8 is one error record.
    import json

    data = b'{"id":"a","output":"a"}\n\xff\n{"id":"b","output":"b"}\n'
    for name in ("mixed.jsonl", "mixed.json"):
        f = tmp_path / name
        f.write_bytes(data)
        done = subprocess.run([str(cli), "label", "--format", "jsonl", str(f)], cwd=REPO,
                              capture_output=True, text=True)
        expected = [json.loads(line) for line in done.stdout.splitlines()]
        assert toolgate.label_text(data, str(f)) == expected, name
        assert toolgate.label_text(bytearray(data), str(f)) == expected, name
    records = toolgate.label_text(data, "mixed.jsonl")
    assert [r.get("id") or r.get("error") for r in records] == [
        "a", "line 2: not valid UTF-8 (first bad byte at offset 0)", "b"]
    assert toolgate.label_text(data, "mixed.json") == [{
        "path": "mixed.json", "error": "not valid UTF-8 (first bad byte at offset 24)",
        "schema_version": 1}]
    # UTF-8 bytes are the text's records.
    ok = '{"output":"é"}\n'
    assert toolgate.label_text(ok.encode(), "x.jsonl") == toolgate.label_text(ok, "x.jsonl")


def test_a_lone_surrogate_in_a_path_is_a_toolgate_error_naming_it():
    # Regression: `path` bypassed the check, raising a bare UnicodeEncodeError.
    calls = [lambda: toolgate.label('{"output":"x"}', path="a\ud800.json"),
             lambda: toolgate.label_text('{"output":"x"}', "a\ud800.json"),
             lambda: toolgate.label_text(b'{"output":"x"}', "a\ud800.json")]
    for call in calls:
        with pytest.raises(toolgate.ToolgateError,
                           match="^path is not valid Unicode: a lone surrogate at index 1 ") as e:
            call()
        assert not isinstance(e.value, UnicodeError)


def test_a_line_that_is_not_a_line_number_is_a_toolgate_error():
    for line in (-1, 2**64, "3", True):
        with pytest.raises(toolgate.ToolgateError, match="line must be a line number"):
            toolgate.label("{}", line=line)
    assert toolgate.label('{"output": "hi"}', line=0)["path"] == "<input>"


def test_a_row_count_beyond_the_offsets_is_refused_before_allocating():
    from toolgate import _native

    # n rows need n + 1 offsets: a huge n was a capacity overflow panic.
    offsets = (0).to_bytes(8, "little") + (2).to_bytes(8, "little")
    for call in (_native.relabel_columns, _native.detect_columns):
        for n in (2**62, 2**64 - 1, 2):
            with pytest.raises(toolgate.ToolgateError, match="offsets out of range"):
                call(b"{}", offsets, 0, n)
        with pytest.raises(toolgate.ToolgateError, match="offsets out of range"):
            call(b"{}", offsets, 2**64 - 1, 1)


UTF16_REASON = ("UTF-16LE text (byte-order mark FF FE), not UTF-8: not read (toolgate reads "
                "UTF-8; convert it first, e.g. `iconv -f UTF-16LE -t UTF-8`; PowerShell's `>` "
                "writes UTF-16)")
UTF16_NO_BOM_REASON = UTF16_REASON.replace("byte-order mark FF FE", "no byte-order mark")
GZIP_REASON = "gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)"


def test_label_of_utf16_or_gzip_bytes_gives_the_binarys_refusal(cli, tmp_path):
    # Regression: label() said "the transcript is not valid UTF-8 (first bad
    # byte at offset 0)" for a gzip or UTF-16 file's bytes (and read UTF-16
    # without a byte-order mark, valid UTF-8 with NULs, as JSON that is not
    # valid), and label_text() the same of a `.json` file; the binary names
    # what the file is (core's not_text), and so do they now.
    import gzip
    import json

    obj = json.dumps({"output": "hi", "tools": []})
    cases = {
        "u16.json": (b"\xff\xfe" + obj.encode("utf-16-le"), UTF16_REASON),
        "nobom.json": (obj.encode("utf-16-le"), UTF16_NO_BOM_REASON),
        "z.json": (gzip.compress(obj.encode()), GZIP_REASON),
        "u16.jsonl": (b"\xff\xfe" + (obj + "\r\n" + obj + "\r\n").encode("utf-16-le"),
                      UTF16_REASON),
        "z.jsonl": (gzip.compress((obj + "\n" + obj + "\n").encode()), GZIP_REASON),
    }
    for name, (data, reason) in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        done = subprocess.run([str(cli), "label", "--format", "jsonl", str(f)], cwd=REPO,
                              capture_output=True, text=True)
        assert done.returncode == 2, name
        line = 1 if name.endswith(".jsonl") else None
        at = "" if line is None else f"line {line}: "
        assert [json.loads(r) for r in done.stdout.splitlines()] == [
            {"path": str(f), "error": at + reason, "schema_version": 1}], name
        assert toolgate.label_text(data, str(f)) == [
            {"path": str(f), "error": at + reason, "schema_version": 1}], name
        with pytest.raises(toolgate.ToolgateError) as e:
            toolgate.label(data, path=str(f), line=line)
        assert str(e.value) == (f"{f}: {reason}" if line is None else f"{f}:1: {reason}"), name
    # A later line of a file is read as the binary reads it: its first bytes
    # were not the file's.
    with pytest.raises(toolgate.ToolgateError,
                       match=r"^the transcript is not valid UTF-8 \(first bad byte at offset 1\)$"):
        toolgate.label(gzip.compress(b"{}"), path="x.jsonl", line=2)
