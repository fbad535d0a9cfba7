//! # The irregular formats
//!
//! The formats no engine configuration describes, each with its own
//! hand-written reader. Everything else is a format file
//! ([`crate::format`]) naming an engine and its tokens; these are the named
//! exceptions (issue 27 item 2), and why:
//!
//! - [`gemma`]: Gemma 4 / FunctionGemma's own literal syntax — bare keys,
//!   strings quoted by a special token (`<|"|>`, `<escape>`) holding raw
//!   text with no escapes. No JSON or Python literal reader reads it, so it
//!   has its own reader (iterative, depth-capped).
//! - [`json`]: the whole output is the payload — a call object or an array
//!   of them standing alone (fenced or not), with no marker at all; prose
//!   around it makes it no call. No engine reads "the entire text".
//! - [`native`]: reads no text. The calls are the transcript's own
//!   `tool_calls` (OpenAI's `function.name` and `function.arguments` as a
//!   JSON string), so there is nothing to configure.
//!
//! - [`hermes`], [`tag`], [`marker`], [`fence`]: the seed modes (SPEC §3
//!   first table). Each adds a rule of its own to the `json_block` shape, so
//!   that engine does not give their labels byte for byte: hermes skips a
//!   non-JSON payload inside its tag instead of failing it; tag reads the
//!   name from an attribute; marker reads one object per whole-word marker,
//!   up to the next marker; fence reads fenced blocks. Their tokens still
//!   come from their format files.
//! - [`bracket`]: a Python-style call list read by its own literal parser
//!   (Python strings, `True`/`None`, keyword arguments), which the
//!   `pythonic` engine and `json_block`'s Python payloads also call.
//!
//! Harmony's channels are the other irregular format; its reader is still
//! in [`crate::families::tagged`], configured by its format file.
//!
//! Each module documents its wire shape with a real example and the SPEC §9
//! decisions it pins. All of them run in linear time, never panic, scan the
//! reasoning too and have a strict and a lenient variant.

pub mod bracket;
pub mod fence;
pub mod gemma;
pub mod hermes;
pub mod json;
pub mod marker;
pub mod native;
pub mod tag;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testkit {
    //! Shorthands for the mode tests.
    use crate::{Extractor, Input, Strictness};
    use toolgate_core::{Candidate, FailureKind};

    /// Strict candidates of `out`.
    pub fn strict(m: &dyn Extractor, out: &str) -> Vec<Candidate> {
        m.extract(&Input::new(out), Strictness::Strict)
    }

    /// Lenient candidates of `out`.
    pub fn lenient(m: &dyn Extractor, out: &str) -> Vec<Candidate> {
        m.extract(&Input::new(out), Strictness::Lenient)
    }

    /// The names of the parsed calls.
    pub fn names(c: &[Candidate]) -> Vec<String> {
        c.iter().filter_map(|c| c.call()).map(|c| c.name).collect()
    }

    /// The assertions every "call without its opener" test makes
    /// (`util::stray_call` and `name_json::stray_call`): `out` gave two
    /// candidates, the call `call` and, at index `stray`, the call written
    /// without its opener, refused as `malformed` ("without its opener")
    /// and naming the tool `name` (`None`: no name to read, e.g. arguments
    /// alone).
    pub fn assert_stray(
        c: &[Candidate],
        stray: usize,
        (call, name): (&str, Option<&str>),
        out: &str,
    ) {
        assert_eq!(c.len(), 2, "{out}: {c:#?}");
        let ran = c[1 - stray]
            .call()
            .unwrap_or_else(|| panic!("{out}: no call: {c:#?}"));
        assert_eq!(ran.name, call, "{out}");
        assert_eq!(c[stray].name.as_deref(), name, "{out}");
        let f = c[stray]
            .failure()
            .unwrap_or_else(|| panic!("{out}: no failure: {c:#?}"));
        assert_eq!(f.kind, FailureKind::Malformed, "{out}");
        assert!(
            f.message.contains("without its opener"),
            "{out}: {}",
            f.message
        );
    }

    /// The failure kind of the only candidate.
    pub fn only_failure(c: &[Candidate]) -> (FailureKind, usize) {
        assert_eq!(c.len(), 1, "{c:#?}");
        let f = c[0]
            .failure()
            .unwrap_or_else(|| panic!("no failure: {c:#?}"));
        (f.kind, f.offset)
    }
}
