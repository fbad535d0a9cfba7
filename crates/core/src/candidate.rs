use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// A half-open byte range `start..end` into the text a candidate came from.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    /// Whether `offset` lies inside the span.
    pub fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }
    /// Whether the span is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Which text a candidate was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The `output` text (spans index into it).
    Output,
    /// A reasoning span of the output (`<think>…</think>`, harmony `analysis`):
    /// reported, never a candidate for execution. Spans index into `output`.
    OutputReasoning,
    /// The transcript's separate `reasoning` field (spans index into it).
    ReasoningField,
    /// The transcript's native `tool_calls` (span is the call's index `i..i+1`).
    Native,
}

impl Source {
    /// Whether this candidate sits in reasoning (and so is never executable
    /// and does not count for label rules 1 and 2).
    pub fn is_reasoning(self) -> bool {
        matches!(self, Source::OutputReasoning | Source::ReasoningField)
    }
}

/// Why a candidate's payload did not parse (SPEC §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The text ends inside the candidate (or `arguments` is empty/null).
    Truncated,
    /// Quoting or escaping: invalid escape, unescaped inner quote, raw control
    /// character, double-encoded arguments.
    Escaping,
    /// Any other parse failure (including ambiguous name/argument keys).
    Malformed,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Truncated => "truncated",
            FailureKind::Escaping => "escaping",
            FailureKind::Malformed => "malformed",
        })
    }
}

/// A parse failure with its reason and the byte offset where it was noticed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseFailure {
    /// The class of failure; decides the label (SPEC §5 rules 5–7).
    pub kind: FailureKind,
    /// A human-readable reason.
    pub message: String,
    /// Byte offset into the candidate's source text (not into the payload).
    pub offset: usize,
}

impl ParseFailure {
    /// Builds a failure.
    pub fn new(kind: FailureKind, message: impl Into<String>, offset: usize) -> ParseFailure {
        ParseFailure {
            kind,
            message: message.into(),
            offset,
        }
    }
}

/// A named repair the lenient replay may apply (SPEC §3 "Lenient replay").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    /// `'…'` strings read as `"…"`.
    SingleQuotes,
    /// A comma before `}` or `]` dropped.
    TrailingCommas,
    /// A raw newline/tab/control character inside a string read as its escape.
    RawNewlines,
    /// `{key: 1}` read as `{"key": 1}`.
    UnquotedKeys,
    /// `True`/`False`/`None` read as `true`/`false`/`null`.
    PythonLiterals,
    /// `"arguments": "{\"k\": 1}"` read as the object it encodes.
    DoubleEncodedArguments,
    /// A ```` ``` ```` fence around or inside a payload stripped.
    StrayFences,
    /// An invalid backslash escape (`\'`, `\d`) read as the character itself.
    InvalidEscapes,
    /// `args`, `input` or `kwargs` read as the argument key of a call object
    /// that has none of `arguments`, `parameters`, `params` (SPEC §9).
    ArgumentKey,
}

impl Repair {
    /// The snake_case name used in telemetry and snapshots.
    pub fn as_str(self) -> &'static str {
        match self {
            Repair::SingleQuotes => "single_quotes",
            Repair::TrailingCommas => "trailing_commas",
            Repair::RawNewlines => "raw_newlines",
            Repair::UnquotedKeys => "unquoted_keys",
            Repair::PythonLiterals => "python_literals",
            Repair::DoubleEncodedArguments => "double_encoded_arguments",
            Repair::StrayFences => "stray_fences",
            Repair::InvalidEscapes => "invalid_escapes",
            Repair::ArgumentKey => "argument_key",
        }
    }
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One possible tool call found by an extractor (phase 1). Never executable by
/// itself: only the validator turns candidates into [`crate::Call`]s.
///
/// `mode` is a `Cow<'static, str>` (issue 24): a built-in or declared
/// mode, whose name lives as long as the program, lends it to every
/// candidate it finds (`Cow::Borrowed`, no allocation per candidate); a
/// custom pattern, whose name is read at run time, gives each candidate its
/// own copy (`Cow::Owned`). Read it as a `&str` (`&*c.mode`, `c.mode ==
/// "hermes"`, `c.mode.as_ref()`); build one with `"hermes".into()` or
/// `String::into()`. Serialized as the plain string either way, and read
/// back as `Cow::Owned`: the JSON is the same bytes as when it was a
/// `String`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The mode (extractor) that found it, e.g. `hermes` or a custom pattern name.
    pub mode: Cow<'static, str>,
    /// Where it was found.
    pub source: Source,
    /// Byte span of the whole candidate (markup included) in its source text.
    pub span: Span,
    /// The raw payload text (for JSON modes, the JSON text).
    pub raw: String,
    /// The tool name when it could be read, even if the arguments failed.
    pub name: Option<String>,
    /// The parsed arguments object, or why it could not be read. Shared
    /// (`Arc`) so that the call executed from this candidate is not a copy.
    pub arguments: Result<std::sync::Arc<Map<String, Value>>, ParseFailure>,
    /// Repairs the lenient variant applied (always empty in strict mode).
    pub repairs: Vec<Repair>,
}

impl Candidate {
    /// The normalized call, when both the name and the arguments were read.
    pub fn call(&self) -> Option<crate::Call> {
        match (&self.name, &self.arguments) {
            (Some(name), Ok(args)) => Some(crate::Call {
                name: name.clone(),
                arguments: std::sync::Arc::clone(args),
            }),
            _ => None,
        }
    }

    /// The parse failure, if any.
    pub fn failure(&self) -> Option<&ParseFailure> {
        self.arguments.as_ref().err()
    }

    /// Whether the candidate counts for execution and labels (not reasoning).
    pub fn is_live(&self) -> bool {
        !self.source.is_reasoning()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_or_owned_mode_is_the_same_plain_json_string() {
        let lent = Candidate {
            mode: Cow::Borrowed("llama3"),
            source: Source::Output,
            span: Span::new(0, 9),
            raw: "{\"a\": 1}".into(),
            name: Some("f".into()),
            arguments: Err(ParseFailure::new(FailureKind::Malformed, "m", 0)),
            repairs: Vec::new(),
        };
        let owned = Candidate {
            mode: Cow::Owned("llama3".to_string()),
            ..lent.clone()
        };
        let json = serde_json::to_string(&lent).unwrap();
        assert_eq!(json, serde_json::to_string(&owned).unwrap());
        assert!(
            json.starts_with(r#"{"mode":"llama3","source":"output""#),
            "{json}"
        );
        let back: Candidate = serde_json::from_str(&json).unwrap();
        assert!(matches!(back.mode, Cow::Owned(_)));
        assert_eq!(back, lent);
    }
}
