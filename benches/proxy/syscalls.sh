#!/usr/bin/env bash
# The proxy's system calls per request, counted by `strace -c -f` (a
# count, not a timing: strace slows every call down). The mock upstream of
# wrk.sh, the proxy in MODE in front of it, a 1-second warm-up, then `wrk`
# with C connections (default 1) for 3 seconds while strace counts.
#
#   bash benches/proxy/syscalls.sh [MODE] [BIN] [-- PROXY ARGS...]
#   C=32 bash benches/proxy/syscalls.sh enforce
#
# MODE defaults to enforce, BIN to target/release/toolgate. Needs strace
# and wrk (apt-get install strace wrk).
set -euo pipefail
mode=${1:-enforce}; b=${2:-}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = -- ] && shift
here=$(cd "$(dirname "$0")" && pwd)
bin=${TOOLGATE_BIN:-$here/../../target/release/toolgate}
[ -z "$b" ] && b=$bin
. "$here/common.sh"
need "apt-get install strace wrk" strace wrk
built "$b"
call_and_prose
mock_upstream "$bin"
p=$(port)
"$b" proxy --upstream "http://127.0.0.1:$up/v1" --listen "127.0.0.1:$p" --mode "$mode" --profile hermes "$@" \
  > /dev/null 2>&1 & pp=$!; pids+=($pp)
wait_up "$p"
url="http://127.0.0.1:$p/v1/chat/completions"
wrk -t1 -c2 -d1s -s "$work/post.lua" "$url" > /dev/null
strace -c -f -p "$pp" -o "$work/counts" 2> /dev/null & sp=$!
sleep 1
n=$(wrk -t1 -c"${C:-1}" -d3s -s "$work/post.lua" "$url" | awk '/requests in/ {print $1}')
sleep 0.5
kill -INT "$sp"; wait "$sp" 2> /dev/null || true
echo "$mode $(basename "$b") $* (c=${C:-1}): $n requests"
# strace's table: % time, seconds, usecs/call, calls, [errors,] syscall;
# calls rarer than one in 200 requests are left out.
awk -v n="$n" '$1 ~ /^[0-9.]+$/ && $NF != "total" && $4 / n >= 0.005 { printf "  %-14s %8.2f per request\n", $NF, $4 / n }' "$work/counts"
