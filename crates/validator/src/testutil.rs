//! Hand-built candidates and tools for unit tests.
#![allow(clippy::unwrap_used, dead_code)]

use crate::engine::Engine;
use crate::profile::Profile;
use serde_json::{Value, json};
use toolgate_core::{
    Candidate, Expectation, ExpectedCall, FailureKind, ParseFailure, Repair, Source, Span, ToolDef,
    Transcript,
};
use toolgate_formats::Extractor;

/// A parsed live candidate `name(args)` of `mode` at byte 0.
pub fn ok(mode: &str, name: &str, args: Value) -> Candidate {
    let raw = json!({"name": name, "arguments": args}).to_string();
    Candidate {
        mode: mode.to_string().into(),
        source: Source::Output,
        span: Span::new(0, raw.len()),
        raw,
        name: Some(name.into()),
        arguments: Ok(std::sync::Arc::new(
            args.as_object().cloned().unwrap_or_default(),
        )),
        repairs: Vec::new(),
    }
}

/// A live candidate of `mode` that failed to parse.
pub fn failed(mode: &str, name: Option<&str>, kind: FailureKind, message: &str) -> Candidate {
    Candidate {
        mode: mode.to_string().into(),
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

/// A test extractor that returns fixed candidates whatever the input (the
/// lenient variant returns `lenient` when set).
pub struct Fixed {
    /// The mode name.
    pub name: String,
    /// Strict candidates.
    pub strict: Vec<Candidate>,
    /// Lenient candidates (defaults to the strict ones).
    pub lenient: Option<Vec<Candidate>>,
}

impl Fixed {
    /// A boxed extractor `name` returning `cands`.
    pub fn boxed(name: &str, cands: Vec<Candidate>) -> Box<dyn toolgate_formats::Extractor> {
        Box::new(Fixed {
            name: name.into(),
            strict: cands,
            lenient: None,
        })
    }
}

impl toolgate_formats::Extractor for Fixed {
    fn name(&self) -> &str {
        &self.name
    }
    fn example(&self) -> &str {
        if self.name == "tag" {
            "<tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>"
        } else {
            "example"
        }
    }
    fn describe(&self) -> &str {
        "fixed candidates for tests"
    }
    fn extract(
        &self,
        _input: &toolgate_formats::Input<'_>,
        strictness: toolgate_formats::Strictness,
    ) -> Vec<Candidate> {
        match &self.lenient {
            Some(l) if strictness.is_lenient() => l.clone(),
            _ => self.strict.clone(),
        }
    }
}

/// A weather transcript (a `json` call with intent, expecting `get_weather`)
/// with the fields of `extra` set over it.
pub fn transcript(extra: serde_json::Value) -> Transcript {
    let mut obj = json!({
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
        }}}],
        "output": "need_tool: yes\n{\"tool\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}",
        "expect": {"calls": [{"name": "get_weather"}]}
    });
    for (k, v) in extra.as_object().unwrap() {
        obj[k] = v.clone();
    }
    toolgate_core::load::parse_transcript(
        &obj.to_string(),
        std::path::Path::new("t.json"),
        None,
        "t",
    )
    .unwrap()
}

/// An engine over `extractors` with the default profile.
pub fn engine(extractors: Vec<Box<dyn Extractor>>) -> Engine {
    Engine::with_extractors(extractors, Profile::default()).unwrap()
}

/// The default profile's modes as fixed extractors: `tag` and `json`
/// find what is given, `bracket` and `native` nothing.
pub fn seed_modes(tag: Vec<Candidate>, json_: Vec<Candidate>) -> Vec<Box<dyn Extractor>> {
    vec![
        Fixed::boxed("tag", tag),
        Fixed::boxed("json", json_),
        Fixed::boxed("bracket", vec![]),
        Fixed::boxed("native", vec![]),
    ]
}
