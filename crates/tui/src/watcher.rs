//! The real file watcher: notify + notify-debouncer-full, turned into
//! [`WatchEvent`]s on the app's channel.
//!
//! The app never owns this: it only sees [`Event::Watch`], so tests push
//! those directly. The debouncer lives in a field of [`FsWatcher`] (dropping
//! it would stop watching). [`FsWatcher::recheck`] re-watches roots that
//! were deleted and came back, so losing a directory never stops the
//! inspector.

use crate::event::{Event, PathChange, PathKind, WatchEvent};
use notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// How long the debouncer waits for a burst of writes to settle. Small
/// enough that a change shows within 300 ms.
pub const DEBOUNCE: Duration = Duration::from_millis(100);

struct Root {
    /// The root as given (a directory or a file).
    path: PathBuf,
    /// What is actually watched: the directory, or a file's parent.
    target: PathBuf,
    recursive: bool,
    watched: bool,
}

/// A running watcher over some roots.
pub struct FsWatcher {
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    roots: Vec<Root>,
    tx: Sender<Event>,
}

fn classify(path: &Path) -> PathKind {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => PathKind::Dir,
        Ok(_) => PathKind::File,
        Err(_) => PathKind::Gone,
    }
}

impl FsWatcher {
    /// Starts watching `roots` (directories recursively; for a file, its
    /// parent directory, so atomic replacements are seen). Roots that
    /// cannot be watched now are reported and retried by [`recheck`](Self::recheck).
    pub fn start(roots: &[PathBuf], tx: Sender<Event>) -> notify::Result<FsWatcher> {
        let handler_tx = tx.clone();
        let dir_roots: Vec<PathBuf> = roots.iter().filter(|r| r.is_dir()).cloned().collect();
        let debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
            let event = match result {
                Ok(events) => {
                    let mut paths: Vec<PathBuf> = Vec::new();
                    // A set, not a list scan: a burst can name 5,000 paths.
                    let mut seen: HashSet<PathBuf> = HashSet::new();
                    for e in events {
                        // Reads (ours included) are access events: reacting to
                        // them would reload forever.
                        if matches!(e.event.kind, EventKind::Access(_)) {
                            continue;
                        }
                        for p in &e.event.paths {
                            if seen.insert(p.clone()) {
                                paths.push(p.clone());
                            }
                        }
                    }
                    let changes: Vec<PathChange> = paths
                        .into_iter()
                        .map(|path| {
                            let kind = classify(&path);
                            PathChange { path, kind }
                        })
                        .collect();
                    for c in &changes {
                        if c.kind == PathKind::Gone && dir_roots.contains(&c.path) {
                            let _ =
                                handler_tx.send(Event::Watch(WatchEvent::RootGone(c.path.clone())));
                        }
                    }
                    if changes.is_empty() {
                        return;
                    }
                    Event::Watch(WatchEvent::Changed(changes))
                }
                Err(errors) => {
                    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                    Event::Watch(WatchEvent::Error(text.join("; ")))
                }
            };
            let _ = handler_tx.send(event);
        })?;
        let roots = roots
            .iter()
            .map(|path| {
                let is_dir = path.is_dir();
                let target = if is_dir || !path.exists() {
                    path.clone()
                } else {
                    path.parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_else(|| path.clone())
                };
                Root {
                    path: path.clone(),
                    target,
                    recursive: is_dir,
                    watched: false,
                }
            })
            .collect();
        let mut watcher = FsWatcher {
            debouncer,
            roots,
            tx,
        };
        let mut errors = Vec::new();
        for i in 0..watcher.roots.len() {
            if let Err(e) = watcher.watch_root(i) {
                errors.push(format!("{}: {e}", watcher.roots[i].path.display()));
            }
        }
        let watched: Vec<PathBuf> = watcher
            .roots
            .iter()
            .filter(|r| r.watched)
            .map(|r| r.path.clone())
            .collect();
        let _ = watcher.tx.send(Event::Watch(WatchEvent::Started(watched)));
        if !errors.is_empty() {
            let _ = watcher
                .tx
                .send(Event::Watch(WatchEvent::Error(errors.join("; "))));
        }
        Ok(watcher)
    }

    fn watch_root(&mut self, i: usize) -> notify::Result<()> {
        let root = &mut self.roots[i];
        let mode = if root.recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        self.debouncer.watch(&root.target, mode)?;
        root.watched = true;
        Ok(())
    }

    /// Notices roots that disappeared and re-watches roots that came back
    /// (then asks the app to rescan them). Call it every second or so.
    pub fn recheck(&mut self) {
        for i in 0..self.roots.len() {
            let exists = self.roots[i].target.exists();
            match (self.roots[i].watched, exists) {
                (true, false) => {
                    let target = self.roots[i].target.clone();
                    let _ = self.debouncer.unwatch(&target);
                    self.roots[i].watched = false;
                    let _ = self.tx.send(Event::Watch(WatchEvent::RootGone(
                        self.roots[i].path.clone(),
                    )));
                }
                (false, true) => {
                    if self.roots[i].path.is_dir() {
                        self.roots[i].recursive = true;
                        self.roots[i].target = self.roots[i].path.clone();
                    }
                    if self.watch_root(i).is_ok() {
                        let _ = self.tx.send(Event::Watch(WatchEvent::RootBack(
                            self.roots[i].path.clone(),
                        )));
                    }
                }
                _ => {}
            }
        }
    }
}
