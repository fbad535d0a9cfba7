#!/usr/bin/env bash
# The proxy's user-space instructions per request, counted by valgrind's
# callgrind: repeatable where wall-clock figures on this shared machine are
# not (the kernel's share is not counted). The mock upstream of wrk.sh, the
# proxy under callgrind in MODE, a warm-up under `wrk -c2`, then N requests
# (call and prose in turn, one keep-alive connection) counted alone.
#
#   bash benches/proxy/instructions.sh [MODE] [N] [BIN] [-- PROXY ARGS...]
#
# MODE defaults to enforce, N to 1000, BIN to target/release/toolgate.
# For example, a build beside another, and --record:
#
#   bash benches/proxy/instructions.sh enforce 1000 /tmp/toolgate-old
#   bash benches/proxy/instructions.sh enforce 1000 "" -- --record /tmp/rec
set -euo pipefail
mode=${1:-enforce}; n=${2:-1000}; b=${3:-}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = -- ] && shift
here=$(cd "$(dirname "$0")" && pwd)
bin=${TOOLGATE_BIN:-$here/../../target/release/toolgate}
[ -z "$b" ] && b=$bin
. "$here/common.sh"
need "apt-get install valgrind wrk" valgrind callgrind_control callgrind_annotate wrk
built "$b"
call_and_prose
mock_upstream "$bin"
p=$(port)
out="$work/callgrind.out"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
  "$b" proxy --upstream "http://127.0.0.1:$up/v1" --listen "127.0.0.1:$p" --mode "$mode" --profile hermes "$@" \
  > /dev/null 2> "$work/valgrind.err" & vp=$!; pids+=($vp)
for _ in $(seq 200); do curl -s "http://127.0.0.1:$p/healthz" > /dev/null && break; sleep 0.2; done
# Warm-up: connections, the engine, the tool cache.
wrk -t1 -c2 -d2s -s "$work/post.lua" "http://127.0.0.1:$p/v1/chat/completions" > /dev/null
# Under callgrind the warm-up may finish no request at all: the first
# ones (the JSON Schema meta-validator, the tool set's compile) are made
# here, uncounted, so that the count is the steady state's.
cat > "$work/ask.py" <<'PY'
import http.client, json, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
bodies = [json.dumps({"model": "m", "stream": False, "messages": [{"role": "user", "content": t}],
                      "tools": tools}, separators=(",", ":")) for t in ("call", "prose")]
c = http.client.HTTPConnection("127.0.0.1", port)
for i in range(n):
    c.request("POST", "/v1/chat/completions", body=bodies[i % 2],
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"status {r.status}")
PY
python3 "$work/ask.py" "$p" 20
callgrind_control -i on "$vp" > /dev/null
python3 "$work/ask.py" "$p" "$n"
callgrind_control -i off "$vp" > /dev/null
callgrind_control -d "$vp" > /dev/null
total=$(callgrind_annotate "$out.1" 2> /dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "$mode $(basename "$b") $*: $((total / n)) instructions per request ($n requests)"
if [ -n "${KEEP:-}" ]; then cp "$out.1" "$KEEP"; echo "profile: $KEEP (callgrind_annotate --inclusive=yes $KEEP)"; fi
