//! The real file watcher: notify, with a linear debounce of our own,
//! turned into [`WatchEvent`]s on the app's channel.
//!
//! The app never owns this: it only sees [`Event::Watch`], so tests push
//! those directly. The notify watcher lives in a field of [`FsWatcher`] (dropping
//! it would stop watching). [`FsWatcher::recheck`] re-watches roots that
//! were deleted and came back, so losing a directory never stops the
//! inspector.

use crate::event::{Event, PathChange, PathKind, WatchEvent};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How long the file system must stay quiet before a burst of changes is
/// reported. Small enough that a change shows within 300 ms.
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// While changes keep coming, they are still reported at least this often,
/// so a long burst (thousands of files copied) shows as it goes.
pub const MAX_WAIT: Duration = Duration::from_millis(250);

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
    watcher: RecommendedWatcher,
    roots: Vec<Root>,
    tx: Sender<Event>,
}

/// What `path` is now, as the app is told: a file, a directory or gone,
/// and a file's real path when a symlink makes it differ (so the app lists
/// each real file once without touching the disk).
pub fn classify(path: PathBuf) -> PathChange {
    let kind = match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_dir() => PathKind::Dir,
        Ok(_) => PathKind::File,
        Err(_) => PathKind::Gone,
    };
    let real = match kind {
        PathKind::File => Some(toolgate_core::load::real_path(&path)).filter(|r| *r != path),
        PathKind::Dir | PathKind::Gone => None,
    };
    PathChange { path, kind, real }
}

/// The changed paths of one burst, each once, in the order first seen.
#[derive(Default)]
struct Burst {
    paths: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
    errors: Vec<String>,
    /// Events were lost: why, when they were.
    rescan: Option<String>,
}

impl Burst {
    fn add(&mut self, event: notify::Result<notify::Event>) {
        match event {
            // The kernel's queue overflowed (a stopped inspector, a huge
            // burst): notify says so with a pathless event. Its paths alone
            // would drop it, and the list would stay stale for good.
            Ok(e) if e.need_rescan() => {
                self.rescan = Some("the file system's event queue overflowed".into());
            }
            // Reads (ours included) are access events: reacting to them
            // would reload forever.
            Ok(e) if matches!(e.kind, EventKind::Access(_)) => {}
            Ok(e) => {
                for p in e.paths {
                    if !self.seen.contains(&p) {
                        self.seen.insert(p.clone());
                        self.paths.push(p);
                    }
                }
            }
            Err(e) => {
                // What the failure lost is unknown: walk everything again.
                self.rescan
                    .get_or_insert_with(|| format!("watcher error: {e}"));
                self.errors.push(e.to_string());
            }
        }
    }

    /// Sends the burst to the app: each path classified now (so the app
    /// never touches the disk), and the roots that disappeared.
    fn send(self, dir_roots: &[PathBuf], tx: &Sender<Event>) -> bool {
        let changes: Vec<PathChange> = self.paths.into_iter().map(classify).collect();
        for c in &changes {
            if c.kind == PathKind::Gone && dir_roots.contains(&c.path) {
                let _ = tx.send(Event::Watch(WatchEvent::RootGone(c.path.clone())));
            }
        }
        if !self.errors.is_empty() {
            let _ = tx.send(Event::Watch(WatchEvent::Error(self.errors.join("; "))));
        }
        if let Some(why) = self.rescan {
            let _ = tx.send(Event::Watch(WatchEvent::Rescan(why)));
        }
        changes.is_empty() || tx.send(Event::Watch(WatchEvent::Changed(changes))).is_ok()
    }
}

/// Collects raw notify events into bursts: a burst ends after [`DEBOUNCE`]
/// of quiet, or [`MAX_WAIT`] after it began. Linear in the number of
/// events (notify-debouncer-full, used before, scanned its whole queue for
/// every removal: 5,000 deletions at once took seconds).
fn debounce(
    raw: mpsc::Receiver<notify::Result<notify::Event>>,
    dir_roots: Vec<PathBuf>,
    tx: Sender<Event>,
) {
    while let Ok(first) = raw.recv() {
        let began = Instant::now();
        let mut burst = Burst::default();
        burst.add(first);
        let mut open = true;
        while open {
            let left = MAX_WAIT.saturating_sub(began.elapsed());
            if left.is_zero() {
                break;
            }
            match raw.recv_timeout(DEBOUNCE.min(left)) {
                Ok(e) => burst.add(e),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
        }
        if !burst.send(&dir_roots, &tx) || !open {
            return;
        }
    }
}

impl FsWatcher {
    /// Starts watching `roots` (directories recursively; for a file, its
    /// parent directory, so atomic replacements are seen). Roots that
    /// cannot be watched now are reported and retried by [`recheck`](Self::recheck).
    pub fn start(roots: &[PathBuf], tx: Sender<Event>) -> notify::Result<FsWatcher> {
        let dir_roots: Vec<PathBuf> = roots.iter().filter(|r| r.is_dir()).cloned().collect();
        let (raw_tx, raw_rx) = mpsc::channel();
        let watcher = notify::recommended_watcher(move |event| {
            let _ = raw_tx.send(event);
        })?;
        {
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("toolgate-debounce".into())
                .spawn(move || debounce(raw_rx, dir_roots, tx))
                .map_err(|e| notify::Error::generic(&e.to_string()))?;
        }
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
        let mut watcher = FsWatcher { watcher, roots, tx };
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
        self.watcher.watch(&root.target, mode)?;
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
                    let _ = self.watcher.unwatch(&target);
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, RemoveKind};

    #[test]
    fn a_burst_of_removals_is_reported_once_per_path_in_linear_time() {
        let (raw_tx, raw_rx) = mpsc::channel();
        let (tx, rx) = mpsc::channel();
        let n = 20_000;
        for i in 0..n {
            let path = PathBuf::from(format!("/nonexistent/runs/f{i}.json"));
            let remove =
                notify::Event::new(EventKind::Remove(RemoveKind::File)).add_path(path.clone());
            raw_tx.send(Ok(remove.clone())).unwrap();
            raw_tx.send(Ok(remove)).unwrap();
            let read = notify::Event::new(EventKind::Access(AccessKind::Any)).add_path(path);
            raw_tx.send(Ok(read)).unwrap();
        }
        raw_tx
            .send(Err(notify::Error::generic("queue overflow")))
            .unwrap();
        drop(raw_tx);
        let start = Instant::now();
        debounce(raw_rx, vec![], tx);
        let took = start.elapsed();
        let events: Vec<Event> = rx.try_iter().collect();
        let mut paths = Vec::new();
        let mut errors = Vec::new();
        let mut bursts = 0;
        for e in events {
            match e {
                Event::Watch(WatchEvent::Changed(c)) => {
                    bursts += 1;
                    paths.extend(c);
                }
                Event::Watch(WatchEvent::Error(e)) => errors.push(e),
                Event::Watch(WatchEvent::Rescan(why)) => {
                    assert_eq!(why, "watcher error: queue overflow");
                }
                other => panic!("{other:?}"),
            }
        }
        // Each path once per burst (a burst lasts at most MAX_WAIT, so a
        // duplicate can land in the next one), reads ignored.
        let unique: HashSet<&PathBuf> = paths.iter().map(|c| &c.path).collect();
        assert_eq!(unique.len(), n);
        assert!(
            paths.len() <= n + bursts,
            "{} in {bursts} bursts",
            paths.len()
        );
        assert!(paths.iter().all(|c| c.kind == PathKind::Gone));
        assert_eq!(paths[0].path, PathBuf::from("/nonexistent/runs/f0.json"));
        assert_eq!(errors, ["queue overflow"]);
        // notify-debouncer-full scanned its queue for every removal.
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }

    /// After a queue overflow (the inspector stopped with Ctrl-Z while
    /// thousands of files changed) notify sends one event with no paths
    /// and the rescan flag; it was dropped with the paths it lacks, and the
    /// list stayed stale for good. It is now a rescan.
    #[test]
    fn a_queue_overflow_asks_for_a_rescan() {
        let (raw_tx, raw_rx) = mpsc::channel();
        let (tx, rx) = mpsc::channel();
        raw_tx
            .send(Ok(
                notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan)
            ))
            .unwrap();
        drop(raw_tx);
        debounce(raw_rx, vec![], tx);
        let events: Vec<Event> = rx.try_iter().collect();
        assert!(
            matches!(
                events.as_slice(),
                [Event::Watch(WatchEvent::Rescan(why))]
                    if why == "the file system's event queue overflowed"
            ),
            "{events:?}"
        );
    }
}
