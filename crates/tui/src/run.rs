//! The terminal loop: threads feeding one channel, one `App`, one `draw`.

use crate::app::{App, Effect};
use crate::event::Event;
use crate::theme::Theme;
use crate::ui;
use crate::watcher::FsWatcher;
use crate::worker::{Pool, Replayer};
use ratatui::crossterm::event::{self as term, DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};
use tracing::Dispatch;

/// Environment variable naming a log file for the inspector's `tracing`
/// output. Unset: nothing is logged (never to the terminal).
pub const LOG_ENV: &str = "TOOLGATE_TUI_LOG";

fn log_dispatch() -> Dispatch {
    let Some(path) = std::env::var_os(LOG_ENV) else {
        return Dispatch::new(tracing::subscriber::NoSubscriber::default());
    };
    match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        Ok(file) => Dispatch::new(
            tracing_subscriber::fmt()
                .with_writer(std::sync::Mutex::new(file))
                .with_ansi(false)
                .finish(),
        ),
        Err(_) => Dispatch::new(tracing::subscriber::NoSubscriber::default()),
    }
}

/// How long transcripts must stay unchanged before their models are
/// detected again: a file being copied or recorded into is not re-read for
/// every line.
const REDETECT_QUIET: Duration = Duration::from_millis(300);

/// Runs the inspector on `paths` with `replayer` until the user quits. On
/// SIGTERM, SIGINT or SIGHUP the terminal is restored and the process exits
/// 128 + the signal, as a shell reports a command the signal ended.
pub fn run_with(
    paths: Vec<PathBuf>,
    replayer: Arc<dyn Replayer>,
    primary: &str,
    mouse: bool,
) -> io::Result<()> {
    let dispatch = log_dispatch();
    // This thread, the workers and the watcher log only through `dispatch`,
    // whatever global subscriber the binary installed.
    let _log = tracing::dispatcher::set_default(&dispatch);

    // The terminal first: if it cannot be set up, nothing has been started.
    if !io::stdout().is_terminal() {
        return Err(io::Error::other(
            "the inspector needs a terminal (stdout is not a tty); try `toolgate label` for batch output",
        ));
    }
    let mut terminal = ratatui::try_init()?;
    install_panic_hook(mouse);
    if mouse && let Err(e) = execute!(io::stdout(), EnableMouseCapture) {
        ratatui::restore();
        let _ = std::panic::take_hook();
        return Err(e);
    }
    let (tx, rx) = mpsc::channel::<Event>();
    // From here on a termination signal ends the loop below, which restores
    // the terminal (left in raw mode on the alternate screen, mouse
    // captured and cursor hidden, the shell after a `kill` was unusable).
    let signals = Terminations::start(tx.clone());

    let roots: Vec<(PathBuf, String)> = paths
        .iter()
        .map(|p| {
            let abs = std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))
                .unwrap_or_else(|_| p.clone());
            (abs, p.display().to_string())
        })
        .collect();
    let mut app = App::new(
        roots.clone(),
        replayer.modes(),
        replayer.profile_name(),
        primary,
    );
    app.theme = Theme::from_env();
    app.session.profiles = replayer.profiles();
    app.session.openers = replayer.openers();
    app.set_replayer(Arc::clone(&replayer));

    let init_dispatch = dispatch.clone();
    let pool = Pool::new(
        2,
        Arc::clone(&replayer),
        tx.clone(),
        Arc::new(move || {
            Box::new(tracing::dispatcher::set_default(&init_dispatch)) as Box<dyn std::any::Any>
        }),
    );

    let stop = Arc::new(AtomicBool::new(false));
    {
        let tx = tx.clone();
        let stop = Arc::clone(&stop);
        let dispatch = dispatch.clone();
        let watch_roots: Vec<PathBuf> = roots.iter().map(|(p, _)| p.clone()).collect();
        let _ = std::thread::Builder::new()
            .name("toolgate-watcher".into())
            .spawn(move || {
                let _log = tracing::dispatcher::set_default(&dispatch);
                let mut watcher = match FsWatcher::start(&watch_roots, tx.clone()) {
                    Ok(w) => w,
                    Err(e) => {
                        let _ =
                            tx.send(Event::Watch(crate::event::WatchEvent::Error(e.to_string())));
                        return;
                    }
                };
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(500));
                    watcher.recheck();
                }
            });
    }
    // While an editor runs, the input thread must not read the terminal:
    // `pause` asks it to stop polling, `idle` says it has.
    let pause = Arc::new(AtomicBool::new(false));
    let idle = Arc::new(AtomicBool::new(false));
    {
        let tx = tx.clone();
        let stop = Arc::clone(&stop);
        let pause = Arc::clone(&pause);
        let idle = Arc::clone(&idle);
        let _ = std::thread::Builder::new()
            .name("toolgate-input".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if pause.load(Ordering::SeqCst) {
                        idle.store(true, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                    idle.store(false, Ordering::SeqCst);
                    match term::poll(Duration::from_millis(50)) {
                        Ok(true) => match term::read() {
                            Ok(ev) => {
                                if tx.send(Event::Input(ev)).is_err() {
                                    break;
                                }
                            }
                            Err(_) => break,
                        },
                        Ok(false) => {}
                        Err(_) => break,
                    }
                }
            });
    }
    // Detection again for the models whose transcripts changed on disk,
    // once changes stop for `REDETECT_QUIET`, one run at a time, off this
    // thread; a moved choice comes back as a new `revision`.
    let redetecting = Arc::new(AtomicBool::new(false));
    let mut touched = (0u64, Instant::now());
    let wake = tx.clone();
    drop(tx);

    let result = (|| -> io::Result<()> {
        let size = terminal.size()?;
        app.update(Event::Input(term::Event::Resize(size.width, size.height)));
        let mut redraw = true;
        // Folding loaded files into the list costs time proportional to the
        // whole list; while a big directory loads, it happens at most every
        // `4 × its last cost` (≥ 50 ms), so the UI thread keeps most of its
        // time for keys and drawing.
        let mut last_rebuild = Instant::now();
        let mut rebuild_cost = Duration::ZERO;
        let mut revision = replayer.revision();
        loop {
            if signals.received().is_some() {
                return Ok(());
            }
            if replayer.detects() {
                let generation = app.store.touched_generation();
                if generation != touched.0 {
                    touched = (generation, Instant::now());
                } else if touched.1.elapsed() >= REDETECT_QUIET
                    && !redetecting.load(Ordering::SeqCst)
                    && let Some((models, files)) = app.store.take_touched()
                {
                    redetecting.store(true, Ordering::SeqCst);
                    let replayer = Arc::clone(&replayer);
                    let running = Arc::clone(&redetecting);
                    let wake = wake.clone();
                    let dispatch = dispatch.clone();
                    let spawned = std::thread::Builder::new()
                        .name("toolgate-redetect".into())
                        .spawn(move || {
                            let _log = tracing::dispatcher::set_default(&dispatch);
                            replayer.redetect(&models, &files);
                            running.store(false, Ordering::SeqCst);
                            // Wakes the loop to see a new revision.
                            let _ = wake.send(Event::Tick);
                        });
                    if spawned.is_err() {
                        redetecting.store(false, Ordering::SeqCst);
                    }
                }
            }
            let now = replayer.revision();
            if now != revision {
                // The replayer's choices changed: every transcript again.
                revision = now;
                app.reload_all();
                redraw = true;
            }
            if let Some(request) = app.profile_request.take() {
                // Before the reloads are queued: every replay after this
                // one uses the picked profile.
                replayer.pick(request.as_deref());
                app.reload_all();
            }
            for job in app.take_jobs().into_iter().chain(app.take_replay()) {
                pool.submit(job);
            }
            for effect in app.take_effects() {
                match effect {
                    Effect::Copy { text, .. } => {
                        // Base64 inside OSC 52: no byte of the text itself
                        // reaches the terminal.
                        let mut out = io::stdout();
                        let _ = out.write_all(crate::clipboard::osc52(&text).as_bytes());
                        let _ = out.flush();
                    }
                    Effect::Edit { path, line } => {
                        pause.store(true, Ordering::SeqCst);
                        let waited = Instant::now();
                        while !idle.load(Ordering::SeqCst)
                            && waited.elapsed() < Duration::from_secs(1)
                        {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        if mouse {
                            let _ = execute!(io::stdout(), DisableMouseCapture);
                        }
                        ratatui::restore();
                        let result = run_editor(&path, line);
                        terminal = ratatui::try_init()?;
                        if mouse {
                            let _ = execute!(io::stdout(), EnableMouseCapture);
                        }
                        terminal.clear()?;
                        pause.store(false, Ordering::SeqCst);
                        app.message = Some(match result {
                            Ok(editor) => {
                                format!("back from {editor}; the file reloads if it changed")
                            }
                            Err(e) => e,
                        });
                        redraw = true;
                    }
                }
            }
            if redraw {
                terminal.draw(|f| ui::draw(&app, f))?;
            }
            if app.quit {
                return Ok(());
            }
            let wait = if app.is_dirty() {
                Duration::from_millis(50)
            } else {
                Duration::from_millis(250)
            };
            match rx.recv_timeout(wait) {
                Ok(ev) => {
                    app.update(ev);
                    redraw = true;
                }
                Err(RecvTimeoutError::Timeout) => {
                    // Nothing happened: no need to draw again.
                    redraw = false;
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            // Fold in whatever else is queued before drawing again.
            for _ in 0..4096 {
                match rx.try_recv() {
                    Ok(ev) => app.update(ev),
                    Err(_) => break,
                }
            }
            // A torn last line whose writer went quiet is reported now.
            app.store.release_held(Instant::now());
            if app.is_dirty()
                && last_rebuild.elapsed() >= (rebuild_cost * 4).max(Duration::from_millis(50))
            {
                let start = Instant::now();
                app.update(Event::Tick);
                rebuild_cost = start.elapsed();
                last_rebuild = Instant::now();
                redraw = true;
            }
        }
    })();
    stop.store(true, Ordering::Relaxed);
    if mouse {
        let _ = execute!(io::stdout(), DisableMouseCapture);
    }
    ratatui::restore();
    let _ = std::panic::take_hook();
    drop(pool);
    // Dropping the terminal shows the cursor again (`restore` does not):
    // before `exit`, which would skip it.
    drop(terminal);
    if let Some(signal) = signals.finish() {
        // The shell's convention for a command ended by a signal. The
        // terminal is back; nothing else is left to clean up.
        std::process::exit(128 + signal);
    }
    result
}

/// The termination signals (SIGTERM, SIGINT, SIGHUP) caught while the
/// inspector runs: a thread notes the first and wakes the loop, which then
/// ends like a quit and restores the terminal. A second signal, or one
/// after the loop ended, exits at once: a stuck loop still ends, and the
/// handlers (which cannot hand the default action back) never leave the
/// process deaf to them. Nothing is caught where signals are not Unix's.
struct Terminations {
    received: Arc<std::sync::atomic::AtomicI32>,
    finished: Arc<AtomicBool>,
}

impl Terminations {
    fn start(tx: mpsc::Sender<Event>) -> Terminations {
        let received = Arc::new(std::sync::atomic::AtomicI32::new(0));
        let finished = Arc::new(AtomicBool::new(false));
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            match signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) {
                Ok(mut signals) => {
                    let received = Arc::clone(&received);
                    let finished = Arc::clone(&finished);
                    let _ = std::thread::Builder::new()
                        .name("toolgate-signals".into())
                        .spawn(move || {
                            for signal in signals.forever() {
                                let earlier = received.swap(signal, Ordering::SeqCst);
                                if earlier != 0 || finished.load(Ordering::SeqCst) {
                                    std::process::exit(128 + signal);
                                }
                                // Wakes the loop, which sees `received`.
                                let _ = tx.send(Event::Tick);
                            }
                        });
                }
                Err(e) => tracing::warn!("termination signals not caught: {e}"),
            }
        }
        #[cfg(not(unix))]
        drop(tx);
        Terminations { received, finished }
    }

    /// The signal received, if any.
    fn received(&self) -> Option<i32> {
        Some(self.received.load(Ordering::SeqCst)).filter(|s| *s != 0)
    }

    /// The loop is over (the terminal restored): a signal from now on
    /// exits at once. The signal that ended the loop, if one did.
    fn finish(self) -> Option<i32> {
        self.finished.store(true, Ordering::SeqCst);
        self.received()
    }
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`, run by the
/// shell as git runs it (`sh -c '$EDITOR "$@"' $EDITOR FILE`), so that
/// `code -w`, a quoted path with spaces or `"$HOME/bin/ed" --flag` mean
/// what they mean in a shell. The file is an argument, never part of the
/// script. Editors known to take `+LINE` get the JSONL line.
pub fn editor_command(
    visual: Option<String>,
    editor: Option<String>,
    path: &std::path::Path,
    line: Option<usize>,
) -> Vec<std::ffi::OsString> {
    let spec = visual
        .filter(|v| !v.trim().is_empty())
        .or(editor.filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    let first = spec.split_whitespace().next().unwrap_or("vi");
    let first = first.trim_matches(|c| c == '"' || c == '\'');
    let program = std::path::Path::new(first)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string();
    let mut cmd: Vec<std::ffi::OsString> = vec![
        "sh".into(),
        "-c".into(),
        format!("{spec} \"$@\"").into(),
        spec.clone().into(),
    ];
    if let Some(l) = line
        && [
            "vi", "vim", "nvim", "nano", "emacs", "hx", "kak", "micro", "ne", "joe",
        ]
        .contains(&program.as_str())
    {
        cmd.push(format!("+{l}").into());
    }
    cmd.push(path.as_os_str().to_owned());
    cmd
}

fn run_editor(path: &std::path::Path, line: Option<usize>) -> Result<String, String> {
    let cmd = editor_command(
        std::env::var("VISUAL").ok(),
        std::env::var("EDITOR").ok(),
        path,
        line,
    );
    // `sh -c SCRIPT NAME ARGS…`: NAME is the editor as configured.
    let name = cmd
        .get(3)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match std::process::Command::new(&cmd[0]).args(&cmd[1..]).status() {
        Ok(status) if status.success() => Ok(name),
        Ok(status) => Err(format!(
            "{} exited with {status}",
            crate::text::one_line(&name)
        )),
        Err(e) => Err(format!(
            "could not run {} ($VISUAL / $EDITOR): {e}",
            crate::text::one_line(&name)
        )),
    }
}

/// ratatui's hook restores the terminal on panic; that is right for the UI
/// thread, but a panic caught in a worker (a replay bug on one transcript)
/// must neither restore the terminal under a running UI nor print on it.
fn install_panic_hook(mouse: bool) {
    let ui_thread = std::thread::current().id();
    let ratatui_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui_thread {
            if mouse {
                let _ = execute!(io::stdout(), DisableMouseCapture);
            }
            ratatui_hook(info);
        } else {
            let name = std::thread::current()
                .name()
                .unwrap_or("thread")
                .to_string();
            tracing::error!("panic in {name}: {info}");
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_editor_is_visual_then_editor_then_vi_with_the_line_where_understood() {
        let p = Path::new("/t/runs.jsonl");
        let words = |v: Vec<std::ffi::OsString>| -> Vec<String> {
            v.into_iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            words(editor_command(None, None, p, Some(3))),
            ["sh", "-c", "vi \"$@\"", "vi", "+3", "/t/runs.jsonl"]
        );
        assert_eq!(
            words(editor_command(
                Some("code -w".into()),
                Some("nano".into()),
                p,
                Some(3)
            )),
            ["sh", "-c", "code -w \"$@\"", "code -w", "/t/runs.jsonl"],
            "VISUAL wins; code does not take +LINE"
        );
        assert_eq!(
            words(editor_command(
                Some(" ".into()),
                Some("/usr/bin/nvim".into()),
                p,
                None
            )),
            [
                "sh",
                "-c",
                "/usr/bin/nvim \"$@\"",
                "/usr/bin/nvim",
                "/t/runs.jsonl"
            ]
        );
    }

    /// Issue 26: `$EDITOR` was split on whitespace, so an editor at a path
    /// with a space (quoted, as a shell reads it) could not run. The shell
    /// runs it now, and the file name is passed as an argument, whatever
    /// it holds.
    #[cfg(unix)]
    #[test]
    #[allow(clippy::unwrap_used)]
    fn the_editor_is_run_by_the_shell_with_the_file_as_an_argument() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("my editor");
        std::fs::create_dir(&bin).unwrap();
        let script = bin.join("ed.sh");
        let log = dir.path().join("log");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nprintf '%s|' \"$@\" > '{}'\n", log.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = dir.path().join("a file; rm -rf x.jsonl");
        let spec = format!("'{}' --wait", script.display());
        let cmd = editor_command(None, Some(spec), &file, Some(2));
        let status = std::process::Command::new(&cmd[0])
            .args(&cmd[1..])
            .status()
            .unwrap();
        assert!(status.success());
        let args = std::fs::read_to_string(&log).unwrap();
        assert_eq!(args, format!("--wait|{}|", file.display()));
    }
}
