//! # toolgate-batch: judging many transcripts at once
//!
//! `label`, `matrix` and `detect` judge directories and JSONL files of
//! transcripts that may not fit in memory. This crate is the engine under
//! them: the calling thread walks the paths and reads files (a JSONL file as
//! a stream of lines), [`BatchOptions::workers`] workers (the calling thread
//! and `workers - 1` helper threads) replay each transcript on the
//! validator's fast path under the profile `auto` chooses for its model, and
//! the calling thread gets the results in input order ([`stream_paths`], or
//! [`collect`] for callers that aggregate).
//!
//! ## Place in the dependency order
//!
//! core → formats → validator → **batch** → matrix, tui, python and the
//! `toolgate` binary. It drives the validator's engine; nothing below it
//! knows it exists.
//!
//! ## Invariants
//!
//! - **Input order.** Entries reach the caller in the order of the paths
//!   and of the lines in each file, whatever the number of workers; an
//!   unreadable file or line is an [`Entry::Bad`] in its place, and the
//!   batch goes on.
//! - **Bounded memory.** A few units of work per worker are in flight at
//!   once, and a summarized transcript is slimmed (its output and tools
//!   dropped); memory does not grow with the number of transcripts. When a
//!   model's profile stays undecided for too long, the batch reads the files
//!   a second time rather than holding them.
//! - **Same answer as one transcript at a time.** A transcript is judged
//!   under its model's final profile, as a full replay of everything would
//!   judge it; a panic in one replay is that transcript's error, not the
//!   batch's.
//!
//! On top of it sits the label engine of `toolgate label`: a [`Summarizer`]
//! keeps of each replay what the command needs ([`Labels`]: the label per
//! mode, strict and lenient, the profile's decision, the findings), compares
//! it with the labels stored in the transcript ([`differences`], and
//! [`Why`] each changed one is what it is now), renders the SPEC §7 record
//! on the worker ([`record_line`]), and [`LabelStore`] writes the labels
//! back (`--write`), each file atomically once its last transcript is in and
//! only if it did not change since it was read.
//!
//! ## Main types
//!
//! [`BatchOptions`], [`Entry`] and [`stream_paths`] / [`collect`] are the
//! engine; [`choose`] makes `auto`'s choice over a set of paths (what the
//! inspector runs behind the screen). [`Summarizer`], [`Labels`], [`Why`],
//! [`LabelStore`] and [`label_list`] are the label engine.
//!
//! [`review`] renders what `label --check` tells a reviewer: a markdown
//! summary for a PR comment and GitHub workflow annotations, every
//! untrusted string one line and escaped; its [`review::Tally`] is what a
//! check counts (changed, unlabeled, tools unknown, cut short, modes not
//! replayed) and the exit code is decided on.
//!
//! [`label_list`] judges a list already in memory the same way and with the
//! same records (the Python package's entry).
//!
//! The crate prints nothing to stdout; progress goes to stderr when it is a
//! terminal, and [`report_bad`] / [`report_cut_short`] / [`LabelStore`]
//! name what was left out or not written there.
//!
//! ## The public surface
//!
//! The names above, re-exported here, are the surface. [`review`] stays a
//! module because the binary names its renderers by path
//! (`review::markdown`, `review::annotations`); the engine (`stream`), the
//! label engine (`label`), the in-memory list (`list`) and the label writer
//! (`store`) are private.

/// `eprintln!` that drops a line stderr cannot take (its reader closed the
/// pipe) instead of panicking; see [`toolgate_core::stdio`]. Defined before
/// the modules, so that it shadows the standard one in all of them.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::toolgate_core::stdio::eprint(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!`, quiet the same way as `eprintln!` above.
macro_rules! eprint {
    ($($arg:tt)*) => {
        ::toolgate_core::stdio::eprint(format_args!($($arg)*))
    };
}

mod label;
mod list;
pub mod review;
mod store;
mod stream;

pub use stream::{
    BadInputs, BatchOptions, Entry, choose, collect, cut_short, default_workers, report_bad,
    report_cut_short, stream_paths,
};

pub use label::{
    Labels, ModeNames, NOT_STORABLE, ProfileSummary, Record, Summarizer, Why, differences,
    error_record, mode_summary, record_line, storable, stored, summarize, unlabeled, whys,
};
pub use list::{ChoiceMap, Labeled, label_list};
pub use store::LabelStore;
