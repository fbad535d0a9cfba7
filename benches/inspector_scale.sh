#!/bin/sh
# The inspector at 100,000 transcripts, measured for real in tmux (issue 11
# item 5): time to the first row on screen, key latency while loading, and
# how long 5,000 files deleted (then added back) at once take to show.
#
# usage: sh benches/inspector_scale.sh [BINARY]   (default target/release/toolgate)
# Needs tmux and python3. Writes its corpus under a temporary directory.
set -eu
BIN=${1:-target/release/toolgate}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
DIR=$(mktemp -d)
S=tg-scale-$$
trap 'tmux kill-session -t $S 2>/dev/null; rm -rf "$DIR"' EXIT

# 10,000 JSONL files of 10 transcripts (100,000), in 10 folders.
python3 - "$DIR/runs" <<'EOF'
import json, os, random, sys
random.seed(7)
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
outs = ['<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
        'The weather is fine, no tool needed.',
        '{"name": "get_weather", "arguments": {"city": "Paris"',
        '[get_weather(city="Rome")]']
for f in range(10000):
    d = os.path.join(sys.argv[1], f"d{f // 1000}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{f:05}.jsonl"), "w") as fh:
        for i in range(10):
            fh.write(json.dumps({"id": f"t{f}_{i}", "model": "m", "task": "weather", "tools": tools,
                                 "output": random.choice(outs),
                                 "expect": {"calls": [{"name": "get_weather"}]}}) + "\n")
EOF

ms() { date +%s%3N; }
screen() { tmux capture-pane -t "$S" -p; }
# Waits until the screen matches the extended regex $1; prints the wait in ms.
wait_for() {
  t0=$(ms)
  while ! screen | grep -Eq "$1"; do
    if [ $(( $(ms) - t0 )) -gt 600000 ]; then echo "timeout waiting for $1" >&2; exit 1; fi
    sleep 0.01
  done
  echo $(( $(ms) - t0 ))
}

t0=$(ms)
tmux new-session -d -s "$S" -x 120 -y 40 "$BIN inspect $DIR/runs"
wait_for '▶\+ t0_0 ' >/dev/null
echo "first row on screen: $(( $(ms) - t0 )) ms (limit 1000 ms)"

# Keys while loading: each j must move the selection.
worst=0
for k in 1 2 3 4 5; do
  tmux send-keys -t "$S" j
  w=$(wait_for "▶\+ t0_$k ")
  [ "$w" -gt "$worst" ] && worst=$w
done
echo "key latency while loading (worst of 5, incl. tmux capture): $worst ms"
echo "still loading at that point: $(screen | grep -Eo 'loading [0-9]+/[0-9]+' || echo 'no (done)')"

w=$(wait_for 'Transcripts 100000 of 100000')
echo "every transcript listed: $(( $(ms) - t0 )) ms after start"

# 5,000 files deleted at once (every file of folders d5…d9), then added back.
mkdir "$DIR/keep"
for d in d5 d6 d7 d8 d9; do cp -r "$DIR/runs/$d" "$DIR/keep/$d"; done
t1=$(ms)
rm -f "$DIR"/runs/d[5-9]/*.jsonl
t1r=$(ms)
echo "rm itself took $(( t1r - t1 )) ms"
wait_for 'Transcripts 50000 of 50000' >/dev/null
t1e=$(ms)
echo "5,000 files deleted: listed $(( t1e - t1r )) ms after rm returned ($(( t1e - t1 )) ms after it began; limit 1000 ms)"
tmux send-keys -t "$S" j
w=$(wait_for "▶\+ t0_6 ")
echo "key latency right after: $w ms"

t2=$(ms)
for d in d5 d6 d7 d8 d9; do cp "$DIR"/keep/$d/*.jsonl "$DIR/runs/$d/"; done
echo "copy itself took $(( $(ms) - t2 )) ms"
wait_for 'Transcripts 100000 of 100000' >/dev/null
echo "5,000 files added: listed after $(( $(ms) - t2 )) ms (replayed, not only seen)"
