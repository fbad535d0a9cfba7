#!/usr/bin/env bash
# What a proxy binary records, made comparable across binaries: the same
# requests (observe, shadow, enforce with --retries 1; each with and
# without --redact; a hermes call, a wrong tool, a truncated call, prose
# with escapes; batch and streamed; with and without an `api_key`) through
# `toolgate proxy --record` in front of `toolgate mock-upstream`
# (deterministic answers). Prints every record line with the per-run parts
# blanked in the text (the exchange id, `timing`, call ids, the mock's
# `id`/`created`), sorted, into OUT; `cmp` two binaries' OUT files.
#
#   bash benches/proxy/same_record.sh BIN OUT
set -euo pipefail
bin=$1; out=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
call='<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>'
bad='<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>'
cut='<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ant'
prose='The weather in Antwerp is mild today, \\"quoted\\" é 😀 \\u0001.'
printf '{"model":"m","task":"call","output":"%s","finish_reason":"stop"}\n' "$call" > "$work/t/call.jsonl"
printf '{"model":"m","task":"bad","output":"%s","finish_reason":"stop"}\n' "$bad" > "$work/t/bad.jsonl"
printf '{"model":"m","task":"cut","output":"%s","finish_reason":"length"}\n' "$cut" > "$work/t/cut.jsonl"
printf '{"model":"m","task":"prose","output":"%s","finish_reason":"stop"}\n' "$prose" > "$work/t/prose.jsonl"
mock_upstream "$bin"
for mode in observe shadow enforce; do
  for redact in no yes; do
    p=$(port); dir="$work/rec/$mode-$redact"
    extra=(); [ $redact = yes ] && extra=(--redact /messages/0/content)
    "$bin" proxy --upstream "http://127.0.0.1:$up/v1" --listen "127.0.0.1:$p" --mode "$mode" --profile hermes --retries 1 --record "$dir" "${extra[@]}" > /dev/null 2>&1 & pids+=($!); wait_up "$p"
    for task in call bad cut prose; do
      for stream in false true; do
        for key in '' '"api_key":"sk-x",'; do
          body='{'$key'"model":"m","stream":'$stream',"messages":[{"role":"user","content":"'$task' \u00e9 /"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],"tool_choice":"auto", "n": 1.50, "big": 12345678901234567890123}'
          curl -s -H 'content-type: application/json' -H "x-toolgate-task: $task" -d "$body" "http://127.0.0.1:$p/v1/chat/completions" > /dev/null
        done
      done
    done
  done
done
sleep 1.5
python3 - "$work/rec" > "$out" <<'PY'
import json, os, sys, re
root = sys.argv[1]
for d in sorted(os.listdir(root)):
    lines = []
    for f in sorted(os.listdir(os.path.join(root, d))):
        lines += open(os.path.join(root, d, f)).read().splitlines()
    out = []
    for l in lines:
        v = json.loads(l)
        # blank per-run fields textually, keeping every other byte
        l = l.replace(json.dumps(v["exchange"]), '"X"', 1)
        l = l.replace(json.dumps(v["timing"], separators=(",", ":")), '"T"', 1)
        l = re.sub(r'call_[0-9a-f]{24}', 'call_ID', l)
        l = re.sub(r'"(id|created)":("chatcmpl-[^"]*"|\d+)', r'"\1":"I"', l)
        out.append(l)
    # order within a run can differ (concurrency): sort
    for l in sorted(out):
        print(d, l)
PY
wc -l < "$out"
