//! # toolgate-validator: phase 2
//!
//! Only this crate turns candidates into executable calls:
//!
//! - [`Toolset`]: the allowlist and one compiled strict JSON Schema validator
//!   per tool (no network, no file resolver; a remote `$ref` makes a tool
//!   unusable and says why).
//! - [`label`](labeler::label): the one label of SPEC §5 for a set of
//!   candidates, independent of gates.
//! - [`Profile`] and [`pipeline::run`]: primary mode, fallbacks, the gates of
//!   SPEC §4 in the order of §9, the [`Decision`](toolgate_core::Decision) and
//!   the [`Telemetry`](toolgate_core::Telemetry) record.
//! - [`replay::Engine`]: every mode, strict and lenient, plus the profile, for
//!   one transcript — what the CLI and the inspector show.
#![deny(missing_docs)]

pub mod labeler;
pub mod pipeline;
pub mod profile;
pub mod replay;
pub mod toolset;

#[cfg(test)]
mod testutil;

pub use labeler::{Labeled, label};
pub use pipeline::{GateCheck, PipelineResult};
pub use profile::{Profile, ProfileError, ProfileErrorKind};
pub use replay::{Engine, ModeResult, Replay};
pub use toolset::{Schema, Toolset, Violation};
