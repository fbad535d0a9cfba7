# Sourced by the proxy benches (wrk.sh, ab.sh, cpu.sh, instructions.sh,
# syscalls.sh, same_record.sh): checks that tools and the binary are
# there, a work directory removed at exit with every process started into
# `pids`, a free port, waiting for a port to answer, the two
# mock transcripts (a hermes call, prose) with the wrk script that asks for
# them in turn, and the mock upstream serving them.
# Exits 2 unless each TOOL is installed: need "HOW TO INSTALL" TOOL...
need() {
  local how=$1; shift
  for tool in "$@"; do
    command -v "$tool" > /dev/null || { echo "$tool is not installed ($how)" >&2; exit 2; }
  done
}
# Exits 2 unless the toolgate binary BIN is built.
built() { [ -x "$1" ] || { echo "no $1: cargo build --release --bin toolgate" >&2; exit 2; }; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; wait 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/t" "$work/rec"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -s "http://127.0.0.1:$1/healthz" > /dev/null 2>&1 && return 0; python3 -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1",'"$1"')))' 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 did not open" >&2; exit 1; }
# The mock's transcripts and wrk's requests: call or prose, in turn.
call_and_prose() {
  local call prose
  call='<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>'
  prose=$(printf 'The weather in Antwerp is mild today, around twelve degrees, with a light breeze from the west. %.0s' 1 2 3 4 5)
  printf '{"model":"m","task":"call","output":"%s","finish_reason":"stop"}\n' "$call" > "$work/t/call.jsonl"
  printf '{"model":"m","task":"prose","output":"%s","finish_reason":"stop"}\n' "$prose" > "$work/t/prose.jsonl"
  # Half the requests ask for the call, half for prose (wrk's threads alternate).
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
}
# The mock upstream (`BIN mock-upstream`, extra arguments after it) on a
# free port, serving the transcripts of `call_and_prose`; sets `up` to its
# port once it answers.
mock_upstream() {
  local bin=$1; shift
  up=$(port)
  "$bin" mock-upstream "$work/t" --listen "127.0.0.1:$up" "$@" > /dev/null 2>&1 & pids+=($!)
  wait_up "$up"
}
