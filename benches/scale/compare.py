#!/usr/bin/env python3
"""Whole-process figures of issue 11, side by side in one interleaved run.

    python3 benches/scale/compare.py [--rounds 3] [--warmup 1] [--sizes 20000,100000]

Needs a release build (`cargo build --release`) and a virtual environment
with selectools from PyPI (`benches/scale/run.sh` makes both; selectools is
never a test dependency). For each corpus size N it generates
`target/scale/cN.jsonl` (benches/scale/gen_corpus.py, deterministic), then
runs, alternating, `ROUNDS` times each:

  - `toolgate label --format jsonl cN.jsonl > /dev/null` (full replay of every
    mode, strict and lenient, plus each model's profile), timed as a whole
    process (wall clock), with its peak RSS (wait4);
  - selectools' `ToolCallParser.parse` once per output, its loop timed inside
    Python (benches/scale/selectools_parse.py; loading is not timed).

and prints the medians and their ratio (selectools time / toolgate time:
above 1, toolgate is faster), and the peak RSS at each size.

Before the timed rounds each side runs once untimed (`--warmup 1`), as
hyperfine's `--warmup` does: the first process after the corpus is written
or after the other side ran pays for the page cache and for faulting in its
own binary, which is not what either side's figure is about.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def run_measured(cmd):
    """Wall time (s) and peak RSS (MB) of a whole process."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{' '.join(cmd)} exited {code}: {err}")
    return wall, usage.ru_maxrss / 1024.0


def selectools_time(python, corpus):
    out = subprocess.run(
        [python, os.path.join(HERE, "selectools_parse.py"), corpus],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    return float(out[2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="20000,100000")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--python", default=os.path.join(ROOT, "target", "bench-venv", "bin", "python"))
    ap.add_argument("--toolgate", default=os.path.join(ROOT, "target", "release", "toolgate"))
    args = ap.parse_args()
    os.makedirs(os.path.join(ROOT, "target", "scale"), exist_ok=True)
    rss = {}
    for n in [int(x) for x in args.sizes.split(",")]:
        corpus = os.path.join(ROOT, "target", "scale", f"c{n}.jsonl")
        if not os.path.exists(corpus):
            subprocess.run([sys.executable, os.path.join(HERE, "gen_corpus.py"), str(n), corpus], check=True)
        size = os.path.getsize(corpus)
        tg, sel, peaks = [], [], []
        for _ in range(args.warmup):
            run_measured([args.toolgate, "label", "--format", "jsonl", corpus])
            if n <= 20000:
                selectools_time(args.python, corpus)
        for _ in range(args.rounds):
            wall, peak = run_measured([args.toolgate, "label", "--format", "jsonl", corpus])
            tg.append(wall)
            peaks.append(peak)
            if n <= 20000:
                sel.append(selectools_time(args.python, corpus))
        rss[n] = max(peaks)
        line = f"N={n} ({size / 1e6:.1f} MB file): toolgate label median {statistics.median(tg):.3f} s (runs {', '.join(f'{x:.3f}' for x in tg)}), peak RSS {rss[n]:.0f} MB"
        if sel:
            ratio = statistics.median(sel) / statistics.median(tg)
            line += f"; selectools parse loop median {statistics.median(sel):.3f} s (runs {', '.join(f'{x:.3f}' for x in sel)}); ratio {ratio:.2f}x"
        print(line, flush=True)
    sizes = sorted(rss)
    if len(sizes) >= 2:
        print(f"peak RSS {sizes[-1]} / {sizes[0]}: {rss[sizes[-1]] / rss[sizes[0]]:.2f}x")


if __name__ == "__main__":
    main()
