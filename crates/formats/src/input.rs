//! What an extractor reads.

use std::collections::HashMap;
use toolgate_core::{Span, ToolDef, Transcript};

/// How many candidates one mode may report for one output by default (the
/// candidate cap, applied by [`crate::rules`]).
pub const DEFAULT_MAX_CANDIDATES: usize = 1_000;

/// Strict parsing ([`Strictness::Strict`]: exactly the wire format; any
/// deviation is a parse failure), or the lenient replay
/// ([`Strictness::Lenient`]) that applies the named repairs of SPEC §3 and
/// records each one used.
///
/// Opaque on purpose: the one way to learn which it is, is
/// [`Strictness::is_lenient`] (equality, hashing and `Debug` go through
/// it), and every such read is noted on the thread. So when a strict
/// extraction ran under [`reads_strictness`] without one, the lenient
/// extraction of the same input takes the same path and finds the same
/// candidates — replay skips it ([`reads_strictness`]). Extractors read it
/// where strict and lenient part ways (a repair), not up front, so that
/// output needing no repair costs one extraction.
#[derive(Clone, Copy)]
pub struct Strictness {
    lenient: bool,
}

#[allow(non_upper_case_globals)] // spelled like the enum variants they replaced
impl Strictness {
    /// Exactly the wire format; any deviation is a parse failure.
    pub const Strict: Strictness = Strictness { lenient: false };
    /// Applies the named repairs of SPEC §3 and records each one used.
    pub const Lenient: Strictness = Strictness { lenient: true };

    /// Whether this is the lenient replay. Noted as a read of the
    /// strictness ([`reads_strictness`]).
    pub fn is_lenient(self) -> bool {
        READ.with(|read| read.set(true));
        self.lenient
    }
}

impl PartialEq for Strictness {
    fn eq(&self, other: &Strictness) -> bool {
        self.is_lenient() == other.is_lenient()
    }
}

impl Eq for Strictness {}

impl std::hash::Hash for Strictness {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.is_lenient().hash(state);
    }
}

impl std::fmt::Debug for Strictness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_lenient() {
            "Lenient"
        } else {
            "Strict"
        })
    }
}

thread_local! {
    /// Set by every [`Strictness::is_lenient`] on this thread.
    static READ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` and says whether it read any [`Strictness`] on this thread.
/// Nests: an enclosing call also sees the reads of an inner one.
///
/// `false` after `f` extracted with one strictness means the extraction
/// never branched on it: extraction is deterministic string work, so with
/// the other strictness it takes the same path and returns the same
/// candidates.
pub fn reads_strictness<R>(f: impl FnOnce() -> R) -> (R, bool) {
    let before = READ.with(|read| read.replace(false));
    let out = f();
    let read = READ.with(|cell| cell.replace(before || cell.get()));
    (out, read)
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

    /// Reads the top-level `properties.*` types of each of the transcript's tools.
    pub fn from_transcript(t: &Transcript) -> ParamTypes {
        ParamTypes::from_tools(&t.tools)
    }

    /// Reads the top-level `properties.*` types of each tool's schema (see
    /// the `type` of each property, or the union over its `anyOf`/`oneOf`/`allOf`
    /// branches, following local `$ref`s).
    pub fn from_tools(defs: &[ToolDef]) -> ParamTypes {
        let mut tools = HashMap::new();
        for tool in defs {
            let mut params = HashMap::new();
            if let Some(props) = tool
                .parameters
                .as_ref()
                .and_then(|p| p.get("properties"))
                .and_then(|p| p.as_object())
            {
                for (name, schema) in props {
                    let mut types = Vec::new();
                    let mut budget = MAX_TYPE_VISITS;
                    schema_types(schema, tool.parameters.as_ref(), 0, &mut budget, &mut types);
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

/// How deep [`schema_types`] follows `anyOf`/`oneOf`/`allOf` and local `$ref`s.
const MAX_TYPE_DEPTH: usize = 8;
/// How many subschemas [`schema_types`] visits for one parameter: the depth
/// bound alone allows `k^8` visits for `k`-way `allOf`s of `$ref`s.
const MAX_TYPE_VISITS: usize = 256;

/// Collects the JSON types a parameter schema allows: its `type` (string or
/// array), the union over `anyOf`/`oneOf`/`allOf` branches (the usual
/// spelling of optional fields, `anyOf: [{type: object}, {type: null}]`),
/// following local `#/…` `$ref`s into `root`. Depth- and visit-bounded:
/// schemas are untrusted and may be cyclic or exponential.
fn schema_types(
    schema: &serde_json::Value,
    root: Option<&serde_json::Value>,
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    if depth > MAX_TYPE_DEPTH || *budget == 0 {
        return;
    }
    *budget -= 1;
    let mut push = |t: &str| {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    };
    match schema.get("type") {
        Some(Value::String(s)) => push(s),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).for_each(push),
        _ => {}
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                schema_types(branch, root, depth + 1, budget, out);
            }
        }
    }
    if let (Some(Value::String(r)), Some(root)) = (schema.get("$ref"), root)
        && let Some(pointer) = r.strip_prefix('#')
        && let Some(target) = root.pointer(pointer)
    {
        schema_types(target, Some(root), depth + 1, budget, out);
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
    /// At most this many candidates per mode for this output (see
    /// [`crate::cap::cap_candidates`]; default
    /// [`DEFAULT_MAX_CANDIDATES`]).
    pub max_candidates: usize,
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
            max_candidates: DEFAULT_MAX_CANDIDATES,
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
            max_candidates: DEFAULT_MAX_CANDIDATES,
        }
    }

    /// Whether byte `offset` of `output` lies in a reasoning span.
    pub fn in_reasoning(&self, offset: usize) -> bool {
        self.reasoning.iter().any(|s| s.contains(offset))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn types_of(parameters: serde_json::Value) -> Option<Vec<String>> {
        let t = toolgate_core::load::parse_transcript(
            r#"{"output": ""}"#,
            std::path::Path::new("t.json"),
            None,
            "t",
        )
        .unwrap();
        let t = Transcript {
            tools: std::sync::Arc::new(vec![ToolDef {
                name: "f".into(),
                description: None,
                parameters: Some(parameters),
            }]),
            ..t
        };
        ParamTypes::from_transcript(&t)
            .of("f", "p")
            .map(<[String]>::to_vec)
    }

    #[test]
    fn optional_fields_spelled_with_any_of_are_typed() {
        let got = types_of(serde_json::json!({"type": "object", "properties": {
            "p": {"anyOf": [{"type": "object"}, {"type": "null"}]}}}));
        assert_eq!(got, Some(vec!["object".to_string(), "null".to_string()]));
    }

    #[test]
    fn local_refs_are_followed_and_cycles_end() {
        let got = types_of(serde_json::json!({"type": "object",
            "$defs": {"n": {"type": "integer"}, "loop": {"$ref": "#/$defs/loop"}},
            "properties": {"p": {"oneOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/loop"}]}}}));
        assert_eq!(got, Some(vec!["integer".to_string()]));
        assert_eq!(types_of(serde_json::json!({"properties": {"p": {}}})), None);
    }

    #[test]
    fn wide_ref_fan_out_is_bounded() {
        // 64-way allOfs of $refs, 8 deep: 64^8 visits without the budget.
        let mut defs = serde_json::Map::new();
        for i in 0..8 {
            let next = serde_json::json!({"$ref": format!("#/$defs/d{}", i + 1)});
            defs.insert(
                format!("d{i}"),
                serde_json::json!({"allOf": vec![next; 64]}),
            );
        }
        defs.insert("d8".into(), serde_json::json!({"type": "string"}));
        let started = std::time::Instant::now();
        let got = types_of(serde_json::json!({"type": "object", "$defs": defs,
            "properties": {"p": {"$ref": "#/$defs/d0"}}}));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Too deep to type: untyped, read as a string.
        assert_eq!(got, None);
    }
}
