#!/usr/bin/env bash
# The proxy beside the upstream called directly, as issue 24 measures it:
# separate processes on loopback, `wrk -c32` (Debian's `wrk`), the mock
# upstream (`toolgate mock-upstream`) answering a hermes tool call or prose,
# and `toolgate proxy` in front of it in each mode, ± --record.
#
#   bash benches/proxy/wrk.sh [ROUNDS] [SECS]
#
# Targets are interleaved within each round, each between two runs of
# `direct`; each line is one wrk run of a target, with the `direct` runs
# around it. Its ratio is taken to their mean (see below).
# Then the streamed time to first content, which wrk cannot time: the
# in-process load generator (crates/proxy/examples/passthrough.rs) against
# the same processes, through a second mock that paces its deltas (16
# characters every 5 ms) and a second proxy per target in front of it.
# With nginx installed (apt-get install nginx-light), nginx as a plain
# reverse proxy (keep-alive upstream, no log) is measured beside them: the
# pass-through floor the issue names.
# Needs release builds:
#   cargo build --release --bin toolgate
#   cargo build --release -p toolgate-proxy --example passthrough
set -euo pipefail
rounds=${1:-3}
secs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
bin=${TOOLGATE_BIN:-$here/../../target/release/toolgate}
command -v wrk > /dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
[ -x "$bin" ] || { echo "no $bin: cargo build --release --bin toolgate" >&2; exit 2; }
loadgen=${TOOLGATE_LOADGEN:-$here/../../target/release/examples/passthrough}
[ -x "$loadgen" ] || { echo "no $loadgen: cargo build --release -p toolgate-proxy --example passthrough" >&2; exit 2; }
. "$here/common.sh"
call_and_prose
up=$(port)
# TOOLGATE_MOCK_WORKERS=0 serves the mock as the proxy is served (one
# single-threaded runtime per core) instead of on tokio's pool.
mock_workers=(); [ -n "${TOOLGATE_MOCK_WORKERS:-}" ] && mock_workers=(--workers "$TOOLGATE_MOCK_WORKERS")
"$bin" mock-upstream "$work/t" --listen "127.0.0.1:$up" "${mock_workers[@]}" > /dev/null 2>&1 & pids+=($!)
paced=$(port)
"$bin" mock-upstream "$work/t" --listen "127.0.0.1:$paced" --delta-chars 16 --delay-ms 5 > /dev/null 2>&1 & pids+=($!)
wait_up "$up"; wait_up "$paced"
declare -A ports
targets="direct=127.0.0.1:$up,127.0.0.1:$paced"
floors=()
if command -v nginx > /dev/null; then
  ng=$(port); ngs=$(port)
  mkdir -p "$work/nginx"
  user=""; [ "$(id -u)" = 0 ] && user="user root;"
  cat > "$work/nginx/nginx.conf" <<NGINX
daemon off;
$user
worker_processes auto;
error_log stderr warn;
pid $work/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  # nginx closes a client's connection after 1,000 requests by default:
  # the load generator would count each close as a failed request.
  keepalive_requests 100000000;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  upstream fast { server 127.0.0.1:$up; keepalive 64; }
  upstream paced { server 127.0.0.1:$paced; keepalive 64; }
  server {
    listen 127.0.0.1:$ng;
    location / { proxy_pass http://fast; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
  server {
    listen 127.0.0.1:$ngs;
    location / { proxy_pass http://paced; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; }
  }
}
NGINX
  nginx -e stderr -c "$work/nginx/nginx.conf" > /dev/null 2>&1 & pids+=($!)
  wait_up "$ng"; wait_up "$ngs"
  ports[nginx]=$ng; floors=(nginx)
  targets="$targets;nginx=127.0.0.1:$ng,127.0.0.1:$ngs"
fi
for target in observe enforce "observe --record" "enforce --record"; do
  p=$(port); ports[$target]=$p
  sp=$(port)
  mode=${target%% *}
  extra=()
  [[ $target == *record* ]] && extra=(--record "$work/rec/$mode")
  "$bin" proxy --upstream "http://127.0.0.1:$up/v1" --listen "127.0.0.1:$p" --mode "$mode" --profile hermes "${extra[@]}" > /dev/null 2>&1 & pids+=($!)
  "$bin" proxy --upstream "http://127.0.0.1:$paced/v1" --listen "127.0.0.1:$sp" --mode "$mode" --profile hermes --max-streams 128 "${extra[@]}" > /dev/null 2>&1 & pids+=($!)
  wait_up "$p"; wait_up "$sp"
  targets="$targets;$target=127.0.0.1:$p,127.0.0.1:$sp"
done
run() { # port -> req/s
  wrk -t2 -c32 -d"${secs}s" -s "$work/post.lua" "http://127.0.0.1:$1/v1/chat/completions" \
    | awk '/Requests\/sec/ {print $2} /Non-2xx|Socket errors/ {print "ERR " $0 > "/dev/stderr"}'
}
# Each target is run between two runs of `direct` (D T1 D T2 D …), and
# its ratio is taken to the mean of the two: this host's speed drifts
# within a round, and a target run long after the one `direct` run of its
# round was measured against another machine state. `--record` is set
# beside its mode by the two ratios to `direct` (each drift-corrected).
echo "| round | target | req/s | direct before, after | × direct | × same mode without --record |"
echo "|---:|---|---:|---|---:|---:|"
for r in $(seq "$rounds"); do
  declare -A got=() ratio=()
  before=$(run "$up")
  for target in "${floors[@]}" observe enforce "observe --record" "enforce --record"; do
    v=$(run "${ports[$target]}"); got[$target]=$v
    after=$(run "$up")
    ratio[$target]=$(python3 -c "print($v / (($before + $after) / 2))")
    same=""
    [[ $target == *record* ]] && same=$(python3 -c "print(f'{${ratio[$target]}/${ratio[${target%% *}]}:.2f}×')")
    echo "| $r | $target | $v | $before, $after | $(python3 -c "print(f'{${ratio[$target]}:.2f}×')") | $same |"
    before=$after
  done
done
echo
echo "Streamed, and the load generator's own throughput phase (1 s per target and round):"
TOOLGATE_BENCH_TARGETS="$targets" TOOLGATE_BENCH_ROUNDS="$rounds" TOOLGATE_BENCH_SECS=1 \
  TOOLGATE_BENCH_STREAM_CONNS=${TOOLGATE_BENCH_STREAM_CONNS:-32} TOOLGATE_BENCH_STREAM_SECS="$secs" \
  "$loadgen" 2> >(grep -v '^round ' >&2)
