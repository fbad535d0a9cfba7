#!/usr/bin/env bash
# Whole-process benchmarks of issue 11 (see BENCHMARKS.md): a release build,
# a virtual environment with selectools from PyPI (bench only, never a test
# dependency), then benches/scale/compare.py with the given arguments.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
if [ ! -x target/bench-venv/bin/python ]; then
  python3 -m venv target/bench-venv
  target/bench-venv/bin/pip install --quiet selectools
fi
exec python3 benches/scale/compare.py "$@"
