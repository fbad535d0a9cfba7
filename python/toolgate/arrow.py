"""Relabeling Arrow record batches of transcripts.

:func:`relabel_batch` takes a ``pyarrow.RecordBatch`` (or ``Table``) whose
``transcript`` column holds transcripts as JSON text, one per row (strings,
or bytes as read: a row that is not UTF-8 gets the record ``toolgate
label`` gives such a line, ``line N: not valid UTF-8 (first bad byte at
offset K)``), and
returns a record batch of their labels: per row, ``record`` (the line
``toolgate label --format jsonl`` prints for it, byte for byte), ``id``,
``model``, ``task``, ``label`` (the profile's label), ``decision`` and
``gate``. Optional ``path`` and ``line`` columns say where each row was read
(they give the record's ``path`` and the default ``id``, ``stem:LINE``). A
null in them is read as a row without the column: a null ``path`` is
``default_path``, a null ``line`` a whole ``.json`` transcript. Each row is read as the binary reads
that line of its file: a BOM is left out only on line 1 (or a whole
transcript), and a row of an optional ``ends_file`` column that is true is
its file's last line with no newline after it, so a record cut short there
is the binary's ``torn last line`` error.

The text buffers are handed to Rust as bytes (one copy: the module is built
for the stable ABI of CPython 3.10, which has no buffer protocol), labeled
with the GIL released, and the result comes back as Arrow buffers.

``profile="auto"`` chooses each model's profile as the binary does from the
transcripts it is given — here, the batch. For a dataset split into many
batches, count detection over the whole dataset first
(:func:`detect_batch`, :func:`merge_counts`, :func:`choose`) and pass the
``choices``: :mod:`toolgate.integrations.ray` does that.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import _native

COLUMNS = ("record", "id", "model", "task", "label", "decision", "gate")


def _pa():
    try:
        import pyarrow as pa
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError(
            "toolgate.relabel_batch needs pyarrow: pip install 'toolgate[arrow]'"
        ) from e
    return pa


def _as_batch(batch: Any):
    pa = _pa()
    if isinstance(batch, pa.Table):
        batch = batch.combine_chunks()
        batches = batch.to_batches()
        if not batches:
            return pa.RecordBatch.from_pylist([], schema=batch.schema)
        return batches[0]
    if isinstance(batch, pa.RecordBatch):
        return batch
    raise TypeError(f"expected a pyarrow RecordBatch or Table, got {type(batch).__name__}")


def _inputs(batch: Any, column: str, path_column: str, line_column: str, ends_column: str):
    """The native arguments for a batch: text buffers, paths, lines, ends."""
    pa = _pa()
    import pyarrow.compute as pc

    batch = _as_batch(batch)
    names = batch.schema.names
    if column not in names:
        raise KeyError(f"the batch has no column `{column}` (columns: {', '.join(names)})")
    arr = batch.column(names.index(column))
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        kind = pa.large_string()
    elif pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
        # Bytes as read from a file: handed over as they are (the same
        # buffers as a large_string), so that a row that is not UTF-8 gets
        # the binary's error record for such a line instead of failing the
        # cast — or being decoded with replacement characters.
        kind = pa.large_binary()
    else:
        raise TypeError(f"column `{column}` must hold JSON text, not {arr.type}")
    arr = arr.cast(kind)
    if arr.null_count:
        arr = pc.fill_null(arr, pa.scalar(b"" if kind == pa.large_binary() else "", kind))
    _, offsets, data = arr.buffers()
    data_bytes = data.to_pybytes() if data is not None else b""
    paths = batch.column(names.index(path_column)).to_pylist() if path_column in names else None
    lines = batch.column(names.index(line_column)).to_pylist() if line_column in names else None
    ends = batch.column(names.index(ends_column)).to_pylist() if ends_column in names else None
    return (data_bytes, offsets.to_pybytes(), arr.offset, len(arr), paths, lines, ends)


def relabel_batch(
    batch: Any,
    *,
    column: str = "transcript",
    path_column: str = "path",
    line_column: str = "line",
    profile: str = "auto",
    choices: Optional[str] = None,
    default_path: str = "<batch>",
    ends_column: str = "ends_file",
):
    """Labels every transcript of ``batch``; returns a
    ``pyarrow.RecordBatch`` with the columns of :data:`COLUMNS`."""
    pa = _pa()
    data, offsets, start, n, paths, lines, ends = _inputs(
        batch, column, path_column, line_column, ends_column
    )
    cols = _native.relabel_columns(
        data, offsets, start, n, paths, lines, default_path, profile, choices, ends
    )
    arrays = [
        pa.Array.from_buffers(
            pa.large_string(),
            n,
            [pa.py_buffer(valid), pa.py_buffer(offs), pa.py_buffer(body)],
        )
        for _, body, offs, valid in cols
    ]
    return pa.RecordBatch.from_arrays(arrays, names=[name for name, *_ in cols])


def detect_batch(
    batch: Any,
    *,
    column: str = "transcript",
    path_column: str = "path",
    line_column: str = "line",
    default_path: str = "<batch>",
    ends_column: str = "ends_file",
) -> str:
    """Detection's counts per model for ``batch`` (JSON text), to add up
    with :func:`merge_counts`."""
    data, offsets, start, n, paths, lines, ends = _inputs(
        batch, column, path_column, line_column, ends_column
    )
    return _native.detect_columns(data, offsets, start, n, paths, lines, default_path, ends)


def merge_counts(counts: Sequence[str]) -> str:
    """Adds up the counts of :func:`detect_batch`."""
    return _native.merge_counts(list(counts))


def choose(counts: str) -> str:
    """Each model's final profile from the counts of the whole dataset: the
    ``choices`` of :func:`relabel_batch`."""
    return _native.choose(counts)
