//! The proxy's fault model (issue 21): in front of the mock upstream's
//! fault injection (`x-mock-fault`), no unchecked or unallowlisted call
//! reaches a client in `enforce`, streamed or not; broken streams never end
//! cleanly; unreadable requests are refused and recorded; every exchange is
//! recorded, including refused, failed and abandoned ones.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use toolgate_proxy::Background;
use toolgate_proxy::gateway::{self, Engines, Mode, ProxyConfig};
use toolgate_proxy::mock::{self, Mock, MockOptions};
use toolgate_testkit::record::{lines as record_lines, when_written};
use toolgate_validator::{Engine, Profile};

const CALL: &str = toolgate_testkit::generate::HERMES_CALL;

fn tools() -> Value {
    toolgate_testkit::generate::weather_tools()
}

fn native(id: &str, name: &str, args: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
}

fn write(dir: &Path, name: &str, v: Value) {
    std::fs::write(dir.join(name), serde_json::to_string(&v).unwrap()).unwrap();
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(
        p,
        "correct.json",
        json!({"model": "m", "task": "correct", "output": CALL, "finish_reason": "stop"}),
    );
    write(
        p,
        "prose.json",
        json!({"model": "m", "task": "prose", "output": "The weather in Antwerp is sunny.", "finish_reason": "stop"}),
    );
    write(
        p,
        "native_ok.json",
        json!({"model": "m", "task": "native_ok", "output": "", "tool_calls": [
            native("call_ok", "get_weather", r#"{"city": "Ghent"}"#)]}),
    );
    write(
        p,
        "native_bad.json",
        json!({"model": "m", "task": "native_bad", "output": "", "tool_calls": [
            native("call_bad", "delete_files", r#"{"path": "/"}"#)]}),
    );
    write(
        p,
        "native_mixed.json",
        json!({"model": "m", "task": "native_mixed", "output": "", "tool_calls": [
            native("call_ok", "get_weather", r#"{"city": "Ghent"}"#),
            native("call_bad", "delete_files", r#"{"path": "/"}"#)]}),
    );
    dir
}

struct Setup {
    _mock: Background,
    proxy: Background,
    record: tempfile::TempDir,
    _dir: tempfile::TempDir,
}

fn setup_with(mode: Mode, tweak: impl FnOnce(&mut ProxyConfig)) -> Setup {
    let dir = fixture();
    let opts = MockOptions {
        native: true,
        ..MockOptions::default()
    };
    let (m, errors) = Mock::load(dir.path(), opts);
    assert!(errors.is_empty());
    let mock = mock::spawn(m).unwrap();
    let record = tempfile::tempdir().unwrap();
    let mut cfg = ProxyConfig::new(mock.base_url());
    cfg.mode = mode;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    cfg.record = Some(record.path().to_path_buf());
    cfg.timeout = Duration::from_millis(800);
    tweak(&mut cfg);
    let proxy = gateway::spawn(cfg).unwrap();
    Setup {
        _mock: mock,
        proxy,
        record,
        _dir: dir,
    }
}

fn setup(mode: Mode) -> Setup {
    setup_with(mode, |_| {})
}

fn request(task: &str, stream: bool) -> Value {
    json!({"model": "m", "stream": stream, "tools": tools(),
           "messages": [{"role": "user", "content": task}]})
}

async fn post_body(s: &Setup, body: Value, fault: Option<&str>) -> reqwest::Response {
    let mut r = reqwest::Client::new()
        .post(format!("{}/chat/completions", s.proxy.base_url()))
        .timeout(Duration::from_secs(10))
        .json(&body);
    if let Some(f) = fault {
        r = r.header("x-mock-fault", f);
    }
    r.send().await.unwrap()
}

async fn post(s: &Setup, task: &str, stream: bool, fault: Option<&str>) -> reqwest::Response {
    post_body(s, request(task, stream), fault).await
}

fn header(r: &reqwest::Response, k: &str) -> String {
    r.headers()
        .get(k)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// What a client read: the status, the body as far as it arrived, and
/// whether the body ended cleanly.
struct Got {
    status: u16,
    body: String,
    clean_end: bool,
}

async fn read(mut r: reqwest::Response) -> Got {
    let status = r.status().as_u16();
    let mut bytes = Vec::new();
    let clean_end = loop {
        match r.chunk().await {
            Ok(Some(c)) => bytes.extend_from_slice(&c),
            Ok(None) => break true,
            Err(_) => break false,
        }
    };
    Got {
        status,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        clean_end,
    }
}

/// Every `tool_calls` or `function_call` the client could act on in a body
/// (JSON or SSE).
fn calls_in(body: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut scan = |v: &Value| {
        for c in v
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for part in ["message", "delta"] {
                if let Some(m) = c.get(part) {
                    for k in ["tool_calls", "function_call", "tool_use"] {
                        if let Some(x) = m.get(k).filter(|x| !x.is_null()) {
                            out.push(x.clone());
                        }
                    }
                }
            }
        }
    };
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        scan(&v);
    }
    for line in body.lines() {
        if let Some(d) = line.strip_prefix("data: ")
            && let Ok(v) = serde_json::from_str::<Value>(d)
        {
            scan(&v);
        }
    }
    out
}

fn has_done(body: &str) -> bool {
    body.lines().any(|l| l == "data: [DONE]")
}

/// The recorded lines once `files` exchanges are written.
fn recorded(s: &Setup, files: usize) -> Vec<Value> {
    when_written(s.record.path(), files)
}

/// An upstream answer the proxy cannot check (a bad byte, a lone surrogate
/// escape, the wrong content type for the request, an unknown call field)
/// carrying a call to a tool that is not allowlisted: in `enforce` the
/// client gets a 502 (or, once the stream has started, an error event and
/// no `[DONE]`) and never the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unchecked_answers_never_reach_an_enforce_client() {
    let s = setup(Mode::Enforce);
    let faults = [
        "bad_utf8",
        "lone_surrogate",
        "wrong_type",
        "unknown_call_field",
    ];
    for fault in faults {
        for stream in [false, true] {
            let got = read(post(&s, "native_bad", stream, Some(fault)).await).await;
            let what = format!("{fault} stream={stream}: {} {}", got.status, got.body);
            assert!(calls_in(&got.body).is_empty(), "{what}");
            assert!(!has_done(&got.body), "{what}");
            if got.status == 502 {
                let v: Value = serde_json::from_str(&got.body).unwrap();
                let msg = v["error"]["message"].as_str().unwrap();
                assert!(
                    msg.contains("could not be checked")
                        || msg.contains("not an event stream")
                        || msg.contains("UTF-8")
                        || msg.contains("JSON")
                        || msg.contains("call-bearing"),
                    "{what}"
                );
            } else {
                assert_eq!(got.status, 200, "{what}");
                assert!(got.body.contains("upstream_stream_broken"), "{what}");
                assert!(!got.clean_end, "{what}");
            }
        }
    }
    let lines = recorded(&s, faults.len() * 2);
    for l in &lines {
        let err = l["proxy"]["error"].as_str().unwrap_or("");
        assert!(err.starts_with("unchecked"), "{l}");
        assert_ne!(l["proxy"]["decision"], "execute", "{l}");
    }
    let m = metrics(&s).await;
    assert!(
        m.contains(&format!(
            "toolgate_upstream_unchecked_total{{model=\"m\"}} {}",
            faults.len() * 2
        )),
        "{m}"
    );
}

/// In `observe` the same answers pass unchanged (that is observe's
/// contract) but are recorded as unchecked; `shadow` says what enforce
/// would have done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_relays_unchecked_answers_and_records_why() {
    let s = setup(Mode::Shadow);
    let r = post(&s, "native_bad", false, Some("wrong_type")).await;
    assert_eq!(header(&r, "x-toolgate-decision"), "reject");
    assert_eq!(header(&r, "x-toolgate-gate"), "unchecked");
    assert!(header(&r, "x-toolgate-reason").contains("event stream"));
    let s = setup(Mode::Observe);
    let got = read(post(&s, "native_bad", false, Some("bad_utf8")).await).await;
    assert_eq!(got.status, 200);
    let lines = recorded(&s, 1);
    assert!(
        lines[0]["proxy"]["error"]
            .as_str()
            .unwrap()
            .starts_with("unchecked: the answer is not valid JSON"),
        "{}",
        lines[0]
    );
}

/// enforce edits answers that are well formed but not compact as it edits
/// compact ones: a pretty-printed answer is edited over its bytes (its
/// spacing outside the edited members kept), an answer whose `content` key
/// is written with an escape through a `Value` (serialized compactly). In
/// both, a text call is served as a native call, a rejected native set is
/// taken out, prose is served as it came, and the other fields survive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_in_any_form_are_edited_alike() {
    let s = setup(Mode::Enforce);
    for fault in ["pretty", "escaped_keys"] {
        let got = read(post(&s, "correct", false, Some(fault)).await).await;
        let what = format!("{fault}: {} {}", got.status, got.body);
        assert_eq!(got.status, 200, "{what}");
        let v: Value = serde_json::from_str(&got.body).unwrap();
        let choice = &v["choices"][0];
        assert_eq!(choice["finish_reason"], "tool_calls", "{what}");
        assert_eq!(choice["message"]["content"], Value::Null, "{what}");
        let calls = choice["message"]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 1, "{what}");
        assert_eq!(calls[0]["function"]["name"], "get_weather", "{what}");
        assert_eq!(v["usage"]["total_tokens"], 30, "{what}");
        assert_eq!(choice["message"]["role"], "assistant", "{what}");
        match fault {
            // Edited over its bytes: the upstream's newlines are still there.
            "pretty" => assert!(got.body.contains("\n  \"usage\": {\n"), "{what}"),
            // Edited as a `Value`: written compactly, the key as its name.
            _ => {
                assert!(!got.body.contains('\n'), "{what}");
                assert!(!got.body.contains("\\u0065"), "{what}");
            }
        }

        let got = read(post(&s, "native_bad", false, Some(fault)).await).await;
        let what = format!("{fault}: {} {}", got.status, got.body);
        assert!(calls_in(&got.body).is_empty(), "{what}");
        let v: Value = serde_json::from_str(&got.body).unwrap();
        assert_eq!(v["choices"][0]["finish_reason"], "stop", "{what}");
        assert!(
            v["choices"][0]["message"].get("tool_calls").is_none(),
            "{what}"
        );

        let direct = read(post(&s, "prose", false, Some(fault)).await).await;
        let v: Value = serde_json::from_str(&direct.body).unwrap();
        assert_eq!(
            v["choices"][0]["message"]["content"], "The weather in Antwerp is sunny.",
            "{fault}: {}",
            direct.body
        );
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
    }
}

/// SPEC §4: one failing native call rejects the whole set. [get_weather,
/// delete_files] never comes out as get_weather, and the headers agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_plan_never_passes() {
    let s = setup(Mode::Enforce);
    for stream in [false, true] {
        let r = post(&s, "native_mixed", stream, None).await;
        assert_eq!(
            header(&r, "x-toolgate-decision"),
            "reject",
            "stream={stream}"
        );
        assert_eq!(header(&r, "x-toolgate-label"), "wrong_tool");
        assert!(header(&r, "x-toolgate-native").starts_with("calls=2 failed=1: delete_files"));
        let got = read(r).await;
        assert!(
            calls_in(&got.body).is_empty(),
            "stream={stream}: {}",
            got.body
        );
        if stream {
            assert!(has_done(&got.body) && got.clean_end);
            assert!(
                got.body.contains("\"finish_reason\":\"stop\""),
                "{}",
                got.body
            );
            assert!(got.body.contains("decision=reject"));
        } else {
            let v: Value = serde_json::from_str(&got.body).unwrap();
            assert_eq!(v["choices"][0]["finish_reason"], "stop");
        }
    }
    // A set that passes whole is served whole.
    for stream in [false, true] {
        let r = post(&s, "native_ok", stream, None).await;
        assert_eq!(
            header(&r, "x-toolgate-decision"),
            "execute",
            "stream={stream}"
        );
        let got = read(r).await;
        assert_eq!(calls_in(&got.body).len(), 1, "{}", got.body);
    }
    let lines = recorded(&s, 4);
    let mixed: Vec<_> = lines
        .iter()
        .filter(|l| l["tool_calls"].as_array().is_some_and(|c| c.len() == 2))
        .collect();
    assert_eq!(mixed.len(), 2);
    assert!(mixed.iter().all(|l| l["proxy"]["decision"] == "reject"));
}

/// The legacy `function_call` (and `finish_reason: function_call`) is a
/// call like any other; a request's `functions` list is its allowlist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_legacy_function_call_is_judged() {
    let s = setup(Mode::Enforce);
    for stream in [false, true] {
        let got = read(post(&s, "native_bad", stream, Some("legacy")).await).await;
        assert_eq!(got.status, 200);
        assert!(
            calls_in(&got.body).is_empty(),
            "stream={stream}: {}",
            got.body
        );
        assert!(!got.body.contains("\"finish_reason\":\"function_call\""));
    }
    let functions = json!([{"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]);
    for stream in [false, true] {
        let body = json!({"model": "m", "stream": stream, "functions": functions,
            "messages": [{"role": "user", "content": "native_ok"}]});
        let r = post_body(&s, body, Some("legacy")).await;
        assert_eq!(
            header(&r, "x-toolgate-decision"),
            "execute",
            "stream={stream}"
        );
        let got = read(r).await;
        let calls = calls_in(&got.body);
        assert!(!calls.is_empty(), "stream={stream}: {}", got.body);
        assert!(
            calls
                .iter()
                .all(|c| c.get("name").is_some_and(|n| n == "get_weather")
                    || c.get("name").is_none())
        );
        assert!(
            got.body.contains("\"finish_reason\":\"function_call\""),
            "{}",
            got.body
        );
    }
    // Without `functions` (nor `tools`) nothing is allowlisted.
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "native_ok"}]});
    let r = post_body(&s, body, Some("legacy")).await;
    assert_eq!(header(&r, "x-toolgate-decision"), "reject");
    let got = read(r).await;
    assert!(calls_in(&got.body).is_empty(), "{}", got.body);
    recorded(&s, 5);
}

/// A stream that sends a complete call and then resets, stalls past the
/// timeout, ends before `[DONE]`, sends an error event or a non-JSON event,
/// or passes the size limit: no call executes, the client gets an error
/// (an error event and a cut body, or a 502), never `[DONE]`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_streams_never_release_a_call_or_end_cleanly() {
    let s = setup_with(Mode::Enforce, |c| c.max_response = 1024 * 1024);
    let faults = [
        "reset",
        "stall",
        "end_early",
        "error_event",
        "typed_error_event",
        "not_json",
        "huge",
    ];
    for fault in faults {
        for task in ["native_ok", "correct", "prose"] {
            let t = Instant::now();
            let got = read(post(&s, task, true, Some(fault)).await).await;
            let what = format!("{fault} {task}: {} {}", got.status, got.body);
            assert!(t.elapsed() < Duration::from_secs(5), "{what}");
            assert!(calls_in(&got.body).is_empty(), "{what}");
            assert!(!has_done(&got.body), "{what}");
            assert!(!got.body.contains("finish_reason\":\"tool_calls"), "{what}");
            if got.status == 200 {
                assert!(!got.clean_end, "{what}");
                assert!(got.body.contains("upstream_stream_broken"), "{what}");
            } else {
                assert_eq!(got.status, 502, "{what}");
            }
        }
    }
    let lines = recorded(&s, faults.len() * 3);
    for l in &lines {
        assert!(l["proxy"]["error"].is_string(), "{l}");
        assert_ne!(l["proxy"]["decision"], "execute", "{l}");
    }
}

/// An upstream redirect of a chat completion is not relayed in `enforce`:
/// an SDK that follows it (the OpenAI client does, for a 307) would post
/// the request again to the path it names, past the judgment
/// (faulty-upstream probe). `observe` relays it as it came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_redirect_is_not_relayed_in_enforce() {
    let s = setup(Mode::Enforce);
    for stream in [false, true] {
        let r = post(&s, "native_ok", stream, Some("redirect")).await;
        assert!(r.headers().get("location").is_none(), "stream {stream}");
        let got = read(r).await;
        assert_eq!(got.status, 502, "stream {stream}: {}", got.body);
        assert!(
            got.body.contains(
                "the upstream redirected (307 Temporary Redirect): not followed, not relayed"
            ),
            "{}",
            got.body
        );
    }
    let lines = recorded(&s, 2);
    for l in &lines {
        assert_eq!(
            l["proxy"]["error"],
            "the upstream redirected (307 Temporary Redirect): not followed, not relayed",
            "{l}"
        );
    }
    let s = setup(Mode::Observe);
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{}/chat/completions", s.proxy.base_url()))
        .header("x-mock-fault", "redirect")
        .json(&request("native_ok", false))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 307);
    assert_eq!(header(&r, "location"), "/v1/chat/completions/elsewhere");
}

/// An answer whose status is neither a success nor an error (999, which
/// hyper reads as a status) is not relayed in `enforce`: Python's
/// `requests` calls it `ok` and reads its calls, so the unjudged `rm_rf`
/// call reached such a client (HTTP probe). A 4xx or 5xx is still relayed
/// as it came, and `observe` relays the odd status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_neither_success_nor_error_is_not_relayed_in_enforce() {
    let call = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"rm_rf","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;
    let answer = |status: &str, ct: &str, body: &str| {
        leak(format!(
            "HTTP/1.1 {status}\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ))
    };
    let events = format!(
        "data: {}\n\ndata: [DONE]\n\n",
        call.replace("chat.completion\"", "chat.completion.chunk\"")
            .replace("\"message\"", "\"delta\"")
            .replace(r#"[{"id":"x""#, r#"[{"index":0,"id":"x""#)
    );
    for stream in [false, true] {
        let (ct, body) = if stream {
            ("text/event-stream", events.as_str())
        } else {
            ("application/json", call)
        };
        let (proxy, _dir) = fixed_proxy(answer("999 Odd", ct, body), Mode::Enforce, 1 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 502, "stream {stream}: {}", got.body);
        assert!(
            got.body.contains(
                "the upstream answered with status 999, neither a success nor an error: not relayed"
            ),
            "stream {stream}: {}",
            got.body
        );
        assert!(!got.body.contains("rm_rf"), "{}", got.body);
        let (proxy, _dir) = fixed_proxy(answer("500 Oops", ct, body), Mode::Enforce, 1 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 500, "stream {stream}: {}", got.body);
        let (proxy, _dir) = fixed_proxy(answer("999 Odd", ct, body), Mode::Observe, 1 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 999, "stream {stream}: {}", got.body);
    }
}

/// A content-coded answer (`Content-Encoding: gzip`) is relayed with its
/// header where the proxy relays bytes, and never judged: the proxy does
/// not decompress. Stripping the header had left clients with coded bytes
/// they could not read (faulty-upstream probe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_content_coded_answer_keeps_its_coding_and_is_not_judged() {
    let why = "unchecked: the answer is content-coded (`gzip`): the proxy does not decompress, so it cannot be checked";
    let s = setup(Mode::Enforce);
    for stream in [false, true] {
        let got = read(post(&s, "native_ok", stream, Some("coded")).await).await;
        assert_eq!(got.status, 502, "stream {stream}: {}", got.body);
        assert!(got.body.contains("content-coded (`gzip`)"), "{}", got.body);
        assert!(calls_in(&got.body).is_empty());
    }
    for l in recorded(&s, 2) {
        assert_eq!(l["proxy"]["error"], why, "{l}");
    }
    for mode in [Mode::Observe, Mode::Shadow] {
        let s = setup(mode);
        for stream in [false, true] {
            let r = post(&s, "prose", stream, Some("coded")).await;
            assert_eq!(r.status().as_u16(), 200, "{mode:?} stream {stream}");
            assert_eq!(
                header(&r, "content-encoding"),
                "gzip",
                "{mode:?} stream {stream}"
            );
            let got = read(r).await;
            assert!(got.clean_end, "{mode:?} stream {stream}");
        }
        for l in recorded(&s, 2) {
            assert_eq!(l["proxy"]["error"], why, "{mode:?} {l}");
        }
    }
}

/// In `observe` a broken upstream stream is relayed as it came but never
/// ends cleanly: the body is cut, so a client cannot take it as finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_never_ends_a_broken_stream_cleanly() {
    let s = setup(Mode::Observe);
    for fault in ["reset", "stall", "end_early"] {
        let got = read(post(&s, "correct", true, Some(fault)).await).await;
        assert!(!got.clean_end, "{fault}: {}", got.body);
        assert!(!has_done(&got.body), "{fault}");
    }
    let lines = recorded(&s, 3);
    assert!(lines.iter().all(|l| l["proxy"]["error"].is_string()));
}

/// An event that breaks the stream in enforce (an error object, an event
/// typed `error`, data that is not JSON) breaks it in observe and shadow
/// too: relayed as far as the piece that held it, then the body is cut and
/// the exchange recorded as broken, never a clean `no_call`
/// (faulty-upstream probe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_and_shadow_break_where_enforce_does() {
    for mode in [Mode::Observe, Mode::Shadow] {
        let s = setup(mode);
        let faults = [
            (
                "error_event",
                "the upstream sent an error event: {\"message\":\"mock fault: the engine died\",\"type\":\"internal_error\"}",
            ),
            (
                "typed_error_event",
                "unchecked: the upstream sent an `error` event: {\"message\": \"mock fault: overloaded\", \"code\": 503}",
            ),
            (
                "not_json",
                "unchecked: a stream event is not JSON: key must be a string at line 1 column 2",
            ),
        ];
        for (fault, _) in faults {
            let got = read(post(&s, "prose", true, Some(fault)).await).await;
            assert_eq!(got.status, 200, "{mode:?} {fault}");
            assert!(!got.clean_end, "{mode:?} {fault}: {}", got.body);
            assert!(
                !got.body.contains("toolgate decision="),
                "{mode:?} {fault}: no decision comment on a broken stream"
            );
        }
        let lines = recorded(&s, faults.len());
        let mut errors: Vec<&str> = lines
            .iter()
            .map(|l| l["proxy"]["error"].as_str().unwrap_or("(none)"))
            .collect();
        errors.sort_unstable();
        let mut expected: Vec<&str> = faults.iter().map(|(_, e)| *e).collect();
        expected.sort_unstable();
        assert_eq!(errors, expected, "{mode:?}");
        for l in &lines {
            assert_eq!(l["proxy"]["decision"], "reject", "{mode:?} {l}");
            assert_eq!(l["proxy"]["gate"], "stream", "{mode:?} {l}");
        }
    }
}

/// The same when the breaking event comes in one write with the answer's
/// head, as the re-run of the probe found: the cut came at once and hyper
/// dropped what it held, head included, so the client got no answer at
/// all. It now gets the head and what came, then a cut. A key given
/// twice in a chunk breaks the stream, as in a non-streamed answer. What
/// follows `[DONE]` is relayed but not read: `[DONE]` ends the answer in
/// every mode, as enforce reads it (see
/// `shadow_judges_a_stream_up_to_done_as_enforce_does`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_faithful_relay_cuts_after_what_came_and_stops_reading_at_done() {
    let hi = r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}"#;
    let end = r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;
    let rm = r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"rm_rf","arguments":"{}"}}]},"finish_reason":null}]}"#;
    let dup = r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a","content":"b"},"finish_reason":null}]}"#;
    let not_json = leak(format!(
        "{SSE_HEAD}{hi}\n\ndata: {{not json\n\n{end}\n\ndata: [DONE]\n\n"
    ));
    let after_done = leak(format!(
        "{SSE_HEAD}{hi}\n\n{end}\n\ndata: [DONE]\n\n{rm}\n\n"
    ));
    let twice = leak(format!(
        "{SSE_HEAD}{hi}\n\n{dup}\n\n{end}\n\ndata: [DONE]\n\n"
    ));
    for (answer, clean, error, decision) in [
        (
            not_json,
            false,
            Some("unchecked: a stream event is not JSON"),
            "reject",
        ),
        (
            twice,
            false,
            Some("unchecked: a stream event is ambiguous: the key `content` is repeated"),
            "reject",
        ),
        // The call after `[DONE]` is not part of the answer: relayed, not
        // read (it broke the stream: "choice 0 went on after its
        // finish_reason").
        (after_done, true, None, "no_call"),
    ] {
        let (proxy, record) = fixed_proxy(answer, Mode::Observe, 64 << 20);
        let got = ask(&proxy, true).await;
        let what = String::from_utf8_lossy(answer).into_owned();
        assert_eq!(got.status, 200, "{what}");
        assert!(
            got.body.contains("\"role\":\"assistant\""),
            "{what}: {}",
            got.body
        );
        assert_eq!(got.clean_end, clean, "{what}: {}", got.body);
        let lines = when_written(record.path(), 1);
        let l = &lines[0];
        match error {
            Some(e) => assert!(
                l["proxy"]["error"].as_str().unwrap_or("").starts_with(e),
                "{l}"
            ),
            None => assert!(l["proxy"]["error"].is_null(), "{l}"),
        }
        assert_eq!(l["proxy"]["decision"], decision, "{what}: {l}");
    }
}

/// The probe's stream (stop 44): a good call, `[DONE]`, then a chunk
/// calling `rm_rf`. Enforce stops at `[DONE]` and executes; shadow and
/// observe read on and recorded `reject` (a call after its choice's
/// finish), so shadow did not predict enforce. `[DONE]` now ends the
/// answer in every mode: the same decision everywhere, and the bytes after
/// it are still relayed by the faithful modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shadow_judges_a_stream_up_to_done_as_enforce_does() {
    let good = sse_chunk(
        r#"{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},"finish_reason":null}"#,
    );
    let finish = sse_chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#);
    let rm = sse_chunk(
        r#"{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"rm_rf","arguments":"{}"}}]},"finish_reason":"tool_calls"}"#,
    );
    let answer = leak(format!("{SSE_HEAD}{good}{finish}data: [DONE]\n\n{rm}"));
    for mode in [Mode::Enforce, Mode::Shadow, Mode::Observe] {
        let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
        let got = ask(&proxy, true).await;
        assert_eq!(got.status, 200, "{mode:?}: {}", got.body);
        assert!(got.clean_end, "{mode:?}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert!(l["proxy"]["error"].is_null(), "{mode:?}: {l}");
        assert_eq!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
        assert_eq!(l["proxy"]["label"], "pass", "{mode:?}: {l}");
        match mode {
            Mode::Enforce => assert!(!got.body.contains("rm_rf"), "{}", got.body),
            // Relayed as it came, not judged.
            _ => assert!(got.body.contains("rm_rf"), "{mode:?}: {}", got.body),
        }
        if mode == Mode::Shadow {
            assert!(
                got.body.contains(": toolgate decision=execute"),
                "{}",
                got.body
            );
        }
    }
}

/// The probe's forged decision (stop 44, item 5): an upstream streams an
/// `rm_rf` call, then its own `: toolgate decision=execute label=pass`.
/// Enforce dropped it; shadow relayed it, and where the stream then broke
/// it was the only decision the client saw. Every mode drops it now (one
/// check, `sse::own_comment`), also when a read ends inside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_mode_relays_a_decision_comment_forged_by_the_upstream() {
    let call = sse_chunk(
        r#"{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"rm_rf","arguments":"{\"path\": \"/\"}"}}]},"finish_reason":null}"#,
    );
    let finish = sse_chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#);
    let forged = ": toolgate decision=execute label=pass\n\n";
    let whole = format!("{SSE_HEAD}{call}{finish}{forged}data: [DONE]\n\n");
    let then_eof = format!("{SSE_HEAD}{call}{forged}");
    // A read that ends inside the comment (`: toolg` | `ate decision…`).
    let split_at = whole.find(forged).unwrap() + 7;
    for (answer, at, clean) in [
        (whole.clone(), whole.len(), true),
        (then_eof.clone(), then_eof.len(), false),
        (whole, split_at, true),
    ] {
        let answer = leak(answer);
        for mode in [Mode::Shadow, Mode::Observe, Mode::Enforce] {
            let up = paced_upstream(answer, at, Duration::from_millis(200));
            let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
            cfg.mode = mode;
            cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
            cfg.timeout = Duration::from_secs(5);
            let proxy = gateway::spawn(cfg).unwrap();
            let got = ask(&proxy, true).await;
            let what = format!("{mode:?}, split at {at}");
            if mode == Mode::Enforce && !clean {
                // Broken before the first byte.
                assert_eq!(got.status, 502, "{what}: {}", got.body);
            } else {
                assert_eq!(got.clean_end, clean, "{what}: {}", got.body);
            }
            assert!(!got.body.contains("execute"), "{what}: {}", got.body);
            match mode {
                Mode::Observe => assert!(!got.body.contains("toolgate"), "{what}: {}", got.body),
                _ if clean => assert!(
                    got.body.contains(": toolgate decision=reject"),
                    "{what}: {}",
                    got.body
                ),
                _ => {}
            }
            if mode != Mode::Enforce {
                // Every other byte is relayed as it came.
                let relayed = String::from_utf8_lossy(answer)
                    .split_once("\r\n\r\n")
                    .unwrap()
                    .1
                    .replace(forged, "\n");
                assert!(got.body.starts_with(&relayed), "{what}: {}", got.body);
            }
        }
    }
}

/// A byte order mark opening an event stream is skipped, as SSE clients
/// skip it: the first event is read, not lost (it held "hel" of "hello"
/// for the probe's client while the proxy judged "lo").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_order_mark_opening_a_stream_is_skipped() {
    let s = setup(Mode::Enforce);
    let plain = read(post(&s, "native_ok", true, None).await).await;
    let bom = read(post(&s, "native_ok", true, Some("bom")).await).await;
    assert!(bom.clean_end && plain.clean_end);
    assert_eq!(calls_in(&bom.body), calls_in(&plain.body));
    assert_eq!(calls_in(&bom.body).len(), 1, "{}", bom.body);
    let s = setup(Mode::Observe);
    let got = read(post(&s, "prose", true, Some("bom")).await).await;
    assert!(got.clean_end, "{}", got.body);
    let lines = recorded(&s, 1);
    assert_eq!(
        lines[0]["output"], "The weather in Antwerp is sunny.",
        "{}",
        lines[0]
    );
    assert!(lines[0]["proxy"]["error"].is_null(), "{}", lines[0]);
}

/// A non-streamed answer cut or stalled halfway is a 502; a streamed 500
/// whose body stalls ends within the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_and_stalled_answers_end_within_the_timeout() {
    let s = setup(Mode::Enforce);
    for fault in ["reset", "stall"] {
        let t = Instant::now();
        let got = read(post(&s, "native_ok", false, Some(fault)).await).await;
        assert_eq!(got.status, 502, "{fault}: {}", got.body);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
    for stream in [false, true] {
        let t = Instant::now();
        let got = read(post(&s, "prose", stream, Some("error_stall")).await).await;
        assert!(t.elapsed() < Duration::from_secs(5), "stream={stream}");
        assert!(got.status == 500 || got.status == 502, "{}", got.status);
        assert!(!got.clean_end || got.status == 502, "stream={stream}");
    }
    recorded(&s, 4);
}

/// `NaN`, `{not json` and `"stream": "true"`: refused with a 400 saying why
/// in `enforce`, forwarded in `observe`; recorded in every mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparseable_requests_are_refused_in_enforce_and_always_recorded() {
    let bodies: [(&[u8], &str); 3] = [
        (
            br#"{"model": "m", "temperature": NaN, "messages": [{"role": "user", "content": "correct"}]}"#,
            "not valid JSON",
        ),
        (b"{not json", "not valid JSON"),
        (
            br#"{"model": "m", "stream": "true", "messages": [{"role": "user", "content": "correct"}]}"#,
            "`stream` must be true or false",
        ),
    ];
    for mode in [Mode::Enforce, Mode::Observe] {
        let s = setup(mode);
        for (body, says) in bodies {
            let r = reqwest::Client::new()
                .post(format!("{}/chat/completions", s.proxy.base_url()))
                .header("content-type", "application/json")
                .header("x-toolgate-task", "t1")
                .body(body.to_vec())
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            if mode == Mode::Enforce {
                assert_eq!(status, 400, "{text}");
                assert!(text.contains(says), "{text}");
                assert!(calls_in(&text).is_empty());
            } else {
                // The upstream's own answer: the mock refuses what is not
                // JSON and answers `"stream": "true"` unstreamed.
                let want = if says.contains("stream") { 200 } else { 400 };
                assert_eq!(status, want, "{text}");
            }
        }
        let lines = recorded(&s, 3);
        for l in &lines {
            assert!(l["proxy"]["request_error"].is_string(), "{l}");
            assert_eq!(l["task"], "t1");
            assert!(l.get("request").is_none(), "unparsed bodies are not kept");
        }
        if mode == Mode::Enforce {
            // The status the client got, not 0 (no upstream answered).
            assert!(lines.iter().all(|l| l["proxy"]["status"] == 400
                && l["proxy"]["error"].as_str().unwrap().starts_with("refused")));
        } else {
            assert!(lines.iter().all(|l| {
                l["proxy"]["status"].as_u64().unwrap() > 0
                    && l["proxy"]["error"]
                        .as_str()
                        .unwrap()
                        .starts_with("not judged")
            }));
        }
    }
}

/// A client that gives up on a non-streamed exchange is recorded too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_non_streamed_exchange_is_recorded() {
    let s = setup_with(Mode::Enforce, |c| c.timeout = Duration::from_secs(5));
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", s.proxy.base_url()))
        .header("x-mock-fault", "stall")
        .timeout(Duration::from_millis(300))
        .json(&request("prose", false))
        .send()
        .await;
    assert!(r.is_err(), "the client timed out");
    let lines = recorded(&s, 1);
    assert_eq!(lines[0]["proxy"]["client_disconnected"], true);
    assert!(
        lines[0]["proxy"]["error"]
            .as_str()
            .unwrap()
            .contains("went away")
    );
}

async fn metrics(s: &Setup) -> String {
    reqwest::get(format!("http://{}/metrics", s.proxy.addr()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A record directory that disappears is surfaced: `/healthz` turns 503
/// and `/metrics` counts the failures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_record_directory_is_surfaced() {
    let s = setup(Mode::Enforce);
    read(post(&s, "prose", false, None).await).await;
    recorded(&s, 1);
    std::fs::remove_dir_all(s.record.path()).unwrap();
    read(post(&s, "prose", false, None).await).await;
    let mut health = (0, String::new());
    for _ in 0..100 {
        let r = reqwest::get(format!("http://{}/healthz", s.proxy.addr()))
            .await
            .unwrap();
        health = (r.status().as_u16(), r.text().await.unwrap());
        if health.0 == 503 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(health.0, 503, "{}", health.1);
    assert!(health.1.contains("recording failing"));
    let m = metrics(&s).await;
    assert!(
        m.contains(r#"toolgate_recordings_total{kind="failed"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"toolgate_recordings_total{kind="ok"} 1"#),
        "{m}"
    );
}

/// Past `max_streams` streams in flight, the next stream is refused with a
/// 503 at once; past the body timeout a slow body gets a 408.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_in_flight_are_capped_and_slow_bodies_time_out() {
    let s = setup_with(Mode::Enforce, |c| {
        c.max_streams = 1;
        c.timeout = Duration::from_secs(3);
        c.client_timeout = Duration::from_millis(300);
    });
    let held = post(&s, "prose", true, Some("stall")).await;
    let r = post(&s, "prose", true, None).await;
    assert_eq!(r.status(), 503);
    assert_eq!(header(&r, "retry-after"), "1");
    drop(held);
    // A body that never finishes.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
    tx.send(Ok(b"{\"model\": ".to_vec())).await.unwrap();
    let body = reqwest::Body::wrap_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|x| (x, rx))
    }));
    let t = Instant::now();
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", s.proxy.base_url()))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 408);
    assert!(t.elapsed() < Duration::from_secs(3));
    drop(tx);
    let m = metrics(&s).await;
    assert!(
        m.contains(r#"toolgate_refused_total{kind="streams"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"toolgate_refused_total{kind="body"} 1"#),
        "{m}"
    );
}

/// `auto`: the model chooses the profile, and the headers and the
/// recording say which and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chosen_profile_and_its_source_are_reported() {
    let s = setup_with(Mode::Enforce, |c| {
        c.engines = Engines::per_model(
            |model| match model {
                Some("m") => (Profile::builtin("hermes").unwrap(), "by name (m)".into()),
                _ => (Profile::default(), "default".into()),
            },
            toolgate_formats::builtin,
        );
    });
    let r = post(&s, "correct", false, None).await;
    assert_eq!(header(&r, "x-toolgate-profile"), "hermes");
    assert_eq!(header(&r, "x-toolgate-profile-source"), "by name (m)");
    assert_eq!(header(&r, "x-toolgate-decision"), "execute");
    let lines = recorded(&s, 1);
    assert_eq!(lines[0]["proxy"]["profile"], "hermes");
    assert_eq!(lines[0]["proxy"]["profile_source"], "by name (m)");
}

/// `toolgate run` through an enforce proxy stores what the model said (the
/// proxy's edits are not the model's output), so it scores the same as the
/// run direct; the proxy's recordings carry each sample's task.
#[test]
fn a_run_through_an_enforce_proxy_scores_the_same_as_direct() {
    use toolgate_proxy::runner::{RunConfig, Suite, run, sample_path};
    let dir = fixture();
    let suite_text = ["correct", "prose", "native_mixed", "native_ok"]
        .iter()
        .map(|t| {
            json!({"task": t, "messages": [{"role": "user", "content": t}], "tools": tools(),
                "expect": {"calls": [{"name": "get_weather"}]}})
            .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let suite = Suite::parse(Path::new("suite.jsonl"), &suite_text).unwrap();
    let opts = MockOptions {
        native: true,
        ..MockOptions::default()
    };
    let config = |base: String, out: &Path| RunConfig {
        base_url: base,
        models: vec!["m".into()],
        k: 1,
        out: out.to_path_buf(),
        concurrency: 2,
        timeout: Duration::from_secs(10),
        retries: 0,
        retry_delay: Duration::from_millis(1),
        temperature: None,
        seed: None,
        max_tokens: None,
        api_key: None,
        progress: false,
        on_sample: None,
    };
    let direct_out = tempfile::tempdir().unwrap();
    let direct_mock = mock::spawn(Mock::load(dir.path(), opts.clone()).0).unwrap();
    let summary = run(&suite, &config(direct_mock.base_url(), direct_out.path())).unwrap();
    assert_eq!(summary.written, 4);

    let via_out = tempfile::tempdir().unwrap();
    let record = tempfile::tempdir().unwrap();
    let via_mock = mock::spawn(Mock::load(dir.path(), opts).0).unwrap();
    let mut cfg = ProxyConfig::new(via_mock.base_url());
    cfg.mode = Mode::Enforce;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    cfg.record = Some(record.path().to_path_buf());
    let proxy = gateway::spawn(cfg).unwrap();
    let summary = run(&suite, &config(proxy.base_url(), via_out.path())).unwrap();
    assert_eq!(summary.written, 4);

    for task in ["correct", "prose", "native_mixed", "native_ok"] {
        let read = |out: &Path| -> Value {
            serde_json::from_slice(&std::fs::read(sample_path(out, "m", task, 1)).unwrap()).unwrap()
        };
        let (d, v) = (read(direct_out.path()), read(via_out.path()));
        for field in ["output", "tool_calls", "finish_reason"] {
            assert_eq!(d.get(field), v.get(field), "{task}: {field}");
        }
    }
    // The proxy did edit what it served (the text call became tool_calls,
    // the half-bad native set was removed), and recorded every task.
    let via = |task: &str| -> Value {
        serde_json::from_slice(&std::fs::read(sample_path(via_out.path(), "m", task, 1)).unwrap())
            .unwrap()
    };
    assert_eq!(
        via("correct")["response"]["choices"][0]["finish_reason"],
        "tool_calls"
    );
    assert!(
        via("native_mixed")["response"]["choices"][0]["message"]
            .get("tool_calls")
            .is_none()
    );
    let mut tasks = Vec::new();
    for _ in 0..250 {
        tasks = record_lines(record.path())
            .iter()
            .filter(|l| l["sample"] == 0)
            .map(|l| l["task"].as_str().unwrap_or("").to_string())
            .collect::<Vec<_>>();
        if tasks.len() == 4 && tasks.iter().all(|t| !t.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    tasks.sort();
    assert_eq!(tasks, ["correct", "native_mixed", "native_ok", "prose"]);
}

/// A client that never finishes its headers is cut after the header
/// timeout; past `max_connections` the next connection waits until one
/// closes (the slow clients cannot starve the proxy for longer than that).
#[test]
fn slow_headers_are_cut_and_connections_are_capped() {
    use std::io::{Read, Write};
    let opts = toolgate_proxy::ServeOptions {
        max_connections: 2,
        header_timeout: Duration::from_millis(400),
        ..Default::default()
    };
    let p = gateway::spawn_with(ProxyConfig::new("http://127.0.0.1:9/v1"), opts).unwrap();
    let addr = p.addr();
    let health = |timeout: Duration| -> Option<String> {
        let mut s = std::net::TcpStream::connect(addr).ok()?;
        s.set_read_timeout(Some(timeout)).unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        Some(out)
    };
    let slow = |_| {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n")
            .unwrap();
        s
    };
    let mut a = slow(0);
    let _b = slow(1);
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    // Both permits are held: this one waits until a slow client is cut.
    let answer = health(Duration::from_secs(5)).unwrap();
    assert!(answer.ends_with("ok\n"), "{answer}");
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    // The slow client was cut.
    a.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut buf = Vec::new();
    let read = a.read_to_end(&mut buf);
    assert!(read.is_ok(), "the server closed it: {read:?}");
    let text = String::from_utf8_lossy(&buf);
    assert!(buf.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");
    // A connection that sends nothing at all is cut too.
    drop(_b);
    let mut idle = std::net::TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut buf = Vec::new();
    let read = idle.read_to_end(&mut buf);
    assert!(
        read.is_ok(),
        "the server closed the idle connection: {read:?}"
    );
    // So is a kept-alive connection that goes quiet after a request.
    let mut kept = std::net::TcpStream::connect(addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let mut buf = Vec::new();
    let read = kept.read_to_end(&mut buf);
    assert!(
        read.is_ok(),
        "the server closed the quiet connection: {read:?}"
    );
    assert!(String::from_utf8_lossy(&buf).ends_with("ok\n"));
}

/// Chat completions are taken before the router by method and path: a POST
/// there is judged (a body that is not JSON is refused in enforce), any
/// other method on that path gets the router's 405, and a query string or
/// another path goes where the router sends it.
#[test]
fn the_chat_route_taken_before_the_router_answers_as_the_router_did() {
    use std::io::{Read, Write};
    let mut cfg = ProxyConfig::new("http://127.0.0.1:9/v1");
    cfg.mode = Mode::Enforce;
    let p = gateway::spawn(cfg).unwrap();
    let ask = |head: &str, body: &str| -> String {
        let mut s = std::net::TcpStream::connect(p.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let req = format!(
            "{head} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    let status = |answer: &str| answer.get(9..12).unwrap_or("").to_string();
    let refused = ask("POST /v1/chat/completions", "not json");
    assert_eq!(status(&refused), "400", "{refused}");
    assert!(refused.contains("toolgate:"), "{refused}");
    let refused = ask("POST /v1/chat/completions?x=1", "not json");
    assert_eq!(status(&refused), "400", "{refused}");
    for method in ["GET", "PUT", "post"] {
        let wrong_method = ask(&format!("{method} /v1/chat/completions"), "");
        assert_eq!(status(&wrong_method), "405", "{wrong_method}");
        assert!(
            wrong_method.contains("\"type\":\"toolgate_proxy_error\""),
            "an OpenAI error object: {wrong_method}"
        );
        assert!(
            wrong_method.to_ascii_lowercase().contains("allow: post"),
            "{wrong_method}"
        );
    }
    let health = ask("GET /healthz", "");
    assert!(health.ends_with("ok\n"), "{health}");
    // Another path is passed through: the upstream (port 9) is not there.
    let passed = ask("GET /v1/models/x", "");
    assert_eq!(status(&passed), "502", "{passed}");
    // In enforce, not a POST that could return tool calls.
    let refused = ask("POST /v1/chat/completions/x", "{}");
    assert_eq!(status(&refused), "403", "{refused}");
}

/// Sends `bytes` on a new connection and reads the answer to its end (the
/// request says `connection: close`), within 5 s.
fn raw_exchange(addr: std::net::SocketAddr, bytes: &[u8]) -> String {
    raw_exchange_then(addr, bytes, false)
}

/// [`raw_exchange`], the client's side closed after `bytes` when
/// `half_close`.
fn raw_exchange_then(addr: std::net::SocketAddr, bytes: &[u8], half_close: bool) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(bytes).unwrap();
    if half_close {
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A request head and body as a client writes them, `connection: close`.
fn raw_request(target: &str, extra: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "POST {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn status_of(answer: &str) -> &str {
    answer.get(9..12).unwrap_or("")
}

/// What the mock upstream was sent, chat requests and any other path.
async fn upstream_log(s: &Setup) -> Vec<Value> {
    reqwest::get(format!("http://{}/mock/requests", s._mock.addr()))
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The hostile-client probe's bypass: other spellings of the chat route
/// went to `passthrough`, whose URL parser (or the upstream's) read them as
/// the chat route, and a native call of any tool was relayed unjudged and
/// unrecorded in enforce. Each is refused with a 400 naming the route, and
/// nothing reaches the upstream, streamed or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_spellings_of_the_chat_route_are_refused_before_the_upstream() {
    let s = setup(Mode::Enforce);
    for stream in [false, true] {
        let body = serde_json::to_vec(&request("native_bad", stream)).unwrap();
        for target in [
            "/v1/./chat/completions",
            "/v1/x/../chat/completions",
            "/v1/chat/./completions",
            "/v1/chat/completions/.",
            "/v1/chat/%63ompletions",
            "/v1/chat%2Fcompletions",
            "/v1/chat/completions/",
            "//v1/chat/completions",
            "/v1//chat/completions",
            "/V1/chat/completions",
        ] {
            let answer = tokio::task::spawn_blocking({
                let (addr, req) = (s.proxy.addr(), raw_request(target, "", &body));
                move || raw_exchange(addr, &req)
            })
            .await
            .unwrap();
            assert_eq!(status_of(&answer), "400", "{target}: {answer}");
            assert!(answer.contains("/v1/chat/completions"), "{answer}");
            assert!(!answer.contains("delete_files"), "{answer}");
        }
    }
    // Not a path at all.
    for (head, want) in [
        ("OPTIONS * HTTP/1.1\r\nhost: x\r\n", "400"),
        (
            "CONNECT evil.example:443 HTTP/1.1\r\nhost: evil.example:443\r\n",
            "405",
        ),
    ] {
        let req = format!("{head}connection: close\r\n\r\n").into_bytes();
        let addr = s.proxy.addr();
        let answer = tokio::task::spawn_blocking(move || raw_exchange(addr, &req))
            .await
            .unwrap();
        assert_eq!(status_of(&answer), want, "{head}: {answer}");
        assert!(!answer.contains("upstream"), "{answer}");
    }
    assert_eq!(upstream_log(&s).await, Vec::<Value>::new());
    // The exact route is still judged, and other paths still pass.
    let answer = tokio::task::spawn_blocking({
        let body = serde_json::to_vec(&request("native_bad", false)).unwrap();
        let (addr, req) = (
            s.proxy.addr(),
            raw_request("/v1/chat/completions", "", &body),
        );
        move || raw_exchange(addr, &req)
    })
    .await
    .unwrap();
    assert_eq!(status_of(&answer), "200", "{answer}");
    assert!(answer.contains("x-toolgate-decision: reject"), "{answer}");
    let answer = tokio::task::spawn_blocking({
        let (addr, req) = (s.proxy.addr(), raw_request("/v1/embeddings?x=1", "", b"{}"));
        move || raw_exchange(addr, &req)
    })
    .await
    .unwrap();
    assert_eq!(status_of(&answer), "404", "the mock's own 404: {answer}");
    let log = upstream_log(&s).await;
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[1]["path"], "/v1/embeddings");
    assert_eq!(log[1]["query"], "x=1");
}

/// The probe's slow reader: clients that pipeline requests and never read
/// their answers held every connection slot for good (hyper's header
/// timeout covers only reading). A write that waits longer than the write
/// timeout for the client to read closes the connection, so past
/// `max_connections` such clients a new one is served.
///
/// Driven by events, not by the clock, so that machine load cannot fail it
/// (it did, at load 10+, against a fixed 4 s): the slow clients keep their
/// connections open until the new client is answered or gives up, and the
/// header timeout is far past the new client's patience, so only the
/// write timeout can free a slot — and the slow connections are then seen
/// closed by the server.
#[test]
fn clients_that_never_read_are_dropped_after_the_write_timeout() {
    use std::io::{ErrorKind, Read, Write};
    let write_timeout = Duration::from_millis(500);
    // How long the new client waits: 60 write timeouts. Without the
    // timeout it would wait for good (the slow clients never leave first).
    let patience = write_timeout * 60;
    let opts = toolgate_proxy::ServeOptions {
        max_connections: 2,
        header_timeout: patience * 4,
        write_timeout,
        ..Default::default()
    };
    let p = gateway::spawn_with(ProxyConfig::new("http://127.0.0.1:9/v1"), opts).unwrap();
    let addr = p.addr();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let never_reading: Vec<_> = (0..2)
        .map(|_| {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            // As small as the kernel allows: the answers fill it at once.
            socket.set_recv_buffer_size(2048).unwrap();
            let io = runtime.block_on(socket.connect(addr)).unwrap();
            let mut io = io.into_std().unwrap();
            io.set_nonblocking(false).unwrap();
            io.set_write_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let requests = b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n".repeat(1000);
            std::thread::spawn(move || {
                // Requests until the server stops reading them (its writes
                // wait, the buffers between are full): a write of ours
                // that times out.
                let t = Instant::now();
                let stalled = loop {
                    if io.write_all(&requests).is_err() {
                        break true;
                    }
                    if t.elapsed() > patience {
                        break false;
                    }
                };
                (io, stalled)
            })
        })
        .collect();
    // Both slots are held by connections whose answers wait for a reader.
    let mut held = Vec::new();
    for t in never_reading {
        let (io, stalled) = t.join().unwrap();
        assert!(stalled, "the server kept reading a client that never reads");
        held.push(io);
    }
    let t = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(patience)).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let read = s.read_to_string(&mut out);
    assert!(
        read.is_ok() && out.ends_with("ok\n"),
        "not served within {patience:?}: {read:?}: {out}"
    );
    // A slot was freed by closing a slow client, not by serving a third
    // connection past `max_connections`: reading what the server sent one
    // of them ends (end of file, or a reset) instead of waiting for more.
    let is_closed = |io: &std::net::TcpStream| {
        let mut io = io;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match io.read(&mut buf) {
                Ok(0) => return Some(true),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return None;
                }
                Err(e) => {
                    return Some(matches!(
                        e.kind(),
                        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
                    ));
                }
            }
        }
    };
    for io in &held {
        io.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
    }
    let draining = Instant::now();
    let closed = loop {
        if held.iter().any(|io| is_closed(io) == Some(true)) {
            break true;
        }
        if draining.elapsed() > patience {
            break false;
        }
    };
    assert!(closed, "no slow client was closed ({:?})", t.elapsed());
}

/// The probe's request framing: a declared length over `--max-request-mib`
/// was answered `100 Continue` (and, with a short body, 408 after the
/// timeout); it is refused with a 413 at once. Broken chunked framing was
/// a 413 "too large or broken"; it is a 400, 413 being the limit's alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_declared_lengths_and_broken_framing_are_told_apart() {
    let s = setup_with(Mode::Enforce, |c| {
        c.max_request = 1024 * 1024;
        c.client_timeout = Duration::from_secs(3);
    });
    let addr = s.proxy.addr();
    let ask = |bytes: Vec<u8>, half_close: bool| {
        tokio::task::spawn_blocking(move || {
            let t = Instant::now();
            (raw_exchange_then(addr, &bytes, half_close), t.elapsed())
        })
    };
    for target in ["/v1/chat/completions", "/v1/embeddings"] {
        for (extra, body) in [("expect: 100-continue\r\n", &b""[..]), ("", &b"{"[..])] {
            let head = format!(
                "POST {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n{extra}content-length: 50000000\r\n\r\n"
            );
            let mut req = head.into_bytes();
            req.extend_from_slice(body);
            let (answer, took) = ask(req, false).await.unwrap();
            assert!(answer.starts_with("HTTP/1.1 413"), "{target}: {answer}");
            assert!(!answer.contains("100 Continue"), "{answer}");
            assert!(took < Duration::from_secs(2), "{took:?}");
        }
    }
    let json = serde_json::to_vec(&request("prose", false)).unwrap();
    let chunked = |size_line: &str, rest: &[u8]| {
        let mut req = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        req.extend_from_slice(size_line.as_bytes());
        req.extend_from_slice(rest);
        req
    };
    let mut cases = vec![
        (
            "bad size",
            chunked("zz\r\n", &[&json[..], b"\r\n0\r\n\r\n"].concat()),
            false,
        ),
        (
            "negative size",
            chunked("-5\r\n", b"hello\r\n0\r\n\r\n"),
            false,
        ),
        (
            "chunk longer than declared",
            chunked(
                &format!("{:x}\r\n", json.len() - 5),
                &[&json[..], b"\r\n0\r\n\r\n"].concat(),
            ),
            false,
        ),
        (
            "LF-only lines",
            chunked(
                &format!("{:x}\n", json.len()),
                &[&json[..], b"\n0\n\n"].concat(),
            ),
            false,
        ),
    ];
    cases.push((
        "half-closed mid-body",
        chunked(&format!("{:x}\r\n", json.len() + 100), &json),
        true,
    ));
    for (name, req, half_close) in cases {
        let (answer, _) = ask(req, half_close).await.unwrap();
        // A client that closed its side may see the answer or nothing.
        if half_close && answer.is_empty() {
            continue;
        }
        assert!(answer.starts_with("HTTP/1.1 400"), "{name}: {answer}");
        assert!(answer.contains("broken"), "{name}: {answer}");
    }
    // Over the limit as it arrives: still a 413.
    let big = vec![b' '; 1024 * 1024 + 10];
    let (answer, _) = ask(
        chunked(
            &format!("{:x}\r\n", big.len()),
            &[&big[..], b"\r\n0\r\n\r\n"].concat(),
        ),
        false,
    )
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!(upstream_log(&s).await, Vec::<Value>::new());
}

/// The probe's request codings: a gzip body on the chat route was
/// forwarded labeled as plain JSON in observe (its `Content-Encoding`
/// dropped as hop-by-hop) and called "not valid JSON" in enforce; it is a
/// 415 in every mode, sent nowhere. `Transfer-Encoding: gzip, chunked` was
/// read as chunked alone; any coding but `chunked` is a 501 on every route.
/// Other paths forward the body's `Content-Encoding`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_codings_are_refused_on_the_chat_route_and_forwarded_elsewhere() {
    for mode in [Mode::Observe, Mode::Enforce] {
        let s = setup(mode);
        let addr = s.proxy.addr();
        let json = serde_json::to_vec(&request("prose", false)).unwrap();
        let ask = |req: Vec<u8>| tokio::task::spawn_blocking(move || raw_exchange(addr, &req));
        let answer = ask(raw_request(
            "/v1/chat/completions",
            "content-encoding: gzip\r\n",
            &json,
        ))
        .await
        .unwrap();
        assert_eq!(status_of(&answer), "415", "{answer}");
        assert!(answer.contains("Content-Encoding"), "{answer}");
        for target in ["/v1/chat/completions", "/v1/embeddings", "/healthz"] {
            let mut req = format!(
                "POST {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: gzip, chunked\r\n\r\n{:x}\r\n",
                json.len()
            )
            .into_bytes();
            req.extend_from_slice(&json);
            req.extend_from_slice(b"\r\n0\r\n\r\n");
            let answer = ask(req).await.unwrap();
            assert_eq!(status_of(&answer), "501", "{target}: {answer}");
        }
        assert_eq!(upstream_log(&s).await, Vec::<Value>::new(), "{mode:?}");
        // `identity` is no coding: served.
        let answer = ask(raw_request(
            "/v1/chat/completions",
            "content-encoding: identity\r\n",
            &json,
        ))
        .await
        .unwrap();
        assert_eq!(status_of(&answer), "200", "{answer}");
        // Another path: forwarded with the body's coding.
        let answer = ask(raw_request(
            "/v1/embeddings",
            "content-encoding: gzip\r\n",
            b"\x1f\x8b",
        ))
        .await
        .unwrap();
        assert_eq!(status_of(&answer), "404", "the mock's: {answer}");
        let log = upstream_log(&s).await;
        assert_eq!(log.len(), 2, "{log:?}");
        assert!(
            !log[0]["header_names"]
                .as_array()
                .unwrap()
                .contains(&json!("content-encoding"))
        );
        assert!(
            log[1]["header_names"]
                .as_array()
                .unwrap()
                .contains(&json!("content-encoding")),
            "{log:?}"
        );
    }
}

/// An upstream on loopback answering every request with `answer`, as
/// many connections as come, until the test ends.
fn fixed_upstream(answer: &'static [u8]) -> std::net::SocketAddr {
    paced_upstream(answer, answer.len(), Duration::ZERO)
}

/// [`fixed_upstream`], pausing for `pause` after the first `at` bytes of
/// the answer (a model thinking between two events).
fn paced_upstream(answer: &'static [u8], at: usize, pause: Duration) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for io in listener.incoming() {
            let Ok(mut io) = io else { return };
            std::thread::spawn(move || {
                io.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                // The head, then whatever body its length says.
                while let Ok(n) = io.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                        if got.len() >= end + 4 + len {
                            let (first, rest) = answer.split_at(at.min(answer.len()));
                            let _ = io.write_all(first).and_then(|()| io.flush());
                            std::thread::sleep(pause);
                            let _ = io.write_all(rest);
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// The probe's hop header: `Connection: keep-alive, X-Secret-Hop` with
/// `X-Secret-Hop: v` reached the upstream. Fields a `Connection` header
/// names are for that connection only (RFC 9110 §7.6.1): dropped both
/// ways, as is `Expect` (the proxy has read the body already).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_named_by_connection_and_expect_are_not_forwarded() {
    let s = setup(Mode::Enforce);
    let addr = s.proxy.addr();
    let json = serde_json::to_vec(&request("prose", false)).unwrap();
    let hop = "connection: keep-alive, X-Secret-Hop\r\nx-secret-hop: v\r\nx-kept: v\r\nexpect: 100-continue\r\n";
    for target in ["/v1/chat/completions", "/v1/embeddings"] {
        let req = raw_request(target, hop, &json);
        let answer = tokio::task::spawn_blocking(move || raw_exchange(addr, &req))
            .await
            .unwrap();
        assert!(answer.contains("HTTP/1.1 "), "{answer}");
    }
    let log = upstream_log(&s).await;
    assert_eq!(log.len(), 2, "{log:?}");
    for entry in &log {
        let names = entry["header_names"].as_array().unwrap();
        assert!(names.contains(&json!("x-kept")), "{entry}");
        assert!(!names.contains(&json!("x-secret-hop")), "{entry}");
        assert!(!names.contains(&json!("expect")), "{entry}");
    }

    // And on the way back, through reqwest (another path) and the
    // proxy's own client (a chat completion).
    let answer: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close, X-Hop-Out\r\nx-hop-out: 1\r\nx-kept: 1\r\ncontent-length: 130\r\n\r\n{\"id\":\"c\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}";
    assert_eq!(
        answer.len() - answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() - 4,
        130
    );
    let up = fixed_upstream(answer);
    let p = gateway::spawn(ProxyConfig::new(format!("http://{up}/v1"))).unwrap();
    let client = reqwest::Client::new();
    for r in [
        client.get(format!("{}/models", p.base_url())),
        client
            .post(format!("{}/chat/completions", p.base_url()))
            .json(&request("prose", false)),
    ] {
        let r = r.timeout(Duration::from_secs(5)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(header(&r, "x-kept"), "1");
        assert!(r.headers().get("x-hop-out").is_none(), "{:?}", r.headers());
    }
}

/// The chat route dropped the query string (`?api-version=…`, which Azure
/// OpenAI needs): it is forwarded by every way a chat completion goes
/// upstream (the proxy's own client, the streamed relays, and an
/// unreadable body passed on in observe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_routes_query_string_reaches_the_upstream() {
    for mode in [Mode::Enforce, Mode::Observe] {
        let s = setup(mode);
        for stream in [false, true] {
            let r = reqwest::Client::new()
                .post(format!(
                    "{}/chat/completions?api-version=2024-06-01",
                    s.proxy.base_url()
                ))
                .timeout(Duration::from_secs(10))
                .json(&request("prose", stream))
                .send()
                .await
                .unwrap();
            assert_eq!(read(r).await.status, 200);
        }
        if mode == Mode::Observe {
            let r = reqwest::Client::new()
                .post(format!(
                    "{}/chat/completions?api-version=2024-06-01",
                    s.proxy.base_url()
                ))
                .header("content-type", "application/json")
                .body(r#"{"model": "m", "stream": "true", "messages": [{"role": "user", "content": "prose"}]}"#)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
        }
        let log = upstream_log(&s).await;
        assert_eq!(log.len(), if mode == Mode::Observe { 3 } else { 2 });
        for entry in &log {
            assert_eq!(entry["path"], "/v1/chat/completions", "{entry}");
            assert_eq!(entry["query"], "api-version=2024-06-01", "{entry}");
        }
    }
}

/// A proxy in `mode` in front of an upstream that answers `answer` (its
/// bytes) to every request, recording, with a size limit of `max_response`.
fn fixed_proxy(
    answer: &'static [u8],
    mode: Mode,
    max_response: usize,
) -> (Background, tempfile::TempDir) {
    let up = fixed_upstream(answer);
    let record = tempfile::tempdir().unwrap();
    let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
    cfg.mode = mode;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    cfg.record = Some(record.path().to_path_buf());
    cfg.timeout = Duration::from_secs(5);
    cfg.max_response = max_response;
    (gateway::spawn(cfg).unwrap(), record)
}

/// A whole HTTP answer carrying `body` as JSON (for [`fixed_upstream`]).
fn json_answer(body: &str) -> &'static [u8] {
    leak(format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ))
}

/// The head of an event stream answer (for [`fixed_upstream`]), its body
/// ending with the connection.
const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

/// One stream event of a chat completion chunk holding `choices` (the
/// text inside its `choices` list).
fn sse_chunk(choices: &str) -> String {
    format!(
        "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{choices}]}}\n\n"
    )
}

/// `s` as the `'static` bytes [`fixed_upstream`] answers with (a test's
/// fixture lives as long as the test process).
fn leak(s: String) -> &'static [u8] {
    Box::leak(s.into_bytes().into_boxed_slice())
}

async fn ask(proxy: &Background, stream: bool) -> Got {
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.base_url()))
        .timeout(Duration::from_secs(20))
        .json(&request("prose", stream))
        .send()
        .await
        .expect("an answer");
    read(r).await
}

/// The second faulty-upstream probe (stop 41): a call that arrives after
/// its choice's `finish_reason` was recorded as executed though never
/// judged (enforce dropped it, shadow decided the opposite); an answer
/// naming a million choices held ~2 GB; a flood of tiny events or comments
/// held ~37 times its size before the first byte; the upstream's own
/// `: toolgate decision=…` comment reached an enforce client before the
/// real one; `arguments: null` was a 502 instead of the native mode's
/// `truncation`. Each is now a broken stream, a refusal, or the label.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_upstream_adds_past_its_limits_is_refused() {
    let chunk = |choice: &str| {
        format!(r#"data: {{"id":"c","object":"chat.completion.chunk","choices":[{choice}]}}"#)
    };
    let hi =
        chunk(r#"{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}"#);
    let end = chunk(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#);
    let rm = chunk(
        r#"{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"rm_rf","arguments":"{}"}}]},"finish_reason":null}"#,
    );
    let after_finish = leak(format!(
        "{SSE_HEAD}{hi}\n\n{end}\n\n{rm}\n\ndata: [DONE]\n\n"
    ));
    let same_finish_again = leak(format!(
        "{SSE_HEAD}{hi}\n\n{end}\n\n{end}\n\ndata: [DONE]\n\n"
    ));
    let many: String = (0..=128)
        .map(|i| format!(r#"{{"index":{i},"delta":{{"content":"x"}},"finish_reason":"stop"}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let many_choices = leak(format!("{SSE_HEAD}{}\n\ndata: [DONE]\n\n", chunk(&many)));
    for mode in [Mode::Enforce, Mode::Observe, Mode::Shadow] {
        for (answer, error) in [
            (
                after_finish,
                Some("unchecked: choice 0 went on after its finish_reason"),
            ),
            (
                many_choices,
                Some("unchecked: the stream has more than 128 choices"),
            ),
            (same_finish_again, None),
        ] {
            let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
            let got = ask(&proxy, true).await;
            let lines = when_written(record.path(), 1);
            let l = &lines[0];
            assert_eq!(
                l["proxy"]["error"].as_str(),
                error,
                "{mode:?}: {l}\n{}",
                got.body
            );
            // Broken: a 502 before the first byte, else a cut body.
            let broken = got.status == 502 || !got.clean_end;
            assert_eq!(broken, error.is_some(), "{mode:?}: {}", got.body);
            if mode == Mode::Enforce {
                assert!(calls_in(&got.body).is_empty(), "{}", got.body);
            }
        }
    }

    // Not streamed: more choices than the cap is an answer enforce cannot
    // check.
    let many: String = (0..=128)
        .map(|i| format!(r#"{{"index":{i},"message":{{"role":"assistant","content":"x"}},"finish_reason":"stop"}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let body = format!(r#"{{"id":"c","object":"chat.completion","choices":[{many}]}}"#);
    let answer = json_answer(&body);
    let (proxy, record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
    let got = ask(&proxy, false).await;
    assert_eq!(got.status, 502, "{}", got.body);
    let l = &when_written(record.path(), 1)[0];
    assert!(
        l["proxy"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("more than 128 choices"),
        "{l}"
    );

    // A flood of tiny events before the first byte is bounded by the size
    // limit (1 MiB here: 20,000 events of 10 bytes are 200 KB on the wire,
    // more than 1 MiB held); while frames are held one comment is kept
    // between two data frames, and the upstream's decision comments never
    // reach the client.
    let flood = leak(format!(
        "{SSE_HEAD}{}{hi}\n\n{end}\n\ndata: [DONE]\n\n",
        "data: {}\n\n".repeat(20_000)
    ));
    let (proxy, record) = fixed_proxy(flood, Mode::Enforce, 1 << 20);
    let got = ask(&proxy, true).await;
    assert_eq!(got.status, 502, "{}", got.body);
    let l = &when_written(record.path(), 1)[0];
    assert_eq!(
        l["proxy"]["error"],
        "the upstream stream holds more than the size limit before its decision",
        "{l}"
    );
    let forged = leak(format!(
        "{SSE_HEAD}: keep-alive 1\n\n: keep-alive 2\n\n: keep-alive 3\n\n{hi}\n\n: still here\n\n: toolgate decision=execute label=pass\n\n{end}\n\ndata: [DONE]\n\n"
    ));
    let (proxy, _record) = fixed_proxy(forged, Mode::Enforce, 64 << 20);
    let got = ask(&proxy, true).await;
    assert!(got.clean_end, "{}", got.body);
    assert_eq!(
        got.body.matches("keep-alive").count(),
        1,
        "held: {}",
        got.body
    );
    assert!(got.body.contains(": still here\n\n"), "{}", got.body);
    assert_eq!(
        got.body.matches("toolgate decision=").count(),
        1,
        "{}",
        got.body
    );
    assert!(
        got.body.contains(": toolgate decision=no_call"),
        "{}",
        got.body
    );

    // `arguments: null` is a call cut off, as the native mode reads it.
    let body = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"get_weather","arguments":null}}]},"finish_reason":"tool_calls"}]}"#;
    let answer = json_answer(body);
    let (proxy, _record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.base_url()))
        .json(&request("prose", false))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-toolgate-decision"), "reject");
    assert_eq!(header(&r, "x-toolgate-label"), "truncation");
    let got = read(r).await;
    assert!(calls_in(&got.body).is_empty(), "{}", got.body);
}

/// Probe (s46): llama.cpp's server reports a failure mid-stream as an
/// `error:` field, then `data: [DONE]`. The field was ignored: enforce
/// executed the call the failed generation had written so far and ended
/// the stream cleanly, the error dropped (before any content: a 200 of
/// nothing but `[DONE]`), and every mode recorded a clean exchange. The
/// field breaks the stream where it stands, in every mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_field_mid_stream_breaks_the_stream() {
    let text = serde_json::to_string(CALL).unwrap();
    let content = sse_chunk(&format!(
        r#"{{"index":0,"delta":{{"role":"assistant","content":{text}}},"finish_reason":null}}"#
    ));
    let error = r#"error: {"code":500,"message":"decode failed","type":"server_error"}"#;
    let why = r#"unchecked: the upstream sent an `error` field: {"code":500,"message":"decode failed","type":"server_error"}"#;
    let after_call = leak(format!("{SSE_HEAD}{content}{error}\n\ndata: [DONE]\n\n"));
    let at_once = leak(format!("{SSE_HEAD}{error}\n\ndata: [DONE]\n\n"));
    for mode in [Mode::Enforce, Mode::Observe, Mode::Shadow] {
        for answer in [after_call, at_once] {
            let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
            let got = ask(&proxy, true).await;
            let l = &when_written(record.path(), 1)[0];
            assert_eq!(l["proxy"]["error"], why, "{mode:?}: {l}\n{}", got.body);
            assert_ne!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
            assert!(
                got.status == 502 || !got.clean_end,
                "{mode:?}: {}",
                got.body
            );
            if mode == Mode::Enforce {
                assert!(calls_in(&got.body).is_empty(), "{}", got.body);
                assert!(!got.body.contains("[DONE]"), "{}", got.body);
                assert!(got.body.contains("decode failed"), "{}", got.body);
            }
        }
    }
}

/// Probe (s46): a streamed choice that ended in a provider error (SGLang's
/// and vLLM's `finish_reason: "abort"`, OpenRouter's `"error"` or an
/// `error` on the choice) was judged as the model's answer: enforce
/// executed the call written before the abort and ended cleanly, and every
/// mode recorded it as a sample. Such a choice breaks the stream, as the
/// importer and `toolgate run` refuse it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_ending_in_a_provider_error_breaks_the_stream() {
    let text = serde_json::to_string(CALL).unwrap();
    let content = sse_chunk(&format!(
        r#"{{"index":0,"delta":{{"role":"assistant","content":{text}}},"finish_reason":null}}"#
    ));
    let tail = |choice: &str| {
        leak(format!(
            "{SSE_HEAD}{content}{}data: [DONE]\n\n",
            sse_chunk(choice)
        ))
    };
    let cases = [
        (
            tail(r#"{"index":0,"delta":{},"finish_reason":"abort"}"#),
            r#"the upstream's choice 0 ended in a provider error, not an answer: `finish_reason` "abort" (a provider error never becomes a transcript)"#,
        ),
        (
            tail(
                r#"{"index":0,"delta":{"content":""},"finish_reason":"error","error":{"code":502,"message":"Provider disconnected"}}"#,
            ),
            "the upstream's choice 0 ended in a provider error, not an answer: `502`: Provider disconnected (a provider error never becomes a transcript)",
        ),
    ];
    for mode in [Mode::Enforce, Mode::Observe, Mode::Shadow] {
        for (answer, why) in cases {
            let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
            let got = ask(&proxy, true).await;
            let l = &when_written(record.path(), 1)[0];
            assert_eq!(l["proxy"]["error"], why, "{mode:?}: {l}\n{}", got.body);
            assert_ne!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
            assert!(
                got.status == 502 || !got.clean_end,
                "{mode:?}: {}",
                got.body
            );
            if mode == Mode::Enforce {
                assert_eq!(got.status, 502, "{}", got.body);
                assert!(calls_in(&got.body).is_empty(), "{}", got.body);
            }
        }
    }
}

/// The same, not streamed: a choice ending in `finish_reason: "abort"` or
/// carrying an `error` was judged as the answer (enforce executed the call
/// written before the failure). It is an answer enforce does not vouch
/// for, a 502 naming the provider error; observe relays and records it so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_streamed_choice_ending_in_a_provider_error_is_refused() {
    let text = serde_json::to_string(CALL).unwrap();
    let answer = |rest: &str| {
        json_answer(&format!(
            r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"message":{{"role":"assistant","content":{text}}},{rest}}}]}}"#
        ))
    };
    let cases = [
        (
            answer(r#""finish_reason":"abort""#),
            r#"the upstream's choice 0 ended in a provider error, not an answer: `finish_reason` "abort" (a provider error never becomes a transcript)"#,
        ),
        (
            answer(
                r#""finish_reason":"stop","error":{"code":"server_error","message":"Provider disconnected"}"#,
            ),
            "the upstream's choice 0 ended in a provider error, not an answer: `server_error`: Provider disconnected (a provider error never becomes a transcript)",
        ),
    ];
    for mode in [Mode::Enforce, Mode::Observe] {
        for (answer, why) in cases {
            let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
            let got = ask(&proxy, false).await;
            let l = &when_written(record.path(), 1)[0];
            assert_eq!(
                l["proxy"]["error"],
                format!("unchecked: {why}"),
                "{mode:?}: {l}\n{}",
                got.body
            );
            assert_ne!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
            if mode == Mode::Enforce {
                assert_eq!(got.status, 502, "{}", got.body);
                let body: Value = serde_json::from_str(&got.body).unwrap();
                assert_eq!(
                    body["error"]["message"],
                    format!("toolgate: the upstream answer could not be checked: {why}")
                );
                assert!(calls_in(&got.body).is_empty(), "{}", got.body);
            }
        }
    }
}

/// With n>1, shadow's headers and comment and every mode's record spoke
/// for `choices[0]` only: an answer whose second choice called `rm_rf`
/// was `execute`/`pass`, and in a stream the other choices' calls were
/// recorded nowhere (second faulty-upstream probe). The answer's decision
/// is now the first choice that rejects (else executes), and the record
/// holds every choice's decision, a stream's other choices with their
/// text and calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_choice_of_an_answer_is_spoken_for_and_recorded() {
    let call = |name: &str, args: &str| {
        format!(
            r#"{{"id":"c_{name}","type":"function","function":{{"name":"{name}","arguments":"{args}"}}}}"#
        )
    };
    let ok = call("get_weather", r#"{\"city\":\"Oslo\"}"#);
    let bad = call("rm_rf", "{}");
    let body = format!(
        r#"{{"id":"c","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":null,"tool_calls":[{ok}]}},"finish_reason":"tool_calls"}},{{"index":1,"message":{{"role":"assistant","content":null,"tool_calls":[{bad}]}},"finish_reason":"tool_calls"}}]}}"#
    );
    let answer = json_answer(&body);
    let (proxy, record) = fixed_proxy(answer, Mode::Shadow, 64 << 20);
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.base_url()))
        .json(&request("prose", false))
        .send()
        .await
        .unwrap();
    assert_eq!(header(&r, "x-toolgate-decision"), "reject");
    assert_eq!(header(&r, "x-toolgate-label"), "wrong_tool");
    let l = &when_written(record.path(), 1)[0];
    // Probe 44: the record, the log line and `/metrics` said choice 0's
    // `execute` while the client got `reject`; all say what it got now.
    assert_eq!(l["proxy"]["decision"], "reject", "{l}");
    assert_eq!(l["proxy"]["label"], "wrong_tool", "{l}");
    assert_eq!(l["proxy"]["gate"], "allowlist", "{l}");
    assert_decisions_counted(&proxy, "reject", "wrong_tool").await;
    let choices: Vec<(u64, &str)> = l["proxy"]["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["index"].as_u64().unwrap(),
                c["decision"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(choices, [(0, "execute"), (1, "reject")], "{l}");

    let chunk = |i: u32, call: &str, finish: &str| {
        format!(
            r#"data: {{"id":"c","object":"chat.completion.chunk","choices":[{{"index":{i},"delta":{{"tool_calls":[{}]}},"finish_reason":{finish}}}]}}"#,
            call.replacen('{', r#"{"index":0,"#, 1)
        )
    };
    let stream = leak(format!(
        "{SSE_HEAD}{}\n\n{}\n\ndata: [DONE]\n\n",
        chunk(0, &ok, r#""tool_calls""#),
        chunk(1, &bad, r#""tool_calls""#)
    ));
    for mode in [Mode::Shadow, Mode::Observe, Mode::Enforce] {
        let (proxy, record) = fixed_proxy(stream, mode, 64 << 20);
        let got = ask(&proxy, true).await;
        assert!(got.clean_end, "{mode:?}: {}", got.body);
        if mode != Mode::Observe {
            assert!(
                got.body
                    .contains(": toolgate decision=reject label=wrong_tool"),
                "{mode:?}: {}",
                got.body
            );
        }
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["proxy"]["decision"], "reject", "{mode:?}: {l}");
        assert_eq!(l["proxy"]["label"], "wrong_tool", "{mode:?}: {l}");
        assert_decisions_counted(&proxy, "reject", "wrong_tool").await;
        let c = &l["proxy"]["choices"];
        assert_eq!(c[0]["decision"], "execute", "{mode:?}: {l}");
        assert_eq!(c[1]["decision"], "reject", "{mode:?}: {l}");
        assert_eq!(
            c[1]["tool_calls"][0]["function"]["name"], "rm_rf",
            "{mode:?}: {l}"
        );
        assert_eq!(c[1]["finish_reason"], "tool_calls", "{mode:?}: {l}");
    }
}

/// `proxy`'s `/metrics` count one answer of `decision` and `label` for
/// model `m`, and no other decision.
async fn assert_decisions_counted(proxy: &Background, decision: &str, label: &str) {
    let m = reqwest::get(format!("http://{}/metrics", proxy.addr()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let decisions: Vec<&str> = m
        .lines()
        .filter(|l| l.starts_with("toolgate_decisions_total{"))
        .collect();
    assert_eq!(
        decisions,
        [format!(
            r#"toolgate_decisions_total{{model="m",value="{decision}"}} 1"#
        )],
        "{m}"
    );
    assert!(
        m.contains(&format!(
            r#"toolgate_labels_total{{model="m",value="{label}"}} 1"#
        )),
        "{m}"
    );
}

/// A task named in UTF-8 (`x-toolgate-task: été`) was recorded as `null`
/// (second hostile-client probe): read as UTF-8 now, a byte that is not
/// UTF-8 as U+FFFD, and escaped where it is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_named_in_utf8_is_recorded() {
    let s = setup(Mode::Observe);
    for task in [&b"\xc3\xa9t\xc3\xa9"[..], b"a\xffb"] {
        let r = reqwest::Client::new()
            .post(format!("{}/chat/completions", s.proxy.base_url()))
            .header(
                "x-toolgate-task",
                reqwest::header::HeaderValue::from_bytes(task).unwrap(),
            )
            .json(&request("prose", false))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let mut tasks: Vec<String> = recorded(&s, 2)
        .iter()
        .map(|l| l["task"].as_str().unwrap_or("(none)").to_string())
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["a\u{fffd}b", "été"]);
}

/// The second probe of today's stream rules (stop 41): real servers' shapes
/// they broke or mangled, and what they still let through.
/// - SGLang 0.4.3 and 2024's Ollama send `finish_reason: ""` on every
///   chunk, KoboldCpp `"null"`: not a finish (every mode broke them as a
///   choice going on after its finish).
/// - NVIDIA Dynamo sends `tool_calls`, then an empty `stop`: a repeated
///   finish that adds nothing is no break.
/// - Azure's first chunk (`prompt_filter_results`, `choices: []`) has an
///   empty `id`, `model` and `object`: enforce built its chunks on it, and
///   the OpenAI SDK dropped every one (tool calls and finish lost); the
///   filter chunk itself was dropped.
/// - A stream whose only choice is index 1 was recorded empty.
/// - In observe, a breaking event and `[DONE]` in one read ended cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_servers_stream_shapes_pass_and_a_break_is_never_clean() {
    let ev = |body: &str| format!("data: {body}\n\n");
    let chunk = |choice: &str| {
        ev(&format!(
            r#"{{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{choice}]}}"#
        ))
    };
    let call = r#"{"index":0,"id":"x","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}"#;
    let sglang = leak(format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n",
        chunk(r#"{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":""}"#),
        chunk(r#"{"index":0,"delta":{"content":" world"},"finish_reason":"null"}"#),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#),
    ));
    let dynamo = leak(format!(
        "{SSE_HEAD}{}{}data: [DONE]\n\n",
        chunk(&format!(
            r#"{{"index":0,"delta":{{"role":"assistant","tool_calls":[{call}]}},"finish_reason":"tool_calls"}}"#
        )),
        chunk(r#"{"index":0,"delta":{"content":null,"tool_calls":null},"finish_reason":"stop"}"#),
    ));
    let azure = leak(format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n",
        ev(
            r#"{"choices":[],"id":"","model":"","object":"","created":0,"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}"#
        ),
        chunk(&format!(
            r#"{{"index":0,"delta":{{"role":"assistant","tool_calls":[{call}]}},"finish_reason":null}}"#
        )),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
    ));
    let only_one = leak(format!(
        "{SSE_HEAD}{}{}data: [DONE]\n\n",
        chunk(
            r#"{"index":1,"delta":{"role":"assistant","content":"Just text."},"finish_reason":null}"#
        ),
        chunk(r#"{"index":1,"delta":{},"finish_reason":"stop"}"#),
    ));
    for mode in [Mode::Enforce, Mode::Observe, Mode::Shadow] {
        for (name, answer) in [
            ("sglang", sglang),
            ("dynamo", dynamo),
            ("azure", azure),
            ("only_one", only_one),
        ] {
            let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
            let got = ask(&proxy, true).await;
            assert!(
                got.status == 200 && got.clean_end,
                "{mode:?} {name}: {}",
                got.body
            );
            let l = &when_written(record.path(), 1)[0];
            assert!(l["proxy"]["error"].is_null(), "{mode:?} {name}: {l}");
            match name {
                "sglang" => assert_eq!(l["output"], "Hello world", "{mode:?}: {l}"),
                "only_one" => {
                    assert_eq!(l["output"], "Just text.", "{mode:?}: {l}");
                    assert_eq!(l["proxy"]["decision"], "no_call", "{mode:?}: {l}");
                }
                _ => assert_eq!(l["proxy"]["decision"], "execute", "{mode:?} {name}: {l}"),
            }
            if mode == Mode::Enforce && name != "only_one" && name != "sglang" {
                // Every chunk the client gets is a chunk, with the calls.
                let calls = calls_in(&got.body);
                assert_eq!(calls.len(), 1, "{name}: {}", got.body);
                for line in got.body.lines().filter(|l| l.starts_with("data: {")) {
                    let v: Value = serde_json::from_str(&line[6..]).unwrap();
                    if v.get("prompt_filter_results").is_none() {
                        assert_eq!(v["object"], "chat.completion.chunk", "{name}: {line}");
                    }
                }
            }
            if mode == Mode::Enforce && name == "azure" {
                assert!(got.body.contains("prompt_filter_results"), "{}", got.body);
            }
        }
    }

    // A break and `[DONE]` in one read: the relay stops after the breaking
    // event, so the client never reads a clean end.
    let rm =
        r#"{"index":0,"id":"y","type":"function","function":{"name":"rm_rf","arguments":"{}"}}"#;
    let one_read = leak(format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n: toolgate decision=execute label=pass\n\n",
        chunk(&format!(
            r#"{{"index":0,"delta":{{"role":"assistant","tool_calls":[{call}]}},"finish_reason":"tool_calls"}}"#
        )),
        chunk(&format!(
            r#"{{"index":0,"delta":{{"tool_calls":[{rm}]}},"finish_reason":null}}"#
        )),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
    ));
    for mode in [Mode::Observe, Mode::Shadow] {
        let (proxy, _record) = fixed_proxy(one_read, mode, 64 << 20);
        let got = ask(&proxy, true).await;
        assert!(!got.clean_end, "{mode:?}: {}", got.body);
        assert!(!has_done(&got.body), "{mode:?}: {}", got.body);
        assert!(
            !got.body.contains("toolgate decision"),
            "{mode:?}: {}",
            got.body
        );
    }
}

/// `--retries` re-rolls a sampling artifact in native calls too (the probe:
/// `arguments: null`, `""` and a cut `{"city":` were served at the first
/// attempt, though `--retries` names truncation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_sampling_artifact_is_re_rolled() {
    let body = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"finish_reason":"length"}]}"#;
    assert_re_rolled_twice(json_answer(body), false).await;
}

/// The JSON values of `v` as `--max-request-nodes` counts them: every
/// object, array, key, string, number, boolean and null.
fn nodes(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(nodes).sum::<usize>(),
        Value::Object(o) => 1 + o.values().map(|v| 1 + nodes(v)).sum::<usize>(),
        _ => 1,
    }
}

/// A chat request of exactly `n` JSON values (at least 40-odd): the
/// fixture's tools and a message, padded with an array of zeros.
fn request_of_nodes(n: usize) -> Value {
    let mut r = request("prose", false);
    r["pad"] = json!([]);
    let fixed = nodes(&r);
    r["pad"] = Value::Array(vec![json!(0); n - fixed]);
    assert_eq!(nodes(&r), n);
    r
}

/// The hostile-client probe (issue 41): a 63 MiB request of 2M tiny
/// values peaked at 4.3 GB, as every value became a `Value` several times.
/// A body over `--max-request-nodes` is a 413 naming the flag, in every
/// mode, before the upstream is contacted; counted with the body
/// refusals; recorded with the reason. One at the limit passes, whether
/// its tools are new (the full read) or known (the fast read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_more_json_values_than_the_limit_is_refused() {
    for mode in [Mode::Enforce, Mode::Observe] {
        let s = setup_with(mode, |c| c.max_request_nodes = 1000);
        for n in [1001, 1000, 1001, 1000] {
            let r = post_body(&s, request_of_nodes(n), None).await;
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            if n > 1000 {
                assert_eq!(status, 413, "{text}");
                let e: Value = serde_json::from_str(&text).unwrap();
                let message = e["error"]["message"].as_str().unwrap();
                assert!(
                    message.contains("more than 1000 JSON values")
                        && message.contains("--max-request-nodes"),
                    "{message}"
                );
            } else {
                assert_eq!(status, 200, "{text}");
            }
        }
        // Only the two at the limit reached the upstream.
        assert_eq!(upstream_log(&s).await.len(), 2);
        let m = metrics(&s).await;
        assert!(
            m.lines().any(|l| l.contains("refused")
                && l.contains(r#"kind="body""#)
                && l.ends_with(" 2")),
            "{m}"
        );
        let lines = recorded(&s, 4);
        let refused: Vec<&Value> = lines
            .iter()
            .filter(|l| l["proxy"]["status"] == 413)
            .collect();
        assert_eq!(refused.len(), 2);
        for l in refused {
            assert!(
                l["proxy"]["request_error"]
                    .as_str()
                    .unwrap()
                    .contains("--max-request-nodes"),
                "{l}"
            );
            assert!(l["proxy"]["error"].as_str().unwrap().starts_with("refused"));
        }
    }
}

/// The probe's stall: a large body was read on the connection worker, and
/// every other connection of that worker waited for it (6 one-line chat
/// requests took 9–12 s behind two 56 MiB bodies). With one worker, a small
/// request sent while a large one (7 MB, 3.5M values, under the limits) is
/// being read reaches the upstream first and is answered first: the large
/// read runs on a blocking thread.
#[test]
fn a_small_request_is_served_while_a_large_one_is_read() {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    let answer = json_answer(
        r#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#,
    );
    // The upstream: the length of each request's body, in the order the
    // proxy connected (the big one connects once its read is done).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up = listener.local_addr().unwrap();
    let order: Arc<Mutex<Vec<(usize, usize)>>> = Arc::default();
    let seen = Arc::clone(&order);
    std::thread::spawn(move || {
        for (seq, io) in listener.incoming().enumerate() {
            let Ok(mut io) = io else { return };
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                io.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 65536];
                let mut noted = false;
                while let Ok(n) = io.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    let text =
                        String::from_utf8_lossy(&got[..got.len().min(4096)]).to_ascii_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                        if !noted {
                            seen.lock().unwrap().push((seq, len));
                            noted = true;
                        }
                        if got.len() >= end + 4 + len {
                            let _ = io.write_all(answer);
                            return;
                        }
                    }
                }
            });
        }
    });
    let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
    cfg.mode = Mode::Enforce;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    cfg.timeout = Duration::from_secs(60);
    cfg.max_request_nodes = 4_000_000;
    let opts = toolgate_proxy::ServeOptions {
        workers: Some(1),
        ..Default::default()
    };
    let p = gateway::spawn_with(cfg, opts).unwrap();
    let addr = p.addr();
    let big = serde_json::to_vec(&request_of_nodes(3_500_000)).unwrap();
    assert!(big.len() > 6 << 20, "{}", big.len());
    let big_len = big.len();
    let finished: Arc<Mutex<Vec<&str>>> = Arc::default();
    let done = Arc::clone(&finished);
    let large = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(&raw_request("/v1/chat/completions", "", &big))
            .unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        done.lock().unwrap().push("large");
        String::from_utf8_lossy(&out).into_owned()
    });
    // The large body is sent; its read takes about half a second (a debug
    // build, more on a loaded machine).
    std::thread::sleep(Duration::from_millis(100));
    let small = serde_json::to_vec(&request("prose", false)).unwrap();
    let answer = raw_exchange(addr, &raw_request("/v1/chat/completions", "", &small));
    finished.lock().unwrap().push("small");
    assert_eq!(status_of(&answer), "200", "{answer}");
    let large = large.join().unwrap();
    assert_eq!(
        status_of(&large),
        "200",
        "{}",
        large.get(..300).unwrap_or(&large)
    );
    assert_eq!(*finished.lock().unwrap(), ["small", "large"]);
    let mut order = order.lock().unwrap().clone();
    order.sort_unstable();
    let lengths: Vec<usize> = order.iter().map(|(_, len)| *len).collect();
    assert_eq!(
        lengths,
        [small.len(), big_len],
        "the small request went first"
    );
}

/// The third probe (stop 41): Ollama and Gemini's OpenAI shims stream
/// parallel calls each at `index` 0 under its own id; the proxy merged them
/// into one call named `get_weatherget_weather` (malformed, re-rolled, then
/// refused). And a lone choice that ended at `[DONE]` without its finish
/// was never re-rolled, though nothing had been sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_at_one_index_are_two_calls_and_an_unfinished_artifact_is_re_rolled() {
    let chunk = |choice: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{choice}]}}\n\n"
        )
    };
    let call = |id: &str, city: &str| {
        chunk(&format!(
            r#"{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":"get_weather","arguments":"{{\"city\":\"{city}\"}}"}}}}]}},"finish_reason":null}}"#
        ))
    };
    let two = leak(format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n",
        call("c1", "Paris"),
        call("c2", "Rome"),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
    ));
    for mode in [Mode::Enforce, Mode::Observe] {
        let (proxy, record) = fixed_proxy(two, mode, 64 << 20);
        let got = ask(&proxy, true).await;
        assert!(got.clean_end, "{mode:?}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
        let ids: Vec<&str> = l["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["c1", "c2"], "{mode:?}: {l}");
        if mode == Mode::Enforce {
            assert_eq!(calls_in(&got.body).len(), 2, "{}", got.body);
        }
    }

    let cut = leak(format!(
        "{SSE_HEAD}{}data: [DONE]\n\n",
        chunk(
            r#"{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"finish_reason":null}"#
        ),
    ));
    assert_re_rolled_twice(cut, true).await;
}

/// Probe s48: Gemini's OpenAI endpoint, older Ollama, LM Studio and
/// llama.cpp servers stream each parallel call whole in one delta without
/// `index`, some with an empty `id`: the proxy read two calls as one
/// `get_weather` with `{…}{…}` arguments (malformed: the model blamed, the
/// calls refused), where the same answer unstreamed executes. Arguments
/// without a name after a whole call cannot be placed: the stream breaks,
/// named. A second name on an unfinished call was dropped, so the
/// arguments given with `rm_rf` ran as `get_weather`: it joins the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexless_parallel_calls_are_two_calls_and_an_unplaceable_delta_breaks_the_stream() {
    let chunk = |delta: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n"
        )
    };
    let finish = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let whole = |city: &str| {
        chunk(&format!(
            r#"{{"tool_calls":[{{"id":"","type":"function","function":{{"name":"get_weather","arguments":"{{\"city\":\"{city}\"}}"}}}}]}}"#
        ))
    };
    let two = leak(format!(
        "{SSE_HEAD}{}{}{finish}",
        whole("Paris"),
        whole("Rome")
    ));
    let batch = json_answer(
        r#"{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]}}]}"#,
    );
    for (answer, stream, mode) in [
        (two, true, Mode::Enforce),
        (two, true, Mode::Observe),
        (batch, false, Mode::Enforce),
    ] {
        let what = format!("{mode:?} stream={stream}");
        let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 200, "{what}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["proxy"]["decision"], "execute", "{what}: {l}");
        let args: Vec<&str> = l["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"]["arguments"].as_str().unwrap())
            .collect();
        assert_eq!(
            args,
            [r#"{"city":"Paris"}"#, r#"{"city":"Rome"}"#],
            "{what}: {l}"
        );
        if mode == Mode::Enforce {
            let served: usize = calls_in(&got.body)
                .iter()
                .map(|c| c.as_array().map_or(1, Vec::len))
                .sum();
            assert_eq!(served, 2, "{what}: {}", got.body);
        }
    }

    let unplaceable = leak(format!(
        "{SSE_HEAD}{}{}{finish}",
        whole("Paris"),
        chunk(r#"{"tool_calls":[{"id":"","function":{"arguments":"{\"city\":\"Rome\"}"}}]}"#),
    ));
    for mode in [Mode::Enforce, Mode::Observe] {
        let (proxy, record) = fixed_proxy(unplaceable, mode, 64 << 20);
        let got = ask(&proxy, true).await;
        if mode == Mode::Enforce {
            // Nothing was sent yet: a 502 naming it.
            assert_eq!(got.status, 502, "{}", got.body);
            assert!(got.body.contains("without `index`"), "{}", got.body);
        } else {
            assert!(!got.clean_end, "{mode:?}: {}", got.body);
        }
        let l = &when_written(record.path(), 1)[0];
        let err = l["proxy"]["error"].as_str().unwrap_or("");
        assert!(
            err.starts_with(
                "unchecked: choice 0: a tool-call delta without `index` adds arguments"
            ),
            "{mode:?}: {l}"
        );
        assert_ne!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
    }

    let renamed = leak(format!(
        "{SSE_HEAD}{}{}{finish}",
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"get_weather","arguments":""}}]}"#
        ),
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"rm_rf","arguments":"{\"city\":\"Paris\"}"}}]}"#
        ),
    ));
    let (proxy, record) = fixed_proxy(renamed, Mode::Enforce, 64 << 20);
    let got = ask(&proxy, true).await;
    assert!(calls_in(&got.body).is_empty(), "{}", got.body);
    let l = &when_written(record.path(), 1)[0];
    assert_eq!(l["proxy"]["decision"], "reject", "{l}");
    assert_eq!(
        l["tool_calls"][0]["function"]["name"], "get_weatherrm_rf",
        "{l}"
    );
}

/// Stop 49: a legacy `delta.function_call` that repeats its name in every
/// fragment (as MiniMax through NVIDIA NIM does for `tool_calls`) was read
/// as `get_weatherget_weatherget_weather`: a correct call rejected as
/// `wrong_tool` where the same answer unstreamed executes. Its name is
/// read by the rule of every streamed call (`delta::Fragment::legacy`):
/// stream and batch are judged alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_function_call_repeating_its_name_is_judged_as_its_batch_answer() {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let piece = |args: &str| {
        chunk(
            &format!(r#"{{"function_call":{{"name":"get_weather","arguments":"{args}"}}}}"#),
            "null",
        )
    };
    let stream = leak(format!(
        "{SSE_HEAD}{}{}{}{}data: [DONE]\n\n",
        piece(""),
        piece(r#"{\"city\": "#),
        piece(r#"\"Paris\"}"#),
        chunk("{}", r#""function_call""#),
    ));
    let batch = json_answer(
        r#"{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"function_call","message":{"role":"assistant","content":null,"function_call":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}}]}"#,
    );
    for (answer, stream, mode) in [
        (stream, true, Mode::Enforce),
        (stream, true, Mode::Observe),
        (batch, false, Mode::Enforce),
    ] {
        let what = format!("{mode:?} stream={stream}");
        let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 200, "{what}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["proxy"]["decision"], "execute", "{what}: {l}");
        assert_eq!(l["proxy"]["label"], "pass", "{what}: {l}");
        let names: Vec<&str> = l["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["get_weather"], "{what}: {l}");
        if mode == Mode::Enforce {
            assert_eq!(
                calls_in(&got.body),
                [json!({"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"})],
                "{what}: {}",
                got.body
            );
        }
    }
}

/// Gemini's OpenAI-compatible API sends each tool call's thought signature
/// in `extra_content`, and Gemini 3 refuses the next turn without it back:
/// enforce answered a 502 (an unknown call field) and, streamed, rebuilt
/// the call without it. It is relayed with its call and recorded; a call
/// field hidden in it is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn geminis_thought_signature_goes_out_with_its_call() {
    let extra = r#"{"google":{"thought_signature":"CqMBAdHtim"}}"#;
    let whole = json_answer(&format!(
        r#"{{"id":"x","object":"chat.completion","created":1,"model":"gemini-3-pro-preview","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"extra_content":{extra},"function":{{"arguments":"{{\"city\":\"Paris\"}}","name":"get_weather"}},"id":"function-call-1","type":"function"}}]}}}}]}}"#
    ));
    let chunk = |choice: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{choice}]}}\n\n"
        )
    };
    let streamed = leak(format!(
        "{SSE_HEAD}{}{}data: [DONE]\n\n",
        chunk(&format!(
            r#"{{"index":0,"delta":{{"role":"assistant","tool_calls":[{{"extra_content":{extra},"function":{{"arguments":"{{\"city\":\"Paris\"}}","name":"get_weather"}},"id":"function-call-1","type":"function","index":0}}]}},"finish_reason":null}}"#
        )),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
    ));
    let signature: Value = serde_json::from_str(extra).unwrap();
    for (answer, stream) in [(whole, false), (streamed, true)] {
        let (proxy, record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 200, "stream={stream}: {}", got.body);
        let calls = calls_in(&got.body);
        assert_eq!(calls.len(), 1, "stream={stream}: {}", got.body);
        assert_eq!(
            calls[0][0]["extra_content"], signature,
            "stream={stream}: {}",
            got.body
        );
        assert_eq!(calls[0][0]["function"]["name"], "get_weather");
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["proxy"]["decision"], "execute", "stream={stream}: {l}");
        assert_eq!(
            l["tool_calls"][0]["extra_content"], signature,
            "stream={stream}: {l}"
        );
    }

    let hidden = json_answer(
        r#"{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"extra_content":{"google":{"functionCall":{"name":"rm_rf","args":{}}}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"c1","type":"function"}]}}]}"#,
    );
    let (proxy, _record) = fixed_proxy(hidden, Mode::Enforce, 64 << 20);
    let got = ask(&proxy, false).await;
    assert_eq!(got.status, 502, "{}", got.body);
    assert!(
        got.body.contains("call-bearing field `functionCall`"),
        "{}",
        got.body
    );
    assert!(calls_in(&got.body).is_empty(), "{}", got.body);
}

/// Probe (f2): an answer carrying, beside its plain `choices`, a
/// top-level `message` holding `tool_calls` (Cohere v2's and Ollama's
/// native shape) or a `choices[0].messages` list holding them was served
/// unchanged in enforce: a client reading several vendors' shapes ran a
/// call nobody judged. A key not known that holds a call one level in is
/// refused, streamed or not, the reason naming its path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_beside_the_choices_in_another_vendors_shape_is_refused() {
    let calls = r#"[{"id":"c1","type":"function","function":{"name":"rm_rf","arguments":"{\"path\":\"/\"}"}}]"#;
    let choice =
        r#"{"index":0,"message":{"role":"assistant","content":"Sunny."},"finish_reason":"stop"}"#;
    let top = json_answer(&format!(
        r#"{{"id":"x","object":"chat.completion","choices":[{choice}],"message":{{"role":"assistant","tool_calls":{calls}}}}}"#
    ));
    let listed = json_answer(&format!(
        r#"{{"id":"x","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"Sunny."}},"messages":[{{"role":"assistant","tool_calls":{calls}}}],"finish_reason":"stop"}}]}}"#
    ));
    let streamed_top = leak(format!(
        "{SSE_HEAD}data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Sunny.\"}},\"finish_reason\":null}}],\"message\":{{\"tool_calls\":{calls}}}}}\n\ndata: [DONE]\n\n"
    ));
    let streamed_delta = leak(format!(
        "{SSE_HEAD}{}data: [DONE]\n\n",
        sse_chunk(&format!(
            r#"{{"index":0,"delta":{{"content":"Sunny.","message":{{"tool_calls":{calls}}}}},"finish_reason":null}}"#
        ))
    ));
    for (answer, stream, path) in [
        (top, false, "message.tool_calls"),
        (listed, false, "choices[0].messages[0].tool_calls"),
        (streamed_top, true, "message.tool_calls"),
        (streamed_delta, true, "choices[0].delta.message.tool_calls"),
    ] {
        let why = format!("a call-bearing field `{path}` inside a field not read");
        let (proxy, record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 502, "{path}: {}", got.body);
        assert!(got.body.contains(&why), "{path}: {}", got.body);
        assert!(!got.body.contains("rm_rf"), "{path}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        let err = l["proxy"]["error"].as_str().unwrap_or_default();
        assert_eq!(err, format!("unchecked: {why}"), "{l}");
    }
}

/// An answer of tiny values cost some 70 times its bytes once built: a
/// 60 MB `[0,0,…]` held 4–6 GB. Past `--max-response-nodes` (4,000,000 by
/// default) an answer, or one stream event, is refused before anything is
/// built from it, whichever reader takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_of_too_many_values_is_refused_before_it_is_built() {
    let zeros = {
        let mut z = "0,".repeat(4_000_000);
        z.push('0');
        z
    };
    let whole = json_answer(&format!(
        r#"{{"id":"x","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"hi"}},"finish_reason":"stop"}}],"usage":[{zeros}]}}"#
    ));
    let streamed = leak(format!(
        "{SSE_HEAD}data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"hi\"}},\"finish_reason\":null}}],\"x\":[{zeros}]}}\n\ndata: [DONE]\n\n"
    ));
    let why = "holds more than 4000000 JSON values (--max-response-nodes)";
    for (answer, stream) in [(whole, false), (streamed, true)] {
        let (proxy, record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
        let got = ask(&proxy, stream).await;
        // The stream breaks at its first event: a 502 before any byte.
        assert_eq!(got.status, 502, "stream={stream}: {}", got.body);
        assert!(got.body.contains(why), "stream={stream}: {}", got.body);
        assert!(calls_in(&got.body).is_empty() && !has_done(&got.body));
        let l = &when_written(record.path(), 1)[0];
        let err = l["proxy"]["error"].as_str().unwrap_or_default();
        assert!(err.starts_with("unchecked") && err.contains(why), "{l}");
    }
}

/// The fourth probe (stop 42): two choices of one chunk without `index`
/// were both read as choice 0, so the halves of a call split across them
/// made one call, executed; the importer read them as two choices. A
/// missing index is the choice's place in its chunk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_choices_without_an_index_are_two_choices() {
    let chunk = sse_chunk;
    let halves = leak(format!(
        "{SSE_HEAD}{}{}data: [DONE]\n\n",
        chunk(
            r#"{"delta":{"content":"<tool_call>{\"name\":\"get_weather\","},"finish_reason":null},{"delta":{"content":"\"arguments\":{\"city\":\"A\"}}</tool_call>"},"finish_reason":null}"#
        ),
        chunk(r#"{"delta":{},"finish_reason":"stop"},{"delta":{},"finish_reason":"stop"}"#),
    ));
    for mode in [Mode::Enforce, Mode::Observe] {
        let (proxy, record) = fixed_proxy(halves, mode, 64 << 20);
        let got = ask(&proxy, true).await;
        assert!(got.clean_end, "{mode:?}: {}", got.body);
        assert!(calls_in(&got.body).is_empty(), "{mode:?}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert_ne!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
        let choices = l["proxy"]["choices"].as_array().expect("two choices");
        assert_eq!(choices.len(), 2, "{mode:?}: {l}");
    }
}

/// TGI answers `"description": null` beside each call's name: enforce
/// answered a 502 (an unknown field) and observe recorded the answer as
/// unchecked, its calls lost from the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tgis_description_beside_a_calls_name_is_read() {
    let tgi = json_answer(
        r#"{"id":"","object":"chat.completion","created":1,"model":"tgi","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"0","type":"function","function":{"description":null,"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"logprobs":null,"finish_reason":"stop"}]}"#,
    );
    for mode in [Mode::Enforce, Mode::Observe] {
        let (proxy, record) = fixed_proxy(tgi, mode, 64 << 20);
        let got = ask(&proxy, false).await;
        assert_eq!(got.status, 200, "{mode:?}: {}", got.body);
        assert_eq!(calls_in(&got.body).len(), 1, "{mode:?}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["proxy"]["decision"], "execute", "{mode:?}: {l}");
        assert_eq!(l["tool_calls"][0]["function"]["name"], "get_weather", "{l}");
    }
}

/// The fourth probe (stop 42): enforce committed its answer only at the
/// first content, so a server whose reasoning parser is on sent the client
/// nothing, not even the head, for as long as the model thought. Reasoning
/// is forwarded as it comes, and commits as content does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enforce_forwards_reasoning_as_it_comes() {
    let think = format!(
        "{SSE_HEAD}data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"reasoning_content\":\"Let me think.\"}},\"finish_reason\":null}}]}}\n\n"
    );
    let rest = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Sunny.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let at = think.len();
    let answer = leak(format!("{think}{rest}"));
    let up = paced_upstream(answer, at, Duration::from_secs(3));
    let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
    cfg.mode = Mode::Enforce;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    let proxy = gateway::spawn(cfg).unwrap();
    let started = std::time::Instant::now();
    let mut r = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.base_url()))
        .json(&request("prose", true))
        .send()
        .await
        .unwrap();
    let first = r.chunk().await.unwrap().expect("a first piece");
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(2500),
        "the reasoning came after {waited:?}"
    );
    assert!(
        String::from_utf8_lossy(&first).contains("Let me think."),
        "{}",
        String::from_utf8_lossy(&first)
    );
    let got = read(r).await;
    assert!(got.clean_end && got.body.contains("Sunny."), "{}", got.body);
}

/// The fourth probe (stop 42): `--retries` re-rolled a JSON answer to a
/// request that declared no tools, or asked for a JSON answer: it reads as
/// a malformed call (`name` beside an unknown key), so each such answer
/// cost three samples. Only a request that can get a call is asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_wants_no_call_is_never_asked_again() {
    let person = json_answer(
        r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"{\"name\": \"John Smith\", \"age\": 30}"},"finish_reason":"stop"}]}"#,
    );
    let up = fixed_upstream(person);
    let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
    cfg.mode = Mode::Enforce;
    cfg.retries = 2;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("llama3").unwrap()));
    let proxy = gateway::spawn(cfg).unwrap();
    let mut no_tools = request("prose", false);
    no_tools.as_object_mut().unwrap().remove("tools");
    let mut json_format = request("prose", false);
    json_format["response_format"] = json!({"type": "json_object"});
    let mut guided = request("prose", false);
    guided["guided_json"] = json!({"type": "object"});
    // The key escaped, as any JSON writer may: the same key (probe f2: a
    // search of the body's bytes missed it and the answer was re-rolled).
    let escaped = json_format
        .to_string()
        .replace("\"response_format\"", r#""response\u005fformat""#);
    assert!(escaped.contains(r"\u005f"), "{escaped}");
    for (body, attempts) in [
        (no_tools.to_string(), "1"),
        (json_format.to_string(), "1"),
        (guided.to_string(), "1"),
        (escaped, "1"),
        (request("prose", false).to_string(), "3"),
    ] {
        let r = reqwest::Client::new()
            .post(format!("{}/chat/completions", proxy.base_url()))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(header(&r, "x-toolgate-attempts"), attempts, "{body}");
        let got = read(r).await;
        assert_eq!(got.status, 200);
        assert!(got.body.contains("John Smith"), "{}", got.body);
    }
}

/// The fifth probe (stop 42): `parallel_tool_calls: false` answered with
/// two calls executed both, where a client that asked for one may run only
/// the first. More than one call is now rejected whole at the `single`
/// gate, streamed or not; without the flag both execute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_tool_calls_false_rejects_two_calls_whole() {
    let two = json_answer(
        r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},"finish_reason":"tool_calls"}]}"#,
    );
    let chunk = sse_chunk;
    let streamed = leak(format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n",
        chunk(
            r#"{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}"#
        ),
        chunk(
            r#"{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},"finish_reason":null}"#
        ),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
    ));
    for (answer, stream) in [(two, false), (streamed, true)] {
        let (proxy, record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
        for (flag, served) in [(Some(false), 0), (None, 2), (Some(true), 2)] {
            let mut body = request("prose", stream);
            if let Some(f) = flag {
                body["parallel_tool_calls"] = json!(f);
            }
            let r = reqwest::Client::new()
                .post(format!("{}/chat/completions", proxy.base_url()))
                .json(&body)
                .send()
                .await
                .unwrap();
            let got = read(r).await;
            assert_eq!(got.status, 200);
            let calls: usize = calls_in(&got.body)
                .iter()
                .map(|c| c.as_array().map_or(0, Vec::len))
                .sum();
            assert_eq!(calls, served, "stream={stream} flag={flag:?}: {}", got.body);
        }
        let lines = when_written(record.path(), 3);
        let refused = lines
            .iter()
            .find(|l| l["request"]["parallel_tool_calls"] == false)
            .expect("the flagged exchange");
        assert_eq!(refused["proxy"]["decision"], "reject", "{refused}");
        assert_eq!(refused["proxy"]["gate"], "single", "{refused}");
        assert_eq!(
            refused["proxy"]["label"], "pass",
            "the label is the model's: {refused}"
        );
        // Probe s47: replay decides each recorded exchange as the proxy
        // did — the recording itself (what `label` and the inspector read)
        // and, for the answer that came whole, its request/response pair as
        // `toolgate import` writes it — with the same gate and reason. The
        // native calls are replayed by the `native` profile, whose gates
        // the proxy judged them by.
        let engine = Engine::new(Profile::builtin("native").unwrap());
        for l in &lines {
            let mut replayed = vec![("recording", transcript_of(&l.to_string()))];
            if !stream {
                let pair = json!({"request": l["request"], "response": l["response"]});
                let written = imported_chat(&pair);
                let flag = &l["request"]["parallel_tool_calls"];
                let member = serde_json::from_str::<Value>(&written).unwrap();
                assert_eq!(
                    member.get("parallel_tool_calls"),
                    (flag == false).then_some(&json!(false)),
                    "{written}"
                );
                replayed.push(("import", transcript_of(&written)));
            }
            for (how, t) in replayed {
                let r = engine
                    .judge(&t, &engine.profile, toolgate_validator::Full)
                    .profile;
                let reason = match &r.decision {
                    toolgate_core::Decision::Reject { reason, .. } => json!(reason),
                    _ => Value::Null,
                };
                assert_eq!(
                    r.decision.kind(),
                    l["proxy"]["decision"],
                    "{how} stream={stream}: {l}"
                );
                assert_eq!(
                    json!(r.decision.gate().map(toolgate_core::Gate::as_str)),
                    l["proxy"]["gate"],
                    "{how} stream={stream}: {l}"
                );
                assert_eq!(reason, l["proxy"]["reason"], "{how} stream={stream}: {l}");
                assert_eq!(
                    r.label.as_str(),
                    l["proxy"]["label"],
                    "{how} stream={stream}"
                );
            }
        }
    }
}

/// A transcript as the loader reads it from one line of text.
fn transcript_of(text: &str) -> toolgate_core::Transcript {
    toolgate_core::load::parse_transcript(text, Path::new("t.jsonl"), Some(1), "t").unwrap()
}

/// What `toolgate import` writes for an OpenAI chat request/response pair
/// (its one transcript line).
fn imported_chat(pair: &Value) -> String {
    use toolgate_core::import::{Companions, Kind};
    let lines = toolgate_core::convert::transcript_lines(
        Path::new("pair.json"),
        &pair.to_string(),
        Kind::OpenaiChat,
        &Companions::default(),
    )
    .unwrap();
    assert!(lines.errors.is_empty(), "{:?}", lines.errors);
    assert_eq!(lines.lines.len(), 1);
    lines.lines[0].clone()
}

/// Probe s46: the request's `tool_choice` narrows the allowlist. A call of
/// a tool the choice left out (another named tool, a list of
/// `allowed_tools` without it) executed against the whole `tools` list when
/// the upstream ignored the choice. It is now `wrong_tool`, rejected at the
/// `allowlist` gate, streamed or not; a choice that cannot be read is a 400
/// in enforce, before the upstream is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_of_a_tool_the_tool_choice_left_out_is_wrong_tool() {
    let one = json_answer(
        r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}"#,
    );
    let streamed = leak(format!(
        "{SSE_HEAD}{}{}data: [DONE]\n\n",
        sse_chunk(
            r#"{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}"#
        ),
        sse_chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
    ));
    let function = |name: &str| json!({"type": "function", "function": {"name": name}});
    let choices = [
        (json!("auto"), 1),
        (json!("required"), 1),
        (function("get_weather"), 1),
        (
            json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto",
            "tools": [function("get_weather")]}}),
            1,
        ),
        // The whole list: vLLM without a tool parser needs `"none"`.
        (json!("none"), 1),
        (function("get_time"), 0),
        (
            json!({"type": "allowed_tools", "allowed_tools": {"mode": "required",
            "tools": [function("get_time")]}}),
            0,
        ),
    ];
    for (answer, stream) in [(one, false), (streamed, true)] {
        let (proxy, record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
        for (choice, served) in &choices {
            let mut body = request("prose", stream);
            body["tools"]
                .as_array_mut()
                .unwrap()
                .push(json!({"type": "function", "function": {"name": "get_time",
                    "parameters": {"type": "object", "properties": {}}}}));
            body["tool_choice"] = choice.clone();
            let r = reqwest::Client::new()
                .post(format!("{}/chat/completions", proxy.base_url()))
                .json(&body)
                .send()
                .await
                .unwrap();
            let got = read(r).await;
            assert_eq!(got.status, 200);
            let calls: usize = calls_in(&got.body)
                .iter()
                .map(|c| c.as_array().map_or(0, Vec::len))
                .sum();
            assert_eq!(calls, *served, "stream={stream} {choice}: {}", got.body);
        }
        let lines = when_written(record.path(), choices.len());
        for l in &lines {
            let choice = &l["request"]["tool_choice"];
            let (_, served) = choices.iter().find(|(c, _)| c == choice).unwrap();
            let (decision, label, gate) = if *served == 1 {
                ("execute", "pass", Value::Null)
            } else {
                ("reject", "wrong_tool", json!("allowlist"))
            };
            assert_eq!(l["proxy"]["decision"], decision, "{l}");
            assert_eq!(l["proxy"]["label"], label, "{l}");
            assert_eq!(l["proxy"]["gate"], gate, "{l}");
        }
        // A choice that cannot be read: which tools are allowed is unknown.
        let mut body = request("prose", stream);
        body["tool_choice"] = json!({"type": "function"});
        let r = reqwest::Client::new()
            .post(format!("{}/chat/completions", proxy.base_url()))
            .json(&body)
            .send()
            .await
            .unwrap();
        let got = read(r).await;
        assert_eq!(got.status, 400, "{}", got.body);
        assert!(got.body.contains("`tool_choice`"), "{}", got.body);
        assert!(got.body.contains("names no tool"), "{}", got.body);
    }
}

/// The fifth probe (stop 42): a structured-output answer to a request that
/// declared no tools and asked for JSON (`{"name": "Alice", "age": 3}`)
/// was read as a malformed call: `reject`, counted against the model. Its
/// text is not judged for calls; it is served as it came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_answer_asked_for_without_tools_is_no_call() {
    let alice = r#"{\"name\": \"Alice\", \"age\": 3}"#;
    let whole = json_answer(&format!(
        r#"{{"id":"x","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"{alice}"}},"finish_reason":"stop"}}]}}"#
    ));
    // Streamed, with its logprobs: not held, so they are not nulled.
    let streamed = leak(format!(
        "{SSE_HEAD}data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"{alice}\"}},\"logprobs\":{{\"content\":[]}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n"
    ));
    // The same request in each server's words for a JSON answer.
    let formats = [
        json!({"response_format": {"type": "json_schema", "json_schema": {"name": "person",
            "schema": {"type": "object"}}}}),
        json!({"response_format": {"type": "json", "value": {"type": "object"}}}),
        json!({"guided_json": {"type": "object"}}),
        json!({"structured_outputs": {"json": {"type": "object"}}}),
        json!({"json_schema": {"type": "object"}}),
        json!({"format": "json"}),
        json!({"format": {"type": "object"}}),
    ];
    for (answer, stream, format) in [(whole, false, &formats[0]), (streamed, true, &formats[0])]
        .into_iter()
        .chain(formats[1..].iter().map(|f| (whole, false, f)))
    {
        let up = fixed_upstream(answer);
        let record = tempfile::tempdir().unwrap();
        let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
        cfg.mode = Mode::Enforce;
        cfg.record = Some(record.path().to_path_buf());
        cfg.engines = Engines::fixed(Engine::new(Profile::builtin("llama3").unwrap()));
        let proxy = gateway::spawn(cfg).unwrap();
        let mut body = json!({"model": "m", "stream": stream,
            "messages": [{"role": "user", "content": "Alice?"}]});
        for (k, v) in format.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = reqwest::Client::new()
            .post(format!("{}/chat/completions", proxy.base_url()))
            .json(&body)
            .send()
            .await
            .unwrap();
        let got = read(r).await;
        assert_eq!(got.status, 200);
        assert!(got.body.contains("Alice"), "stream={stream}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["proxy"]["decision"], "no_call", "{format}: {l}");
        assert_eq!(l["proxy"]["label"], "no_call", "{format}: {l}");
        if stream {
            assert!(
                got.body.contains(r#""logprobs":{"content":[]}"#),
                "{}",
                got.body
            );
        }
    }
}

/// An enforce proxy with `--retries 2` in front of an upstream answering
/// `answer` every time: the artifact is re-rolled twice, then served
/// rejected as `truncation`.
async fn assert_re_rolled_twice(answer: &'static [u8], stream: bool) {
    let up = fixed_upstream(answer);
    let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
    cfg.mode = Mode::Enforce;
    cfg.retries = 2;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    let proxy = gateway::spawn(cfg).unwrap();
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.base_url()))
        .json(&request("prose", stream))
        .send()
        .await
        .unwrap();
    assert_eq!(header(&r, "x-toolgate-label"), "truncation");
    assert_eq!(
        header(&r, "x-toolgate-attempts"),
        "3",
        "two re-rolls, then served"
    );
}

/// The review of stop 41: with a field beside the chunk's own (OpenRouter's
/// `provider`), every edited chunk goes out, and its `logprobs` (and, stop
/// 42, Together's copy of the content as `text`) carried the held text's
/// tokens (`<tool_call>`, `rm_rf`) before the decision; and a
/// continuation's empty `id` replaced the call's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_text_never_leaks_through_logprobs_and_the_first_id_stands() {
    let chunk = |choice: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"provider\":\"p\",\"choices\":[{choice}]}}\n\n"
        )
    };
    let text = |t: &str| {
        let json = serde_json::to_string(t).unwrap();
        chunk(&format!(
            r#"{{"index":0,"delta":{{"content":{json}}},"text":{json},"logprobs":{{"content":[{{"token":{json},"logprob":-0.1}}]}},"finish_reason":null}}"#
        ))
    };
    let held = leak(format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n",
        text("Sure. "),
        text(r#"<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>"#),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#),
    ));
    let (proxy, _record) = fixed_proxy(held, Mode::Enforce, 64 << 20);
    let got = ask(&proxy, true).await;
    assert!(
        got.body.contains("toolgate decision=reject"),
        "{}",
        got.body
    );
    // Held text leaves through neither the chunk's `logprobs` nor its
    // choice's `text` (Together repeats each delta's content there: the
    // fourth probe, stop 42); forwarded text keeps both.
    for field in ["logprobs", "text"] {
        let values: Vec<String> = got
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .map(|v| v["choices"][0][field].to_string())
            .collect();
        assert!(
            values
                .iter()
                .all(|l| !l.contains("rm_rf") && !l.contains("tool_call")),
            "no held text in `{field}`: {}",
            got.body
        );
        assert!(
            values.iter().any(|l| l.contains("Sure. ")),
            "forwarded text keeps its `{field}`: {}",
            got.body
        );
    }

    let ids = leak(format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n",
        chunk(
            r#"{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"finish_reason":null}"#
        ),
        chunk(
            r#"{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","function":{"arguments":"\"Oslo\"}"}}]},"finish_reason":null}"#
        ),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
    ));
    let (proxy, _record) = fixed_proxy(ids, Mode::Enforce, 64 << 20);
    let got = ask(&proxy, true).await;
    let calls = calls_in(&got.body);
    assert_eq!(calls.len(), 1, "{}", got.body);
    assert_eq!(calls[0][0]["id"], "call_A", "{}", got.body);
}

/// A server that streams its reasoning under both names (`reasoning_content`
/// and `reasoning`, the same text) had it recorded and judged twice; a
/// stream is now read as a non-streamed message is: `reasoning_content`,
/// else `reasoning`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_under_two_names_is_read_once() {
    let chunk = sse_chunk;
    let answer = format!(
        "{SSE_HEAD}{}{}{}data: [DONE]\n\n",
        chunk(
            r#"{"index":0,"delta":{"role":"assistant","reasoning_content":"think","reasoning":"think"},"finish_reason":null}"#
        ),
        chunk(r#"{"index":0,"delta":{"reasoning":" more"},"finish_reason":null}"#),
        chunk(r#"{"index":0,"delta":{"content":"Hi."},"finish_reason":"stop"}"#),
    );
    let answer = leak(answer);
    for mode in [Mode::Enforce, Mode::Observe] {
        let (proxy, record) = fixed_proxy(answer, mode, 64 << 20);
        let got = ask(&proxy, true).await;
        assert!(got.clean_end, "{}", got.body);
        let l = &when_written(record.path(), 1)[0];
        assert_eq!(l["reasoning"], "think more", "{mode:?}: {l}");
    }
}

/// Probe 44: a twin of a key the check reads (`Message` beside `message`,
/// `Choices`, `meſſage`, a streamed `Delta`, `Content`) carried an rm_rf
/// call through enforce as a 200 `no_call`: Go's `encoding/json` and
/// Json.NET read every key matching `message` in any case into one field.
/// Such an answer cannot be checked: a 502, never the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twin_of_a_key_read_is_an_answer_that_cannot_be_checked() {
    let rm_rf = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"rm_rf","arguments":"{\"path\": \"/\"}"}}]}"#;
    let ok = r#"{"role":"assistant","content":"ok"}"#;
    let whole = |choice: String, top: &str| {
        json_answer(&format!(
            r#"{{"id":"c","object":"chat.completion",{top}"choices":[{choice}]}}"#
        ))
    };
    let batch = [
        (
            whole(format!(r#"{{"index":0,"message":{ok},"Message":{rm_rf},"finish_reason":"stop"}}"#), ""),
            "`Message` that clients matching keys in any case read as `message`",
        ),
        (
            whole(format!(r#"{{"index":0,"Message":{rm_rf},"message":{ok},"finish_reason":"stop"}}"#), ""),
            "`Message` that clients matching keys in any case read as `message`",
        ),
        (
            whole(format!(r#"{{"index":0,"message":{ok},"me\u017f\u017fage":{rm_rf},"finish_reason":"stop"}}"#), ""),
            "`meſſage` that clients matching keys in any case read as `message`",
        ),
        (
            whole(
                format!(r#"{{"index":0,"message":{ok},"finish_reason":"stop"}}"#),
                &format!(r#""Choices":[{{"index":0,"message":{rm_rf},"finish_reason":"tool_calls"}}],"#),
            ),
            "`Choices` that clients matching keys in any case read as `choices`",
        ),
        (
            whole(
                r#"{"index":0,"message":{"role":"assistant","content":"ok","Content":"<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>"},"finish_reason":"stop"}"#.into(),
                "",
            ),
            "`Content` that clients matching keys in any case read as `content`",
        ),
    ];
    let calls = r#"[{"index":0,"id":"c1","type":"function","function":{"name":"rm_rf","arguments":"{\"path\": \"/\"}"}}]"#;
    let streamed = [
        (
            leak(format!(
                "{SSE_HEAD}{}{}data: [DONE]\n\n",
                sse_chunk(&format!(
                    r#"{{"index":0,"delta":{{"role":"assistant","content":"ok"}},"Delta":{{"tool_calls":{calls}}},"finish_reason":null}}"#
                )),
                sse_chunk(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#),
            )),
            "`Delta` that clients matching keys in any case read as `delta`",
        ),
        (
            leak(format!(
                "{SSE_HEAD}{}{}data: [DONE]\n\n",
                sse_chunk(
                    r#"{"index":0,"delta":{"content":"ok","Content":"<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>"},"finish_reason":null}"#
                ),
                sse_chunk(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#),
            )),
            "`Content` that clients matching keys in any case read as `content`",
        ),
    ];
    let cases = batch
        .into_iter()
        .map(|(a, why)| (a, why, false))
        .chain(streamed.into_iter().map(|(a, why)| (a, why, true)));
    for (answer, why, stream) in cases {
        let (proxy, record) = fixed_proxy(answer, Mode::Enforce, 64 << 20);
        let got = ask(&proxy, stream).await;
        assert_eq!(got.status, 502, "{why}: {}", got.body);
        let v: Value = serde_json::from_str(&got.body).unwrap();
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("could not be checked") || stream,
            "{why}: {msg}"
        );
        assert!(msg.contains(why), "{why}: {msg}");
        assert!(!got.body.contains("rm_rf"), "{why}: {}", got.body);
        let l = &when_written(record.path(), 1)[0];
        let err = l["proxy"]["error"].as_str().unwrap_or_default();
        assert!(err.starts_with("unchecked") && err.contains(why), "{l}");
        assert_ne!(l["proxy"]["decision"], "execute", "{l}");
    }

    // A key that is no twin of one read (`Extra`, `logprobs`) is served.
    let extra = whole(
        format!(
            r#"{{"index":0,"message":{{"role":"assistant","content":"ok","Extra":1}},"logprobs":null,"Extra":{{"Message":{rm_rf}}},"finish_reason":"stop"}}"#
        ),
        "",
    );
    let (proxy, _record) = fixed_proxy(extra, Mode::Enforce, 64 << 20);
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.base_url()))
        .json(&request("prose", false))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-toolgate-decision"), "no_call");
}

/// An upstream on loopback whose first answer is `first`, then a comment
/// every 100 ms for `pings` times, then `[DONE]`; every later one `then`.
fn pinging_upstream(first: &'static str, pings: usize, then: &'static str) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let served = std::sync::Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for io in listener.incoming() {
            let Ok(mut io) = io else { return };
            let n = served.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                io.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(k) = io.read(&mut buf) {
                    if k == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..k]);
                    let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
                    let Some(end) = text.find("\r\n\r\n") else {
                        continue;
                    };
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                    if got.len() < end + 4 + len {
                        continue;
                    }
                    if n > 0 {
                        let _ = io.write_all(then.as_bytes());
                        return;
                    }
                    if io.write_all(first.as_bytes()).is_err() {
                        return;
                    }
                    for _ in 0..pings {
                        std::thread::sleep(Duration::from_millis(100));
                        if io.write_all(b": ping\n\n").is_err() {
                            return;
                        }
                    }
                    let _ = io.write_all(b"data: [DONE]\n\n");
                    return;
                }
            });
        }
    });
    addr
}

/// Probe 44: with `--retries` and `include_usage`, the usage of an answer
/// being re-rolled was awaited for `--timeout` per read, so an upstream
/// pinging comments after the finish held the re-roll (30 s for 30
/// pings), nothing sent. `--timeout` now bounds that wait in all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_roll_waits_for_the_usage_no_longer_than_the_timeout() {
    let cut = concat!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"finish_reason":"length"}]}"#,
        "\n\n"
    );
    let prose = concat!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Sunny."},"finish_reason":"stop"}]}"#,
        "\n\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#,
        "\n\ndata: [DONE]\n\n"
    );
    // 60 pings: 6 s of comments after the finish.
    let up = pinging_upstream(cut, 60, prose);
    let mut cfg = ProxyConfig::new(format!("http://{up}/v1"));
    cfg.mode = Mode::Enforce;
    cfg.retries = 1;
    cfg.timeout = Duration::from_millis(400);
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    let record = tempfile::tempdir().unwrap();
    cfg.record = Some(record.path().to_path_buf());
    let proxy = gateway::spawn(cfg).unwrap();
    let mut body = request("prose", true);
    body["stream_options"] = json!({"include_usage": true});
    let started = Instant::now();
    let r = reqwest::Client::new()
        .post(format!("{}/chat/completions", proxy.base_url()))
        .timeout(Duration::from_secs(20))
        .json(&body)
        .send()
        .await
        .unwrap();
    let got = read(r).await;
    let took = started.elapsed();
    assert!(got.clean_end && got.body.contains("Sunny."), "{}", got.body);
    assert!(
        took < Duration::from_secs(3),
        "the re-roll waited {took:?} for the first answer's usage"
    );
    let lines = when_written(record.path(), 1);
    let retries: Vec<&Value> = lines.iter().map(|l| &l["proxy"]["retry"]).collect();
    assert_eq!(retries, [&json!("reroll"), &Value::Null], "one re-roll");
}

// probe44b: a regular file or a dangling symlink as `--record` gave
// "cannot create the record directory X: File exists".
#[test]
fn a_record_path_that_is_not_a_directory_is_refused_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let dangling = dir.path().join("dang");
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("missing"), &dangling).unwrap();
    #[cfg(not(unix))]
    std::fs::write(&dangling, "x").unwrap();
    for path in [file, dangling] {
        let mut cfg = ProxyConfig::new("http://127.0.0.1:9/v1");
        cfg.record = Some(path.clone());
        let Err(e) = gateway::spawn(cfg) else {
            panic!("{} is refused", path.display());
        };
        assert_eq!(
            e.to_string(),
            format!("--record {} is not a directory", path.display())
        );
    }
}
