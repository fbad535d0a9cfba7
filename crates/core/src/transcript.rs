use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A tool definition: the allowlist entry and its JSON Schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    /// The tool name (the allowlist key).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The `parameters` JSON Schema as written; `None` when the definition has
    /// none (the validator then treats the tool as taking no arguments).
    pub parameters: Option<Value>,
}

/// One call a correct answer makes.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectedCall {
    /// The expected tool.
    pub name: String,
    /// A JSON Schema checked on top of the tool's own schema.
    pub arguments: Option<Value>,
}

/// What a correct answer does (`expect`, SPEC §2).
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// Exactly these calls, in any order; empty means "calls no tool".
    pub calls: Vec<ExpectedCall>,
}

/// A native tool call as the server returned it (OpenAI shape), kept raw so
/// that the `native` mode can report exactly what is wrong with it.
pub type NativeCall = Value;

/// One captured model interaction (SPEC §2), normalized from either the flat
/// form or the `request`/`response` form.
#[derive(Clone, Debug, PartialEq)]
pub struct Transcript {
    /// The file it came from.
    pub path: PathBuf,
    /// 1-based line for `.jsonl` files, `None` for `.json`.
    pub line: Option<usize>,
    /// `id`, or the file stem (`stem:LINE` for JSONL lines).
    pub id: String,
    /// The model that produced it.
    pub model: Option<String>,
    /// The task it answered.
    pub task: Option<String>,
    /// Which of k samples.
    pub sample: Option<i64>,
    /// Tool definitions (the allowlist), in file order; shared between the
    /// transcripts of a batch that carry the same tool list byte for byte
    /// (see [`crate::load::parse_transcript`]).
    pub tools: std::sync::Arc<Vec<ToolDef>>,
    /// Whether the tool list is known (SPEC §2, §4 "tools unknown"): `false`
    /// when the transcript has no `tools` member (a flat transcript) or no
    /// `request` (the `request`/`response` form) — the capture did not hold
    /// the request's tool list. `tools` is then empty, but it is not an
    /// empty allowlist: labels are decided without tool definitions, the
    /// finding `tools_unknown` is reported and nothing executes.
    /// `tools: []` (and `tools: null`) is a known, empty list.
    pub tools_known: bool,
    /// Tool definitions that could not be read (each makes nothing callable).
    pub tool_problems: Vec<String>,
    /// The raw assistant text: what is parsed.
    pub output: String,
    /// Separate reasoning text.
    pub reasoning: Option<String>,
    /// Native tool calls; `Some` whenever the key is present (even `[]`).
    /// When loaded from text, an `arguments` given as a JSON object is kept
    /// as its exact text (a string), so that the `native` mode reads it with
    /// the JSON reader's rules (duplicate keys, rounding numbers).
    pub tool_calls: Option<Vec<NativeCall>>,
    /// `stop`, `length`, `tool_calls`, …
    pub finish_reason: Option<String>,
    /// Streamed deltas.
    pub chunks: Option<Vec<String>>,
    /// What a correct answer does.
    pub expect: Option<Expectation>,
    /// Labels stored by an earlier `label --write`: mode → label name (kept as
    /// text: a stored name may predate the current taxonomy).
    pub stored_labels: Option<BTreeMap<String, String>>,
    /// Non-fatal oddities noticed while loading (e.g. chunks ≠ output).
    pub warnings: Vec<String>,
    /// The whole JSON object as read, unknown fields included — except a
    /// top-level `tools` member, which is read into [`Transcript::tools`]
    /// and not kept here (a batch's tool lists are mostly one list repeated;
    /// nothing reads the raw copy). Imported captures and
    /// [`crate::load::load_kind_whole`] (what `toolgate import` writes back)
    /// keep it here too.
    pub raw: Map<String, Value>,
}

impl Transcript {
    /// Whether `finish_reason` is `length` (evidence of truncation).
    pub fn hit_length_limit(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }

    /// Whether the tool list is unknown (no `tools` member, no `request`):
    /// see [`Transcript::tools_known`].
    pub fn tools_unknown(&self) -> bool {
        !self.tools_known
    }

    /// The tool definition with this name.
    pub fn tool(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// A short location for messages: `path` or `path:LINE`.
    pub fn location(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{}", self.path.display(), line),
            None => self.path.display().to_string(),
        }
    }
}
