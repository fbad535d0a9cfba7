//! The labeler: exactly one label per (transcript, mode), SPEC §5.

use crate::Toolset;
use toolgate_core::{Candidate, Expectation, Label};

/// A label and the reason it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labeled {
    /// The label.
    pub label: Label,
    /// Why (empty for `pass`).
    pub reason: String,
}

/// Labels `candidates` (reasoning-only ones are ignored for rules 1 and 2).
pub fn label(
    candidates: &[Candidate],
    expect: Option<&Expectation>,
    toolset: &Toolset,
    hit_length_limit: bool,
) -> Labeled {
    let _ = (candidates, expect, toolset, hit_length_limit);
    Labeled { label: Label::NoCall, reason: String::new() }
}
