//! Issue 27's "done means" for format descriptions: each built-in format's
//! distinctive tokens are spelled in exactly one production source file, so
//! adding or changing a format touches its own file
//! (`crates/formats/src/format/<mode>.rs`) and nothing else.
//!
//! The tokens of a row are its closers, the openers and closers of its
//! blocks, its streaming openers and its stop token; a token shorter than
//! three bytes or made of punctuation only (`[`, `` ``` ``) is not
//! distinctive. Production source is every `.rs` file under `crates/*/src`
//! and `src/`, without comments and without its `#[cfg(test)]` tail;
//! `crates/testkit` is test support and is skipped. A token several formats
//! use by design (`<tool_call>`) must still be spelled once: in one shared
//! constant that the formats name.
//!
//! The formats in [`PENDING`] still spell a token in an engine's file as
//! well as in their own (the engines being rewritten as shapes, issue 27
//! item 2); the test requires each of them to still need its exemption, so
//! the list can only shrink.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use toolgate_formats::table::FORMATS;

/// Formats whose tokens are still spelled in more than one production file,
/// with where the second spelling lives.
const PENDING: &[(&str, &str)] = &[
    (
        "command_r",
        "shares a token with another format's file; needs one shared constant",
    ),
    (
        "deepseek",
        "an engine's file spells it too; the `detect` markup lists (src/detect.rs, crates/matrix/src/detect.rs) spell it too",
    ),
    (
        "deepseek_dsml_plain",
        "shares a token with another format's file; needs one shared constant; invoke.rs's XML syntax spells <invoke ",
    ),
    (
        "functionary",
        "an engine's file spells it too (functionary.rs, qwen_xml.rs: <function=)",
    ),
    ("gemma", "an engine's file spells it too"),
    (
        "glm",
        "an engine's file spells it too (glm.rs); <tool_call> shared",
    ),
    ("granite", "<tool_call> shared with hermes and others"),
    (
        "harmony",
        "an engine's file spells it too (harmony.rs, reasoning.rs); the `detect` markup lists (src/detect.rs, crates/matrix/src/detect.rs) spell it too",
    ),
    (
        "hermes",
        "an engine's file spells it too (modes/hermes.rs); <tool_call> shared",
    ),
    (
        "hunyuan",
        "shares a token with another format's file; needs one shared constant (<tool_calls>, <tool_call>, </arg_value>)",
    ),
    (
        "hy_v4",
        "shares a token with another format's file; needs one shared constant (<tool_calls>, <tool_call>, </arg_value>)",
    ),
    (
        "llama3",
        "an engine's file spells it too; the `detect` markup lists (src/detect.rs, crates/matrix/src/detect.rs) spell it too",
    ),
    (
        "marker",
        "an engine's file spells it too; the `detect` markup lists (src/detect.rs, crates/matrix/src/detect.rs) spell it too",
    ),
    (
        "minicpm5",
        "shares a token with another format's file; needs one shared constant (<function, </function>)",
    ),
    (
        "minimax_m2",
        "shares a token with another format's file; needs one shared constant; invoke.rs's XML syntax spells <invoke ",
    ),
    (
        "minimax_m3",
        "shares a token with another format's file; needs one shared constant; invoke.rs's XML syntax spells <invoke ",
    ),
    (
        "mistral",
        "an engine's file spells it too; the `detect` markup lists (src/detect.rs, crates/matrix/src/detect.rs) spell it too",
    ),
    (
        "qwen_xml",
        "an engine's file spells it too (qwen_xml.rs); the `detect` markup lists (src/detect.rs, crates/matrix/src/detect.rs) spell it too",
    ),
    (
        "react",
        "shares a token with another format's file; needs one shared constant (Action: with command_r)",
    ),
    (
        "seed_oss",
        "shares a token with another format's file; needs one shared constant (<function=, </parameter> with qwen_xml)",
    ),
    (
        "tag",
        "an engine's file spells it too (modes/tag.rs); the `detect` markup lists (src/detect.rs, crates/matrix/src/detect.rs) spell it too",
    ),
    (
        "xlam",
        "shares a token with another format's file; needs one shared constant (<tool_call>, [TOOL_CALLS], ```json)",
    ),
    ("xml_call", "an engine's file spells it too (xml_call.rs)"),
];

/// Source files that are test modules (`#[cfg(test)] mod tests;`).
const TEST_FILES: &[&str] = &["tests.rs", "testutil.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && !TEST_FILES.iter().any(|t| path.ends_with(t))
        {
            out.push(path);
        }
    }
}

/// The production code of a source file: up to its `#[cfg(test)]` tail,
/// without comment lines.
fn production(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        let line = line.trim_start();
        // Comments, and the example, description, conventions and families a
        // format shows to people (prose that must show the tokens), are not
        // spellings.
        if ["//", "example:", "describe:", "conventions:", "families:"]
            .iter()
            .any(|p| line.starts_with(p))
        {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Whether `code` spells `token` (as written, or escaped inside a `"…"`
/// literal), not as the start of a longer identifier.
fn spells(code: &str, token: &str) -> bool {
    let escaped = token.replace('\\', "\\\\").replace('"', "\\\"");
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b':';
    let ends_in_word = token.bytes().last().is_some_and(word);
    [token, escaped.as_str()].iter().any(|t| {
        code.match_indices(t).any(|(at, _)| {
            let next = code.as_bytes().get(at + t.len()).copied();
            !ends_in_word || !next.is_some_and(word)
        })
    })
}

fn distinctive(token: &str) -> bool {
    token.len() >= 3 && token.chars().any(char::is_alphanumeric)
}

fn tokens_of(f: &toolgate_formats::table::Format) -> BTreeSet<&'static str> {
    let mut t: BTreeSet<&'static str> = f.closers.iter().copied().collect();
    for (open, close) in f.blocks {
        t.insert(open);
        t.insert(close);
    }
    t.extend(f.openers.unwrap_or(&[]).iter().copied());
    t.extend(f.stop_token.map(|s| s.token));
    t.into_iter().filter(|t| distinctive(t)).collect()
}

#[test]
fn every_distinctive_token_is_spelled_in_one_production_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        if entry.file_name() != "testkit" {
            rust_files(&entry.path().join("src"), &mut files);
        }
    }
    assert!(
        files.len() > 50,
        "source not found under {}",
        root.display()
    );
    let code: Vec<(String, String)> = files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let name = p.strip_prefix(&root).unwrap_or(p).display().to_string();
            (name, production(&text))
        })
        .collect();

    let mut violations: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for f in FORMATS {
        for token in tokens_of(f) {
            let at: Vec<&str> = code
                .iter()
                .filter(|(_, c)| spells(c, token))
                .map(|(n, _)| n.as_str())
                .collect();
            if at.len() != 1 {
                violations
                    .entry(f.name)
                    .or_default()
                    .push(format!("{token:?} in {at:?}"));
            }
        }
    }
    let mut report = Vec::new();
    for (mode, v) in &violations {
        if !PENDING.iter().any(|(m, _)| m == mode) {
            report.push(format!("{mode}: {}", v.join("; ")));
        }
    }
    for (mode, _) in PENDING {
        if !violations.contains_key(mode) {
            report.push(format!("{mode}: now spelled once, remove it from PENDING"));
        }
    }
    assert!(report.is_empty(), "\n{}", report.join("\n"));
}

#[test]
fn the_token_search_sees_literals_and_not_longer_names() {
    assert!(spells(r#"const A: &str = "<tool_call>";"#, "<tool_call>"));
    assert!(spells(r#"invoke: "<invoke name=\"","#, "<invoke name=\""));
    assert!(!spells(r#"x("<tool_call>")"#, "<tool"));
    assert!(spells(r#"x("<tool ")"#, "<tool"));
    assert!(!spells("Action::Down", "Action:") && spells(r#""Action:""#, "Action:"));
    assert!(!distinctive("```") && !distinctive("[") && distinctive("TOOL_CALL"));
    assert_eq!(
        production("a\n// <x>\n  example: \"<x>\",\nb\n#[cfg(test)]\nc\n"),
        "a\nb\n"
    );
}
