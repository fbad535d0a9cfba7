//! User-declared formats (issue 8 item 4): a new model's wire format written
//! as a row of the [format table](crate::table) in TOML, read by the same
//! engines as the built-in rows, with the same failure classification, the
//! same [missing-closer rule](crate::rules) and the same linear time. No
//! regex: a declaration names an engine and its tokens.
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
//! engine = "json_block"              # json_block | name_then_json | tagged_parameters
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
//! | `section` | `name_then_json`, `tagged_parameters` attribute | `[opener, closer]` of the block holding the calls |
//! | `parameter` | `tagged_parameters` attribute | `['<arg name="KEY">', '</arg>']` |
//! | `key`, `value` | `tagged_parameters` key/value | `["<k>", "</k>"]`, `["<v>", "</v>"]` |
//! | `stop_token` | `json_block`, `name_then_json`, attribute `section` | `{ token = "…", stripped_by = "…" }`: the outermost closer, which a serving stack strips; it may be missing except under `finish_reason: "length"` |
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
//!   arguments object, the closer: the engine of `kimi`. A call whose closer
//!   is missing ends at the next opener or the section's closer.
//! - **`tagged_parameters`** — parameters as markup, values typed by the tool
//!   schema (SPEC §9), in one of two spellings:
//!   - *attribute*: `opener = '<call name="NAME">'` and `parameter =
//!     ['<arg name="KEY">', '</arg>']` — the engine of `atem`, `minimax_m2`,
//!     `step3`, `minicpm5`, `deepseek_dsml`;
//!   - *key/value*: `opener = "<call>"` (the tool name follows it as text),
//!     `key = ["<k>", "</k>"]`, `value = ["<v>", "</v>"]` and optionally a
//!     `separator` after the name — the engine of `glm`, `hunyuan`,
//!     `longcat_xml`. Its tokens start with `<` (the name runs to the first
//!     `<`).
//!
//! In every engine: a call whose closer is missing at the end of the output
//! is `truncation` (a declared `stop_token` excepted, never under
//! `finish_reason: "length"`); double-encoded arguments
//! (`"arguments": "{\"city\": …}"`) are `escaping` (`escaping_error`), the
//! lenient replay decodes them and records the repair; JSON that does not
//! read is `malformed`; a tagged value that runs into the next parameter's
//! markup is `malformed`. Each engine is linear in the output.
//!
//! Streaming: a declared format has no opener list for the hold-back
//! ([`crate::openers`]), so a stream judged by one holds the whole output,
//! as for a regex pattern.
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
//! use toolgate_formats::{Input, Strictness, declared};
//! let file = r#"
//! [[format]]
//! name = "angle_call"
//! engine = "json_block"
//! opener = "<<call>>"
//! closer = "<</call>>"
//! example = '<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}<</call>>'
//! "#;
//! let modes = declared::extractors(declared::load_formats(file).unwrap());
//! let cut = r#"<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}"#;
//! let found = modes[0].extract(&Input::new(cut), Strictness::Strict);
//! assert_eq!(found[0].failure().unwrap().kind, toolgate_core::FailureKind::Truncated);
//! ```

use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use toolgate_core::{Candidate, Source};

use crate::families::configured::Config;
use crate::families::jsonlike::marked::{Block, Marked, Payload};
use crate::families::tagged::glm::Tokens;
use crate::families::tagged::invoke::{Syntax, XML};
use crate::families::tagged::name_json::{NameJson, bare_name};
use crate::table::{Engine, PayloadKind, Row};
use crate::{Extractor, Input, Strictness, rules};

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
pub const ENGINES: [&str; 3] = ["json_block", "name_then_json", "tagged_parameters"];

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
    stop_token: Option<RawStop>,
    example: String,
}

/// How a declared format is read: the configuration of one built-in engine,
/// with owned tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Shape {
    /// `families::jsonlike::marked`.
    JsonBlock { open: String, close: Option<String> },
    /// `families::tagged::name_json`.
    NameJson {
        call: String,
        sep: String,
        call_end: String,
        section_end: Option<String>,
    },
    /// `families::tagged::glm`.
    KeyValue {
        open: String,
        close: String,
        key: (String, String),
        value: (String, String),
        sep: Option<String>,
    },
    /// `families::tagged::invoke`.
    Attribute {
        invoke: String,
        invoke_end: String,
        param: String,
        param_end: String,
        block: Option<(String, String)>,
    },
}

/// A loaded, checked format declaration. It is an [`Extractor`] whose mode
/// name is its `name`; [`Extractor::row`] gives its row.
#[derive(Clone, Debug)]
pub struct Declared {
    row: Row,
    describe: String,
    example: String,
    shape: Shape,
}

impl Declared {
    /// The format's (mode) name.
    pub fn name(&self) -> &str {
        &self.row.name
    }
}

impl Extractor for Declared {
    fn name(&self) -> &str {
        &self.row.name
    }
    fn example(&self) -> &str {
        &self.example
    }
    fn describe(&self) -> &str {
        &self.describe
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        let name = self.row.name.as_str();
        let config = match &self.shape {
            Shape::JsonBlock { open, close } => Config::JsonBlock(Marked {
                name,
                example: &self.example,
                describe: &self.describe,
                blocks: vec![Block {
                    open,
                    close: close.as_deref(),
                    fenced: false,
                }],
                payload: Payload::Calls { sep: None },
            }),
            Shape::NameJson {
                call,
                sep,
                call_end,
                section_end,
            } => Config::NameJson(NameJson {
                mode: name,
                call,
                args: sep,
                call_end,
                section_end: section_end.as_deref(),
                name_of: bare_name,
                header: "NAME (no whitespace)",
            }),
            Shape::KeyValue {
                open,
                close,
                key,
                value,
                sep,
            } => Config::KeyValue(Tokens {
                mode: name,
                open,
                close,
                key: &key.0,
                key_end: &key.1,
                value: &value.0,
                value_end: &value.1,
                sep: sep.as_deref(),
                block: None,
            }),
            Shape::Attribute {
                invoke,
                invoke_end,
                param,
                param_end,
                block,
            } => Config::Invoke(Syntax {
                mode: name,
                invoke,
                invoke_end,
                param,
                param_end,
                block: block.as_ref().map(|(o, c)| (o.as_str(), c.as_str())),
                json_body: false,
                xml_text: false,
                ..XML
            }),
        };
        // The same engine code as the built-in rows, then the same rule.
        let mut found = config.extract(input, strictness);
        rules::missing_closer_of(
            self.row
                .blocks
                .iter()
                .map(|(o, c)| (o.as_str(), c.as_str())),
            self.row.stop_token.as_ref().map(|(t, _)| t.as_str()),
            self.row.payload.reads_json_arguments(),
            input,
            &mut found,
        );
        found
    }
    fn row(&self) -> Option<Row> {
        Some(self.row.clone())
    }
}

/// Loads and checks a formats file (see the module docs).
pub fn load_formats(text: &str) -> Result<Vec<Declared>, FormatError> {
    let file: RawFile = toml::from_str(text).map_err(|e| FormatError {
        format: None,
        field: None,
        message: e.message().to_string(),
    })?;
    let builtin: HashSet<String> = crate::builtin()
        .iter()
        .map(|e| e.name().to_string())
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(file.format.len());
    for (i, table) in file.format.into_iter().enumerate() {
        let label = table
            .get("name")
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| format!("#{}", i + 1));
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
        if builtin.contains(&raw.name) {
            return Err(with_label((
                Some("name".into()),
                format!(
                    "`{}` is a built-in mode's name (see `toolgate formats`); choose another",
                    raw.name
                ),
            )));
        }
        if !seen.insert(raw.name.clone()) {
            return Err(with_label((
                Some("name".into()),
                "another format in the file has the same name".into(),
            )));
        }
        out.push(check(raw).map_err(with_label)?);
    }
    Ok(out)
}

/// A known field whose value has the wrong TOML type (the TOML reader's own
/// message does not name the field).
fn wrong_type(table: &toml::Table) -> Option<Fault> {
    const STRINGS: [&str; 9] = [
        "name",
        "engine",
        "families",
        "description",
        "conventions",
        "opener",
        "closer",
        "separator",
        "example",
    ];
    const PAIRS: [&str; 4] = ["section", "parameter", "key", "value"];
    table.iter().find_map(|(k, v)| {
        let k = k.as_str();
        if STRINGS.contains(&k) && !v.is_str() {
            Some(fault(k, format!("must be a string, not {}", v.type_str())))
        } else if PAIRS.contains(&k)
            && !v
                .as_array()
                .is_some_and(|a| a.iter().all(toml::Value::is_str))
        {
            Some(fault(k, "must be a list of two strings: [opener, closer]"))
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

/// `<tag name="PLACEHOLDER">` → `<tag ` (the prefix before the attribute).
fn attribute_prefix(tag: &str, placeholder: &str) -> Option<String> {
    for q in ['"', '\''] {
        let attr = format!("name={q}{placeholder}{q}>");
        if let Some(prefix) = tag.strip_suffix(&attr)
            && prefix.starts_with('<')
            && prefix.len() > 1
            && prefix.ends_with(char::is_whitespace)
            && !prefix[1..].contains(['<', '>'])
        {
            return Some(prefix.to_string());
        }
    }
    None
}

fn check(raw: RawFormat) -> Result<Declared, Fault> {
    let valid_name = !raw.name.is_empty()
        && raw
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if !valid_name {
        return Err(fault(
            "name",
            "must be non-empty and use only A-Z a-z 0-9 _ . -",
        ));
    }
    let engine = raw.engine.as_str();
    let opener = non_empty("opener", raw.opener.clone())?;
    let closer = raw.closer.map(|c| non_empty("closer", c)).transpose()?;
    let separator = raw
        .separator
        .map(|s| non_empty("separator", s))
        .transpose()?;
    let section = pair("section", raw.section)?;
    let parameter = pair("parameter", raw.parameter)?;
    let key = pair("key", raw.key)?;
    let value = pair("value", raw.value)?;
    // A trailing `NAME` in the opener says "the tool name follows".
    let bare = |o: &str| o.strip_suffix("NAME").unwrap_or(o).to_string();

    let (shown_section, shown_opener) = (section.clone(), opener.clone());
    let (shape, engine_kind, payload, row_opener, closers, blocks, row_parameter) = match engine {
        "json_block" => {
            absent(
                engine,
                &[
                    ("separator", separator.is_some()),
                    ("section", section.is_some()),
                    ("parameter", parameter.is_some()),
                    ("key", key.is_some()),
                    ("value", value.is_some()),
                ],
            )?;
            let closers: Vec<String> = closer.iter().cloned().collect();
            let blocks = closer.iter().map(|c| (opener.clone(), c.clone())).collect();
            (
                Shape::JsonBlock {
                    open: opener.clone(),
                    close: closer,
                },
                Engine::JsonBlock,
                PayloadKind::JsonCall,
                opener,
                closers,
                blocks,
                None,
            )
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
            let call = non_empty("opener", bare(&opener))?;
            let sep = token("separator", separator, engine)?;
            let call_end = token("closer", closer, engine)?;
            let mut closers = vec![call_end.clone()];
            let mut blocks = vec![(call.clone(), call_end.clone())];
            if let Some((o, c)) = &section {
                closers.push(c.clone());
                blocks.insert(0, (o.clone(), c.clone()));
            }
            let row_opener = match &section {
                Some((o, _)) => format!("{o}{opener}"),
                None => opener.clone(),
            };
            (
                Shape::NameJson {
                    call,
                    sep,
                    call_end,
                    section_end: section.map(|(_, c)| c),
                },
                Engine::NameThenJson,
                PayloadKind::JsonArguments,
                row_opener,
                closers,
                blocks,
                None,
            )
        }
        "tagged_parameters" => {
            let close = token("closer", closer, engine)?;
            match (parameter, key, value) {
                (Some((param_tag, param_end)), None, None) => {
                    absent(engine, &[("separator", separator.is_some())])?;
                    let invoke = attribute_prefix(&opener, "NAME").ok_or_else(|| {
                        fault(
                            "opener",
                            "with `parameter`, the opener is a tag naming the tool in its name attribute, e.g. '<call name=\"NAME\">'",
                        )
                    })?;
                    let param = attribute_prefix(&param_tag, "KEY").ok_or_else(|| {
                        fault(
                            "parameter",
                            "the parameter opener is a tag naming the parameter in its name attribute, e.g. ['<arg name=\"KEY\">', '</arg>']",
                        )
                    })?;
                    let mut closers = vec![param_end.clone(), close.clone()];
                    let mut blocks = vec![(invoke.clone(), close.clone())];
                    if let Some((o, c)) = &section {
                        closers.push(c.clone());
                        blocks.insert(0, (o.clone(), c.clone()));
                    }
                    let row_opener = match &section {
                        Some((o, _)) => format!("{o}{opener}"),
                        None => opener.clone(),
                    };
                    (
                        Shape::Attribute {
                            invoke,
                            invoke_end: close,
                            param,
                            param_end: param_end.clone(),
                            block: section,
                        },
                        Engine::TaggedParameters,
                        PayloadKind::TaggedValues,
                        row_opener,
                        closers,
                        blocks,
                        Some((param_tag, param_end)),
                    )
                }
                (None, Some(key), Some(value)) => {
                    absent(engine, &[("section", section.is_some())])?;
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
                    let closers = vec![value.1.clone(), close.clone()];
                    let blocks = vec![(open.clone(), close.clone())];
                    let row_parameter =
                        (format!("{}KEY{}{}", key.0, key.1, value.0), value.1.clone());
                    (
                        Shape::KeyValue {
                            open,
                            close,
                            key,
                            value,
                            sep: separator,
                        },
                        Engine::TaggedParameters,
                        PayloadKind::TaggedValues,
                        opener,
                        closers,
                        blocks,
                        Some(row_parameter),
                    )
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
        other => {
            return Err(fault(
                "engine",
                format!(
                    "unknown engine `{other}`: one of {} (pythonic and hand-written scanner formats cannot be declared)",
                    ENGINES.join(", ")
                ),
            ));
        }
    };

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
            Some((token, stripped_by))
        }
    };

    let conventions = raw.conventions.unwrap_or_else(|| {
        match shape {
            Shape::JsonBlock { .. } => "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9)",
            Shape::NameJson { .. } => "the tool name between opener and separator, then the JSON arguments object",
            Shape::KeyValue { .. } => "the tool name after the opener; key/value pairs, values typed by the tool schema",
            Shape::Attribute { .. } => "name attributes on the call and parameter tags; values typed by the tool schema",
        }
        .to_string()
    });
    let describe = raw.description.unwrap_or_else(|| {
        let (before, after) = match &shown_section {
            Some((o, c)) => (o.as_str(), c.as_str()),
            None => ("", ""),
        };
        let shown = match &shape {
            Shape::JsonBlock { open, close } => {
                format!("{open}{{call}}{}", close.as_deref().unwrap_or(""))
            }
            Shape::NameJson {
                call,
                sep,
                call_end,
                ..
            } => format!("{before}{call}NAME{sep}{{arguments}}{call_end}{after}"),
            Shape::KeyValue {
                open,
                close,
                key,
                value,
                sep,
            } => format!(
                "{open}NAME{}{}k{}{}v{}{close}",
                sep.as_deref().unwrap_or(""),
                key.0,
                key.1,
                value.0,
                value.1
            ),
            Shape::Attribute {
                invoke_end,
                param_end,
                ..
            } => {
                let tag = row_parameter.as_ref().map_or("", |(t, _)| t.as_str());
                format!("{before}{shown_opener}{tag}v{param_end}{invoke_end}{after}")
            }
        };
        format!(
            "declared {engine} format: {}",
            shown.replace(['\n', '\r'], " ")
        )
    });
    let declared = Declared {
        row: Row {
            name: raw.name,
            families: raw
                .families
                .unwrap_or_else(|| "declared by the user".to_string()),
            engine: engine_kind,
            opener: row_opener,
            separator: match &shape {
                Shape::NameJson { sep, .. } => Some(sep.clone()),
                Shape::KeyValue { sep, .. } => sep.clone(),
                _ => None,
            },
            closers,
            blocks,
            parameter: row_parameter,
            stop_token,
            payload,
            conventions,
        },
        describe,
        example: raw.example,
        shape,
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
    read(&d.example).map_err(|m| {
        fault(
            "example",
            format!("the declared format does not read its own example as a call (`pass`): it {m}"),
        )
    })?;
    if let Some((token, _)) = &d.row.stop_token {
        let trimmed = d.example.trim_end();
        let Some(cut) = trimmed.strip_suffix(token.as_str()) else {
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

    const JSON_BLOCK: &str = r#"
[[format]]
name = "angle_call"
engine = "json_block"
families = "Acme-7B"
opener = "<<call>>"
closer = "<</call>>"
example = '<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}<</call>>'
"#;

    const NAME_JSON: &str = r#"
[[format]]
name = "bracket_args"
engine = "name_then_json"
section = ["[CALLS]", "[/CALLS]"]
opener = "[CALL]"
separator = "[ARGS]"
closer = "[/CALL]"
example = '[CALLS][CALL]get_weather[ARGS]{"city": "Antwerp"}[/CALL][/CALLS]'
"#;

    const ATTRIBUTE: &str = r#"
[[format]]
name = "acme_xml"
engine = "tagged_parameters"
section = ["<calls>", "</calls>"]
opener = '<call name="NAME">'
closer = "</call>"
parameter = ['<arg name="KEY">', "</arg>"]
example = '<calls><call name="get_weather"><arg name="city">Antwerp</arg></call></calls>'
"#;

    const KEY_VALUE: &str = r#"
[[format]]
name = "acme_kv"
engine = "tagged_parameters"
opener = "<fn>"
separator = "<sep>"
closer = "</fn>"
key = ["<k>", "</k>"]
value = ["<v>", "</v>"]
example = "<fn>get_weather<sep><k>city</k><v>Antwerp</v></fn>"
"#;

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
        for file in [JSON_BLOCK, NAME_JSON, ATTRIBUTE, KEY_VALUE] {
            let d = one(file);
            let found = run(&d, &d.example, Strictness::Strict, false);
            assert_eq!(found.len(), 1, "{}", d.name());
            let call = found[0].call().unwrap();
            assert_eq!(call.name, "get_weather");
            assert_eq!(json!(call.arguments), json!({"city": "Antwerp"}));
            let row = d.row().unwrap();
            let cuts = crate::table::closer_cuts_of(&d.example, &row.closers);
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
                JSON_BLOCK,
                r#"<<call>>{"name": "get_weather", "arguments": "{\"city\": \"Antwerp\"}"}<</call>>"#,
            ),
            (
                NAME_JSON,
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
        let d = one(JSON_BLOCK);
        assert_eq!(
            kind(
                &d,
                r#"<<call>>{"name": "f", "arguments": {"a": }}<</call>>"#,
                Strictness::Strict,
                false
            ),
            Some(FailureKind::Malformed)
        );
        let d = one(NAME_JSON);
        assert_eq!(
            kind(
                &d,
                "[CALL]two words[ARGS]{}[/CALL]",
                Strictness::Strict,
                false
            ),
            Some(FailureKind::Malformed)
        );
        let d = one(ATTRIBUTE);
        let text = r#"<calls><call name="f"><arg name="a">1<arg name="b">2</arg></call></calls>"#;
        assert_eq!(
            kind(&d, text, Strictness::Strict, false),
            Some(FailureKind::Malformed)
        );
        let d = one(KEY_VALUE);
        let text = "<fn>f<sep><k>a</k><v>1<k>b</k><v>2</v></fn>";
        assert_eq!(
            kind(&d, text, Strictness::Strict, false),
            Some(FailureKind::Malformed)
        );
    }

    #[test]
    fn parallel_calls_prose_and_reasoning() {
        let d = one(ATTRIBUTE);
        let text = r#"Sure. <calls><call name="a"><arg name="x">1</arg></call><call name="b"></call></calls> Done."#;
        let found = run(&d, text, Strictness::Strict, false);
        let names: Vec<_> = found
            .iter()
            .map(|c| c.call().unwrap().name.clone())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let d = one(JSON_BLOCK);
        let text = r#"<think><<call>>{"name": "f", "arguments": {}}<</call>></think>no call"#;
        let mut input = Input::new(text);
        input.reasoning = crate::reasoning::spans(text);
        let found = d.extract(&input, Strictness::Strict);
        assert_eq!(found[0].source, Source::OutputReasoning);
        // Prose mentioning the tokens is not a call.
        assert!(
            run(
                &one(KEY_VALUE),
                "I like <fn> tags a lot",
                Strictness::Strict,
                false
            )
            .is_empty()
        );
    }

    #[test]
    fn a_declared_stop_token_may_be_missing_except_under_length() {
        let file = JSON_BLOCK.replace(
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
        let row = one(ATTRIBUTE).row().unwrap();
        assert_eq!(row.engine, Engine::TaggedParameters);
        assert_eq!(row.payload, PayloadKind::TaggedValues);
        assert_eq!(row.opener, "<calls><call name=\"NAME\">");
        assert_eq!(row.closers, ["</arg>", "</call>", "</calls>"]);
        assert_eq!(
            row.parameter,
            Some(("<arg name=\"KEY\">".into(), "</arg>".into()))
        );
        let row = one(KEY_VALUE).row().unwrap();
        assert_eq!(row.parameter, Some(("<k>KEY</k><v>".into(), "</v>".into())));
        assert_eq!(row.separator.as_deref(), Some("<sep>"));
        let row = one(NAME_JSON).row().unwrap();
        assert_eq!(
            (row.engine, row.payload),
            (Engine::NameThenJson, PayloadKind::JsonArguments)
        );
        assert_eq!(row.closers, ["[/CALL]", "[/CALLS]"]);
        assert_eq!(one(JSON_BLOCK).row().unwrap().families, "Acme-7B");
    }

    #[test]
    fn bad_declarations_name_the_format_and_the_field() {
        let cases: Vec<(String, Option<&str>, Option<&str>, &str)> = vec![
            (
                JSON_BLOCK.replace("engine = \"json_block\"", "engine = \"regex\""),
                Some("angle_call"),
                Some("engine"),
                "unknown engine `regex`",
            ),
            (
                JSON_BLOCK.replace("opener = \"<<call>>\"", "opener = \"\""),
                Some("angle_call"),
                Some("opener"),
                "must not be empty",
            ),
            (
                JSON_BLOCK.replace("name = \"angle_call\"", "name = \"hermes\""),
                Some("hermes"),
                Some("name"),
                "built-in mode",
            ),
            (
                JSON_BLOCK.replace("<</call>>'", "'"),
                Some("angle_call"),
                Some("example"),
                "does not read its own example as a call (`pass`): it reads it as `truncated`",
            ),
            (
                JSON_BLOCK.replace("{\"city\": \"Antwerp\"}", "\"{\\\"city\\\": 1}\""),
                Some("angle_call"),
                Some("example"),
                "reads it as `escaping`",
            ),
            (
                JSON_BLOCK.replace("example = '<<call>>", "example = '<call>"),
                Some("angle_call"),
                Some("example"),
                "finds no call in it",
            ),
            (
                NAME_JSON.replace("separator = \"[ARGS]\"\n", ""),
                Some("bracket_args"),
                Some("separator"),
                "needs `separator`",
            ),
            (
                JSON_BLOCK.replace("closer =", "separator = \";\"\ncloser ="),
                Some("angle_call"),
                Some("separator"),
                "does not take `separator`",
            ),
            (
                ATTRIBUTE.replace("opener = '<call name=\"NAME\">'", "opener = '<call>'"),
                Some("acme_xml"),
                Some("opener"),
                "name attribute",
            ),
            (
                KEY_VALUE.replace("value = [\"<v>\", \"</v>\"]\n", ""),
                Some("acme_kv"),
                Some("value"),
                "go together",
            ),
            (
                KEY_VALUE.replace("closer = \"</fn>\"", "closer = \"</fn>\"\nstop_token = { token = \"</fn>\", stripped_by = \"x\" }"),
                Some("acme_kv"),
                Some("stop_token"),
                "no longer a call",
            ),
            (
                ATTRIBUTE.replace("closer = \"</call>\"", "closer = \"</call>\"\nstop_token = { token = \"</call>\", stripped_by = \"x\" }"),
                Some("acme_xml"),
                Some("stop_token"),
                "not the format's outermost closer",
            ),
            (
                format!("{JSON_BLOCK}{JSON_BLOCK}"),
                Some("angle_call"),
                Some("name"),
                "same name",
            ),
            (
                JSON_BLOCK.replace("families", "family"),
                Some("angle_call"),
                Some("family"),
                "unknown field `family`",
            ),
            (
                JSON_BLOCK.replace("example =", "# example ="),
                Some("angle_call"),
                Some("example"),
                "missing field `example`",
            ),
            (
                JSON_BLOCK.replace("closer = \"<</call>>\"", "closer = 3"),
                Some("angle_call"),
                Some("closer"),
                "field `closer`: must be a string, not integer",
            ),
            ("[[format]\n".to_string(), None, None, ""),
        ];
        for (file, format, field, needle) in cases {
            let e = err(&file);
            assert_eq!(e.format.as_deref(), format, "{e}");
            assert_eq!(e.field.as_deref(), field, "{e}");
            assert!(e.to_string().contains(needle), "{e}");
        }
        let e = err(&JSON_BLOCK.replace("opener = \"<<call>>\"", "opener = \"\""));
        assert_eq!(
            e.to_string(),
            "format `angle_call`: field `opener`: must not be empty"
        );
    }

    #[test]
    fn raw_text_stays_linear_over_many_cut_calls() {
        for file in [JSON_BLOCK, NAME_JSON, ATTRIBUTE, KEY_VALUE] {
            let d = one(file);
            let row = d.row().unwrap();
            let cut = crate::table::closer_cuts_of(&d.example, &row.closers)[0];
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
    const PIECES: [&str; 24] = [
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
            for file in [JSON_BLOCK, NAME_JSON, ATTRIBUTE, KEY_VALUE] {
                let d = one(file);
                for s in [Strictness::Strict, Strictness::Lenient] {
                    let mut input = Input::new(&out);
                    input.hit_length_limit = length;
                    input.reasoning = crate::reasoning::spans(&out);
                    for c in d.extract(&input, s) {
                        proptest::prop_assert!(c.span.start <= c.span.end && c.span.end <= out.len());
                        proptest::prop_assert_eq!(c.mode.as_str(), d.name());
                    }
                }
            }
        }
    }
}
