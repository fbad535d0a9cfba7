//! Issue 22: importers write `tools` only when the capture holds the
//! request's tool list (SPEC §2, §4 "tools unknown"). A response without its
//! request used to become `tools: []`, and every real call in it was then
//! judged `wrong_tool`.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use toolgate_core::Transcript;
use toolgate_core::import::{Companions, detect};
use toolgate_core::load::load_kind;

fn one(name: &str, text: &str) -> Transcript {
    let path = Path::new(name);
    let kind = detect(path, text);
    let mut loaded = load_kind(path, text, kind, &Companions::default());
    assert_eq!(loaded.len(), 1, "{name}");
    loaded.remove(0).unwrap_or_else(|e| panic!("{e}"))
}

/// (file name, capture without its request, the same with a request that
/// declares no tools).
fn captures() -> Vec<(&'static str, String, String)> {
    let chat = r#"{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
          "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
          "finish_reason": "tool_calls"}]}"#;
    let anthropic = r#"{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {"city": "Paris"}}],
        "stop_reason": "tool_use"}"#;
    let responses = r#"{"id": "resp_1", "object": "response", "model": "gpt-4.1",
        "output": [{"type": "function_call", "call_id": "c1", "name": "get_weather",
          "arguments": "{\"city\": \"Paris\"}"}]}"#;
    let pair =
        |response: &str| format!(r#"{{"request": {{"model": "m"}}, "response": {response}}}"#);
    vec![
        ("chat.json", chat.to_string(), pair(chat)),
        ("anthropic.json", anthropic.to_string(), pair(anthropic)),
        ("responses.json", responses.to_string(), pair(responses)),
    ]
}

#[test]
fn a_bare_response_without_its_request_gets_no_tools_key() {
    for (name, bare, with_request) in captures() {
        let t = one(name, &bare);
        assert!(!t.raw.contains_key("tools"), "{name}: {:?}", t.raw);
        assert!(t.tools_unknown(), "{name}");
        assert_eq!(t.tool_calls.as_ref().unwrap().len(), 1, "{name}");
        // A captured request without tools declared none: a known, empty list.
        let t = one(name, &with_request);
        assert_eq!(t.raw["tools"], serde_json::json!([]), "{name}");
        assert!(t.tools_known, "{name}");
    }
}

#[test]
fn an_openai_stream_without_its_request_gets_no_tools_key() {
    let text = "data: {\"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0, \"delta\": {\"content\": \"hi\"}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n";
    let t = one("alone.sse", text);
    assert!(!t.raw.contains_key("tools"), "{:?}", t.raw);
    assert!(t.tools_unknown());
}

#[test]
fn otel_spans_and_bfcl_results_without_tool_definitions_get_no_tools_key() {
    let otel = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s1", "name": "chat",
        "attributes": [
          {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
          {"key": "gen_ai.output.messages", "value": {"stringValue": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"hi\"}], \"finish_reason\": \"stop\"}]"}}
        ]}]}]}]}"#;
    let t = one("spans.json", otel);
    assert!(!t.raw.contains_key("tools"), "{:?}", t.raw);
    assert!(t.tools_unknown());

    let bfcl = r#"{"id": "simple_0", "result": "[get_weather(city='Paris')]"}"#;
    let t = one("BFCL_v3_simple_result.json", bfcl);
    assert!(!t.raw.contains_key("tools"), "{:?}", t.raw);
    assert!(t.tools_unknown());
}
