//! What an extractor reads.

use std::collections::HashMap;
use toolgate_core::{Span, Transcript};

/// Strict parsing, or the lenient replay that applies named repairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strictness {
    /// Exactly the wire format; any deviation is a parse failure.
    Strict,
    /// Applies the named repairs of SPEC §3 and records each one used.
    Lenient,
}

/// JSON types of each tool's parameters, read from the tool schemas: the
/// XML-like modes (`qwen_xml`, `glm`, …) type parameter text by them. This is
/// typing only; extraction never consults the allowlist.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamTypes {
    /// tool name → parameter name → the schema's `type` values (e.g.
    /// `["integer"]`, `["string", "null"]`). Absent: untyped (read as string).
    pub tools: HashMap<String, HashMap<String, Vec<String>>>,
}

impl ParamTypes {
    /// The declared types of `param` of `tool`, if any.
    pub fn of(&self, tool: &str, param: &str) -> Option<&[String]> {
        self.tools.get(tool)?.get(param).map(Vec::as_slice)
    }

    /// Reads the top-level `properties.*.type` of each tool's schema.
    pub fn from_transcript(t: &Transcript) -> ParamTypes {
        let mut tools = HashMap::new();
        for tool in &t.tools {
            let mut params = HashMap::new();
            if let Some(props) = tool
                .parameters
                .as_ref()
                .and_then(|p| p.get("properties"))
                .and_then(|p| p.as_object())
            {
                for (name, schema) in props {
                    let types: Vec<String> = match schema.get("type") {
                        Some(serde_json::Value::String(s)) => vec![s.clone()],
                        Some(serde_json::Value::Array(a)) => a
                            .iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect(),
                        _ => Vec::new(),
                    };
                    if !types.is_empty() {
                        params.insert(name.clone(), types);
                    }
                }
            }
            tools.insert(tool.name.clone(), params);
        }
        ParamTypes { tools }
    }
}

/// The text an extractor reads, plus what it may consult.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    /// The raw assistant output.
    pub output: &'a str,
    /// Reasoning spans of `output` (see [`crate::reasoning::spans`]).
    pub reasoning: Vec<Span>,
    /// The transcript's separate reasoning text, if any.
    pub reasoning_field: Option<&'a str>,
    /// The transcript's native `tool_calls` (only the `native` mode reads it).
    pub tool_calls: Option<&'a [serde_json::Value]>,
    /// `finish_reason == "length"`.
    pub hit_length_limit: bool,
    /// Parameter types for the XML-like modes.
    pub param_types: Option<&'a ParamTypes>,
}

impl<'a> Input<'a> {
    /// An input with only output text (reasoning spans computed from it).
    pub fn new(output: &'a str) -> Input<'a> {
        Input {
            output,
            reasoning: crate::reasoning::spans(output),
            reasoning_field: None,
            tool_calls: None,
            hit_length_limit: false,
            param_types: None,
        }
    }

    /// The input for a transcript.
    pub fn from_transcript(t: &'a Transcript, param_types: &'a ParamTypes) -> Input<'a> {
        Input {
            output: &t.output,
            reasoning: crate::reasoning::spans(&t.output),
            reasoning_field: t.reasoning.as_deref(),
            tool_calls: t.tool_calls.as_deref(),
            hit_length_limit: t.hit_length_limit(),
            param_types: Some(param_types),
        }
    }

    /// Whether byte `offset` of `output` lies in a reasoning span.
    pub fn in_reasoning(&self, offset: usize) -> bool {
        self.reasoning.iter().any(|s| s.contains(offset))
    }
}
