//! The one state of the inspector and the one place it changes:
//! [`App::update`]. Drawing ([`crate::ui::draw`]) only reads it; disk and
//! replay work is requested as [`Job`]s that the run loop hands to the
//! worker pool (tests run them inline).

use crate::event::{Entry, Event, Item, Job, PathChange, PathKind, WatchEvent};
use crate::filter::Filter;
use crate::keys::{Action, KeyList};
use crate::theme::Theme;
use crate::ui;
use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toolgate_core::load::{self, LabelMap};
use toolgate_core::{Label, LoadError};
use toolgate_validator::ModeResult;
use tui_input::backend::crossterm::EventHandler;

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

/// List sort orders, cycled with `s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// File path, then line (load order).
    Path,
    /// Transcript id.
    Id,
    /// Model, then id.
    Model,
    /// Task, then id.
    Task,
    /// Label in taxonomy order (failures first), then id.
    Label,
    /// Decision, then id.
    Decision,
    /// Changed labels first, then path.
    Changed,
}

impl SortKey {
    const ORDER: [SortKey; 7] = [
        SortKey::Path,
        SortKey::Id,
        SortKey::Model,
        SortKey::Task,
        SortKey::Label,
        SortKey::Decision,
        SortKey::Changed,
    ];

    /// The name shown in the list title.
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Path => "path",
            SortKey::Id => "id",
            SortKey::Model => "model",
            SortKey::Task => "task",
            SortKey::Label => "label",
            SortKey::Decision => "decision",
            SortKey::Changed => "changed",
        }
    }

    fn next(self) -> SortKey {
        let i = SortKey::ORDER.iter().position(|s| *s == self).unwrap_or(0);
        SortKey::ORDER[(i + 1) % SortKey::ORDER.len()]
    }
}

/// What the diff view compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    /// The selected mode, strict against lenient.
    StrictVsLenient,
    /// The selected mode against another mode (`m`/`M` picks it).
    ModeVsMode,
    /// The stored labels against the current ones.
    StoredVsCurrent,
}

/// A window over the main screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Overlay {
    /// No overlay.
    None,
    /// Every key.
    Help,
    /// The diff view.
    Diff {
        /// What is compared.
        kind: DiffKind,
        /// The other mode for [`DiffKind::ModeVsMode`].
        other: String,
    },
    /// Unreadable files and why.
    Unreadable,
    /// "Accept labels?" (`y` this transcript, `a` all shown).
    ConfirmAccept,
}

/// What the prompt line edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// `/` search.
    Search,
    /// `f` filter.
    Filter,
}

/// The prompt line.
#[derive(Clone, Debug)]
pub struct Prompt {
    /// What it is for.
    pub kind: PromptKind,
    /// The text being edited.
    pub input: tui_input::Input,
}

/// The watcher's state, as the status bar shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchState {
    /// Not started (yet).
    Off,
    /// Watching every root.
    Watching,
    /// Some roots are gone or an error happened; the text says which.
    Degraded(String),
}

#[derive(Debug, Default)]
struct FileState {
    /// The latest load requested.
    seq: u64,
    /// Whether that load is still outstanding.
    pending: bool,
    /// The latest results (kept while a reload is pending).
    items: Vec<Item>,
}

/// One list row: a transcript with its derived columns.
#[derive(Clone, Debug)]
pub struct Row {
    /// The transcript and its replay.
    pub entry: Arc<Entry>,
    /// The label shown (profile's, or the filter mode's).
    pub label: Option<Label>,
    /// The decision shown.
    pub decision: &'static str,
    /// Stored labels exist and differ from the current strict ones.
    pub changed: bool,
    /// No labels stored yet.
    pub unlabeled: bool,
}

/// The inspector's whole state.
pub struct App {
    /// Key bindings.
    pub keys: KeyList,
    /// Colors or not.
    pub theme: Theme,
    /// Every mode, in engine order.
    pub modes: Vec<String>,
    /// The profile's name.
    pub profile: String,
    /// Watched roots (absolute) and how the user wrote them.
    pub roots: Vec<(PathBuf, String)>,
    files: BTreeMap<PathBuf, FileState>,
    scan_errors: BTreeMap<PathBuf, LoadError>,
    scans_pending: usize,
    initial_scans: Vec<PathBuf>,
    next_seq: u64,
    dirty: bool,
    /// The filtered, sorted list.
    pub rows: Vec<Row>,
    /// Every unreadable file or line, with the reason.
    pub unreadable: Vec<LoadError>,
    /// Index of the selected row.
    pub selected: usize,
    /// The first list row shown (kept so the list scrolls only as needed).
    pub list_top: usize,
    user_moved: bool,
    selected_key: Option<(PathBuf, Option<usize>)>,
    /// Focused pane.
    pub focus: Focus,
    /// The mode the user picked; `None` follows the profile (the mode
    /// whose candidates the pipeline selected, else the primary).
    pub mode: Option<String>,
    /// The profile's primary mode.
    pub primary: String,
    /// Show lenient results instead of strict.
    pub lenient: bool,
    /// Output pane scroll (rows); `None` until the user scrolls: the pane
    /// then shows the first candidate.
    pub output_scroll: Option<usize>,
    /// Detail pane scroll (rows).
    pub detail_scroll: usize,
    /// Overlay scroll (rows).
    pub overlay_scroll: usize,
    /// The open overlay.
    pub overlay: Overlay,
    /// The prompt line, when open.
    pub prompt: Option<Prompt>,
    /// The last search.
    pub search: Option<String>,
    /// The list filter.
    pub filter: Filter,
    /// The list order.
    pub sort: SortKey,
    /// The watcher's state.
    pub watch: WatchState,
    /// The watcher's last error, if any.
    pub watch_error: Option<String>,
    /// A one-off message for the status bar.
    pub message: Option<String>,
    /// Terminal size (for paging and mouse hit-testing).
    pub size: Rect,
    /// Whether the user asked to quit.
    pub quit: bool,
    jobs: Vec<Job>,
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
        let mut app = App {
            keys: KeyList::default(),
            theme: Theme::from_env(),
            modes,
            profile,
            roots: Vec::new(),
            files: BTreeMap::new(),
            scan_errors: BTreeMap::new(),
            scans_pending: 0,
            initial_scans: Vec::new(),
            next_seq: 0,
            dirty: false,
            rows: Vec::new(),
            unreadable: Vec::new(),
            selected: 0,
            list_top: 0,
            user_moved: false,
            selected_key: None,
            focus: Focus::List,
            mode: None,
            primary: primary.to_string(),
            lenient: false,
            output_scroll: None,
            detail_scroll: 0,
            overlay_scroll: 0,
            overlay: Overlay::None,
            prompt: None,
            search: None,
            filter: Filter::default(),
            sort: SortKey::Path,
            watch: WatchState::Off,
            watch_error: None,
            message: None,
            size: Rect::new(0, 0, 120, 40),
            quit: false,
            jobs: Vec::new(),
        };
        for (root, _) in &roots {
            app.scans_pending += 1;
            app.jobs.push(Job::Scan { dir: root.clone() });
            app.initial_scans.push(root.clone());
        }
        app.roots = roots;
        app
    }

    /// Jobs requested since the last call, for the worker pool.
    pub fn take_jobs(&mut self) -> Vec<Job> {
        std::mem::take(&mut self.jobs)
    }

    /// The selected row.
    pub fn current(&self) -> Option<&Row> {
        self.rows.get(self.selected)
    }

    /// The selected mode's result for the selected transcript (strict or
    /// lenient as toggled).
    pub fn current_mode(&self) -> Option<&ModeResult> {
        let row = self.current()?;
        self.mode_result(&row.entry, &self.mode_name(), self.lenient)
    }

    /// The mode shown: the picked one, else the one the profile selected
    /// for the current transcript, else the first mode that found a live
    /// candidate (a transcript in another family's format opens on the mode
    /// that reads it), else the primary.
    pub fn mode_name(&self) -> String {
        if let Some(m) = &self.mode {
            return m.clone();
        }
        let Some(row) = self.current() else {
            return self.primary.clone();
        };
        let replay = &row.entry.replay;
        replay
            .profile
            .parse_mode
            .clone()
            .or_else(|| {
                replay
                    .strict
                    .iter()
                    .find(|m| m.candidates.iter().any(|c| c.is_live()))
                    .map(|m| m.mode.clone())
            })
            .unwrap_or_else(|| self.primary.clone())
    }

    /// `mode`'s result in `entry`.
    pub fn mode_result<'a>(
        &self,
        entry: &'a Entry,
        mode: &str,
        lenient: bool,
    ) -> Option<&'a ModeResult> {
        if lenient {
            entry.replay.lenient_mode(mode)
        } else {
            entry.replay.strict_mode(mode)
        }
    }

    /// Load progress: (files loaded, files known), and outstanding scans.
    pub fn progress(&self) -> (usize, usize, usize) {
        let pending = self.files.values().filter(|f| f.pending).count();
        (
            self.files.len() - pending,
            self.files.len(),
            self.scans_pending,
        )
    }

    /// Total transcripts loaded (before filtering).
    pub fn total(&self) -> usize {
        self.files
            .values()
            .map(|f| f.items.iter().filter(|i| i.is_ok()).count())
            .sum()
    }

    /// Applies one event. The only place state changes.
    pub fn update(&mut self, event: Event) {
        match event {
            Event::Input(input) => {
                self.input(input);
                if self.dirty {
                    self.rebuild();
                }
            }
            Event::Watch(w) => self.watch_event(w),
            Event::Scanned { dir, files, errors } => self.scanned(dir, files, errors),
            Event::Loaded { path, seq, items } => {
                if let Some(f) = self.files.get_mut(&path)
                    && f.seq == seq
                {
                    f.items = items;
                    f.pending = false;
                    self.dirty = true;
                }
            }
            Event::Written { path, result } => {
                self.message = Some(match result {
                    Ok(n) => format!(
                        "wrote labels of {n} transcript{} to {}",
                        if n == 1 { "" } else { "s" },
                        self.display_path(&path)
                    ),
                    Err(e) => format!("could not write {}: {e}", self.display_path(&path)),
                });
                // The watcher reloads the file; reload anyway in case it is off.
                self.request_load(path, true);
            }
            Event::Tick => {
                if self.dirty {
                    self.rebuild();
                }
            }
        }
    }

    fn watch_event(&mut self, w: WatchEvent) {
        match w {
            WatchEvent::Started(_) => self.watch = WatchState::Watching,
            WatchEvent::Error(e) => {
                // Watching goes on where it can: the error is shown, not fatal.
                tracing::warn!("watcher: {e}");
                self.watch_error = Some(e);
            }
            WatchEvent::RootGone(root) => {
                self.forget_under(&root);
                self.watch = WatchState::Degraded(format!("{} is gone", self.display_path(&root)));
                self.dirty = true;
            }
            WatchEvent::RootBack(root) => {
                self.watch = WatchState::Watching;
                self.scans_pending += 1;
                self.jobs.push(Job::Scan { dir: root });
            }
            WatchEvent::Changed(changes) => {
                for PathChange { path, kind } in changes {
                    if !self.is_watched(&path) {
                        continue;
                    }
                    match kind {
                        PathKind::Gone => {
                            self.forget_under(&path);
                            self.dirty = true;
                        }
                        PathKind::Dir => {
                            self.scans_pending += 1;
                            self.jobs.push(Job::Scan { dir: path });
                        }
                        PathKind::File => {
                            let is_root = self.roots.iter().any(|(r, _)| *r == path);
                            if is_root || load::is_transcript_file(&path) {
                                self.request_load(path, true);
                            }
                        }
                    }
                }
            }
        }
    }

    fn is_watched(&self, path: &Path) -> bool {
        self.roots.iter().any(|(r, _)| path.starts_with(r))
    }

    /// Drops every file at or under `path`.
    fn forget_under(&mut self, path: &Path) {
        self.files.retain(|p, _| !p.starts_with(path));
        self.scan_errors.retain(|p, _| !p.starts_with(path));
    }

    fn scanned(&mut self, dir: PathBuf, files: Vec<PathBuf>, errors: Vec<LoadError>) {
        self.scans_pending = self.scans_pending.saturating_sub(1);
        let found: std::collections::HashSet<&PathBuf> = files.iter().collect();
        self.files
            .retain(|p, _| !p.starts_with(&dir) || found.contains(p));
        self.scan_errors.retain(|p, _| !p.starts_with(&dir));
        for e in errors {
            self.scan_errors.insert(e.path.clone(), e);
        }
        // The initial load is bulk work; anything later came from the watcher.
        let initial = match self.initial_scans.iter().position(|d| *d == dir) {
            Some(i) => {
                self.initial_scans.swap_remove(i);
                true
            }
            None => false,
        };
        // Files already known reload on their own change events: a rescan of
        // a big directory (its metadata changed) must not reload all of it.
        for file in files {
            if !self.files.contains_key(&file) {
                self.request_load(file, !initial);
            }
        }
        self.dirty = true;
    }

    fn request_load(&mut self, path: PathBuf, urgent: bool) {
        self.next_seq += 1;
        let seq = self.next_seq;
        let f = self.files.entry(path.clone()).or_default();
        f.seq = seq;
        f.pending = true;
        self.jobs.push(Job::Load { path, seq, urgent });
    }

    /// A path as the user would write it: relative to its root's spelling.
    pub fn display_path(&self, path: &Path) -> String {
        for (root, shown) in &self.roots {
            if let Ok(rest) = path.strip_prefix(root) {
                if rest.as_os_str().is_empty() {
                    return shown.clone();
                }
                let base = Path::new(shown);
                return base.join(rest).display().to_string();
            }
        }
        path.display().to_string()
    }

    fn row_for(&self, entry: &Arc<Entry>) -> Row {
        let (label, decision) = match &self.filter.mode {
            Some(mode) => match self.mode_result(entry, mode, self.lenient) {
                Some(m) => (Some(m.label), m.decision.kind()),
                None => (None, "-"),
            },
            None => (
                Some(entry.replay.profile.label),
                entry.replay.profile.decision.kind(),
            ),
        };
        let (changed, unlabeled) = (entry.changed, entry.transcript.stored_labels.is_none());
        Row {
            entry: Arc::clone(entry),
            label,
            decision,
            changed,
            unlabeled,
        }
    }

    fn keep(&self, row: &Row) -> bool {
        let f = &self.filter;
        let t = &row.entry.transcript;
        if !f.labels.is_empty() && !row.label.is_some_and(|l| f.labels.contains(&l)) {
            return false;
        }
        if let Some(model) = &f.model
            && !t
                .model
                .as_deref()
                .is_some_and(|m| m.to_lowercase().contains(model.as_str()))
        {
            return false;
        }
        if f.changed && !row.changed {
            return false;
        }
        if f.unlabeled && !row.unlabeled {
            return false;
        }
        f.words.iter().all(|w| matches_text(row, w))
    }

    /// Recomputes the list (filter, sort) and keeps the selection on the
    /// same transcript when it is still shown.
    fn rebuild(&mut self) {
        self.dirty = false;
        let mut rows = Vec::new();
        let mut unreadable: Vec<LoadError> = self.scan_errors.values().cloned().collect();
        for f in self.files.values() {
            for item in &f.items {
                match item {
                    Ok(entry) => {
                        let row = self.row_for(entry);
                        if self.keep(&row) {
                            rows.push(row);
                        }
                    }
                    Err(e) => unreadable.push(e.clone()),
                }
            }
        }
        sort_rows(&mut rows, self.sort);
        self.rows = rows;
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
            self.output_scroll = None;
            self.detail_scroll = 0;
        }
        self.keep_selection_visible();
        self.remember_selection();
    }

    fn keep_selection_visible(&mut self) {
        let areas = ui::layout(self.size, self.prompt.is_some());
        self.list_top = ui::list_offset(self.selected, self.list_top, areas.list);
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
        match self.overlay.clone() {
            Overlay::None => {}
            Overlay::ConfirmAccept => {
                self.overlay = Overlay::None;
                match key.code {
                    KeyCode::Char('y') | KeyCode::Enter => self.accept(false),
                    KeyCode::Char('a') => self.accept(true),
                    _ => self.message = Some("accept cancelled".into()),
                }
                return;
            }
            Overlay::Diff { kind, other } => {
                match (key.code, action) {
                    (KeyCode::Tab, _) => {
                        let kind = match kind {
                            DiffKind::StrictVsLenient => DiffKind::ModeVsMode,
                            DiffKind::ModeVsMode => DiffKind::StoredVsCurrent,
                            DiffKind::StoredVsCurrent => DiffKind::StrictVsLenient,
                        };
                        self.overlay = Overlay::Diff { kind, other };
                        self.overlay_scroll = 0;
                    }
                    (_, Some(Action::NextMode | Action::PrevMode)) => {
                        let other = self.cycle(&other, action == Some(Action::NextMode));
                        self.overlay = Overlay::Diff {
                            kind: DiffKind::ModeVsMode,
                            other,
                        };
                        self.overlay_scroll = 0;
                    }
                    (_, Some(Action::Close | Action::Diff | Action::Quit)) => self.close_overlay(),
                    (_, Some(a)) => self.scroll_overlay(a),
                    _ => {}
                }
                return;
            }
            Overlay::Help | Overlay::Unreadable => {
                match action {
                    Some(Action::Close | Action::Quit | Action::Help | Action::Unreadable) => {
                        self.close_overlay();
                    }
                    Some(a) => self.scroll_overlay(a),
                    None => {}
                }
                return;
            }
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
                if !self.filter.is_empty() {
                    self.set_filter(Filter::default());
                }
            }
            Action::NextPane => self.focus = self.focus.step(true),
            Action::PrevPane => self.focus = self.focus.step(false),
            Action::Search => {
                self.prompt = Some(Prompt {
                    kind: PromptKind::Search,
                    input: tui_input::Input::default(),
                });
            }
            Action::Filter => {
                self.prompt = Some(Prompt {
                    kind: PromptKind::Filter,
                    input: tui_input::Input::new(self.filter.text.clone()),
                });
            }
            Action::SearchNext => self.search_step(true, false),
            Action::SearchPrev => self.search_step(false, false),
            Action::Sort => {
                self.sort = self.sort.next();
                self.dirty = true;
            }
            Action::NextMode | Action::PrevMode => {
                let forward = action == Action::NextMode;
                let edge = if forward {
                    self.modes.last()
                } else {
                    self.modes.first()
                };
                // Past either end: back to following the profile.
                self.mode = if self.mode.is_some() && self.mode.as_ref() == edge {
                    None
                } else {
                    Some(self.cycle(&self.mode_name(), forward))
                };
                self.output_scroll = None;
                self.detail_scroll = 0;
            }
            Action::ToggleLenient => {
                self.lenient = !self.lenient;
                self.detail_scroll = 0;
                if self.filter.mode.is_some() {
                    self.dirty = true;
                }
            }
            Action::Diff => {
                if self.current().is_some() {
                    let other = self.cycle(&self.mode_name(), true);
                    self.open_overlay(Overlay::Diff {
                        kind: DiffKind::StrictVsLenient,
                        other,
                    });
                }
            }
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

    fn open_overlay(&mut self, overlay: Overlay) {
        self.overlay = overlay;
        self.overlay_scroll = 0;
    }

    fn close_overlay(&mut self) {
        self.overlay = Overlay::None;
        self.overlay_scroll = 0;
    }

    fn scroll_overlay(&mut self, action: Action) {
        let page = usize::from(self.size.height.saturating_sub(6)).max(1);
        let max = ui::overlay_rows(self).saturating_sub(page);
        self.overlay_scroll = step(self.overlay_scroll, action, page, max);
    }

    fn cycle(&self, mode: &str, forward: bool) -> String {
        let n = self.modes.len();
        if n == 0 {
            return mode.to_string();
        }
        let i = self.modes.iter().position(|m| m == mode).unwrap_or(0);
        self.modes[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
        .clone()
    }

    fn navigate(&mut self, action: Action) {
        let areas = ui::layout(self.size, self.prompt.is_some());
        match self.focus {
            Focus::List | Focus::Status => {
                let page = usize::from(areas.list.height.saturating_sub(3)).max(1);
                let max = self.rows.len().saturating_sub(1);
                let to = step(self.selected, action, page, max);
                self.select(to);
            }
            Focus::Output => {
                let page = usize::from(areas.output.height.saturating_sub(2)).max(1);
                let (lines, focus) = ui::output_lines(self, areas.output);
                let at = ui::output_start(self, lines.len(), focus, page);
                self.output_scroll = Some(step(at, action, page, lines.len().saturating_sub(page)));
            }
            Focus::Detail => {
                let page = usize::from(areas.detail.height.saturating_sub(2)).max(1);
                let total = ui::detail_lines(self, areas.detail).len();
                self.detail_scroll =
                    step(self.detail_scroll, action, page, total.saturating_sub(page));
            }
            Focus::Modes => {
                let Some(row) = self.current() else { return };
                let names: Vec<String> = if self.lenient {
                    row.entry
                        .replay
                        .lenient
                        .iter()
                        .map(|m| m.mode.clone())
                        .collect()
                } else {
                    row.entry
                        .replay
                        .strict
                        .iter()
                        .map(|m| m.mode.clone())
                        .collect()
                };
                if names.is_empty() {
                    return;
                }
                let current = self.mode_name();
                let i = names.iter().position(|m| *m == current).unwrap_or(0);
                let page = usize::from(areas.modes.height.saturating_sub(3)).max(1);
                let to = step(i, action, page, names.len() - 1);
                self.mode = Some(names[to].clone());
                self.output_scroll = None;
                self.detail_scroll = 0;
            }
        }
    }

    fn prompt_key(&mut self, key: KeyEvent) {
        let Some(prompt) = self.prompt.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => {
                self.prompt = None;
            }
            KeyCode::Enter => {
                let kind = prompt.kind;
                let value = prompt.input.value().to_string();
                self.prompt = None;
                match kind {
                    PromptKind::Search => {
                        let value = value.trim().to_lowercase();
                        self.search = (!value.is_empty()).then_some(value);
                        self.search_step(true, true);
                    }
                    PromptKind::Filter => match Filter::parse(&value) {
                        Ok(filter) => self.set_filter(filter),
                        Err(e) => self.message = Some(e),
                    },
                }
            }
            _ => {
                prompt.input.handle_event(&TermEvent::Key(key));
            }
        }
    }

    fn set_filter(&mut self, filter: Filter) {
        if let Some(mode) = &filter.mode
            && !self.modes.iter().any(|m| m == mode)
        {
            self.message = Some(format!(
                "no mode `{mode}` (known: {})",
                self.modes.join(", ")
            ));
            return;
        }
        if let Some(mode) = &filter.mode {
            self.mode = Some(mode.clone());
        }
        self.filter = filter;
        self.dirty = true;
        self.rebuild();
    }

    fn search_step(&mut self, forward: bool, inclusive: bool) {
        let Some(needle) = self.search.clone() else {
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
            .find(|&i| matches_text(&self.rows[i], &needle));
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
        let mut by_file: BTreeMap<PathBuf, Vec<(Option<usize>, LabelMap)>> = BTreeMap::new();
        for row in rows {
            let t = &row.entry.transcript;
            by_file
                .entry(t.path.clone())
                .or_default()
                .push((t.line, current_labels(&row.entry)));
        }
        if by_file.is_empty() {
            self.message = Some("nothing to accept: every shown label is stored".into());
            return;
        }
        self.message = Some(format!("writing labels to {} file(s)…", by_file.len()));
        for (path, updates) in by_file {
            self.jobs.push(Job::WriteLabels { path, updates });
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
        let areas = ui::layout(self.size, false);
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
                    let first = areas.list.y + 2;
                    if mouse.row >= first {
                        let offset = ui::list_offset(self.selected, self.list_top, areas.list);
                        self.select(offset + usize::from(mouse.row - first));
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

fn text_one_line(s: &str) -> String {
    crate::text::one_line(s)
}

/// The strict label of every mode, in engine order: what `a` writes.
pub fn current_labels(entry: &Entry) -> LabelMap {
    let (strict, lenient) = crate::event::mode_labels(&entry.replay);
    let stored = entry
        .transcript
        .raw
        .get("labels")
        .and_then(serde_json::Value::as_object);
    let quiet = toolgate_core::relabel::quiet_label(entry.transcript.expect.as_ref());
    toolgate_core::relabel::to_store(&strict, &lenient, quiet, stored)
}

fn matches_text(row: &Row, needle: &str) -> bool {
    let t = &row.entry.transcript;
    let has = |s: &str| s.to_lowercase().contains(needle);
    has(&t.id)
        || t.model.as_deref().is_some_and(has)
        || t.task.as_deref().is_some_and(has)
        || has(&t.path.to_string_lossy())
}

fn step(at: usize, action: Action, page: usize, max: usize) -> usize {
    let to = match action {
        Action::Down => at.saturating_add(1),
        Action::Up => at.saturating_sub(1),
        Action::Top => 0,
        Action::Bottom => max,
        Action::PageDown => at.saturating_add(page),
        Action::PageUp => at.saturating_sub(page),
        _ => at,
    };
    to.min(max)
}

fn sort_rows(rows: &mut [Row], key: SortKey) {
    let path_key = |r: &Row| (r.entry.transcript.path.clone(), r.entry.transcript.line);
    match key {
        SortKey::Path => rows.sort_by_key(path_key),
        SortKey::Id => rows.sort_by(|a, b| a.entry.transcript.id.cmp(&b.entry.transcript.id)),
        SortKey::Model => rows.sort_by(|a, b| {
            (&a.entry.transcript.model, &a.entry.transcript.id)
                .cmp(&(&b.entry.transcript.model, &b.entry.transcript.id))
        }),
        SortKey::Task => rows.sort_by(|a, b| {
            (&a.entry.transcript.task, &a.entry.transcript.id)
                .cmp(&(&b.entry.transcript.task, &b.entry.transcript.id))
        }),
        SortKey::Label => rows.sort_by(|a, b| {
            (a.label, &a.entry.transcript.id).cmp(&(b.label, &b.entry.transcript.id))
        }),
        SortKey::Decision => rows.sort_by(|a, b| {
            (a.decision, &a.entry.transcript.id).cmp(&(b.decision, &b.entry.transcript.id))
        }),
        SortKey::Changed => rows.sort_by_key(|r| (!r.changed, path_key(r))),
    }
}
