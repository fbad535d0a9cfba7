//! The terminal loop: threads feeding one channel, one `App`, one `draw`.

use crate::app::App;
use crate::event::Event;
use crate::theme::Theme;
use crate::ui;
use crate::watcher::FsWatcher;
use crate::worker::{Pool, Replayer};
use ratatui::crossterm::event::{self as term, DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;
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

/// Runs the inspector on `paths` with `replayer` until the user quits.
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

    let roots: Vec<(PathBuf, String)> = paths
        .iter()
        .map(|p| {
            let abs = std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))
                .unwrap_or_else(|_| p.clone());
            (abs, p.display().to_string())
        })
        .collect();
    let (tx, rx) = mpsc::channel::<Event>();
    let mut app = App::new(
        roots.clone(),
        replayer.modes(),
        replayer.profile_name(),
        primary,
    );
    app.theme = Theme::from_env();
    app.profiles = replayer.profiles();

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
    {
        let tx = tx.clone();
        let stop = Arc::clone(&stop);
        let _ = std::thread::Builder::new()
            .name("toolgate-input".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match term::poll(Duration::from_millis(100)) {
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
    drop(tx);

    let result = (|| -> io::Result<()> {
        let size = terminal.size()?;
        app.update(Event::Input(term::Event::Resize(size.width, size.height)));
        let mut redraw = true;
        loop {
            if let Some(request) = app.profile_request.take() {
                // Before the reloads are queued: every replay after this
                // one uses the picked profile.
                replayer.pick(request.as_deref());
                app.reload_all();
            }
            for job in app.take_jobs() {
                pool.submit(job);
            }
            if redraw {
                terminal.draw(|f| ui::draw(&app, f))?;
            }
            if app.quit {
                return Ok(());
            }
            match rx.recv_timeout(Duration::from_millis(250)) {
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
            app.update(Event::Tick);
        }
    })();
    stop.store(true, Ordering::Relaxed);
    if mouse {
        let _ = execute!(io::stdout(), DisableMouseCapture);
    }
    ratatui::restore();
    let _ = std::panic::take_hook();
    drop(pool);
    result
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
