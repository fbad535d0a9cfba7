use crate::import::ImportInfo;
use serde_json::{Map, Value};
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
    /// The request set `parallel_tool_calls: false`: at most one call may
    /// execute, and an output of more is rejected whole at the `single`
    /// gate, as the proxy rejects it. Read from the transcript's
    /// `parallel_tool_calls` member, else its `request`'s (the
    /// `request`/`response` form, a proxy recording); absent, `true` or
    /// `null`: no limit ([`crate::choice::one_call_at_most`]).
    pub one_call: bool,
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
    /// Labels stored by an earlier `label --write` (the `labels` member when
    /// it is an object): mode → label name, kept as text (a stored name may
    /// predate the current taxonomy).
    pub stored_labels: Option<StoredLabels>,
    /// Whether the object has a `labels` member at all, `null` included
    /// (`labels: null` stores nothing: `label` counts it unlabeled, as an
    /// absent member).
    pub labels_member: bool,
    /// Where an imported transcript came from (its `import` member), `None`
    /// for a transcript that was not imported.
    pub origin: Option<ImportInfo>,
    /// Whether it was converted on load from a capture in another format
    /// (a provider's file: stream, Batch output, OTel export, …), rather
    /// than read from toolgate's own transcript format — `toolgate import`'s
    /// output included, which has an `origin` too. `label --write` stores
    /// labels only in toolgate's format (and in a chat pair).
    pub converted: bool,
    /// How a `toolgate proxy` recording's exchange went (its `proxy`
    /// member), `None` for anything else.
    pub proxy: Option<ProxyInfo>,
    /// Non-fatal oddities noticed while loading (e.g. chunks ≠ output).
    pub warnings: Vec<String>,
    /// The whole JSON object as read, unknown fields included — except a
    /// top-level `tools` member, which is read into [`Transcript::tools`]
    /// and not kept here (a batch's tool lists are mostly one list repeated;
    /// nothing reads the raw copy). Imported captures and
    /// [`crate::load::load_kind_whole`] (what `toolgate import` writes back)
    /// keep it here too.
    ///
    /// `raw` carries the members through rewrites (`toolgate import` writes
    /// it out); readers use the typed fields and the accessors below
    /// ([`Transcript::prompt`], [`Transcript::request`],
    /// [`Transcript::messages`], [`Transcript::tags`]), never a key of their own.
    pub raw: Map<String, Value>,
}

/// The stored `labels` of a transcript: mode → label name, in the order of
/// the file (which `label --write` keeps: modes only the file knows stay
/// after the rest). A mode appears once (the keys of a JSON object).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredLabels(Vec<(String, String)>);

impl StoredLabels {
    /// The stored labels of a `labels` object, in its order; every value
    /// must be a string (a label name).
    pub fn from_map(labels: &Map<String, Value>) -> Result<StoredLabels, String> {
        labels
            .iter()
            .map(|(mode, label)| match label {
                Value::String(l) => Ok((mode.clone(), l.clone())),
                _ => Err("`labels` values must be strings".to_string()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(StoredLabels)
    }

    /// The stored label of a mode.
    pub fn get(&self, mode: &str) -> Option<&String> {
        self.0.iter().find(|(m, _)| m == mode).map(|(_, l)| l)
    }

    /// Whether a label is stored for this mode.
    pub fn contains_key(&self, mode: &str) -> bool {
        self.get(mode).is_some()
    }

    /// How many modes are stored.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(mode, label)` in the order of the file: what relabeling and the
    /// `stored` member of a label record follow.
    pub fn in_file_order(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(m, l)| (m, l))
    }

    /// `(mode, label)` sorted by mode name: the inspector's listing.
    pub fn iter(&self) -> std::vec::IntoIter<(&String, &String)> {
        let mut sorted: Vec<(&String, &String)> = self.in_file_order().collect();
        sorted.sort();
        sorted.into_iter()
    }
}

impl<'a> IntoIterator for &'a StoredLabels {
    type Item = (&'a String, &'a String);
    type IntoIter = std::vec::IntoIter<(&'a String, &'a String)>;

    /// As [`StoredLabels::iter`]: sorted by mode name.
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// What a `toolgate proxy` recording says about its exchange (the `proxy`
/// member, read once by the loader): only what decides whether the
/// recording holds a model answer at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyInfo {
    /// `proxy.client_disconnected`: the client went away mid-answer.
    pub client_disconnected: bool,
    /// `proxy.error`, when a non-empty string: the upstream attempt failed.
    pub error: Option<String>,
}

impl ProxyInfo {
    /// The typed form of a `proxy` member; `None` when it is not an object.
    pub fn read(member: &Value) -> Option<ProxyInfo> {
        let m = member.as_object()?;
        Some(ProxyInfo {
            client_disconnected: m.get("client_disconnected") == Some(&Value::Bool(true)),
            error: m
                .get("error")
                .and_then(Value::as_str)
                .filter(|e| !e.is_empty())
                .map(str::to_string),
        })
    }
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

    /// Whether the transcript still holds the model's raw text: `false` for
    /// post-parse imports (see [`ImportInfo::raw_text`]).
    pub fn has_raw_text(&self) -> bool {
        self.origin.as_ref().is_none_or(|o| o.raw_text)
    }

    /// The `prompt` member, when it is a string (BFCL and hand-written
    /// transcripts name the question so).
    pub fn prompt(&self) -> Option<&str> {
        self.raw.get("prompt").and_then(Value::as_str)
    }

    /// The request of the `request`/`response` form (or an import's pair),
    /// as written.
    pub fn request(&self) -> Option<&Value> {
        self.raw.get("request")
    }

    /// The conversation sent: a top-level `messages` member, else the
    /// request's `messages`.
    pub fn messages(&self) -> Option<&Value> {
        self.raw
            .get("messages")
            .or_else(|| self.request().and_then(|r| r.get("messages")))
    }

    /// The string items of the `tags` member, in file order (none when it is
    /// absent or not an array).
    pub fn tags(&self) -> impl Iterator<Item = &str> {
        self.raw
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }

    /// A short location for messages: `path` or `path:LINE`.
    pub fn location(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{}", self.path.display(), line),
            None => self.path.display().to_string(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::import::NoteKind;
    use std::path::Path;

    fn read(text: &str) -> super::Transcript {
        crate::load::parse_transcript(text, Path::new("t.json"), None, "t").unwrap()
    }

    #[test]
    fn the_typed_members_are_read_once_by_the_loader() {
        let t = read(
            r#"{"output": "", "labels": {"json": "pass", "hermes": "no_call", "a": "pass"},
                "import": {"from": "openai-responses", "raw_text": false, "forced_tool": true,
                           "notes": [{"kind": "items_skipped", "detail": "web_search_call"},
                                     {"kind": "not_a_kind", "detail": "x"}]},
                "proxy": {"client_disconnected": false, "error": "timeout"},
                "prompt": "What is the weather?", "tags": ["a", 3, "b"],
                "request": {"messages": [{"role": "user", "content": "hi"}]}}"#,
        );
        let stored = t.stored_labels.as_ref().unwrap();
        let in_file: Vec<&str> = stored.in_file_order().map(|(m, _)| m.as_str()).collect();
        assert_eq!(in_file, ["json", "hermes", "a"]);
        let sorted: Vec<&str> = stored.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(sorted, ["a", "hermes", "json"]);
        assert_eq!(stored.get("hermes").map(String::as_str), Some("no_call"));
        assert!(t.labels_member);
        let origin = t.origin.as_ref().unwrap();
        assert_eq!(origin.from.as_deref(), Some("openai-responses"));
        assert!(!origin.raw_text && !t.has_raw_text());
        assert!(origin.forced_tool && !origin.finish_reason_derived);
        assert_eq!(
            origin.notes,
            [(NoteKind::ItemsSkipped, "web_search_call".to_string())]
        );
        assert_eq!(origin.note(NoteKind::ItemsSkipped), Some("web_search_call"));
        let proxy = t.proxy.as_ref().unwrap();
        assert!(!proxy.client_disconnected);
        assert_eq!(proxy.error.as_deref(), Some("timeout"));
        assert_eq!(t.prompt(), Some("What is the weather?"));
        assert_eq!(t.tags().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(t.messages().unwrap()[0]["content"], "hi");
        // The members stay in `raw`, for rewrites.
        assert_eq!(t.raw["import"]["from"], "openai-responses");
    }

    #[test]
    fn absent_or_odd_members_read_as_nothing() {
        let t = read(r#"{"output": "x", "labels": null, "import": "yes", "proxy": {"error": ""}}"#);
        assert!(t.stored_labels.is_none() && t.labels_member);
        assert!(t.origin.is_none() && t.has_raw_text());
        assert_eq!(t.proxy, Some(super::ProxyInfo::default()));
        let t = read(r#"{"output": "x", "import": {}}"#);
        assert!(!t.labels_member);
        assert!(t.origin.as_ref().unwrap().raw_text && t.has_raw_text());
        assert!(t.prompt().is_none() && t.request().is_none() && t.tags().next().is_none());
        let bad = crate::load::parse_transcript(
            r#"{"output": "x", "labels": {"json": 1}}"#,
            Path::new("t.json"),
            None,
            "t",
        );
        assert_eq!(bad.unwrap_err().reason, "`labels` values must be strings");
    }
}
