#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from the bundled transcripts.

usage (from the repository root): python3 fuzz/seed_corpus.py
Creates fuzz/corpus/<target>/ (ignored by git): every bundled transcript file
for `replay` and `load`; every transcript output (and the fail-closed shapes)
prefixed with a profile selector byte and a flags byte for `pipeline`;
examples/patterns.toml and one file per pattern for `patterns`.
"""
import hashlib, json, os, pathlib, re

root = pathlib.Path(__file__).resolve().parent.parent
corpus = root / "fuzz" / "corpus"

def put(target, data: bytes):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

outputs = []
for path in sorted((root / "transcripts").rglob("*")):
    if path.suffix not in (".json", ".jsonl"):
        continue
    data = path.read_bytes()
    put("replay", data)
    put("load", data)
    lines = data.decode("utf-8", "replace").splitlines() if path.suffix == ".jsonl" else [data.decode("utf-8", "replace")]
    for line in lines:
        try:
            t = json.loads(line)
        except ValueError:
            continue
        out = t.get("output") if isinstance(t, dict) else None
        if isinstance(out, str):
            outputs.append(out)

# Every profile index gets every output at least once across the corpus:
# the selector cycles; flags alternate strict (0) and repairs allowed (1).
for i, out in enumerate(outputs):
    put("pipeline", bytes([i % 251, i % 2]) + out.encode())

patterns = (root / "examples" / "patterns.toml").read_text()
put("patterns", patterns.encode())
for block in re.split(r"(?=^\[\[pattern\]\])", patterns, flags=re.M):
    if block.strip().startswith("[[pattern]]"):
        put("patterns", block.encode())

for target in ("replay", "load", "pipeline", "patterns"):
    print(target, len(list((corpus / target).iterdir())))
