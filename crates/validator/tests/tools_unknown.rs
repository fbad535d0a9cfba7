//! Issue 22, SPEC §4 "tools unknown": a transcript without `tools` has an
//! unknown allowlist, which is not `tools: []`. Its labels are decided
//! without the tool definitions (rule 8 only from `expect`, rules 9–12 only
//! from the expectation's `arguments` schemas), every row carries the finding
//! `tools_unknown`, and the decision is `reject` at `allowlist`.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use toolgate_core::load::parse_transcript;
use toolgate_core::{Gate, Label, Transcript};
use toolgate_validator::{Engine, FindingKind, Profile, Replay};

fn transcript(value: Value) -> Transcript {
    parse_transcript(&value.to_string(), Path::new("t.json"), None, "t").unwrap()
}

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
    "required": ["city"], "additionalProperties": false}}}]"#;

fn hermes(args: &str) -> String {
    format!(r#"<tool_call>{{"name": "get_weather", "arguments": {args}}}</tool_call>"#)
}

fn replay(t: &Transcript, profile: &str) -> Replay {
    Engine::new(Profile::builtin(profile).unwrap()).replay(t)
}

fn kinds(r: &Replay) -> Vec<FindingKind> {
    r.findings.iter().map(|f| f.kind).collect()
}

/// The label of `mode`, strict and lenient.
fn labels(r: &Replay, mode: &str) -> (Label, Label) {
    (
        r.strict_mode(mode).unwrap().label,
        r.lenient_mode(mode).unwrap().label,
    )
}

#[test]
fn without_tools_a_call_is_not_wrong_tool_but_nothing_executes() {
    let t = transcript(json!({"output": hermes(r#"{"city": "Paris", "days": "3"}"#)}));
    assert!(t.tools_unknown());
    let r = replay(&t, "hermes");
    // No tool schema: the undeclared `days` is not the model's fault either.
    assert_eq!(labels(&r, "hermes"), (Label::Pass, Label::Pass));
    assert_eq!(r.profile.label, Label::Pass);
    assert_eq!(r.profile.decision.gate(), Some(Gate::Allowlist));
    assert_eq!(r.profile.decision.kind(), "reject");
    let toolgate_core::Decision::Reject { reason, .. } = &r.profile.decision else {
        panic!("{:?}", r.profile.decision)
    };
    assert!(reason.contains("tools unknown"), "{reason}");
    // Every mode's own gates reject too: none executes.
    for m in r.strict.iter().chain(&r.lenient) {
        assert_ne!(m.decision.kind(), "execute", "{}", m.mode);
        assert_ne!(m.label, Label::WrongTool, "{}", m.mode);
    }
    assert_eq!(kinds(&r), [FindingKind::ToolsUnknown]);
}

#[test]
fn tools_empty_is_still_an_empty_allowlist() {
    let t = transcript(json!({"tools": [], "output": hermes(r#"{"city": "Paris"}"#)}));
    assert!(t.tools_known);
    let r = replay(&t, "hermes");
    assert_eq!(labels(&r, "hermes"), (Label::WrongTool, Label::WrongTool));
    assert_eq!(r.profile.decision.gate(), Some(Gate::Allowlist));
    assert!(kinds(&r).is_empty(), "{:?}", r.findings);
}

#[test]
fn with_tools_unknown_rule_8_and_the_schema_rules_come_from_the_expectation() {
    let expect = json!({"calls": [{"name": "get_weather", "arguments": {
        "type": "object", "required": ["city"],
        "properties": {"city": {"const": "Paris"}, "days": {"type": "integer"}}}}]});
    let cases = [
        (
            r#"<tool_call>{"name": "get_time", "arguments": {}}</tool_call>"#.to_string(),
            Label::WrongTool,
        ),
        (hermes("{}"), Label::MissingRequired),
        (
            hermes(r#"{"city": "Paris", "days": "3"}"#),
            Label::TypeCoercion,
        ),
        (hermes(r#"{"city": "Rome"}"#), Label::SchemaViolation),
        // The expectation is checked as written: keys it does not mention
        // are not undeclared (only a tool schema declares keys).
        (hermes(r#"{"city": "Paris", "unit": "c"}"#), Label::Pass),
    ];
    for (output, want) in cases {
        let t = transcript(json!({"output": output, "expect": expect}));
        let r = replay(&t, "hermes");
        assert_eq!(r.strict_mode("hermes").unwrap().label, want, "{output}");
        assert_eq!(r.profile.label, want, "{output}");
        assert_eq!(r.profile.decision.kind(), "reject", "{output}");
        assert_eq!(kinds(&r), [FindingKind::ToolsUnknown], "{output}");
    }
    // The same calls with the tool list: the tool's schema decides too.
    let t = transcript(
        json!({"tools": serde_json::from_str::<Value>(TOOLS).unwrap(),
        "output": hermes(r#"{"city": "Paris", "unit": "c"}"#), "expect": expect}),
    );
    let r = replay(&t, "hermes");
    assert_eq!(
        r.strict_mode("hermes").unwrap().label,
        Label::HallucinatedParam
    );
    assert!(kinds(&r).is_empty());
}

#[test]
fn the_default_profile_rejects_at_allowlist_and_no_call_stays_no_call() {
    let t = transcript(json!({"output": r#"<tool name="get_weather">{"city": "Paris"}</tool>"#}));
    let r = replay(&t, "default");
    assert_eq!(r.profile.label, Label::Pass);
    assert_eq!(r.profile.decision.gate(), Some(Gate::Allowlist));
    let t = transcript(json!({"output": "It is sunny."}));
    let r = replay(&t, "default");
    assert_eq!(r.profile.label, Label::NoCall);
    assert_eq!(r.profile.decision.kind(), "no_call");
    assert_eq!(kinds(&r), [FindingKind::ToolsUnknown]);
}

#[test]
fn native_calls_of_a_post_parse_import_without_its_request() {
    let text = r#"{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {"city": "Paris"}}],
        "stop_reason": "tool_use"}"#;
    let path = Path::new("message.json");
    let kind = toolgate_core::import::detect(path, text);
    let loaded = toolgate_core::load::load_kind(
        path,
        text,
        kind,
        &toolgate_core::import::Companions::default(),
    );
    let t = loaded[0].as_ref().unwrap();
    let r = Engine::new(Profile::default()).replay(t);
    assert_eq!(labels(&r, "native"), (Label::Pass, Label::Pass));
    assert_eq!(r.profile.profile, "native");
    assert_eq!(r.profile.decision.gate(), Some(Gate::Allowlist));
    assert!(kinds(&r).contains(&FindingKind::ToolsUnknown));
}

/// The batch fast path (`label`, `matrix`) agrees with the full replay.
#[test]
fn the_fast_path_reports_the_same_labels_decision_and_finding() {
    let engine = Engine::new(Profile::builtin("hermes").unwrap());
    for output in [hermes(r#"{"city": "Paris"}"#), "no call".to_string()] {
        let t = transcript(json!({"output": output}));
        let fast = engine.outcome_as(&t, &engine.profile);
        let plain = engine.outcome_plain(&t, &engine.profile);
        assert_eq!(fast, plain, "{output}");
        let found: Vec<FindingKind> = fast.findings.iter().map(|f| f.kind).collect();
        assert_eq!(found, [FindingKind::ToolsUnknown]);
    }
}

/// XML-like values are typed by the expectation's argument schemas, the only
/// schemas known, as they are checked by them.
#[test]
fn with_tools_unknown_xml_values_are_typed_by_the_expectation() {
    let expect = json!({"calls": [{"name": "get_weather", "arguments": {
        "type": "object", "properties": {"days": {"type": "integer"}}}}]});
    let xml = |days: &str| {
        format!(
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n\
             <parameter=days>\n{days}\n</parameter>\n</function>\n</tool_call>"
        )
    };
    for (days, want) in [("3", Label::Pass), ("three", Label::TypeCoercion)] {
        let t = transcript(json!({"output": xml(days), "expect": expect}));
        let r = replay(&t, "qwen3-coder");
        assert_eq!(r.strict_mode("qwen_xml").unwrap().label, want, "{days}");
        assert_eq!(r.profile.decision.gate(), Some(Gate::Allowlist), "{days}");
        let engine = Engine::new(Profile::builtin("qwen3-coder").unwrap());
        assert_eq!(
            engine.outcome_as(&t, &engine.profile),
            engine.outcome_plain(&t, &engine.profile)
        );
    }
}
