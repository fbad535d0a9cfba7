//! # toolgate-matrix: statistics over a judged batch
//!
//! `toolgate detect` and `toolgate matrix` run a batch through
//! [`toolgate_batch`] and aggregate what each replay gave. This crate holds
//! that aggregation and the records it prints as JSON, so it can be tested
//! without the binary.
//!
//! [`detect`] answers "which wire format does each model emit?": per model
//! (or per file), how often each mode finds live candidates and passes, the
//! best mode as `auto` detects it, the outputs with tool syntax no mode
//! reads, and the profile to judge the model by.
//!
//! [`stats`] is the arithmetic of the conformance matrix: a cell's pass
//! rate with its 95% Wilson interval and the `inconclusive` flag, the
//! difference of two runs (Newcombe), pass^k and the stable / flaky /
//! failing split over repeated samples, the dominant failure.
//!
//! [`cells`] groups a judged batch into the matrix's cells by the `--by`
//! keys, and [`routing`] gives the routing metadata (per model and task tag:
//! the rate, its interval, the dominant failure and the retry advice).
//!
//! Invariants:
//!
//! - **One replay, many readers.** Aggregation reads the values the batch's
//!   workers kept of each replay; it never replays again, and what it keeps
//!   per output is a handful of counts, not the transcript.
//! - **Same choice as `auto`.** The best mode and the recommended profile
//!   are made by the validator's own detection and chooser, never by a rule
//!   of this crate.
//! - **Deterministic order.** Groups come out sorted (models first, then
//!   files), modes in engine order.

pub mod cells;
pub mod compare;
pub mod detect;
pub mod export;
pub mod routing;
pub mod stats;

pub use cells::{Cell, Cells, Judged, Key, aggregate, drop_cut_short};
pub use detect::{Group, GroupBy, ModeStats, Seen};
pub use stats::{BROKEN, FINE, inconclusive, wilson};
