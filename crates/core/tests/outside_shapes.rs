//! Response shapes of real API traffic (issue 22: outside data) that the
//! importers mis-read.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use toolgate_core::Transcript;
use toolgate_core::import::{Companions, detect};
use toolgate_core::load::load_kind;

fn one(name: &str, text: &str) -> Transcript {
    let path = Path::new(name);
    let mut loaded = load_kind(path, text, detect(path, text), &Companions::default());
    assert_eq!(loaded.len(), 1, "{name}");
    loaded.remove(0).unwrap_or_else(|e| panic!("{e}"))
}

/// Issue 22, outside data: Mistral's reasoning models (Magistral) answer
/// chat completions with `content` as `thinking` and `text` chunks; the
/// importer refused the whole response ("not a text part (type thinking)").
#[test]
fn mistral_thinking_chunks_are_reasoning_and_text_chunks_the_output() {
    let text = r#"{"id": "cmpl-1", "object": "chat.completion", "model": "magistral-medium-2509",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
          "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "The user wants "}, {"type": "text", "text": "the weather."}]},
            {"type": "text", "text": "Checking."}],
          "tool_calls": [{"id": "a1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}}]}"#;
    let t = one("magistral.json", text);
    assert_eq!(t.output, "Checking.");
    assert_eq!(t.reasoning.as_deref(), Some("The user wants the weather."));
    assert_eq!(t.tool_calls.as_ref().unwrap().len(), 1);
    // A thinking part without text is reported, not read as empty.
    let bad = text.replace(r#""thinking": [{"type": "text", "text": "The user wants "}, {"type": "text", "text": "the weather."}]"#, r#""thinking": 5"#);
    let path = Path::new("magistral.json");
    let loaded = load_kind(path, &bad, detect(path, &bad), &Companions::default());
    let e = loaded[0].as_ref().unwrap_err();
    assert!(e.reason.contains("thinking part without"), "{}", e.reason);
}
