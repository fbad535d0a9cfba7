//! What the inspector keeps per transcript. It used to keep each one's
//! whole replay (every mode's candidates, gates and telemetry, strict and
//! lenient: some 60 KB for `{"output": "hi"}`, 589 MB of peak memory for
//! 10,000 of them); it keeps a summary, and replays the selected one again.
//!
//! Measured as the growth of this process's resident set while thousands
//! are held (the workspace forbids the `unsafe` a counting allocator
//! takes); alone in its test binary, so no other test allocates meanwhile.
#![allow(clippy::unwrap_used)]

use toolgate_tui::{Event, Job};
use toolgate_validator::{Engine, Profile};

/// The resident set, in bytes (`VmRSS` of /proc/self/status).
fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb * 1024
}

const N: usize = 2_000;

#[test]
#[cfg(target_os = "linux")]
fn a_loaded_transcript_keeps_a_summary_not_its_replay() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.jsonl");
    std::fs::write(&one, "{\"output\": \"hi\"}\n").unwrap();
    let many = dir.path().join("many.jsonl");
    std::fs::write(&many, "{\"output\": \"hi\"}\n".repeat(N)).unwrap();
    let engine = Engine::new(Profile::default());
    let load = |path: &std::path::Path| {
        let job = Job::Load {
            path: path.to_path_buf(),
            seq: 1,
            urgent: false,
        };
        match toolgate_tui::worker::execute(job, &engine) {
            Event::Loaded { items, .. } => items,
            other => panic!("{other:?}"),
        }
    };
    // One first: the engine builds its caches. Only one: memory freed here
    // would be reused below without the resident set growing.
    drop(load(&one));

    let before = resident();
    let items = load(&many);
    let kept = resident().saturating_sub(before) / N;
    assert_eq!(items.iter().filter(|i| i.is_ok()).count(), N);

    let t = items[0].as_ref().unwrap().transcript.clone();
    let before = resident();
    let replays: Vec<_> = (0..N).map(|_| engine.replay(&t)).collect();
    let whole = resident().saturating_sub(before) / N;
    drop(replays);
    drop(items);

    eprintln!("a loaded transcript keeps {kept} bytes; its whole replay is {whole}");
    assert!(kept < 8 * 1024, "a loaded transcript keeps {kept} bytes");
    assert!(
        kept * 8 < whole,
        "a loaded transcript keeps {kept} bytes, the replay it was made from {whole}"
    );
}
