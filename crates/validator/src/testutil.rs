//! Hand-built candidates and tools for unit tests.
#![allow(clippy::unwrap_used, dead_code)]

use serde_json::{Value, json};
use toolgate_core::{
    Candidate, Expectation, ExpectedCall, FailureKind, ParseFailure, Repair, Source, Span, ToolDef,
};

/// A parsed live candidate `name(args)` of `mode` at byte 0.
pub fn ok(mode: &str, name: &str, args: Value) -> Candidate {
    let raw = json!({"name": name, "arguments": args}).to_string();
    Candidate {
        mode: mode.into(),
        source: Source::Output,
        span: Span::new(0, raw.len()),
        raw,
        name: Some(name.into()),
        arguments: Ok(args.as_object().cloned().unwrap_or_default()),
        repairs: Vec::new(),
    }
}

/// A live candidate of `mode` that failed to parse.
pub fn failed(mode: &str, name: Option<&str>, kind: FailureKind, message: &str) -> Candidate {
    Candidate {
        mode: mode.into(),
        source: Source::Output,
        span: Span::new(0, 10),
        raw: "{\"broken\"".into(),
        name: name.map(str::to_string),
        arguments: Err(ParseFailure::new(kind, message, 3)),
        repairs: Vec::new(),
    }
}

/// `c` moved into the output's reasoning.
pub fn in_reasoning(mut c: Candidate) -> Candidate {
    c.source = Source::OutputReasoning;
    c
}

/// `c` with repairs recorded.
pub fn repaired(mut c: Candidate, repairs: &[Repair]) -> Candidate {
    c.repairs = repairs.to_vec();
    c
}

/// A tool definition.
pub fn tool(name: &str, params: Value) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: None,
        parameters: Some(params),
    }
}

/// `get_weather(city: string required, days: integer)` and
/// `search_web(query: string required)`.
pub fn weather_tools() -> Vec<ToolDef> {
    vec![
        tool(
            "get_weather",
            json!({
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
                "required": ["city"]
            }),
        ),
        tool(
            "search_web",
            json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        ),
    ]
}

/// An expectation of these calls (name, optional arguments schema).
pub fn expect(calls: &[(&str, Option<Value>)]) -> Expectation {
    Expectation {
        calls: calls
            .iter()
            .map(|(n, a)| ExpectedCall {
                name: (*n).into(),
                arguments: a.clone(),
            })
            .collect(),
    }
}
