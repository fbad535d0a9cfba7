//! # toolgate-tui: the transcript inspector
//!
//! `toolgate inspect [PATH…]` opens a terminal UI over directories of
//! captured model transcripts. Every transcript is replayed through every
//! parse mode (strict and lenient), `native` and the custom patterns, and
//! the profile pipeline; the screen shows the list with each profile label,
//! the raw output with the selected mode's candidate spans highlighted, the
//! modes table with every gate, the detail (normalized calls, telemetry),
//! and on demand a diff between modes, the review of changed labels and
//! the streaming hold-back stepped chunk by chunk.
//!
//! ## Place in the dependency order
//!
//! core → formats → validator → batch → **tui** → the `toolgate` binary
//! (and `toolgate-testkit`'s inspector harness, for tests). The inspector
//! replays through a [`Replayer`]: the validator's engine itself, or the
//! binary's choice of [`AutoReplayer`] (each model by its `auto` profile,
//! detection over the paths run behind the screen by the batch engine).
//!
//! The command line's plain and markdown tables ([`table`]) live here too:
//! they fit a terminal with the same cutting rules (`elide`) the
//! inspector's columns use.
//!
//! ## How it is built
//!
//! gitui's shape, in three layers that import downwards only:
//!
//! - [`Store`] holds what is loaded: every watched file's transcripts,
//!   each with a summary of its replay (labels and decisions per mode, the
//!   profile's verdict, the findings), kept current from the watcher's
//!   changes, directory walks and the worker [`Pool`] (loading and replay
//!   run off the UI thread);
//! - [`App`] is navigation and the event loop: which row, pane, mode and
//!   overlay, and [`App::update`], the one place state changes, fed one
//!   [`Event`] enum by the input thread, the file watcher
//!   ([`watcher::FsWatcher`]) and the workers through one channel. It
//!   gives the selected row its whole replay, made again by the profile
//!   that judged it: here for a small transcript, on a worker
//!   ([`Job::Replay`]) for a big one, the last few kept;
//! - each view in [`views`] is a [`Component`]: it owns its own state (a
//!   scroll, the diff's comparison, the review's queue), draws from the row
//!   it shows (its props, never the whole app), answers the keys it handles
//!   and lists them as [`Command`]s. The help overlay is made of those
//!   lists. [`layout`] is the geometry both the app (paging, clicks) and
//!   the views use; [`draw`] composes the screen.
//!
//! ## Invariants
//!
//! - **Nothing raw on screen.** Every string from a transcript reaches a
//!   cell through the `text` module, which passes each character through
//!   `toolgate_core::sanitize`: an escape sequence shows as `\x1b[31m` and
//!   never reaches the terminal; the clipboard gets bytes only as OSC 52
//!   base64.
//! - **Bounded memory.** The store keeps one set of entries per file on
//!   disk, each a transcript and the summary of its replay (the whole
//!   replay, some 60 KB for a two-letter output, only for the selected
//!   transcript and the few before it): a reload replaces it, an answer to an older load is dropped, a
//!   deleted folder's range is removed in time proportional to it and
//!   freed on another thread. The list builds only its visible window (it
//!   may hold 10,000 rows); text is shown up to a display limit (512 KiB),
//!   copied up to [`clipboard::COPY_LIMIT`].
//! - **Watching directories.** The watcher classifies every change (file,
//!   directory, gone) on its own thread with a linear debounce, so the app
//!   never touches the disk; a root that disappears is reported and
//!   watched again when it comes back; a rescan reloads only files it did
//!   not know, except after lost events (a queue overflow, a watcher
//!   error: [`WatchEvent::Rescan`]), when every file is read again.
//! - **Keys are data.** [`keys::KeyList`] maps keys to actions; what each
//!   does is said once, by the view that answers it; a test fails when a
//!   view answers a key its commands do not name, or a command is missing
//!   from the help.
//!
//! ## The public surface
//!
//! The types above are re-exported here. The modules tests and the testkit
//! harness drive directly stay public (`app`, `component`, `event`, `keys`,
//! `layout`, `views`, `watcher`, `worker`, `clipboard`, `theme`, `table`);
//! the store, the list's rows and filter, the text and cutting rules and
//! the screen composition are private.
//!
//! Tests drive the app without a terminal or a file system: they feed
//! [`Event`]s to [`App::update`], run the requested [`Job`]s with
//! [`worker::execute`], and render into a `TestBackend`:
//!
//! ```
//! use toolgate_tui::{App, Event, WatchEvent};
//! let mut app = App::new(vec![], vec!["tag".into()], "default".into(), "tag");
//! app.update(Event::Watch(WatchEvent::Started(vec![])));
//! assert_eq!(app.store.watch, toolgate_tui::WatchState::Watching);
//! ```
#![deny(missing_docs)]

pub mod app;
mod auto;
pub mod clipboard;
pub mod component;
mod elide;
pub mod event;
mod filter;
pub mod keys;
pub mod layout;
mod row;
mod run;
mod store;
pub mod table;
mod text;
pub mod theme;
mod ui;
pub mod views;
pub mod watcher;
pub mod worker;

pub use app::{App, Effect, Focus, Overlay};
pub use auto::AutoReplayer;
pub use component::{Command, Component};
pub use event::{Entry, Event, Job, PathChange, PathKind, WatchEvent};
pub use row::Row;
pub use run::{LOG_ENV, run_with};
pub use store::{Store, WatchState};
pub use ui::draw;
pub use worker::{Pool, Replayer};

use std::path::PathBuf;
use std::sync::Arc;

/// What the binary passes to [`run`].
pub struct InspectOptions {
    /// Files and directories to load and watch (recursively).
    pub paths: Vec<PathBuf>,
    /// The replay engine (built-in modes, custom patterns, the profile).
    pub engine: Arc<toolgate_validator::Engine>,
    /// Whether to capture the mouse (`--mouse`).
    pub mouse: bool,
}

/// Runs the inspector until the user quits. The terminal is restored on
/// exit, on panic and on SIGTERM, SIGINT or SIGHUP (then the process exits
/// 128 + the signal); logging goes to the file named by [`LOG_ENV`], or
/// nowhere.
pub fn run(options: InspectOptions) -> std::io::Result<()> {
    let primary = options.engine.profile.primary.clone();
    let replayer: Arc<dyn Replayer> = options.engine;
    run_with(options.paths, replayer, &primary, options.mouse)
}
