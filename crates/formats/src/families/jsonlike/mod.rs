//! Families whose payloads are JSON call objects or pythonic calls behind a
//! family-specific marker: the engines and the scanners of `llama3`,
//! `mistral` and `functionary`. Which format each reads, with which tokens,
//! is in the format's own file ([`crate::format`]): the file builds the
//! extractor with its tokens (`format/mistral.rs`: `MISTRAL`), so no token
//! is spelled here and no engine imports a format file. `toolgate formats`
//! lists them all.
//!
//! - [`json_array`]: the JSON call-payload engine every JSON format reads
//!   its payload with (one call object or an array of them, SPEC §9 key
//!   rules, the format's own metadata keys in [`json_array::CallRules`]);
//! - `marked`: the `json_block` engine ("marker + JSON": `granite`, `xlam`,
//!   `command_r`, …) and the family's shared helpers (the arguments after a
//!   tool name, resuming after a broken value);
//! - `pythonic`: blocks of Python-style calls, read by the `bracket` mode's
//!   parser.
//!
//! Gemma's own literal syntax is irregular ([`crate::irregular`]).

pub mod functionary;
pub mod json_array;
pub mod llama3;
pub(crate) mod marked;
pub mod mistral;
pub(crate) mod pythonic;

// Issue 27 item 6 (formats-b): families added as engine configurations.

/// This group's modes (raw, without the shared rules), in replay order:
/// the formats whose file names this group ([`crate::format`]).
pub fn all() -> Vec<Box<dyn crate::Extractor>> {
    crate::format::group(crate::format::Group::JsonLike)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testutil {
    //! Helpers for this group's unit tests.
    use crate::{Extractor, Input, Strictness};
    use serde_json::{Value, json};
    use toolgate_core::Candidate;

    pub fn strict(e: &dyn Extractor, out: &str) -> Vec<Candidate> {
        e.extract(&Input::new(out), Strictness::Strict)
    }

    pub fn lenient(e: &dyn Extractor, out: &str) -> Vec<Candidate> {
        e.extract(&Input::new(out), Strictness::Lenient)
    }

    /// The parsed live calls of the strict variant, as normalized JSON.
    pub fn calls(e: &dyn Extractor, out: &str) -> Vec<Value> {
        strict(e, out)
            .iter()
            .filter(|c| c.is_live())
            .filter_map(|c| c.call().map(|c| c.to_json()))
            .collect()
    }

    /// The only candidate of the strict variant on `out`, failed: its kind.
    pub fn only_failure(e: &dyn Extractor, out: &str) -> toolgate_core::FailureKind {
        let found = strict(e, out);
        assert_eq!(found.len(), 1, "{out}: {found:?}");
        found[0]
            .failure()
            .unwrap_or_else(|| panic!("{out}: no failure"))
            .kind
    }

    pub fn call(name: &str, args: &str) -> Value {
        json!({"name": name, "arguments": serde_json::from_str::<Value>(args).unwrap()})
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod linear {
    //! Adversarial outputs: repeated openers without closers. Their timing
    //! (linear in the output length) is measured by `cargo bench --bench
    //! extractors`, not by timed tests.
    use crate::{Input, Strictness};

    #[test]
    fn repeated_opener_without_payload_gives_one_failure_each() {
        let modes = super::all();
        let nemotron = modes.iter().find(|m| m.name() == "nemotron").unwrap();
        let text = "<TOOLCALL>".repeat(1000);
        let found = nemotron.extract(&Input::new(&text), Strictness::Strict);
        assert_eq!(found.len(), 1000);
        assert!(found.iter().all(|c| c.call().is_none()));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod examples {
    //! Each mode's own example reads as calls, and every cut-off prefix of it
    //! reads without panicking; cut in the middle it is `truncated`.
    use crate::{Input, Strictness};
    use toolgate_core::FailureKind;

    #[test]
    fn every_mode_reports_calls_in_the_reasoning_field_as_reasoning() {
        for mode in super::all() {
            let input = Input {
                reasoning_field: Some(mode.example()),
                ..Input::new("No tool needed.")
            };
            let found = mode.extract(&input, Strictness::Strict);
            assert!(!found.is_empty(), "{}", mode.name());
            assert!(
                found
                    .iter()
                    .all(|c| c.source == toolgate_core::Source::ReasoningField),
                "{}: {found:?}",
                mode.name()
            );
        }
    }

    #[test]
    fn every_example_reads_and_its_cut_off_half_is_truncated() {
        for mode in super::all() {
            let ex = mode.example();
            let found = mode.extract(&Input::new(ex), Strictness::Strict);
            assert!(!found.is_empty(), "{}: example finds nothing", mode.name());
            assert!(
                found.iter().all(|c| c.call().is_some()),
                "{}: {found:?}",
                mode.name()
            );
            for cut in (0..ex.len()).filter(|i| ex.is_char_boundary(*i)) {
                let part = &ex[..cut];
                for strictness in [Strictness::Strict, Strictness::Lenient] {
                    for c in mode.extract(&Input::new(part), strictness) {
                        assert!(c.span.end <= part.len(), "{} on {part:?}", mode.name());
                        if let Err(f) = &c.arguments {
                            assert!(f.offset <= part.len(), "{} on {part:?}: {f:?}", mode.name());
                        }
                    }
                }
            }
            let mut mid = ex.len() / 2;
            while !ex.is_char_boundary(mid) {
                mid += 1;
            }
            let half = mode.extract(&Input::new(&ex[..mid]), Strictness::Strict);
            assert!(
                half.iter().any(|c| c
                    .failure()
                    .is_some_and(|f| f.kind == FailureKind::Truncated)),
                "{} on {:?}: {half:?}",
                mode.name(),
                &ex[..mid]
            );
        }
    }
}
