//! The seed modes (SPEC §3 first table) and the common wire formats of the
//! pipeline issue: `tag`, `bracket`, `marker`, `fence`, `hermes` (`json` and
//! `native` are in [`crate::irregular`]).
//!
//! Each module documents its wire shape with a real example and the SPEC §9
//! decisions it pins. All of them run in linear time, never panic, scan the
//! reasoning too (reported with a reasoning [`Source`](toolgate_core::Source))
//! and have a strict and a lenient variant.

pub mod bracket;
pub mod fence;
pub mod hermes;
pub mod marker;
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

    /// The failure kind of the only candidate.
    pub fn only_failure(c: &[Candidate]) -> (FailureKind, usize) {
        assert_eq!(c.len(), 1, "{c:#?}");
        let f = c[0]
            .failure()
            .unwrap_or_else(|| panic!("no failure: {c:#?}"));
        (f.kind, f.offset)
    }
}
