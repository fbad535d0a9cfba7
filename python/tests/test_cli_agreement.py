"""toolgate.parse / label / StreamParser against the `toolgate` binary on
every bundled transcript (issue 25: "agree with the CLI on every bundled
transcript")."""

from __future__ import annotations

import json
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import toolgate
from conftest import REPO, corpus_files

FILES = corpus_files()


def run(cli, *args, stdin=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(cli), *args], cwd=REPO, capture_output=True, text=True, input=stdin
    )


def flat_transcripts() -> list[tuple[str, dict]]:
    """The corpus's `.json` transcripts in the flat form (with `output`)."""
    out = []
    for f in FILES:
        if not f.endswith(".json"):
            continue
        obj = json.loads((REPO / f).read_text(encoding="utf-8"))
        if isinstance(obj, dict) and isinstance(obj.get("output"), str):
            out.append((f, obj))
    return out


FLAT = flat_transcripts()


def test_the_corpus_is_walked():
    # A walk that found nothing would pass every comparison below.
    assert len(FILES) > 250 and len(FLAT) > 250


def test_label_equals_label_format_json_on_every_file(cli):
    def one(f):
        done = run(cli, "label", "--format", "json", f)
        return f, done

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, FILES))
    for f, done in results:
        assert done.returncode in (0, 2), done.stderr
        expected = json.loads(done.stdout)
        text = (REPO / f).read_text(encoding="utf-8")
        assert toolgate.label_text(text, f) == expected, f
        if f.endswith(".json") and len(expected) == 1 and "error" not in expected[0]:
            assert toolgate.label(text, path=f) == expected[0], f
            assert toolgate.label(json.loads(text), path=f) == expected[0], f


def test_label_of_a_jsonl_line_equals_its_record(cli):
    jsonl = [f for f in FILES if f.endswith(".jsonl")]
    assert jsonl
    checked = 0
    for f in jsonl:
        records = json.loads(run(cli, "label", "--format", "json", f).stdout)
        lines = (REPO / f).read_text(encoding="utf-8").split("\n")
        models = {r.get("model") for r in records}
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            mine = toolgate.label(line, path=f, line=n)
            theirs = next(r for r in records if r.get("id") == mine["id"])
            # One line alone is judged by what detection sees of it; with one
            # model per file and a by-name choice that is the file's choice.
            if len(models) == 1 and theirs["profile"]["source"] != "detected":
                assert mine == theirs, (f, n)
                checked += 1
    assert checked > 0


def parse_args(path: str, obj: dict, model: bool) -> list[str]:
    args = ["parse", "--tools", path] if "tools" in obj else ["parse"]
    if model and obj.get("model"):
        args += ["--model", obj["model"]]
    return args


@pytest.mark.parametrize("by_model", [False, True], ids=["default", "model"])
def test_parse_equals_toolgate_parse_on_every_output(cli, by_model, tmp_path):
    def one(item):
        f, obj = item
        out = tmp_path / (f.replace("/", "_") + ".txt")
        out.write_text(obj["output"], encoding="utf-8")
        return f, obj, run(cli, *parse_args(f, obj, by_model), str(out))

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, FLAT))
    for f, obj, done in results:
        assert done.returncode == 0, (f, done.stderr)
        expected = json.loads(done.stdout)
        model = obj.get("model") if by_model else None
        # Without `tools` the list is unknown, in the binary (no `--tools`)
        # as in the package (`None`).
        got = toolgate.parse(obj["output"], obj.get("tools"), model=model)
        assert got.to_dict() == expected, f
        assert got.decision == expected["decision"]
        assert [c.to_dict() for c in got.calls] == expected["calls"]
        assert (got.label, got.gate, got.reason, got.reemit) == (
            expected["label"],
            expected["gate"],
            expected["reason"],
            expected["reemit"],
        )
        assert got.telemetry == expected["telemetry"]


def cli_reads(text: str) -> list[str]:
    """The deltas `parse --stream` pushes for a file: reads of 8192 bytes,
    an incomplete UTF-8 sequence held for the next read."""
    data, pending, out = text.encode("utf-8"), b"", []
    for i in range(0, len(data), 8192):
        pending += data[i : i + 8192]
        try:
            valid = len(pending.decode("utf-8"))
            valid = len(pending)
        except UnicodeDecodeError as e:
            valid = e.start
        out.append(pending[:valid].decode("utf-8"))
        pending = pending[valid:]
    return out


def random_deltas(text: str, rng: random.Random) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 12))) if len(text) > 1 else []
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def streamed(profile, tools, model, deltas):
    parser = toolgate.StreamParser(profile, tools, model=model)
    events = []
    for d in deltas:
        events += parser.feed(d)
    result = parser.finish()
    return events + parser.end_events, result


def test_stream_parser_equals_parse_stream_on_every_output(cli, tmp_path):
    def one(item):
        f, obj = item
        out = tmp_path / (f.replace("/", "_") + ".txt")
        out.write_text(obj["output"], encoding="utf-8")
        args = parse_args(f, obj, True)
        args.insert(1, "--stream")
        return f, obj, run(cli, *args, str(out))

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, FLAT))
    rng = random.Random(25)
    for f, obj, done in results:
        assert done.returncode == 0, (f, done.stderr)
        expected = [json.loads(line) for line in done.stdout.splitlines()]
        model, tools = obj.get("model"), obj.get("tools")
        # The same deltas as the binary: the same events, in order.
        events, result = streamed("auto", tools, model, cli_reads(obj["output"]))
        assert events == expected, f
        end = dict(expected[-1])
        del end["event"]
        assert result.to_dict() == end, f
        # Any other split: the same text in all, the same calls and end.
        events, _ = streamed("auto", tools, model, random_deltas(obj["output"], rng))
        text = lambda evs: "".join(e["text"] for e in evs if e["event"] == "text")
        assert text(events) == text(expected), f
        assert [e for e in events if e["event"] in ("call", "end")] == [
            e for e in expected if e["event"] in ("call", "end")
        ], f


def test_gate_verdicts_equal_parse_on_every_output():
    for f, obj in FLAT:
        for model in (None, obj.get("model")):
            gate = toolgate.Gate(obj.get("tools"), model=model)
            v = gate.parse(obj["output"])
            r = toolgate.parse(obj["output"], obj.get("tools"), model=model)
            assert v.to_dict() == r.to_dict(), f
            assert (v.decision, v.label, v.gate, v.reason, v.executed) == (
                r.decision, r.label, r.gate, r.reason, r.executed), f
            assert v.calls == [c.to_dict() for c in r.calls], f
