"""Relabeling transcripts at cluster scale on Ray Data.

:func:`relabel_dataset` labels a dataset of JSONL transcript files with
``map_batches`` and callable classes (each worker builds toolgate's engine
and compiled tools once and keeps them); the labels are those of
``toolgate label --format jsonl`` on the same files, line for line.

The profile ``auto`` judges each model by a choice that depends on all of
that model's transcripts (detection), as the binary makes it over its whole
input: a first pass counts detection per model on the workers, the driver
adds the counts up and makes the choices, and the labeling pass judges every
transcript by them. ``--profile`` needs no first pass.

Work is cut into shards of at most ``shard_lines`` lines (a byte range of a
file and its first line number, found by one scan of the files on the
driver); a worker reads its shard, labels it and returns an Arrow batch, so
memory is bounded by the shard size times the shards in flight.

Command line::

    python -m toolgate.integrations.ray relabel 'logs/*.jsonl' --out DIR [--format jsonl|parquet]
        [--profile P] [--address ray://head:10001] [--num-cpus N] [--shard-lines 4096]

``--format jsonl`` writes ``DIR/labels.jsonl`` in input order (the driver
writes it as the batches arrive, into a temporary file renamed over
``labels.jsonl`` once every record is in: a run that fails leaves no file
cut short); ``parquet`` writes ``DIR/labels.parquet`` the same way
(columns ``record``, ``id``, ``model``, ``task``, ``label``, ``decision``,
``gate``). Only toolgate's own transcripts are read (captures of other
stacks: ``toolgate import`` them first): a ``.jsonl`` file line by line,
any other file as one transcript, a directory as the binary walks it (its
``.json`` and ``.jsonl`` files), each real file once. Lines are read as the
binary reads them (a BOM only at a file's start, a torn last line
reported), and the command exits 2, as ``toolgate label`` does, when a
line could not be read or a path names no file (its error record is
written in its place; every other line is labeled).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import sys
import tempfile
import time
from typing import Any, Iterable, Optional, Sequence

from toolgate import arrow as tg_arrow

SHARD_LINES = 4096

#: ``toolgate label``'s exit code when an input could not be read.
EXIT_BAD = 2


def _shard(path: str, file: str, start: int, end: int, first_line: int,
           whole: bool = False, error: Optional[str] = None) -> dict:
    # Every shard has the same keys (Ray reads the list as one table).
    return {"path": path, "file": file, "start": start, "end": end,
            "first_line": first_line, "whole": whole, "error": error}


def shards(files: Sequence[Any], shard_lines: int = SHARD_LINES) -> list:
    """Cuts `files` into shards: dicts of ``path`` (as given), ``file``
    (absolute), ``start`` and ``end`` (byte offsets), ``first_line``
    (1-based), ``whole`` and ``error``, each at most ``shard_lines`` lines
    of a JSONL file. One sequential read of each file.

    A file whose name does not end in ``.jsonl`` is one transcript, as the
    binary reads it: one shard, ``whole``. An entry ``(path, reason)`` of
    `files` (see :func:`expand_checked`), or a file that cannot be read
    here, is a shard with ``error``: its record is the binary's error
    record, in its place. So is a ``.jsonl`` file the binary refuses whole
    (UTF-16/32, compressed: ``_native.not_text`` on its first bytes), its
    error on line 1 (``first_line``) as the binary's is; every other
    shard with ``error`` has ``first_line`` 0 (no line)."""
    from toolgate import _native

    out = []
    for entry in files:
        if isinstance(entry, tuple):
            out.append(_shard(entry[0], "", 0, 0, 0, error=entry[1]))
            continue
        path = entry
        # Workers do not share the driver's working directory: they read the
        # absolute path, and the records keep the path as given.
        file = os.path.abspath(path)
        if not path.endswith(".jsonl"):
            try:
                size = os.path.getsize(path)
            except OSError as e:
                out.append(_shard(path, file, 0, 0, 0, error=_os_reason(e)))
                continue
            out.append(_shard(path, file, 0, size, 1, whole=True))
            continue
        start, line, count, at = 0, 1, 0, 0
        here = []
        try:
            with open(path, "rb") as fh:
                why = _native.not_text(fh.read(8))
                if why is not None:
                    out.append(_shard(path, file, 0, 0, 1, error=why))
                    continue
                fh.seek(0)
                for raw in fh:
                    at += len(raw)
                    count += 1
                    if count == shard_lines:
                        here.append(_shard(path, file, start, at, line))
                        start, line, count = at, line + count, 0
        except OSError as e:
            out.append(_shard(path, file, 0, 0, 0, error=_os_reason(e)))
            continue
        if count:
            here.append(_shard(path, file, start, at, line))
        out += here
    return out


def _os_reason(e: OSError) -> str:
    """An OS error as the binary words it (Rust's ``io::Error``:
    ``No such file or directory (os error 2)``)."""
    if e.errno is None:
        return str(e)
    return f"{e.strerror or os.strerror(e.errno)} (os error {e.errno})"


#: What Rust's ``char::is_whitespace`` calls whitespace: the binary skips a
#: line of nothing else (Python's ``str.isspace`` differs, e.g. on
#: ``\x1c``–``\x1f``).
_BLANK = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
)


def _blank(raw: bytes) -> bool:
    """Whether the binary skips this line: UTF-8 and nothing but
    whitespace (a line that is not UTF-8 is never blank: it is an error)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c in _BLANK for c in text)


def read_shard(shard: dict):
    """The transcripts of one shard as an Arrow table (``path``, ``line``,
    ``transcript``, ``ends_file``); blank lines are skipped, as the binary
    skips them. Lines stay bytes (``large_binary``): one that is not UTF-8
    gets the binary's error record (``line N: not valid UTF-8 (first bad
    byte at offset K)``), never a decoding with replacement characters.
    The file's last line, when no newline follows it, is marked
    ``ends_file``: a record cut short there is the binary's torn last
    line."""
    import pyarrow as pa

    if shard.get("error") is not None:
        return pa.table({
            "path": pa.array([], pa.string()), "line": pa.array([], pa.int64()),
            "transcript": pa.array([], pa.large_binary()), "ends_file": pa.array([], pa.bool_()),
        })
    with open(shard["file"], "rb") as fh:
        fh.seek(shard["start"])
        data = fh.read(shard["end"] - shard["start"]) if not shard.get("whole") else fh.read()
    if shard.get("whole"):
        # A `.json` file: one transcript, read whole (line null).
        return pa.table({
            "path": pa.array([shard["path"]], pa.string()),
            "line": pa.array([None], pa.int64()),
            "transcript": pa.array([data], pa.large_binary()),
            "ends_file": pa.array([False], pa.bool_()),
        })
    paths, lines, texts = [], [], []
    n = shard["first_line"]
    # Shards are cut after a newline, so a shard that does not end with one
    # ends its file, and its last piece is the file's unterminated last line.
    unterminated = not data.endswith(b"\n")
    pieces = data.split(b"\n")
    ends = []
    for i, raw in enumerate(pieces):
        # The binary drops a byte order mark at the file's start before it
        # looks for blank lines: a first line that is only a BOM is blank.
        seen = raw[3:] if n == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
        if not _blank(seen):
            paths.append(shard["path"])
            lines.append(n)
            texts.append(raw)
            ends.append(unterminated and i == len(pieces) - 1)
        n += 1
    return pa.table(
        {
            "path": pa.array(paths, pa.string()),
            "line": pa.array(lines, pa.int64()),
            "transcript": pa.array(texts, pa.large_binary()),
            "ends_file": pa.array(ends, pa.bool_()),
        }
    )


def _rows(batch: Any) -> list:
    return batch.to_pylist() if hasattr(batch, "to_pylist") else [
        dict(zip(batch.keys(), v)) for v in zip(*batch.values())
    ]


class DetectShards:
    """``map_batches`` callable: detection's counts of each shard."""

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        counts = [tg_arrow.detect_batch(read_shard(s)) for s in _rows(batch)]
        return pa.table({"counts": pa.array(counts, pa.large_string())})


class LabelShards:
    """``map_batches`` callable: the labels of each shard (the engine and
    compiled tools are built once per worker, on first use, and kept)."""

    def __init__(self, profile: str = "auto", choices: Optional[str] = None) -> None:
        self.profile = profile
        self.choices = choices

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        tables = []
        for s in _rows(batch):
            if s.get("error") is not None:
                tables.append(_error_table(s["path"], s["error"], s["first_line"] or None))
                continue
            labels = tg_arrow.relabel_batch(
                read_shard(s), profile=self.profile, choices=self.choices
            )
            tables.append(pa.Table.from_batches([labels]))
        return pa.concat_tables(tables) if tables else pa.table(
            {c: pa.array([], pa.large_string()) for c in tg_arrow.COLUMNS}
        )


def _error_table(path: str, reason: str, line: Optional[int] = None) -> Any:
    """The one row of a path that could not be read (`line`: the line of
    the file its error is on): the binary's error record, every other
    column null."""
    import pyarrow as pa

    from toolgate import _native

    cols = {c: pa.array([None], pa.large_string()) for c in tg_arrow.COLUMNS}
    cols["record"] = pa.array([_native.error_record(path, reason, line)], pa.large_string())
    return pa.table(cols)


def choices_for(ds: Any, concurrency: int) -> str:
    """The first pass: every model's final ``auto`` choice over `ds`."""
    counts = [
        row["counts"]
        for row in ds.map_batches(
            DetectShards, batch_size=1, batch_format="pyarrow", concurrency=concurrency
        ).iter_rows()
    ]
    return tg_arrow.choose(tg_arrow.merge_counts(counts))


def relabel_dataset(
    files: Sequence[str],
    *,
    profile: str = "auto",
    concurrency: int = 2,
    shard_lines: int = SHARD_LINES,
) -> Any:
    """A Ray dataset of the labels of `files` (JSONL transcripts), in input
    order."""
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    work = shards(files, shard_lines)
    ds = ray.data.from_items(work, override_num_blocks=max(1, len(work)))
    choices = choices_for(ds, concurrency) if profile == "auto" else None
    return ds.map_batches(
        LabelShards,
        fn_constructor_kwargs={"profile": profile, "choices": choices},
        batch_size=1,
        batch_format="pyarrow",
        concurrency=concurrency,
    )


def expand(patterns: Iterable[str]) -> list:
    """The files named by `patterns` (globs, `**` included), in order."""
    return [f for f in expand_checked(patterns) if not isinstance(f, tuple)]


def _walk(directory: str) -> list:
    """The ``.json``/``.jsonl`` files under `directory`, in the binary's
    order (sorted; a folder's files before its subfolders), after an entry
    ``(path, reason)`` for each file the binary's walk names without
    reading it (``x.jsonl.gz``: ``_native.named_unread``), as the binary
    lists a walk's errors before its files."""
    from toolgate import _native

    found, unread = [], []
    for root, dirs, names in os.walk(directory, followlinks=True):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(root, n)
            if n.endswith((".json", ".jsonl")):
                if os.path.isfile(path):
                    found.append(path)
            else:
                why = _native.named_unread(path)
                if why is not None:
                    unread.append((path, why))
    return unread + found


def expand_checked(patterns: Iterable[str]) -> list:
    """The files named by `patterns` (globs, `**` included; a directory:
    its ``.json``/``.jsonl`` files, as the binary walks it), in order, each
    real file once; a pattern that names nothing is an entry ``(pattern,
    reason)`` in its place (the binary's error record for a path it cannot
    read), never left out, as is a compressed transcript file a directory
    holds (:func:`_walk`)."""
    out, seen = [], set()
    for p in patterns:
        found = sorted(glob.glob(p, recursive=True)) if glob.has_magic(p) else (
            [p] if os.path.lexists(p) else [])
        files = []
        for f in found:
            if os.path.isdir(f):
                files += _walk(f)
            elif os.path.isfile(f):
                files.append(f)
        if not found:
            if glob.has_magic(p):
                out.append((p, "no file matches this pattern"))
            else:
                try:
                    os.stat(p)
                except OSError as e:
                    out.append((p, _os_reason(e)))
            continue
        if len(found) == 1 and not files and not os.path.isdir(found[0]):
            # A dangling link, a socket…: what reading it says.
            try:
                os.stat(found[0])
                reason = "not a file"
            except OSError as e:
                reason = _os_reason(e)
            out.append((found[0], reason))
            continue
        for f in files:
            if isinstance(f, tuple):
                out.append(f)
                continue
            real = os.path.realpath(f)
            if real not in seen:
                seen.add(real)
                out.append(f)
    return out


def relabel(
    patterns: Sequence[str],
    out: str,
    *,
    fmt: str = "jsonl",
    profile: str = "auto",
    concurrency: int = 2,
    shard_lines: int = SHARD_LINES,
    progress=sys.stderr,
) -> int:
    """The command: labels the files of `patterns` into `out`; returns the
    number of records written (error records included)."""
    return relabel_counted(
        patterns, out, fmt=fmt, profile=profile, concurrency=concurrency,
        shard_lines=shard_lines, progress=progress,
    )[0]


def relabel_counted(
    patterns: Sequence[str],
    out: str,
    *,
    fmt: str = "jsonl",
    profile: str = "auto",
    concurrency: int = 2,
    shard_lines: int = SHARD_LINES,
    progress=sys.stderr,
) -> tuple:
    """:func:`relabel`, returning the number of records written and how
    many of them are error records (a transcript that could not be read:
    the binary's records ``{"path", "error"}``, with no label)."""
    files = expand_checked(patterns)
    if not files:
        raise SystemExit(f"toolgate: no files match {' '.join(patterns)}")
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    ds = relabel_dataset(files, profile=profile, concurrency=concurrency, shard_lines=shard_lines)
    n, bad, began = 0, 0, time.monotonic()
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        # Every column is text (LabelShards' batches and error rows alike).
        schema = pa.schema([(c, pa.large_string()) for c in tg_arrow.COLUMNS])
        # As labels.jsonl: one file, written beside its place and renamed
        # over it once complete (Ray's own writer left a file per block,
        # those of a failed run included, next to the last run's).
        with replacing(out, "labels.parquet", "wb") as fh:
            sink = pq.ParquetWriter(fh, schema)
            try:
                for table in ds.iter_batches(batch_format="pyarrow", batch_size=None):
                    sink.write_table(table if table.schema == schema else table.cast(schema))
                    n, bad = _progress(table, n, bad, began, progress)
            finally:
                sink.close()
    else:
        with replacing(out, "labels.jsonl", "w", encoding="utf-8") as fh:
            for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
                for record in batch.column("record").to_pylist():
                    fh.write(record)
                    fh.write("\n")
                n, bad = _progress(batch, n, bad, began, progress)
    if progress is not None:
        print(file=progress)
    return n, bad


def _progress(batch, n: int, bad: int, began: float, progress) -> tuple:
    """The counts with `batch` added (records, error records), shown on
    `progress`."""
    n += batch.num_rows
    bad += batch.column("label").null_count
    if progress is not None:
        rate = n / max(time.monotonic() - began, 1e-9)
        print(f"\rtoolgate: {n} transcripts labeled ({rate:,.0f}/s)", end="", file=progress)
    return n, bad


@contextlib.contextmanager
def replacing(out: str, name: str, mode: str, **kwargs):
    """An open file written beside ``out/name`` and renamed over it once
    the block completes: a run that fails (a worker, a file that went away,
    a full disk) leaves the output of an earlier run as it was, never a
    file cut short that reads as a whole result, and no temporary file."""
    target = os.path.join(out, name)
    fd, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=out)
    try:
        # mkstemp's file is private (0600); the output gets the mode a new
        # file gets here, as it did when written in place.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(partial, 0o666 & ~umask)
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(partial, target)
    except BaseException:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m toolgate.integrations.ray")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("relabel", help="label JSONL transcripts on Ray Data")
    r.add_argument("patterns", nargs="+", help="JSONL files or globs ('logs/*.jsonl')")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl")
    r.add_argument("--profile", default="auto")
    r.add_argument("--address", default=None, help="an existing Ray cluster (ray.init address)")
    r.add_argument("--num-cpus", type=int, default=None, help="CPUs of a local Ray")
    r.add_argument("--concurrency", type=int, default=None, help="workers (default: the CPUs)")
    r.add_argument("--shard-lines", type=int, default=SHARD_LINES)
    args = ap.parse_args(argv)
    import ray

    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus)
    concurrency = args.concurrency or max(1, int(ray.cluster_resources().get("CPU", 1)))
    n, bad = relabel_counted(
        args.patterns,
        args.out,
        fmt=args.format,
        profile=args.profile,
        concurrency=concurrency,
        shard_lines=args.shard_lines,
    )
    print(f"toolgate: {n} transcripts labeled into {args.out}", file=sys.stderr)
    if bad:
        # As `toolgate label`: exit 2 when a transcript could not be read
        # (every readable one is still labeled).
        print(f"toolgate: {bad} transcript(s) could not be read: their error records are in "
              f"{args.out}", file=sys.stderr)
        return EXIT_BAD
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
