//! # toolgate-matrix: statistics over a judged batch
//!
//! `toolgate detect` and `toolgate matrix` run a batch through
//! [`toolgate_batch`] and aggregate what each replay gave. This crate holds
//! that aggregation, the comparison of two runs and every record it prints
//! (JSON, CSV, HTML), so all of it is tested as a library; the binary parses
//! the arguments, picks a format and prints.
//!
//! ## Place in the dependency order
//!
//! core → formats → validator → batch → **matrix** → the `toolgate` binary.
//! It reads the validator's replays through the batch engine's entries and
//! is read by nothing but the binary.
//!
//! ## Main types and modules
//!
//! - [`Key`], [`Cell`], [`Cells`], [`aggregate`]: a judged batch grouped
//!   into the matrix's cells by the `--by` keys ([`Key::normalize`]); what
//!   matrix keeps of each replay is a [`Judged`] ([`summarize`]).
//! - [`stats`]: the arithmetic — a cell's pass rate with its 95% Wilson
//!   interval and the `inconclusive` flag, the difference of two runs
//!   (Newcombe), pass^k and the stable / flaky / failing split over
//!   repeated samples, the dominant failure.
//! - [`compare`]: `--compare BASE_DIR` — per cell the change in pass rate,
//!   flagged only where its interval excludes 0; a baseline that cannot
//!   gate (unreadable, empty, no cell in common) is refused.
//! - [`export`]: the records — a cell as JSON, the matrix as CSV (RFC 4180,
//!   formula keys defused) and as one self-contained HTML page.
//! - [`routing_table`]: the routing metadata of `--format json` (per model
//!   and task tag: the rate, its interval, the dominant failure and the
//!   retry advice).
//! - [`detect`]: "which wire format does each model emit?" — per model (or
//!   file), how often each mode finds live candidates and passes, the best
//!   mode as `auto` detects it, the outputs with tool syntax no mode reads
//!   ("leaked"), and the profile to judge the model by.
//!
//! ## Invariants
//!
//! - **One replay, many readers.** Aggregation reads the values the batch's
//!   workers kept of each replay; it never replays again, and what it keeps
//!   per output is a handful of counts, not the transcript (bounded memory).
//! - **Same choice as `auto`.** The best mode and the recommended profile
//!   are made by the validator's own detection and chooser, never by a rule
//!   of this crate.
//! - **A gate cannot pass on nothing.** A flag needs its interval to
//!   exclude the other side; a baseline that shares no cell is an error,
//!   not a run with every cell `new`.
//! - **Nothing raw in a record.** Keys (model, task, tag, file) are
//!   untrusted: escaped in HTML, formula-defused in CSV, written through
//!   `toolgate_core::jsonout` in JSON.
//! - **Deterministic order.** Cells come out in key order, groups sorted
//!   (models first, then files), modes in engine order.
//!
//! ## The public surface
//!
//! The cell types and the most used functions are re-exported here;
//! [`stats`], [`compare`], [`export`] and [`detect`] stay modules because
//! each is one concern the binary calls by path (`compare::rows`,
//! `export::html`, `detect::groups`, …). The cell aggregation (`cells`) and
//! the routing table (`routing`) are private.

mod cells;
pub mod compare;
pub mod detect;
pub mod export;
mod routing;
pub mod stats;

pub use cells::{Cell, Cells, Judged, Key, aggregate, drop_cut_short, round4, summarize, under};
pub use detect::{Group, GroupBy, ModeStats, Seen};
pub use routing::table as routing_table;
pub use stats::{BROKEN, FINE, inconclusive, wilson};
