//! The README's tour runs as written.
//!
//! Every `cargo run --release -- …` command of README.md's shell blocks (the
//! inspector aside: it needs a terminal) is run with the built binary in a
//! copy of the files a fresh clone holds (`transcripts/`, `examples/`), as
//! `../shared/tools/readme_commands.py` does on a real clone: each must exit
//! 0, and the tour must leave every file byte-identical (`label --write` on
//! the bundled corpus stores what is already there).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of the README's shell blocks that call `cargo run --release
/// -- SUBCOMMAND`, line continuations joined and comments dropped.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut rest = readme.as_str();
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(nl) = after.find('\n') else { break };
        let lang = after[..nl].trim();
        let body_and_rest = &after[nl + 1..];
        let Some(end) = body_and_rest.find("```") else {
            break;
        };
        let body = &body_and_rest[..end];
        rest = &body_and_rest[end + 3..];
        if !matches!(lang, "sh" | "bash" | "console" | "shell") {
            continue;
        }
        let joined = body.replace("\\\n", " ");
        for line in joined.lines() {
            let line = strip_comment(line).trim().trim_start_matches("$ ").trim();
            let Some((_, sub)) = line.split_once("cargo run --release --") else {
                continue;
            };
            let first = sub.split_whitespace().next().unwrap_or("");
            if first.is_empty()
                || first == "inspect"
                || (first.starts_with('-') && first != "--help")
            {
                continue;
            }
            out.push(line.to_string());
        }
    }
    out
}

/// `line` without a trailing ` # comment` (outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && i > 0 && bytes[i - 1].is_ascii_whitespace() => {
                return &line[..i];
            }
            _ => {}
        }
    }
    line
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    out
}

#[test]
fn the_readme_names_only_files_that_ship() {
    let commands = readme_commands();
    assert!(
        commands.len() >= 6,
        "the README tour shrank to {commands:?}"
    );
    for command in &commands {
        for word in command.split_whitespace() {
            let word = word.trim_matches(|c| c == '\'' || c == '"');
            let names_a_file = word.starts_with("examples/")
                || word.starts_with("transcripts")
                || [".json", ".jsonl", ".toml"]
                    .iter()
                    .any(|ext| word.ends_with(ext));
            if names_a_file {
                assert!(
                    root().join(word).exists(),
                    "README command `{command}` names `{word}`, which does not ship"
                );
            }
        }
    }
}
#[cfg(unix)]
#[test]
fn the_readme_tour_runs_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&root().join("transcripts"), &dir.path().join("transcripts"));
    copy_tree(&root().join("examples"), &dir.path().join("examples"));
    let before = tree(dir.path());
    let bin = env!("CARGO_BIN_EXE_toolgate");
    for command in readme_commands() {
        let line = command.replace("cargo run --release --", bin);
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &line])
            .current_dir(dir.path())
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}` exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let after = tree(dir.path());
    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(p, bytes)| before.get(*p) != Some(*bytes))
        .map(|(p, _)| p)
        .chain(before.keys().filter(|p| !after.contains_key(*p)))
        .collect();
    assert!(
        changed.is_empty(),
        "the README tour changed {} file(s), e.g. {:?}",
        changed.len(),
        changed.first()
    );
}

/// The README named one of the two messages `label --write` prints for a
/// file that changed under it: both are quoted, word for word (the
/// README's line breaks aside).
#[test]
fn the_readme_quotes_both_messages_of_a_file_that_changed_under_label_write() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for message in [
        toolgate_core::load::CHANGED_SINCE_READ.to_string(),
        toolgate_core::load::changed_while_labelled("…"),
    ] {
        assert!(
            flat.contains(&format!("`{message}`")),
            "README.md does not quote `{message}`"
        );
    }
}
