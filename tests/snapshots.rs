//! The bundled corpus, locked.
//!
//! `corpus_snapshots` replays every transcript under `transcripts/` through
//! every mode (strict and lenient) and the default profile, and locks the
//! result as one YAML snapshot per file under `snapshots/`, mirroring the
//! corpus tree (`transcripts/hermes/x.json` → `snapshots/hermes/x.json.snap`).
//! A PR that changes a label changes a snapshot line, and is reviewed with
//! `cargo insta review`; CI runs with `INSTA_UPDATE=no`.
//!
//! Per transcript: the strict label of every mode (engine order), the lenient
//! labels where lenient replay changed something (with the repairs used), and
//! the default profile's parse mode, decision, gate, label and normalized
//! calls. Each snapshot also lists where the computed labels disagree with the
//! labels the corpus author intended (the transcript's `labels`, and
//! `profile_expect` for the default profile): a reviewer sees at a glance
//! whether a change moves a label towards or away from the intent.
//!
//! `corpus_coverage` checks the corpus files themselves, without the engine,
//! so that the corpus cannot silently shrink: every label intended at least
//! three times across at least two modes, a `pass` case for every built-in
//! mode, and every gate of the default profile exercised.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use toolgate_core::Label;
use toolgate_core::load::load_str;
use toolgate_validator::{Engine, ModeResult, Profile, Replay};

/// The repository root (the root package is the `toolgate` binary).
fn repo_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    root.canonicalize().unwrap_or(root)
}

/// `path` relative to the repository root, with `/` separators.
fn relative(path: &Path) -> String {
    let root = repo_root();
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let rel = path.strip_prefix(&root).unwrap_or(&path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// `mode: label` for every mode, in engine order.
fn strict_map(results: &[ModeResult]) -> Value {
    let map: Map<String, Value> = results
        .iter()
        .map(|r| (r.mode.clone(), json!(r.label.as_str())))
        .collect();
    Value::Object(map)
}

/// The lenient labels, only for the modes where lenient replay changed
/// something (a different label, or repairs used), each with its repairs:
/// the strict map already shows every other mode.
fn lenient_map(strict: &[ModeResult], lenient: &[ModeResult]) -> Value {
    let mut map = Map::new();
    for result in lenient {
        let mut repairs: Vec<&str> = Vec::new();
        for candidate in &result.candidates {
            for repair in &candidate.repairs {
                if !repairs.contains(&repair.as_str()) {
                    repairs.push(repair.as_str());
                }
            }
        }
        let strict_label = strict
            .iter()
            .find(|s| s.mode == result.mode)
            .map(|s| s.label);
        if repairs.is_empty() && strict_label == Some(result.label) {
            continue;
        }
        let text = if repairs.is_empty() {
            result.label.as_str().to_string()
        } else {
            format!("{} (repairs: {})", result.label, repairs.join(", "))
        };
        map.insert(result.mode.clone(), Value::String(text));
    }
    if map.is_empty() {
        json!("same as strict")
    } else {
        Value::Object(map)
    }
}

/// The default profile's outcome: decision, gate, label and normalized calls.
fn profile_summary(replay: &Replay) -> Value {
    let p = &replay.profile;
    let mut map = Map::new();
    map.insert(
        "parse_mode".into(),
        json!(p.parse_mode.as_deref().unwrap_or("none")),
    );
    map.insert("fallback_used".into(), json!(p.fallback_used));
    map.insert("candidates".into(), json!(p.candidates.len()));
    map.insert("decision".into(), json!(p.decision.kind()));
    map.insert("gate".into(), json!(p.decision.gate().map(|g| g.as_str())));
    map.insert("label".into(), json!(p.label.as_str()));
    let calls: Vec<Value> = p
        .candidates
        .iter()
        .filter_map(|c| c.call())
        .map(|c| clip_strings(c.to_json()))
        .collect();
    if !calls.is_empty() {
        map.insert("calls".into(), Value::Array(calls));
    }
    Value::Object(map)
}

/// Strings longer than this are shown clipped, with their length, so that
/// the size-gate cases keep the snapshots readable.
const CLIP: usize = 160;

/// `value` with every string longer than [`CLIP`] bytes clipped to its first
/// 80 characters plus `… (N bytes)`.
fn clip_strings(value: Value) -> Value {
    match value {
        Value::String(s) if s.len() > CLIP => {
            let head: String = s.chars().take(80).collect();
            Value::String(format!("{head}… ({} bytes)", s.len()))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(clip_strings).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, clip_strings(v))).collect())
        }
        other => other,
    }
}

/// Where the computed results differ from the intended ones.
fn disagreements(raw: &Map<String, Value>, replay: &Replay) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(Value::Object(intended)) = raw.get("labels") {
        for (mode, want) in intended {
            let got = replay
                .strict_mode(mode)
                .map_or("(mode not run)", |m| m.label.as_str());
            if want.as_str() != Some(got) {
                out.insert(
                    mode.clone(),
                    json!(format!(
                        "intended {}, got {got}",
                        want.as_str().unwrap_or("?")
                    )),
                );
            }
        }
    }
    if let Some(Value::Object(want)) = raw.get("profile_expect") {
        let got = profile_summary(replay);
        for (key, want) in want {
            let got = got.get(key).cloned().unwrap_or(Value::Null);
            if *want != got {
                out.insert(
                    format!("profile.{key}"),
                    json!(format!("intended {want}, got {got}")),
                );
            }
        }
    }
    out
}

/// The snapshot entry of one transcript (or of a line that did not load).
fn entry(engine: &Engine, loaded: &toolgate_core::Loaded) -> Value {
    let t = match loaded {
        Ok(t) => t,
        Err(e) => {
            let mut map = Map::new();
            if let Some(line) = e.line {
                map.insert("line".into(), json!(line));
            }
            map.insert("error".into(), json!(e.reason));
            return Value::Object(map);
        }
    };
    let replay = engine.replay(t);
    let mut map = Map::new();
    if let Some(line) = t.line {
        map.insert("line".into(), json!(line));
    }
    map.insert("id".into(), json!(t.id));
    map.insert("strict".into(), strict_map(&replay.strict));
    map.insert(
        "lenient".into(),
        lenient_map(&replay.strict, &replay.lenient),
    );
    map.insert("profile".into(), profile_summary(&replay));
    if !replay.findings.is_empty() {
        let findings: Vec<Value> = replay
            .findings
            .iter()
            .map(|f| json!(format!("{}: {}", f.kind, f.detail)))
            .collect();
        map.insert("findings".into(), Value::Array(findings));
    }
    let diff = disagreements(&t.raw, &replay);
    if !diff.is_empty() {
        map.insert("disagreements".into(), Value::Object(diff));
    }
    Value::Object(map)
}

/// One snapshot per corpus file: `{path, …entry}` for `.json`,
/// `{path, transcripts: [entry…]}` for `.jsonl`.
fn file_snapshot(engine: &Engine, path: &Path, rel: &str) -> Value {
    let mut map = Map::new();
    map.insert("path".into(), json!(rel));
    let text = match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                map.insert(
                    "error".into(),
                    json!(format!("not valid UTF-8 (first bad byte at offset {at})")),
                );
                return Value::Object(map);
            }
        },
        Err(e) => {
            map.insert("error".into(), json!(e.to_string()));
            return Value::Object(map);
        }
    };
    let loaded = load_str(Path::new(rel), &text);
    if rel.ends_with(".jsonl") {
        let entries: Vec<Value> = loaded.iter().map(|l| entry(engine, l)).collect();
        map.insert("transcripts".into(), Value::Array(entries));
    } else if let Some(Value::Object(one)) = loaded.first().map(|l| entry(engine, l)) {
        map.extend(one);
    }
    Value::Object(map)
}

#[test]
fn corpus_snapshots() {
    let engine = Engine::new(Profile::default());
    insta::glob!("../transcripts", "**/*.{json,jsonl}", |path| {
        let rel = relative(path);
        let under = rel.strip_prefix("transcripts/").unwrap_or(&rel);
        let (dir, file) = match under.rsplit_once('/') {
            Some((dir, file)) => (format!("../snapshots/{dir}"), file.to_string()),
            None => ("../snapshots".to_string(), under.to_string()),
        };
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(dir);
        settings.set_prepend_module_to_snapshot(false);
        settings.remove_snapshot_suffix();
        settings.set_omit_expression(true);
        settings.set_sort_maps(false);
        let snapshot = file_snapshot(&engine, path, &rel);
        settings.bind(|| insta::assert_yaml_snapshot!(file, snapshot));
    });
}

/// Every transcript object in the corpus, with its file, read as plain JSON.
fn corpus_objects() -> Vec<(String, Map<String, Value>)> {
    let (files, errors) = toolgate_core::load::collect_files(&[repo_root().join("transcripts")]);
    assert!(errors.is_empty(), "unreadable corpus paths: {errors:?}");
    let mut out = Vec::new();
    for file in files {
        let rel = relative(&file);
        let text = std::fs::read_to_string(&file).unwrap();
        let objects: Vec<&str> = if rel.ends_with(".jsonl") {
            text.lines().filter(|l| !l.trim().is_empty()).collect()
        } else {
            vec![text.as_str()]
        };
        for object in objects {
            match serde_json::from_str(object) {
                Ok(Value::Object(map)) => out.push((rel.clone(), map)),
                other => panic!("{rel}: not a JSON object: {other:?}"),
            }
        }
    }
    out
}

/// The modes of SPEC §3; the built-in registry may add more, never fewer.
const SPEC_MODES: [&str; 14] = [
    "tag", "json", "bracket", "marker", "fence", "hermes", "qwen_xml", "mistral", "llama3",
    "harmony", "deepseek", "kimi", "glm", "native",
];

#[test]
fn corpus_coverage() {
    let objects = corpus_objects();
    assert!(
        objects.len() >= 100,
        "the corpus shrank to {} transcripts",
        objects.len()
    );

    let mut modes: BTreeSet<String> = SPEC_MODES.iter().map(|m| m.to_string()).collect();
    modes.extend(
        toolgate_formats::builtin()
            .iter()
            .map(|e| e.name().to_string()),
    );

    // label -> (count, modes it is intended for)
    let mut intended: BTreeMap<Label, (usize, BTreeSet<String>)> = BTreeMap::new();
    let mut gates: BTreeSet<String> = BTreeSet::new();
    let mut executed_via: BTreeSet<String> = BTreeSet::new();
    for (rel, t) in &objects {
        if let Some(labels) = t.get("labels") {
            let labels = labels
                .as_object()
                .unwrap_or_else(|| panic!("{rel}: `labels` is not an object"));
            for (mode, label) in labels {
                let label: Label = label
                    .as_str()
                    .and_then(|l| l.parse().ok())
                    .unwrap_or_else(|| panic!("{rel}: `{label}` is not a label"));
                let slot = intended.entry(label).or_default();
                slot.0 += 1;
                slot.1.insert(mode.clone());
            }
        }
        if let Some(p) = t.get("profile_expect") {
            if let Some(gate) = p.get("gate").and_then(Value::as_str) {
                gates.insert(gate.to_string());
            }
            if p.get("decision").and_then(Value::as_str) == Some("execute") {
                executed_via.insert(p["parse_mode"].as_str().unwrap_or("?").to_string());
            }
        }
    }

    for label in Label::ALL {
        let (count, in_modes) = intended.get(&label).cloned().unwrap_or_default();
        assert!(
            count >= 3 && in_modes.len() >= 2,
            "`{label}` is intended {count} times in modes {in_modes:?}; need ≥3 across ≥2 modes"
        );
    }
    let pass_modes = intended
        .get(&Label::Pass)
        .map(|p| p.1.clone())
        .unwrap_or_default();
    let missing: Vec<&String> = modes.iter().filter(|m| !pass_modes.contains(*m)).collect();
    assert!(
        missing.is_empty(),
        "modes without an intended `pass` case: {missing:?}"
    );

    let all_gates: BTreeSet<String> = toolgate_core::Gate::ALL
        .iter()
        .map(|g| g.as_str().to_string())
        .collect();
    assert_eq!(
        gates, all_gates,
        "default-profile gates exercised by transcripts/profile/"
    );
    let defaults = Profile::default();
    let mut want_exec: BTreeSet<String> = defaults.fallbacks.iter().cloned().collect();
    want_exec.insert(defaults.primary.clone());
    assert!(
        want_exec.is_subset(&executed_via),
        "execute cases through {executed_via:?}, want the primary and every fallback: {want_exec:?}"
    );
}

/// A corpus file that cannot be read is snapshotted as its error, and the
/// good lines of a `.jsonl` file are still replayed.
#[test]
fn unreadable_files_snapshot_their_error() {
    let engine = Engine::new(Profile::default());
    let dir = tempfile::tempdir().unwrap();
    let bad_json = dir.path().join("bad.json");
    std::fs::write(&bad_json, "{\"output\": ").unwrap();
    let snap = file_snapshot(&engine, &bad_json, "transcripts/x/bad.json");
    assert_eq!(snap["path"], "transcripts/x/bad.json");
    assert!(
        snap["error"]
            .as_str()
            .unwrap()
            .starts_with("not valid JSON: EOF while parsing"),
        "{snap}"
    );

    let not_utf8 = dir.path().join("latin1.json");
    std::fs::write(&not_utf8, b"{\"output\": \"caf\xe9\"}").unwrap();
    let snap = file_snapshot(&engine, &not_utf8, "transcripts/x/latin1.json");
    assert_eq!(
        snap["error"],
        "not valid UTF-8 (first bad byte at offset 15)"
    );

    let mixed = dir.path().join("mixed.jsonl");
    std::fs::write(
        &mixed,
        "{\"output\": \"hi\", \"tools\": [], \"expect\": {\"calls\": []}}\n{\"tools\": []}\n",
    )
    .unwrap();
    let snap = file_snapshot(&engine, &mixed, "transcripts/x/mixed.jsonl");
    let entries = snap["transcripts"].as_array().unwrap();
    assert_eq!(entries[0]["id"], "mixed:1");
    assert_eq!(entries[0]["strict"]["tag"], "pass");
    assert_eq!(entries[0]["profile"]["decision"], "no_call");
    assert_eq!(entries[1]["line"], 2);
    assert_eq!(entries[1]["error"], "missing `output` (and no `response`)");
}

/// A corpus snapshot whose transcript file is gone means a transcript was
/// deleted without its snapshot: the corpus shrank silently.
#[test]
fn every_corpus_snapshot_has_its_transcript() {
    let root = repo_root();
    let mut stack = vec![root.join("snapshots")];
    let mut orphans = Vec::new();
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = relative(&path);
            let Some(under) = rel
                .strip_prefix("snapshots/")
                .and_then(|r| r.strip_suffix(".snap"))
            else {
                continue;
            };
            if !(under.ends_with(".json") || under.ends_with(".jsonl")) {
                continue;
            }
            seen += 1;
            if !root.join("transcripts").join(under).is_file() {
                orphans.push(rel);
            }
        }
    }
    orphans.sort();
    assert!(
        orphans.is_empty(),
        "snapshots without a transcript (delete them, or restore the transcripts): {orphans:?}"
    );
    assert!(seen > 0, "no corpus snapshots found under snapshots/");
}
