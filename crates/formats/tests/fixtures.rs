//! Every built-in format over its own fixtures (ruff's shape: one rule,
//! one fixture folder, one snapshot per fixture).
//!
//! The fixtures of a format are the bundled corpus's transcripts *about* it,
//! `transcripts/<mode>/*.json{,l}` at the repository root. Each is loaded by
//! the library's loader ([`toolgate_core::load`]), given to the format's
//! extractor the way replay gives it (`Input::from_transcript` with the
//! transcript's parameter types, the reasoning field and the length limit,
//! through [`toolgate_formats::extract`] and its cap), strict and lenient, and what the extractor finds is
//! locked as one YAML snapshot per fixture under
//! `tests/snapshots/<mode>/<file>.snap`: each candidate's source, span, name,
//! and its arguments or its failure (kind, offset, message), with the
//! repairs the lenient replay used; where the shared missing-closer rule
//! changes the strict reading, the format's own reading before it too
//! (`strict_before_rules`). `tests/snapshots.rs` at the root locks the
//! *labels* the validator gives the same files; this locks the calls.
//!
//! So adding a format touches its own file, its fixture folder and its
//! snapshots: the folder must exist (`every_format_has_a_fixture_folder`),
//! and every folder but the corpus's cross-mode ones must name a format.
//! What one format's fixtures cannot say — a rule every format keeps — is
//! tested across formats (`tests/prop.rs`, `tests/cap_memory.rs`, the
//! engines' own tests, the `examples` tests of each group); outputs too
//! large to ship as fixtures are in `tests/large_inputs.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toolgate_core::Candidate;
use toolgate_core::load::load_file;
use toolgate_formats::{Extractor, Input, ParamTypes, Strictness};

/// Folders of the corpus that are about no one format: `profile/` (the
/// default profile's gates) and `findings/` (server findings). They are
/// replayed by the root corpus test, not here.
const NOT_FORMATS: [&str; 2] = ["profile", "findings"];

/// The corpus root, `transcripts/` at the repository root.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../transcripts")
}

/// Strings longer than this are shown clipped, with their length (as the
/// corpus label snapshots do), so that size cases keep snapshots readable.
const CLIP: usize = 160;

/// `value` with every string longer than [`CLIP`] bytes cut to its first 80
/// characters plus `… (N bytes)`.
fn clip(value: &mut Value) {
    match value {
        Value::String(s) if s.len() > CLIP => {
            let head: String = s.chars().take(80).collect();
            *s = format!("{head}… ({} bytes)", s.len());
        }
        Value::Array(items) => items.iter_mut().for_each(clip),
        Value::Object(map) => map.values_mut().for_each(clip),
        _ => {}
    }
}

/// One candidate as the snapshot shows it.
fn candidate(c: &Candidate) -> Value {
    let mut map = Map::new();
    map.insert("source".into(), json!(c.source));
    map.insert(
        "span".into(),
        json!(format!("{}..{}", c.span.start, c.span.end)),
    );
    map.insert("name".into(), json!(c.name));
    match &c.arguments {
        Ok(args) => {
            map.insert("arguments".into(), Value::Object((**args).clone()));
        }
        Err(f) => {
            map.insert(
                "failure".into(),
                json!({"kind": f.kind, "offset": f.offset, "message": f.message}),
            );
        }
    }
    if !c.repairs.is_empty() {
        map.insert("repairs".into(), json!(c.repairs));
    }
    let mut shown = Value::Object(map);
    clip(&mut shown);
    shown
}

/// What `extractor` finds in one transcript, strict and lenient (the latter
/// only when it differs), as replay extracts it; and, where the shared
/// missing-closer rule (a block left open) changes the strict reading, the
/// format's own reading before it (`raw`, the raw extractor of the same
/// name, for the family formats: [`toolgate_formats::testing`]).
fn extracted(
    extractor: &dyn Extractor,
    raw: Option<&dyn Extractor>,
    t: &toolgate_core::Transcript,
) -> Value {
    let types = ParamTypes::from_transcript(t);
    let input = Input::from_transcript(t, &types);
    let run = |e: &dyn Extractor, strictness| toolgate_formats::extract(e, &input, strictness);
    let strict = run(extractor, Strictness::Strict);
    let lenient = run(extractor, Strictness::Lenient);
    let before_rules = raw.map(|raw| run(raw, Strictness::Strict));
    let list = |found: &[Candidate]| Value::Array(found.iter().map(candidate).collect());
    let mut map = Map::new();
    map.insert("strict".into(), list(&strict));
    let lenient = if lenient == strict {
        json!("same as strict")
    } else {
        list(&lenient)
    };
    map.insert("lenient".into(), lenient);
    if let Some(before) = before_rules.filter(|b| *b != strict) {
        map.insert("strict_before_rules".into(), list(&before));
    }
    Value::Object(map)
}

/// The raw extractors (without the shared rules) of the family formats,
/// the ones the missing-closer rule reads blocks of.
fn raw_extractors() -> Vec<Box<dyn Extractor>> {
    let mut raw = toolgate_formats::testing::tagged();
    raw.extend(toolgate_formats::testing::jsonlike());
    raw
}

/// The snapshot of one fixture file: `{mode, …}` for `.json`,
/// `{mode, transcripts: [{line, …}…]}` for `.jsonl`.
fn fixture_snapshot(extractor: &dyn Extractor, raw: Option<&dyn Extractor>, path: &Path) -> Value {
    let mut map = Map::new();
    map.insert("mode".into(), json!(extractor.name()));
    let mut entries = Vec::new();
    for loaded in load_file(path) {
        let t = loaded.unwrap_or_else(|e| panic!("fixture {}: {}", path.display(), e.reason));
        let mut entry = Map::new();
        if let Some(line) = t.line {
            entry.insert("line".into(), json!(line));
        }
        if let Value::Object(rest) = extracted(extractor, raw, &t) {
            entry.extend(rest);
        }
        entries.push(Value::Object(entry));
    }
    if path.extension().is_some_and(|e| e == "jsonl") {
        map.insert("transcripts".into(), Value::Array(entries));
    } else {
        assert_eq!(entries.len(), 1, "{}", path.display());
        if let Some(Value::Object(one)) = entries.pop() {
            map.extend(one);
        }
    }
    Value::Object(map)
}

/// The name of the folder `path` (a fixture file) is in.
fn folder(path: &Path) -> String {
    let dir = path.parent().and_then(Path::file_name).unwrap();
    dir.to_string_lossy().into_owned()
}

#[test]
fn every_format_over_its_fixtures() {
    let formats = toolgate_formats::builtin();
    let raw = raw_extractors();
    insta::glob!("../../../transcripts", "*/*.{json,jsonl}", |path| {
        let mode = folder(path);
        if NOT_FORMATS.contains(&mode.as_str()) {
            return;
        }
        let extractor = formats
            .iter()
            .find(|e| e.name() == mode)
            .unwrap_or_else(|| panic!("transcripts/{mode}/ names no built-in format"));
        let raw = raw.iter().find(|e| e.name() == mode).map(|e| &**e);
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(format!("snapshots/{mode}"));
        settings.set_prepend_module_to_snapshot(false);
        settings.remove_snapshot_suffix();
        settings.set_omit_expression(true);
        settings.set_sort_maps(false);
        let snapshot = fixture_snapshot(&**extractor, raw, path);
        settings.bind(|| insta::assert_yaml_snapshot!(file, snapshot));
    });
}

/// The fixture folders: every built-in format has one with at least one
/// transcript, and every folder but [`NOT_FORMATS`] is a format's.
#[test]
fn every_format_has_a_fixture_folder() {
    let formats = toolgate_formats::builtin();
    let modes: BTreeSet<&str> = formats.iter().map(|e| e.name()).collect();
    let mut folders = BTreeSet::new();
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            folders.insert(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    for &mode in &modes {
        assert!(
            folders.contains(mode),
            "no fixture folder transcripts/{mode}/"
        );
        let (files, errors) = toolgate_core::load::collect_files(&[corpus().join(mode)]);
        assert!(
            errors.is_empty() && !files.is_empty(),
            "transcripts/{mode}/ is empty"
        );
    }
    for dir in &folders {
        assert!(
            modes.contains(dir.as_str()) || NOT_FORMATS.contains(&dir.as_str()),
            "transcripts/{dir}/ names no built-in format"
        );
    }
}

/// A fixture snapshot whose transcript is gone means a fixture was deleted
/// without its snapshot.
#[test]
fn every_fixture_snapshot_has_its_fixture() {
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut orphans = Vec::new();
    let mut seen = 0;
    for dir in std::fs::read_dir(&snapshots).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let mode = dir.file_name().unwrap().to_string_lossy().into_owned();
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let Some(fixture) = name.strip_suffix(".snap") else {
                continue;
            };
            seen += 1;
            if !corpus().join(&mode).join(fixture).is_file() {
                orphans.push(format!("{mode}/{name}"));
            }
        }
    }
    assert!(
        orphans.is_empty(),
        "snapshots without a fixture: {orphans:?}"
    );
    assert!(seen > 0, "no fixture snapshots under tests/snapshots/");
}
