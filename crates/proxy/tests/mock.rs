//! The mock upstream: selection by model and last user message, in turn;
//! streaming deltas that replay the output exactly; native calls on demand.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use toolgate_proxy::mock::{self, Mock, MockOptions, split_deltas};

fn write(dir: &Path, name: &str, v: Value) {
    std::fs::write(dir.join(name), serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(
        p,
        "a_call.json",
        json!({
            "model": "m1", "task": "weather",
            "output": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>",
            "finish_reason": "stop"
        }),
    );
    write(
        p,
        "b_prose.json",
        json!({"model": "m2", "task": "weather", "output": "It is sunny."}),
    );
    write(
        p,
        "c_flaky1.json",
        json!({"model": "m1", "task": "flaky", "output": "first"}),
    );
    write(
        p,
        "d_flaky2.json",
        json!({"model": "m1", "task": "flaky", "output": "second"}),
    );
    write(
        p,
        "e_native.json",
        json!({
            "model": "m3", "output": "", "reasoning": "think first",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}],
            "messages": [{"role": "user", "content": "use f please"}]
        }),
    );
    std::fs::write(p.join("broken.json"), "{not json").unwrap();
    dir
}

fn chat(model: &str, user: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "stream_options": {"include_usage": true},
           "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": user}]})
}

async fn post(base: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{base}/chat/completions"))
        .header("authorization", "Bearer sk-test")
        .json(body)
        .send()
        .await
        .unwrap()
}

/// The `data:` payloads of an SSE body, and its comment lines.
fn sse(body: &str) -> (Vec<String>, Vec<String>) {
    let mut data = Vec::new();
    let mut comments = Vec::new();
    for line in body.lines() {
        if let Some(d) = line.strip_prefix("data: ") {
            data.push(d.to_string());
        } else if line.starts_with(':') {
            comments.push(line.to_string());
        }
    }
    (data, comments)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selects_by_model_and_last_user_message_then_in_turn() {
    let dir = fixture();
    let (m, errors) = Mock::load(dir.path(), MockOptions::default());
    assert_eq!(errors.len(), 1, "the broken file is reported: {errors:?}");
    assert_eq!(m.len(), 5);
    let bg = mock::spawn(m).unwrap();
    let base = bg.base_url();

    let content = |v: Value| v["choices"][0]["message"]["content"].clone();
    // Same task, two models: the request's model narrows it.
    let v: Value = post(&base, &chat("m2", "weather", false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(content(v.clone()), json!("It is sunny."));
    assert_eq!(v["model"], "m2");
    let v: Value = post(&base, &chat("m1", "weather", false))
        .await
        .json()
        .await
        .unwrap();
    assert!(content(v).as_str().unwrap().starts_with("<tool_call>"));
    // Two transcripts for one key answer in turn.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let v: Value = post(&base, &chat("m1", "flaky", false))
            .await
            .json()
            .await
            .unwrap();
        seen.push(content(v).as_str().unwrap().to_string());
    }
    assert_eq!(seen, ["first", "second", "first"]);
    // The transcript's own last user message is a key; without native, its
    // tool_calls and reasoning are not returned and content is the raw output.
    let v: Value = post(&base, &chat("zz", "use f please", false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(content(v.clone()), json!(""));
    assert!(v["choices"][0]["message"].get("tool_calls").is_none());
    assert_eq!(v["choices"][0]["finish_reason"], "stop");

    // The request log keeps what was forwarded, Authorization included.
    let log: Value = reqwest::get(format!("http://{}/mock/requests", bg.addr()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(log.as_array().unwrap().len(), 6);
    assert_eq!(log[0]["authorization"], "Bearer [7 bytes, ends test]");
    assert_eq!(log[0]["body"]["model"], "m2");

    let models: Value = reqwest::get(format!("{base}/models"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["m1", "m2", "m3"]);

    let r = reqwest::get(format!("{base}/nope")).await.unwrap();
    assert_eq!(r.status(), 404);
    let r = reqwest::Client::new()
        .post(format!("{base}/chat/completions"))
        .body("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_small_deltas_whose_concatenation_is_the_output() {
    let dir = fixture();
    let opts = MockOptions {
        delta_chars: 3,
        split_openers: true,
        ..MockOptions::default()
    };
    let bg = mock::spawn(Mock::load(dir.path(), opts).0).unwrap();
    let r = post(&bg.base_url(), &chat("m1", "weather", true)).await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let body = r.text().await.unwrap();
    let (data, comments) = sse(&body);
    assert_eq!(comments, [": toolgate mock upstream"]);
    assert_eq!(data.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let deltas: Vec<String> = chunks
        .iter()
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .filter(|s| !s.is_empty())
        .collect();
    let output = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>";
    assert_eq!(deltas.concat(), output);
    assert!(deltas.iter().all(|d| d.chars().count() <= 3));
    assert_eq!(
        deltas[0], "<",
        "the opener is split after its first character"
    );
    assert!(!deltas.iter().any(|d| d.contains("<tool_call>")));
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_mode_returns_tool_calls_and_reasoning() {
    let dir = fixture();
    let opts = MockOptions {
        native: true,
        ..MockOptions::default()
    };
    let bg = mock::spawn(Mock::load(dir.path(), opts).0).unwrap();
    let v: Value = post(&bg.base_url(), &chat("m3", "use f please", false))
        .await
        .json()
        .await
        .unwrap();
    let msg = &v["choices"][0]["message"];
    assert_eq!(msg["content"], Value::Null);
    assert_eq!(msg["reasoning_content"], "think first");
    assert_eq!(msg["tool_calls"][0]["function"]["arguments"], "{\"x\": 1}");
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");

    let body = post(&bg.base_url(), &chat("m3", "use f please", true))
        .await
        .text()
        .await
        .unwrap();
    let (data, _) = sse(&body);
    let mut args = String::new();
    let mut reasoning = String::new();
    for d in &data[..data.len() - 1] {
        let c: Value = serde_json::from_str(d).unwrap();
        if let Some(a) = c
            .pointer("/choices/0/delta/tool_calls/0/function/arguments")
            .and_then(Value::as_str)
        {
            args.push_str(a);
        }
        if let Some(r) = c
            .pointer("/choices/0/delta/reasoning_content")
            .and_then(Value::as_str)
        {
            reasoning.push_str(r);
        }
    }
    assert_eq!(args, "{\"x\": 1}");
    assert_eq!(reasoning, "think first");
}

#[test]
fn split_deltas_cuts_after_opener_characters() {
    assert_eq!(split_deltas("ab<tool>", 100, true), ["ab<", "tool>"]);
    assert_eq!(split_deltas("abcdef", 4, false), ["abcd", "ef"]);
    assert_eq!(split_deltas("", 4, true), Vec::<String>::new());
    assert_eq!(split_deltas("é｜x", 1, true), ["é", "｜", "x"]);
}

/// The request log is bounded: a large body is logged by its size only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_log_keeps_large_bodies_by_size_only() {
    let dir = fixture();
    let bg = mock::spawn(Mock::load(dir.path(), MockOptions::default()).0).unwrap();
    let mut body = chat("m1", "weather", false);
    body["padding"] = json!("p".repeat(mock::REQUEST_LOG_BODY + 1));
    let r = post(&bg.base_url(), &body).await;
    assert_eq!(r.status(), 200);
    let log: Value = reqwest::get(format!("http://{}/mock/requests", bg.addr()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let clipped = log[0]["body"]["clipped_bytes"].as_u64().unwrap();
    assert!(clipped > mock::REQUEST_LOG_BODY as u64);
}
