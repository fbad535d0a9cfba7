//! The fail-closed invariant, end to end: random and mutated model outputs
//! go through every built-in extractor — each as the primary mode of a
//! profile, and the default profile with its fallbacks — and an `execute`
//! decision only ever carries calls that
//! - were found by the selected mode, outside reasoning, parsed, unrepaired,
//! - name an allowlisted tool,
//! - pass that tool's schema strictly (`Toolset::check`),
//!
//! and exactly those calls (nothing added, nothing coerced).
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::json;
use toolgate_core::{Decision, ToolDef};
use toolgate_formats::{Input, ParamTypes, builtin};
use toolgate_validator::{Profile, Toolset, pipeline};

fn tools() -> Vec<ToolDef> {
    let def = |name: &str, parameters: serde_json::Value| ToolDef {
        name: name.into(),
        description: None,
        parameters: Some(parameters),
    };
    vec![
        def(
            "get_weather",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"enum": ["c", "f"]}},
                "required": ["city"], "additionalProperties": false}),
        ),
        def(
            "search_web",
            json!({"type": "object", "properties": {"query": {"type": "string"}},
                "required": ["query"]}),
        ),
    ]
}

/// Real call shapes of many families; mutated below.
const SHAPES: &[&str] = &[
    r#"<tool name="get_weather">{"city": "Antwerp", "days": 3}</tool>"#,
    r#"{"name": "get_weather", "arguments": {"city": "Ghent"}}"#,
    r#"need_tool: yes
{"tool": "search_web", "arguments": {"query": "rust"}}"#,
    r#"CALL_TOOL
[get_weather(city="Antwerp", days=2)]"#,
    "TOOL_CALL\n```json\n{\"tool_name\": \"search_web\", \"parameters\": {\"query\": \"x\"}}\n```",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"unit\": \"c\"}}\n</tool_call>",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nBern\n</parameter>\n<parameter=days>\n4\n</parameter>\n</function>\n</tool_call>",
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>\n</tool_call>",
    r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]"#,
    r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}"#,
    r#"<|python_tag|>{"name": "search_web", "parameters": {"query": "q"}}"#,
    r#"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Kyiv"}<|call|>"#,
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Riga\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    r#"<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>"#,
    r#"<think><tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call></think>"#,
    r#"[get_weather(city='Antwerp', days=True), search_web(query=None)]"#,
    r#"<tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call>"#,
    r#"<tool_call>{"name": "get_weather", "arguments": "{\"city\": \"Gent\"}"}</tool_call>"#,
];

/// Pieces spliced into outputs: openers, closers, quotes, braces, escapes.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    ",",
    ":",
    "\\",
    "\\\"",
    "\n",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "need_tool: yes\n",
    "CALL_TOOL\n",
    "TOOL_CALL",
    "```",
    "```json\n",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|call|>",
    "<parameter=days>",
    "</parameter>",
    "True",
    "null",
    "18446744073709551617",
    "-1",
    "\"days\": \"3\"",
    "\"extra\": 1",
    "get_weather",
    "rm_rf",
    "(",
    ")",
    "=",
    "\u{1b}[31m",
    "é",
    "東京",
];

#[derive(Clone, Debug)]
enum Mutation {
    Insert(usize, usize),
    Delete(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, p)| Mutation::Insert(at, p)),
        (any::<usize>(), 1usize..6).prop_map(|(at, n)| Mutation::Delete(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(base: &str, muts: &[Mutation]) -> String {
    let mut s = base.to_string();
    for m in muts {
        match *m {
            Mutation::Insert(at, p) => {
                let at = floor(&s, at % (s.len() + 1));
                s.insert_str(at, PIECES[p]);
            }
            Mutation::Delete(at, n) => {
                let a = floor(&s, at % (s.len() + 1));
                let b = floor(&s, a + n);
                s.replace_range(a..b, "");
            }
            Mutation::Truncate(at) => {
                let at = floor(&s, at % (s.len() + 1));
                s.truncate(at);
            }
        }
    }
    s
}

fn profiles() -> Vec<Profile> {
    let mut out = vec![Profile::default()];
    for e in builtin() {
        out.push(Profile {
            name: format!("primary-{}", e.name()),
            primary: e.name().to_string(),
            fallbacks: vec!["json".into(), "bracket".into(), "hermes".into()],
            fallbacks_enabled: true,
            ..Profile::default()
        });
    }
    out
}

fn assert_fail_closed(output: &str) {
    let defs = tools();
    let toolset = Toolset::new(&defs);
    let types = ParamTypes::from_tools(&defs);
    let extractors = builtin();
    let mut input = Input::new(output);
    input.param_types = Some(&types);
    for profile in profiles() {
        let result = pipeline::run(&profile, &extractors, &input, &toolset, None);
        let Decision::Execute { calls } = &result.decision else {
            continue;
        };
        assert!(!calls.is_empty(), "{}: execute without calls", profile.name);
        let selected: Vec<_> = result.candidates.iter().filter(|c| c.is_live()).collect();
        assert_eq!(selected.len(), calls.len(), "{}: {output:?}", profile.name);
        for (call, cand) in calls.iter().zip(&selected) {
            assert!(
                cand.failure().is_none(),
                "{}: executed a failed candidate",
                profile.name
            );
            assert!(
                cand.repairs.is_empty(),
                "{}: executed a repaired candidate",
                profile.name
            );
            assert_eq!(
                cand.call().as_ref(),
                Some(call),
                "{}: call differs from its candidate",
                profile.name
            );
            assert!(
                toolset.is_allowed(&call.name),
                "{}: executed `{}`",
                profile.name,
                call.name
            );
            assert_eq!(toolset.check(call), Ok(()), "{}: {output:?}", profile.name);
        }
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_shapes_never_execute_anything_invalid(
        shape in 0..SHAPES.len(),
        prose in "[ -~\n]{0,24}",
        muts in proptest::collection::vec(mutation(), 0..6),
    ) {
        let base = format!("{prose}{}", SHAPES[shape]);
        assert_fail_closed(&apply(&base, &muts));
    }

    #[test]
    fn piece_soup_never_executes_anything_invalid(
        pieces in proptest::collection::vec(0..PIECES.len(), 0..30),
    ) {
        let out: String = pieces.iter().map(|&p| PIECES[p]).collect();
        assert_fail_closed(&out);
    }

    #[test]
    fn arbitrary_text_never_executes_anything_invalid(out in "\\PC{0,80}") {
        assert_fail_closed(&out);
    }
}

/// The invariant is not vacuous: valid calls do execute, and the mutations
/// the property feeds in do get rejected.
#[test]
fn valid_calls_execute_and_broken_ones_do_not() {
    let defs = tools();
    let toolset = Toolset::new(&defs);
    let extractors = builtin();
    let run = |profile: &Profile, out: &str| {
        pipeline::run(profile, &extractors, &Input::new(out), &toolset, None).decision
    };
    let default = Profile::default();
    assert_eq!(run(&default, SHAPES[0]).kind(), "execute");
    let hermes = Profile::builtin("hermes").unwrap();
    assert_eq!(run(&hermes, SHAPES[5]).kind(), "execute");
    // Not allowlisted, double-encoded, Python literals, a think-only call.
    assert_eq!(
        run(&hermes, SHAPES[16]).gate().map(|g| g.as_str()),
        Some("allowlist")
    );
    assert_eq!(
        run(&hermes, SHAPES[17]).gate().map(|g| g.as_str()),
        Some("parse")
    );
    assert_eq!(run(&hermes, SHAPES[14]).kind(), "no_call");
    let bracket = Profile {
        primary: "bracket".into(),
        fallbacks: vec![],
        ..Profile::default()
    };
    assert_eq!(
        run(&bracket, SHAPES[15]).gate().map(|g| g.as_str()),
        Some("schema")
    );
}
