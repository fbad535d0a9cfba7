//! Spans of the proxy and the runner, received by an in-process OTLP/HTTP
//! collector on a loopback port (protobuf `ExportTraceServiceRequest`s),
//! checked attribute by attribute, then written as OTLP JSON and imported
//! back into transcripts that match the proxy's own recordings.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgate_otel::{Collector, Received, Settings, Traces};
use toolgate_proxy::Background;
use toolgate_proxy::gateway::{self, Engines, Mode, ProxyConfig};
use toolgate_proxy::mock::{self, Mock, MockOptions};
use toolgate_validator::{Auto, Engine, Profile};

// ---------------------------------------------------------------- helpers

fn collector(status: u16) -> Collector {
    Collector::answering(status).unwrap()
}

fn settings(endpoint: String, capture: bool) -> Settings {
    Settings {
        endpoint,
        service_name: "toolgate-test".into(),
        capture_content: capture,
    }
}

fn text(span: &Received, key: &str) -> Option<String> {
    span.attributes
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn int(span: &Received, key: &str) -> Option<i64> {
    span.attributes.get(key).and_then(Value::as_i64)
}

fn attr<'a>(span: &'a Received, key: &str) -> Option<&'a Value> {
    span.attributes.get(key)
}

fn by_task(spans: &[&Received]) -> BTreeMap<String, Received> {
    spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .map(|s| (text(s, "toolgate.task").unwrap(), (*s).clone()))
        .collect()
}

// ------------------------------------------------------------------ fixture

const CALL: &str = toolgate_testkit::generate::HERMES_CALL;

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])
}

fn write(dir: &Path, name: &str, v: Value) {
    std::fs::write(dir.join(name), serde_json::to_string(&v).unwrap()).unwrap();
}

/// The mock upstream's answers, by task (the last user message).
fn answers() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let t = |task: &str, out: &str| json!({"model": "qwen3-8b", "task": task, "output": out, "finish_reason": "stop"});
    write(p, "correct.json", t("correct", CALL));
    write(p, "prose.json", t("prose", "Sunny in Antwerp."));
    write(
        p,
        "forbidden.json",
        t(
            "forbidden",
            r#"<tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call>"#,
        ),
    );
    write(
        p,
        "native.json",
        json!({"model": "qwen3-8b", "task": "native", "output": "", "finish_reason": "tool_calls", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Ghent\"}"}}]}),
    );
    dir
}

fn request(task: &str, stream: bool) -> Value {
    json!({"model": "qwen3-8b", "stream": stream, "tools": tools(), "temperature": 0.5, "max_tokens": 256,
           "messages": [{"role": "system", "content": "secret system prompt"}, {"role": "user", "content": task}]})
}

struct Gateway {
    _mock: Background,
    proxy: Background,
    record: tempfile::TempDir,
    _answers: tempfile::TempDir,
}

fn gateway(traces: &Traces, native: bool) -> Gateway {
    let answers = answers();
    let options = MockOptions {
        native,
        ..MockOptions::default()
    };
    let (m, errors) = Mock::load(answers.path(), options);
    assert!(errors.is_empty(), "{errors:?}");
    let mock = mock::spawn(m).unwrap();
    let record = tempfile::tempdir().unwrap();
    let mut cfg = ProxyConfig::new(mock.base_url());
    cfg.mode = Mode::Enforce;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    cfg.record = Some(record.path().to_path_buf());
    cfg.timeout = Duration::from_secs(20);
    cfg.on_exchange = Some(traces.exchange_hook(toolgate_otel::ExchangeContext {
        profile_source: Some(Arc::new(|_| "given".to_string())),
        redact: Vec::new(),
        upstream: Some(mock.base_url()),
    }));
    let proxy = gateway::spawn(cfg).unwrap();
    Gateway {
        _mock: mock,
        proxy,
        record,
        _answers: answers,
    }
}

fn ask(g: &Gateway, task: &str, stream: bool) -> String {
    let resp = reqwest::blocking::Client::new()
        .post(format!("{}/chat/completions", g.proxy.base_url()))
        .header("authorization", "Bearer sk-test-secret")
        .header("x-toolgate-task", task)
        .json(&request(task, stream))
        .timeout(Duration::from_secs(20))
        .send()
        .unwrap();
    assert!(resp.status().is_success(), "{task}: {}", resp.status());
    resp.text().unwrap()
}

/// The recorded transcripts (served attempts), once `files` are written: the
/// proxy calls the hook just before it records, so every exchange recorded
/// is in the trace queue.
fn recorded(g: &Gateway, files: usize) -> Vec<Value> {
    // The served lines of the record segments (whole lines only: one still
    // being appended is left out).
    let served = || -> Vec<Value> {
        toolgate_testkit::record::lines(g.record.path())
            .into_iter()
            .filter(|v| v["proxy"]["served"] == json!(true))
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while served().len() < files && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let lines = served();
    assert_eq!(lines.len(), files);
    lines
}

// -------------------------------------------------------------------- proxy

#[test]
fn proxy_exchanges_arrive_as_genai_chat_spans_with_the_verdict() {
    let collector = collector(200);
    let traces = Traces::start(settings(collector.endpoint(), true)).unwrap();
    let g = gateway(&traces, false);
    for task in ["correct", "prose", "forbidden"] {
        ask(&g, task, false);
    }
    ask(&g, "correct", true);
    recorded(&g, 4);
    traces.shutdown(Duration::from_secs(10));
    let spans = collector.spans();
    assert_eq!(spans.len(), 4, "{spans:#?}");
    assert_eq!(traces.dropped(), 0);
    assert_eq!(spans[0].service_name.as_deref(), Some("toolgate-test"));
    let batch: Vec<&Received> = spans
        .iter()
        .filter(|s| attr(s, "toolgate.stream") == Some(&json!(false)))
        .collect();
    let tasks = by_task(&batch);
    let correct = &tasks["correct"];
    assert_eq!(correct.name, "chat qwen3-8b");
    assert_eq!(correct.kind, 3, "SPAN_KIND_CLIENT");
    assert_eq!(
        text(correct, "gen_ai.operation.name").as_deref(),
        Some("chat")
    );
    assert_eq!(
        text(correct, "gen_ai.provider.name").as_deref(),
        Some("openai")
    );
    assert_eq!(
        text(correct, "gen_ai.request.model").as_deref(),
        Some("qwen3-8b")
    );
    assert_eq!(
        text(correct, "gen_ai.response.model").as_deref(),
        Some("qwen3-8b")
    );
    assert!(text(correct, "gen_ai.response.id").is_some());
    assert_eq!(
        attr(correct, "gen_ai.response.finish_reasons"),
        Some(&json!(["stop"]))
    );
    assert!(int(correct, "gen_ai.usage.input_tokens").unwrap() > 0);
    assert!(int(correct, "gen_ai.usage.output_tokens").unwrap() > 0);
    assert_eq!(
        text(correct, "toolgate.decision").as_deref(),
        Some("execute")
    );
    assert_eq!(text(correct, "toolgate.label").as_deref(), Some("pass"));
    assert_eq!(text(correct, "toolgate.profile").as_deref(), Some("hermes"));
    assert_eq!(
        text(correct, "toolgate.profile.source").as_deref(),
        Some("given")
    );
    assert_eq!(
        text(correct, "toolgate.parse_mode").as_deref(),
        Some("hermes")
    );
    assert_eq!(text(correct, "toolgate.mode").as_deref(), Some("enforce"));
    assert_eq!(
        text(correct, "server.address").as_deref(),
        Some("127.0.0.1")
    );
    assert!(int(correct, "server.port").is_some());
    assert_eq!(
        attr(correct, "gen_ai.request.temperature"),
        Some(&json!(0.5))
    );
    assert_eq!(int(correct, "gen_ai.request.max_tokens"), Some(256));
    assert!(attr(correct, "error.type").is_none());
    assert_eq!(correct.status, 0, "a success leaves the status unset");
    assert!(correct.end_unix_nano >= correct.start_unix_nano);
    assert!(correct.start_unix_nano > 1_600_000_000_000_000_000);
    let messages: Value =
        serde_json::from_str(&text(correct, "gen_ai.output.messages").unwrap()).unwrap();
    assert_eq!(
        messages,
        json!([{"role": "assistant", "parts": [{"type": "text", "content": CALL}], "finish_reason": "stop"}])
    );
    let defs: Value =
        serde_json::from_str(&text(correct, "gen_ai.tool.definitions").unwrap()).unwrap();
    assert_eq!(defs[0]["name"], "get_weather");

    let forbidden = &tasks["forbidden"];
    assert_eq!(
        text(forbidden, "toolgate.decision").as_deref(),
        Some("reject")
    );
    assert_eq!(
        text(forbidden, "toolgate.gate").as_deref(),
        Some("allowlist")
    );
    assert_eq!(
        text(forbidden, "error.type").as_deref(),
        Some("toolgate.reject.allowlist")
    );
    assert_eq!(forbidden.status, 2, "STATUS_CODE_ERROR");
    assert_eq!(
        text(&tasks["prose"], "toolgate.decision").as_deref(),
        Some("no_call")
    );

    // The streamed exchange has a time to first chunk, in seconds.
    let streamed = spans
        .iter()
        .find(|s| attr(s, "toolgate.stream") == Some(&json!(true)))
        .unwrap();
    let ttfc = attr(streamed, "gen_ai.response.time_to_first_chunk")
        .and_then(Value::as_f64)
        .unwrap();
    assert!((0.0..20.0).contains(&ttfc), "{ttfc}");
    assert!(attr(correct, "gen_ai.response.time_to_first_chunk").is_none());
}

#[test]
fn without_content_capture_no_output_prompt_or_credential_leaves_the_proxy() {
    let collector = collector(200);
    let traces = Traces::start(settings(collector.endpoint(), false)).unwrap();
    let g = gateway(&traces, false);
    ask(&g, "forbidden", false);
    recorded(&g, 1);
    traces.shutdown(Duration::from_secs(10));
    let spans = collector.spans();
    assert_eq!(spans.len(), 1);
    assert!(attr(&spans[0], "gen_ai.output.messages").is_none());
    assert!(attr(&spans[0], "gen_ai.tool.definitions").is_none());
    assert_eq!(
        text(&spans[0], "toolgate.decision").as_deref(),
        Some("reject")
    );
    let all = collector.otlp_json();
    for secret in [
        "rm_rf",
        "secret system prompt",
        "sk-test-secret",
        "get_weather",
    ] {
        assert!(!all.contains(secret), "{secret} leaked: {all}");
    }
}

#[test]
fn exported_spans_import_back_into_the_proxy_s_recorded_transcripts() {
    let collector = collector(200);
    let traces = Traces::start(settings(collector.endpoint(), true)).unwrap();
    let g = gateway(&traces, true);
    for task in ["correct", "prose", "forbidden", "native"] {
        ask(&g, task, false);
    }
    let mut recordings = recorded(&g, 4);
    traces.shutdown(Duration::from_secs(10));

    // The receiver's OTLP JSON (the protobuf → JSON mapping of the OTLP
    // spec: camelCase names, hex ids, 64-bit integers as strings, enums as
    // numbers).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spans.jsonl");
    let json = collector.otlp_json();
    std::fs::write(&path, &json).unwrap();
    let first: Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    let span = &first["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert_eq!(span["traceId"].as_str().unwrap().len(), 32);
    assert_eq!(span["spanId"].as_str().unwrap().len(), 16);
    assert!(span["startTimeUnixNano"].is_string() || span["startTimeUnixNano"].is_u64());
    assert_eq!(span["kind"], json!(3));
    let attribute = |key: &str| {
        span["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == json!(key))
            .map(|a| a["value"].clone())
    };
    // 64-bit integers as decimal strings, arrays as `arrayValue.values`.
    assert!(
        attribute("gen_ai.usage.input_tokens").unwrap()["intValue"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .is_ok()
    );
    let reasons = attribute("gen_ai.response.finish_reasons").unwrap();
    assert!(
        reasons["arrayValue"]["values"][0]["stringValue"].is_string(),
        "{reasons}"
    );
    assert_eq!(
        attribute("toolgate.output.raw"),
        Some(json!({"boolValue": true}))
    );

    // What `toolgate import` does with the file.
    let kind = toolgate_core::import::detect(&path, &json).unwrap();
    assert_eq!(kind.name(), "otel");
    let imported: Vec<Value> =
        toolgate_core::import::convert(&path, &json, kind, &Default::default())
            .into_iter()
            .map(|r| Value::Object(r.unwrap().object))
            .collect();
    assert_eq!(imported.len(), 4);

    let key = |v: &Value| v["output"].as_str().unwrap().to_string() + &v["tool_calls"].to_string();
    recordings.sort_by_key(key);
    let mut imported = imported;
    imported.sort_by_key(key);
    for (rec, imp) in recordings.iter().zip(&imported) {
        for field in ["model", "output", "finish_reason"] {
            assert_eq!(imp[field], rec[field], "{field}: {imp} vs {rec}");
        }
        let calls = |v: &Value| v.get("tool_calls").cloned().filter(|c| c != &json!([]));
        assert_eq!(calls(imp), calls(rec), "{imp} vs {rec}");
        // Both load as transcripts with the same allowlist, and the import
        // is judged on its raw text like the recording.
        let load = |v: &Value| {
            toolgate_core::load::from_object(
                v.as_object().unwrap().clone(),
                Path::new("x.json"),
                None,
                "x".into(),
            )
            .unwrap()
        };
        let (r, i) = (load(rec), load(imp));
        assert_eq!(i.tools, r.tools);
        assert_eq!(i.output, r.output);
        assert!(i.has_raw_text(), "{imp}");
    }
}

#[test]
fn a_collector_that_hangs_or_refuses_never_slows_the_proxy_and_shutdown_is_bounded() {
    // Accepts connections and never answers.
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1/traces", hung.local_addr().unwrap());
    let traces = Traces::start(settings(endpoint, true)).unwrap();
    let g = gateway(&traces, false);
    let started = Instant::now();
    for _ in 0..5 {
        ask(&g, "correct", false);
    }
    recorded(&g, 5);
    assert!(started.elapsed() < Duration::from_secs(10));
    let stopping = Instant::now();
    traces.shutdown(Duration::from_secs(1));
    assert!(
        stopping.elapsed() < Duration::from_secs(5),
        "{:?}",
        stopping.elapsed()
    );
    drop(hung);

    // A collector that answers 500: the spans are lost, the proxy is not.
    let refusing = collector(500);
    let traces = Traces::start(settings(refusing.endpoint(), false)).unwrap();
    let g = gateway(&traces, false);
    ask(&g, "prose", false);
    recorded(&g, 1);
    traces.shutdown(Duration::from_secs(5));
    assert!(refusing.spans().is_empty());
    assert_eq!(traces.emitted(), 1);
}

// ------------------------------------------------------------------- runner

#[test]
fn runner_samples_arrive_as_chat_spans_with_execute_tool_children() {
    let collector = collector(200);
    let traces = Traces::start(settings(collector.endpoint(), true)).unwrap();
    let answers = answers();
    let mock = mock::spawn(Mock::load(answers.path(), MockOptions::default()).0).unwrap();
    let suite_text = [
        json!({"task": "correct", "messages": [{"role": "user", "content": "correct"}], "tools": tools(),
               "expect": {"calls": [{"name": "get_weather"}]}}),
        json!({"task": "forbidden", "messages": [{"role": "user", "content": "forbidden"}], "tools": tools(),
               "expect": {"calls": [{"name": "get_weather"}]}}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n");
    let suite =
        toolgate_proxy::runner::Suite::parse(Path::new("suite.jsonl"), &suite_text).unwrap();
    let out = tempfile::tempdir().unwrap();
    let cfg = toolgate_proxy::runner::RunConfig {
        base_url: mock.base_url(),
        models: vec!["qwen3-8b".into()],
        k: 2,
        out: out.path().to_path_buf(),
        concurrency: 2,
        timeout: Duration::from_secs(20),
        retries: 0,
        retry_delay: Duration::from_millis(10),
        temperature: None,
        seed: None,
        max_tokens: None,
        api_key: Some("sk-run-secret".into()),
        progress: false,
        on_sample: Some(traces.sample_hook(toolgate_otel::Judge::new(Auto::default()))),
    };
    let summary = toolgate_proxy::runner::run(&suite, &cfg).unwrap();
    assert_eq!(summary.written, 4);
    traces.shutdown(Duration::from_secs(10));
    let spans = collector.spans();
    let chats: Vec<&Received> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .collect();
    let tools: Vec<&Received> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert_eq!(chats.len(), 4, "{spans:#?}");
    assert_eq!(tools.len(), 2, "one per correct sample: {spans:#?}");
    for tool in &tools {
        assert_eq!(tool.name, "execute_tool get_weather");
        assert_eq!(
            text(tool, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(
            text(tool, "gen_ai.tool.name").as_deref(),
            Some("get_weather")
        );
        assert_eq!(attr(tool, "toolgate.tool.executed"), Some(&json!(false)));
        assert_eq!(
            text(tool, "gen_ai.tool.call.arguments").as_deref(),
            Some(r#"{"city":"Antwerp"}"#)
        );
        let parent = chats
            .iter()
            .find(|c| c.span_id == tool.parent_span_id)
            .unwrap();
        assert_eq!(parent.trace_id, tool.trace_id);
        assert_eq!(text(parent, "toolgate.task").as_deref(), Some("correct"));
        assert_eq!(text(parent, "server.address").as_deref(), Some("127.0.0.1"));
        assert_eq!(
            text(parent, "toolgate.decision").as_deref(),
            Some("execute")
        );
        assert_eq!(text(parent, "toolgate.label").as_deref(), Some("pass"));
        assert_eq!(
            text(parent, "toolgate.profile.source").as_deref(),
            Some("by name")
        );
    }
    let forbidden: Vec<&&Received> = chats
        .iter()
        .filter(|c| text(c, "toolgate.task").as_deref() == Some("forbidden"))
        .collect();
    assert_eq!(forbidden.len(), 2);
    for f in forbidden {
        assert_eq!(text(f, "toolgate.label").as_deref(), Some("wrong_tool"));
        assert_eq!(
            text(f, "error.type").as_deref(),
            Some("toolgate.reject.allowlist")
        );
        assert!(int(f, "toolgate.sample").is_some());
        assert_eq!(int(f, "toolgate.attempts"), Some(1));
    }
    assert!(!collector.otlp_json().contains("sk-run-secret"));
}
