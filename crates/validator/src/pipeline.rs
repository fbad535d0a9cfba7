//! The pipeline for one output: extract, select, gate, decide (SPEC §4).

use toolgate_core::{Candidate, Decision, Gate, Label, Telemetry};

/// One gate's verdict on a set of candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateCheck {
    /// The gate.
    pub gate: Gate,
    /// Whether it passed (`true` also when it does not apply).
    pub passed: bool,
    /// Why it passed or failed ("not applicable to primary candidates", …).
    pub reason: String,
}

/// What the pipeline produced for one output under one profile.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineResult {
    /// The profile's name.
    pub profile: String,
    /// The mode whose candidates were selected, if any.
    pub parse_mode: Option<String>,
    /// Whether a fallback mode was used.
    pub fallback_used: bool,
    /// The selected candidates (live ones: reasoning excluded).
    pub candidates: Vec<Candidate>,
    /// Every gate, in check order.
    pub gates: Vec<GateCheck>,
    /// The decision.
    pub decision: Decision,
    /// The telemetry record.
    pub telemetry: Telemetry,
    /// The label of the selected candidates (SPEC §5: gates never change it).
    pub label: Label,
    /// Why that label.
    pub label_reason: String,
}
