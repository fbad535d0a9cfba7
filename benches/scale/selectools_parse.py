#!/usr/bin/env python3
"""selectools' ToolCallParser.parse once per output of a JSONL corpus,
the loop timed inside Python (loading the file is not timed).

    python benches/scale/selectools_parse.py CORPUS.jsonl
prints: selectools <outputs> <seconds> <calls found>
"""
import json
import sys
import time

from selectools.parser import ToolCallParser

outputs = [json.loads(line)["output"] for line in open(sys.argv[1], encoding="utf-8")]
parser = ToolCallParser()
start = time.perf_counter()
found = 0
for text in outputs:
    if parser.parse(text).tool_call is not None:
        found += 1
elapsed = time.perf_counter() - start
print(f"selectools {len(outputs)} {elapsed:.3f} {found}")
