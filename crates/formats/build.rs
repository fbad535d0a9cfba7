//! Registers the built-in formats: every `src/format/<mode>.rs` (but
//! `mod.rs`) is one format, and its `position: N,` line places it in the
//! replay order. Writes `$OUT_DIR/formats.rs`: the `mod` lines and the
//! ordered list [`crate::format::ALL`], so adding a format touches only its
//! own file.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("src")
        .join("format");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut found: Vec<(u64, String, String)> = Vec::new();
    let entries = std::fs::read_dir(&dir).expect("src/format is readable");
    for entry in entries {
        let path = entry.expect("src/format entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().and_then(|e| e.to_str()) != Some("rs") || stem == "mod" {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("format file is readable");
        let position = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("position: ")?.strip_suffix(','))
            .unwrap_or_else(|| panic!("{}: no `position: N,` line", path.display()));
        let position: u64 = position.parse().unwrap_or_else(|_| {
            panic!("{}: position {position:?} is not a number", path.display())
        });
        found.push((position, stem.to_string(), path.display().to_string()));
    }
    found.sort();
    for pair in found.windows(2) {
        assert!(
            pair[0].0 != pair[1].0,
            "formats {} and {} both declare position {}",
            pair[0].1,
            pair[1].1,
            pair[0].0
        );
    }
    let mut out = String::new();
    for (_, stem, path) in &found {
        writeln!(out, "#[path = {path:?}]\npub(crate) mod {stem};").expect("write to a String");
    }
    out.push_str("/// Every built-in format, in replay order (by `position`).\n");
    out.push_str("pub(crate) const ALL: &[&Def] = &[\n");
    for (_, stem, _) in &found {
        writeln!(out, "    &{stem}::FORMAT,").expect("write to a String");
    }
    out.push_str("];\n");
    out.push_str("/// Every built-in format's row, in replay order.\n");
    out.push_str("pub(crate) const ROWS: &[Format] = &[\n");
    for (_, stem, _) in &found {
        writeln!(out, "    {stem}::FORMAT.row,").expect("write to a String");
    }
    out.push_str("];\n");
    out.push_str("/// Every built-in format's model families, in replay order.\n");
    out.push_str("pub(crate) const FAMILIES: &[ModelFamily] = &[\n");
    for (_, stem, _) in &found {
        writeln!(
            out,
            "    ModelFamily {{ mode: {stem}::FORMAT.row.name, fragments: {stem}::FORMAT.models }},"
        )
        .expect("write to a String");
    }
    out.push_str("];\n");
    let target = Path::new(&std::env::var("OUT_DIR").expect("set by cargo")).join("formats.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
