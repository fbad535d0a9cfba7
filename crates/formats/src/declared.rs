//! User-declared formats (issue 8 item 4, issue 27 item 3): a new model's
//! wire format written as a row of the [format table](crate::table) in TOML.
//! A declaration builds the same two things a built-in row is: the engine's
//! own configuration (the `Config` of a configured row, or the pythonic
//! engine's `Pythonic`) and a [`Format`] row, and it is wrapped in the same
//! [rules](crate::rules) wrapper as the built-in rows. So a declared format
//! gets the engines' failure classification, the missing-closer rule, stream
//! openers and linear time from the code the built-in rows run: there is no
//! second copy of any of them here. No regex: a declaration names an engine
//! and its tokens.
//!
//! A file holds one `[[format]]` table per format (`--formats FILE`, or the
//! `[[format]]` tables of `toolgate.toml`), beside seed 003's regex
//! [`patterns`](crate::patterns).
//!
//! # File format
//!
//! ```toml
//! [[format]]
//! name = "angle_call"                # the mode name: [A-Za-z0-9_.-], unique,
//!                                    #   not a built-in mode's
//! engine = "json_block"              # json_block | name_then_json |
//!                                    #   tagged_parameters | pythonic
//! families = "Acme-7B"               # optional, descriptive
//! description = "…"                  # optional one-liner for `toolgate formats`
//! conventions = "…"                  # optional, descriptive
//! opener = "<<call>>"
//! closer = "<</call>>"
//! example = '<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}<</call>>'
//! ```
//!
//! | field | engines | meaning |
//! |---|---|---|
//! | `name` | all | the mode name |
//! | `engine` | all | the shape (below) |
//! | `opener` | all | the token that opens a call (never empty) |
//! | `closer` | all (optional for `json_block`) | the token that closes a call |
//! | `separator` | `name_then_json` (required), `tagged_parameters` key/value (optional) | between the tool name and the arguments / after the tool name |
//! | `namespace` | `name_then_json` | a prefix the header may start with before the tool name (Kimi's `functions.`); the opener shows it: `'<call>functions.NAME'` |
//! | `section` | `name_then_json`, `tagged_parameters` | `[opener, closer]` of the block holding the calls (key/value: calls count only inside it, unless a `separator` is given) |
//! | `parameter` | `tagged_parameters` attribute, function block | `['<arg name="KEY">', '</arg>']`; function block: `['<parameter=KEY>', '</parameter>']` |
//! | `key`, `value` | `tagged_parameters` key/value | `["<k>", "</k>"]`, `["<v>", "</v>"]` |
//! | `typing` | `tagged_parameters` attribute, key/value | attribute: `schema` (default), `string_attr` (DSML's `string="true"`), `type_attr` (`type="string"`); key/value: `schema` (default), `json` (each value read as JSON first, text that is not JSON a string: HyperCLOVAX-SEED-Think) |
//! | `json_body` | `tagged_parameters` attribute | the call's body may be a JSON object instead of parameters (DSML) |
//! | `json_body_tags` | `tagged_parameters` attribute | `[opener, closer]` of a JSON block that may stand instead of the parameters, holding one JSON object (Kimi K3's `<\|open\|>json type="object"<\|sep\|>`); only blank text may follow it |
//! | `xml_text` | `tagged_parameters` attribute | values are XML text: entities decoded, `<![CDATA[…]]>` literal |
//! | `tag_end`, `name_attr`, `key_attr` | `tagged_parameters` attribute | what ends a tag (`>`; Kimi K3: `<\|sep\|>`), the attribute naming the tool (`name`; K3: `tool`) and the parameter (`name`; K3: `key`) |
//! | `invoke_attrs`, `attr_entities` | `tagged_parameters` attribute | further attributes a call tag may carry (K3: `["index"]`; any other is `malformed`); attribute values are XML text |
//! | `bare_blocks` | `tagged_parameters` function block | with a `section`: a block outside any section is a call too, but only in an output without section markup (Qwen3-Coder); without a `section` every block is bare |
//! | `ns` | `tagged_parameters` attribute | a namespace token that may stand before any tag (MiniMax-M3's `]<]minimax[>[`); with `parameter = ['<KEY>', '</KEY>']` each parameter is an element named by its key |
//! | `bare_start`, `unbracketed`, `json_lists` | `pythonic` | a bare list at the start (or ending the output) is a block too; calls one per line without `[ ]`; the block may hold a JSON call list |
//! | `blocks` | all | `[[opener, closer], …]`: the pairs the missing-closer rule checks (default: the section and the call); in `json_block`, `name_then_json` and `pythonic` the default pairs count too, unless a given pair with the same closer has an opener that begins theirs (`tagged_parameters` reports a call without its closer itself) |
//! | `openers` | all | the tokens a candidate can begin at, for streaming (default: the section's and the call's opener); each token a call can begin at (the section's opener where calls count only inside it, else the section's and the call's, `[` with `bare_start`) must start with one of them |
//! | `stop_token` | all | `{ token = "…", stripped_by = "…" }`: the outermost closer, which a serving stack strips; it may be missing except under `finish_reason: "length"` |
//! | `example` | all | an output in the format; it must read as a call (`pass`) |
//!
//! # Engines
//!
//! - **`json_block`** — the opener, then a SPEC §9 JSON call object (an array
//!   of them, or several one after another), then the closer if the format
//!   has one: the engine of `hermes`-like families (`tool_calls_tag`,
//!   `nemotron`, `longcat`, …). Name from `name`/`tool`/`tool_name`,
//!   arguments from `arguments`/`parameters`/`params`.
//! - **`name_then_json`** — the opener, the tool name (the trimmed text up to
//!   the separator: non-empty, no whitespace), the separator, one JSON
//!   arguments object, the closer: the engine of `kimi` and `react`. A call
//!   whose closer is missing ends at the next opener or the section's
//!   closer. An opener ending in `NAME:INDEX` reads the header as the name,
//!   a colon and a decimal call index (`opener =
//!   "<|tool_call_begin|>functions.NAME:INDEX"`, `namespace = "functions."`:
//!   Kimi K2's `functions.get_weather:0`, the namespace optional on the wire);
//!   a header that is not one is a `malformed` call without a name.
//! - **`tagged_parameters`** — parameters as markup, values typed by the tool
//!   schema (SPEC §9), in one of two spellings:
//!   - *attribute*: `opener = '<call name="NAME">'` and `parameter =
//!     ['<arg name="KEY">', '</arg>']` — the engine of `atem`, `minimax_m2`,
//!     `step3`, `minicpm5`, `deepseek_dsml`, `kimi_k3`;
//!   - *function block*: `opener = "<function=NAME>"` and `parameter =
//!     ["<parameter=KEY>", "</parameter>"]` (the name and the key written
//!     right after `=`), in an optional `section` — the engine of `qwen_xml`
//!     (`bare_blocks = true`) and `seed_oss`. Text inside the section beside
//!     a block, and a block outside it in an output that uses it, are
//!     `malformed`;
//!   - *key/value*: `opener = "<call>"` (the tool name follows it as text),
//!     `key = ["<k>", "</k>"]`, `value = ["<v>", "</v>"]` and optionally a
//!     `separator` after the name — the engine of `glm`, `hunyuan`,
//!     `longcat_xml`, `hy_v4`. Its tokens start with `<` (the name runs to
//!     the first `<`).
//! - **`pythonic`** — the opener, a Python-style call list
//!   (`[get_weather(city='Antwerp'), f(a=1)]`), the closer: the engine of
//!   `llama4_pythonic`, `lfm2` and `olmo`, whose calls the `bracket` mode's
//!   parser reads (Python and JSON literals, named arguments).
//!
//! In every engine: a call whose closer is missing at the end of the output
//! is `truncation` (a declared `stop_token` excepted, never under
//! `finish_reason: "length"`); double-encoded arguments
//! (`"arguments": "{\"city\": …}"`) are `escaping` (`escaping_error`), the
//! lenient replay decodes them and records the repair; JSON that does not
//! read is `malformed`; a tagged value that runs into the next parameter's
//! markup is `malformed`. Each engine is linear in the output.
//!
//! Streaming: the row's `openers` ([`Extractor::openers`]) feed the
//! hold-back as a built-in row's do: text before the first opener is
//! forwarded, the rest held until the output is complete.
//!
//! The engines' configurations hold `&'static str` tokens, as the built-in
//! rows' constants do; a declaration's strings are interned (stored once per
//! distinct string for the life of the process), so loading the same file
//! again, as the proxy does for every model, allocates nothing new.
//!
//! # Errors
//!
//! [`load_formats`] rejects the whole file at the first bad entry with a
//! [`FormatError`] naming the format and the field: not TOML, an unknown
//! field, an unknown engine, an empty or missing token, a field the engine
//! does not take, a duplicate or built-in name, a stop token that is not the
//! outermost closer, or an example the declared format does not read as a
//! call (`pass`), also with its stop token cut off.
//!
//! ```
//! use toolgate_formats::{Catalog, Input, Strictness};
//! let file = r#"
//! [[format]]
//! name = "angle_call"
//! engine = "json_block"
//! opener = "<<call>>"
//! closer = "<</call>>"
//! example = '<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}<</call>>'
//! "#;
//! let mut catalog = Catalog::new();
//! catalog.add_formats(file).unwrap();
//! let modes = catalog.into_custom();
//! let cut = r#"<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}"#;
//! let found = modes[0].extract(&Input::new(cut), Strictness::Strict);
//! assert_eq!(found[0].failure().unwrap().kind, toolgate_core::FailureKind::Truncated);
//! assert_eq!(modes[0].openers(), Some(&["<<call>>"][..]));
//! ```

use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock, PoisonError};

use serde::Deserialize;
use toolgate_core::{Candidate, Source};

use crate::families::configured::{Config, Configured};
use crate::families::jsonlike::marked::{Block, Marked, Payload};
use crate::families::jsonlike::pythonic::Pythonic;
use crate::families::tagged::glm::Tokens;
use crate::families::tagged::invoke::{Syntax, Typing};
use crate::families::tagged::name_json::{NameJson, bare_name, indexed_name};
use crate::families::tagged::qwen_xml::FunctionXml;
use crate::format::minimax_m2::XML;
use crate::rules::Ruled;
use crate::table::{Engine, Format, PayloadKind, Row, StopToken};
use crate::{Extractor, Input, Strictness};

/// Why a formats file was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// The format's name, or `#N` (1-based) when it has none; `None` when
    /// the file itself is not TOML.
    pub format: Option<String>,
    /// The field at fault, when one is.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.format {
            write!(f, "format `{name}`: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// The engine names a declaration may use.
pub const ENGINES: [&str; 4] = [
    "json_block",
    "name_then_json",
    "tagged_parameters",
    "pythonic",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    format: Vec<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStop {
    token: String,
    stripped_by: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFormat {
    name: String,
    engine: String,
    families: Option<String>,
    description: Option<String>,
    conventions: Option<String>,
    opener: String,
    closer: Option<String>,
    separator: Option<String>,
    section: Option<Vec<String>>,
    parameter: Option<Vec<String>>,
    key: Option<Vec<String>>,
    value: Option<Vec<String>>,
    typing: Option<String>,
    tag_end: Option<String>,
    name_attr: Option<String>,
    key_attr: Option<String>,
    invoke_attrs: Option<Vec<String>>,
    attr_entities: Option<bool>,
    ns: Option<String>,
    namespace: Option<String>,
    bare_blocks: Option<bool>,
    json_body: Option<bool>,
    json_body_tags: Option<Vec<String>>,
    xml_text: Option<bool>,
    bare_start: Option<bool>,
    unbracketed: Option<bool>,
    json_lists: Option<bool>,
    blocks: Option<Vec<Vec<String>>>,
    openers: Option<Vec<String>>,
    stop_token: Option<RawStop>,
    example: String,
}

/// A loaded, checked format declaration: a [`Format`] row and the engine
/// configuration it reads with, under the built-in rows' rules. It is an
/// [`Extractor`] whose mode name is its `name`; [`Extractor::row`] gives its
/// row.
pub struct Declared {
    format: Format,
    example: &'static str,
    ruled: Ruled,
}

impl fmt::Debug for Declared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Declared")
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl Extractor for Declared {
    fn name(&self) -> &str {
        self.format.name
    }
    fn example(&self) -> &str {
        self.example
    }
    fn describe(&self) -> &str {
        self.ruled.describe()
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        // The engine, then the rules, as for a built-in row.
        self.ruled.extract(input, strictness)
    }
    fn row(&self) -> Option<Row> {
        Some(self.format.to_row())
    }
    fn openers(&self) -> Option<&'static [&'static str]> {
        self.format.openers
    }
}

/// Strings stored once per process (see the module docs).
fn intern(s: &str) -> &'static str {
    static SEEN: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = seen.get(s) {
        return s;
    }
    let s: &'static str = Box::leak(s.to_owned().into_boxed_str());
    seen.insert(s);
    s
}

/// The interned lists of one item type.
type Seen<T> = OnceLock<Mutex<HashSet<&'static [T]>>>;

/// Lists of interned items stored once per process.
fn intern_list<T: Copy + Eq + Hash + Send + 'static>(
    seen: &'static Seen<T>,
    items: Vec<T>,
) -> &'static [T] {
    let mut seen = seen
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = seen.get(items.as_slice()) {
        return s;
    }
    let s: &'static [T] = Box::leak(items.into_boxed_slice());
    seen.insert(s);
    s
}

fn intern_strs(items: &[String]) -> &'static [&'static str] {
    static SEEN: Seen<&'static str> = OnceLock::new();
    intern_list(&SEEN, items.iter().map(|s| intern(s)).collect())
}

fn intern_pairs(items: &[(String, String)]) -> &'static [(&'static str, &'static str)] {
    static SEEN: Seen<(&'static str, &'static str)> = OnceLock::new();
    intern_list(
        &SEEN,
        items.iter().map(|(o, c)| (intern(o), intern(c))).collect(),
    )
}

/// Loads and checks a formats file (see the module docs).
pub fn load_formats(text: &str) -> Result<Vec<Declared>, FormatError> {
    let file: RawFile = toml::from_str(text).map_err(|e| FormatError {
        format: None,
        field: None,
        message: e.message().to_string(),
    })?;
    let mut names = Names::new();
    let mut out = Vec::with_capacity(file.format.len());
    for (i, table) in file.format.into_iter().enumerate() {
        let label = Names::label(&table, i);
        let with_label = |(field, message): (Option<String>, String)| FormatError {
            format: Some(label.clone()),
            field,
            message,
        };
        if let Some(fault) = wrong_type(&table) {
            return Err(with_label(fault));
        }
        let raw: RawFormat = table.try_into().map_err(|e: toml::de::Error| {
            let message = e.message().to_string();
            with_label((field_named(&message), message))
        })?;
        if names.is_builtin(&raw.name) {
            return Err(with_label((
                Some("name".into()),
                format!(
                    "`{}` is a built-in mode's name (see `toolgate formats`); choose another",
                    raw.name
                ),
            )));
        }
        if !names.first(&raw.name) {
            return Err(with_label((
                Some("name".into()),
                "another format in the file has the same name".into(),
            )));
        }
        out.push(check(raw).map_err(with_label)?);
    }
    Ok(out)
}

/// The names of the entries of a file of user-declared modes, checked the
/// same way for formats and for regex [`patterns`](crate::patterns): an
/// entry is labelled by its `name` (or `#N`), and a name is `A-Z a-z 0-9 _
/// . -`, no built-in mode's and unique in its file.
pub(crate) struct Names {
    builtin: HashSet<String>,
    seen: HashSet<String>,
}

impl Names {
    /// No name seen yet.
    pub(crate) fn new() -> Names {
        Names {
            builtin: crate::builtin()
                .iter()
                .map(|e| e.name().to_string())
                .collect(),
            seen: HashSet::new(),
        }
    }

    /// How errors name the `i`th (0-based) table: its `name`, else `#N`.
    pub(crate) fn label(table: &toml::Table, i: usize) -> String {
        table
            .get("name")
            .and_then(|v| v.as_str())
            .map_or_else(|| format!("#{}", i + 1), str::to_string)
    }

    /// Whether `name` is non-empty and uses only `A-Z a-z 0-9 _ . -`.
    pub(crate) fn valid(name: &str) -> bool {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    }

    /// Whether `name` is a built-in mode's.
    pub(crate) fn is_builtin(&self, name: &str) -> bool {
        self.builtin.contains(name)
    }

    /// Whether `name` is new in the file (it is seen from now on).
    pub(crate) fn first(&mut self, name: &str) -> bool {
        self.seen.insert(name.to_string())
    }
}

/// A known field whose value has the wrong TOML type (the TOML reader's own
/// message does not name the field).
fn wrong_type(table: &toml::Table) -> Option<Fault> {
    const STRINGS: [&str; 15] = [
        "name",
        "engine",
        "families",
        "description",
        "conventions",
        "opener",
        "closer",
        "separator",
        "typing",
        "tag_end",
        "name_attr",
        "key_attr",
        "ns",
        "namespace",
        "example",
    ];
    const PAIRS: [&str; 5] = ["section", "parameter", "key", "value", "json_body_tags"];
    const BOOLS: [&str; 7] = [
        "attr_entities",
        "bare_blocks",
        "json_body",
        "xml_text",
        "bare_start",
        "unbracketed",
        "json_lists",
    ];
    let strings = |v: &toml::Value| {
        v.as_array()
            .is_some_and(|a| a.iter().all(toml::Value::is_str))
    };
    table.iter().find_map(|(k, v)| {
        let k = k.as_str();
        if STRINGS.contains(&k) && !v.is_str() {
            Some(fault(k, format!("must be a string, not {}", v.type_str())))
        } else if BOOLS.contains(&k) && !v.is_bool() {
            Some(fault(
                k,
                format!("must be true or false, not {}", v.type_str()),
            ))
        } else if PAIRS.contains(&k) && !strings(v) {
            Some(fault(k, "must be a list of two strings: [opener, closer]"))
        } else if matches!(k, "openers" | "invoke_attrs") && !strings(v) {
            Some(fault(k, "must be a list of strings"))
        } else if k == "blocks" && !v.as_array().is_some_and(|a| a.iter().all(strings)) {
            Some(fault(
                k,
                "must be a list of [opener, closer] pairs of strings",
            ))
        } else if k == "stop_token" && !v.is_table() {
            Some(fault(
                k,
                "must be a table: { token = \"…\", stripped_by = \"…\" }",
            ))
        } else {
            None
        }
    })
}

/// The field a TOML reader's message is about (`unknown field `x``,
/// `missing field `x``), if it names one.
fn field_named(message: &str) -> Option<String> {
    ["unknown field `", "missing field `"]
        .iter()
        .find_map(|p| message.split_once(p))
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(field, _)| field.to_string())
}

/// The formats as extractors, in file order.
pub fn extractors(formats: Vec<Declared>) -> Vec<Box<dyn Extractor>> {
    formats
        .into_iter()
        .map(|f| Box::new(f) as Box<dyn Extractor>)
        .collect()
}

type Fault = (Option<String>, String);

fn fault(field: &str, message: impl Into<String>) -> Fault {
    (Some(field.to_string()), message.into())
}

/// A required, non-empty token.
fn token(field: &str, v: Option<String>, engine: &str) -> Result<String, Fault> {
    match v {
        None => Err(fault(field, format!("the {engine} engine needs `{field}`"))),
        Some(t) => non_empty(field, t),
    }
}

fn non_empty(field: &str, t: String) -> Result<String, Fault> {
    if t.trim().is_empty() {
        Err(fault(field, "must not be empty"))
    } else {
        Ok(t)
    }
}

/// An optional `[opener, closer]` pair of non-empty tokens.
fn pair(field: &str, v: Option<Vec<String>>) -> Result<Option<(String, String)>, Fault> {
    match v {
        None => Ok(None),
        Some(v) => match <[String; 2]>::try_from(v) {
            Ok([a, b]) => Ok(Some((non_empty(field, a)?, non_empty(field, b)?))),
            Err(_) => Err(fault(
                field,
                "must be a list of two tokens: [opener, closer]",
            )),
        },
    }
}

/// Fields the engine does not take must be absent.
fn absent(engine: &str, fields: &[(&str, bool)]) -> Result<(), Fault> {
    match fields.iter().find(|(_, given)| *given) {
        Some((field, _)) => Err(fault(
            field,
            format!("the {engine} engine does not take `{field}`"),
        )),
        None => Ok(()),
    }
}

/// `<tag name="PLACEHOLDER">` → `<tag ` (the prefix before the attribute
/// `attr`, in a tag that `tag_end` ends: `>`, or Kimi K3's `<|sep|>`).
fn attribute_prefix(tag: &str, attr: &str, placeholder: &str, tag_end: &str) -> Option<String> {
    for q in ['"', '\''] {
        let attr = format!("{attr}={q}{placeholder}{q}{tag_end}");
        if let Some(prefix) = tag.strip_suffix(&attr)
            && prefix.len() > 1
            && prefix.ends_with(char::is_whitespace)
            && !prefix.trim().is_empty()
            && if tag_end == ">" {
                prefix.starts_with('<') && !prefix[1..].contains(['<', '>'])
            } else {
                !prefix.contains(tag_end)
            }
        {
            return Some(prefix.to_string());
        }
    }
    None
}

/// `<function=PLACEHOLDER>` → `<function=` (a tag whose text after `=`
/// is the name or key itself, Qwen3-Coder's spelling): the prefix, ending
/// in `=`, without spaces or quotes.
fn function_prefix(tag: &str, placeholder: &str) -> Option<String> {
    let prefix = tag.strip_suffix('>')?.strip_suffix(placeholder)?;
    let inner = prefix.strip_prefix('<')?.strip_suffix('=')?;
    let plain = !inner.is_empty()
        && !inner
            .contains(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '='));
    plain.then(|| prefix.to_string())
}

/// The closers, missing-closer blocks and stream openers of a call pair
/// (`innermost` closers first), with the section's around them when the
/// format has one: its closer last, its pair and its opener first.
fn with_section(
    mut closers: Vec<String>,
    call: (String, String),
    section: Option<&(String, String)>,
) -> (Vec<String>, Vec<(String, String)>, Vec<String>) {
    let mut openers = vec![call.0.clone()];
    let mut blocks = vec![call];
    if let Some((o, c)) = section {
        closers.push(c.clone());
        blocks.insert(0, (o.clone(), c.clone()));
        openers.insert(0, o.clone());
    }
    (closers, blocks, openers)
}

/// What an engine arm of [`check`] decides: the row's facts and the engine
/// reading it. Transient: the row becomes a [`Format`], the reader the
/// extractor.
struct Built {
    engine: Engine,
    payload: PayloadKind,
    opener: String,
    separator: Option<String>,
    closers: Vec<String>,
    blocks: Vec<(String, String)>,
    parameter: Option<(String, String)>,
    openers: Vec<String>,
    /// Calls count only inside the section (when there is one): a
    /// candidate begins at the first of `openers` alone, else at any.
    section_only: bool,
    /// The wire shape for the default description.
    shown: String,
    conventions: &'static str,
    reader: Reader,
}

/// The engine configuration a declaration builds: the built-in rows' own.
enum Reader {
    Configured(Config<'static>),
    Pythonic(Pythonic),
}

/// `[opener, closer]` lists of a `blocks` field.
fn block_pairs(v: Vec<Vec<String>>) -> Result<Vec<(String, String)>, Fault> {
    v.into_iter()
        .map(|p| pair("blocks", Some(p)).map(|p| p.unwrap_or_default()))
        .collect()
}

fn check(raw: RawFormat) -> Result<Declared, Fault> {
    if !Names::valid(&raw.name) {
        return Err(fault(
            "name",
            "must be non-empty and use only A-Z a-z 0-9 _ . -",
        ));
    }
    let name = intern(&raw.name);
    let engine = raw.engine.as_str();
    let opener = non_empty("opener", raw.opener.clone())?;
    let closer = raw.closer.map(|c| non_empty("closer", c)).transpose()?;
    let separator = raw
        .separator
        .map(|s| non_empty("separator", s))
        .transpose()?;
    // A separator equal to the closer is found where the closer should be:
    // `<c>f|{…}` cut off after it would read as closed, so never truncated.
    if let Some((sep, close)) = separator.as_ref().zip(closer.as_ref())
        && sep == close
    {
        return Err(fault(
            "separator",
            format!(
                "`{sep}` is also the `closer`: the closer would be found at the separator, so a call cut off after it would not count as missing its closer"
            ),
        ));
    }
    let section = pair("section", raw.section)?;
    let parameter = pair("parameter", raw.parameter)?;
    let key = pair("key", raw.key)?;
    let value = pair("value", raw.value)?;
    let json_body_tags = pair("json_body_tags", raw.json_body_tags)?;
    // The separator, section and parameter tokens, which only some engines take.
    let token_flags = [
        ("separator", separator.is_some()),
        ("section", section.is_some()),
        ("parameter", parameter.is_some()),
        ("key", key.is_some()),
        ("value", value.is_some()),
    ];
    let attribute_flags = [
        ("typing", raw.typing.is_some()),
        ("tag_end", raw.tag_end.is_some()),
        ("name_attr", raw.name_attr.is_some()),
        ("key_attr", raw.key_attr.is_some()),
        ("invoke_attrs", raw.invoke_attrs.is_some()),
        ("attr_entities", raw.attr_entities.is_some()),
        ("ns", raw.ns.is_some()),
        ("json_body", raw.json_body.is_some()),
        ("json_body_tags", json_body_tags.is_some()),
        ("xml_text", raw.xml_text.is_some()),
    ];
    // Fields of one engine's one spelling each.
    let namespace_flag = [("namespace", raw.namespace.is_some())];
    let bare_flag = [("bare_blocks", raw.bare_blocks.is_some())];
    let pythonic_flags = [
        ("bare_start", raw.bare_start.is_some()),
        ("unbracketed", raw.unbracketed.is_some()),
        ("json_lists", raw.json_lists.is_some()),
    ];
    // A trailing `NAME` in the opener says "the tool name follows".
    let bare = |o: &str| o.strip_suffix("NAME").unwrap_or(o).to_string();
    // The section's tokens before and after the calls, for the display.
    let (before, after) = match &section {
        Some((o, c)) => (o.clone(), c.clone()),
        None => (String::new(), String::new()),
    };

    let built = match engine {
        "json_block" => {
            absent(engine, &token_flags)?;
            absent(engine, &attribute_flags)?;
            absent(engine, &pythonic_flags)?;
            absent(engine, &namespace_flag)?;
            absent(engine, &bare_flag)?;
            Built {
                engine: Engine::JsonBlock,
                payload: PayloadKind::JsonCall,
                shown: format!("{opener}{{call}}{}", closer.as_deref().unwrap_or("")),
                separator: None,
                closers: closer.iter().cloned().collect(),
                blocks: closer.iter().map(|c| (opener.clone(), c.clone())).collect(),
                parameter: None,
                openers: vec![opener.clone()],
                section_only: false,
                conventions: "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9)",
                reader: Reader::Configured(Config::JsonBlock(Marked {
                    name,
                    example: "",
                    describe: "",
                    blocks: vec![Block {
                        open: intern(&opener),
                        close: closer.as_deref().map(intern),
                        fenced: false,
                    }],
                    payload: Payload::Calls { sep: None },
                })),
                opener,
            }
        }
        "name_then_json" => {
            absent(
                engine,
                &[
                    ("parameter", parameter.is_some()),
                    ("key", key.is_some()),
                    ("value", value.is_some()),
                ],
            )?;
            absent(engine, &attribute_flags)?;
            absent(engine, &pythonic_flags)?;
            absent(engine, &bare_flag)?;
            // `NAME:INDEX`: the header is the name, a colon and a call
            // index (Kimi's `functions.get_weather:0`).
            let (head, indexed) = match opener.strip_suffix("NAME:INDEX") {
                Some(head) => (head.to_string(), true),
                None => (bare(&opener), false),
            };
            let namespace = raw
                .namespace
                .map(|n| non_empty("namespace", n))
                .transpose()?;
            let call = match &namespace {
                None => head,
                Some(ns) => head.strip_suffix(ns.as_str()).map(str::to_string).ok_or_else(|| {
                    fault(
                        "namespace",
                        "the opener names the namespace before the tool name, e.g. '<call>functions.NAME'",
                    )
                })?,
            };
            let call = non_empty("opener", call)?;
            let sep = token("separator", separator, engine)?;
            let call_end = token("closer", closer, engine)?;
            let ns = namespace.as_deref().unwrap_or("");
            let header = if indexed {
                intern(&format!("{ns}NAME:INDEX"))
            } else {
                "NAME (no whitespace)"
            };
            let (closers, blocks, openers) = with_section(
                vec![call_end.clone()],
                (call.clone(), call_end.clone()),
                section.as_ref(),
            );
            Built {
                engine: Engine::NameThenJson,
                payload: PayloadKind::JsonArguments,
                opener: format!("{before}{opener}"),
                shown: format!(
                    "{before}{call}{}{sep}{{arguments}}{call_end}{after}",
                    if indexed { header } else { "NAME" }
                ),
                closers,
                blocks,
                parameter: None,
                openers,
                section_only: false,
                conventions: "the tool name between opener and separator, then the JSON arguments object",
                reader: Reader::Configured(Config::NameJson(NameJson {
                    mode: name,
                    call: intern(&call),
                    args: intern(&sep),
                    call_end: intern(&call_end),
                    section: section.as_ref().map(|(o, _)| intern(o)),
                    section_end: section.as_ref().map(|(_, c)| intern(c)),
                    namespace: namespace.as_deref().map(intern),
                    name_of: if indexed { indexed_name } else { bare_name },
                    header,
                })),
                separator: Some(sep),
            }
        }
        "tagged_parameters" => {
            absent(engine, &pythonic_flags)?;
            absent(engine, &namespace_flag)?;
            let close = token("closer", closer, engine)?;
            match (parameter, key, value) {
                (Some((param_tag, param_end)), None, None) => {
                    absent(engine, &[("separator", separator.is_some())])?;
                    let function =
                        function_prefix(&opener, "NAME").zip(function_prefix(&param_tag, "KEY"));
                    // The call tag, the configuration, whether calls count
                    // only inside the section, and how the row reads.
                    let (call, config, only_in_section, row_separator, conventions) = match function
                    {
                        Some((function, param)) => {
                            absent(engine, &attribute_flags)?;
                            // Without a section every block is bare; with one,
                            // a block outside it counts only where
                            // `bare_blocks` says.
                            let bare = section.is_none() || raw.bare_blocks.unwrap_or(false);
                            let config = Config::FunctionXml(FunctionXml {
                                mode: name,
                                function: intern(&function),
                                function_end: intern(&close),
                                param: intern(&param),
                                param_end: intern(&param_end),
                                wrappers: intern_pairs(section.as_slice()),
                                bare,
                            });
                            (
                                function,
                                config,
                                false,
                                Some(param_tag.clone()),
                                "the tool name in the call tag; one tag per parameter naming its key; values typed by the tool schema",
                            )
                        }
                        None => {
                            absent(engine, &bare_flag)?;
                            let tag_end = match raw.tag_end {
                                Some(t) => non_empty("tag_end", t)?,
                                None => XML.tag_end.to_string(),
                            };
                            let name_attr = match raw.name_attr {
                                Some(a) => non_empty("name_attr", a)?,
                                None => XML.name_attr.to_string(),
                            };
                            let key_attr = match raw.key_attr {
                                Some(a) => non_empty("key_attr", a)?,
                                None => XML.key_attr.to_string(),
                            };
                            let invoke_attrs = raw
                                .invoke_attrs
                                .unwrap_or_default()
                                .into_iter()
                                .map(|a| non_empty("invoke_attrs", a))
                                .collect::<Result<Vec<_>, _>>()?;
                            let invoke = attribute_prefix(&opener, &name_attr, "NAME", &tag_end).ok_or_else(|| {
                                fault(
                                    "opener",
                                    "with `parameter`, the opener is a tag naming the tool in its name attribute, e.g. '<call name=\"NAME\">'",
                                )
                            })?;
                            // `['<KEY>', '</KEY>']`: each parameter an element named
                            // by its key (MiniMax-M3).
                            let element_params = param_tag == "<KEY>" && param_end == "</KEY>";
                            let (param, param_close) = if element_params {
                                ("<".to_string(), "</".to_string())
                            } else {
                                let param = attribute_prefix(&param_tag, &key_attr, "KEY", &tag_end).ok_or_else(|| {
                                    fault(
                                        "parameter",
                                        "the parameter opener is a tag naming the parameter in its name attribute, e.g. ['<arg name=\"KEY\">', '</arg>'], or ['<KEY>', '</KEY>'] for one element per parameter",
                                    )
                                })?;
                                (param, param_end.clone())
                            };
                            let ns = raw.ns.map(|t| non_empty("ns", t)).transpose()?;
                            let typing = match raw.typing.as_deref() {
                                None | Some("schema") => Typing::Schema,
                                Some("string_attr") => Typing::StringAttr,
                                Some("type_attr") => Typing::TypeAttr,
                                Some(other) => {
                                    return Err(fault(
                                        "typing",
                                        format!(
                                            "unknown typing `{other}`: one of schema, string_attr, type_attr"
                                        ),
                                    ));
                                }
                            };
                            let config = Config::Invoke(Syntax {
                                mode: name,
                                invoke: intern(&invoke),
                                invoke_end: intern(&close),
                                param: intern(&param),
                                param_end: intern(&param_close),
                                element_params,
                                ns: ns.as_deref().map(intern),
                                block: section.as_ref().map(|(o, c)| (intern(o), intern(c))),
                                typing,
                                tag_end: intern(&tag_end),
                                name_attr: intern(&name_attr),
                                key_attr: intern(&key_attr),
                                invoke_attrs: intern_strs(&invoke_attrs),
                                attr_entities: raw.attr_entities.unwrap_or(false),
                                json_body: raw.json_body.unwrap_or(false),
                                json_body_tags: json_body_tags
                                    .as_ref()
                                    .map(|(o, c)| (intern(o), intern(c))),
                                xml_text: raw.xml_text.unwrap_or(false),
                            });
                            (
                                invoke,
                                config,
                                true,
                                None,
                                "name attributes on the call and parameter tags; values typed by the tool schema",
                            )
                        }
                    };
                    let (closers, mut blocks, openers) = with_section(
                        vec![param_end.clone(), close.clone()],
                        (call, close.clone()),
                        section.as_ref(),
                    );
                    if only_in_section {
                        // An output cut inside a call is cut inside the
                        // section: the rule checks the section alone.
                        blocks.truncate(1);
                    }
                    Built {
                        engine: Engine::TaggedParameters,
                        payload: PayloadKind::TaggedValues,
                        opener: format!("{before}{opener}"),
                        separator: row_separator,
                        shown: format!("{before}{opener}{param_tag}v{param_end}{close}{after}"),
                        closers,
                        blocks,
                        openers,
                        section_only: only_in_section,
                        conventions,
                        reader: Reader::Configured(config),
                        parameter: Some((param_tag, param_end)),
                    }
                }
                (None, Some(key), Some(value)) => {
                    // `typing` is the one attribute-spelling field the
                    // key/value engine takes: `json` reads values as JSON
                    // first (HyperCLOVAX-SEED-Think's row).
                    let others: Vec<_> = attribute_flags
                        .iter()
                        .filter(|(f, _)| *f != "typing")
                        .copied()
                        .collect();
                    absent(engine, &others)?;
                    absent(engine, &bare_flag)?;
                    let json_values = match raw.typing.as_deref() {
                        None | Some("schema") => false,
                        Some("json") => true,
                        Some(other) => {
                            return Err(fault(
                                "typing",
                                format!(
                                    "unknown typing `{other}` for `key` and `value`: one of schema, json"
                                ),
                            ));
                        }
                    };
                    let open = non_empty("opener", bare(&opener))?;
                    for (field, t) in [
                        ("key", &key.0),
                        ("separator", separator.as_ref().unwrap_or(&key.0)),
                        ("closer", &close),
                    ] {
                        if !t.starts_with('<') {
                            return Err(fault(
                                field,
                                "with `key` and `value`, the tool name runs to the first `<`: the key opener, the separator and the closer must start with `<`",
                            ));
                        }
                    }
                    let (closers, blocks, openers) = with_section(
                        vec![value.1.clone(), close.clone()],
                        (open.clone(), close.clone()),
                        section.as_ref(),
                    );
                    let sep = separator.as_deref().unwrap_or("");
                    Built {
                        engine: Engine::TaggedParameters,
                        payload: PayloadKind::TaggedValues,
                        opener: format!("{before}{opener}"),
                        shown: format!(
                            "{before}{open}NAME{sep}{}k{}{}v{}{close}{after}",
                            key.0, key.1, value.0, value.1
                        ),
                        closers,
                        blocks,
                        openers,
                        section_only: separator.is_none(),
                        conventions: if json_values {
                            "the tool name after the opener; key/value pairs, values read as JSON first"
                        } else {
                            "the tool name after the opener; key/value pairs, values typed by the tool schema"
                        },
                        parameter: Some((
                            format!("{}KEY{}{}", key.0, key.1, value.0),
                            value.1.clone(),
                        )),
                        reader: Reader::Configured(Config::KeyValue(Tokens {
                            mode: name,
                            open: intern(&open),
                            close: intern(&close),
                            key: intern(&key.0),
                            key_end: intern(&key.1),
                            value: Some(intern(&value.0)),
                            value_end: intern(&value.1),
                            sep: separator.as_deref().map(intern),
                            block: section.as_ref().map(|(o, c)| (intern(o), intern(c))),
                            json_values,
                        })),
                        separator,
                    }
                }
                (None, None, None) => {
                    return Err(fault(
                        "parameter",
                        "the tagged_parameters engine needs `parameter` (attribute keys) or `key` and `value`",
                    ));
                }
                (Some(_), _, _) => {
                    return Err(fault(
                        "parameter",
                        "give either `parameter` or `key` and `value`, not both",
                    ));
                }
                (None, k, _) => {
                    let missing = if k.is_none() { "key" } else { "value" };
                    return Err(fault(missing, "`key` and `value` go together: give both"));
                }
            }
        }
        "pythonic" => {
            absent(engine, &token_flags)?;
            absent(engine, &attribute_flags)?;
            absent(engine, &namespace_flag)?;
            absent(engine, &bare_flag)?;
            let close = token("closer", closer, engine)?;
            let bare_start = raw.bare_start.unwrap_or(false);
            let unbracketed = raw.unbracketed.unwrap_or(false);
            let mut openers = vec![opener.clone()];
            if bare_start {
                openers.push("[".into());
            }
            Built {
                engine: Engine::Pythonic,
                payload: PayloadKind::PythonLiterals,
                shown: if unbracketed {
                    format!("{opener}f(a=1)\\ng(b='x'){close}")
                } else {
                    format!("{opener}[f(a=1), g(b='x')]{close}")
                },
                separator: Some(if unbracketed { "a line break" } else { "," }.into()),
                closers: vec![close.clone()],
                blocks: vec![(opener.clone(), close.clone())],
                parameter: None,
                openers,
                section_only: false,
                conventions: "Python-style calls with named arguments; Python and JSON literals",
                reader: Reader::Pythonic(Pythonic {
                    name,
                    example: "",
                    describe: "",
                    open: intern(&opener),
                    close: intern(&close),
                    bare_start,
                    unbracketed,
                    json_lists: raw.json_lists.unwrap_or(false),
                }),
                opener,
            }
        }
        other => {
            return Err(fault(
                "engine",
                format!(
                    "unknown engine `{other}`: one of {} (hand-written scanner formats cannot be declared)",
                    ENGINES.join(", ")
                ),
            ));
        }
    };
    let Built {
        engine: engine_kind,
        payload,
        opener: row_opener,
        separator,
        closers,
        mut blocks,
        parameter,
        mut openers,
        section_only,
        shown,
        conventions,
        reader,
    } = built;
    // A call whose closer is missing at the end of the output is
    // `truncation` in every engine. The tagged_parameters engine reports it
    // itself; the others rely on the missing-closer rule, so there the row's
    // own pairs (the call's, the section's) always count beside the declared
    // ones: replacing them turned the rule off (probe 44b: `<<call>>{…}`
    // cut off executed). A declared pair with the same closer whose opener
    // begins the row's stands for it (it sees every such cut too).
    if let Some(given) = raw.blocks {
        let given = block_pairs(given)?;
        let floor = if engine_kind == Engine::TaggedParameters {
            Vec::new()
        } else {
            blocks
        };
        blocks = floor
            .into_iter()
            .filter(|(o, c)| {
                !given
                    .iter()
                    .any(|(go, gc)| gc == c && o.starts_with(go.as_str()))
            })
            .collect();
        blocks.extend(given);
    }
    if let Some(given) = raw.openers {
        if given.is_empty() {
            return Err(fault(
                "openers",
                "must name at least one token (a candidate begins at one of them)",
            ));
        }
        let given: Vec<String> = given
            .into_iter()
            .map(|t| non_empty("openers", t))
            .collect::<Result<_, _>>()?;
        // Streaming forwards the text before the first opener: a token a
        // candidate can begin at that no given opener begins would send a
        // call out as text before it is judged (probe 44b).
        let starts = if section_only {
            &openers[..1]
        } else {
            &openers[..]
        };
        if let Some(missed) = starts
            .iter()
            .find(|t| !given.iter().any(|g| t.starts_with(g.as_str())))
        {
            return Err(fault(
                "openers",
                format!(
                    "a call can begin at `{missed}`, which no opener in the list begins: a stream would forward that call as text"
                ),
            ));
        }
        openers = given;
    }

    let stop_token = match raw.stop_token {
        None => None,
        Some(RawStop { token, stripped_by }) => {
            if closers.last() != Some(&token) {
                return Err(fault(
                    "stop_token",
                    format!(
                        "`{token}` is not the format's outermost closer ({}): only the last closing token can be stripped",
                        closers.last().map_or("none", String::as_str)
                    ),
                ));
            }
            if stripped_by.trim().is_empty() {
                return Err(fault(
                    "stop_token",
                    "`stripped_by` must name the serving stack that strips the token",
                ));
            }
            Some(StopToken {
                token: intern(&token),
                stripped_by: intern(&stripped_by),
            })
        }
    };
    let describe = intern(&raw.description.unwrap_or_else(|| {
        format!(
            "declared {engine} format: {}",
            shown.replace(['\n', '\r'], " ")
        )
    }));
    let example = intern(&raw.example);
    let format = Format {
        name,
        families: intern(raw.families.as_deref().unwrap_or("declared by the user")),
        engine: engine_kind,
        opener: intern(&row_opener),
        separator: separator.as_deref().map(intern),
        closers: intern_strs(&closers),
        blocks: intern_pairs(&blocks),
        parameter: parameter.as_ref().map(|(o, c)| (intern(o), intern(c))),
        openers: Some(intern_strs(&openers)),
        triggers: None,
        stop_token,
        payload,
        conventions: raw.conventions.as_deref().map_or(conventions, intern),
    };
    let inner: Box<dyn Extractor> = match reader {
        Reader::Configured(mut config) => {
            if let Config::JsonBlock(m) = &mut config {
                m.example = example;
                m.describe = describe;
            }
            Box::new(Configured {
                example,
                describe,
                config,
            })
        }
        Reader::Pythonic(mut p) => {
            p.example = example;
            p.describe = describe;
            Box::new(p)
        }
    };
    let declared = Declared {
        format,
        example,
        ruled: Ruled { inner, row: format },
    };
    check_example(&declared)?;
    Ok(declared)
}

/// The example must read as calls and nothing else: at least one candidate,
/// every one a call in the output (what `label` calls `pass` under a
/// toolset allowing them). With a stop token, the example without it must
/// read so too (the token may be stripped).
fn check_example(d: &Declared) -> Result<(), Fault> {
    let read = |text: &str| -> Result<(), String> {
        let found = d.extract(&Input::new(text), Strictness::Strict);
        if found.is_empty() {
            return Err("finds no call in it".into());
        }
        for c in &found {
            if let Err(f) = &c.arguments {
                return Err(format!(
                    "reads it as `{}` at byte {}: {}",
                    f.kind, f.offset, f.message
                ));
            }
            if c.source != Source::Output {
                return Err("finds its call only inside reasoning".into());
            }
        }
        Ok(())
    };
    if d.example.trim().is_empty() {
        return Err(fault("example", "must not be empty"));
    }
    read(d.example).map_err(|m| {
        fault(
            "example",
            format!("the declared format does not read its own example as a call (`pass`): it {m}"),
        )
    })?;
    if let Some(StopToken { token, .. }) = &d.format.stop_token {
        let trimmed = d.example.trim_end();
        let Some(cut) = trimmed.strip_suffix(token) else {
            return Err(fault(
                "example",
                format!("the example does not end with the stop token `{token}`"),
            ));
        };
        read(cut).map_err(|m| {
            fault(
                "stop_token",
                format!("without `{token}` the example is no longer a call (the engine cannot read a stripped closer here): it {m}"),
            )
        })?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_core::{FailureKind, Repair};

    /// A declaration of `tests/fixtures/declared_engines.toml`, by name.
    fn decl(name: &str) -> &'static str {
        const FILE: &str = include_str!("../tests/fixtures/declared_engines.toml");
        let line = format!("name = \"{name}\"");
        FILE.split("\n\n")
            .find(|t| t.starts_with("[[format]]") && t.lines().any(|l| l == line))
            .unwrap_or_else(|| panic!("no declaration named {name}"))
    }

    /// One declaration per engine.
    fn all() -> [&'static str; 5] {
        [
            "angle_call",
            "bracket_args",
            "acme_xml",
            "acme_kv",
            "acme_py",
        ]
        .map(decl)
    }

    fn one(file: &str) -> Declared {
        let mut all = load_formats(file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    fn run(d: &Declared, text: &str, s: Strictness, length: bool) -> Vec<Candidate> {
        let mut input = Input::new(text);
        input.hit_length_limit = length;
        d.extract(&input, s)
    }

    fn kind(d: &Declared, text: &str, s: Strictness, length: bool) -> Option<FailureKind> {
        let found = run(d, text, s, length);
        assert!(!found.is_empty(), "{}: nothing in {text}", d.name());
        found.iter().find_map(|c| c.failure().map(|f| f.kind))
    }

    fn err(file: &str) -> FormatError {
        match load_formats(file) {
            Ok(_) => panic!("accepted:\n{file}"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_engine_reads_its_example_and_truncates_without_each_closer() {
        for file in all() {
            let d = one(file);
            let found = run(&d, d.example, Strictness::Strict, false);
            assert_eq!(found.len(), 1, "{}", d.name());
            let call = found[0].call().unwrap();
            assert_eq!(call.name, "get_weather");
            assert_eq!(json!(call.arguments), json!({"city": "Antwerp"}));
            let row = d.row().unwrap();
            let cuts = crate::table::closer_cuts_of(d.example, &row.closers);
            assert_eq!(
                cuts.len(),
                row.closers.len(),
                "{}: {:?}",
                d.name(),
                row.closers
            );
            for cut in cuts {
                let text = &d.example[..cut];
                for length in [false, true] {
                    for s in [Strictness::Strict, Strictness::Lenient] {
                        assert_eq!(
                            kind(&d, text, s, length),
                            Some(FailureKind::Truncated),
                            "{}: {text}",
                            d.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn double_encoded_arguments_are_escaping_in_the_json_engines() {
        for (file, encoded) in [
            (
                decl("angle_call"),
                r#"<<call>>{"name": "get_weather", "arguments": "{\"city\": \"Antwerp\"}"}<</call>>"#,
            ),
            (
                decl("bracket_args"),
                r#"[CALLS][CALL]get_weather[ARGS]"{\"city\": \"Antwerp\"}"[/CALL][/CALLS]"#,
            ),
        ] {
            let d = one(file);
            assert_eq!(
                kind(&d, encoded, Strictness::Strict, false),
                Some(FailureKind::Escaping),
                "{}",
                d.name()
            );
            let found = run(&d, encoded, Strictness::Lenient, false);
            assert_eq!(found[0].call().unwrap().arguments["city"], "Antwerp");
            assert_eq!(found[0].repairs, vec![Repair::DoubleEncodedArguments]);
        }
    }

    #[test]
    fn malformed_json_and_values_running_into_the_next_parameter() {
        let d = one(decl("angle_call"));
        assert_eq!(
            kind(
                &d,
                r#"<<call>>{"name": "f", "arguments": {"a": }}<</call>>"#,
                Strictness::Strict,
                false
            ),
            Some(FailureKind::Malformed)
        );
        let d = one(decl("bracket_args"));
        assert_eq!(
            kind(
                &d,
                "[CALL]two words[ARGS]{}[/CALL]",
                Strictness::Strict,
                false
            ),
            Some(FailureKind::Malformed)
        );
        let d = one(decl("acme_xml"));
        let text = r#"<calls><call name="f"><arg name="a">1<arg name="b">2</arg></call></calls>"#;
        assert_eq!(
            kind(&d, text, Strictness::Strict, false),
            Some(FailureKind::Malformed)
        );
        let d = one(decl("acme_kv"));
        let text = "<fn>f<sep><k>a</k><v>1<k>b</k><v>2</v></fn>";
        assert_eq!(
            kind(&d, text, Strictness::Strict, false),
            Some(FailureKind::Malformed)
        );
    }

    /// Stop 49: `typing = "json"` is the key/value engine's `json_values`
    /// (the `hyperclovax_seed_think` row): a JSON string is its text, a
    /// bare word stays that word; without it the quotes stay.
    #[test]
    fn key_value_typing_json_reads_values_as_json_first() {
        let text = "<fn>f<sep><k>a</k><v>\"x y\"</v><k>b</k><v>word</v><k>c</k><v>[1]</v></fn>";
        let json = one(&decl("acme_kv").replace("closer =", "typing = \"json\"\ncloser ="));
        let found = run(&json, text, Strictness::Strict, false);
        assert_eq!(
            serde_json::json!(found[0].call().unwrap().arguments),
            serde_json::json!({"a": "x y", "b": "word", "c": [1]})
        );
        let schema = one(decl("acme_kv"));
        let found = run(&schema, text, Strictness::Strict, false);
        assert_eq!(found[0].call().unwrap().arguments["a"], "\"x y\"");
    }

    #[test]
    fn parallel_calls_prose_and_reasoning() {
        let d = one(decl("acme_xml"));
        let text = r#"Sure. <calls><call name="a"><arg name="x">1</arg></call><call name="b"></call></calls> Done."#;
        let found = run(&d, text, Strictness::Strict, false);
        let names: Vec<_> = found
            .iter()
            .map(|c| c.call().unwrap().name.clone())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let d = one(decl("angle_call"));
        let text = r#"<think><<call>>{"name": "f", "arguments": {}}<</call>></think>no call"#;
        let mut input = Input::new(text);
        input.reasoning = crate::reasoning::spans(text);
        let found = d.extract(&input, Strictness::Strict);
        assert_eq!(found[0].source, Source::OutputReasoning);
        // Prose mentioning the tokens is not a call.
        assert!(
            run(
                &one(decl("acme_kv")),
                "I like <fn> tags a lot",
                Strictness::Strict,
                false
            )
            .is_empty()
        );
    }

    #[test]
    fn a_declared_stop_token_may_be_missing_except_under_length() {
        let file = decl("angle_call").replace(
            "closer = \"<</call>>\"",
            "closer = \"<</call>>\"\nstop_token = { token = \"<</call>>\", stripped_by = \"acme-serve\" }",
        );
        let d = one(&file);
        let cut = r#"<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}"#;
        assert_eq!(kind(&d, cut, Strictness::Strict, false), None);
        assert_eq!(
            kind(&d, cut, Strictness::Strict, true),
            Some(FailureKind::Truncated)
        );
        // An output ending inside the JSON is cut whatever the stop token.
        assert_eq!(
            kind(&d, &cut[..cut.len() - 3], Strictness::Strict, false),
            Some(FailureKind::Truncated)
        );
        let row = d.row().unwrap();
        assert_eq!(
            row.stop_token,
            Some(("<</call>>".into(), "acme-serve".into()))
        );
    }

    #[test]
    fn rows_describe_the_declaration() {
        let row = one(decl("acme_xml")).row().unwrap();
        assert_eq!(row.engine, Engine::TaggedParameters);
        assert_eq!(row.payload, PayloadKind::TaggedValues);
        assert_eq!(row.opener, "<calls><call name=\"NAME\">");
        assert_eq!(row.closers, ["</arg>", "</call>", "</calls>"]);
        assert_eq!(
            row.parameter,
            Some(("<arg name=\"KEY\">".into(), "</arg>".into()))
        );
        let row = one(decl("acme_kv")).row().unwrap();
        assert_eq!(row.parameter, Some(("<k>KEY</k><v>".into(), "</v>".into())));
        assert_eq!(row.separator.as_deref(), Some("<sep>"));
        let row = one(decl("bracket_args")).row().unwrap();
        assert_eq!(
            (row.engine, row.payload),
            (Engine::NameThenJson, PayloadKind::JsonArguments)
        );
        assert_eq!(row.closers, ["[/CALL]", "[/CALLS]"]);
        assert_eq!(one(decl("angle_call")).row().unwrap().families, "Acme-7B");
    }

    #[test]
    fn a_pythonic_declaration_reads_lists_and_its_options() {
        let d = one(decl("acme_py"));
        let text = "Sure. <py>[get_weather(city='Antwerp'), f(a=1, b=[True, None])]</py>";
        let found = run(&d, text, Strictness::Strict, false);
        let calls: Vec<_> = found.iter().map(|c| c.call().unwrap().clone()).collect();
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(
            json!(calls[1].arguments),
            json!({"a": 1, "b": [true, null]})
        );
        // Closed while the list is open: the model ended the block early.
        assert_eq!(
            kind(
                &d,
                "<py>[get_weather(city='Antwerp')</py>",
                Strictness::Strict,
                false
            ),
            Some(FailureKind::Malformed)
        );
        let row = d.row().unwrap();
        assert_eq!(
            (row.engine, row.payload),
            (Engine::Pythonic, PayloadKind::PythonLiterals)
        );
        assert_eq!(row.blocks, [("<py>".to_string(), "</py>".to_string())]);
        assert_eq!(d.openers(), Some(&["<py>"][..]));
        // One call per line without brackets, a bare list at the start, a
        // JSON call list.
        let lines = one(&decl("acme_py")
            .replace("closer =", "unbracketed = true\ncloser =")
            .replace(
                "[get_weather(city='Antwerp')]",
                "get_weather(city='Antwerp')",
            ));
        let found = run(&lines, "<py>f(a=1)\ng(b=2)</py>", Strictness::Strict, false);
        assert_eq!(found.iter().filter(|c| c.call().is_some()).count(), 2);
        let bare = one(&decl("acme_py").replace("closer =", "bare_start = true\ncloser ="));
        assert_eq!(bare.openers(), Some(&["<py>", "["][..]));
        assert_eq!(run(&bare, "[f(a=1)]", Strictness::Strict, false).len(), 1);
        assert!(run(&d, "[f(a=1)]", Strictness::Strict, false).is_empty());
        let json_lists = one(&decl("acme_py").replace("closer =", "json_lists = true\ncloser ="));
        let text = r#"<py>[{"name": "f", "arguments": {"a": 1}}]</py>"#;
        assert_eq!(
            json!(
                run(&json_lists, text, Strictness::Strict, false)[0]
                    .call()
                    .unwrap()
                    .arguments
            ),
            json!({"a": 1})
        );
    }

    /// Probe 44b: a declared `blocks` replaced the row's own pairs, so a
    /// call cut off before its closer executed (the missing-closer rule
    /// checked only the declared pair).
    #[test]
    fn declared_blocks_keep_the_call_closer_missing_closer_rule() {
        let cases = [
            (
                "angle_call",
                "closer = \"<</call>>\"",
                r#"<<call>>{"name": "f", "arguments": {"a": 1}}"#,
            ),
            ("acme_py", "closer = \"</py>\"", "<py>[f(a=1)]"),
            // Its engine reports it; the declared pairs replace the row's.
            (
                "acme_xml",
                "closer = \"</call>\"",
                r#"<calls><call name="f"><arg name="a">1</arg>"#,
            ),
            (
                "bracket_args",
                "closer = \"[/CALL]\"",
                r#"[CALLS][CALL]f[ARGS]{"a": 1}"#,
            ),
        ];
        for (name, closer, cut) in cases {
            let file = decl(name).replace(
                closer,
                &format!("{closer}\nblocks = [[\"<<zzz>>\", \"<</zzz>>\"]]"),
            );
            let d = one(&file);
            assert!(
                d.row()
                    .unwrap()
                    .blocks
                    .contains(&("<<zzz>>".to_string(), "<</zzz>>".to_string())),
                "{name}"
            );
            assert_eq!(
                kind(&d, cut, Strictness::Strict, false),
                Some(FailureKind::Truncated),
                "{name}: {cut}"
            );
        }
    }

    /// Probe 44b: `openers = ["ZZZ"]` on a `<<call>>` format loaded, and
    /// `--stream` forwarded the whole call as text before judging it.
    #[test]
    fn declared_openers_must_begin_every_token_a_call_begins_at() {
        let with = |file: &str, closer: &str, openers: &str| {
            file.replace(closer, &format!("{closer}\nopeners = {openers}"))
        };
        let e = err(&with(
            decl("angle_call"),
            "closer = \"<</call>>\"",
            "[\"ZZZ\"]",
        ));
        assert_eq!(e.field.as_deref(), Some("openers"));
        assert!(
            e.to_string()
                .contains("a call can begin at `<<call>>`, which no opener in the list begins"),
            "{e}"
        );
        // The section's opener and the call's: both, where calls count
        // outside the section too.
        let e = err(&with(
            decl("bracket_args"),
            "closer = \"[/CALL]\"",
            "[\"[CALLS]\"]",
        ));
        assert!(e.to_string().contains("`[CALL]`"), "{e}");
        // A token that begins the opener holds the call from its start; an
        // attribute row's calls count only inside its section.
        let d = one(&with(
            decl("angle_call"),
            "closer = \"<</call>>\"",
            "[\"<<\"]",
        ));
        assert_eq!(d.openers(), Some(&["<<"][..]));
        let d = one(&with(
            decl("acme_xml"),
            "closer = \"</call>\"",
            "[\"<calls>\"]",
        ));
        assert_eq!(d.openers(), Some(&["<calls>"][..]));
    }

    #[test]
    fn rows_take_declared_blocks_openers_and_engine_options() {
        let file = decl("acme_xml")
            .replace("section = [\"<calls>\", \"</calls>\"]\n", "")
            .replace("<calls>", "")
            .replace("</calls>", "")
            .replace(
                "closer = \"</call>\"",
                "closer = \"</call>\"\nblocks = [[\"<call \", \"</call>\"]]\nopeners = [\"<call\"]\nxml_text = true",
            );
        let d = one(&file);
        assert_eq!(d.openers(), Some(&["<call"][..]));
        assert_eq!(
            d.row().unwrap().blocks,
            [("<call ".to_string(), "</call>".to_string())]
        );
        // XML text: entities decoded.
        let found = run(
            &d,
            r#"<call name="f"><arg name="a">x &amp; y</arg></call>"#,
            Strictness::Strict,
            false,
        );
        assert_eq!(
            json!(found[0].call().unwrap().arguments),
            json!({"a": "x & y"})
        );
        // The default openers: the section's and the call's.
        assert_eq!(
            one(decl("bracket_args")).openers(),
            Some(&["[CALLS]", "[CALL]"][..])
        );
        // A key/value section: calls count only inside it (no separator).
        let kv = one(&decl("acme_kv")
            .replace(
                "separator = \"<sep>\"\n",
                "section = [\"<all>\", \"</all>\"]\n",
            )
            .replace("<fn>get_weather<sep>", "<all><fn>get_weather")
            .replace("</fn>\"", "</fn></all>\""));
        assert!(run(&kv, "<fn>f<k>a</k><v>1</v></fn>", Strictness::Strict, false).is_empty());
        assert_eq!(
            run(
                &kv,
                "<all><fn>f<k>a</k><v>1</v></fn></all>",
                Strictness::Strict,
                false
            )
            .len(),
            1
        );
    }

    #[test]
    fn function_blocks_read_inside_the_section_and_bare_where_declared() {
        let d = one(decl("acme_fn"));
        let out = "<calls><fn=a><p=x>1</p></fn><fn=b></fn></calls>";
        let c = run(&d, out, Strictness::Strict, false);
        assert_eq!(c.len(), 2);
        assert_eq!(json!(c[0].call().unwrap().arguments), json!({"x": "1"}));
        assert_eq!((c[0].span.start, c[1].span.end), (0, out.len()));
        // A missing parameter closer is malformed, a cut section truncated.
        let out = "<calls><fn=a><p=x>1<p=y>2</p></fn></calls>";
        assert_eq!(
            kind(&d, out, Strictness::Strict, false),
            Some(FailureKind::Malformed)
        );
        let out = "<calls><fn=a><p=x>1";
        assert_eq!(
            kind(&d, out, Strictness::Strict, false),
            Some(FailureKind::Truncated)
        );
        // Outside the section a block is another format's, unless declared.
        assert!(run(&d, "<fn=a></fn>", Strictness::Strict, false).is_empty());
        let bare = one(&decl("acme_fn").replace("closer =", "bare_blocks = true\ncloser ="));
        let c = run(&bare, "<fn=a></fn>", Strictness::Strict, false);
        assert_eq!(c[0].call().unwrap().name, "a");
        let c = run(
            &bare,
            "<call><fn=a></fn></calls>",
            Strictness::Strict,
            false,
        );
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        let row = bare.row().unwrap();
        assert_eq!(row.closers, ["</p>", "</fn>", "</calls>"]);
        assert_eq!(
            row.blocks,
            [
                ("<calls>".into(), "</calls>".into()),
                ("<fn=".into(), "</fn>".into())
            ]
        );
        assert_eq!(bare.openers(), Some(&["<calls>", "<fn="][..]));
    }

    #[test]
    fn indexed_headers_name_the_tool_with_or_without_the_namespace() {
        let d = one(decl("acme_id"));
        let out = "<call>fn.a:0<args>{}</call><call>b:1<args>{\"k\": 1}</call>";
        let c = run(&d, out, Strictness::Strict, false);
        let names: Vec<String> = c.iter().map(|c| c.call().unwrap().name).collect();
        assert_eq!(names, ["a", "b"]);
        let c = run(&d, "<call>fn.a.0<args>{}</call>", Strictness::Strict, false);
        let f = c[0].failure().unwrap();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert_eq!(f.message, "call id `fn.a.0` is not `fn.NAME:INDEX`");
    }

    #[test]
    fn declaring_the_same_tokens_again_stores_nothing_new() {
        let (a, b) = (one(decl("acme_xml")), one(decl("acme_xml")));
        assert!(std::ptr::eq(a.format.opener, b.format.opener));
        assert!(std::ptr::eq(a.format.blocks, b.format.blocks));
        assert!(std::ptr::eq(a.example, b.example));
    }

    #[test]
    fn bad_declarations_name_the_format_and_the_field() {
        let cases: Vec<(String, Option<&str>, Option<&str>, &str)> = vec![
            (
                decl("angle_call").replace("engine = \"json_block\"", "engine = \"regex\""),
                Some("angle_call"),
                Some("engine"),
                "unknown engine `regex`",
            ),
            (
                decl("angle_call").replace("opener = \"<<call>>\"", "opener = \"\""),
                Some("angle_call"),
                Some("opener"),
                "must not be empty",
            ),
            (
                decl("angle_call").replace("name = \"angle_call\"", "name = \"hermes\""),
                Some("hermes"),
                Some("name"),
                "built-in mode",
            ),
            (
                decl("angle_call").replace("<</call>>'", "'"),
                Some("angle_call"),
                Some("example"),
                "does not read its own example as a call (`pass`): it reads it as `truncated`",
            ),
            (
                decl("angle_call").replace("{\"city\": \"Antwerp\"}", "\"{\\\"city\\\": 1}\""),
                Some("angle_call"),
                Some("example"),
                "reads it as `escaping`",
            ),
            (
                decl("angle_call").replace("example = '<<call>>", "example = '<call>"),
                Some("angle_call"),
                Some("example"),
                "finds no call in it",
            ),
            (
                decl("bracket_args").replace("separator = \"[ARGS]\"\n", ""),
                Some("bracket_args"),
                Some("separator"),
                "needs `separator`",
            ),
            (
                // The closer would be found at the separator: `[CALL]f[/CALL]{…}`
                // cut off would never miss its closer (probe 44b).
                decl("bracket_args").replace("closer = \"[/CALL]\"", "closer = \"[ARGS]\""),
                Some("bracket_args"),
                Some("separator"),
                "`[ARGS]` is also the `closer`",
            ),
            (
                decl("angle_call").replace("closer =", "separator = \";\"\ncloser ="),
                Some("angle_call"),
                Some("separator"),
                "does not take `separator`",
            ),
            (
                decl("acme_xml").replace("opener = '<call name=\"NAME\">'", "opener = '<call>'"),
                Some("acme_xml"),
                Some("opener"),
                "name attribute",
            ),
            (
                decl("acme_kv").replace("value = [\"<v>\", \"</v>\"]\n", ""),
                Some("acme_kv"),
                Some("value"),
                "go together",
            ),
            (
                decl("acme_kv").replace("closer = \"</fn>\"", "closer = \"</fn>\"\nstop_token = { token = \"</fn>\", stripped_by = \"x\" }"),
                Some("acme_kv"),
                Some("stop_token"),
                "no longer a call",
            ),
            (
                decl("acme_xml").replace("closer = \"</call>\"", "closer = \"</call>\"\nstop_token = { token = \"</call>\", stripped_by = \"x\" }"),
                Some("acme_xml"),
                Some("stop_token"),
                "not the format's outermost closer",
            ),
            (
                format!("{0}\n{0}", decl("angle_call")),
                Some("angle_call"),
                Some("name"),
                "same name",
            ),
            (
                decl("angle_call").replace("families", "family"),
                Some("angle_call"),
                Some("family"),
                "unknown field `family`",
            ),
            (
                decl("angle_call").replace("example =", "# example ="),
                Some("angle_call"),
                Some("example"),
                "missing field `example`",
            ),
            (
                decl("angle_call").replace("closer = \"<</call>>\"", "closer = 3"),
                Some("angle_call"),
                Some("closer"),
                "field `closer`: must be a string, not integer",
            ),
            (
                decl("acme_xml").replace("closer =", "typing = \"json\"\ncloser ="),
                Some("acme_xml"),
                Some("typing"),
                "unknown typing `json`",
            ),
            (
                decl("acme_kv").replace("closer =", "typing = \"string_attr\"\ncloser ="),
                Some("acme_kv"),
                Some("typing"),
                "unknown typing `string_attr` for `key` and `value`: one of schema, json",
            ),
            (
                decl("acme_kv").replace("closer =", "name_attr = \"tool\"\ncloser ="),
                Some("acme_kv"),
                Some("name_attr"),
                "does not take `name_attr`",
            ),
            (
                decl("acme_xml").replace("closer =", "tag_end = \"<|sep|>\"\ncloser ="),
                Some("acme_xml"),
                Some("opener"),
                "name attribute",
            ),
            (
                decl("acme_kv").replace("closer =", "ns = \"]<]x[>[\"\ncloser ="),
                Some("acme_kv"),
                Some("ns"),
                "does not take `ns`",
            ),
            (
                decl("acme_xml").replace("closer =", "invoke_attrs = [1]\ncloser ="),
                Some("acme_xml"),
                Some("invoke_attrs"),
                "must be a list of strings",
            ),
            (
                decl("acme_kv").replace("closer =", "xml_text = true\ncloser ="),
                Some("acme_kv"),
                Some("xml_text"),
                "does not take `xml_text`",
            ),
            (
                decl("angle_call").replace("closer =", "bare_start = true\ncloser ="),
                Some("angle_call"),
                Some("bare_start"),
                "does not take `bare_start`",
            ),
            (
                decl("acme_py").replace("closer = \"</py>\"\n", ""),
                Some("acme_py"),
                Some("closer"),
                "needs `closer`",
            ),
            (
                decl("acme_py").replace("closer =", "separator = \",\"\ncloser ="),
                Some("acme_py"),
                Some("separator"),
                "does not take `separator`",
            ),
            (
                decl("acme_py").replace("closer =", "unbracketed = \"yes\"\ncloser ="),
                Some("acme_py"),
                Some("unbracketed"),
                "must be true or false, not string",
            ),
            (
                decl("angle_call").replace("closer =", "openers = []\ncloser ="),
                Some("angle_call"),
                Some("openers"),
                "at least one token",
            ),
            (
                decl("angle_call").replace("closer =", "blocks = [[\"<<call>>\"]]\ncloser ="),
                Some("angle_call"),
                Some("blocks"),
                "two tokens",
            ),
            (
                decl("angle_call").replace("closer =", "blocks = [\"<<call>>\"]\ncloser ="),
                Some("angle_call"),
                Some("blocks"),
                "pairs of strings",
            ),
            (
                decl("acme_id").replace("namespace = \"fn.\"", "namespace = \"ns.\""),
                Some("acme_id"),
                Some("namespace"),
                "names the namespace before the tool name",
            ),
            (
                decl("angle_call").replace("closer =", "namespace = \"fn.\"\ncloser ="),
                Some("angle_call"),
                Some("namespace"),
                "does not take",
            ),
            (
                decl("acme_xml").replace("closer =", "bare_blocks = true\ncloser ="),
                Some("acme_xml"),
                Some("bare_blocks"),
                "does not take",
            ),
            (
                decl("acme_fn").replace("closer =", "bare_blocks = 1\ncloser ="),
                Some("acme_fn"),
                Some("bare_blocks"),
                "true or false",
            ),
            (
                decl("acme_fn").replace("closer =", "typing = \"type_attr\"\ncloser ="),
                Some("acme_fn"),
                Some("typing"),
                "does not take",
            ),
            ("[[format]\n".to_string(), None, None, ""),
        ];
        for (file, format, field, needle) in cases {
            let e = err(&file);
            assert_eq!(e.format.as_deref(), format, "{e}");
            assert_eq!(e.field.as_deref(), field, "{e}");
            assert!(e.to_string().contains(needle), "{e}");
        }
        let e = err(&decl("angle_call").replace("opener = \"<<call>>\"", "opener = \"\""));
        assert_eq!(
            e.to_string(),
            "format `angle_call`: field `opener`: must not be empty"
        );
    }

    #[test]
    fn raw_text_stays_linear_over_many_cut_calls() {
        for file in all() {
            let d = one(file);
            let row = d.row().unwrap();
            let cut = crate::table::closer_cuts_of(d.example, &row.closers)[0];
            let out = d.example[..cut].repeat(2000);
            for s in [Strictness::Strict, Strictness::Lenient] {
                let found = d.extract(&Input::new(&out), s);
                let raw: usize = found.iter().map(|c| c.raw.len()).sum();
                assert!(raw <= 2 * out.len(), "{}: {raw} raw bytes", d.name());
                // Earlier calls may have ended at the next opener; the last
                // one is cut.
                assert!(found.last().unwrap().call().is_none(), "{}", d.name());
            }
        }
    }

    /// Pieces of every declared spelling above, so random outputs hit the
    /// engines' corners with user tokens (cut tags, missing closers, nesting).
    const PIECES: [&str; 28] = [
        "<py>",
        "</py>",
        "[f(a='x\\n'",
        ", g(b=[1, None]))]",
        "<<call>>",
        "<</call>>",
        "[CALLS]",
        "[/CALLS]",
        "[CALL]",
        "[ARGS]",
        "[/CALL]",
        "<calls>",
        "</calls>",
        "<call name=\"f\">",
        "</call>",
        "<arg name=\"a\">",
        "</arg>",
        "<fn>",
        "f",
        "<sep>",
        "<k>",
        "</k>",
        "<v>",
        "</v>",
        "</fn>",
        "{\"name\": \"f\", \"arguments\": {\"a\": [1, \"x\"]}}",
        "\"{\\\"a\\\": 1}\"",
        "<think>é\n ",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        #[test]
        fn never_panics_and_spans_stay_in_bounds(
            idx in proptest::collection::vec(0usize..PIECES.len(), 0..40),
            length in proptest::bool::ANY,
        ) {
            let out: String = idx.iter().map(|i| PIECES[*i]).collect();
            for file in all() {
                let d = one(file);
                for s in [Strictness::Strict, Strictness::Lenient] {
                    let mut input = Input::new(&out);
                    input.hit_length_limit = length;
                    input.reasoning = crate::reasoning::spans(&out);
                    for c in d.extract(&input, s) {
                        proptest::prop_assert!(c.span.start <= c.span.end && c.span.end <= out.len());
                        proptest::prop_assert_eq!(&*c.mode, d.name());
                    }
                }
            }
        }
    }
}
