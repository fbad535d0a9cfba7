//! What the gates say: one gate's [`GateCheck`], the [`Role`] a mode's
//! candidates meet them in, and the [`Gated`] result (every gate, the
//! decision, the telemetry record) — the types every gate unit shares.

use crate::profile::Profile;
use toolgate_core::{Decision, Gate, Telemetry};

/// One gate's verdict on a set of candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateCheck {
    /// The gate.
    pub gate: Gate,
    /// Whether it passed (`true` also when it does not apply).
    pub passed: bool,
    /// Why it passed or failed ("not applicable to primary candidates", …).
    /// Borrowed for the fixed reasons of the pass path: no allocation per
    /// output for them (issue 24).
    pub reason: std::borrow::Cow<'static, str>,
}

/// How a mode's candidates meet the gates: as the profile's primary mode or
/// as a fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The profile's primary mode: `intent` and `single` do not apply; the
    /// primary size limit.
    Primary,
    /// A fallback: every gate applies; the fallback size limit.
    Fallback,
}

impl Role {
    /// The role `mode`'s candidates meet in `profile`, for replay: fallback
    /// when it is one of the profile's (enabled) fallbacks; primary when it
    /// is the primary — and when it is neither, as if it were primary (the
    /// pipeline never selects it, and a fallback's `need_tool: yes` would
    /// misdescribe it).
    pub fn of(profile: &Profile, mode: &str) -> Role {
        if profile.primary != mode
            && profile.fallbacks_enabled
            && profile.fallbacks.iter().any(|f| f == mode)
        {
            Role::Fallback
        } else {
            Role::Primary
        }
    }
}

/// The gates, decision and telemetry for one mode's candidates.
#[derive(Clone, Debug, PartialEq)]
pub struct Gated {
    /// Every gate, in check order.
    pub gates: Vec<GateCheck>,
    /// The decision.
    pub decision: Decision,
    /// The telemetry record.
    pub telemetry: Telemetry,
}

/// A gate that does not apply to primary candidates: passed.
pub(super) fn not_applicable(gate: Gate) -> GateCheck {
    pass(gate, "not applicable to primary candidates")
}

/// A passed gate.
pub(super) fn pass(gate: Gate, reason: impl Into<std::borrow::Cow<'static, str>>) -> GateCheck {
    GateCheck {
        gate,
        passed: true,
        reason: reason.into(),
    }
}

/// A failed gate.
pub(super) fn fail(gate: Gate, reason: impl Into<std::borrow::Cow<'static, str>>) -> GateCheck {
    GateCheck {
        gate,
        passed: false,
        reason: reason.into(),
    }
}
