//! The default profile end to end, with the real built-in seed extractors.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use toolgate_core::{Call, Decision, Gate, Label, ToolDef};
use toolgate_validator::{Engine, Profile};

fn tools() -> Vec<ToolDef> {
    vec![ToolDef {
        name: "get_weather".into(),
        description: None,
        parameters: Some(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["city"]
        })),
    }]
}

fn parse(output: &str) -> toolgate_validator::PipelineResult {
    Engine::new(Profile::default()).parse_output(output, &tools(), None)
}

#[test]
fn primary_tag_executes() {
    let r = parse(r#"<tool name="get_weather">{"city": "Antwerp"}</tool>"#);
    assert_eq!(
        r.decision,
        Decision::Execute {
            calls: vec![Call::new("get_weather", json!({"city": "Antwerp"}))]
        }
    );
    assert_eq!(
        (&*r.telemetry.parse_mode, r.fallback_used),
        ("primary", false)
    );
    assert_eq!(r.label, Label::Pass);
}

#[test]
fn json_fallback_needs_intent() {
    let call = r#"{"tool": "get_weather", "arguments": {"city": "Antwerp"}}"#;
    let r = parse(call);
    assert_eq!(r.parse_mode.as_deref(), Some("json"));
    assert_eq!(r.decision.gate(), Some(Gate::Intent));
    assert_eq!(r.label, Label::Pass);
    let r = parse(&format!("need_tool: yes\n{call}"));
    assert_eq!(r.decision.kind(), "execute");
    assert_eq!(r.telemetry.parse_mode, "json");
    assert!(r.telemetry.fallback_used);
}

#[test]
fn several_bracket_calls_ask_for_a_reemit_in_the_tag_format() {
    let r = parse("CALL_TOOL\n[get_weather(city=\"Antwerp\"), get_weather(city=\"Ghent\")]");
    assert_eq!(r.parse_mode.as_deref(), Some("bracket"));
    let Decision::Reject { gate, reemit, .. } = &r.decision else {
        panic!("expected a rejection, got {:?}", r.decision)
    };
    assert_eq!(*gate, Gate::Single);
    let reemit = reemit.as_deref().unwrap();
    assert!(
        reemit.starts_with(
            "Your reply contained 2 tool calls in the `bracket` format, which cannot be executed. \
             Re-emit exactly one tool call, in the `tag` format, for example:\n<tool name="
        ),
        "{reemit}"
    );
}

#[test]
fn prose_is_no_call() {
    let r = parse("It is sunny in Antwerp.");
    assert_eq!(r.decision, Decision::NoCall);
    assert_eq!(r.telemetry.parse_mode, "none");
    assert_eq!(r.label, Label::NoCall);
}

#[test]
fn undeclared_argument_is_rejected_by_the_schema_gate() {
    let r = parse(r#"<tool name="get_weather">{"city": "Antwerp", "days": 3}</tool>"#);
    assert_eq!(r.decision.gate(), Some(Gate::Schema));
    assert_eq!(r.label, Label::HallucinatedParam);
}

/// Issue 9 item 8: candidates are capped per mode per output; the true count
/// is reported, the labels follow from it and a capped mode never executes.
#[test]
fn candidates_are_capped_per_mode_with_the_true_count_reported() {
    // 5,000 parsed tag calls, then one cut off: the cap keeps 1,000.
    let one = r#"<tool name="get_weather">{"city": "Antwerp"}</tool>"#;
    let out = format!(
        "{}<tool name=\"get_weather\">{{\"city\": \"Ant",
        one.repeat(5_000)
    );
    let r = parse(&out);
    assert_eq!(r.candidates.len(), 1_000);
    assert_eq!(r.decision.kind(), "reject");
    let stand_in = r.candidates[998].failure().unwrap();
    assert!(
        stand_in
            .message
            .starts_with("5001 candidates, more than the cap of 1000"),
        "{}",
        stand_in.message
    );
    // The cut-off last call is kept: the label is truncation, as uncapped.
    assert_eq!(r.label, Label::Truncation);

    // Replay: every mode's list is capped, the cap is configurable.
    let mut engine = Engine::new(Profile::default());
    engine.max_candidates = 10;
    let t = toolgate_core::load::parse_transcript(
        &json!({"output": "[f(".repeat(50_000), "tools": [], "expect": {"calls": [{"name": "f"}]}})
            .to_string(),
        std::path::Path::new("t.json"),
        None,
        "t",
    )
    .unwrap();
    let replay = engine.replay(&t);
    let bracket = replay.strict_mode("bracket").unwrap();
    assert_eq!(bracket.candidates.len(), 10);
    assert!(
        bracket.candidates[8]
            .failure()
            .unwrap()
            .message
            .contains("more than the cap of 10"),
    );
    // One call expected, 50,000 found: spurious_call, as uncapped.
    assert_eq!(bracket.label, Label::SpuriousCall);
}

fn reemit_of(profile: Profile, output: &str, tools: &[ToolDef]) -> String {
    let r = Engine::new(profile).parse_output(output, tools, None);
    let Decision::Reject { gate, reemit, .. } = &r.decision else {
        panic!("expected a rejection, got {:?}", r.decision)
    };
    assert_eq!(*gate, Gate::Single);
    reemit.clone().unwrap()
}

/// Issue 7: the re-emit example called `search_web` ("rust memchr") even when
/// only `send_email` was allowlisted. It now calls an allowlisted tool (the
/// one the rejected calls named, when allowlisted), in the primary mode's
/// own syntax, with that tool's argument names (and, issue 26, the rejected
/// call's own values).
#[test]
fn reemit_example_calls_an_allowlisted_tool_in_the_primary_syntax() {
    let email = [ToolDef {
        name: "send_email".into(),
        description: None,
        parameters: Some(json!({
            "type": "object",
            "properties": {"subject": {"type": "string"}, "to": {"type": "string"}},
            "required": ["to"]
        })),
    }];
    let two = "CALL_TOOL\n[send_email(to=\"a@b.c\"), send_email(to=\"d@e.f\")]";
    let msg = reemit_of(Profile::default(), two, &email);
    assert_eq!(
        msg,
        "Your reply contained 2 tool calls in the `bracket` format, which cannot be executed. \
         Re-emit exactly one tool call, in the `tag` format, for example:\n\
         <tool name=\"send_email\">{\"to\": \"a@b.c\"}</tool>"
    );
    assert!(!msg.contains("search_web"));
    // Issue 26: the example's value under the renamed key read
    // `{"to": "rust memchr"}`; the rejected call's own value is used.
    assert!(!msg.contains("rust memchr"), "{msg}");

    // A hermes-primary profile with a json fallback: hermes syntax, and the
    // allowlisted tool the rejected calls named (not the list's first).
    let mut hermes =
        Profile::from_toml("name = \"h\"\nprimary = \"hermes\"\nfallbacks = [\"json\"]").unwrap();
    hermes.intent_tokens = vec!["CALL_TOOL".into()];
    let mut both = email.to_vec();
    both.extend(tools());
    let two = "CALL_TOOL\n[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"A\"}}, \
               {\"name\": \"get_weather\", \"arguments\": {\"city\": \"B\"}}]";
    let msg = reemit_of(hermes, two, &both);
    assert!(
        msg.ends_with(
            "in the `hermes` format, for example:\n<tool_call>\n\
             {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>"
        ),
        "{msg}"
    );
}
