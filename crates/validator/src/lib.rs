//! # toolgate-validator: phase 2 — labels, gates, decisions
//!
//! The formats crate finds *candidates* in a model's output (phase 1); this
//! crate is the only place that turns candidates into executable calls. For
//! each candidate set it says two independent things: a **label** (what the
//! model did, SPEC §5: `pass`, `wrong_tool`, `type_coercion`, …) and a
//! **decision** (what the gateway does: `execute`, `reject` by a gate, or
//! `no_call`), with the gates that led there and a telemetry record.
//!
//! ## The parts, from the bottom up
//!
//! - [`Profile`] — the policy: primary mode, fallbacks, intent tokens, size
//!   limits, repairs (TOML or built-in). [`resolve`] turns a `--profile`
//!   argument into one; [`Auto`] picks one per model.
//! - [`Toolset`] — the allowlist and one strict JSON Schema validator per
//!   tool (compiled without network or file resolvers; undeclared keys
//!   rejected at any depth). Its failures map to labels by error *kind*
//!   and instance path, never by message text.
//! - [`label`] — the one label of a candidate set against an expectation.
//! - the gates (`intent`, `single`, `size`, `parse`, `allowlist`,
//!   `schema`), one unit each, run in SPEC §9 order by [`pipeline::gate`];
//!   [`pipeline::run`] selects the primary or a fallback mode's candidates,
//!   gates them and decides.
//! - [`Engine`] — the extractors, the profile and the caches (each tool list
//!   compiled once). It judges:
//!   - a **live output** through [`Engine::judge_output`] (what `toolgate
//!     parse`, the proxy and the streaming parser [`stream`] run;
//!     [`Engine::parse_output`] and [`Engine::parse_finished`] wrap it);
//!   - a **stored transcript** through [`Engine::judge`] at a [`Depth`]:
//!     [`Labels`] (the batch fast path, an [`Outcome`]), [`Full`] (every
//!     mode strict and lenient, a [`Replay`]) or [`Row`] (the profile's
//!     [`PipelineResult`] alone). One set-up serves every depth; the older
//!     names ([`Engine::replay_as`], [`Engine::outcome_as`], …) are one-line
//!     wrappers.
//! - [`Finding`]s — what the serving stack did with the output (markup left
//!   in content, calls dropped, streams that diverge), apart from labels.
//! - [`report`] — the JSON records `toolgate parse` prints.
//!
//! ## Invariants
//!
//! - **Fail closed.** Only the gates produce `execute`, and only for calls
//!   whose tool is allowlisted and usable, whose arguments pass the strict
//!   schema, from candidates that parsed without repairs (unless the
//!   profile allows them). An unknown tool list allowlists nothing; a
//!   schema the validator cannot follow makes its tool unusable.
//! - **Whole-set decisions.** A decision is about the selected candidate
//!   set as a whole: one failing candidate rejects them all; nothing
//!   executes a subset.
//! - **Labels are independent of gates.** A label describes the output; a
//!   gate never changes it. "label `pass`, decision `reject` (intent)" is a
//!   correct call blocked by policy. The expectation never gates execution.
//! - **One judging path.** Every depth of [`Engine::judge`] starts from the
//!   same set-up and they agree where they overlap (`tests/fast_path.rs`:
//!   [`Labels`] equals the summary of [`Full`], [`Row`] its profile row);
//!   the streamed result equals the batch one ([`stream`]).
//!
//! ## Module map
//!
//! Public modules are the ones other crates reach into: [`auto`],
//! [`pipeline`], [`report`], [`resolve`], [`stream`]. The rest are private,
//! their API re-exported below: `engine` (the [`Engine`] and its caches),
//! `judge` (the depths), `replay` and `outcome` (the [`Full`] and
//! [`Labels`] bodies), `gates` (one file per gate, plus the decision),
//! `labeler`, `findings`, `profile`, and `toolset` (split into `compile`,
//! `refs` for `$ref`s, `walk` for the strict undeclared-key walk, `labels`
//! for error-to-label mapping, `suggest` for the closest name). No module
//! imports one above it.
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
mod findings;
mod gates;
mod judge;
mod labeler;
mod mode_result;
mod outcome;
pub mod output;
pub mod pipeline;
mod profile;
mod replay;
pub mod report;
pub mod resolve;
pub mod stream;
mod toolset;

#[cfg(test)]
mod testutil;

pub use auto::{Auto, Chosen};
pub use engine::Engine;
pub use findings::{Finding, FindingKind};
pub use gates::{GateCheck, Gated, Role};
pub use judge::{Depth, Full, Labels, Row};
pub use labeler::{Labeled, label};
pub use mode_result::ModeResult;
pub use outcome::{ModeOutcome, Outcome};
pub use pipeline::PipelineResult;
pub use profile::{Profile, ProfileError, ProfileErrorKind};
pub use replay::Replay;
pub use toolset::{Schema, Toolset, Violation};
