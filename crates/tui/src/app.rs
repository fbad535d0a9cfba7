//! Navigation and the event loop: which row is selected, which pane has
//! the focus, which mode is shown, which overlay or prompt is open, and
//! [`App::update`], the one place any of it changes. What is loaded is the
//! [`Store`]'s; what is on screen is the views' ([`crate::views`]), which
//! the app hands their props (the row they show) and whose answers it
//! carries out. Drawing ([`crate::draw`]) only reads; disk and replay
//! work is requested as [`Job`]s that the run loop hands to the worker
//! pool (tests run them inline).

mod props;

use crate::component::Component;
pub use crate::event::current_labels;
use crate::event::{Again, Entry, Event, Job};
use crate::filter::Filter;
use crate::keys::{Action, KeyList};
use crate::layout;
pub use crate::row::{Row, SortKey};
use crate::row::{Whole, sort_rows};
use crate::store::Store;
pub use crate::store::WatchState;
use crate::theme::Theme;
use crate::views::confirm::ConfirmView;
use crate::views::copy::CopyView;
use crate::views::detail::DetailView;
pub use crate::views::diff::DiffKind;
use crate::views::diff::DiffView;
use crate::views::help::{HelpProps, HelpView};
use crate::views::list::ListView;
use crate::views::modes::ModesView;
use crate::views::output::OutputView;
use crate::views::picker::PickerView;
pub use crate::views::prompt::{Prompt, PromptKind};
use crate::views::prompt::{PromptAnswer, PromptProps};
use crate::views::review::{Review, ReviewStep, ReviewView};
use crate::views::stream::StreamView;
use crate::views::unreadable::UnreadableView;
use crate::views::{Answer, diff, modes, picker};
use ratatui::crossterm::event::{
    Event as TermEvent, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_core::load::{Fingerprint, LabelMap};
use toolgate_core::{LoadError, Transcript};
use toolgate_validator::ModeResult;

/// The panes, in Tab order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    /// The transcript list.
    List,
    /// The raw output.
    Output,
    /// The modes table.
    Modes,
    /// The detail of the selected mode.
    Detail,
    /// The status bar (Enter opens the unreadable files).
    Status,
}

impl Focus {
    const ORDER: [Focus; 5] = [
        Focus::List,
        Focus::Output,
        Focus::Modes,
        Focus::Detail,
        Focus::Status,
    ];

    fn step(self, forward: bool) -> Focus {
        let i = Focus::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        let n = Focus::ORDER.len();
        Focus::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

/// A window over the main screen: the view open in it, with its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Overlay {
    /// No overlay.
    None,
    /// Every key.
    Help,
    /// The diff view.
    Diff(DiffView),
    /// Unreadable files and why.
    Unreadable,
    /// "Accept labels?" (`y` this transcript, `a` all shown).
    ConfirmAccept,
    /// "Copy what?" (`o` raw output, `c` calls, `r` repro transcript).
    Copy,
    /// The review flow: where it is.
    Review(ReviewView),
    /// The Stream view: the recorded `chunks` after some deltas.
    Stream(StreamView),
    /// The mode picker: type to narrow, ↑/↓, Enter picks.
    ModePicker(PickerView),
}

/// Something only the terminal loop can do (tests read them instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Put `text` on the clipboard (OSC 52).
    Copy {
        /// What it is, for the message.
        what: crate::clipboard::CopyWhat,
        /// The exact text.
        text: String,
    },
    /// Open `path` in `$VISUAL` / `$EDITOR`, at `line` when known.
    Edit {
        /// The transcript file.
        path: PathBuf,
        /// Its line (JSONL).
        line: Option<usize>,
    },
}

/// What the engine behind the inspector offers, fixed for the session
/// except the profile `p` picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// Every mode, in engine order.
    pub modes: Vec<String>,
    /// The profile's primary mode.
    pub primary: String,
    /// The profile's name (`auto`: each transcript by its model's).
    pub profile: String,
    /// The profiles the `p` prompt accepts (empty: no picker).
    pub profiles: Vec<String>,
    /// The replayer's modes with their stream openers
    /// ([`crate::Replayer::openers`]), for the Stream view.
    pub openers: Vec<(String, Option<&'static [&'static str]>)>,
}

/// The label writes one accept (`a`) asked for, counted as they finish,
/// so the status bar reports the whole batch, not its last file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteBatch {
    /// Files still being written.
    pub pending: usize,
    /// Files written (as shown).
    pub files: Vec<String>,
    /// Transcripts whose labels were written.
    pub transcripts: usize,
    /// Files that could not be written, with the reason.
    pub failed: Vec<String>,
    /// Transcripts accepted but not stored: their files are captures in
    /// another format ([`toolgate_batch::storable`]).
    pub not_stored: usize,
}

/// The labels `a` writes into one file, with the fingerprint of the text
/// its rows were read from.
type FileUpdates = (Option<Fingerprint>, Vec<(Option<usize>, LabelMap)>);

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl WriteBatch {
    /// What the status bar says about the batch.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.pending > 0 {
            parts.push(format!(
                "writing labels to {}…",
                plural(self.pending, "file", "files")
            ));
        }
        if !self.files.is_empty()
            || (self.pending == 0 && self.failed.is_empty() && self.not_stored == 0)
        {
            let to = match self.files.as_slice() {
                [one] => one.clone(),
                files => plural(files.len(), "file", "files"),
            };
            parts.push(format!(
                "wrote labels of {} to {to}",
                plural(self.transcripts, "transcript", "transcripts"),
            ));
        }
        if let Some(first) = self.failed.first() {
            parts.push(format!(
                "could not write {} ({first})",
                plural(self.failed.len(), "file", "files")
            ));
        }
        if self.not_stored > 0 {
            parts.push(format!(
                "{} not stored: {}",
                plural(self.not_stored, "transcript", "transcripts"),
                toolgate_batch::NOT_STORABLE
            ));
        }
        parts.join("; ")
    }
}

/// The inspector's whole state.
pub struct App {
    /// Key bindings.
    pub keys: KeyList,
    /// Colors or not.
    pub theme: Theme,
    /// What the engine offers: modes, primary, profiles.
    pub session: Session,
    /// The loaded transcripts (and the watcher's state).
    pub store: Store,
    /// The filtered, sorted list.
    pub rows: Vec<Row>,
    /// Every unreadable file or line, with the reason.
    pub unreadable: Vec<LoadError>,
    /// Index of the selected row.
    pub selected: usize,
    /// The list view: its search, filter, order and the first row shown.
    pub list: ListView,
    user_moved: bool,
    selected_key: Option<(PathBuf, Option<usize>)>,
    /// Focused pane.
    pub focus: Focus,
    /// The mode the user picked; `None` follows the profile (the mode
    /// whose candidates the pipeline selected, else the primary).
    pub mode: Option<String>,
    /// Show lenient results instead of strict.
    pub lenient: bool,
    /// Show (and step through) only the modes that found candidates.
    pub only_found: bool,
    /// The output pane (its scroll).
    pub output: OutputView,
    /// The detail pane (its scroll).
    pub detail: DetailView,
    /// Overlay scroll (rows).
    pub overlay_scroll: usize,
    /// The open overlay.
    pub overlay: Overlay,
    /// The prompt line, when open.
    pub prompt: Option<Prompt>,
    /// A one-off message for the status bar.
    pub message: Option<String>,
    /// Terminal size (for paging and mouse hit-testing).
    pub size: Rect,
    /// Whether the user asked to quit.
    pub quit: bool,
    /// The label writes of the last accept.
    pub writes: WriteBatch,
    /// Whole replays of the transcripts selected last, the newest last
    /// (at most [`REPLAYS_KEPT`]): the store keeps summaries only.
    replays: Vec<(Arc<Entry>, Whole)>,
    /// The replayer the app replays a small selected transcript with on
    /// this thread; `None` (or a big one): the workers do
    /// ([`App::take_replay`]).
    replayer: Option<Arc<dyn crate::Replayer>>,
    /// The transcript the workers are replaying (one at a time: holding
    /// `j` over big transcripts queues nothing).
    replaying: Option<Arc<Entry>>,
    /// The replay to hand the workers, not yet taken.
    replay_job: Option<Job>,
    /// The row the selected transcript's whole replay is attached to.
    attached: Option<usize>,
    /// A profile picked with `p` (`Some(None)`: back to auto), for the
    /// event loop to hand to the replayer before the files are replayed again.
    pub profile_request: Option<Option<String>>,
    effects: Vec<Effect>,
}

impl App {
    /// A fresh app over `roots` (absolute path, as the user wrote it) for an
    /// engine with these modes; queues the initial scans.
    pub fn new(
        roots: Vec<(PathBuf, String)>,
        modes: Vec<String>,
        profile: String,
        primary: &str,
    ) -> App {
        App {
            keys: KeyList::default(),
            theme: Theme::from_env(),
            session: Session {
                modes,
                primary: primary.to_string(),
                profile,
                profiles: Vec::new(),
                openers: Vec::new(),
            },
            store: Store::new(roots),
            rows: Vec::new(),
            unreadable: Vec::new(),
            selected: 0,
            list: ListView::default(),
            user_moved: false,
            selected_key: None,
            focus: Focus::List,
            mode: None,
            lenient: false,
            only_found: false,
            output: OutputView::default(),
            detail: DetailView::default(),
            overlay_scroll: 0,
            overlay: Overlay::None,
            prompt: None,
            message: None,
            size: Rect::new(0, 0, 120, 40),
            quit: false,
            writes: WriteBatch::default(),
            profile_request: None,
            effects: Vec::new(),
            replays: Vec::new(),
            replayer: None,
            replaying: None,
            replay_job: None,
            attached: None,
        }
    }

    /// Lets the app replay a small selected transcript itself, with the
    /// replayer the workers load with (the run loop's; the test harness's):
    /// the views then show it without waiting a frame.
    pub fn set_replayer(&mut self, replayer: Arc<dyn crate::Replayer>) {
        self.replayer = Some(replayer);
        self.attach_replay();
    }

    /// The replay of the selected transcript the workers are asked to make
    /// ([`Job::Replay`]), once; kept apart from [`App::take_jobs`].
    pub fn take_replay(&mut self) -> Option<Job> {
        self.replay_job.take()
    }

    /// Jobs requested since the last call, for the worker pool.
    pub fn take_jobs(&mut self) -> Vec<Job> {
        self.store.take_jobs()
    }

    /// Terminal effects requested since the last call, for the run loop.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// The selected row.
    pub fn current(&self) -> Option<&Row> {
        self.rows.get(self.selected)
    }

    /// The selected mode's result for the selected transcript (strict or
    /// lenient as toggled), once its whole replay is made.
    pub fn current_mode(&self) -> Option<&ModeResult> {
        let row = self.current()?;
        row.mode_result(self.mode_shown(), self.lenient)
    }

    /// The mode shown: the picked one, else the one the profile selected
    /// for the current transcript, else the first mode that found a live
    /// candidate (a transcript in another family's format opens on the mode
    /// that reads it), else the primary.
    pub fn mode_name(&self) -> String {
        self.mode_shown().to_string()
    }

    /// `mode`'s whole result in `row` (only the selected row has its whole
    /// replay: [`Row::replay`]).
    pub fn mode_result<'a>(
        &self,
        row: &'a Row,
        mode: &str,
        lenient: bool,
    ) -> Option<&'a ModeResult> {
        row.mode_result(mode, lenient)
    }

    /// Load progress: (files loaded, files known), and outstanding scans.
    pub fn progress(&self) -> (usize, usize, usize) {
        self.store.progress()
    }

    /// Total transcripts loaded (before filtering).
    pub fn total(&self) -> usize {
        self.store.total()
    }

    /// Whether loaded data changed since the list was last rebuilt.
    pub fn is_dirty(&self) -> bool {
        self.store.is_dirty()
    }

    /// Replays every known file again (after a profile pick).
    pub fn reload_all(&mut self) {
        self.store.reload_all();
    }

    /// Applies one event. The only place state changes.
    pub fn update(&mut self, event: Event) {
        self.apply(event);
        self.attach_replay();
    }

    fn apply(&mut self, event: Event) {
        match event {
            Event::Input(input) => {
                // A key rebuilds the list only when it changed the view (sort,
                // filter…); loaded data waits for the next tick, so keys stay
                // cheap while a big directory loads.
                let loaded = self.store.take_dirty();
                self.input(input);
                if self.store.is_dirty() {
                    self.rebuild();
                } else {
                    self.store.set_dirty(loaded);
                }
            }
            Event::Watch(w) => self.store.watch_event(w),
            Event::Scanned {
                dir,
                files,
                aliases,
                errors,
            } => self.store.scanned(dir, files, &aliases, errors),
            Event::Loaded {
                path,
                seq,
                items,
                writing,
            } => self.store.loaded(path, seq, items, writing),
            Event::Replayed { entry, replay } => {
                if self
                    .replaying
                    .as_ref()
                    .is_some_and(|e| Arc::ptr_eq(e, &entry))
                {
                    self.replaying = None;
                }
                let whole = whole_of(&entry, replay);
                self.keep_replay(entry, whole);
            }
            Event::Written {
                path,
                result,
                stale,
            } => {
                let shown = self.store.display_path(&path);
                let batch = &mut self.writes;
                batch.pending = batch.pending.saturating_sub(1);
                match result {
                    Ok(n) => {
                        batch.files.push(shown);
                        batch.transcripts += n;
                    }
                    Err(_) if stale => batch.failed.push(format!(
                        "{shown} changed since its rows were read; it is read again: check them and accept again"
                    )),
                    Err(e) => batch.failed.push(format!("{shown}: {e}")),
                }
                self.message = Some(batch.summary());
                // The watcher reloads the file; reload anyway in case it is off.
                self.store.request_load(path, true);
            }
            Event::Tick => {
                if self.store.is_dirty() {
                    self.rebuild();
                }
            }
        }
    }

    /// Recomputes the list (filter, sort) and keeps the selection on the
    /// same transcript when it is still shown.
    fn rebuild(&mut self) {
        let (mut rows, unreadable) = self.store.collect(|entry, path| {
            let row = Row::new(entry, path, self.list.filter.mode.as_deref(), self.lenient);
            self.list.filter.keeps(&row).then_some(row)
        });
        sort_rows(&mut rows, self.list.sort);
        if self.list.reverse {
            rows.reverse();
        }
        // The old rows may hold the last reference to removed entries:
        // freed off this thread.
        crate::store::drop_later(std::mem::replace(&mut self.rows, rows));
        // The new rows carry no whole replay yet (attached after the update).
        self.attached = None;
        self.unreadable = unreadable;
        if !self.user_moved {
            // Until the user moves, the first row stays selected while the
            // list fills in (whatever loads first).
            self.selected = 0;
            self.remember_selection();
            self.keep_selection_visible();
            return;
        }
        let key = self.selected_key.clone();
        let found = key.and_then(|(p, l)| {
            self.rows
                .iter()
                .position(|r| r.entry.transcript.path == p && r.entry.transcript.line == l)
        });
        let previous = self.selected;
        self.selected = found.unwrap_or(self.selected.min(self.rows.len().saturating_sub(1)));
        if found.is_none() || previous != self.selected {
            self.remember_selection();
        }
        self.keep_selection_visible();
    }

    /// Gives the selected row its whole replay: kept from a recent
    /// selection, made here for a small transcript, or asked of the workers
    /// (the views say it is being made until it comes). The row selected
    /// before gives its replay back to the kept ones.
    fn attach_replay(&mut self) {
        if let Some(i) = self.attached.take()
            && i != self.selected
            && let Some(row) = self.rows.get_mut(i)
        {
            row.whole = Whole::Waiting;
        }
        let Some(row) = self.rows.get(self.selected) else {
            return;
        };
        if !matches!(row.whole, Whole::Waiting) {
            self.attached = Some(self.selected);
            return;
        }
        let entry = Arc::clone(&row.entry);
        let whole = match self
            .replays
            .iter()
            .position(|(e, _)| Arc::ptr_eq(e, &entry))
        {
            Some(i) => {
                // The most recent last.
                let kept = self.replays.remove(i);
                let whole = kept.1.clone();
                self.replays.push(kept);
                whole
            }
            None => match &self.replayer {
                Some(replayer) if replay_cost(&entry.transcript) <= SYNC_REPLAY_BYTES => {
                    let made = crate::worker::replay_again(&entry, replayer.as_ref());
                    let whole = whole_of(&entry, made.map(Arc::new));
                    self.keep_replay(Arc::clone(&entry), whole.clone());
                    whole
                }
                _ => {
                    if self.replaying.is_none() {
                        self.replaying = Some(Arc::clone(&entry));
                        self.replay_job = Some(Job::Replay(Again(entry)));
                    }
                    return;
                }
            },
        };
        if let Some(row) = self.rows.get_mut(self.selected) {
            row.whole = whole;
            self.attached = Some(self.selected);
        }
    }

    /// Keeps `entry`'s whole replay among the recent ones; the oldest past
    /// [`REPLAYS_KEPT`] is freed off this thread (it may be big).
    fn keep_replay(&mut self, entry: Arc<Entry>, whole: Whole) {
        self.replays.retain(|(e, _)| !Arc::ptr_eq(e, &entry));
        self.replays.push((entry, whole));
        if self.replays.len() > REPLAYS_KEPT {
            let oldest = self.replays.remove(0);
            crate::store::drop_later(oldest);
        }
    }

    fn remember_selection(&mut self) {
        self.selected_key = self
            .rows
            .get(self.selected)
            .map(|r| (r.entry.transcript.path.clone(), r.entry.transcript.line));
    }

    fn select(&mut self, index: usize) {
        self.user_moved = true;
        let index = index.min(self.rows.len().saturating_sub(1));
        if index != self.selected {
            self.selected = index;
            self.output.scroll = None;
            self.detail.scroll = 0;
        }
        self.keep_selection_visible();
        self.remember_selection();
    }

    fn keep_selection_visible(&mut self) {
        let areas = layout::layout(self.size, self.prompt.is_some());
        self.list.follow(self.selected, self.rows.len(), areas.list);
    }

    // ---- input --------------------------------------------------------

    fn input(&mut self, input: TermEvent) {
        match input {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => self.key(key),
            TermEvent::Mouse(mouse) => self.mouse(mouse),
            TermEvent::Resize(w, h) => self.size = Rect::new(0, 0, w, h),
            _ => {}
        }
    }

    fn key(&mut self, key: KeyEvent) {
        if self.prompt.is_some() {
            self.prompt_key(key);
            return;
        }
        let action = self.keys.action(&key);
        if self.overlay != Overlay::None {
            self.overlay_key(&key, action);
            return;
        }
        let Some(action) = action else { return };
        self.message = None;
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.open_overlay(Overlay::Help),
            Action::Unreadable => self.open_overlay(Overlay::Unreadable),
            Action::Open => {
                if self.focus == Focus::Status {
                    self.open_overlay(Overlay::Unreadable);
                }
            }
            Action::Close => {
                if !self.list.filter.is_empty() {
                    self.set_filter(Filter::default());
                } else {
                    self.list.search = None;
                }
            }
            Action::NextPane => self.focus = self.focus.step(true),
            Action::PrevPane => self.focus = self.focus.step(false),
            Action::Search => self.open_prompt(PromptKind::Search, String::new()),
            Action::Filter => self.open_prompt(PromptKind::Filter, self.list.filter.text.clone()),
            Action::Profile => {
                if self.session.profiles.is_empty() {
                    self.message = Some("one profile judges every transcript (--profile)".into());
                } else {
                    self.open_prompt(PromptKind::Profile, String::new());
                }
            }
            Action::SearchNext => self.search_step(true, false),
            Action::SearchPrev => self.search_step(false, false),
            Action::Sort => {
                self.list.sort = self.list.sort.next();
                self.store.set_dirty(true);
            }
            Action::ReverseSort => {
                self.list.reverse = !self.list.reverse;
                self.store.set_dirty(true);
            }
            Action::Copy => {
                if self.current().is_some() {
                    self.open_overlay(Overlay::Copy);
                }
            }
            Action::Review => self.start_review(),
            Action::Edit => {
                if let Some(row) = self.current() {
                    let t = &row.entry.transcript;
                    self.effects.push(Effect::Edit {
                        path: t.path.clone(),
                        line: t.line,
                    });
                }
            }
            Action::NextMode | Action::PrevMode => {
                self.step_mode(action == Action::NextMode);
            }
            Action::PickMode => {
                let at = self
                    .session
                    .modes
                    .iter()
                    .position(|m| *m == self.mode_name());
                self.open_overlay(Overlay::ModePicker(PickerView {
                    query: String::new(),
                    selected: at.unwrap_or(0),
                }));
            }
            Action::FollowProfile => {
                self.pick_mode(None);
                self.message = Some("following the profile's mode".into());
            }
            Action::OnlyFound => {
                self.only_found = !self.only_found;
                self.message = Some(
                    if self.only_found {
                        "modes: only those that found candidates"
                    } else {
                        "modes: every mode"
                    }
                    .into(),
                );
            }
            Action::ToggleLenient => {
                self.lenient = !self.lenient;
                self.detail.scroll = 0;
                if self.list.filter.mode.is_some() {
                    self.store.set_dirty(true);
                }
            }
            Action::Diff => {
                if self.current().is_some() {
                    let other = diff::cycle(&self.session.modes, &self.mode_name(), true);
                    self.open_overlay(Overlay::Diff(DiffView {
                        kind: DiffKind::StrictVsLenient,
                        other,
                    }));
                }
            }
            Action::Stream => match self.current() {
                Some(row) if row.entry.transcript.chunks.is_some() => {
                    self.open_overlay(Overlay::Stream(StreamView { step: 1 }));
                }
                Some(_) => {
                    self.message = Some("no recorded `chunks` in this transcript".into());
                }
                None => {}
            },
            Action::Accept => {
                if self.current().is_some() {
                    self.open_overlay(Overlay::ConfirmAccept);
                }
            }
            Action::Down
            | Action::Up
            | Action::Top
            | Action::Bottom
            | Action::PageDown
            | Action::PageUp => self.navigate(action),
        }
    }

    /// A key while an overlay is open: the open view answers it.
    fn overlay_key(&mut self, key: &KeyEvent, action: Option<Action>) {
        let mut overlay = std::mem::replace(&mut self.overlay, Overlay::None);
        match &mut overlay {
            Overlay::None => {}
            Overlay::ConfirmAccept => {
                match ConfirmView.event(key, action, &self.confirm_props()) {
                    Answer::Ask(all) => self.accept(all),
                    _ => self.message = Some("accept cancelled".into()),
                }
                return;
            }
            Overlay::ModePicker(view) => match view.event(key, action, &self.picker_props()) {
                Answer::Close => return self.close_overlay(),
                Answer::Ask(picked) => {
                    self.close_overlay();
                    match picked {
                        Ok(m) => self.pick_mode(Some(m)),
                        Err(why) => self.message = Some(why),
                    }
                    return;
                }
                _ => {}
            },
            Overlay::Review(view) => {
                let answer = view.event(key, action, &self.review_props());
                let summary = view.review.summary();
                self.overlay = overlay;
                match answer {
                    Answer::Ask(ReviewStep::Accept) => {
                        if let Some(row) = self.current() {
                            let t = &row.entry.transcript;
                            let (path, update) =
                                (t.path.clone(), (t.line, current_labels(&row.entry)));
                            let fingerprint = row.entry.fingerprint;
                            self.writes.pending += 1;
                            self.store.push(Job::WriteLabels {
                                path,
                                updates: vec![update],
                                fingerprint,
                            });
                        }
                        self.review_show();
                    }
                    Answer::Ask(ReviewStep::Next) => self.review_show(),
                    Answer::Close => {
                        self.close_overlay();
                        self.message = Some(summary);
                    }
                    Answer::Scroll(a) => self.scroll_overlay(a),
                    Answer::Handled | Answer::Ignored => {}
                }
                return;
            }
            Overlay::Copy => {
                match CopyView.event(key, action, &self.copy_props()) {
                    Answer::Ask(what) => self.copy(what),
                    _ => self.message = Some("copy cancelled".into()),
                }
                return;
            }
            Overlay::Diff(view) => {
                let answer = view.event(key, action, &self.diff_props());
                // It compares something else now: back to the top.
                let moved = answer == Answer::Handled;
                self.overlay = overlay;
                if moved {
                    self.overlay_scroll = 0;
                }
                return self.window_answer(answer);
            }
            Overlay::Stream(view) => {
                let answer = view.event(key, action, &self.stream_props());
                self.overlay = overlay;
                return self.window_answer(answer);
            }
            Overlay::Help => {
                let props = HelpProps {
                    keys: &self.keys,
                    commands: &[],
                    window: self.window(),
                };
                let answer = HelpView.event(key, action, &props);
                self.overlay = overlay;
                return self.window_answer(answer);
            }
            Overlay::Unreadable => {
                let answer = UnreadableView.event(key, action, &self.unreadable_props());
                self.overlay = overlay;
                return self.window_answer(answer);
            }
        }
        self.overlay = overlay;
    }

    /// What the overlay window does for a view's answer: close or scroll.
    fn window_answer<R>(&mut self, answer: Answer<R>) {
        match answer {
            Answer::Close => self.close_overlay(),
            Answer::Scroll(a) => self.scroll_overlay(a),
            _ => {}
        }
    }

    fn start_review(&mut self) {
        let queue: Vec<(PathBuf, Option<usize>)> = self
            .rows
            .iter()
            .filter(|r| r.changed || r.unlabeled)
            .map(|r| (r.entry.transcript.path.clone(), r.entry.transcript.line))
            .collect();
        if queue.is_empty() {
            self.message = Some(
                "nothing to review: every shown transcript's labels are stored and current".into(),
            );
            return;
        }
        self.writes = WriteBatch::default();
        self.open_overlay(Overlay::Review(ReviewView {
            review: Review {
                queue,
                ..Default::default()
            },
        }));
        self.review_show();
    }

    /// The review in progress (`r`).
    pub fn review(&self) -> Option<&Review> {
        match &self.overlay {
            Overlay::Review(view) => Some(&view.review),
            _ => None,
        }
    }

    /// Selects the transcript the review is at, skipping any that left the
    /// list (deleted, filtered out); ends the review past the last one.
    fn review_show(&mut self) {
        loop {
            let Some(review) = self.review() else { return };
            let Some((path, line)) = review.queue.get(review.pos).cloned() else {
                let summary = review.summary();
                self.close_overlay();
                self.message = Some(summary);
                return;
            };
            match self
                .rows
                .iter()
                .position(|r| r.entry.transcript.path == path && r.entry.transcript.line == line)
            {
                Some(i) => {
                    self.select(i);
                    self.overlay_scroll = 0;
                    return;
                }
                None => {
                    if let Overlay::Review(view) = &mut self.overlay {
                        view.review.pos += 1;
                    }
                }
            }
        }
    }

    fn copy(&mut self, what: crate::clipboard::CopyWhat) {
        let Some(row) = self.current() else { return };
        if what != crate::clipboard::CopyWhat::Output && row.replay().is_none() {
            // The calls and the repro come from the whole replay: copying
            // them before it is made would copy nothing, silently.
            self.message = Some(format!("not copied: {}", text_one_line(row.replay_note())));
            return;
        }
        let text = crate::clipboard::copy_text(what, &row.entry, self.current_mode());
        if text.len() > crate::clipboard::COPY_LIMIT {
            self.message = Some(format!(
                "not copied: the {} is {} bytes (limit {})",
                what.name(),
                text.len(),
                crate::clipboard::COPY_LIMIT
            ));
            return;
        }
        self.message = Some(format!(
            "copied the {} ({} bytes) to the clipboard (OSC 52)",
            what.name(),
            text.len()
        ));
        self.effects.push(Effect::Copy { what, text });
    }

    fn open_overlay(&mut self, overlay: Overlay) {
        self.overlay = overlay;
        self.overlay_scroll = 0;
    }

    fn close_overlay(&mut self) {
        self.overlay = Overlay::None;
        self.overlay_scroll = 0;
    }

    fn scroll_overlay(&mut self, action: Action) {
        let page = layout::overlay_page(self.size);
        let max = self.overlay_rows().saturating_sub(page);
        self.overlay_scroll = layout::scroll_to(self.overlay_scroll, action, page, max);
    }

    /// The modes run for the selected transcript, in engine order (`native`
    /// only where the transcript has `tool_calls`); every mode when nothing
    /// is selected.
    pub fn row_modes(&self) -> Vec<&str> {
        match self.current() {
            Some(row) => modes::names(Some(row), self.lenient, self.only_found),
            None => self.session.modes.iter().map(String::as_str).collect(),
        }
    }

    /// The modes table's rows for the selected transcript: every mode run
    /// (strict or lenient as toggled), or only those that found candidates.
    pub fn shown_modes(&self) -> impl Iterator<Item = &ModeResult> {
        modes::shown(self.current(), self.lenient, self.only_found)
    }

    /// The modes the picker offers for `query`.
    pub fn picker_modes(&self, query: &str) -> Vec<&str> {
        picker::matching(&self.session.modes, query)
    }

    fn pick_mode(&mut self, mode: Option<String>) {
        self.mode = mode;
        self.output.scroll = None;
        self.detail.scroll = 0;
    }

    /// `m` / `M`: the next or previous mode run for this transcript; past
    /// either end, back to following the profile.
    fn step_mode(&mut self, forward: bool) {
        let names: Vec<String> = self.row_modes().iter().map(|m| m.to_string()).collect();
        let edge = if forward { names.last() } else { names.first() };
        self.mode = match &self.mode {
            Some(m) if Some(m) == edge || names.is_empty() => None,
            _ => {
                let current = self.mode_name();
                let n = names.len();
                match names.iter().position(|m| *m == current) {
                    Some(i) if forward => Some(names[(i + 1) % n].clone()),
                    Some(i) => Some(names[(i + n - 1) % n].clone()),
                    None => names.first().cloned(),
                }
            }
        };
        self.output.scroll = None;
        self.detail.scroll = 0;
    }

    /// A movement in the focused pane: its view answers it.
    fn navigate(&mut self, action: Action) {
        let areas = layout::layout(self.size, self.prompt.is_some());
        let key = KeyEvent::from(ratatui::crossterm::event::KeyCode::Null);
        match self.focus {
            Focus::List | Focus::Status => {
                let props = self.list_props(areas.list, true);
                let mut list = self.list.clone();
                if let Some(to) = list.event(&key, Some(action), &props) {
                    self.select(to);
                }
            }
            Focus::Output => {
                let props = self.pane(areas.output, true);
                let mut output = self.output.clone();
                output.event(&key, Some(action), &props);
                self.output = output;
            }
            Focus::Detail => {
                let props = self.pane(areas.detail, true);
                let mut detail = self.detail.clone();
                detail.event(&key, Some(action), &props);
                self.detail = detail;
            }
            Focus::Modes => {
                let props = self.modes_props(areas.modes, true);
                if let Some(mode) = ModesView.event(&key, Some(action), &props) {
                    self.pick_mode(Some(mode));
                }
            }
        }
    }

    fn open_prompt(&mut self, kind: PromptKind, text: String) {
        let mut prompt = Prompt::new(
            kind,
            text,
            self.selected,
            self.list.filter.clone(),
            self.list.search.clone(),
        );
        if kind == PromptKind::Filter {
            prompt.matches = self.rows.len();
        }
        self.prompt = Some(prompt);
    }

    fn prompt_key(&mut self, key: KeyEvent) {
        let Some(mut prompt) = self.prompt.take() else {
            return;
        };
        let props = PromptProps {
            total: self.store.total(),
            theme: &self.theme,
        };
        let answer = prompt.event(&key, None, &props);
        match answer {
            PromptAnswer::Cancel => {
                // Cancel: what was there before the prompt opened comes back.
                self.list.search = prompt.before_search;
                match prompt.kind {
                    PromptKind::Filter if self.list.filter != prompt.before => {
                        self.set_filter(prompt.before);
                    }
                    PromptKind::Filter => {}
                    PromptKind::Search => self.select(prompt.origin),
                    PromptKind::Profile => {}
                }
            }
            PromptAnswer::Submit => match (prompt.kind, prompt.error.clone()) {
                (PromptKind::Filter, Some(e)) => {
                    // A typo keeps what was typed, to be corrected.
                    self.message = Some(e);
                    self.prompt = Some(prompt);
                }
                (PromptKind::Search, _) => {
                    let value = prompt.input.value().trim().to_lowercase();
                    self.list.search = (!value.is_empty()).then_some(value);
                    if self.list.search.is_some()
                        && self.current().is_none_or(|r| !self.is_match(r))
                    {
                        self.search_step(true, true);
                    }
                }
                (PromptKind::Filter, None) => {}
                (PromptKind::Profile, _) => {
                    let value = prompt.input.value().trim().to_string();
                    self.pick_profile(&value);
                }
            },
            PromptAnswer::Edited => {
                self.prompt = Some(prompt);
                self.prompt_changed();
            }
            PromptAnswer::Unchanged => self.prompt = Some(prompt),
        }
    }

    /// The prompt text changed: apply it live.
    fn prompt_changed(&mut self) {
        let Some(prompt) = self.prompt.as_ref() else {
            return;
        };
        let value = prompt.input.value().to_string();
        let origin = prompt.origin;
        match prompt.kind {
            PromptKind::Search => {
                let needle = value.trim().to_lowercase();
                self.list.search = (!needle.is_empty()).then_some(needle.clone());
                let matches = if needle.is_empty() {
                    0
                } else {
                    self.rows.iter().filter(|r| r.matches(&needle)).count()
                };
                if let Some(p) = self.prompt.as_mut() {
                    p.matches = matches;
                }
                if needle.is_empty() || matches == 0 {
                    self.select(origin);
                } else {
                    // From where the prompt opened, the first match on.
                    let n = self.rows.len();
                    if let Some(i) = (0..n)
                        .map(|k| (origin + k) % n)
                        .find(|&i| self.rows[i].matches(&needle))
                    {
                        self.select(i);
                    }
                }
            }
            PromptKind::Filter => {
                let parsed = Filter::parse(&value).and_then(|f| match &f.mode {
                    Some(mode) if !self.session.modes.iter().any(|m| m == mode) => Err(format!(
                        "no mode `{mode}` (known: {})",
                        self.session.modes.join(", ")
                    )),
                    _ => Ok(f),
                });
                let error = match parsed {
                    Ok(filter) => {
                        self.set_filter(filter);
                        None
                    }
                    Err(e) => {
                        // Shows nothing until it reads right (not what the
                        // part before the typo matched).
                        self.set_filter(Filter::matching_nothing(&value));
                        Some(e)
                    }
                };
                let shown = self.rows.len();
                if let Some(p) = self.prompt.as_mut() {
                    p.error = error;
                    p.matches = shown;
                }
            }
            PromptKind::Profile => {}
        }
    }

    /// Whether `row` matches the current search.
    pub fn is_match(&self, row: &Row) -> bool {
        self.list
            .search
            .as_deref()
            .is_some_and(|needle| row.matches(needle))
    }

    /// `p`: judge every transcript by `name` (empty or `auto`: each by its
    /// model's own profile again) and replay every file.
    fn pick_profile(&mut self, name: &str) {
        let request = match name {
            "" | "auto" => None,
            name if self.session.profiles.iter().any(|p| p == name) => Some(name.to_string()),
            name => {
                self.message = Some(format!(
                    "no profile `{}` (known: auto, {})",
                    text_one_line(name),
                    self.session.profiles.join(", ")
                ));
                return;
            }
        };
        self.session.profile = request.clone().unwrap_or_else(|| "auto".into());
        self.message = Some(format!(
            "profile {}: replaying every file",
            self.session.profile
        ));
        self.profile_request = Some(request);
    }

    fn set_filter(&mut self, filter: Filter) {
        if let Some(mode) = &filter.mode
            && !self.session.modes.iter().any(|m| m == mode)
        {
            self.message = Some(format!(
                "no mode `{mode}` (known: {})",
                self.session.modes.join(", ")
            ));
            return;
        }
        if let Some(mode) = &filter.mode {
            self.mode = Some(mode.clone());
        }
        self.list.filter = filter;
        self.store.set_dirty(true);
        self.rebuild();
    }

    fn search_step(&mut self, forward: bool, inclusive: bool) {
        let Some(needle) = self.list.search.clone() else {
            self.message = Some("no search: press / first".into());
            return;
        };
        let n = self.rows.len();
        if n == 0 {
            return;
        }
        let start = self.selected;
        let found = (0..n)
            .map(|k| {
                let k = if inclusive { k } else { k + 1 };
                if forward {
                    (start + k) % n
                } else {
                    (start + n - k % n) % n
                }
            })
            .find(|&i| self.rows[i].matches(&needle));
        match found {
            Some(i) => self.select(i),
            None => self.message = Some(format!("no match for `{}`", text_one_line(&needle))),
        }
    }

    fn accept(&mut self, all: bool) {
        let rows: Vec<&Row> = if all {
            self.rows
                .iter()
                .filter(|r| r.changed || r.unlabeled)
                .collect()
        } else {
            self.current().into_iter().collect()
        };
        // A file's rows all come from one load (the store replaces a file's
        // items whole), so they share one fingerprint.
        let mut by_file: BTreeMap<PathBuf, FileUpdates> = BTreeMap::new();
        let mut not_stored = 0;
        for row in rows {
            let t = &row.entry.transcript;
            // The same rule as `label --write`: a provider's capture is not
            // rewritten.
            if !toolgate_batch::storable(t) {
                not_stored += 1;
                continue;
            }
            by_file
                .entry(t.path.clone())
                .or_insert_with(|| (row.entry.fingerprint, Vec::new()))
                .1
                .push((t.line, current_labels(&row.entry)));
        }
        if by_file.is_empty() && not_stored == 0 {
            self.message = Some("nothing to accept: every shown label is stored".into());
            return;
        }
        self.writes = WriteBatch {
            pending: by_file.len(),
            not_stored,
            ..WriteBatch::default()
        };
        self.message = Some(self.writes.summary());
        for (path, (fingerprint, updates)) in by_file {
            self.store.push(Job::WriteLabels {
                path,
                updates,
                fingerprint,
            });
        }
    }

    fn mouse(&mut self, mouse: MouseEvent) {
        if self.overlay != Overlay::None || self.prompt.is_some() {
            match mouse.kind {
                MouseEventKind::ScrollDown => self.scroll_overlay(Action::Down),
                MouseEventKind::ScrollUp => self.scroll_overlay(Action::Up),
                _ => {}
            }
            return;
        }
        let areas = layout::layout(self.size, false);
        let at = Position::new(mouse.column, mouse.row);
        let pane = [
            (areas.list, Focus::List),
            (areas.output, Focus::Output),
            (areas.modes, Focus::Modes),
            (areas.detail, Focus::Detail),
            (areas.status, Focus::Status),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(at))
        .map(|(_, f)| f);
        let Some(pane) = pane else { return };
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                if pane == Focus::List {
                    // Border and header rows come first.
                    let first = layout::first_table_row(areas.list);
                    if mouse.row >= first {
                        let offset = layout::list_offset(
                            self.selected,
                            self.list.top,
                            self.rows.len(),
                            areas.list,
                        );
                        self.select(offset + usize::from(mouse.row - first));
                    }
                } else if pane == Focus::Modes {
                    // Border and header rows come first.
                    let first = layout::first_table_row(areas.modes);
                    if mouse.row >= first && self.current().is_some() {
                        let names: Vec<String> =
                            self.row_modes().iter().map(|m| m.to_string()).collect();
                        let current = self.mode_name();
                        let at = names.iter().position(|m| *m == current).unwrap_or(0);
                        let offset = layout::list_offset(at, 0, names.len(), areas.modes);
                        if let Some(m) = names.get(offset + usize::from(mouse.row - first)) {
                            self.pick_mode(Some(m.clone()));
                        }
                    }
                } else if pane == Focus::Status {
                    self.open_overlay(Overlay::Unreadable);
                }
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let saved = self.focus;
                self.focus = pane;
                let a = if mouse.kind == MouseEventKind::ScrollDown {
                    Action::Down
                } else {
                    Action::Up
                };
                for _ in 0..3 {
                    self.navigate(a);
                }
                self.focus = saved;
            }
            _ => {}
        }
    }
}

/// How many whole replays the app keeps besides the store's summaries:
/// going back to a transcript just seen shows it at once.
const REPLAYS_KEPT: usize = 4;

/// The largest transcript ([`replay_cost`]) the app replays on the UI
/// thread when it is selected. Extraction is linear; the whole replay runs
/// at some 33 MB/s (BENCHMARKS.md, target (b)), so 64 KiB takes about 2 ms,
/// well within a frame, and the screen is spared a "replaying…" flash on
/// every `j`. Bigger ones replay on a worker.
const SYNC_REPLAY_BYTES: usize = 64 * 1024;

/// What replaying `t` reads: its output, reasoning and recorded chunks,
/// and its tool definitions, which are compiled into validators — the slow
/// part when they are many (5,000 tools, 1.5 MB: 1.1 s on the UI thread
/// per `j` when they were left out). Counted up to just past
/// [`SYNC_REPLAY_BYTES`] only, so the estimate stays cheap however long
/// the list.
fn replay_cost(t: &Transcript) -> usize {
    let chunks: usize = t.chunks.iter().flatten().map(String::len).sum();
    let text = t.output.len() + t.reasoning.as_ref().map_or(0, String::len) + chunks;
    text.saturating_add(tools_cost(&t.tools, SYNC_REPLAY_BYTES.saturating_sub(text)))
}

/// About the serialized size of `tools` (names, descriptions, and each
/// string, key and value of their parameters schemas, a byte of syntax
/// each), counted until it passes `budget`: what decides is only whether
/// the list is bigger than that.
fn tools_cost(tools: &[toolgate_core::ToolDef], budget: usize) -> usize {
    use serde_json::Value;
    let mut total = 0usize;
    for tool in tools {
        total += tool.name.len() + tool.description.as_ref().map_or(0, String::len) + 1;
        // A stack, not recursion: a schema may nest deep.
        let mut stack: Vec<&Value> = tool.parameters.iter().collect();
        while let Some(value) = stack.pop() {
            if total > budget {
                return total;
            }
            total += 1;
            match value {
                Value::String(s) => total += s.len(),
                Value::Array(items) => stack.extend(items),
                Value::Object(members) => {
                    total += members.keys().map(String::len).sum::<usize>();
                    stack.extend(members.values());
                }
                _ => {}
            }
        }
        if total > budget {
            return total;
        }
    }
    total
}

/// A made replay as a row holds it. One that does not agree with the
/// summary the row was made from (the replayer changed in between) is
/// still shown, and logged.
fn whole_of(entry: &Entry, made: Result<Arc<toolgate_validator::Replay>, String>) -> Whole {
    match made {
        Ok(replay) => {
            if crate::event::Summary::of(&replay) != entry.replay {
                tracing::warn!(
                    path = %entry.transcript.location(),
                    "the replay made again differs from the row's summary"
                );
            }
            Whole::Ready(replay)
        }
        Err(why) => Whole::Failed(why.into()),
    }
}

fn text_one_line(s: &str) -> String {
    crate::text::one_line(s)
}
