//! Issue 22: a server error that carries the model's text
//! (`failed_generation`, Groq's `tool_use_failed`) is imported with that
//! text as the output and the typed note `failed_generation`; replay reports
//! the finding `failed_generation` (a capture finding, like `tools_unknown`)
//! on the full replay and on the batch fast path, and nowhere else.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use toolgate_core::import::{Companions, detect};
use toolgate_core::load::{load_kind, parse_transcript};
use toolgate_core::{Label, Transcript};
use toolgate_validator::{Engine, FindingKind, Profile, Replay};

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
    "required": ["city"]}}}]"#;

/// A non-streamed pair whose response is Groq's `tool_use_failed` error.
fn pair(failed_generation: &str) -> Transcript {
    let text = json!({
        "request": {"model": "llama-3.3-70b-versatile", "tools": serde_json::from_str::<Value>(TOOLS).unwrap()},
        "response": {"error": {"message": "Failed to call a function. See 'failed_generation' for more details.",
            "type": "invalid_request_error", "code": "tool_use_failed",
            "failed_generation": failed_generation}}
    })
    .to_string();
    let path = Path::new("groq.json");
    let loaded = load_kind(path, &text, detect(path, &text), &Companions::default());
    loaded.into_iter().next().unwrap().unwrap()
}

fn kinds(r: &Replay) -> Vec<FindingKind> {
    r.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn a_failed_generation_capture_carries_the_finding() {
    let t =
        pair(r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>"#);
    let engine = Engine::new(Profile::builtin("hermes").unwrap());
    let r = engine.replay(&t);
    // The server returned no call; the text the model wrote holds one that
    // passes, so the server also dropped it.
    assert_eq!(
        kinds(&r),
        [FindingKind::ServerDropped, FindingKind::FailedGeneration]
    );
    let f = r.findings.last().unwrap();
    assert!(f.detail.contains("`tool_use_failed`"), "{}", f.detail);
    assert!(f.detail.contains("failure to parse"), "{}", f.detail);
    assert!(FindingKind::FailedGeneration.describes_capture());
    assert_eq!(FindingKind::FailedGeneration.as_str(), "failed_generation");
    // The finding changes no label: the model's text is judged as written.
    assert_eq!(r.strict_mode("hermes").unwrap().label, Label::Pass);
    assert_eq!(r.strict_mode("native").unwrap().label, Label::NoCall);
    // The batch fast path reports the same.
    let fast = engine.outcome_as(&t, &engine.profile);
    assert_eq!(fast, engine.outcome_plain(&t, &engine.profile));
    let found: Vec<FindingKind> = fast.findings.iter().map(|f| f.kind).collect();
    assert_eq!(found, kinds(&r));
}

/// A text the model got wrong is still the model's label, with the finding.
#[test]
fn a_malformed_failed_generation_is_the_models_label_with_the_finding() {
    let t =
        pair(r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}</tool_call>"#);
    let r = Engine::new(Profile::builtin("hermes").unwrap()).replay(&t);
    assert_eq!(r.strict_mode("hermes").unwrap().label, Label::MalformedJson);
    assert_eq!(kinds(&r), [FindingKind::FailedGeneration]);
}

/// Only the importer's typed note raises it: a transcript without it (or
/// with another note) has no such finding, on either path.
#[test]
fn without_the_note_there_is_no_finding() {
    let engine = Engine::new(Profile::builtin("hermes").unwrap());
    for import in [
        json!(null),
        json!({"notes": [{"kind": "index_reused", "detail": "x"}]}),
    ] {
        let mut v = json!({"tools": serde_json::from_str::<Value>(TOOLS).unwrap(),
            "output": "no call", "finish_reason": "stop"});
        if !import.is_null() {
            v["import"] = import;
        }
        let t = parse_transcript(&v.to_string(), Path::new("t.json"), None, "t").unwrap();
        assert!(engine.replay(&t).findings.is_empty());
        assert!(engine.outcome_as(&t, &engine.profile).findings.is_empty());
    }
    // The note alone, on a flat transcript without `tool_calls` (the fast
    // path's own extraction), still gives the finding.
    let v = json!({"tools": serde_json::from_str::<Value>(TOOLS).unwrap(), "output": "no call",
        "import": {"notes": [{"kind": "failed_generation", "detail": ""}]}});
    let t = parse_transcript(&v.to_string(), Path::new("t.json"), None, "t").unwrap();
    let fast = engine.outcome_as(&t, &engine.profile);
    assert_eq!(fast, engine.outcome_plain(&t, &engine.profile));
    let found: Vec<FindingKind> = fast.findings.iter().map(|f| f.kind).collect();
    assert_eq!(found, [FindingKind::FailedGeneration]);
}
