//! The proxy in front of the mock upstream, on loopback ports: modes,
//! enforcement (batch and streamed), retries, native calls, recording,
//! pass-through and operations.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use toolgate_proxy::Background;
use toolgate_proxy::gateway::{self, Engines, Mode, ProxyConfig};
use toolgate_proxy::mock::{self, Mock, MockOptions};
use toolgate_testkit::record::{exchanges, lines as record_lines, when_written};
use toolgate_validator::{Engine, Profile};

const CALL: &str = toolgate_testkit::generate::HERMES_CALL;

fn tools() -> Value {
    toolgate_testkit::generate::weather_tools()
}

fn write(dir: &Path, name: &str, v: Value) {
    std::fs::write(dir.join(name), serde_json::to_string(&v).unwrap()).unwrap();
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let t = |task: &str, out: &str| json!({"model": "m", "task": task, "output": out, "finish_reason": "stop"});
    write(p, "correct.json", t("correct", CALL));
    write(
        p,
        "prose.json",
        t("prose", "The weather in Antwerp is sunny."),
    );
    write(
        p,
        "prose_then_call.json",
        t("prose_then_call", &format!("Let me check.\n{CALL}")),
    );
    write(
        p,
        "malformed.json",
        t(
            "malformed",
            r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"</tool_call>"#,
        ),
    );
    write(
        p,
        "forbidden.json",
        t(
            "forbidden",
            r#"<tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call>"#,
        ),
    );
    let mut cut = t(
        "flaky",
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Ant"#,
    );
    cut["finish_reason"] = json!("length");
    write(p, "flaky_1.json", cut);
    write(p, "flaky_2.json", t("flaky", CALL));
    write(
        p,
        "native.json",
        json!({"model": "m", "task": "native", "output": "", "tool_calls": [
            {"id": "call_ok", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Ghent\"}"}},
            {"id": "call_bad", "type": "function", "function": {"name": "rm_rf", "arguments": "{}"}}
        ]}),
    );
    dir
}

struct Setup {
    _mock: Background,
    proxy: Background,
    record: tempfile::TempDir,
    _dir: tempfile::TempDir,
    mock_addr: std::net::SocketAddr,
}

fn setup(mode: Mode, profile: &str, retries: u32, mock_opts: MockOptions) -> Setup {
    let dir = fixture();
    let (m, errors) = Mock::load(dir.path(), mock_opts);
    assert!(errors.is_empty());
    let mock = mock::spawn(m).unwrap();
    let record = tempfile::tempdir().unwrap();
    let mut cfg = ProxyConfig::new(mock.base_url());
    cfg.mode = mode;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin(profile).unwrap()));
    cfg.record = Some(record.path().to_path_buf());
    cfg.redact = vec!["/messages/0/content".into()];
    cfg.retries = retries;
    cfg.timeout = Duration::from_secs(20);
    let proxy = gateway::spawn(cfg).unwrap();
    Setup {
        mock_addr: mock.addr(),
        _mock: mock,
        proxy,
        record,
        _dir: dir,
    }
}

fn request(task: &str, stream: bool) -> Value {
    json!({"model": "m", "stream": stream, "tools": tools(), "tool_choice": "auto",
           "messages": [{"role": "system", "content": "secret system prompt"}, {"role": "user", "content": task}]})
}

async fn post(s: &Setup, task: &str, stream: bool) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", s.proxy.base_url()))
        .header("authorization", "Bearer sk-test-secret")
        .json(&request(task, stream))
        .send()
        .await
        .unwrap()
}

fn header(r: &reqwest::Response, k: &str) -> String {
    r.headers()
        .get(k)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// The recorded lines once `files` exchanges are written.
fn recorded(s: &Setup, files: usize) -> Vec<Value> {
    when_written(s.record.path(), files)
}

/// Data payloads of an SSE body, parsed (without `[DONE]`), and whether
/// `[DONE]` ended it.
fn sse(body: &str) -> (Vec<Value>, Vec<String>, bool) {
    let mut data = Vec::new();
    let mut comments = Vec::new();
    let mut done = false;
    for line in body.lines() {
        if let Some(d) = line.strip_prefix("data: ") {
            if d == "[DONE]" {
                done = true;
            } else {
                data.push(serde_json::from_str(d).unwrap());
            }
        } else if let Some(c) = line.strip_prefix(':') {
            comments.push(c.to_string());
        }
    }
    (data, comments, done)
}

fn streamed_content(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect()
}

fn streamed_calls(chunks: &[Value]) -> Vec<Value> {
    chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0").cloned())
        .collect()
}

fn finish(chunks: &[Value]) -> Vec<String> {
    chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enforce_batch_correct_prose_malformed_forbidden() {
    let s = setup(Mode::Enforce, "hermes", 0, MockOptions::default());

    let r = post(&s, "correct", false).await;
    assert_eq!(header(&r, "x-toolgate-decision"), "execute");
    assert_eq!(header(&r, "x-toolgate-label"), "pass");
    let v: Value = r.json().await.unwrap();
    let choice = &v["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], Value::Null);
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert!(call["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap()).unwrap(),
        json!({"city": "Antwerp"})
    );
    assert_eq!(v["usage"]["prompt_tokens"], 10, "unknown fields survive");

    // Prose: byte for byte what the upstream sent.
    let direct = reqwest::Client::new()
        .post(format!("http://{}/v1/chat/completions", s.mock_addr))
        .json(&request("prose", false))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let r = post(&s, "prose", false).await;
    assert_eq!(header(&r, "x-toolgate-decision"), "no_call");
    let via = r.bytes().await.unwrap();
    let strip_id = |b: &[u8]| {
        let mut v: Value = serde_json::from_slice(b).unwrap();
        v["id"] = json!("x");
        v
    };
    assert_eq!(strip_id(&via), strip_id(&direct));
    assert!(
        String::from_utf8_lossy(&via).contains("\"content\":\"The weather in Antwerp is sunny.\"")
    );

    for (task, label, gate) in [
        ("malformed", "malformed_json", "parse"),
        ("forbidden", "wrong_tool", "allowlist"),
    ] {
        let r = post(&s, task, false).await;
        assert_eq!(header(&r, "x-toolgate-decision"), "reject", "{task}");
        assert_eq!(header(&r, "x-toolgate-label"), label);
        assert_eq!(header(&r, "x-toolgate-gate"), gate);
        let v: Value = r.json().await.unwrap();
        assert!(
            v["choices"][0]["message"].get("tool_calls").is_none(),
            "{task}: {v}"
        );
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
        assert!(
            v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap()
                .contains("<tool_call>")
        );
    }

    // Every exchange is recorded; Authorization and redacted fields never are.
    let lines = recorded(&s, 4);
    for l in &lines {
        let text = l.to_string();
        assert!(!text.contains("sk-test-secret"), "{text}");
        assert!(!text.contains("secret system prompt"), "{text}");
        assert_eq!(l["request"]["messages"][0]["content"], "[redacted]");
        assert_eq!(l["tool_choice"], "auto");
        assert_eq!(l["proxy"]["mode"], "enforce");
        assert_eq!(l["proxy"]["served"], true);
    }
    let correct = lines.iter().find(|l| l["output"] == CALL).unwrap();
    assert_eq!(correct["proxy"]["decision"], "execute");
    assert_eq!(correct["proxy"]["telemetry"]["schema_validation"], "pass");
    assert_eq!(correct["tools"], tools());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enforce_rerolls_a_truncated_call_before_the_first_byte() {
    for stream in [false, true] {
        let s = setup(Mode::Enforce, "hermes", 2, MockOptions::default());
        let r = post(&s, "flaky", stream).await;
        assert_eq!(header(&r, "x-toolgate-attempts"), "2", "stream={stream}");
        assert_eq!(header(&r, "x-toolgate-decision"), "execute");
        if !stream {
            // The re-rolled attempt's tokens are counted too (10 + 10 prompt).
            assert!(
                header(&r, "x-toolgate-usage-total").starts_with("prompt_tokens=20 "),
                "{}",
                header(&r, "x-toolgate-usage-total")
            );
        }
        let calls = if stream {
            let (chunks, _, done) = sse(&r.text().await.unwrap());
            assert!(done);
            assert_eq!(finish(&chunks), ["tool_calls"]);
            streamed_calls(&chunks)
        } else {
            let v: Value = r.json().await.unwrap();
            v["choices"][0]["message"]["tool_calls"]
                .as_array()
                .unwrap()
                .clone()
        };
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0]["function"]["arguments"], r#"{"city":"Antwerp"}"#);
        let lines = recorded(&s, 1);
        assert_eq!(lines.len(), 2, "both attempts are samples of one exchange");
        assert_eq!(lines[0]["sample"], 0);
        assert_eq!(lines[0]["proxy"]["retry"], "reroll");
        assert_eq!(lines[0]["proxy"]["label"], "truncation");
        assert_eq!(lines[0]["proxy"]["served"], false);
        assert_eq!(lines[1]["proxy"]["served"], true);
        assert_eq!(lines[0]["exchange"], lines[1]["exchange"]);
    }
    // Without retries the truncated call comes back as text.
    let s = setup(Mode::Enforce, "hermes", 0, MockOptions::default());
    let r = post(&s, "flaky", false).await;
    assert_eq!(header(&r, "x-toolgate-label"), "truncation");
    let v: Value = r.json().await.unwrap();
    assert!(v["choices"][0]["message"].get("tool_calls").is_none());
    assert_eq!(v["choices"][0]["finish_reason"], "length");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enforce_stream_forwards_prose_then_complete_calls() {
    let opts = MockOptions {
        delta_chars: 2,
        split_openers: true,
        ..MockOptions::default()
    };
    let s = setup(Mode::Enforce, "hermes", 0, opts);

    let r = post(&s, "prose_then_call", true).await;
    assert_eq!(header(&r, "content-type"), "text/event-stream");
    let (chunks, comments, done) = sse(&r.text().await.unwrap());
    assert!(done);
    assert_eq!(streamed_content(&chunks), "Let me check.\n");
    let calls = streamed_calls(&chunks);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["index"], 0);
    assert_eq!(calls[0]["function"]["name"], "get_weather");
    assert_eq!(calls[0]["function"]["arguments"], r#"{"city":"Antwerp"}"#);
    assert_eq!(finish(&chunks), ["tool_calls"]);
    assert!(
        comments
            .iter()
            .any(|c| c.contains("toolgate mock upstream")),
        "comments pass through"
    );
    assert!(
        comments
            .iter()
            .any(|c| c.contains("decision=execute label=pass"))
    );
    // The prose went out before the call was complete: several content deltas.
    let content_deltas = chunks
        .iter()
        .filter(|c| c.pointer("/choices/0/delta/content").is_some())
        .count();
    assert!(content_deltas > 3, "{content_deltas}");

    for task in ["malformed", "forbidden"] {
        let r = post(&s, task, true).await;
        let (chunks, _, done) = sse(&r.text().await.unwrap());
        assert!(done);
        assert!(streamed_calls(&chunks).is_empty(), "{task}");
        assert!(
            streamed_content(&chunks).starts_with("<tool_call>"),
            "the text comes back, no call"
        );
        assert_eq!(finish(&chunks), ["stop"]);
    }
    let r = post(&s, "prose", true).await;
    let (chunks, _, _) = sse(&r.text().await.unwrap());
    assert_eq!(
        streamed_content(&chunks),
        "The weather in Antwerp is sunny."
    );

    let lines = recorded(&s, 4);
    let streamed = lines
        .iter()
        .find(|l| l["output"].as_str().unwrap().starts_with("Let me"))
        .unwrap();
    let joined: String = streamed["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(joined, streamed["output"].as_str().unwrap());
    assert!(streamed["timing"]["first_byte_ms"].as_f64().is_some());
}

/// SPEC §4 (issue 21): one native call failing the allowlist rejects the
/// whole set; nothing of it reaches the client (this replaced the per-call
/// filtering of native calls).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_calls_failing_the_allowlist_reject_the_whole_set() {
    let opts = MockOptions {
        native: true,
        ..MockOptions::default()
    };
    for stream in [false, true] {
        let s = setup(Mode::Enforce, "hermes", 0, opts.clone());
        let r = post(&s, "native", stream).await;
        assert!(header(&r, "x-toolgate-native").starts_with("calls=2 failed=1: rm_rf"));
        assert_eq!(header(&r, "x-toolgate-decision"), "reject");
        let calls = if stream {
            let (chunks, _, _) = sse(&r.text().await.unwrap());
            assert_eq!(finish(&chunks), ["stop"]);
            streamed_calls(&chunks)
        } else {
            let v: Value = r.json().await.unwrap();
            assert_eq!(v["choices"][0]["finish_reason"], "stop");
            v["choices"][0]["message"]["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        assert!(calls.is_empty(), "stream={stream}: {calls:?}");
        let lines = recorded(&s, 1);
        assert_eq!(
            lines[0]["tool_calls"].as_array().unwrap().len(),
            2,
            "the record keeps what the upstream sent"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_is_byte_faithful_and_shadow_adds_headers() {
    let s = setup(Mode::Observe, "hermes", 0, MockOptions::default());
    let r = post(&s, "correct", false).await;
    assert_eq!(header(&r, "x-toolgate-decision"), "");
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], CALL);
    let r = post(&s, "correct", true).await;
    let body = r.text().await.unwrap();
    let direct = reqwest::Client::new()
        .post(format!("http://{}/v1/chat/completions", s.mock_addr))
        .json(&request("correct", true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let norm = |b: &str| b.replace(|c: char| c.is_ascii_digit(), "");
    assert_eq!(norm(&body), norm(&direct));
    let lines = recorded(&s, 2);
    assert!(
        lines.iter().all(|l| l["proxy"]["decision"] == "execute"),
        "observe records the decision it would take"
    );

    let s = setup(Mode::Shadow, "hermes", 0, MockOptions::default());
    let r = post(&s, "forbidden", false).await;
    assert_eq!(header(&r, "x-toolgate-decision"), "reject");
    assert_eq!(header(&r, "x-toolgate-label"), "wrong_tool");
    assert!(header(&r, "x-toolgate-reason").contains("rm_rf"));
    let v: Value = r.json().await.unwrap();
    assert!(
        v["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .contains("rm_rf")
    );
    let r = post(&s, "forbidden", true).await;
    let (_, comments, _) = sse(&r.text().await.unwrap());
    assert!(
        comments
            .iter()
            .any(|c| c.contains("decision=reject label=wrong_tool gate=allowlist"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reemit_is_sent_once_for_several_fallback_candidates() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "two.json",
        json!({"model": "m", "task": "two",
        "output": "need_tool: yes\n[get_weather(city=\"A\"), get_weather(city=\"B\")]"}),
    );
    let mock = mock::spawn(Mock::load(dir.path(), MockOptions::default()).0).unwrap();
    let mut cfg = ProxyConfig::new(mock.base_url());
    cfg.mode = Mode::Enforce;
    let p = gateway::spawn(cfg).unwrap();
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", p.base_url()))
        .json(&request("two", false))
        .send()
        .await
        .unwrap();
    assert_eq!(header(&r, "x-toolgate-gate"), "single");
    assert_eq!(header(&r, "x-toolgate-attempts"), "2");
    let log: Value = reqwest::get(format!("http://{}/mock/requests", mock.addr()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let log = log.as_array().unwrap();
    assert_eq!(log.len(), 2, "the re-emit request is sent once");
    let messages = log[1]["body"]["messages"].as_array().unwrap();
    assert_eq!(messages[messages.len() - 2]["role"], "assistant");
    assert!(
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("exactly one"),
        "{messages:?}"
    );

    // A request without a `messages` list has nowhere to put the re-emit
    // message: the same request again would be no re-emit, so the
    // rejection is served after one attempt (second hostile-client probe).
    let mut listless = request("two", false);
    listless["messages"] = json!("two");
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", p.base_url()))
        .json(&listless)
        .send()
        .await
        .unwrap();
    assert_eq!(header(&r, "x-toolgate-decision"), "reject");
    assert_eq!(header(&r, "x-toolgate-gate"), "single");
    assert_eq!(header(&r, "x-toolgate-attempts"), "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_passthrough_health_metrics_and_authorization() {
    let s = setup(Mode::Enforce, "hermes", 0, MockOptions::default());
    let models: Value = reqwest::get(format!("{}/models", s.proxy.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "m");
    let r = reqwest::get(format!("http://{}/mock/requests", s.proxy.addr()))
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        200,
        "a path outside /v1 goes to the upstream's origin"
    );
    let health = reqwest::get(format!("http://{}/healthz", s.proxy.addr()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(health, "ok\n");

    post(&s, "correct", false).await.bytes().await.unwrap();
    post(&s, "forbidden", true).await.bytes().await.unwrap();
    let log: Value = reqwest::get(format!("http://{}/mock/requests", s.mock_addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        log[0]["authorization"], "Bearer [14 bytes, ends cret]",
        "Authorization is forwarded"
    );
    // The client's `Content-Type` is replaced by the proxy's own, not sent
    // beside it, streamed or not.
    for entry in log.as_array().unwrap() {
        assert_eq!(
            entry["content_type"],
            json!(["application/json"]),
            "{entry}"
        );
    }
    assert_eq!(log.as_array().unwrap().len(), 2);
    recorded(&s, 2);
    let m = reqwest::get(format!("http://{}/metrics", s.proxy.addr()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        m.contains(r#"toolgate_requests_total{model="m",stream="false",status="200"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"toolgate_decisions_total{model="m",value="execute"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"toolgate_gates_total{model="m",value="allowlist"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"toolgate_labels_total{model="m",value="wrong_tool"} 1"#),
        "{m}"
    );
    assert!(
        m.contains("toolgate_upstream_latency_seconds_bucket"),
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_cancels_the_upstream_and_is_recorded() {
    let opts = MockOptions {
        delta_chars: 1,
        delta_delay: Duration::from_millis(30),
        ..MockOptions::default()
    };
    let s = setup(Mode::Enforce, "hermes", 0, opts);
    let mut r = post(&s, "prose", true).await;
    // Read a little, then hang up.
    let first = r.chunk().await.unwrap().unwrap();
    assert!(!first.is_empty());
    drop(r);
    let lines = recorded(&s, 1);
    assert_eq!(lines[0]["proxy"]["client_disconnected"], true);
    let out = lines[0]["output"].as_str().unwrap();
    assert!(
        out.len() < "The weather in Antwerp is sunny.".len(),
        "the upstream stream stopped early: {out:?}"
    );
}

#[test]
fn a_bad_upstream_url_is_a_configuration_error() {
    let err = gateway::spawn(ProxyConfig::new("localhost:8000"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("http"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_drains_a_stream_in_flight() {
    let opts = MockOptions {
        delta_chars: 2,
        delta_delay: Duration::from_millis(20),
        ..MockOptions::default()
    };
    let s = setup(Mode::Enforce, "hermes", 0, opts);
    let Setup {
        proxy,
        record,
        _mock,
        _dir,
        ..
    } = s;
    let url = format!("{}/chat/completions", proxy.base_url());
    let r = reqwest::Client::new()
        .post(url)
        .json(&request("prose", true))
        .send()
        .await
        .unwrap();
    // Stop the proxy while the stream is still being relayed (~16 deltas × 20 ms).
    let stopping = tokio::task::spawn_blocking(move || proxy.stop());
    let body = r.text().await.unwrap();
    stopping.await.unwrap().unwrap();
    let (chunks, _, done) = sse(&body);
    assert!(done, "the stream in flight was finished: {body}");
    assert_eq!(
        streamed_content(&chunks),
        "The weather in Antwerp is sunny."
    );
    drop(record);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_never_answers_times_out_with_502_and_is_recorded() {
    // Accepts connections (the backlog does) and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let record = tempfile::tempdir().unwrap();
    let mut cfg = ProxyConfig::new(format!("http://{}/v1", silent.local_addr().unwrap()));
    cfg.mode = Mode::Enforce;
    cfg.timeout = Duration::from_millis(300);
    cfg.record = Some(record.path().to_path_buf());
    let p = gateway::spawn(cfg).unwrap();
    for stream in [false, true] {
        let t = std::time::Instant::now();
        let r = reqwest::Client::new()
            .post(format!("{}/chat/completions", p.base_url()))
            .json(&request("prose", stream))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 502, "stream={stream}");
        assert!(t.elapsed() < Duration::from_secs(5));
        let v: Value = r.json().await.unwrap();
        assert!(
            v["error"]["message"].as_str().unwrap().contains("timeout"),
            "{v}"
        );
    }
    let mut lines = Vec::new();
    for _ in 0..100 {
        lines = record_lines(record.path());
        if exchanges(&lines) == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(exchanges(&lines), 2);
    let text = lines[0].to_string();
    assert!(text.contains("timeout"), "{text}");
    drop(silent);
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body) from `io`;
/// `false` when the connection ended first.
fn read_request(io: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() == end + 4 + len {
                return true;
            }
        }
        match io.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => return false,
        }
    }
}

/// An upstream that reads a request on a kept-alive connection and closes
/// it without answering may have run it (a model spends tokens on it): the
/// proxy does not send it again. The client gets a 502 saying why, and the
/// upstream saw the request once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_upstream_read_and_dropped_is_a_502_and_not_sent_again() {
    use std::io::Write;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (connections, requests) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (c, r) = (Arc::clone(&connections), Arc::clone(&requests));
    std::thread::spawn(move || {
        let answer = json!({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]})
        .to_string();
        let ok = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        for (i, io) in listener.incoming().enumerate() {
            let mut io = io.unwrap();
            c.fetch_add(1, Ordering::SeqCst);
            // The first connection: one answer, then the next request is
            // read and the connection closed. Any other answers each.
            while read_request(&mut io) {
                let n = r.fetch_add(1, Ordering::SeqCst);
                if i == 0 && n == 1 {
                    break;
                }
                io.write_all(ok.as_bytes()).unwrap();
            }
        }
    });
    let mut cfg = ProxyConfig::new(format!("http://127.0.0.1:{port}/v1"));
    cfg.mode = Mode::Enforce;
    cfg.timeout = Duration::from_secs(5);
    let p = gateway::spawn(cfg).unwrap();
    // One client connection: one proxy worker, one idle list.
    let client = reqwest::Client::new();
    let post = || {
        client
            .post(format!("{}/chat/completions", p.base_url()))
            .json(&request("prose", false))
            .send()
    };
    let r = post().await.unwrap();
    assert_eq!(r.status(), 200);
    // Read to its end, so that the client's connection is kept.
    r.bytes().await.unwrap();
    let r = post().await.unwrap();
    assert_eq!(r.status(), 502);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["error"]["message"],
        "upstream: request failed: the connection closed before an answer"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        requests.load(Ordering::SeqCst),
        2,
        "the upstream saw it once"
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "not sent on another connection"
    );
}

/// Re-rolled attempts cost tokens: their usage is summed into
/// `x-toolgate-usage-total` (non-streamed, see the re-roll test) or a last
/// `: toolgate usage_total …` comment (streamed), and each attempt's usage
/// is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_usage_of_rerolled_attempts_is_visible() {
    let s = setup(Mode::Enforce, "hermes", 2, MockOptions::default());
    let mut body = request("flaky", true);
    body["stream_options"] = json!({"include_usage": true});
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", s.proxy.base_url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(header(&r, "x-toolgate-attempts"), "2");
    let (_, comments, done) = sse(&r.text().await.unwrap());
    assert!(done);
    assert!(
        comments
            .iter()
            .any(|c| c.starts_with(" toolgate usage_total prompt_tokens=20 ")),
        "{comments:?}"
    );
    let lines = recorded(&s, 1);
    assert_eq!(lines.len(), 2);
    assert!(
        lines
            .iter()
            .all(|l| l["proxy"]["usage"]["prompt_tokens"] == 10),
        "{lines:?}"
    );
}

/// A `--redact`ed value is written nowhere in the record: not in
/// `request`, and not in what a line copies out of the request (`model`,
/// `tools`, `tool_choice`), whether the line is rendered on the worker or
/// written on the record thread after a hook, batch or streamed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redacted_values_are_nowhere_in_the_record() {
    for hook in [false, true] {
        let dir = fixture();
        let (m, errors) = Mock::load(dir.path(), MockOptions::default());
        assert!(errors.is_empty());
        let mock = mock::spawn(m).unwrap();
        let record = tempfile::tempdir().unwrap();
        let mut cfg = ProxyConfig::new(mock.base_url());
        cfg.mode = Mode::Enforce;
        cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
        cfg.record = Some(record.path().to_path_buf());
        cfg.redact = vec![
            "/model".into(),
            "/tools/0/function/description".into(),
            "/tools/1/function/name".into(),
            "/tool_choice/function/name".into(),
            "/messages/0/content".into(),
        ];
        if hook {
            cfg.on_exchange = Some(toolgate_proxy::ExchangeHook::new(|_| {}));
        }
        let proxy = gateway::spawn(cfg).unwrap();
        let mut tools = tools();
        let mut hidden = tools[0].clone();
        hidden["function"]["name"] = json!("SECRET-TOOL-NAME");
        tools[0]["function"]["description"] = json!("internal key SECRET-XYZ-123");
        tools.as_array_mut().unwrap().push(hidden);
        for stream in [false, true] {
            let body = json!({"model": "qwen3-8b-SECRETMODEL", "stream": stream, "tools": tools,
                "tool_choice": {"type": "function", "function": {"name": "SECRET-TOOL-NAME"}},
                "messages": [{"role": "system", "content": "SECRET-SYSTEM-PROMPT"},
                             {"role": "user", "content": "correct"}]});
            let r = reqwest::Client::new()
                .post(format!("{}/chat/completions", proxy.base_url()))
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "hook {hook}, stream {stream}");
            r.bytes().await.unwrap();
        }
        let lines = when_written(record.path(), 2);
        assert_eq!(lines.len(), 2);
        let mut text = String::new();
        for entry in std::fs::read_dir(record.path()).unwrap() {
            text += &std::fs::read_to_string(entry.unwrap().path()).unwrap();
        }
        // The upstream's answer is recorded as it came, and the mock (like
        // a serving stack) names the model it was asked for in it: the one
        // copy of the model, and not the request's.
        let batch = lines
            .iter()
            .find(|l| l["proxy"]["stream"] == false)
            .unwrap();
        assert_eq!(batch["response"]["model"], "qwen3-8b-SECRETMODEL");
        let echo = "\"model\":\"qwen3-8b-SECRETMODEL\",\"choices\"";
        assert_eq!(text.matches(echo).count(), 1, "{text}");
        let text = text.replace(echo, "");
        for secret in [
            "SECRETMODEL",
            "SECRET-XYZ-123",
            "SECRET-TOOL-NAME",
            "SECRET-SYSTEM-PROMPT",
        ] {
            assert!(!text.contains(secret), "hook {hook}: {secret} in {text}");
        }
        assert!(text.contains("[redacted]"));
        for l in &lines {
            assert_eq!(l["model"], "[redacted]", "hook {hook}: {l}");
            assert_eq!(l["request"]["model"], "[redacted]");
            assert_eq!(l["tools"][0]["function"]["description"], "[redacted]");
            assert_eq!(l["tools"][1]["function"]["name"], "[redacted]");
            assert_eq!(l["tool_choice"]["function"]["name"], "[redacted]");
            assert_eq!(l["request"]["messages"][0]["content"], "[redacted]");
            // What is not redacted is still recorded.
            assert_eq!(l["tools"][0]["function"]["name"], "get_weather");
            assert_eq!(l["request"]["messages"][1]["content"], "correct");
        }
    }
}
