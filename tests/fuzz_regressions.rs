//! Replays every input saved under `fuzz/regressions/<target>/` through the
//! fuzz targets' own bodies (`fuzz/harness.rs`) on stable Rust: an input that
//! once crashed, hung or ballooned must now finish, quickly, with every
//! invariant holding. Add a file there for every finding (FUZZING.md).
#![allow(clippy::unwrap_used)]

#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest one saved input may take (debug build, shared machine).
const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn every_saved_fuzz_input_replays_within_its_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut count = 0;
    for target in harness::TARGETS {
        let mut files: Vec<_> = std::fs::read_dir(root.join(target))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let (tx, rx) = mpsc::channel();
            let started = Instant::now();
            // A worker-sized stack: a schema must never recurse past it.
            let worker = std::thread::Builder::new()
                .stack_size(2 * 1024 * 1024)
                .spawn(move || {
                    harness::run(target, &data);
                    let _ = tx.send(());
                })
                .unwrap();
            match rx.recv_timeout(LIMIT) {
                Ok(()) => worker.join().unwrap(),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // The worker panicked: report its message.
                    if let Err(p) = worker.join() {
                        std::panic::resume_unwind(p);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{} did not finish within {LIMIT:?}", file.display())
                }
            }
            eprintln!("{}: {:?}", file.display(), started.elapsed());
            count += 1;
        }
    }
    assert!(count >= 10, "only {count} saved inputs found");
}

/// The harness's independent check is not vacuous.
#[test]
fn the_independent_closed_schema_check_refuses_what_it_should() {
    use serde_json::json;
    use toolgate_core::Call;
    let ok = Call::new("get_weather", json!({"city": "A", "days": 3, "unit": "c"}));
    assert_eq!(harness::independently_valid(&ok), Ok(()));
    for bad in [
        Call::new("get_weather", json!({"city": ""})),
        Call::new("get_weather", json!({"city": "A", "days": 15})),
        Call::new("get_weather", json!({"city": "A", "days": 2.5})),
        Call::new("get_weather", json!({"city": "A", "x": 1})),
        Call::new("search_web", json!({"query": "q", "k": 1})),
        Call::new("now", json!({"tz": "UTC"})),
        Call::new("rm_rf", json!({})),
    ] {
        assert!(harness::independently_valid(&bad).is_err(), "{bad:?}");
    }
    // A valid call through the pipeline target executes (and is checked).
    let mut input = vec![0u8, 0u8];
    input.extend_from_slice(br#"<tool name="get_weather">{"city": "Antwerp", "days": 3}</tool>"#);
    harness::fail_closed(&input);
}
