#!/usr/bin/env bash
# The proxy's CPU per request, binary beside binary: utime + stime of each
# proxy process (/proc/PID/stat) over one `wrk -c32` run, divided by the
# requests served; observe and enforce ± --record for every binary given,
# interleaved, against one mock upstream (the requests of wrk.sh).
#
#   bash benches/proxy/cpu.sh ROUNDS SECS BIN...
set -euo pipefail
command -v wrk > /dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
[ $# -ge 3 ] || { echo "usage: bash benches/proxy/cpu.sh ROUNDS SECS BIN..." >&2; exit 2; }
rounds=$1; secs=$2; shift 2
bins=("$@")
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; wait 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/t"
call='<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>'
prose=$(printf 'The weather in Antwerp is mild today, around twelve degrees, with a light breeze from the west. %.0s' 1 2 3 4 5)
printf '{"model":"m","task":"call","output":"%s","finish_reason":"stop"}\n' "$call" > "$work/t/call.jsonl"
printf '{"model":"m","task":"prose","output":"%s","finish_reason":"stop"}\n' "$prose" > "$work/t/prose.jsonl"
cat > "$work/post.lua" <<'LUA'
local bodies = {}
for i, task in ipairs({"call", "prose"}) do
  bodies[i] = '{"model":"m","stream":false,"messages":[{"role":"user","content":"' .. task ..
    '"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":' ..
    '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}'
end
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, bodies[(n % 2) + 1])
end
response = function(status, headers, body)
  if status ~= 200 then error("status " .. status) end
end
LUA
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -s "http://127.0.0.1:$1/healthz" > /dev/null 2>&1 && return 0; sleep 0.1; done; echo "port $1 did not open" >&2; exit 1; }
up=$(port)
"${bins[0]}" mock-upstream "$work/t" --listen "127.0.0.1:$up" > /dev/null 2>&1 & pids+=($!)
wait_up "$up"
declare -A ports procs
targets=()
for bi in "${!bins[@]}"; do
  for target in observe "observe --record" enforce "enforce --record"; do
    key="$bi:$target"; targets+=("$key")
    p=$(port); ports[$key]=$p
    mode=${target%% *}
    extra=()
    [[ $target == *record* ]] && { mkdir -p "$work/rec/$bi-$mode"; extra=(--record "$work/rec/$bi-$mode"); }
    "${bins[$bi]}" proxy --upstream "http://127.0.0.1:$up/v1" --listen "127.0.0.1:$p" --mode "$mode" --profile hermes "${extra[@]}" > /dev/null 2>&1 & pids+=($!); procs[$key]=$!
    wait_up "$p"
  done
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
echo "| round | binary | target | req/s | proxy CPU µs/request |"
echo "|---:|---|---|---:|---:|"
for r in $(seq "$rounds"); do
  for key in "${targets[@]}"; do
    pid=${procs[$key]}
    t0=$(ticks "$pid")
    out=$(wrk -t2 -c32 -d"${secs}s" -s "$work/post.lua" "http://127.0.0.1:${ports[$key]}/v1/chat/completions")
    t1=$(ticks "$pid")
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    echo "$out" | grep -E "Non-2xx|Socket errors" >&2 || true
    bi=${key%%:*}; target=${key#*:}
    python3 -c "print(f'| $r | $(basename "${bins[$bi]}") | $target | $rps | {($t1-$t0)/$hz/$reqs*1e6:.1f} |')"
  done
done
