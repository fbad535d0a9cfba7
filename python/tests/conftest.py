"""Shared fixtures: the repository, the `toolgate` binary the Python values
are compared with, and the bundled corpus."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "transcripts"


def corpus_files() -> list[str]:
    """Every transcript file of the bundled corpus, relative to the repo."""
    files = [
        p.relative_to(REPO).as_posix()
        for p in sorted(CORPUS.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".jsonl")
    ]
    assert files, "the bundled corpus is empty"
    return files


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `toolgate` binary: $TOOLGATE_BIN, else target/debug/toolgate,
    built with `cargo build` when missing."""
    given = os.environ.get("TOOLGATE_BIN")
    if given:
        return Path(given)
    path = REPO / "target" / "debug" / "toolgate"
    if not path.exists():
        subprocess.run(["cargo", "build", "--bin", "toolgate"], cwd=REPO, check=True)
    return path


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    # Records hold paths relative to the working directory, as the CLI's do.
    monkeypatch.chdir(REPO)
