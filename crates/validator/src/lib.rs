//! # toolgate-validator: phase 2
//!
//! Only this crate turns candidates into executable calls:
//!
//! - [`Toolset`]: the allowlist and one compiled strict JSON Schema validator
//!   per tool (no network, no file resolver; a remote `$ref` makes a tool
//!   unusable and says why). Errors map to labels by kind and instance path,
//!   never by message text.
//! - [`label`]: the one label of SPEC §5 for a set of
//!   candidates, independent of gates.
//! - [`Profile`] and [`pipeline::run`]: primary mode, fallbacks, the gates of
//!   SPEC §4 in the order of §9, the [`Decision`](toolgate_core::Decision) and
//!   the [`Telemetry`](toolgate_core::Telemetry) record (also emitted as a
//!   `tracing` event, target `toolgate::telemetry`).
//! - [`replay::Engine`]: every mode, strict and lenient, plus the profile, for
//!   one transcript — what the CLI and the inspector show.
//! - [`resolve`]: a `--profile` argument to a [`Profile`], and the [`Auto`]
//!   chooser from `toolgate.toml`'s `[models]` table — one set of rules and
//!   messages for the binary and the Python package.
//!
//! Architecture invariants: an `execute` decision only carries calls whose
//! tool is allowlisted and usable and whose arguments pass the strict schema,
//! from candidates that parsed without repairs (unless the profile allows
//! them); the expectation never gates execution; a gate never changes a label.
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::{Decision, Gate, Label, ToolDef};
//! use toolgate_validator::{Engine, Profile};
//!
//! let tools = [ToolDef {
//!     name: "get_weather".into(),
//!     description: None,
//!     parameters: Some(json!({
//!         "type": "object",
//!         "properties": {"city": {"type": "string"}},
//!         "required": ["city"]
//!     })),
//! }];
//! let engine = Engine::new(Profile::default());
//!
//! // The primary format executes.
//! let r = engine.parse_output(r#"<tool name="get_weather">{"city": "Antwerp"}</tool>"#, &tools, None);
//! assert_eq!(r.decision.calls()[0].arguments["city"], "Antwerp");
//! assert_eq!(r.telemetry.parse_mode, "primary");
//!
//! // A fallback JSON call without explicit intent is a correct call that
//! // policy blocks: label `pass`, decision `reject` (intent).
//! let r = engine.parse_output(r#"{"tool": "get_weather", "arguments": {"city": "Antwerp"}}"#, &tools, None);
//! assert_eq!(r.label, Label::Pass);
//! assert_eq!(r.decision.gate(), Some(Gate::Intent));
//! ```
#![deny(missing_docs)]

pub mod auto;
mod engine;
pub mod findings;
mod gates;
mod judge;
pub mod labeler;
mod mode_result;
pub mod outcome;
pub mod pipeline;
pub mod profile;
pub mod replay;
pub mod report;
pub mod resolve;
pub mod stream;
pub mod toolset;

#[cfg(test)]
mod testutil;

pub use auto::{Auto, Chosen};
pub use engine::Engine;
pub use findings::{Finding, FindingKind};
pub use gates::{GateCheck, Gated, Role};
pub use judge::{Depth, Full, Labels, Row};
pub use labeler::{Labeled, label};
pub use outcome::{ModeOutcome, Outcome};
pub use pipeline::PipelineResult;
pub use profile::{Profile, ProfileError, ProfileErrorKind};
pub use replay::{ModeResult, Replay};
pub use toolset::{Schema, Toolset, Violation};
