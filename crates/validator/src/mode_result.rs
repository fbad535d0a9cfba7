//! One mode's result for one transcript: what replay ([`crate::replay`])
//! reports per mode and strictness, and what the server findings
//! ([`crate::findings`]) read. Its own module, below both, so that neither
//! has to import the other for it.

use crate::gates::GateCheck;
use toolgate_core::{Call, Candidate, Decision, Label, Telemetry};
use toolgate_formats::Strictness;

/// One mode's result for one transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeResult {
    /// The mode name.
    pub mode: String,
    /// Strict or lenient.
    pub strictness: Strictness,
    /// Every candidate, reasoning ones included.
    pub candidates: Vec<Candidate>,
    /// The normalized calls of the live candidates that parsed.
    pub calls: Vec<Call>,
    /// The label.
    pub label: Label,
    /// Why that label.
    pub reason: String,
    /// The gates as this mode would meet them in the profile (primary or fallback).
    pub gates: Vec<GateCheck>,
    /// The decision if this mode's candidates were selected.
    pub decision: Decision,
    /// The telemetry record for that decision.
    pub telemetry: Telemetry,
}

impl ModeResult {
    /// Why this mode's label is what it is, in one line: the label's reason
    /// (the rule that matched and the candidate it matched on), else the
    /// decision and its gate. The inspector's review screen and
    /// `toolgate label --check --format markdown|github` both say this.
    pub fn why(&self) -> String {
        if !self.reason.is_empty() {
            return self.reason.clone();
        }
        match self.decision.gate() {
            Some(g) => format!("decision: reject at {g}"),
            None => format!("decision: {}", self.decision.kind()),
        }
    }

    /// The candidate the label was decided on: the one the reason names
    /// (`candidate #i`, a position in [`ModeResult::candidates`]), else the
    /// first live one; `None` when the mode found none.
    pub fn deciding_candidate(&self) -> Option<&Candidate> {
        let named = self
            .reason
            .split_once("candidate #")
            .and_then(|(_, rest)| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<usize>().ok()
            })
            .and_then(|i| self.candidates.get(i));
        named.or_else(|| self.candidates.iter().find(|c| c.is_live()))
    }
}
