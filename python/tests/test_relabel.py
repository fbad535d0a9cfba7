"""relabel_batch and the Ray Data relabel against `toolgate label --format
jsonl` on the same files: identical lines."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

if os.environ.get("TOOLGATE_REQUIRE_INTEGRATIONS"):
    import pyarrow as pa
else:
    pa = pytest.importorskip("pyarrow")

import toolgate
from toolgate import arrow as tg_arrow
from conftest import REPO
from test_cli_agreement import FLAT


def cli_lines(cli, files, cwd) -> list:
    done = subprocess.run(
        [str(cli), "label", "--format", "jsonl", *files], cwd=cwd, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def generate(directory: Path, n: int, files: int) -> list:
    """`n` transcripts over `files` JSONL files, built from the bundled
    ones: models whose profile is known by name, one that only detection
    can judge (spread over every file), none; ids from the line; a blank
    line now and then."""
    base = [obj for _, obj in FLAT if "tools" in obj]
    models = ["Qwen/Qwen3-8B", "acme-finetune-7b", None, "meta-llama/Llama-3.1-8B-Instruct"]
    names = [f"logs/part-{k:03}.jsonl" for k in range(files)]
    (directory / "logs").mkdir(parents=True, exist_ok=True)
    handles = [open(directory / name, "w", encoding="utf-8") for name in names]
    try:
        for i in range(n):
            obj = {k: v for k, v in base[i % len(base)].items() if k not in ("id", "labels")}
            model = models[(i // len(base)) % len(models)]
            if model is None:
                obj.pop("model", None)
            else:
                obj["model"] = model
            fh = handles[i % files]
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
            if i % 997 == 0:
                fh.write("\n")
    finally:
        for fh in handles:
            fh.close()
    return names


def test_relabel_batch_equals_the_cli_line_for_line(cli, tmp_path):
    names = generate(tmp_path, 600, 1)
    expected = cli_lines(cli, names, tmp_path)
    rows = [
        (names[0], n, line)
        for n, line in enumerate((tmp_path / names[0]).read_text(encoding="utf-8").split("\n"), 1)
        if line.strip()
    ]
    batch = pa.RecordBatch.from_pydict(
        {
            "path": [r[0] for r in rows],
            "line": [r[1] for r in rows],
            "transcript": [r[2] for r in rows],
        }
    )
    out = toolgate.relabel_batch(batch)
    assert out.schema.names == list(tg_arrow.COLUMNS)
    assert out.column("record").to_pylist() == expected
    # The convenience columns are the record's.
    for rec, label, decision, model in zip(
        expected, *(out.column(c).to_pylist() for c in ("label", "decision", "model"))
    ):
        r = json.loads(rec)
        assert (label, decision, model) == (
            r["profile"]["label"], r["profile"]["decision"], r["model"])
    # Split into slices labeled alone, with the whole batch's choices: the same lines.
    counts = [tg_arrow.detect_batch(batch.slice(a, 100)) for a in range(0, batch.num_rows, 100)]
    choices = tg_arrow.choose(tg_arrow.merge_counts(counts))
    pieces = [
        toolgate.relabel_batch(batch.slice(a, 100), choices=choices).column("record").to_pylist()
        for a in range(0, batch.num_rows, 100)
    ]
    assert sum(pieces, []) == expected
    # Without them, a slice judges the detected model by itself: a test that
    # the choices matter at all.
    alone = sum(
        (toolgate.relabel_batch(batch.slice(a, 10)).column("record").to_pylist()
         for a in range(0, batch.num_rows, 10)),
        [],
    )
    assert alone != expected


def test_relabel_batch_reports_unreadable_rows():
    batch = pa.RecordBatch.from_pydict({"transcript": ["{not json", None, '{"output": "hi"}']})
    out = toolgate.relabel_batch(batch)
    records = [json.loads(r) for r in out.column("record").to_pylist()]
    assert "error" in records[0] and "error" in records[1]
    assert records[2]["profile"]["decision"] == "no_call"
    assert out.column("id").to_pylist()[:2] == [None, None]


@pytest.fixture(scope="module")
def ray_local():
    if os.environ.get("TOOLGATE_REQUIRE_INTEGRATIONS"):
        import ray
    else:
        ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def run_ray_relabel(cli, tmp_path, monkeypatch, n, files, shard_lines):
    from toolgate.integrations import ray as tg_ray

    names = generate(tmp_path, n, files)
    monkeypatch.chdir(tmp_path)
    count = tg_ray.relabel(["logs/*.jsonl"], "out", concurrency=2, shard_lines=shard_lines)
    assert count == n
    got = (tmp_path / "out" / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    expected = cli_lines(cli, names, tmp_path)
    assert len(got) == len(expected) == n
    assert got == expected
    # Some models were judged by detection across files and shards.
    assert any('"source":"detected"' in line for line in expected)


def test_ray_relabel_equals_the_cli(ray_local, cli, tmp_path, monkeypatch):
    run_ray_relabel(cli, tmp_path, monkeypatch, n=3_000, files=3, shard_lines=400)


@pytest.mark.slow
def test_ray_relabel_of_100k_transcripts_equals_the_cli(ray_local, cli, tmp_path, monkeypatch):
    run_ray_relabel(cli, tmp_path, monkeypatch, n=100_000, files=8, shard_lines=4096)


def test_relabel_batch_releases_the_gil(tmp_path):
    import threading

    names = generate(tmp_path, 2_000, 1)
    lines = [l for l in (tmp_path / names[0]).read_text(encoding="utf-8").split("\n") if l.strip()]
    batch = pa.RecordBatch.from_pydict({"transcript": lines * 3})
    done = threading.Event()
    began = []

    def work():
        began.append(True)
        toolgate.relabel_batch(batch)
        done.set()

    import time

    # How fast this thread spins alone.
    ticks, until = 0, time.perf_counter() + 0.2
    while time.perf_counter() < until:
        ticks += 1
    alone = ticks / 0.2
    worker = threading.Thread(target=work)
    ticks = 0
    worker.start()
    while not began:
        pass
    start = time.perf_counter()
    while not done.is_set():
        ticks += 1
        time.perf_counter()
    elapsed = time.perf_counter() - start
    worker.join()
    # With the GIL held through the native call (most of the worker's time),
    # this thread would stand still for all of it.
    assert ticks / elapsed > 0.25 * alone, (ticks, elapsed, alone)


def write_awkward_jsonl(path: Path) -> None:
    """Lines the binary reads in its own way: not UTF-8 (a stray byte, a
    sequence cut short), blank in Rust's sense (U+2003), `\\x1c` (blank
    for Python's `isspace`, not for the binary), CRLF, and good lines."""
    good = json.dumps({"output": '<tool name="f">{"a": 1}</tool>', "tools": [{"name": "f"}]})
    path.write_bytes(b"\n".join([
        good.encode(),
        b'{"output": "caf\xe9"}',
        b"",
        "\u2003 ".encode(),
        b"\x1c",
        b'{"output": "cut \xe2\x9c"}',
        good.encode() + b"\r",
        b'\xff',
        json.dumps({"output": "caf\u00e9 ok"}, ensure_ascii=False).encode(),
    ]) + b"\n")


def test_lines_that_are_not_utf8_get_the_binarys_error_records(cli, tmp_path):
    from toolgate.integrations import ray as tg_ray

    write_awkward_jsonl(tmp_path / "awkward.jsonl")
    expected = cli_lines_any(cli, ["awkward.jsonl"], tmp_path)
    assert sum('not valid UTF-8 (first bad byte at offset' in line for line in expected) == 3
    for shard_lines in (1, 3, 100):
        shards = tg_ray.shards([str(tmp_path / "awkward.jsonl")], shard_lines)
        got = []
        for s in shards:
            s = dict(s, path="awkward.jsonl")
            got += toolgate.relabel_batch(tg_ray.read_shard(s)).column("record").to_pylist()
        assert got == expected, shard_lines


def cli_lines_any(cli, files, cwd) -> list:
    """`label --format jsonl`'s lines, whatever its exit code (2: some
    lines were unreadable)."""
    done = subprocess.run(
        [str(cli), "label", "--format", "jsonl", *files], cwd=cwd, capture_output=True, text=True
    )
    assert done.returncode in (0, 2), done.stderr
    return done.stdout.splitlines()


def test_ray_relabel_of_lines_that_are_not_utf8_equals_the_cli(ray_local, cli, tmp_path, monkeypatch):
    from toolgate.integrations import ray as tg_ray

    write_awkward_jsonl(tmp_path / "awkward.jsonl")
    monkeypatch.chdir(tmp_path)
    tg_ray.relabel(["awkward.jsonl"], "out", concurrency=2, shard_lines=2, progress=None)
    got = (tmp_path / "out" / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    assert got == cli_lines_any(cli, ["awkward.jsonl"], tmp_path)


def write_bom_and_torn_jsonl(path: Path) -> None:
    """A BOM at the file's start (the file's, left out) and at the start of
    line 3 (not JSON there), and a last line cut short with no newline."""
    good = json.dumps({"output": "hi", "tools": []})
    path.write_bytes(b"\n".join([
        b"\xef\xbb\xbf" + good.encode(),
        good.encode(),
        b"\xef\xbb\xbf" + good.encode(),
        good.encode(),
        b'{"id": "b", "outp',
    ]))


def test_a_bom_past_line_1_and_a_torn_last_line_are_read_as_the_binary_reads_them(cli, tmp_path):
    # Regression: every row had a BOM left out, so line 3 was labeled where
    # the binary says it is not JSON; a torn last line was "not valid JSON:
    # EOF while parsing" where the binary says it is torn.
    from toolgate.integrations import ray as tg_ray

    write_bom_and_torn_jsonl(tmp_path / "bom.jsonl")
    expected = cli_lines_any(cli, ["bom.jsonl"], tmp_path)
    errors = [json.loads(line).get("error") for line in expected]
    assert errors == [None, None, "line 3: not valid JSON: the line starts with a byte-order mark "
                      "(U+FEFF), which only a file's first line may have (files joined together?)",
                      None, "line 5: " + TORN]
    for shard_lines in (1, 2, 100):
        got = []
        for s in tg_ray.shards([str(tmp_path / "bom.jsonl")], shard_lines):
            s = dict(s, path="bom.jsonl")
            got += toolgate.relabel_batch(tg_ray.read_shard(s)).column("record").to_pylist()
        assert got == expected, shard_lines
    # A first line that is only a BOM is blank, as the binary skips it.
    (tmp_path / "bomonly.jsonl").write_bytes(b"\xef\xbb\xbf\n" + json.dumps({"output": "hi"}).encode() + b"\n")
    expected = cli_lines_any(cli, ["bomonly.jsonl"], tmp_path)
    assert [json.loads(line).get("error") for line in expected] == [None]
    for s in tg_ray.shards([str(tmp_path / "bomonly.jsonl")], 100):
        s = dict(s, path="bomonly.jsonl")
        got = toolgate.relabel_batch(tg_ray.read_shard(s)).column("record").to_pylist()
        assert got == expected
    # A row is its file's last line only when the batch says so.
    batch = pa.table({"transcript": [b'{"id": "b", "outp'], "path": ["x.jsonl"], "line": [1]})
    (record,) = toolgate.relabel_batch(batch).column("record").to_pylist()
    assert "EOF while parsing" in json.loads(record)["error"]


TORN = ("torn last line: the file ends inside a record (a write cut short by a crash or a "
        "full disk, or still in progress); skipped")


def test_ray_relabel_exits_2_as_the_binary_does_on_unreadable_lines(
        ray_local, cli, tmp_path, monkeypatch):
    # Regression: the command exited 0 though it wrote error records; the
    # binary exits 2 (every readable line still labeled).
    from toolgate.integrations import ray as tg_ray

    write_bom_and_torn_jsonl(tmp_path / "bom.jsonl")
    monkeypatch.chdir(tmp_path)
    # The cluster of the fixture, not a second one.
    monkeypatch.setattr(ray_local, "init", lambda **_: None)
    done = subprocess.run([str(cli), "label", "--format", "jsonl", "bom.jsonl"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert tg_ray.main(["relabel", "bom.jsonl", "--out", "out"]) == 2
    got = (tmp_path / "out" / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    assert got == done.stdout.splitlines()
    assert tg_ray.main(["relabel", "bom.jsonl", "--out", "pq", "--format", "parquet"]) == 2
    # Written where the caller is, one file.
    assert [p.name for p in (tmp_path / "pq").iterdir()] == ["labels.parquet"]
    (tmp_path / "ok.jsonl").write_text(json.dumps({"output": "hi"}) + "\n")
    assert tg_ray.main(["relabel", "ok.jsonl", "--out", "out2"]) == 0


def test_a_null_path_is_read_as_a_row_without_the_column():
    # Regression: one null `path` failed the whole batch with a TypeError
    # (a null `line` was accepted). A null path is the default path, as a
    # null line is read as no line: every row is labeled.
    rows = [json.dumps({"output": f"x{i}"}) for i in range(3)]
    batch = pa.table({"transcript": rows, "path": ["a.jsonl", None, "c.jsonl"],
                      "line": [1, 2, None]})
    records = [json.loads(r) for r in toolgate.relabel_batch(batch).column("record").to_pylist()]
    assert [(r["path"], r["id"]) for r in records] == [
        ("a.jsonl", "a:1"), ("<batch>", "<batch>:2"), ("c.jsonl", "c")]
    out = toolgate.relabel_batch(batch, default_path="logs/x.jsonl").column("id").to_pylist()
    assert out == ["a:1", "x:2", "c"]
    # As the same row without a path column.
    alone = pa.table({"transcript": rows[1:2], "line": [2]})
    assert toolgate.relabel_batch(alone).column("record").to_pylist() == [
        toolgate.relabel_batch(batch).column("record").to_pylist()[1]]
    assert json.loads(tg_arrow.detect_batch(batch))[0]["transcripts"] == 3


def test_ray_relabel_names_a_missing_path_and_reads_json_files_as_the_binary_does(
        ray_local, cli, tmp_path, monkeypatch):
    # Regression: a named file that did not exist was left out without a
    # word (exit 0, its transcripts silently missing from the labels); a
    # `.json` transcript was cut into lines (ids `stem:N`, a pretty-printed
    # one an error per line); a file named twice was labeled twice; a
    # directory was left out. The binary names the missing path in an
    # error record in its place (exit 2), reads a `.json` file as one
    # transcript, each real file once, and walks a directory.
    from toolgate.integrations import ray as tg_ray

    good = {"output": '<tool name="f">{}</tool>', "tools": [{"name": "f"}], "model": "m"}
    (tmp_path / "a.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    (tmp_path / "one.json").write_text(json.dumps(good, indent=2))
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "z.jsonl").write_text(json.dumps(good) + "\n")
    (tmp_path / "d" / "e" / "y.json").write_text(json.dumps(good))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ray_local, "init", lambda **_: None)
    paths = ["a.jsonl", "missing.jsonl", "one.json", "a.jsonl", "d"]
    done = subprocess.run([str(cli), "label", "--format", "jsonl", *paths], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 2
    expected = done.stdout.splitlines()
    assert json.loads(expected[2]) == {
        "path": "missing.jsonl", "error": "No such file or directory (os error 2)",
        "schema_version": json.loads(expected[2])["schema_version"]}
    assert tg_ray.main(["relabel", *paths, "--out", "out"]) == 2
    got = (tmp_path / "out" / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    assert got == expected
    assert [json.loads(r).get("id") for r in got] == ["a:1", "a:2", None, "one", "z:1", "y"]


def test_a_ray_relabel_that_fails_leaves_the_labels_it_would_replace(
        ray_local, tmp_path, monkeypatch):
    # Regression: labels.jsonl was opened for writing (emptied) before the
    # first record; a run that failed half way (a worker's error, a file
    # that went away) left a file cut short that reads as a whole result,
    # in place of the last good one.
    from toolgate.integrations import ray as tg_ray

    generate(tmp_path, 300, 3)
    monkeypatch.chdir(tmp_path)
    # A given profile: no detection pass, which would fail before writing.
    run = dict(profile="default", shard_lines=50, progress=None)
    assert tg_ray.relabel(["logs/*.jsonl"], "out", **run) == 300
    before = (tmp_path / "out" / "labels.jsonl").read_bytes()
    real = tg_ray.shards

    def going_away(files, shard_lines):
        # The last shard's file is gone by the time a worker reads it.
        out = real(files, shard_lines)
        return out + [dict(out[-1], path="gone.jsonl", file=str(tmp_path / "gone.jsonl"))]

    monkeypatch.setattr(tg_ray, "shards", going_away)
    with pytest.raises(Exception, match="gone.jsonl"):
        tg_ray.relabel(["logs/*.jsonl"], "out", **run)
    assert (tmp_path / "out" / "labels.jsonl").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["labels.jsonl"]


def test_replacing_leaves_the_old_file_and_no_partial_one_on_error(tmp_path):
    # The writer of both formats' output (labels.jsonl, labels.parquet).
    from toolgate.integrations import ray as tg_ray

    (tmp_path / "labels.parquet").write_bytes(b"last good run")
    with pytest.raises(OSError, match="disk full"):
        with tg_ray.replacing(str(tmp_path), "labels.parquet", "wb") as fh:
            fh.write(b"half a file")
            raise OSError("disk full")
    assert (tmp_path / "labels.parquet").read_bytes() == b"last good run"
    assert [p.name for p in tmp_path.iterdir()] == ["labels.parquet"]
    with tg_ray.replacing(str(tmp_path), "labels.parquet", "wb") as fh:
        fh.write(b"whole")
    assert (tmp_path / "labels.parquet").read_bytes() == b"whole"
    assert [p.name for p in tmp_path.iterdir()] == ["labels.parquet"]


def test_a_ray_relabel_to_parquet_is_one_file_replaced_whole(ray_local, tmp_path, monkeypatch):
    # Regression: `--format parquet` was Ray's writer, a file per block
    # written in place: a run that failed half way left some of its files,
    # and every run added its files to the last run's (a reader of the
    # directory got the labels twice).
    import pyarrow.parquet as pq
    from toolgate.integrations import ray as tg_ray

    generate(tmp_path, 300, 3)
    monkeypatch.chdir(tmp_path)
    run = dict(profile="default", shard_lines=50, progress=None)
    assert tg_ray.relabel(["logs/*.jsonl"], "out", **run) == 300
    assert tg_ray.relabel(["logs/*.jsonl"], "out", fmt="parquet", **run) == 300
    assert tg_ray.relabel(["logs/*.jsonl"], "out", fmt="parquet", **run) == 300
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "labels.jsonl", "labels.parquet"]
    table = pq.read_table(tmp_path / "out" / "labels.parquet")
    assert table.column_names == list(tg_arrow.COLUMNS)
    jsonl = (tmp_path / "out" / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    assert table.column("record").to_pylist() == jsonl
    before = (tmp_path / "out" / "labels.parquet").read_bytes()

    real = tg_ray.shards

    def going_away(files, shard_lines):
        # The last shard's file is gone by the time a worker reads it.
        out = real(files, shard_lines)
        return out + [dict(out[-1], path="gone.jsonl", file=str(tmp_path / "gone.jsonl"))]

    monkeypatch.setattr(tg_ray, "shards", going_away)
    with pytest.raises(Exception, match="gone.jsonl"):
        tg_ray.relabel(["logs/*.jsonl"], "out", fmt="parquet", **run)
    assert (tmp_path / "out" / "labels.parquet").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "labels.jsonl", "labels.parquet"]


def write_refused_files(directory: Path) -> list:
    """Files the binary refuses whole, naming what they are: UTF-16 JSONL
    (PowerShell's `>`), a gzip file named `.jsonl`, UTF-16 JSON without a
    byte-order mark; and a good file beside them."""
    import gzip

    good = json.dumps({"output": '<tool name="f">{}</tool>', "tools": [{"name": "f"}]})
    (directory / "ps.jsonl").write_bytes(b"\xff\xfe" + (good + "\r\n" + good + "\r\n")
                                         .encode("utf-16-le"))
    (directory / "z.jsonl").write_bytes(gzip.compress(((good + "\n") * 50).encode()))
    (directory / "one.json").write_bytes(good.encode("utf-16-le"))
    (directory / "ok.jsonl").write_text(good + "\n")
    return ["ps.jsonl", "z.jsonl", "one.json", "ok.jsonl"]


def test_utf16_and_compressed_files_are_refused_by_the_relabel_as_the_binary_refuses_them(
        cli, tmp_path):
    # Regression: the Ray relabel read a UTF-16 JSONL line by line: line 1
    # was "not valid UTF-8 (first bad byte at offset 0)" and every later
    # line another error; a gzip file named `.jsonl` an error per chunk
    # between its newline bytes; UTF-16 JSON without a byte-order mark
    # "not valid JSON". The binary refuses each whole, in one record naming
    # what it is.
    from toolgate.integrations import ray as tg_ray

    names = write_refused_files(tmp_path)
    expected = cli_lines_any(cli, names, tmp_path)
    errors = [json.loads(line).get("error") for line in expected]
    assert errors == [
        "line 1: UTF-16LE text (byte-order mark FF FE), not UTF-8: not read (toolgate reads "
        "UTF-8; convert it first, e.g. `iconv -f UTF-16LE -t UTF-8`; PowerShell's `>` writes "
        "UTF-16)",
        "line 1: gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)",
        "UTF-16LE text (no byte-order mark), not UTF-8: not read (toolgate reads UTF-8; "
        "convert it first, e.g. `iconv -f UTF-16LE -t UTF-8`; PowerShell's `>` writes UTF-16)",
        None,
    ]
    for shard_lines in (1, 100):
        shards = [dict(s, path=name) for name in names
                  for s in tg_ray.shards([str(tmp_path / name)], shard_lines)]
        labels = tg_ray.LabelShards()(pa.Table.from_pylist(shards))
        assert labels.column("record").to_pylist() == expected, shard_lines


def test_ray_relabel_of_utf16_and_compressed_files_equals_the_cli(
        ray_local, cli, tmp_path, monkeypatch):
    from toolgate.integrations import ray as tg_ray

    names = write_refused_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ray_local, "init", lambda **_: None)
    assert tg_ray.main(["relabel", *names, "--out", "out", "--shard-lines", "1"]) == 2
    got = (tmp_path / "out" / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    assert got == cli_lines_any(cli, names, tmp_path)


def test_a_compressed_transcript_file_in_a_directory_is_named_by_the_relabel_as_by_the_binary(
        cli, tmp_path):
    # Regression: the Ray relabel's directory walk passed `x.jsonl.gz` over
    # in silence (its transcripts missing, exit 0); the binary's walk names
    # it, before the walk's files (exit 2).
    import gzip

    from toolgate.integrations import ray as tg_ray

    good = json.dumps({"output": '<tool name="f">{}</tool>', "tools": [{"name": "f"}]})
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.jsonl").write_text(good + "\n")
    (tmp_path / "d" / "b.jsonl.gz").write_bytes(gzip.compress((good + "\n").encode()))
    (tmp_path / "d" / "notes.txt.gz").write_bytes(gzip.compress(b"not a transcript"))
    expected = cli_lines_any(cli, ["d"], tmp_path)
    assert [json.loads(line).get("error") for line in expected] == [
        "gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)", None]
    entries = tg_ray.expand_checked([str(tmp_path / "d")])
    assert entries == [
        (str(tmp_path / "d" / "b.jsonl.gz"),
         "gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)"),
        str(tmp_path / "d" / "a.jsonl")]
    shards = [dict(s, path=os.path.relpath(s["path"], tmp_path)) for s in tg_ray.shards(entries)]
    labels = tg_ray.LabelShards()(pa.Table.from_pylist(shards))
    assert labels.column("record").to_pylist() == expected
