#!/usr/bin/env bash
# Proxies side by side under `wrk -c32`, in the same rounds, against one
# mock upstream: `direct` first in each round, then each proxy; each line is
# one round, each figure req/s and the ratio to that round's `direct`.
#
#   bash benches/proxy/ab.sh ROUNDS SECS MODE NAME=BINARY:ARGS...
#
# BINARY may be empty (target/release/toolgate); ARGS are extra proxy
# arguments. For example, two builds in observe, and one with --record:
#
#   bash benches/proxy/ab.sh 4 4 observe old=/tmp/toolgate-old: new=: \
#     rec=:"--record /tmp/rec"
#
# The mock upstream is TOOLGATE_BIN (default target/release/toolgate).
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,14p "$0" >&2; exit 2; }
rounds=$1; secs=$2; mode=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
bin=${TOOLGATE_BIN:-$here/../../target/release/toolgate}
command -v wrk > /dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
[ -x "$bin" ] || { echo "no $bin: cargo build --release --bin toolgate" >&2; exit 2; }
. "$here/common.sh"
call_and_prose
mock_upstream "$bin"
declare -A ports
names=()
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}
  b=${rest%%:*}; args=${rest#*:}
  [ -z "$b" ] && b=$bin
  p=$(port); ports[$name]=$p; names+=("$name")
  # shellcheck disable=SC2086 # ARGS are words
  "$b" proxy --upstream "http://127.0.0.1:$up/v1" --listen "127.0.0.1:$p" --mode "$mode" --profile hermes $args > /dev/null 2>&1 & pids+=($!)
  wait_up "$p"
done
run() { wrk -t2 -c32 -d"${secs}s" -s "$work/post.lua" "http://127.0.0.1:$1/v1/chat/completions" | awk '/Requests\/sec/ {print $2}'; }
for r in $(seq "$rounds"); do
  d=$(run "$up"); line="direct $d"
  for n in "${names[@]}"; do
    v=$(run "${ports[$n]}")
    line="$line | $n $v $(python3 -c "print(f'{$v/$d:.2f}')")"
  done
  echo "$line"
done
