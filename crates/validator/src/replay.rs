//! Replay: every mode (strict and lenient), native, custom patterns, and the
//! profile pipeline, for one transcript (SPEC §6).

use crate::{GateCheck, PipelineResult, Profile};
use toolgate_core::{Call, Candidate, Decision, Label, Telemetry, Transcript};
use toolgate_formats::{Extractor, Strictness};

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

/// Everything replay knows about one transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// Strict results, one per mode, in engine order (`native` only when the
    /// transcript has `tool_calls`).
    pub strict: Vec<ModeResult>,
    /// Lenient results, same order.
    pub lenient: Vec<ModeResult>,
    /// The profile pipeline's result.
    pub profile: PipelineResult,
}

impl Replay {
    /// The strict result of `mode`.
    pub fn strict_mode(&self, mode: &str) -> Option<&ModeResult> {
        self.strict.iter().find(|m| m.mode == mode)
    }
    /// The lenient result of `mode`.
    pub fn lenient_mode(&self, mode: &str) -> Option<&ModeResult> {
        self.lenient.iter().find(|m| m.mode == mode)
    }
}

/// The extractors and the profile replay runs with. Build once, reuse.
pub struct Engine {
    /// Every mode, in order: built-ins then custom patterns.
    pub extractors: Vec<Box<dyn Extractor>>,
    /// The profile.
    pub profile: Profile,
}

impl Engine {
    /// The built-in modes and the given profile.
    pub fn new(profile: Profile) -> Engine {
        Engine { extractors: toolgate_formats::builtin(), profile }
    }

    /// Replays one transcript.
    pub fn replay(&self, transcript: &Transcript) -> Replay {
        let _ = transcript;
        unimplemented!("replay: being written")
    }
}
