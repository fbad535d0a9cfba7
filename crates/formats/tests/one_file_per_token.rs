//! Issue 27's "done means" for format descriptions: each built-in format's
//! distinctive tokens are spelled in exactly one production source file, so
//! adding or changing a format touches its own file
//! (`crates/formats/src/format/<mode>.rs`) and nothing else.
//!
//! The tokens of a row are its closers, the openers and closers of its
//! blocks, its streaming openers and its stop token; a token shorter than
//! three bytes or made of punctuation only (`[`, `` ``` ``) is not
//! distinctive. Production source is every `.rs` file under `crates/*/src`
//! and `src/`, without comments, without the prose a format shows people
//! (its `example`, `describe`, `conventions`, `families`) and without its
//! `#[cfg(test)]` tail;
//! `crates/testkit` is test support and is skipped. A token several formats
//! use by design (`<tool_call>`) must still be spelled once: in one shared
//! constant that the formats name.
//!
//! A token built only from other constants (`cat!(NS, XML.invoke_end)`) is
//! spelled nowhere, which is fine. The tokens in [`PENDING`] are still
//! spelled in several files; the test requires each of them to still need
//! its exemption, so the list can only shrink. Exemptions are per token,
//! not per format: a new format that names an existing token through its
//! constant needs no change here.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use toolgate_formats::FORMATS;

/// Tokens still spelled in more than one production file, with where the
/// other spellings live. Empty: the engines and the `detect` markup lists
/// take every token from the format files. A token that is the start of
/// another format's token (xml_call's `<tool_call` in hermes's
/// `<tool_call>`) is not spelled by a spelling of the longer one.
const PENDING: &[(&str, &str)] = &[];

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
    // Inside an extractor's `fn example` / `fn describe`: prose.
    let mut in_prose = false;
    for line in text.lines() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        let line = line.trim_start();
        if in_prose {
            in_prose = line != "}";
            continue;
        }
        if line.starts_with("fn example(") || line.starts_with("fn describe(") {
            in_prose = !line.ends_with('}');
            continue;
        }
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
    spells_own(code, token, &[])
}

/// Whether `code` spells `token` as a literal of its own: not as the start
/// of a longer word, nor as the start of one of the `longer` tokens (other
/// formats' tokens that begin with this one) written at the same place.
fn spells_own(code: &str, token: &str, longer: &[&str]) -> bool {
    let escape = |t: &str| t.replace('\\', "\\\\").replace('"', "\\\"");
    let escaped = escape(token);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b':';
    let ends_in_word = token.bytes().last().is_some_and(word);
    [(token, false), (escaped.as_str(), true)]
        .iter()
        .any(|&(t, esc)| {
            code.match_indices(t).any(|(at, _)| {
                let next = code.as_bytes().get(at + t.len()).copied();
                let rest = &code[at..];
                let part_of_longer = longer.iter().any(|u| {
                    if esc {
                        rest.starts_with(escape(u).as_str())
                    } else {
                        rest.starts_with(u)
                    }
                });
                (!ends_in_word || !next.is_some_and(word)) && !part_of_longer
            })
        })
}

fn distinctive(token: &str) -> bool {
    token.len() >= 3 && token.chars().any(char::is_alphanumeric)
}

fn tokens_of(f: &toolgate_formats::Format) -> BTreeSet<&'static str> {
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

    let all: BTreeSet<&str> = FORMATS.iter().flat_map(tokens_of).collect();
    let mut spelled: BTreeMap<&str, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for f in FORMATS {
        for token in tokens_of(f) {
            let longer: Vec<&str> = all
                .iter()
                .copied()
                .filter(|u| u.len() > token.len() && u.starts_with(token))
                .collect();
            let entry = spelled.entry(token).or_insert_with(|| {
                let at = code
                    .iter()
                    .filter(|(_, c)| spells_own(c, token, &longer))
                    .map(|(n, _)| n.as_str())
                    .collect();
                (at, Vec::new())
            });
            entry.1.push(f.name);
        }
    }
    let mut report = Vec::new();
    for (token, (at, modes)) in &spelled {
        let pending = PENDING.iter().any(|(t, _)| t == token);
        if at.len() > 1 && !pending {
            report.push(format!("{token:?} (of {modes:?}) is spelled in {at:?}"));
        }
        if at.len() <= 1 && pending {
            report.push(format!(
                "{token:?} is now spelled at most once: remove it from PENDING"
            ));
        }
    }
    for (token, _) in PENDING {
        if !spelled.contains_key(token) {
            report.push(format!(
                "{token:?} is no format's token: remove it from PENDING"
            ));
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
    let longer = ["<tool_call>", "<tool_call|>"];
    assert!(!spells_own(r#"x("<tool_call>")"#, "<tool_call", &longer));
    assert!(!spells_own(r#"x("<tool_call|>")"#, "<tool_call", &longer));
    assert!(spells_own(r#"x("<tool_call ")"#, "<tool_call", &longer));
    assert!(spells_own(r#"x("<tool_call")"#, "<tool_call", &longer));
    assert!(!spells("Action::Down", "Action:") && spells(r#""Action:""#, "Action:"));
    assert!(!distinctive("```") && !distinctive("[") && distinctive("TOOL_CALL"));
    assert_eq!(
        production("a\n// <x>\n  example: \"<x>\",\nb\n#[cfg(test)]\nc\n"),
        "a\nb\n"
    );
    let prose =
        "fn example(&self) -> &str {\n    \"<x>\"\n}\nfn describe(&self) -> &str { \"<y>\" }\nz\n";
    assert_eq!(production(prose), "z\n");
}
