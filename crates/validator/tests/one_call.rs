//! Probe s47: a request's `parallel_tool_calls: false` lets at most one
//! call execute. The proxy (and the LiteLLM guardrail) rejected an output of
//! two calls at the `single` gate, but replay — `label`, `import`'s
//! transcripts, the inspector, the Python bindings — decided the same
//! recorded exchange `execute`. A transcript carrying the request's
//! `parallel_tool_calls: false` is now decided as the proxy decides it:
//! the same decision, gate and reason, at every depth, its labels unchanged.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use toolgate_core::load::parse_transcript;
use toolgate_core::{Decision, Gate, Label, Transcript};
use toolgate_validator::pipeline::one_call_refusal;
use toolgate_validator::{Engine, Full, Labels, Profile, Row, output};

fn transcript(value: Value) -> Transcript {
    parse_transcript(&value.to_string(), Path::new("t.json"), None, "t").unwrap()
}

fn reason(d: &Decision) -> Option<&str> {
    match d {
        Decision::Reject { reason, .. } => Some(reason),
        _ => None,
    }
}

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": false}}}])
}

const TEXT: &str = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>\n\
                    <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>";

fn native_calls() -> Value {
    json!([{"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
           {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}])
}

/// The text form (hermes) and the native form (`tool_calls`), each with
/// its profile, with and without the flag.
fn cases(flag: Option<bool>) -> Vec<(&'static str, Transcript)> {
    let with = |mut v: Value| {
        if let Some(f) = flag {
            v["parallel_tool_calls"] = json!(f);
        }
        transcript(v)
    };
    vec![
        (
            "hermes",
            with(json!({"tools": tools(), "output": TEXT, "finish_reason": "stop"})),
        ),
        (
            "native",
            with(
                json!({"tools": tools(), "output": "", "tool_calls": native_calls(),
                        "finish_reason": "tool_calls"}),
            ),
        ),
    ]
}

/// The proxy's judgment of the same output under the same request terms
/// (`Judged::under_terms_of` calls `one_call_at_most` when the request set
/// `parallel_tool_calls: false`).
fn proxy_judged(engine: &Engine, t: &Transcript) -> output::Judged {
    let mut j = output::judge(
        engine,
        &t.tools,
        &t.output,
        t.reasoning.as_deref(),
        t.tool_calls.as_deref(),
        None,
        t.finish_reason.as_deref(),
    );
    if t.one_call && j.call_count() > 1 {
        j.one_call_at_most();
    }
    j
}

#[test]
fn two_calls_under_parallel_tool_calls_false_are_rejected_as_the_proxy_rejects_them() {
    for (profile, t) in cases(Some(false)) {
        assert!(t.one_call);
        let engine = Engine::new(Profile::builtin(profile).unwrap());
        let full = engine.judge(&t, &engine.profile, Full);
        let want = Decision::Reject {
            gate: Gate::Single,
            reason: one_call_refusal(2),
            reemit: None,
        };
        assert_eq!(full.profile.decision, want, "{profile}");
        assert_eq!(
            reason(&full.profile.decision),
            Some("2 calls, where the request set parallel_tool_calls: false (at most one)"),
            "{profile}"
        );
        // The label is the model's: it did nothing wrong.
        assert_eq!(full.profile.label, Label::Pass, "{profile}");
        let single = full
            .profile
            .gates
            .iter()
            .find(|g| g.gate == Gate::Single)
            .unwrap();
        assert!(!single.passed, "{profile}: {single:?}");
        assert_eq!(full.profile.telemetry.decision, "reject", "{profile}");
        assert_eq!(full.profile.telemetry.gate, Some(Gate::Single), "{profile}");
        // The mode's own row says the same.
        let mode = full.strict_mode(profile).unwrap();
        assert_eq!(mode.decision, want, "{profile}");
        assert_eq!(mode.label, Label::Pass, "{profile}");
        // Every depth agrees: the batch fast path (`label`) and the row.
        let fast = engine.judge(&t, &engine.profile, Labels);
        assert_eq!(fast.profile, full.profile, "{profile}");
        assert_eq!(
            engine.judge(&t, &engine.profile, Row),
            full.profile,
            "{profile}"
        );
        // The proxy's decision, gate and reason on the same output.
        let proxy = proxy_judged(&engine, &t);
        assert_eq!(proxy.decision(), full.profile.decision.kind(), "{profile}");
        assert_eq!(
            proxy.gate(),
            full.profile.decision.gate().map(Gate::as_str),
            "{profile}"
        );
        assert_eq!(
            proxy.reason().as_deref(),
            reason(&full.profile.decision),
            "{profile}"
        );
    }
}

#[test]
fn without_the_flag_or_with_true_both_calls_execute() {
    for flag in [None, Some(true)] {
        for (profile, t) in cases(flag) {
            assert!(!t.one_call);
            let engine = Engine::new(Profile::builtin(profile).unwrap());
            let full = engine.judge(&t, &engine.profile, Full);
            assert_eq!(
                full.profile.decision.kind(),
                "execute",
                "{profile} {flag:?}"
            );
            assert_eq!(full.profile.decision.calls().len(), 2, "{profile} {flag:?}");
            let proxy = proxy_judged(&engine, &t);
            assert_eq!(proxy.decision(), "execute", "{profile} {flag:?}");
        }
    }
}

#[test]
fn one_call_under_the_flag_executes_and_a_rejection_keeps_its_own_gate() {
    let engine = Engine::new(Profile::builtin("hermes").unwrap());
    let one = transcript(json!({"tools": tools(), "parallel_tool_calls": false,
        "output": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"}));
    let full = engine.judge(&one, &engine.profile, Full);
    assert_eq!(full.profile.decision.kind(), "execute");
    // Two calls, one of a tool not allowlisted: the allowlist decides, as
    // in the proxy (the request's terms apply only to what would execute).
    let bad = transcript(json!({"tools": tools(), "parallel_tool_calls": false,
        "output": TEXT.replace("\"get_weather\", \"arguments\": {\"city\": \"Rome\"}", "\"delete_db\", \"arguments\": {}")}));
    let full = engine.judge(&bad, &engine.profile, Full);
    assert_eq!(full.profile.decision.gate(), Some(Gate::Allowlist));
    let proxy = proxy_judged(&engine, &bad);
    assert_eq!(proxy.gate(), Some("allowlist"));
}

/// Probe s48: an Anthropic Messages exchange whose request set
/// `tool_choice.disable_parallel_tool_use: true` and whose answer holds two
/// `tool_use` blocks was decided `execute`, both calls, where the client
/// asked for one at most. Imported (a JSON pair, or a stream with its
/// `STEM.request.json`), it is decided as a chat request's
/// `parallel_tool_calls: false` is: `reject` at the `single` gate with the
/// proxy's reason, the label the model's (`pass`); with the flag `false`
/// both calls execute.
#[test]
fn anthropic_disable_parallel_tool_use_rejects_two_tool_use_blocks_at_single() {
    use toolgate_core::import::{Companions, Kind};
    use toolgate_core::load::load_kind;
    let request = |flag: bool| {
        format!(
            r#"{{"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "tools": [{{"name": "get_weather", "input_schema": {{"type": "object",
              "properties": {{"city": {{"type": "string"}}}}, "required": ["city"]}}}}],
            "tool_choice": {{"type": "auto", "disable_parallel_tool_use": {flag}}}}}"#
        )
    };
    let message = r#"{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "Rome"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 40}}"#;
    let mut stream = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null}}\n\n",
    );
    for (i, city) in ["Paris", "Rome"].iter().enumerate() {
        stream.push_str(&format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_{i}\",\"name\":\"get_weather\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"city\\\": \\\"{city}\\\"}}\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n"
        ));
    }
    stream.push_str(
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":40}}\n\n\
         event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let engine = Engine::new(Profile::builtin("native").unwrap());
    for flag in [true, false] {
        let req = request(flag);
        let pair = format!(r#"{{"request": {req}, "response": {message}}}"#);
        let json = load_kind(
            Path::new("a.json"),
            &pair,
            Some(Kind::Anthropic),
            &Companions::default(),
        );
        let mut companions = Companions::default();
        companions.add(Path::new("s.request.json"), &req, Kind::OpenaiRequest);
        let streamed = load_kind(
            Path::new("s.sse"),
            &stream,
            Some(Kind::AnthropicStream),
            &companions,
        );
        for (what, loaded) in [("json", json), ("stream", streamed)] {
            let t = loaded[0].as_ref().unwrap();
            let full = engine.judge(t, &engine.profile, Full);
            assert_eq!(full.profile.label, Label::Pass, "{what} {flag}");
            if !flag {
                assert_eq!(full.profile.decision.kind(), "execute", "{what}");
                assert_eq!(full.profile.decision.calls().len(), 2, "{what}");
                continue;
            }
            assert_eq!(
                full.profile.decision,
                Decision::Reject {
                    gate: Gate::Single,
                    reason: one_call_refusal(2),
                    reemit: None,
                },
                "{what}"
            );
            assert_eq!(
                reason(&full.profile.decision),
                Some("2 calls, where the request set parallel_tool_calls: false (at most one)"),
                "{what}"
            );
            let fast = engine.judge(t, &engine.profile, Labels);
            assert_eq!(fast.profile, full.profile, "{what}");
        }
    }
}
