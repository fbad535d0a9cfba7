//! Regression (s47-files): `label --write` read a whole JSONL file into
//! memory to rewrite it (its bytes, then the new text beside them), so a
//! multi-GB transcript file needed twice its size in memory. It is streamed
//! now: the peak resident set size of this process (its own test binary,
//! nothing else running in it) while a 64 MiB file is labelled stays under
//! 24 MiB, where the whole-file rewrite peaked above 128 MiB. Measured with
//! `VmHWM` of `/proc/self/status`, reset first (`clear_refs`); Linux only.
#![allow(clippy::unwrap_used)]

use std::io::Write;

/// Peak resident set size in KiB (`VmHWM`).
#[cfg(target_os = "linux")]
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_jsonl_file_much_larger_than_memory_allows_is_labelled_in_bounded_memory() {
    use toolgate_core::load::{Fingerprint, FingerprintWriter, WriteOutcome, write_labels_checked};
    const SIZE: usize = 64 << 20;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let filler = format!("{{\"output\": \"{}\"}}\n", "x".repeat(4000));
    let first = "{\"output\": \"first\"}\n";
    let last = "{\"output\": \"last\"}\n";
    let mut read = FingerprintWriter::default();
    let mut lines = 0;
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut put = |text: &str| {
            out.write_all(text.as_bytes()).unwrap();
            read.add(text.as_bytes());
        };
        put(first);
        let mut size = first.len();
        while size < SIZE {
            put(&filler);
            size += filler.len();
            lines += 1;
        }
        put(last);
    }
    let read: Fingerprint = read.finish();
    let labels = vec![("tag".to_string(), "pass".to_string())];
    let updates = [(Some(1), labels.clone()), (Some(lines + 2), labels)];
    // The peak from here on (the file was written through a small buffer).
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = peak_kib();
    let wrote = write_labels_checked(&path, &updates, Some(read)).unwrap();
    let peak = peak_kib();
    assert_eq!(wrote, WriteOutcome::Written);
    assert!(
        peak < 24 * 1024,
        "peak RSS {peak} KiB labelling a {} MiB file (before: {before} KiB)",
        SIZE >> 20
    );
    // What was written, read back a line at a time.
    let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
    let mut n = 0;
    for line in std::io::BufRead::lines(file) {
        let line = line.unwrap();
        n += 1;
        let want = if n == 1 {
            "{\"output\": \"first\", \"labels\": {\"tag\": \"pass\"}}".to_string()
        } else if n == lines + 2 {
            "{\"output\": \"last\", \"labels\": {\"tag\": \"pass\"}}".to_string()
        } else {
            filler.trim_end().to_string()
        };
        assert!(line == want, "line {n} differs");
    }
    assert_eq!(n, lines + 2);
}
