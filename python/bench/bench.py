"""Benchmarks of the Python package (BENCHMARKS.md, "From Python"), side by
side in one run:

1. ``toolgate.parse`` per output from Python vs the same pipeline run
   in-process in Rust (``_native.bench_parse``: no Python in the loop), and
   vs a pure-Python parser (selectools' ``ToolCallParser``, when installed)
   on the same outputs: the bundled corpus's outputs with their tools.
2. ``relabel_batch`` on one core vs ``toolgate label --format jsonl
   --jobs 1`` on the same generated JSONL file.
3. The Ray relabel on 2 CPUs vs ``toolgate label --format jsonl`` (2
   workers), same files.

Run from the repository root, with a release wheel and binary::

    cargo build --release --bin toolgate
    maturin develop --release          # in a venv with pyarrow, ray, selectools
    python python/bench/bench.py --cli target/release/toolgate [--n 20000] [--ray]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import toolgate
from toolgate import _native

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "tests"))


def corpus_outputs():
    out = []
    for p in sorted((REPO / "transcripts").rglob("*.json")):
        obj = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(obj, dict) and isinstance(obj.get("output"), str):
            out.append((obj["output"], obj.get("tools")))
    return out


def best_of(k, fn):
    times = []
    for _ in range(k):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def bench_parse(reps: int) -> None:
    items = corpus_outputs()
    n = len(items) * reps
    native_items = [(o, json.dumps(t) if t is not None else None) for o, t in items]
    gates = [(o, toolgate.Gate(t)) for o, t in items]

    def py_parse():
        for _ in range(reps):
            for o, t in items:
                toolgate.parse(o, t)

    def gate_parse():
        for _ in range(reps):
            for o, g in gates:
                g.parse(o).decision

    # Interleaved rounds, the minimum of each: on a shared machine the load
    # moves between runs, and each side gets the same chances.
    rust = gp = py = float("inf")
    for _ in range(7):
        rust = min(rust, _native.bench_parse(native_items, reps))
        gp = min(gp, best_of(1, gate_parse))
        py = min(py, best_of(1, py_parse))
    print(f"outputs: {len(items)} bundled, x{reps}")
    print(f"rust pipeline in-process : {rust / n * 1e6:8.2f} us/output")
    print(f"Gate.parse (Python)      : {gp / n * 1e6:8.2f} us/output  ({gp / rust:.2f}x)")
    print(f"toolgate.parse (Python)  : {py / n * 1e6:8.2f} us/output  ({py / rust:.2f}x; tools read per call, full report)")
    try:
        from selectools.parser import ToolCallParser
    except ImportError:
        print("selectools               : not installed")
        return
    sel = ToolCallParser()

    def sel_parse():
        for _ in range(reps):
            for o, _t in items:
                sel.parse(o)

    s = best_of(3, sel_parse)
    print(f"selectools ToolCallParser: {s / n * 1e6:8.2f} us/output  ({s / rust:.2f}x; extraction only, no schema)")


def bench_relabel(cli: str, n: int, use_ray: bool) -> None:
    import pyarrow as pa

    from test_relabel import generate

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        names = generate(tmp, n, 1)
        lines = (tmp / names[0]).read_text(encoding="utf-8").split("\n")
        rows = [(names[0], i, l) for i, l in enumerate(lines, 1) if l.strip()]
        batch = pa.RecordBatch.from_pydict(
            {"path": [r[0] for r in rows], "line": [r[1] for r in rows], "transcript": [r[2] for r in rows]}
        )

        def cli_run(jobs):
            subprocess.run(
                [cli, "label", "--format", "jsonl", "--jobs", str(jobs), names[0]],
                cwd=tmp, check=True, stdout=subprocess.DEVNULL,
            )

        one = best_of(3, lambda: cli_run(1))
        rb = best_of(3, lambda: toolgate.relabel_batch(batch))
        print(f"transcripts: {len(rows)}")
        print(f"toolgate label --jobs 1  : {len(rows) / one:10,.0f} transcripts/s")
        print(f"relabel_batch (1 core)   : {len(rows) / rb:10,.0f} transcripts/s  ({one / rb:.2f}x the CLI)")
        if not use_ray:
            return
        import ray

        from toolgate.integrations import ray as tg_ray

        two = best_of(3, lambda: cli_run(2))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            began = time.perf_counter()
            tg_ray.relabel(["logs/*.jsonl"], "out", concurrency=2, progress=None)
            r = time.perf_counter() - began
        finally:
            os.chdir(cwd)
            ray.shutdown()
        print(f"toolgate label --jobs 2  : {len(rows) / two:10,.0f} transcripts/s")
        print(f"ray relabel, 2 CPUs      : {len(rows) / r:10,.0f} transcripts/s  ({two / r:.2f}x the CLI; incl. the detection pass)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=str(REPO / "target" / "release" / "toolgate"))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--ray", action="store_true")
    args = ap.parse_args()
    bench_parse(args.reps)
    bench_relabel(str(Path(args.cli).resolve()), args.n, args.ray)


if __name__ == "__main__":
    main()
