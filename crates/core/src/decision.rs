use crate::{Call, Repair};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// A gate of the pipeline (SPEC §4), in the order they are checked (SPEC §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Fallback candidates need explicit tool intent in the output.
    Intent,
    /// Fallback candidates: exactly one.
    Single,
    /// Each call's payload is within the size limit.
    Size,
    /// Every candidate parsed.
    Parse,
    /// Every tool name is allowlisted.
    Allowlist,
    /// Every call's arguments pass the tool's schema strictly.
    Schema,
}

impl Gate {
    /// Every gate, in check order.
    pub const ALL: [Gate; 6] = [
        Gate::Intent,
        Gate::Single,
        Gate::Size,
        Gate::Parse,
        Gate::Allowlist,
        Gate::Schema,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Intent => "intent",
            Gate::Single => "single",
            Gate::Size => "size",
            Gate::Parse => "parse",
            Gate::Allowlist => "allowlist",
            Gate::Schema => "schema",
        }
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the pipeline decided for one output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Execute exactly these normalized calls.
    Execute {
        /// The calls, in output order.
        calls: Vec<Call>,
    },
    /// No candidate was found: nothing to execute.
    NoCall,
    /// Candidates were found but a gate failed.
    Reject {
        /// The first gate that failed.
        gate: Gate,
        /// Why it failed.
        reason: String,
        /// For several fallback candidates: the message asking the model to
        /// re-emit in the primary format.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        reemit: Option<String>,
    },
}

impl Decision {
    /// `execute`, `no_call` or `reject`.
    pub fn kind(&self) -> &'static str {
        match self {
            Decision::Execute { .. } => "execute",
            Decision::NoCall => "no_call",
            Decision::Reject { .. } => "reject",
        }
    }
    /// The failing gate, if rejected.
    pub fn gate(&self) -> Option<Gate> {
        match self {
            Decision::Reject { gate, .. } => Some(*gate),
            _ => None,
        }
    }
    /// The calls to execute (empty unless `execute`).
    pub fn calls(&self) -> &[Call] {
        match self {
            Decision::Execute { calls } => calls,
            _ => &[],
        }
    }
}

/// The `schema_validation` telemetry field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaValidation {
    /// Every call passed its schema.
    Pass,
    /// A call failed its schema (see `schema_reason`).
    Fail,
    /// Validation did not run (no candidates, or an earlier gate failed).
    Skipped,
}

/// The `tool_result_status` telemetry field, filled in by the caller after running the tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolResultStatus {
    /// The tool ran and returned something.
    Ok,
    /// The tool ran and returned nothing.
    Empty,
    /// The tool failed.
    Error,
}

/// One record per model output (SPEC §4), serialized as one JSON line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Telemetry {
    /// The mode that produced the candidates, or `none`. Borrowed for the
    /// fixed words (`primary`, `none`): no allocation per output for them.
    pub parse_mode: Cow<'static, str>,
    /// Whether a fallback mode produced them.
    pub fallback_used: bool,
    /// How many candidates that mode found (reasoning-only ones excluded).
    pub candidate_count: usize,
    /// `pass`, `fail` or `skipped`.
    pub schema_validation: SchemaValidation,
    /// Why schema validation failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub schema_reason: Option<String>,
    /// The first gate that failed, or null.
    pub gate: Option<Gate>,
    /// `execute`, `no_call` or `reject`.
    pub decision: String,
    /// Repairs applied (empty in strict mode).
    pub repairs: Vec<Repair>,
    /// Filled in by the caller after running the tool.
    pub tool_result_status: Option<ToolResultStatus>,
}

impl Telemetry {
    /// The record as one JSON line (no trailing newline).
    pub fn to_json_line(&self) -> String {
        // Serializing plain structs, strings and enums into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}
