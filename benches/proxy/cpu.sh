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
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
call_and_prose
mock_upstream "${bins[0]}"
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
# The record thread's share (`toolgate-record`; 0 without --record).
record_ticks() {
  for t in /proc/"$1"/task/*; do
    if [ "$(cat "$t/comm" 2> /dev/null)" = toolgate-record ]; then awk '{print $14 + $15}' "$t/stat"; fi
  done | awk '{s += $1} END {print s + 0}'
}
hz=$(getconf CLK_TCK)
echo "| round | binary | target | req/s | proxy CPU µs/request | of it, the record thread |"
echo "|---:|---|---|---:|---:|---:|"
for r in $(seq "$rounds"); do
  for key in "${targets[@]}"; do
    pid=${procs[$key]}
    t0=$(ticks "$pid"); r0=$(record_ticks "$pid")
    out=$(wrk -t2 -c32 -d"${secs}s" -s "$work/post.lua" "http://127.0.0.1:${ports[$key]}/v1/chat/completions")
    t1=$(ticks "$pid"); r1=$(record_ticks "$pid")
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    echo "$out" | grep -E "Non-2xx|Socket errors" >&2 || true
    bi=${key%%:*}; target=${key#*:}
    python3 -c "print(f'| $r | $(basename "${bins[$bi]}") | $target | $rps | {($t1-$t0)/$hz/$reqs*1e6:.1f} | {($r1-$r0)/$hz/$reqs*1e6:.1f} |')"
  done
done
