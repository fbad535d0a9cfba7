//! The vocabulary a format file describes itself in: the types of a row of
//! the format table ([`Format`], its [`Engine`], [`PayloadKind`],
//! [`StopToken`], [`Triggers`]; [`Row`] as owned data) and of the model
//! table ([`ModelFamily`]). Types only: the lists built from the format
//! files are [`crate::table::FORMATS`] and [`crate::models::FAMILIES`], so
//! the files (`format/`) depend on this module and the tables on both,
//! with no arrow back.

/// The engine (shape) that reads a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A marker (or tag) followed by a JSON call object or an array of them
    /// (`families::jsonlike::marked`, `hermes`, `tag`).
    JsonBlock,
    /// A tool name, a separator, then a JSON arguments object (`kimi`,
    /// `deepseek`, `harmony`, `mistral`, `functionary`).
    NameThenJson,
    /// Tagged parameters: name/key/value prefix–suffix pairs, values typed by
    /// the tool schema (`families::tagged::common`, `invoke`).
    TaggedParameters,
    /// Python-style calls with named arguments (`bracket`,
    /// `families::jsonlike::pythonic`).
    Pythonic,
    /// A hand-written scanner for an irregular format.
    Scanner,
}

impl Engine {
    /// The snake_case name shown by `toolgate formats`.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::JsonBlock => "json_block",
            Engine::NameThenJson => "name_then_json",
            Engine::TaggedParameters => "tagged_parameters",
            Engine::Pythonic => "pythonic",
            Engine::Scanner => "scanner",
        }
    }
}

/// What a call's payload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadKind {
    /// A JSON call object (`{"name": …, "arguments": {…}}`) or an array of
    /// them; the arguments are a JSON object read by the shared reader.
    JsonCall,
    /// A JSON arguments object after the name (the name is markup).
    JsonArguments,
    /// Tagged parameters whose text values are typed by the tool schema.
    TaggedValues,
    /// Python-style literals.
    PythonLiterals,
    /// A format's own literal syntax (gemma's `key:<|"|>text<|"|>`).
    OwnLiterals,
}

impl PayloadKind {
    /// The snake_case name shown by `toolgate formats`.
    pub fn as_str(self) -> &'static str {
        match self {
            PayloadKind::JsonCall => "json_call",
            PayloadKind::JsonArguments => "json_arguments",
            PayloadKind::TaggedValues => "tagged_values",
            PayloadKind::PythonLiterals => "python_literals",
            PayloadKind::OwnLiterals => "own_literals",
        }
    }

    /// Whether the arguments are a JSON object (so double-encoded arguments,
    /// `"arguments": "{\"k\": 1}"`, are an `escaping` failure, SPEC §5 rule 6).
    pub fn reads_json_arguments(self) -> bool {
        matches!(self, PayloadKind::JsonCall | PayloadKind::JsonArguments)
    }
}

/// A closer that serving stacks strip as a stop token, so a call may arrive
/// without it (SPEC §9). Under `finish_reason: "length"` it is never excused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopToken {
    /// The token, e.g. `<|call|>`.
    pub token: &'static str,
    /// The serving stack(s) known to strip it.
    pub stripped_by: &'static str,
}

/// A mode's prefilter triggers: a candidate needs one of `tokens` in the
/// text, or the text to begin (after whitespace) with `leading`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triggers {
    /// Tokens, any of which may be where a candidate is.
    pub tokens: &'static [&'static str],
    /// A byte a candidate may begin with at the very start of the text.
    pub leading: Option<u8>,
}

/// One wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// The mode name.
    pub name: &'static str,
    /// The model families that emit it.
    pub families: &'static str,
    /// The engine that reads it.
    pub engine: Engine,
    /// The token(s) that open a call or a call section.
    pub opener: &'static str,
    /// The separator between name and arguments, or between calls, if any.
    pub separator: Option<&'static str>,
    /// The closing markup that ends the mode's example, innermost first
    /// (e.g. `<|tool_call_end|>` then `<|tool_calls_section_end|>`); empty
    /// when the format has no closer (the JSON value's own end ends it).
    /// A missing closer is `truncation` (SPEC §9).
    pub closers: &'static [&'static str],
    /// The (opener, closer) pairs of a call and of the section holding the
    /// calls: when the last opener of a pair in the output has no closer
    /// after it, the output ended inside that block and the call in it is
    /// `truncated` (the missing-closer rule, applied to every row by
    /// [`crate::rules`]). An opener may be a prefix (`<tool name=`).
    pub blocks: &'static [(&'static str, &'static str)],
    /// Tagged parameters: the markup before a value and the value's closer,
    /// with `KEY` standing for the parameter name. A value never contains
    /// the format's own parameter markup (a value that runs into the next
    /// parameter because its closer is missing is `malformed`).
    pub parameter: Option<(&'static str, &'static str)>,
    /// The literal tokens that can begin a candidate, for streaming
    /// hold-back ([`crate::openers`]); `None` when a candidate can begin
    /// without a fixed token (hold the whole output), `Some(&[])` when the
    /// mode never finds a candidate in the text (`native`).
    pub openers: Option<&'static [&'static str]>,
    /// What the batch prefilter ([`crate::prefilter`]) looks for instead of
    /// `openers`, when an opener is too common to tell anything (`llama3`'s
    /// `{`): no candidate unless the text holds one of these. `None`: the
    /// openers.
    pub triggers: Option<Triggers>,
    /// The closer a serving stack may strip, excused when missing (never
    /// under `finish_reason: "length"`).
    pub stop_token: Option<StopToken>,
    /// What the payload is.
    pub payload: PayloadKind,
    /// How the tool name and the arguments are spelled.
    pub conventions: &'static str,
}

/// A row of the table as owned data: a built-in row ([`Format::to_row`]) or
/// a user-declared format's ([`crate::declared`]). What `toolgate formats`
/// and the cross-format test read, whichever kind of mode it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The mode name.
    pub name: String,
    /// The model families that emit it.
    pub families: String,
    /// The engine that reads it.
    pub engine: Engine,
    /// The token(s) that open a call or a call section.
    pub opener: String,
    /// The separator between name and arguments (or after the name), if any.
    pub separator: Option<String>,
    /// The closing markup that ends the example, innermost first.
    pub closers: Vec<String>,
    /// The (opener, closer) pairs the missing-closer rule checks.
    pub blocks: Vec<(String, String)>,
    /// Tagged parameters: the markup before a value and the value's closer
    /// (`KEY` stands for the parameter name).
    pub parameter: Option<(String, String)>,
    /// The closer a serving stack may strip: (token, the stack(s) that strip it).
    pub stop_token: Option<(String, String)>,
    /// What the payload is.
    pub payload: PayloadKind,
    /// How the tool name and the arguments are spelled.
    pub conventions: String,
}

impl Format {
    /// This row as owned data.
    pub fn to_row(&self) -> Row {
        let own = |s: &&str| s.to_string();
        Row {
            name: self.name.into(),
            families: self.families.into(),
            engine: self.engine,
            opener: self.opener.into(),
            separator: self.separator.map(str::to_string),
            closers: self.closers.iter().map(own).collect(),
            blocks: self
                .blocks
                .iter()
                .map(|(o, c)| (o.to_string(), c.to_string()))
                .collect(),
            parameter: self.parameter.map(|(o, c)| (o.into(), c.into())),
            stop_token: self
                .stop_token
                .map(|t| (t.token.into(), t.stripped_by.into())),
            payload: self.payload,
            conventions: self.conventions.into(),
        }
    }
}

/// Where each of `closers` (innermost first) starts in `example`: the
/// closers must be the example's trailing run of closing markup, separated
/// by whitespace only. Fewer positions than closers means they are not.
pub fn closer_cuts_of(example: &str, closers: &[impl AsRef<str>]) -> Vec<usize> {
    let mut end = example.trim_end().len();
    let mut cuts = Vec::new();
    for c in closers.iter().rev() {
        match example[..end].strip_suffix(c.as_ref()) {
            Some(rest) => {
                cuts.push(rest.len());
                end = rest.trim_end().len();
            }
            None => break,
        }
    }
    cuts.reverse();
    cuts
}

/// One row: a mode and the model-name fragments whose families emit it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelFamily {
    /// The mode name (`hermes`, `glm`, …).
    pub mode: &'static str,
    /// Lowercase fragments of model names (`qwen3-coder`, `glm-4.5`, …).
    pub fragments: &'static [&'static str],
}
