//! The loaded transcripts: every watched file's latest replayed items,
//! kept up to date from the watcher's changes, directory walks and worker
//! results. Nothing here draws or navigates; the app builds its list from
//! [`Store::collect`].
//!
//! Memory stays bounded by what is on disk: a file's items replace the
//! previous ones, files gone are dropped (their range of the map, freed on
//! another thread), and an answer to an older load request is ignored.

use crate::event::{Entry, Item, Job, PathChange, PathKind, WatchEvent};
use crate::row::Row;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgate_core::LoadError;
use toolgate_core::load;

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
    /// The path as the user would write it (computed once per file).
    shown: Arc<str>,
    /// The latest load requested.
    seq: u64,
    /// Whether that load is still outstanding.
    pending: bool,
    /// The latest results (kept while a reload is pending).
    items: Vec<Item>,
    /// Its real path, when a symlink makes it differ from the listed one.
    real: Option<PathBuf>,
    /// The outstanding load was asked for because the file changed on
    /// disk: its models' transcripts changed ([`Store::take_touched`]).
    changed: bool,
    /// A torn last line taken for one still being written, held back
    /// until the instant it is reported at ([`Store::release_held`]).
    held: Option<(LoadError, Instant)>,
}

/// Every watched file and what loading it gave.
#[derive(Debug)]
pub struct Store {
    /// Watched roots (absolute) and how the user wrote them.
    pub roots: Vec<(PathBuf, String)>,
    files: BTreeMap<PathBuf, FileState>,
    /// Real path → the path it is listed by, for files listed through a
    /// symlink (every other file is listed by its real path).
    aliases: HashMap<PathBuf, PathBuf>,
    scan_errors: BTreeMap<PathBuf, LoadError>,
    scans_pending: usize,
    initial_scans: Vec<PathBuf>,
    /// Roots walked again because changes were lost: their walk reloads
    /// the files already known too (which of them changed is unknown).
    rescans: Vec<PathBuf>,
    next_seq: u64,
    dirty: bool,
    jobs: Vec<Job>,
    /// The watcher's state.
    pub watch: WatchState,
    /// The watcher's last error, if any.
    pub watch_error: Option<String>,
    /// The models whose transcripts changed on disk since the last
    /// [`Store::take_touched`] (`None`: transcripts without a model).
    touched: HashSet<Option<String>>,
    /// Goes up whenever `touched` grows: detection waits until it stops.
    touched_generation: u64,
    /// The files holding back a line being written ([`FileState::held`]).
    holding: HashSet<PathBuf>,
}

impl Store {
    /// A store over `roots` (absolute path, as the user wrote it); queues
    /// their initial scans.
    pub fn new(roots: Vec<(PathBuf, String)>) -> Store {
        let mut store = Store {
            roots: Vec::new(),
            files: BTreeMap::new(),
            aliases: HashMap::new(),
            scan_errors: BTreeMap::new(),
            scans_pending: 0,
            initial_scans: Vec::new(),
            rescans: Vec::new(),
            next_seq: 0,
            dirty: false,
            jobs: Vec::new(),
            watch: WatchState::Off,
            watch_error: None,
            touched: HashSet::new(),
            touched_generation: 0,
            holding: HashSet::new(),
        };
        for (root, _) in &roots {
            store.scans_pending += 1;
            store.jobs.push(Job::Scan { dir: root.clone() });
            store.initial_scans.push(root.clone());
        }
        store.roots = roots;
        store
    }

    /// Queues a job for the workers.
    pub fn push(&mut self, job: Job) {
        self.jobs.push(job);
    }

    /// Jobs requested since the last call.
    pub fn take_jobs(&mut self) -> Vec<Job> {
        std::mem::take(&mut self.jobs)
    }

    /// Marks the list as needing a rebuild (or not).
    pub fn set_dirty(&mut self, dirty: bool) {
        self.dirty = dirty;
    }

    /// Whether the list needed a rebuild; it no longer does.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::replace(&mut self.dirty, false)
    }

    /// A file was loaded: its items replace the previous ones, unless a
    /// newer load was requested since. `writing`: its last item is a torn
    /// line taken for one still being written, held back that long (not a
    /// row, not reported) unless the file changes again meanwhile; then it
    /// is reported as `label` reports it ([`Store::release_held`]).
    pub fn loaded(
        &mut self,
        path: PathBuf,
        seq: u64,
        mut items: Vec<Item>,
        writing: Option<Duration>,
    ) {
        if let Some(f) = self.files.get_mut(&path)
            && f.seq == seq
        {
            f.held = match (writing, items.last()) {
                (Some(left), Some(Err(e))) if e.reason == load::TORN => items
                    .pop()
                    .and_then(Result::err)
                    .map(|e| (e, Instant::now() + left)),
                _ => None,
            };
            if f.held.is_some() {
                self.holding.insert(path.clone());
            } else {
                self.holding.remove(&path);
            }
            if std::mem::take(&mut f.changed) {
                // The models it held and the models it holds now.
                let models = models_of(&f.items).chain(models_of(&items)).cloned();
                self.touched.extend(models);
                self.touched_generation += 1;
            }
            f.items = items;
            f.pending = false;
            self.dirty = true;
        }
    }

    /// Reports the lines held back as being written ([`Store::loaded`])
    /// whose file has not changed since up to `now`: the writer stopped
    /// mid-line. Whether the list changed.
    pub fn release_held(&mut self, now: Instant) -> bool {
        if self.holding.is_empty() {
            return false;
        }
        let mut released = false;
        let files = &mut self.files;
        self.holding.retain(|path| {
            let Some(f) = files.get_mut(path) else {
                return false;
            };
            match f.held.take() {
                Some((e, due)) if due <= now => {
                    f.items.push(Err(e));
                    released = true;
                    false
                }
                held => {
                    let waiting = held.is_some();
                    f.held = held;
                    waiting
                }
            }
        });
        self.dirty |= released;
        released
    }

    /// Every loaded transcript that `keep` makes a row of, in file then
    /// line order, and every unreadable file or line. The list is clean
    /// afterwards.
    pub fn collect(
        &mut self,
        mut keep: impl FnMut(&Arc<Entry>, &Arc<str>) -> Option<Row>,
    ) -> (Vec<Row>, Vec<LoadError>) {
        self.dirty = false;
        let mut rows = Vec::new();
        let mut unreadable: Vec<LoadError> = self.scan_errors.values().cloned().collect();
        for f in self.files.values() {
            for item in &f.items {
                match item {
                    Ok(entry) => rows.extend(keep(entry, &f.shown)),
                    Err(e) => unreadable.push(e.clone()),
                }
            }
        }
        (rows, unreadable)
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

    /// Applies what the watcher saw.
    pub fn watch_event(&mut self, w: WatchEvent) {
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
            WatchEvent::Rescan(why) => {
                tracing::warn!("watcher: {why}; rescanning");
                self.watch_error = Some(format!("{why}; every file read again"));
                for (root, _) in &self.roots {
                    self.scans_pending += 1;
                    self.jobs.push(Job::Scan { dir: root.clone() });
                    if !self.rescans.contains(root) {
                        self.rescans.push(root.clone());
                    }
                }
            }
            WatchEvent::RootBack(root) => {
                self.watch = WatchState::Watching;
                self.scans_pending += 1;
                self.jobs.push(Job::Scan { dir: root });
            }
            WatchEvent::Changed(changes) => {
                for PathChange { path, kind, real } in changes {
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
                                self.load_once(path.clone(), real, true);
                                self.mark_changed(&path);
                            } else if let Some(e) = load::named_unread(&path) {
                                // As the startup walk names it (a
                                // `x.jsonl.gz` created later was passed
                                // over in silence); gone, it is forgotten.
                                self.scan_errors.insert(path, e);
                                self.dirty = true;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Loads `path` (whose real path is `real`, `None`: itself), unless
    /// its real file is already listed by another path: the first path
    /// wins, as in the startup walk and `label` ([`load::real_path`]),
    /// whether it came from a walk or the watcher. A symlink to a folder
    /// already shown, added while the inspector ran, listed its transcripts
    /// twice.
    fn load_once(&mut self, path: PathBuf, real: Option<PathBuf>, urgent: bool) {
        let key = real.as_deref().unwrap_or(&path);
        let taken = self
            .aliases
            .get(key)
            .is_some_and(|owner| *owner != path && self.is_listed_as(owner, key))
            || real.as_ref().is_some_and(|r| self.files.contains_key(r));
        if taken {
            return;
        }
        if let Some(r) = &real {
            self.aliases.insert(r.clone(), path.clone());
        }
        self.request_load(path.clone(), urgent);
        if let Some(f) = self.files.get_mut(&path) {
            f.real = real;
        }
    }

    /// Whether `path` is listed, standing for the file at `real`.
    fn is_listed_as(&self, path: &Path, real: &Path) -> bool {
        self.files
            .get(path)
            .is_some_and(|f| f.real.as_deref() == Some(real))
    }

    fn is_watched(&self, path: &Path) -> bool {
        self.roots.iter().any(|(r, _)| path.starts_with(r))
    }

    /// Drops every file at or under `path`. Paths order component by
    /// component, so everything under `path` is one range of the map that
    /// starts at `path`: the cost is that range, not the whole map (5,000
    /// deletions at once used to scan every file 5,000 times).
    fn forget_under(&mut self, path: &Path) {
        let gone: Vec<Option<String>> = self
            .files
            .range::<Path, _>((std::ops::Bound::Included(path), std::ops::Bound::Unbounded))
            .take_while(|(p, _)| p.starts_with(path))
            .flat_map(|(_, f)| models_of(&f.items).cloned())
            .collect();
        self.touch(gone);
        remove_under(&mut self.files, path);
        remove_under(&mut self.scan_errors, path);
    }

    /// Whether loaded data changed since the list was last rebuilt.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// A directory walk finished: files gone are dropped, new ones loaded
    /// (each real file once: `aliases` maps the files found through a
    /// symlink to their real paths).
    pub fn scanned(
        &mut self,
        dir: PathBuf,
        files: Vec<PathBuf>,
        aliases: &HashMap<PathBuf, PathBuf>,
        errors: Vec<LoadError>,
    ) {
        self.scans_pending = self.scans_pending.saturating_sub(1);
        let found: std::collections::HashSet<&PathBuf> = files.iter().collect();
        // Only the range under `dir`; what is gone is freed off this thread.
        let gone: Vec<PathBuf> = self
            .files
            .range::<Path, _>((
                std::ops::Bound::Included(dir.as_path()),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(p, _)| p.starts_with(&dir))
            .filter(|(p, _)| !found.contains(p))
            .map(|(p, _)| p.clone())
            .collect();
        let removed: Vec<FileState> = gone.iter().filter_map(|p| self.files.remove(p)).collect();
        if !removed.is_empty() {
            let models: Vec<Option<String>> = removed
                .iter()
                .flat_map(|f| models_of(&f.items).cloned())
                .collect();
            self.touch(models);
            drop_later(removed);
        }
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
        // After lost events there were none: every known file reloads.
        let lost = match self.rescans.iter().position(|d| *d == dir) {
            Some(i) => {
                self.rescans.swap_remove(i);
                true
            }
            None => false,
        };
        for file in files {
            if !self.files.contains_key(&file) {
                let real = aliases.get(&file).cloned();
                self.load_once(file.clone(), real, !initial);
                if !initial {
                    self.mark_changed(&file);
                }
            } else if lost {
                self.request_load(file.clone(), false);
                self.mark_changed(&file);
            }
        }
        self.dirty = true;
    }

    /// Asks the workers to load (and replay) `path`; answers to older
    /// requests for it are dropped.
    pub fn request_load(&mut self, path: PathBuf, urgent: bool) {
        self.next_seq += 1;
        let seq = self.next_seq;
        let shown: Arc<str> = match self.files.get(&path) {
            Some(f) => Arc::clone(&f.shown),
            None => self.list_path(&path).into(),
        };
        let f = self.files.entry(path.clone()).or_default();
        f.shown = shown;
        f.seq = seq;
        f.pending = true;
        self.jobs.push(Job::Load { path, seq, urgent });
    }

    /// A file's path in the list's path column: relative to its root when
    /// there is one root (the root's name would repeat on every row), else
    /// as the user would write it.
    pub fn list_path(&self, path: &Path) -> String {
        if let [(root, _)] = self.roots.as_slice()
            && let Ok(rest) = path.strip_prefix(root)
            && !rest.as_os_str().is_empty()
        {
            return rest.display().to_string();
        }
        self.display_path(path)
    }

    /// A path as the user would write it: relative to its root's spelling.
    pub fn display_path(&self, path: &Path) -> String {
        crate::row::display_path(&self.roots, path)
    }

    /// Marks the load just requested for `path` (if one was) as caused by
    /// a change on disk.
    fn mark_changed(&mut self, path: &Path) {
        if let Some(f) = self.files.get_mut(path)
            && f.pending
        {
            f.changed = true;
        }
    }

    fn touch(&mut self, models: Vec<Option<String>>) {
        if !models.is_empty() {
            self.touched.extend(models);
            self.touched_generation += 1;
        }
    }

    /// Goes up whenever models' transcripts change on disk.
    pub fn touched_generation(&self) -> u64 {
        self.touched_generation
    }

    /// The models whose transcripts changed on disk since the last call,
    /// and every file that holds a transcript of one of them (what
    /// detection for them reads); `None` when none changed.
    pub fn take_touched(&mut self) -> Option<(Vec<Option<String>>, Vec<PathBuf>)> {
        if self.touched.is_empty() {
            return None;
        }
        let touched = std::mem::take(&mut self.touched);
        let files = self
            .files
            .iter()
            .filter(|(_, f)| models_of(&f.items).any(|m| touched.contains(m)))
            .map(|(p, _)| p.clone())
            .collect();
        let mut models: Vec<Option<String>> = touched.into_iter().collect();
        models.sort();
        Some((models, files))
    }

    /// Replays every known file again (after a profile pick).
    pub fn reload_all(&mut self) {
        let paths: Vec<PathBuf> = self.files.keys().cloned().collect();
        for path in paths {
            self.request_load(path, true);
        }
    }
}

/// The model of each transcript in `items`.
fn models_of(items: &[Item]) -> impl Iterator<Item = &Option<String>> {
    items
        .iter()
        .filter_map(|i| i.as_ref().ok())
        .map(|e| &e.transcript.model)
}

/// Removes every key at or under `path` from `map`, in time proportional to
/// what is removed (plus a logarithmic search).
/// The removed values are freed on another thread ([`drop_later`]).
fn remove_under<V: Send + 'static>(map: &mut BTreeMap<PathBuf, V>, path: &Path) {
    use std::ops::Bound;
    let under: Vec<PathBuf> = map
        .range::<Path, _>((Bound::Included(path), Bound::Unbounded))
        .take_while(|(p, _)| p.starts_with(path))
        .map(|(p, _)| p.clone())
        .collect();
    let removed: Vec<V> = under.iter().filter_map(|p| map.remove(p)).collect();
    if !removed.is_empty() {
        drop_later(removed);
    }
}

/// Frees `value` on a thread of its own. A file's replays are many small
/// allocations made on the worker threads; freeing 50,000 of them when
/// folders are deleted took the UI thread seconds.
pub fn drop_later<T: Send + 'static>(value: T) {
    use std::sync::{OnceLock, mpsc};
    static DROPPER: OnceLock<Option<mpsc::Sender<Box<dyn Send>>>> = OnceLock::new();
    let tx = DROPPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Box<dyn Send>>();
        std::thread::Builder::new()
            .name("toolgate-drop".into())
            .spawn(move || rx.into_iter().for_each(drop))
            .ok()
            .map(|_| tx)
    });
    // Without the thread (it could not start), or once it is gone, the
    // value is freed here.
    if let Some(tx) = tx {
        let _ = tx.send(Box::new(value));
    }
}
