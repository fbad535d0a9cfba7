//! Reading what `toolgate proxy --record` wrote, the way the tests look at
//! it: the whole lines of every record segment in a directory.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The whole lines of every record segment (`*.jsonl`) in `dir`: files in
/// name order, lines in write order; a line still being written (no final
/// newline yet) is left out. A missing directory has no lines.
pub fn lines(dir: &Path) -> Vec<Value> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    let mut lines = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
            lines.push(serde_json::from_str(line).unwrap());
        }
    }
    lines
}

/// How many exchanges `lines` hold (one line per attempt, each naming its
/// exchange).
pub fn exchanges(lines: &[Value]) -> usize {
    lines
        .iter()
        .map(|l| l["exchange"].as_str().unwrap_or(""))
        .collect::<std::collections::HashSet<_>>()
        .len()
}

/// The lines of the record segments in `dir` once they hold `files`
/// exchanges (the proxy records off the request path): polled every 20 ms
/// for up to 5 s, then asserted to hold exactly that many.
pub fn when_written(dir: &Path, files: usize) -> Vec<Value> {
    for _ in 0..250 {
        if exchanges(&lines(dir)) >= files {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let lines = lines(dir);
    assert_eq!(exchanges(&lines), files, "{lines:?}");
    lines
}
