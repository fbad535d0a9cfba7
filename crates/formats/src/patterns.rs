//! Custom parse modes from a patterns file (seed 003, SPEC §3).
//!
//! A patterns file is TOML with one `[[pattern]]` table per custom mode. Each
//! enabled pattern becomes an [`Extractor`] whose mode name is the pattern's
//! name; [`extractors`] returns them highest `priority` first (ties keep file
//! order). Replay runs every pattern as a mode of its own, so the priority is
//! the order of the modes, not "first match wins" as in seed 003's proxy.
//!
//! # File format
//!
//! ```toml
//! [[pattern]]
//! name = "execute_bracket"          # the mode name; [A-Za-z0-9_.-], unique
//! type = "bracket"                  # fence | inline | xml | bracket | action
//! regex = '\[EXECUTE:(\w+):([^\]]+)\]'
//! priority = 95                     # higher first; default 0
//! enabled = true                    # default true
//! tool_name_group = 1               # exactly one of tool_name,
//!                                   #   tool_name_group, tool_name_json_path
//! tool_name_mapping = { EXECUTE = "bash" }
//! parameter_mapping = { "2" = "command" }
//! example = "[EXECUTE:bash:ls -la /tmp]"   # optional; must match the regex
//! ```
//!
//! | field | meaning |
//! |---|---|
//! | `name` | the mode name (must not repeat within the file) |
//! | `type` | the seed's pattern type; descriptive only |
//! | `regex` | a [`regex`] crate regex (`(?s)` makes `.` match newlines, the seed's DOTALL); compiled with a size limit of [`REGEX_SIZE_LIMIT`] bytes |
//! | `priority` | integer, higher first |
//! | `enabled` | a disabled pattern loads (and is checked) but is no mode |
//! | `tool_name` | a static tool name |
//! | `tool_name_group` | the 1-based capture group holding the tool name |
//! | `tool_name_json_path` | a dotted path (`name`, `function.name`, `calls.0.name`) into the JSON payload |
//! | `arguments_group` | the 1-based capture group holding the payload (see below) |
//! | `arguments_format` | `json` (default) or `xml_parameters` (see below) |
//! | `tool_name_mapping` | table: tool name as written → tool name |
//! | `parameter_mapping` | table: argument name → argument name, or capture-group number (`"2"`) → argument name |
//! | `example` | an output the pattern matches; shown by `toolgate formats` |
//! | `description` | a one-line description |
//!
//! # How a match becomes a candidate
//!
//! - **The payload** is the text of `arguments_group`. Without it, the payload
//!   is the highest-numbered capture group that is neither `tool_name_group`
//!   nor a group named in `parameter_mapping`; when there is no such group
//!   (or it did not take part in the match) there is no payload and the
//!   arguments start empty.
//! - **`arguments_format = "json"`**: with `tool_name_json_path` the payload is
//!   a JSON call object: the name is the string at the path, and the object
//!   holding that name is read whole by the SPEC §9 key rules
//!   (`arguments` / `parameters` / `params`, ambiguity is `malformed`, no
//!   argument key is `{}`, two name keys or an unknown key is `malformed`;
//!   a last path segment other than `name`/`tool`/`tool_name` is read as
//!   `name`). Beside an object key on the path only `id`, `type` and `index`
//!   may stand. Through a list (`calls.0.name`) the named element must be a
//!   call, and every element is read by the rest of the path: a list is one
//!   payload, so one that is not a call is `malformed`, as in every JSON-call
//!   mode. A payload that reads as JSON but has no string at
//!   the path is not a call (no candidate, as for the `json` mode); a payload
//!   that does not read is a candidate with its parse failure. With
//!   `tool_name` or `tool_name_group` the payload is the arguments object
//!   itself.
//! - **`arguments_format = "xml_parameters"`**: the payload holds
//!   `<parameter=key>value</parameter>` elements (Qwen3-Coder style); values
//!   are strings, read as JSON only when the tool's schema types the parameter
//!   otherwise (SPEC §9, XML-like modes).
//! - **`tool_name_mapping`** renames the tool (exact match; other names stay).
//! - **`parameter_mapping`** renames top-level argument keys; a key that is a
//!   capture-group number adds that group's text as a string argument under
//!   the mapped name (`{"2" = "command"}` turns `[EXECUTE:bash:ls -la /tmp]`
//!   into `{"name": "bash", "arguments": {"command": "ls -la /tmp"}}`). If
//!   two arguments end up with the same name the candidate is `malformed`.
//!
//! Mappings only rename. Nothing ever fills a missing argument: a group that
//! did not take part in the match adds nothing, and there are no defaults.
//! This deliberately differs from seed 003's proxy, which after extraction
//! fills a `bash` call's required `command` and `description` and moves text
//! from `filePath`/`query`/`path` into `command` — the "ghost successes" of
//! seed 000 that SPEC §1 forbids. A call missing a required argument is
//! labeled `missing_required`.
//!
//! Matches inside reasoning spans and in the transcript's `reasoning` field
//! are reported with a reasoning [`Source`]. A regex needs its closing
//! delimiter to match, so an output cut off inside a call is simply not
//! matched (the built-in modes report such output as `truncated`). The
//! `regex` crate runs without backtracking; each search is linear in what it
//! reads, and reads at most [`PATTERN_WINDOW`] bytes (a match up to half of
//! it is always found); after [`MAX_PATTERN_MATCHES`] matches in one text the
//! rest is not read and a `malformed` candidate says so. A regex such as
//! `[a-z]*X|a{1000}`, whose every search would scan to the end of the output,
//! therefore costs at most about 128 MiB of regex work per text.
//!
//! # Errors
//!
//! [`load_patterns`] rejects the whole file at the first bad entry with a
//! [`PatternError`] naming the entry and the reason: not TOML, an unknown
//! field, an invalid or too large regex, no or several tool-name sources, a
//! capture group out of range, a bad JSON path, a duplicate name, a
//! built-in mode's name, or an example the regex does not match.
//!
//! ```
//! use toolgate_formats::{Catalog, Input, Strictness};
//! let file = r#"
//! [[pattern]]
//! name = "execute_bracket"
//! type = "bracket"
//! regex = '\[EXECUTE:(\w+):([^\]]+)\]'
//! priority = 95
//! tool_name_group = 1
//! tool_name_mapping = { EXECUTE = "bash" }
//! parameter_mapping = { "2" = "command" }
//! "#;
//! let mut catalog = Catalog::new();
//! catalog.add_patterns(file).unwrap();
//! let modes = catalog.into_custom();
//! let found = modes[0].extract(&Input::new("[EXECUTE:bash:ls -la /tmp]"), Strictness::Strict);
//! let call = found[0].call().unwrap();
//! assert_eq!(call.to_json(), serde_json::json!({"name": "bash", "arguments": {"command": "ls -la /tmp"}}));
//! ```

use std::collections::BTreeMap;
use std::fmt;

use regex::{Captures, Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{Map, Value};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Repair, Source, Span};

use crate::callobj::{self, CallObj};
use crate::declared::Names;
use crate::families::jsonlike::json_array::{self, CallList, MissingName};
use crate::{Extractor, Input, Strictness, jsonread};

/// The largest compiled regex accepted, in bytes (`RegexBuilder::size_limit`).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The seed's pattern types. Descriptive only: the regex decides what matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatternType {
    /// A fenced code block.
    Fence,
    /// Inline JSON.
    Inline,
    /// XML-like tags.
    Xml,
    /// Bracket-enclosed markup.
    Bracket,
    /// An action description such as `[searching for files]`.
    Action,
}

impl PatternType {
    fn as_str(self) -> &'static str {
        match self {
            PatternType::Fence => "fence",
            PatternType::Inline => "inline",
            PatternType::Xml => "xml",
            PatternType::Bracket => "bracket",
            PatternType::Action => "action",
        }
    }
}

/// How the payload holds the arguments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentsFormat {
    /// JSON (a call object with `tool_name_json_path`, else the arguments object).
    #[default]
    Json,
    /// `<parameter=key>value</parameter>` elements.
    XmlParameters,
}

/// Where the tool name comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameSource {
    /// A fixed name (`tool_name`).
    Static(String),
    /// A 1-based capture group (`tool_name_group`).
    Group(usize),
    /// A dotted path into the JSON payload (`tool_name_json_path`).
    JsonPath(Vec<String>),
}

/// A loaded, checked pattern. It is an [`Extractor`] whose mode name is
/// the pattern's name.
#[derive(Clone, Debug)]
pub struct Pattern {
    name: String,
    regex: Regex,
    priority: i64,
    enabled: bool,
    tool_name: NameSource,
    payload_group: Option<usize>,
    format: ArgumentsFormat,
    tool_name_mapping: BTreeMap<String, String>,
    /// Argument name → new name.
    rename: BTreeMap<String, String>,
    /// (capture group, argument name), by group number.
    group_params: Vec<(usize, String)>,
    example: String,
    describe: String,
}

impl Pattern {
    /// The pattern's (mode) name.
    #[cfg(test)]
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Whether the pattern is a mode.
    #[cfg(test)]
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

/// Why a patterns file was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError {
    /// The entry's name, or `#N` (1-based) when it has none.
    pub pattern: Option<String>,
    /// What is wrong.
    pub kind: PatternErrorKind,
}

/// The reasons a pattern is rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternErrorKind {
    /// The file is not TOML, or an entry has the wrong shape (unknown field,
    /// wrong type, missing `name`/`type`/`regex`); the TOML reader's message.
    Toml(String),
    /// The name is empty or has characters other than `[A-Za-z0-9_.-]`.
    InvalidName,
    /// Two entries have this name.
    DuplicateName,
    /// The name is a built-in mode's (labels and diffs are keyed by mode name).
    ReservedName,
    /// The regex does not compile.
    InvalidRegex(String),
    /// The compiled regex exceeds [`REGEX_SIZE_LIMIT`].
    RegexTooLarge,
    /// None, or more than one, of `tool_name` / `tool_name_group` /
    /// `tool_name_json_path`.
    ToolNameSource(String),
    /// A capture group number that the regex does not have.
    GroupOutOfRange {
        /// The field naming it.
        field: String,
        /// The number given.
        group: i64,
        /// The regex's capture groups (not counting group 0).
        groups: usize,
    },
    /// An empty JSON path or path segment.
    BadJsonPath(String),
    /// A mapping entry with an empty name.
    BadMapping(String),
    /// `example` is given and the regex does not match it.
    ExampleDoesNotMatch,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.pattern {
            write!(f, "pattern `{p}`: ")?;
        }
        match &self.kind {
            PatternErrorKind::Toml(m) => write!(f, "{m}"),
            PatternErrorKind::InvalidName => {
                f.write_str("the name must be non-empty and use only A-Z a-z 0-9 _ . -")
            }
            PatternErrorKind::DuplicateName => f.write_str("another pattern has the same name"),
            PatternErrorKind::ReservedName => f.write_str("the name is a built-in mode's name"),
            PatternErrorKind::InvalidRegex(m) => write!(f, "invalid regex: {m}"),
            PatternErrorKind::RegexTooLarge => write!(
                f,
                "the regex is too large (compiled size above {REGEX_SIZE_LIMIT} bytes)"
            ),
            PatternErrorKind::ToolNameSource(m) => write!(f, "{m}"),
            PatternErrorKind::GroupOutOfRange {
                field,
                group,
                groups,
            } => write!(
                f,
                "`{field}` names capture group {group}, but the regex has {groups} (numbered from 1)"
            ),
            PatternErrorKind::BadJsonPath(m) => write!(f, "bad `tool_name_json_path`: {m}"),
            PatternErrorKind::BadMapping(m) => write!(f, "bad mapping: {m}"),
            PatternErrorKind::ExampleDoesNotMatch => {
                f.write_str("the regex does not match the pattern's own `example`")
            }
        }
    }
}

impl std::error::Error for PatternError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    pattern: Vec<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPattern {
    name: String,
    #[serde(rename = "type")]
    kind: PatternType,
    regex: String,
    #[serde(default)]
    priority: i64,
    #[serde(default = "default_true")]
    enabled: bool,
    tool_name: Option<String>,
    tool_name_group: Option<i64>,
    tool_name_json_path: Option<String>,
    arguments_group: Option<i64>,
    #[serde(default)]
    arguments_format: ArgumentsFormat,
    #[serde(default)]
    tool_name_mapping: BTreeMap<String, String>,
    #[serde(default)]
    parameter_mapping: BTreeMap<String, String>,
    example: Option<String>,
    description: Option<String>,
}

fn default_true() -> bool {
    true
}

/// Loads and checks a patterns file (see the module docs). Disabled patterns
/// are loaded and checked too; [`extractors`] leaves them out.
pub fn load_patterns(text: &str) -> Result<Vec<Pattern>, PatternError> {
    let file: RawFile = toml::from_str(text).map_err(|e| PatternError {
        pattern: None,
        kind: PatternErrorKind::Toml(e.message().to_string()),
    })?;
    let mut names = Names::new();
    let mut out = Vec::with_capacity(file.pattern.len());
    for (i, table) in file.pattern.into_iter().enumerate() {
        let label = Names::label(&table, i);
        let err = |kind| PatternError {
            pattern: Some(label.clone()),
            kind,
        };
        let raw: RawPattern = table
            .try_into()
            .map_err(|e: toml::de::Error| err(PatternErrorKind::Toml(e.message().to_string())))?;
        let pattern = check(raw).map_err(err)?;
        if names.is_builtin(&pattern.name) {
            return Err(err(PatternErrorKind::ReservedName));
        }
        if !names.first(&pattern.name) {
            return Err(err(PatternErrorKind::DuplicateName));
        }
        out.push(pattern);
    }
    Ok(out)
}

fn group_in_range(field: &str, group: i64, groups: usize) -> Result<usize, PatternErrorKind> {
    match usize::try_from(group) {
        Ok(g) if g >= 1 && g <= groups => Ok(g),
        _ => Err(PatternErrorKind::GroupOutOfRange {
            field: field.to_string(),
            group,
            groups,
        }),
    }
}

fn check(raw: RawPattern) -> Result<Pattern, PatternErrorKind> {
    if !Names::valid(&raw.name) {
        return Err(PatternErrorKind::InvalidName);
    }
    let regex = RegexBuilder::new(&raw.regex)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => PatternErrorKind::RegexTooLarge,
            other => PatternErrorKind::InvalidRegex(other.to_string()),
        })?;
    // Group 0 is the whole match; the seed numbers groups from 1.
    let groups = regex.captures_len().saturating_sub(1);

    let sources = [
        raw.tool_name.is_some(),
        raw.tool_name_group.is_some(),
        raw.tool_name_json_path.is_some(),
    ];
    let tool_name = match sources.iter().filter(|s| **s).count() {
        0 => {
            return Err(PatternErrorKind::ToolNameSource(
                "no tool name source: give one of `tool_name`, `tool_name_group`, `tool_name_json_path`"
                    .into(),
            ));
        }
        1 => {
            if let Some(name) = raw.tool_name {
                if name.is_empty() {
                    return Err(PatternErrorKind::ToolNameSource(
                        "`tool_name` is empty".into(),
                    ));
                }
                NameSource::Static(name)
            } else if let Some(g) = raw.tool_name_group {
                NameSource::Group(group_in_range("tool_name_group", g, groups)?)
            } else {
                let path = raw.tool_name_json_path.unwrap_or_default();
                let segments: Vec<String> = path.split('.').map(str::to_string).collect();
                if segments.iter().any(String::is_empty) {
                    return Err(PatternErrorKind::BadJsonPath(format!(
                        "`{path}` has an empty segment"
                    )));
                }
                NameSource::JsonPath(segments)
            }
        }
        _ => {
            return Err(PatternErrorKind::ToolNameSource(
                "more than one tool name source: give exactly one of `tool_name`, `tool_name_group`, `tool_name_json_path`"
                    .into(),
            ));
        }
    };

    let mut rename = BTreeMap::new();
    let mut group_params = Vec::new();
    for (from, to) in raw.parameter_mapping {
        if to.is_empty() || from.is_empty() {
            return Err(PatternErrorKind::BadMapping(format!(
                "parameter_mapping `{from}` → `{to}` has an empty name"
            )));
        }
        if !from.is_empty() && from.bytes().all(|b| b.is_ascii_digit()) {
            let g = from.parse::<i64>().unwrap_or(i64::MAX);
            let g = group_in_range(&format!("parameter_mapping.\"{from}\""), g, groups)?;
            group_params.push((g, to));
        } else {
            rename.insert(from, to);
        }
    }
    group_params.sort();
    for (from, to) in &raw.tool_name_mapping {
        if from.is_empty() || to.is_empty() {
            return Err(PatternErrorKind::BadMapping(format!(
                "tool_name_mapping `{from}` → `{to}` has an empty name"
            )));
        }
    }

    let payload_group = match raw.arguments_group {
        Some(g) => Some(group_in_range("arguments_group", g, groups)?),
        None => {
            let name_group = match tool_name {
                NameSource::Group(g) => Some(g),
                _ => None,
            };
            (1..=groups)
                .rev()
                .find(|g| Some(*g) != name_group && !group_params.iter().any(|(p, _)| p == g))
        }
    };

    if let Some(example) = &raw.example
        && !regex.is_match(example)
    {
        return Err(PatternErrorKind::ExampleDoesNotMatch);
    }
    let describe = raw.description.unwrap_or_else(|| {
        format!(
            "custom {} pattern: {}",
            raw.kind.as_str(),
            raw.regex.replace(['\n', '\r'], " ")
        )
    });
    Ok(Pattern {
        name: raw.name,
        regex,
        priority: raw.priority,
        enabled: raw.enabled,
        tool_name,
        payload_group,
        format: raw.arguments_format,
        tool_name_mapping: raw.tool_name_mapping,
        rename,
        group_params,
        example: raw.example.unwrap_or_default(),
        describe,
    })
}

/// The enabled patterns as extractors, highest priority first (a stable sort:
/// ties keep file order).
pub fn extractors(patterns: Vec<Pattern>) -> Vec<Box<dyn Extractor>> {
    let mut enabled: Vec<Pattern> = patterns.into_iter().filter(|p| p.enabled).collect();
    enabled.sort_by_key(|p| std::cmp::Reverse(p.priority));
    enabled
        .into_iter()
        .map(|p| Box::new(p) as Box<dyn Extractor>)
        .collect()
}

impl Extractor for Pattern {
    fn name(&self) -> &str {
        &self.name
    }

    fn example(&self) -> &str {
        &self.example
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        crate::util::scan_texts(input, |text| self.bounded_matches(text, strictness, input))
    }
}

/// How far past its start one search of a custom pattern may look, in bytes:
/// a match up to half of this is always found. Bounds the work of regexes
/// such as `[a-z]*X|a{1000}`, whose every search would otherwise scan to the
/// end of the output (quadratic over many matches).
pub const PATTERN_WINDOW: usize = 128 * 1024;
/// Most matches of one custom pattern read in one text (output or reasoning
/// field); one more makes a `malformed` candidate, so nothing from this mode
/// executes on an output it did not read to the end.
pub const MAX_PATTERN_MATCHES: usize = 1024;

impl Pattern {
    /// Every match as a candidate, each search confined to
    /// [`PATTERN_WINDOW`] bytes and at most [`MAX_PATTERN_MATCHES`] of them:
    /// at most `(MAX_PATTERN_MATCHES + 2·len/PATTERN_WINDOW) · PATTERN_WINDOW`
    /// bytes of regex work per text.
    fn bounded_matches(
        &self,
        text: &str,
        lenient: Strictness,
        input: &Input<'_>,
    ) -> Vec<Candidate> {
        let mut out = crate::cap::Found::new();
        let mut pos = 0;
        let mut matches = 0;
        while pos <= text.len() {
            let end = floor_boundary(text, pos.saturating_add(PATTERN_WINDOW));
            let Some(caps) = self.regex.captures_at(&text[..end], pos) else {
                if end >= text.len() {
                    break;
                }
                // Overlap by half a window: a match up to that long is found.
                pos = floor_boundary(text, pos + PATTERN_WINDOW / 2).max(pos + 1);
                pos = ceil_boundary(text, pos);
                continue;
            };
            let Some(whole) = caps.get(0) else { break };
            matches += 1;
            if matches > MAX_PATTERN_MATCHES {
                out.push(Candidate {
                    mode: self.name.clone().into(),
                    source: Source::Output,
                    span: Span::new(whole.start(), text.len()),
                    raw: String::new(),
                    name: None,
                    arguments: Err(ParseFailure::new(
                        FailureKind::Malformed,
                        format!(
                            "the pattern matched more than {MAX_PATTERN_MATCHES} times: the rest of the text is not read"
                        ),
                        whole.start(),
                    )),
                    repairs: Vec::new(),
                });
                break;
            }
            pos = if whole.end() > whole.start() {
                whole.end()
            } else {
                // An empty match: step over one character.
                ceil_boundary(text, whole.end() + 1)
            };
            for c in self.candidates(&caps, text, lenient, input) {
                out.push(c);
            }
            if whole.end() >= text.len() && whole.end() == whole.start() {
                break;
            }
        }
        out.into_vec()
    }
}

/// The largest char boundary of `text` at or below `i` (clamped to its length).
fn floor_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `text` at or above `i` (clamped; past the
/// end means `len + 1`, which ends the scan).
fn ceil_boundary(text: &str, i: usize) -> usize {
    let mut i = i;
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// What reading the payload gave.
struct Read {
    name: Option<String>,
    arguments: Result<Map<String, Value>, ParseFailure>,
    repairs: Vec<Repair>,
}

impl Pattern {
    /// The candidates of one match: one call, or with a JSON path through a
    /// list every element of that list (none: not a call).
    fn candidates(
        &self,
        caps: &Captures<'_>,
        text: &str,
        lenient: Strictness,
        input: &Input<'_>,
    ) -> Vec<Candidate> {
        let Some(whole) = caps.get(0) else {
            return Vec::new();
        };
        let payload = self.payload_group.and_then(|g| caps.get(g));
        let raw = payload.map_or(whole.as_str(), |m| m.as_str()).to_string();

        let reads = match &self.tool_name {
            NameSource::Static(n) => {
                vec![self.read_arguments(payload, text, Some(n.clone()), lenient, input)]
            }
            NameSource::Group(g) => {
                let name = caps
                    .get(*g)
                    .map(|m| m.as_str().to_string())
                    .filter(|s| !s.is_empty());
                vec![self.read_arguments(payload, text, name, lenient, input)]
            }
            NameSource::JsonPath(path) => match self.read_call_object(payload, text, path, lenient)
            {
                Some(reads) => reads,
                None => return Vec::new(),
            },
        };
        // A list is one payload: its elements that are not calls are
        // `malformed` beside its calls, by the rule of every JSON-call mode.
        let mut list = CallList::new(MissingName::Skip);
        for mut read in reads {
            read.name = read
                .name
                .map(|n| self.tool_name_mapping.get(&n).cloned().unwrap_or(n));
            if read.name.is_none() && read.arguments.is_ok() {
                read.arguments = Err(ParseFailure::new(
                    FailureKind::Malformed,
                    "the tool name group is empty or did not take part in the match",
                    whole.start(),
                ));
            }
            if let Ok(args) = read.arguments {
                read.arguments = self.map_parameters(args, caps);
            }
            read.repairs.sort();
            read.repairs.dedup();
            list.push(Candidate {
                mode: self.name.clone().into(),
                source: Source::Output,
                span: Span::new(whole.start(), whole.end()),
                raw: raw.clone(),
                name: read.name,
                arguments: read.arguments.map(std::sync::Arc::new),
                repairs: read.repairs,
            });
        }
        list.into_found().into_vec()
    }

    /// With a static or group name: the payload is the arguments.
    fn read_arguments(
        &self,
        payload: Option<regex::Match<'_>>,
        text: &str,
        name: Option<String>,
        lenient: Strictness,
        input: &Input<'_>,
    ) -> Read {
        let Some(m) = payload else {
            return Read {
                name,
                arguments: Ok(Map::new()),
                repairs: Vec::new(),
            };
        };
        match self.format {
            ArgumentsFormat::XmlParameters => Read {
                arguments: xml_parameters(m.as_str(), m.start(), name.as_deref(), self, input),
                name,
                repairs: Vec::new(),
            },
            ArgumentsFormat::Json => {
                match jsonread::read_all(m.as_str(), lenient, m.end() == text.len()) {
                    Ok(r) => {
                        let (arguments, repairs) =
                            callobj::arguments_object(r.value, r.repairs, lenient, m.start());
                        Read {
                            name,
                            arguments,
                            repairs,
                        }
                    }
                    Err(mut e) => {
                        e.offset += m.start();
                        Read {
                            name,
                            arguments: Err(e),
                            repairs: Vec::new(),
                        }
                    }
                }
            }
        }
    }

    /// With a JSON path: the payload holds a call object, read whole by the
    /// SPEC §9 key rules (two name keys, an unknown key: `malformed`); a list
    /// on the path gives every element (`None`: not a call).
    fn read_call_object(
        &self,
        payload: Option<regex::Match<'_>>,
        text: &str,
        path: &[String],
        lenient: Strictness,
    ) -> Option<Vec<Read>> {
        let m = payload?;
        let doc = match jsonread::read_all(m.as_str(), lenient, m.end() == text.len()) {
            Ok(r) => r,
            Err(mut e) => {
                e.offset += m.start();
                return Some(vec![Read {
                    name: None,
                    arguments: Err(e),
                    repairs: Vec::new(),
                }]);
            }
        };
        let mut reads = calls_at(&doc.value, path, lenient, m.start())?;
        for r in &mut reads {
            r.repairs.extend(doc.repairs.iter().copied());
        }
        Some(reads)
    }

    fn map_parameters(
        &self,
        args: Map<String, Value>,
        caps: &Captures<'_>,
    ) -> Result<Map<String, Value>, ParseFailure> {
        let at = caps.get(0).map_or(0, |m| m.start());
        let dup = |k: &str| {
            ParseFailure::new(
                FailureKind::Malformed,
                format!("parameter_mapping gives two arguments the name `{k}`"),
                at,
            )
        };
        let mut out = Map::new();
        for (k, v) in args {
            let k = self.rename.get(&k).cloned().unwrap_or(k);
            if out.contains_key(&k) {
                return Err(dup(&k));
            }
            out.insert(k, v);
        }
        for (g, to) in &self.group_params {
            if let Some(m) = caps.get(*g) {
                if out.contains_key(to) {
                    return Err(dup(to));
                }
                out.insert(to.clone(), Value::String(m.as_str().to_string()));
            }
        }
        Ok(out)
    }
}

/// The calls at `path` in `v` (`None`: the path leads to no string, so not a
/// call). The object holding the name is read whole, as every JSON-call mode
/// reads a call object (probe 44b: copying only the name and argument keys
/// dropped a second name key and unknown keys). Through a list, the element
/// the path names must be a call and every other element is read by the
/// rest of the path too (one that is not a call is `malformed`:
/// [`CallList`]); beside an object on the path, only the metadata keys may
/// stand. Failures are at `at`, the payload's start.
fn calls_at(v: &Value, path: &[String], lenient: Strictness, at: usize) -> Option<Vec<Read>> {
    let (seg, rest) = path.split_first()?;
    if rest.is_empty() {
        let Value::Object(obj) = v else {
            return None;
        };
        let Some(Value::String(name)) = obj.get(seg.as_str()) else {
            return None;
        };
        return Some(vec![holder_call(obj, seg, name, lenient, at)]);
    }
    match v {
        Value::Object(o) => {
            let inner = calls_at(o.get(seg.as_str())?, rest, lenient, at)?;
            let stray = o
                .keys()
                .find(|k| *k != seg && !callobj::METADATA_KEYS.contains(&k.as_str()));
            Some(match stray {
                None => inner,
                Some(k) => vec![Read {
                    name: inner.into_iter().find_map(|r| r.name),
                    arguments: Err(ParseFailure::new(
                        FailureKind::Malformed,
                        format!(
                            "unknown key `{k}` beside `{seg}` on the tool name's path (only `id`, `type` and `index` may stand beside it)"
                        ),
                        at,
                    )),
                    repairs: Vec::new(),
                }],
            })
        }
        Value::Array(items) => {
            let i = seg.parse::<usize>().ok()?;
            let mut named = Some(calls_at(items.get(i)?, rest, lenient, at)?);
            let mut out = Vec::new();
            for (j, item) in items.iter().enumerate() {
                let reads = if j == i {
                    named.take()
                } else {
                    calls_at(item, rest, lenient, at)
                };
                out.extend(reads.unwrap_or_else(|| {
                    vec![Read {
                        name: None,
                        arguments: Err(json_array::not_a_call(item, at)),
                        repairs: Vec::new(),
                    }]
                }));
            }
            Some(out)
        }
        _ => None,
    }
}

/// The call object `obj` whose name is the string at its key `key`, read
/// by [`callobj::from_value`]; a name key other than `name`, `tool` or
/// `tool_name` is read as `name` (a second name key beside it is
/// `malformed`, as two name keys are).
fn holder_call(
    obj: &Map<String, Value>,
    key: &str,
    name: &str,
    lenient: Strictness,
    at: usize,
) -> Read {
    let mut call = obj.clone();
    if !callobj::NAME_KEYS.contains(&key) {
        call.remove(key);
        if let Some(other) = callobj::NAME_KEYS.iter().find(|k| call.contains_key(**k)) {
            return Read {
                name: Some(name.to_string()),
                arguments: Err(ParseFailure::new(
                    FailureKind::Malformed,
                    format!("two tool names: `{key}` and `{other}`"),
                    at,
                )),
                repairs: Vec::new(),
            };
        }
        call.insert("name".into(), Value::String(name.to_string()));
    }
    match callobj::from_value_owned(Value::Object(call), lenient, &[]) {
        CallObj::Call(parts) => Read {
            name: parts.name,
            arguments: parts.arguments.map_err(|mut e| {
                e.offset = at;
                e
            }),
            repairs: parts.repairs,
        },
        // A name key holds a string, so this is a call object; kept
        // fail-closed all the same.
        CallObj::NotACall => Read {
            name: None,
            arguments: Err(json_array::no_name(at)),
            repairs: Vec::new(),
        },
    }
}

/// `<parameter=key>value</parameter>…` (text between elements is ignored).
fn xml_parameters(
    payload: &str,
    base: usize,
    tool: Option<&str>,
    pattern: &Pattern,
    input: &Input<'_>,
) -> Result<Map<String, Value>, ParseFailure> {
    // Qwen3-Coder's parameter tags, as that format spells them.
    use crate::format::qwen_xml::{PARAM as OPEN, PARAM_END as CLOSE};
    let mut out = Map::new();
    let mut pos = 0;
    while let Some(rel) = memchr::memmem::find(&payload.as_bytes()[pos..], OPEN.as_bytes()) {
        let key_start = pos + rel + OPEN.len();
        let Some(gt) = memchr::memchr(b'>', &payload.as_bytes()[key_start..]) else {
            return Err(ParseFailure::new(
                FailureKind::Malformed,
                format!("unclosed `{OPEN}` tag"),
                base + pos + rel,
            ));
        };
        let key = payload[key_start..key_start + gt].trim();
        let value_start = key_start + gt + 1;
        let Some(end) = memchr::memmem::find(&payload.as_bytes()[value_start..], CLOSE.as_bytes())
        else {
            return Err(ParseFailure::new(
                FailureKind::Malformed,
                format!("`{OPEN}{key}>` has no `{CLOSE}`"),
                base + pos + rel,
            ));
        };
        let mut value = &payload[value_start..value_start + end];
        value = value.strip_prefix('\n').unwrap_or(value);
        value = value.strip_suffix('\n').unwrap_or(value);
        if key.is_empty() || out.contains_key(key) {
            return Err(ParseFailure::new(
                FailureKind::Malformed,
                format!("empty or repeated parameter name `{key}`"),
                base + pos + rel,
            ));
        }
        // Typed by the schema under the names the validator will see.
        let mapped_tool = tool.map(|t| pattern.tool_name_mapping.get(t).map_or(t, String::as_str));
        let mapped_key = pattern.rename.get(key).map_or(key, String::as_str);
        let typed = mapped_tool
            .and_then(|t| input.param_types.and_then(|p| p.of(t, mapped_key)))
            .filter(|types| !types.is_empty() && !types.iter().any(|t| t == "string"))
            .and_then(|_| jsonread::read_all(value, Strictness::Strict, false).ok())
            .map(|r| r.value);
        out.insert(
            key.to_string(),
            typed.unwrap_or_else(|| Value::String(value.to_string())),
        );
        pos = value_start + end + CLOSE.len();
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const EXAMPLES: &str = include_str!("../../../examples/patterns.toml");

    fn load_err(text: &str) -> PatternError {
        load_patterns(text).unwrap_err()
    }

    fn one(text: &str, out: &str, strictness: Strictness) -> Vec<Candidate> {
        let modes = extractors(load_patterns(text).unwrap());
        modes[0].extract(&Input::new(out), strictness)
    }

    fn by_name<'a>(modes: &'a [Box<dyn Extractor>], name: &str) -> &'a dyn Extractor {
        modes.iter().find(|m| m.name() == name).unwrap().as_ref()
    }

    #[test]
    fn example_file_execute_bracket_maps_group_two_to_command() {
        let modes = extractors(load_patterns(EXAMPLES).unwrap());
        let found = by_name(&modes, "execute_bracket").extract(
            &Input::new("[EXECUTE:bash:ls -la /tmp]"),
            Strictness::Strict,
        );
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].call().unwrap().to_json(),
            json!({"name": "bash", "arguments": {"command": "ls -la /tmp"}})
        );
        assert_eq!(found[0].span, Span::new(0, 26));
        assert_eq!(found[0].source, Source::Output);
    }

    #[test]
    fn example_file_is_sorted_by_priority_and_skips_disabled() {
        let patterns = load_patterns(EXAMPLES).unwrap();
        assert_eq!(patterns.len(), 11);
        let action = patterns.iter().find(|p| p.name() == "action").unwrap();
        assert!(!action.enabled());
        let modes = extractors(patterns);
        assert_eq!(modes.len(), 10);
        assert_eq!(modes[0].name(), "execute_bracket");
        assert!(modes.iter().all(|m| m.name() != "action"));
    }

    #[test]
    fn example_file_patterns_each_read_their_example() {
        let patterns = load_patterns(EXAMPLES).unwrap();
        for p in patterns {
            let ex = p.example.clone();
            assert!(!ex.is_empty(), "{} has no example", p.name());
            let found = p.extract(&Input::new(&ex), Strictness::Strict);
            assert!(
                found.iter().any(|c| c.call().is_some()),
                "{}: {:?}",
                p.name(),
                found
            );
        }
    }

    #[test]
    fn example_file_tool_call_reads_name_by_json_path() {
        let modes = extractors(load_patterns(EXAMPLES).unwrap());
        let out = r#"<tool_call>{"name": "read_file", "arguments": {"file_path": "/etc/hosts"}}</tool_call>"#;
        let found = by_name(&modes, "tool_call").extract(&Input::new(out), Strictness::Strict);
        // tool_name_mapping read_file → read, parameter_mapping file_path → filePath.
        assert_eq!(
            found[0].call().unwrap().to_json(),
            json!({"name": "read", "arguments": {"filePath": "/etc/hosts"}})
        );
    }

    #[test]
    fn example_file_nested_xml_reads_parameters() {
        let modes = extractors(load_patterns(EXAMPLES).unwrap());
        let out = "<tool_call><function=run_command><parameter=cmd>\nls\n</parameter></function></tool_call>";
        let found =
            by_name(&modes, "tool_call_nested_xml").extract(&Input::new(out), Strictness::Strict);
        assert_eq!(
            found[0].call().unwrap().to_json(),
            json!({"name": "bash", "arguments": {"command": "ls"}})
        );
    }

    const EXEC: &str = r#"
[[pattern]]
name = "execute_bracket"
type = "bracket"
regex = '\[EXECUTE:(\w+):([^\]]+)\]'
tool_name_group = 1
parameter_mapping = { "2" = "command" }
"#;

    #[test]
    fn mapping_never_fills_a_missing_argument() {
        // seed 003 fills `description` for bash; we never do.
        let found = one(EXEC, "[EXECUTE:bash:ls]", Strictness::Strict);
        let args = found[0].call().unwrap().arguments;
        assert_eq!(args.len(), 1);
        assert!(!args.contains_key("description"));
    }

    #[test]
    fn parallel_matches_are_separate_candidates() {
        let found = one(
            EXEC,
            "[EXECUTE:bash:ls] then [EXECUTE:bash:pwd]",
            Strictness::Strict,
        );
        let cmds: Vec<_> = found
            .iter()
            .map(|c| c.call().unwrap().arguments["command"].clone())
            .collect();
        assert_eq!(cmds, vec![json!("ls"), json!("pwd")]);
    }

    #[test]
    fn regex_work_per_output_is_bounded() {
        // Issue 9 item 10: each search of `[a-z]*X|a{1000}` scanned to the
        // end of the output for an X; 1,100 matches made it quadratic.
        let file = r#"
[[pattern]]
name = "greedy"
type = "inline"
regex = '[a-z]*X|a{1000}'
tool_name = "t"
"#;
        let out = "a".repeat(1_100_000);
        let started = std::time::Instant::now();
        let found = one(file, &out, Strictness::Strict);
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        // MAX_PATTERN_MATCHES + 1 candidates, capped while scanning.
        assert_eq!(found.len(), crate::rules::DEFAULT_MAX_CANDIDATES);
        assert!(
            found[998]
                .failure()
                .unwrap()
                .message
                .starts_with(&format!("{} candidates", MAX_PATTERN_MATCHES + 1))
        );
        let last = found.last().unwrap().failure().unwrap();
        assert_eq!(last.kind, FailureKind::Malformed);
        assert!(
            last.message.contains("matched more than 1024 times"),
            "{}",
            last.message
        );
        assert_eq!(last.offset, 1024 * 1000);
        assert!(found[..998].iter().all(|c| c.call().is_some()));
    }

    #[test]
    fn a_match_is_found_across_window_edges_and_after_long_gaps() {
        // A 40 KiB match that starts 100 KiB into the output (past the first
        // window's half) and one after 300 KiB of text without a match.
        let file = r#"
[[pattern]]
name = "blk"
type = "inline"
regex = '(?s)<c>(.*?)</c>'
tool_name = "t"
arguments_group = 1
"#;
        let payload = format!("{{\"s\": \"{}\"}}", "é".repeat(20 * 1024));
        let out = format!(
            "{}<c>{payload}</c>{}<c>{{}}</c>",
            "x".repeat(100 * 1024),
            "y".repeat(300 * 1024)
        );
        let found = one(file, &out, Strictness::Strict);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].span.start, 100 * 1024);
        assert!(found.iter().all(|c| c.call().is_some()));
        // Empty matches end.
        let empty =
            "[[pattern]]\nname = \"e\"\ntype = \"inline\"\nregex = 'z*'\ntool_name = \"t\"\n";
        assert_eq!(one(empty, "ab", Strictness::Strict).len(), 3);
    }

    #[test]
    fn match_inside_think_is_reasoning() {
        let input = Input {
            reasoning: vec![Span::new(0, 30)],
            ..Input::new("<think>[EXECUTE:bash:ls]</think> ok")
        };
        let modes = extractors(load_patterns(EXEC).unwrap());
        let found = modes[0].extract(&input, Strictness::Strict);
        assert_eq!(found[0].source, Source::OutputReasoning);
    }

    #[test]
    fn reasoning_field_matches_are_reported_as_such() {
        let input = Input {
            reasoning_field: Some("maybe [EXECUTE:bash:ls]"),
            ..Input::new("no call here")
        };
        let modes = extractors(load_patterns(EXEC).unwrap());
        let found = modes[0].extract(&input, Strictness::Strict);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].source, Source::ReasoningField);
        assert_eq!(found[0].span, Span::new(6, 23));
    }

    const JSON_PATH: &str = r#"
[[pattern]]
name = "tc"
type = "xml"
regex = '(?s)<tc>(.*?)</tc>'
tool_name_json_path = "function.name"
"#;

    #[test]
    fn nested_json_path_reads_arguments_beside_the_name() {
        let out = r#"<tc>{"function": {"name": "f", "arguments": {"a": 1}}}</tc>"#;
        let found = one(JSON_PATH, out, Strictness::Strict);
        assert_eq!(
            found[0].call().unwrap().to_json(),
            json!({"name": "f", "arguments": {"a": 1}})
        );
    }

    #[test]
    fn json_path_absent_is_not_a_call() {
        let found = one(JSON_PATH, r#"<tc>{"other": 1}</tc>"#, Strictness::Strict);
        assert!(found.is_empty());
    }

    #[test]
    fn malformed_payload_is_a_failed_candidate_and_lenient_repairs_it() {
        let out = "<tc>{'function': {'name': 'f', 'arguments': {}}}</tc>";
        let strict = one(JSON_PATH, out, Strictness::Strict);
        assert_eq!(strict[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(strict[0].failure().unwrap().offset, 5);
        let lenient = one(JSON_PATH, out, Strictness::Lenient);
        assert_eq!(lenient[0].call().unwrap().name, "f");
        assert_eq!(lenient[0].repairs, vec![Repair::SingleQuotes]);
    }

    #[test]
    fn ambiguous_argument_keys_are_malformed() {
        let out = r#"<tc>{"function": {"name": "f", "arguments": {}, "params": {}}}</tc>"#;
        let found = one(JSON_PATH, out, Strictness::Strict);
        assert_eq!(found[0].name.as_deref(), Some("f"));
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    /// Probe 44b: only `name` and the argument keys were copied out of the
    /// call object, so a second name key, an unknown key and a list's other
    /// elements were dropped and `f({})` executed.
    #[test]
    fn json_path_calls_follow_the_spec_key_rules_and_the_list_rule() {
        let modes = extractors(load_patterns(EXAMPLES).unwrap());
        let tool_call = by_name(&modes, "tool_call");
        for out in [
            r#"<tool_call>{"name": "f", "tool": "delete_all", "args": {"b": 2}}</tool_call>"#,
            r#"<tool_call>{"name": "f", "tool": "delete_all"}</tool_call>"#,
            r#"<tool_call>{"name": "f", "args": {"b": 2}}</tool_call>"#,
        ] {
            let found = tool_call.extract(&Input::new(out), Strictness::Strict);
            assert_eq!(found.len(), 1, "{out}");
            assert_eq!(
                found[0].failure().map(|f| f.kind),
                Some(FailureKind::Malformed),
                "{out}"
            );
        }
        let list = |path: &str, out: &str| {
            let file = JSON_PATH.replace("function.name", path);
            one(&file, out, Strictness::Strict)
        };
        // Every element of a list on the path is a candidate.
        let found = list(
            "0.name",
            r#"<tc>[{"name": "f", "arguments": {}}, {"name": "delete_all", "arguments": {}}]</tc>"#,
        );
        let names: Vec<_> = found.iter().map(|c| c.name.as_deref()).collect();
        assert_eq!(names, [Some("f"), Some("delete_all")]);
        assert!(found.iter().all(|c| c.call().is_some()));
        // One that is not a call is `malformed` beside the call.
        let found = list(
            "calls.0.name",
            r#"<tc>{"calls": [{"name": "f", "arguments": {}}, "rm -rf /"]}</tc>"#,
        );
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[1].failure().map(|f| f.kind),
            Some(FailureKind::Malformed)
        );
        // A key beside the path's is `malformed`; a custom name key reads as
        // `name`, and beside another name key it is two names.
        let found = list(
            "function.name",
            r#"<tc>{"function": {"name": "f", "arguments": {}}, "args": {"b": 2}}</tc>"#,
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
        let found = list(
            "fn.tool_id",
            r#"<tc>{"fn": {"tool_id": "f", "arguments": {"a": 1}}}</tc>"#,
        );
        assert_eq!(
            found[0].call().unwrap().to_json(),
            json!({"name": "f", "arguments": {"a": 1}})
        );
        let found = list(
            "fn.tool_id",
            r#"<tc>{"fn": {"tool_id": "f", "name": "g"}}</tc>"#,
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn rename_collision_is_malformed() {
        let text = r#"
[[pattern]]
name = "p"
type = "inline"
regex = '(?s)CALL (\w+) (\{.*\})'
tool_name_group = 1
parameter_mapping = { cmd = "command" }
"#;
        let found = one(
            text,
            r#"CALL bash {"cmd": "ls", "command": "pwd"}"#,
            Strictness::Strict,
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn non_object_arguments_are_malformed() {
        let text = r#"
[[pattern]]
name = "p"
type = "inline"
regex = '(?s)CALL (\w+) (\[.*\])'
tool_name_group = 1
"#;
        let found = one(text, "CALL f [1]", Strictness::Strict);
        assert_eq!(found[0].name.as_deref(), Some("f"));
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn error_invalid_regex_names_the_pattern() {
        let e = load_err(
            "[[pattern]]\nname = \"bad\"\ntype = \"xml\"\nregex = '(unclosed'\ntool_name = \"f\"\n",
        );
        assert_eq!(e.pattern.as_deref(), Some("bad"));
        assert!(matches!(e.kind, PatternErrorKind::InvalidRegex(_)));
        assert!(e.to_string().starts_with("pattern `bad`: invalid regex"));
    }

    #[test]
    fn error_regex_too_large() {
        let e = load_err(
            "[[pattern]]\nname = \"big\"\ntype = \"xml\"\nregex = '\\w{1000}\\w{1000}'\ntool_name = \"f\"\n",
        );
        assert_eq!(e.pattern.as_deref(), Some("big"));
        assert_eq!(e.kind, PatternErrorKind::RegexTooLarge);
    }

    #[test]
    fn error_group_out_of_range() {
        let e = load_err(
            "[[pattern]]\nname = \"g\"\ntype = \"xml\"\nregex = '<(\\w+)>'\ntool_name_group = 2\n",
        );
        assert_eq!(
            e.kind,
            PatternErrorKind::GroupOutOfRange {
                field: "tool_name_group".into(),
                group: 2,
                groups: 1
            }
        );
        let e = load_err(
            "[[pattern]]\nname = \"g\"\ntype = \"xml\"\nregex = '<(\\w+)>'\ntool_name_group = 0\n",
        );
        assert!(matches!(
            e.kind,
            PatternErrorKind::GroupOutOfRange { group: 0, .. }
        ));
        let e = load_err(
            "[[pattern]]\nname = \"g\"\ntype = \"xml\"\nregex = '<(\\w+)>'\ntool_name_group = 1\nparameter_mapping = { \"3\" = \"x\" }\n",
        );
        assert!(matches!(
            e.kind,
            PatternErrorKind::GroupOutOfRange { group: 3, .. }
        ));
        let e = load_err(
            "[[pattern]]\nname = \"g\"\ntype = \"xml\"\nregex = '<(\\w+)>'\ntool_name_group = 1\narguments_group = 5\n",
        );
        assert!(matches!(
            e.kind,
            PatternErrorKind::GroupOutOfRange { group: 5, .. }
        ));
    }

    #[test]
    fn error_tool_name_source_none_or_several() {
        let e = load_err("[[pattern]]\nname = \"n\"\ntype = \"xml\"\nregex = 'x'\n");
        assert!(
            matches!(e.kind, PatternErrorKind::ToolNameSource(ref m) if m.starts_with("no tool name"))
        );
        let e = load_err(
            "[[pattern]]\nname = \"n\"\ntype = \"xml\"\nregex = '(x)'\ntool_name = \"f\"\ntool_name_group = 1\n",
        );
        assert!(
            matches!(e.kind, PatternErrorKind::ToolNameSource(ref m) if m.starts_with("more than one"))
        );
    }

    #[test]
    fn error_unknown_field_and_bad_type_name_the_entry() {
        let e = load_err(
            "[[pattern]]\nname = \"u\"\ntype = \"xml\"\nregex = 'x'\ntool_name = \"f\"\ntool_nme = 1\n",
        );
        assert_eq!(e.pattern.as_deref(), Some("u"));
        assert!(matches!(e.kind, PatternErrorKind::Toml(ref m) if m.contains("tool_nme")));
        let e = load_err(
            "[[pattern]]\nname = \"t\"\ntype = \"yaml\"\nregex = 'x'\ntool_name = \"f\"\n",
        );
        assert_eq!(e.pattern.as_deref(), Some("t"));
        assert!(matches!(e.kind, PatternErrorKind::Toml(_)));
        let e = load_err("[[pattern]]\ntype = \"xml\"\nregex = 'x'\ntool_name = \"f\"\n");
        assert_eq!(e.pattern.as_deref(), Some("#1"));
    }

    #[test]
    fn error_not_toml() {
        let e = load_err("[[pattern]\nname = ");
        assert_eq!(e.pattern, None);
        assert!(matches!(e.kind, PatternErrorKind::Toml(_)));
    }

    #[test]
    fn error_duplicate_and_invalid_names() {
        let one = "[[pattern]]\nname = \"d\"\ntype = \"xml\"\nregex = 'x'\ntool_name = \"f\"\n";
        let e = load_err(&format!("{one}{one}"));
        assert_eq!(e.kind, PatternErrorKind::DuplicateName);
        let e = load_err(&one.replace("\"d\"", "\"hermes\""));
        assert_eq!(e.pattern.as_deref(), Some("hermes"));
        assert_eq!(e.kind, PatternErrorKind::ReservedName);
        let e = load_err(
            "[[pattern]]\nname = \"a b\"\ntype = \"xml\"\nregex = 'x'\ntool_name = \"f\"\n",
        );
        assert_eq!(e.kind, PatternErrorKind::InvalidName);
    }

    #[test]
    fn error_bad_json_path_and_example() {
        let e = load_err(
            "[[pattern]]\nname = \"j\"\ntype = \"xml\"\nregex = '(x)'\ntool_name_json_path = \"a..b\"\n",
        );
        assert!(matches!(e.kind, PatternErrorKind::BadJsonPath(_)));
        let e = load_err(
            "[[pattern]]\nname = \"e\"\ntype = \"xml\"\nregex = 'x'\ntool_name = \"f\"\nexample = \"y\"\n",
        );
        assert_eq!(e.kind, PatternErrorKind::ExampleDoesNotMatch);
    }

    #[test]
    fn empty_file_has_no_patterns() {
        assert!(load_patterns("").unwrap().is_empty());
    }
}
