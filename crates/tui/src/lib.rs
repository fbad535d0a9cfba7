//! # toolgate-tui: the transcript inspector
//!
//! `toolgate inspect [PATH…]` opens a terminal UI over directories of
//! captured model transcripts. Every transcript is replayed through every
//! parse mode (strict and lenient), `native` and the custom patterns, and
//! the profile pipeline; the screen shows the list with each profile label,
//! the raw output with the selected mode's candidate spans highlighted, the
//! modes table with every gate, the detail (normalized calls, telemetry) and
//! a diff between modes.
//!
//! The architecture is gitui's:
//!
//! - one [`App`] holds the whole state and changes only in [`App::update`];
//! - one [`Event`] enum is fed by the input thread, the file watcher
//!   ([`watcher::FsWatcher`], notify with a linear debounce) and the worker
//!   [`Pool`] (loading and replay run off the UI thread) through one channel;
//! - the geometry (pane areas, list offset, column widths, the overlay's
//!   rectangle) is [`layout`], which both the app (scrolling, clicks) and
//!   [`draw`] use; the diff, review and stream views take the selected
//!   [`row::Row`] and the theme, not the whole app;
//! - [`draw`] only reads the app; every transcript string on screen goes
//!   through `toolgate_core::sanitize`, so escape sequences are shown as
//!   `\x1b` and never reach the terminal;
//! - keys are data ([`keys::KeyList`], with a `Default`), and the help
//!   overlay is generated from them.
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
pub mod clipboard;
pub mod component;
pub mod elide;
pub mod event;
pub mod filter;
pub mod keys;
pub mod layout;
pub mod row;
mod run;
pub mod store;
pub mod text;
pub mod theme;
pub mod ui;
pub mod views;
pub mod watcher;
pub mod worker;

pub use app::{App, Effect, Focus, Overlay, WatchState};
pub use event::{Entry, Event, Job, PathChange, PathKind, WatchEvent};
pub use run::{LOG_ENV, run_with};
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
/// exit and on panic; logging goes to the file named by [`LOG_ENV`], or
/// nowhere.
pub fn run(options: InspectOptions) -> std::io::Result<()> {
    let primary = options.engine.profile.primary.clone();
    let replayer: Arc<dyn Replayer> = options.engine;
    run_with(options.paths, replayer, &primary, options.mouse)
}
