//! Where a sample's transcript lives, and writing it exactly once.
//!
//! The path is a pure function of (model, task, sample):
//! `OUT/<model>/<task>.<sample>.json`, each name made file-system safe by
//! [`slug`]. A rerun therefore finds what an earlier run wrote and skips it,
//! which is all the resume state there is.
//!
//! A transcript is written to a temporary file (created exclusively, synced),
//! then *hard-linked* to its final name — which fails when the name exists,
//! unlike a rename — and the temporary file removed. A reader never sees a
//! half-written transcript, and two runs racing on the same directory never
//! write the same sample twice: the second link fails and its copy is dropped.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Longest slug kept before the hash suffix.
const MAX_SLUG: usize = 80;

/// FNV-1a, 64 bits: a hash that is the same on every platform and release
/// (std's `DefaultHasher` is not), for file names.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A file-name-safe form of `name`: ASCII letters, digits, `-`, `_` and `.`
/// are kept (a leading `.` is not), everything else becomes `_`. When
/// anything was changed or cut, `~` and 8 hex digits of the name's hash are
/// appended, so two different names rarely share a slug (`~` never survives
/// in a name's own slug, so an unchanged name cannot collide with a changed
/// one). Rarely is not never: 32 bits of hash collide (`"a"×80 + "557538"`
/// and `+ "696006"` share one), so `exec::run` refuses a suite or a model
/// list in which two names share a slug, before any request. The hash is
/// not lengthened: it would move every sample of a cut or changed name an
/// earlier run wrote, and a rerun would ask them all again.
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(MAX_SLUG) + 9);
    let mut changed = false;
    for (i, c) in name.chars().enumerate() {
        if out.len() >= MAX_SLUG {
            changed = true;
            break;
        }
        let keep = c.is_ascii_alphanumeric() || c == '-' || c == '_' || (c == '.' && i > 0);
        if keep {
            out.push(c);
        } else {
            out.push('_');
            changed = true;
        }
    }
    if name.is_empty() {
        changed = true;
    }
    if changed {
        out.push_str(&format!("~{:08x}", fnv1a(name.as_bytes()) as u32));
    }
    out
}

/// The transcript file of one sample.
pub fn sample_path(out: &Path, model: &str, task: &str, sample: u32) -> PathBuf {
    out.join(slug(model))
        .join(format!("{}.{sample}.json", slug(task)))
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` unless `path` exists. Returns `Ok(true)` when this
/// call wrote it, `Ok(false)` when it was already there (nothing is changed).
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    if path.exists() {
        return Ok(false);
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            // A file system without hard links: rename, after one more look.
            Err(_) if !path.exists() => std::fs::rename(&tmp, path).map(|()| true),
            Err(_) => Ok(false),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn safe_names_are_kept_and_others_get_a_hash() {
        assert_eq!(slug("qwen3-8b"), "qwen3-8b");
        assert_eq!(slug("weather_one_city"), "weather_one_city");
        let s = slug("Qwen/Qwen3-8B");
        assert!(s.starts_with("Qwen_Qwen3-8B~"), "{s}");
        assert_ne!(slug("a/b"), slug("a_b"));
        assert_ne!(slug("a/b"), slug("a:b"));
        assert!(slug("..").starts_with("_.~"), "{}", slug(".."));
        assert!(slug("").starts_with('~'));
        assert!(slug(&"x".repeat(500)).len() <= MAX_SLUG + 9);
        assert_ne!(slug(&"x".repeat(500)), slug(&"x".repeat(501)));
    }

    #[test]
    fn the_path_is_a_function_of_model_task_and_sample() {
        let out = Path::new("/runs/a");
        assert_eq!(
            sample_path(out, "m", "t", 2),
            PathBuf::from("/runs/a/m/t.2.json")
        );
        assert_ne!(sample_path(out, "m", "t", 2), sample_path(out, "m", "t", 3));
        assert_ne!(
            sample_path(out, "m/t", "x", 1),
            sample_path(out, "m", "t/x", 1)
        );
    }

    #[test]
    fn a_sample_is_written_once_and_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m").join("t.1.json");
        assert!(write_new(&path, b"first").unwrap());
        assert!(!write_new(&path, b"second").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("t.1.json")]);
    }

    #[test]
    fn racing_writers_write_a_sample_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.1.json");
        let wrote: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let path = &path;
                    s.spawn(move || write_new(path, format!("{i}").as_bytes()).unwrap())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| usize::from(h.join().unwrap()))
                .sum()
        });
        assert_eq!(wrote, 1);
    }
}
