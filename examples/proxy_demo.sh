#!/bin/sh
# toolgate proxy in front of a model server, without a model: the mock
# upstream answers with the raw outputs of tests/py/upstream (a Hermes-style
# model), the proxy enforces the `hermes` profile and records every exchange,
# then `toolgate label` replays the recordings.
#
#   sh examples/proxy_demo.sh            # builds the release binary first
#   TOOLGATE=target/debug/toolgate sh examples/proxy_demo.sh
#
# Ports 18001 (mock) and 18080 (proxy) on 127.0.0.1 must be free.
set -eu
if [ -z "${TOOLGATE:-}" ]; then
  cargo build --release -q --bin toolgate
  TOOLGATE=target/release/toolgate
fi
DIR=$(mktemp -d)
"$TOOLGATE" mock-upstream tests/py/upstream --listen 127.0.0.1:18001 2>"$DIR/mock.log" &
MOCK=$!
"$TOOLGATE" proxy --upstream http://127.0.0.1:18001/v1 --listen 127.0.0.1:18080 \
  --mode enforce --profile hermes --retries 2 --record "$DIR/recordings" 2>"$DIR/proxy.log" &
PROXY=$!
trap 'kill $MOCK $PROXY 2>/dev/null || true' EXIT
i=0
until curl -sf http://127.0.0.1:18080/healthz >/dev/null; do
  i=$((i + 1)); [ $i -lt 50 ] || { echo "the proxy did not start" >&2; exit 1; }; sleep 0.2
done
TOOLS='[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]'
for task in correct forbidden flaky; do
  echo "== $task"
  curl -s -D "$DIR/headers" http://127.0.0.1:18080/v1/chat/completions \
    -H 'content-type: application/json' -H 'authorization: Bearer sk-demo' \
    -d "{\"model\": \"qwen3-8b\", \"tools\": $TOOLS, \"messages\": [{\"role\": \"user\", \"content\": \"$task\"}]}"
  echo
  grep -i '^x-toolgate-' "$DIR/headers"
done
# Recordings are written just after each answer: wait for the third.
i=0
until [ "$(ls "$DIR/recordings" | grep -c 'jsonl$')" -ge 3 ]; do
  i=$((i + 1)); [ $i -lt 50 ] || break; sleep 0.1
done
echo "== toolgate label --profile hermes $DIR/recordings"
"$TOOLGATE" label --profile hermes "$DIR/recordings"
echo "open them in the inspector: toolgate inspect $DIR/recordings"
