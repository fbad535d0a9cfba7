//! The watcher: injected events pushed straight into the app, and one test
//! of the real notify watcher on a temp dir.
#![allow(clippy::unwrap_used)]

use std::sync::mpsc;
use std::time::{Duration, Instant};
use toolgate_testkit::inspector::*;
use toolgate_tui::watcher::FsWatcher;
use toolgate_tui::{App, Event, Job, PathChange, PathKind, WatchEvent, WatchState};

fn changed(path: std::path::PathBuf, kind: PathKind) -> Event {
    Event::Watch(WatchEvent::Changed(vec![PathChange {
        path,
        kind,
        real: None,
    }]))
}

fn ids(app: &App) -> Vec<String> {
    app.rows
        .iter()
        .map(|r| r.entry.transcript.id.clone())
        .collect()
}

fn one() -> Vec<(&'static str, String)> {
    vec![(
        "a.json",
        transcript(
            "first",
            "m",
            "t",
            "<tool name=\"get_weather\">{}</tool>",
            "",
        ),
    )]
}

#[test]
fn a_new_file_appears_and_a_removed_one_disappears() {
    let (dir, mut app) = loaded(&one());
    assert_eq!(app.store.watch, WatchState::Watching);
    let path = path_in(dir.path(), "b.json");
    std::fs::write(&path, transcript("second", "m", "t", "hi", "")).unwrap();
    app.update(changed(path.clone(), PathKind::File));
    let jobs = app.take_jobs();
    assert_eq!(
        jobs,
        vec![Job::Load {
            path: path.clone(),
            seq: 2,
            urgent: true
        }]
    );
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    app.update(Event::Tick);
    assert_eq!(ids(&app), ["first", "second"]);

    std::fs::remove_file(&path).unwrap();
    app.update(changed(path, PathKind::Gone));
    app.update(Event::Tick);
    assert_eq!(ids(&app), ["first"]);
}

#[test]
fn a_half_written_file_is_unreadable_until_the_write_completes() {
    let (dir, mut app) = loaded(&one());
    let path = path_in(dir.path(), "b.json");
    let full = transcript("second", "m", "t", "hi", "");
    std::fs::write(&path, &full[..20]).unwrap();
    app.update(changed(path.clone(), PathKind::File));
    settle(&mut app);
    assert_eq!(ids(&app), ["first"]);
    assert_eq!(app.unreadable.len(), 1);
    assert!(
        app.unreadable[0].reason.starts_with("not valid JSON"),
        "{:?}",
        app.unreadable
    );
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("⚠ 1 unreadable"), "{text}");

    std::fs::write(&path, &full).unwrap();
    app.update(changed(path, PathKind::File));
    settle(&mut app);
    assert_eq!(ids(&app), ["first", "second"]);
    assert!(app.unreadable.is_empty());
}

#[test]
fn a_new_directory_is_scanned_and_a_removed_one_forgotten() {
    let (dir, mut app) = loaded(&one());
    let sub = path_in(dir.path(), "sub");
    std::fs::create_dir_all(sub.join("deeper")).unwrap();
    std::fs::write(sub.join("x.json"), transcript("x", "m", "t", "hi", "")).unwrap();
    std::fs::write(
        sub.join("deeper/y.jsonl"),
        transcript("y", "m", "t", "hi", ""),
    )
    .unwrap();
    std::fs::write(sub.join("notes.txt"), "not a transcript").unwrap();
    app.update(changed(sub.clone(), PathKind::Dir));
    assert_eq!(app.take_jobs(), vec![Job::Scan { dir: sub.clone() }]);
    app.update(toolgate_tui::worker::execute(
        Job::Scan { dir: sub.clone() },
        &Fake,
    ));
    settle(&mut app);
    assert_eq!(ids(&app), ["first", "y", "x"]);

    std::fs::remove_dir_all(&sub).unwrap();
    app.update(changed(sub, PathKind::Gone));
    app.update(Event::Tick);
    assert_eq!(ids(&app), ["first"]);
}

/// A symlink added while the inspector ran listed a transcript twice
/// (`sub/up -> ..`: "Transcripts 2 of 2", `sub/up/a.json` counted), as did
/// a link to a file; the startup walk and `label` list each real file once,
/// at the first path found, and so does the watcher now.
#[test]
fn a_symlink_added_while_watching_does_not_list_a_transcript_twice() {
    let (dir, mut app) = loaded(&one());
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let sub = root.join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
    std::os::unix::fs::symlink("a.json", root.join("b.json")).unwrap();
    for path in [sub.clone(), sub.join("up"), root.join("b.json")] {
        let change = toolgate_tui::watcher::classify(path);
        app.update(Event::Watch(WatchEvent::Changed(vec![change])));
    }
    let jobs = app.take_jobs();
    assert_eq!(
        jobs,
        vec![Job::Scan { dir: sub.clone() }],
        "no load of b.json"
    );
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    assert!(app.take_jobs().is_empty(), "no load of sub/up/a.json");
    settle(&mut app);
    assert_eq!(ids(&app), ["first"]);
    assert_eq!(app.store.total(), 1);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("Transcripts 1 of 1"), "{text}");

    // A new file in the linked folder is listed once, by its own path: a
    // rescan of `sub` finds it again through the link.
    std::fs::write(root.join("c.json"), transcript("c", "m", "t", "hi", "")).unwrap();
    app.update(Event::Watch(WatchEvent::Changed(vec![
        toolgate_tui::watcher::classify(root.join("c.json")),
    ])));
    settle(&mut app);
    app.update(toolgate_tui::worker::execute(Job::Scan { dir: sub }, &Fake));
    assert!(app.take_jobs().is_empty(), "sub/up/c.json is c.json");
    settle(&mut app);
    assert_eq!(ids(&app), ["first", "c"]);
}

#[test]
fn a_deleted_root_is_reported_and_picked_up_again_when_it_returns() {
    let (dir, mut app) = loaded(&one());
    let root = std::fs::canonicalize(dir.path()).unwrap();
    app.update(Event::Watch(WatchEvent::RootGone(root.clone())));
    app.update(Event::Tick);
    assert!(app.rows.is_empty());
    assert_eq!(
        app.store.watch,
        WatchState::Degraded("transcripts is gone".into())
    );
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("watch: transcripts is gone"), "{text}");

    app.update(Event::Watch(WatchEvent::RootBack(root)));
    settle(&mut app);
    assert_eq!(ids(&app), ["first"]);
    assert_eq!(app.store.watch, WatchState::Watching);
}

#[test]
fn changes_outside_the_roots_and_non_transcripts_are_ignored() {
    let (dir, mut app) = loaded(&one());
    app.update(changed("/somewhere/else.json".into(), PathKind::File));
    app.update(changed(
        path_in(dir.path(), ".a.json.toolgate-1.tmp"),
        PathKind::File,
    ));
    assert!(app.take_jobs().is_empty());
}

#[test]
fn an_older_load_finishing_last_does_not_win() {
    let (dir, mut app) = loaded(&one());
    let path = path_in(dir.path(), "a.json");
    app.update(changed(path.clone(), PathKind::File));
    app.update(changed(path.clone(), PathKind::File));
    let jobs = app.take_jobs();
    assert_eq!(jobs.len(), 2);
    std::fs::write(&path, transcript("newest", "m", "t", "hi", "")).unwrap();
    // The newer request answers first, then the stale one (with old content).
    let newer = toolgate_tui::worker::execute(jobs[1].clone(), &Fake);
    let mut older = toolgate_tui::worker::execute(jobs[0].clone(), &Fake);
    if let Event::Loaded { items, .. } = &mut older {
        *items = toolgate_core::load::load_str(&path, &transcript("stale", "m", "t", "hi", ""))
            .into_iter()
            .map(|l| {
                l.map(|t| {
                    let replay = toolgate_tui::Replayer::replay(&Fake, &t);
                    std::sync::Arc::new(toolgate_tui::Entry::new(t, replay))
                })
            })
            .collect();
    }
    app.update(newer);
    app.update(older);
    app.update(Event::Tick);
    assert_eq!(ids(&app), ["newest"]);
}

/// The real notify watcher: a write shows up as an event, quickly; a
/// deleted root is reported and re-watched when it comes back.
#[test]
fn the_real_watcher_reports_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("watched");
    std::fs::create_dir(&root).unwrap();
    let (tx, rx) = mpsc::channel();
    let mut watcher = FsWatcher::start(std::slice::from_ref(&root), tx).unwrap();
    match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
        Event::Watch(WatchEvent::Started(roots)) => assert_eq!(roots, vec![root.clone()]),
        other => panic!("expected Started, got {other:?}"),
    }
    let file = root.join("new.json");
    let start = Instant::now();
    std::fs::write(&file, transcript("new", "m", "t", "hi", "")).unwrap();
    let deadline = start + Duration::from_secs(5);
    let mut seen = false;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(Event::Watch(WatchEvent::Changed(changes))) => {
                if changes
                    .iter()
                    .any(|c| c.path == file && c.kind == PathKind::File)
                {
                    seen = true;
                    break;
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    assert!(seen, "no change event for {} within 5 s", file.display());
    // Generous against a loaded CI machine; the debounce itself is 100 ms.
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "took {:?}",
        start.elapsed()
    );

    // Delete the watched directory: reported, and watching resumes when it returns.
    std::fs::remove_dir_all(&root).unwrap();
    watcher.recheck();
    let gone = (0..20).any(|_| {
        matches!(rx.recv_timeout(Duration::from_millis(250)), Ok(Event::Watch(WatchEvent::RootGone(p))) if p == root)
    });
    assert!(gone, "no RootGone for a deleted root");
    std::fs::create_dir(&root).unwrap();
    watcher.recheck();
    let back = (0..20).any(|_| {
        matches!(rx.recv_timeout(Duration::from_millis(250)), Ok(Event::Watch(WatchEvent::RootBack(p))) if p == root)
    });
    assert!(back, "no RootBack for a recreated root");
}

#[test]
fn rescanning_a_directory_loads_only_the_files_it_did_not_know() {
    let (dir, mut app) = loaded(&one());
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(
        root.join("b.json"),
        transcript("second", "m", "t", "hi", ""),
    )
    .unwrap();
    std::fs::remove_file(root.join("a.json")).unwrap();
    app.update(toolgate_tui::worker::execute(
        Job::Scan { dir: root.clone() },
        &Fake,
    ));
    let jobs = app.take_jobs();
    assert_eq!(jobs.len(), 1);
    assert!(matches!(&jobs[0], Job::Load { path, .. } if *path == root.join("b.json")));
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    app.update(Event::Tick);
    assert_eq!(
        ids(&app),
        ["second"],
        "a.json vanished from the scan, so it is gone"
    );
}

/// A proxy record segment grows by appended lines: each append is a
/// change of the same file, reloaded whole, so the new exchange shows; a
/// line still being written (torn) is never shown as a row, and shows once
/// it is whole. Regression: while the writer was mid-line the inspector
/// listed the line as unreadable (`torn last line …`); it is now held back
/// while the file changed less than `WRITING_GRACE` ago, and reported as
/// `label` reports it (same line, same message) only if the file stays
/// quiet that long with the line still cut.
#[test]
fn a_record_segment_that_grows_shows_each_appended_exchange() {
    use std::io::Write;
    let (dir, mut app) = loaded(&one());
    let path = path_in(dir.path(), "segment-1-1-0001.jsonl");
    let line = |id: &str| {
        let t = transcript(id, "m", "t", "hi", "");
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        format!("{v}\n")
    };
    let reload = |app: &mut App| {
        app.update(changed(path.clone(), PathKind::File));
        for job in app.take_jobs() {
            app.update(toolgate_tui::worker::execute(job, &Fake));
        }
        app.update(Event::Tick);
    };
    std::fs::write(&path, line("x1")).unwrap();
    reload(&mut app);
    assert_eq!(ids(&app), ["first", "x1"]);
    let second = line("x2");
    let (head, tail) = second.split_at(second.len() / 2);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(head.as_bytes()).unwrap();
    reload(&mut app);
    assert_eq!(ids(&app), ["first", "x1"], "a torn line is not a row");
    assert!(app.unreadable.is_empty(), "mid-line: {:?}", app.unreadable);
    let text = screen(&render(&app, 120, 40));
    assert!(!text.contains("unreadable"), "{text}");
    // Not yet quiet for long enough: still held.
    assert!(!app.store.release_held(Instant::now()));
    f.write_all(tail.as_bytes()).unwrap();
    reload(&mut app);
    assert_eq!(ids(&app), ["first", "x1", "x2"]);
    assert!(app.unreadable.is_empty());
    // Nothing is held once the line is whole.
    assert!(
        !app.store
            .release_held(Instant::now() + 2 * toolgate_tui::worker::WRITING_GRACE)
    );

    // A writer that stops mid-line: once the file is quiet, the line is
    // reported as `label` reports it.
    let third = line("x3");
    f.write_all(&third.as_bytes()[..10]).unwrap();
    reload(&mut app);
    assert!(app.unreadable.is_empty());
    assert!(
        app.store
            .release_held(Instant::now() + toolgate_tui::worker::WRITING_GRACE)
    );
    app.update(Event::Tick);
    let torn = vec![(Some(3), toolgate_core::load::TORN.to_string())];
    assert_eq!(unreadable_of(&app, &path), torn);
    assert_eq!(ids(&app), ["first", "x1", "x2"]);
    assert_eq!(label_reads(&path, Default::default()).1, torn);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("⚠ 1 unreadable"), "{text}");
}

/// The same rule at startup: a torn last line of a file that changed just
/// now is a line being written (held back), of a file at rest a torn line
/// (reported at once, as `label` reports it; the first test above).
#[test]
fn at_startup_a_torn_line_of_a_file_being_written_is_held_back() {
    let body = format!("{}{{\"id\": \"x2\", \"out", jsonl_line("x1"));
    let (dir, mut app) = loaded(&[("seg.jsonl", body)]);
    let path = path_in(dir.path(), "seg.jsonl");
    assert_eq!(ids(&app), ["x1"]);
    assert!(app.unreadable.is_empty(), "{:?}", app.unreadable);
    assert!(
        app.store
            .release_held(Instant::now() + toolgate_tui::worker::WRITING_GRACE)
    );
    app.update(Event::Tick);
    assert_eq!(
        unreadable_of(&app, &path),
        [(Some(2), toolgate_core::load::TORN.to_string())]
    );
}

/// Changes lost to an overflowed event queue left the list stale for good:
/// a deleted file still listed, a rewritten one showing its old content,
/// new ones missing. A rescan now walks the roots and reconciles all three,
/// and the status line says events were lost.
#[test]
fn a_rescan_after_lost_events_reconciles_the_list_with_the_disk() {
    let (dir, mut app) = loaded(&[
        ("a.json", transcript("a", "m", "t", "hi", "")),
        ("b.json", transcript("b", "m", "t", "hi", "")),
    ]);
    assert_eq!(ids(&app), ["a", "b"]);
    // Behind the watcher's back.
    std::fs::remove_file(path_in(dir.path(), "a.json")).unwrap();
    std::fs::write(
        path_in(dir.path(), "b.json"),
        transcript("b-changed", "m", "t", "hi", ""),
    )
    .unwrap();
    std::fs::write(
        path_in(dir.path(), "c.json"),
        transcript("c", "m", "t", "hi", ""),
    )
    .unwrap();
    app.update(Event::Watch(WatchEvent::Rescan(
        "the file system's event queue overflowed".into(),
    )));
    settle(&mut app);
    assert_eq!(ids(&app), ["b-changed", "c"]);
    let text = screen(&render(&app, 200, 40));
    assert!(
        text.contains(
            "last error: the file system's event queue overflowed; every file read again"
        ),
        "{text}"
    );
}

/// Detection ran once, at startup: a model whose transcripts came later
/// was judged without it. The store now says which models' transcripts
/// changed on disk (added, rewritten or deleted) and which files hold
/// their transcripts, for detection to run again on them; loads that are
/// not changes on disk (the first walk, a replay after a pick) say nothing.
#[test]
fn changed_transcripts_name_their_models_for_detection_again() {
    let (dir, mut app) = loaded(&[
        ("a.json", transcript("a", "old", "t", "hi", "")),
        ("b.json", transcript("b", "other", "t", "hi", "")),
    ]);
    assert_eq!(app.store.take_touched(), None, "the first walk");
    let before = app.store.touched_generation();

    let c = path_in(dir.path(), "c.json");
    std::fs::write(&c, transcript("c", "zz-model", "t", "hi", "")).unwrap();
    app.update(changed(c.clone(), PathKind::File));
    settle(&mut app);
    assert!(app.store.touched_generation() > before);
    assert_eq!(
        app.store.take_touched(),
        Some((vec![Some("zz-model".to_string())], vec![c.clone()]))
    );
    assert_eq!(app.store.take_touched(), None);

    // A rewrite names the models it held and holds; the files are every
    // file holding one of them.
    let a = path_in(dir.path(), "a.json");
    std::fs::write(&a, transcript("a", "zz-model", "t", "hi", "")).unwrap();
    app.update(changed(a.clone(), PathKind::File));
    settle(&mut app);
    assert_eq!(
        app.store.take_touched(),
        Some((
            vec![Some("old".to_string()), Some("zz-model".to_string())],
            vec![a.clone(), c.clone()]
        ))
    );

    // Replaying every file (a profile picked) is no change on disk.
    app.reload_all();
    settle(&mut app);
    assert_eq!(app.store.take_touched(), None);

    // A deleted file names its models.
    std::fs::remove_file(&c).unwrap();
    app.update(changed(c, PathKind::Gone));
    assert_eq!(
        app.store.take_touched(),
        Some((vec![Some("zz-model".to_string())], vec![a]))
    );
}

/// `{"output": "hi"}` as PowerShell's `>` writes it: UTF-16LE after its
/// byte-order mark, CRLF.
fn utf16_jsonl() -> Vec<u8> {
    let mut bytes = vec![0xff, 0xfe];
    bytes.extend(
        "{\"output\": \"hi\"}\r\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes),
    );
    bytes
}

const GZIP_REASON: &str = "gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)";
const UTF16_REASON: &str = "UTF-16LE text (byte-order mark FF FE), not UTF-8: not read (toolgate \
    reads UTF-8; convert it first, e.g. `iconv -f UTF-16LE -t UTF-8`; PowerShell's `>` writes UTF-16)";

/// Regression: a `x.jsonl.gz` created while the inspector ran was passed
/// over in silence (the startup walk, and `label`, name it: its
/// transcripts are not read), and a UTF-16 JSONL was listed without the
/// line `label` names (`ps.jsonl:1: UTF-16LE text ...`). Each is listed as
/// unreadable with `label`'s reason and line, as the inspector started on
/// the same folder lists it; removed, it is forgotten.
#[test]
fn a_compressed_or_utf16_file_created_while_watching_is_listed_with_the_refusal() {
    let (dir, mut app) = loaded(&one());
    let gz = path_in(dir.path(), "more.jsonl.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]).unwrap();
    let utf16 = path_in(dir.path(), "ps.jsonl");
    std::fs::write(&utf16, utf16_jsonl()).unwrap();
    app.update(changed(gz.clone(), PathKind::File));
    app.update(changed(utf16.clone(), PathKind::File));
    settle(&mut app);
    assert_eq!(ids(&app), ["first"]);
    let listed = |app: &App| -> Vec<(std::path::PathBuf, Option<usize>, String)> {
        app.unreadable
            .iter()
            .map(|e| (e.path.clone(), e.line, e.reason.clone()))
            .collect()
    };
    assert_eq!(
        listed(&app),
        [
            (gz.clone(), None, GZIP_REASON.to_string()),
            (utf16.clone(), Some(1), UTF16_REASON.to_string()),
        ]
    );
    // As an inspector started on the folder now lists them.
    let mut fresh = App::new(
        vec![(
            std::fs::canonicalize(dir.path()).unwrap(),
            "transcripts".into(),
        )],
        toolgate_tui::Replayer::modes(&Fake),
        "default".into(),
        "tag",
    );
    settle(&mut fresh);
    assert_eq!(listed(&fresh), listed(&app));

    // Counted, and listed on screen (the path, then the reason).
    let text = screen(&render(&app, 300, 40));
    assert!(text.contains("⚠ 2 unreadable"), "{text}");
    keys(&mut app, "u");
    let text = screen(&render(&app, 300, 40));
    assert!(
        text.contains(&format!("transcripts/more.jsonl.gz  {GZIP_REASON}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("transcripts/ps.jsonl:1  {UTF16_REASON}")),
        "{text}"
    );

    std::fs::remove_file(&gz).unwrap();
    app.update(changed(gz, PathKind::Gone));
    settle(&mut app);
    assert_eq!(listed(&app), [(utf16, Some(1), UTF16_REASON.to_string())]);
}

/// A file's unreadable entries as the app lists them: line and reason.
fn unreadable_of(app: &App, path: &std::path::Path) -> Vec<(Option<usize>, String)> {
    app.unreadable
        .iter()
        .filter(|e| e.path == path)
        .map(|e| (e.line, e.reason.clone()))
        .collect()
}

/// What `toolgate label` reads from `path` (its batch, `opts`): each
/// transcript's id and each unreadable line with its number and reason.
fn label_reads(
    path: &std::path::Path,
    opts: toolgate_core::load::LoadOptions,
) -> (Vec<String>, Vec<(Option<usize>, String)>) {
    use toolgate_validator::{Auto, Engine, Profile};
    let engine = Engine::new(Profile::reading("hermes"));
    let auto = Auto::given(Profile::reading("hermes"));
    let entries = toolgate_batch::collect(
        &engine,
        &auto,
        &[path.to_path_buf()],
        &toolgate_batch::BatchOptions {
            load: opts,
            workers: 1,
        },
        |_, _, _| (),
    );
    let mut ids = Vec::new();
    let mut bad = Vec::new();
    for entry in entries {
        match entry {
            toolgate_batch::Entry::Done { transcript, .. } => ids.push(transcript.id.clone()),
            toolgate_batch::Entry::Bad(e) => bad.push((e.line, e.reason)),
            toolgate_batch::Entry::FileEnd { .. } => {}
        }
    }
    (ids, bad)
}

/// One JSONL line of a transcript `id`.
fn jsonl_line(id: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(&transcript(id, "m", "t", "hi", "")).unwrap();
    format!("{v}\n")
}

/// A line that is not UTF-8: `{"id": "bad", "output": "caf<E9>"}`.
const NOT_UTF8: &[u8] = b"{\"id\": \"bad\", \"output\": \"caf\xe9\"}\n";
const NOT_UTF8_REASON: &str = "not valid UTF-8 (first bad byte at offset 28)";

/// Sets the modification time of `path` an hour back: a file at rest.
fn at_rest(path: &std::path::Path) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

/// Regression: one line of a `.jsonl` file that is not UTF-8 made the
/// inspector list the WHOLE file as unreadable (`x.jsonl  not valid UTF-8
/// (first bad byte at offset 1283)`, none of its transcripts shown), where
/// `label` reports only that line, with its number, and labels the others.
/// The inspector now shows every readable transcript of the file and each
/// bad line (not UTF-8, not JSON, JSON that is no transcript, a torn last
/// line of a file at rest) as `label` reports it: the same lines, numbers
/// and reasons, the reason sanitised on screen (no byte of the line shown).
#[test]
fn a_jsonl_file_with_bad_lines_shows_its_transcripts_and_each_bad_line_as_label_does() {
    let mut bytes = jsonl_line("one").into_bytes();
    bytes.extend_from_slice(NOT_UTF8);
    bytes.extend_from_slice(b"not json \x1b[31mred\n");
    bytes.extend_from_slice(b"[1, 2]\n");
    bytes.extend_from_slice(jsonl_line("two").as_bytes());
    bytes.extend_from_slice(b"{\"id\": \"torn\", \"output\": \"h");
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(dir.path(), "mixed.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    at_rest(&path);
    let mut app = App::new(
        vec![(
            std::fs::canonicalize(dir.path()).unwrap(),
            "transcripts".into(),
        )],
        toolgate_tui::Replayer::modes(&Fake),
        "default".into(),
        "tag",
    );
    settle(&mut app);
    assert_eq!(ids(&app), ["one", "two"]);
    let want = vec![
        (Some(2), NOT_UTF8_REASON.to_string()),
        (
            Some(3),
            "not valid JSON: expected ident at line 1 column 2".to_string(),
        ),
        (Some(4), "not a JSON object".to_string()),
        (Some(6), toolgate_core::load::TORN.to_string()),
    ];
    assert_eq!(unreadable_of(&app, &path), want);
    // `label` on the same file: the same transcripts, lines and reasons.
    assert_eq!(
        label_reads(&path, Default::default()),
        (vec!["one".to_string(), "two".to_string()], want)
    );

    let text = screen(&render(&app, 300, 40));
    assert!(text.contains("⚠ 4 unreadable"), "{text}");
    keys(&mut app, "u");
    let text = screen(&render(&app, 300, 40));
    assert!(
        text.contains(&format!("transcripts/mixed.jsonl:2  {NOT_UTF8_REASON}")),
        "{text}"
    );
    assert!(
        text.contains("transcripts/mixed.jsonl:6  torn last line"),
        "{text}"
    );
    // Nothing of the lines' own bytes reaches the screen.
    assert!(
        !text.contains("caf") && !text.contains("red") && !text.contains('\u{fffd}'),
        "{text}"
    );
}

/// The line-size limit: a line over it is that line's error, in the
/// inspector's loader as in `label`, and the file's other lines are read
/// (the inspector refused the whole file, over the limit as a file).
/// Shown with a small limit: the inspector reads with the default one,
/// through the same loader.
#[test]
fn a_line_over_the_size_limit_is_that_lines_error_in_the_inspector_as_in_label() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(dir.path(), "long.jsonl");
    let short = "{\"id\": \"s1\", \"output\": \"hi\"}\n";
    let long = format!(
        "{{\"id\": \"long\", \"output\": \"{}\"}}\n",
        "x".repeat(200)
    );
    std::fs::write(&path, format!("{short}{long}{}", short.replace("s1", "s2"))).unwrap();
    let opts = toolgate_core::load::LoadOptions {
        max_file_size: 100,
        fingerprint: true,
    };
    let (loaded, _) = toolgate_core::load::load_file_with(&path, &opts);
    let inspector: (Vec<String>, Vec<(Option<usize>, String)>) = (
        loaded
            .iter()
            .filter_map(|l| l.as_ref().ok().map(|t| t.id.clone()))
            .collect(),
        loaded
            .iter()
            .filter_map(|l| l.as_ref().err().map(|e| (e.line, e.reason.clone())))
            .collect(),
    );
    let want = (
        vec!["s1".to_string(), "s2".to_string()],
        vec![(
            Some(2),
            "228 bytes, over the 100-byte limit (--max-file-size): not read".to_string(),
        )],
    );
    assert_eq!(inspector, want);
    assert_eq!(label_reads(&path, opts), want);
}

/// Lines appended to a watched file: each bad one is listed as `label`
/// lists it (its number and reason) once it is whole, the transcripts
/// around it shown, as an inspector started on the file then shows it.
#[test]
fn bad_lines_appended_while_watching_are_listed_as_label_lists_them() {
    use std::io::Write;
    let (dir, mut app) = loaded(&one());
    let path = path_in(dir.path(), "grows.jsonl");
    let reload = |app: &mut App| {
        app.update(changed(path.clone(), PathKind::File));
        settle(app);
    };
    std::fs::write(&path, jsonl_line("x1")).unwrap();
    reload(&mut app);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(NOT_UTF8).unwrap();
    f.write_all(b"{oops\n").unwrap();
    f.write_all(b"\"just a string\"\n").unwrap();
    f.write_all(jsonl_line("x2").as_bytes()).unwrap();
    reload(&mut app);
    assert_eq!(ids(&app), ["first", "x1", "x2"]);
    let want = vec![
        (Some(2), NOT_UTF8_REASON.to_string()),
        (
            Some(3),
            "not valid JSON: key must be a string at line 1 column 2".to_string(),
        ),
        (Some(4), "not a JSON object".to_string()),
    ];
    assert_eq!(unreadable_of(&app, &path), want);
    let (label_ids, label_bad) = label_reads(&path, Default::default());
    assert_eq!(
        (label_ids, label_bad),
        (vec!["x1".into(), "x2".into()], want)
    );
}
