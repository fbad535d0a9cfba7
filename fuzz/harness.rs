//! The fuzz targets' bodies, shared by `fuzz/fuzz_targets/*.rs` (cargo-fuzz,
//! nightly) and `tests/fuzz_regressions.rs` (stable `cargo test`, which
//! replays every saved input under `fuzz/regressions/<target>/`).
//!
//! Each function takes arbitrary bytes and panics only when an invariant is
//! broken; hangs and memory growth are caught by libFuzzer's `-timeout` and
//! `-rss_limit_mb` (and by the regression test's time limit).
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::Path;
use std::sync::OnceLock;
use toolgate_core::{Call, Decision, ToolDef, jsontext, load};
use toolgate_formats::{Catalog, Extractor, Input, ParamTypes, builtin};
use toolgate_validator::{Engine, Profile, Toolset, pipeline};

/// The targets, by directory name under `fuzz/regressions/`.
pub const TARGETS: [&str; 4] = ["replay", "pipeline", "load", "patterns"];

/// Runs target `name` on `data`.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "replay" => replay(data),
        "pipeline" => fail_closed(data),
        "load" => load_transcript(data),
        "patterns" => patterns_file(data),
        other => panic!("unknown fuzz target `{other}`"),
    }
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(Profile::default()))
}

/// The profiles `replay` compares the batch fast path under: the default,
/// and one that allows repairs (lenient extraction kept for the profile).
fn fast_path_profiles() -> &'static [Profile; 2] {
    static PROFILES: OnceLock<[Profile; 2]> = OnceLock::new();
    PROFILES.get_or_init(|| {
        let mut lenient = Profile::reading("hermes");
        lenient.allow_repairs = true;
        [Profile::default(), lenient]
    })
}

/// `replay`: the bytes as a transcript file (`.json`, then `.jsonl`), every
/// transcript replayed through every mode, strict and lenient, and the
/// default profile; the batch fast path (prefilter, shared empty labels,
/// lenient extraction only where it can differ: issue 11) gives what the
/// full replay gives.
pub fn replay(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for path in ["fuzz.json", "fuzz.jsonl"] {
        for t in load::load_str(Path::new(path), text).into_iter().flatten() {
            for profile in fast_path_profiles() {
                assert_eq!(
                    engine().outcome_as(&t, profile),
                    engine().outcome_plain(&t, profile),
                    "{path}: the fast path differs from the full replay under {}",
                    profile.name
                );
            }
            let r = engine().replay(&t);
            // Every live candidate a mode executes passed its own checks.
            if let Decision::Execute { calls } = &r.profile.decision {
                let toolset = Toolset::new(&t.tools);
                for call in calls {
                    assert_eq!(toolset.check(call), Ok(()), "{path}: executed {call:?}");
                }
            }
        }
    }
}

/// The tools of the `pipeline` target: closed schemas the independent
/// check below re-implements by hand.
pub fn pipeline_tools() -> Vec<ToolDef> {
    let def = |name: &str, parameters: Option<Value>| ToolDef {
        name: name.into(),
        description: None,
        parameters,
    };
    vec![
        def(
            "get_weather",
            Some(json!({"type": "object", "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"enum": ["c", "f"]}},
                "required": ["city"], "additionalProperties": false})),
        ),
        def(
            "search_web",
            Some(
                json!({"type": "object", "properties": {"query": {"type": "string"}},
                "required": ["query"]}),
            ),
        ),
        def("now", None),
    ]
}

/// The fail-closed invariant checked without the validator: `call` names a
/// tool of [`pipeline_tools`] and its arguments satisfy that tool's closed
/// schema exactly.
pub fn independently_valid(call: &Call) -> Result<(), String> {
    let args = &call.arguments;
    let only = |allowed: &[&str]| match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("undeclared `{k}`")),
        None => Ok(()),
    };
    match call.name.as_str() {
        "get_weather" => {
            only(&["city", "days", "unit"])?;
            match args.get("city") {
                Some(Value::String(s)) if s.chars().count() >= 1 => {}
                other => return Err(format!("city {other:?}")),
            }
            if let Some(days) = args.get("days") {
                let ok = days
                    .as_i64()
                    .map(|d| (1..=14).contains(&d))
                    .or_else(|| {
                        days.as_f64()
                            .map(|d| d.fract() == 0.0 && (1.0..=14.0).contains(&d))
                    })
                    .unwrap_or(false);
                if !ok {
                    return Err(format!("days {days}"));
                }
            }
            match args.get("unit") {
                None => Ok(()),
                Some(Value::String(u)) if u == "c" || u == "f" => Ok(()),
                Some(other) => Err(format!("unit {other}")),
            }
        }
        "search_web" => {
            only(&["query"])?;
            match args.get("query") {
                Some(Value::String(_)) => Ok(()),
                other => Err(format!("query {other:?}")),
            }
        }
        "now" => only(&[]),
        other => Err(format!("`{other}` is not a tool")),
    }
}

fn pipeline_profiles() -> &'static [Profile] {
    static PROFILES: OnceLock<Vec<Profile>> = OnceLock::new();
    PROFILES.get_or_init(|| {
        let mut out = vec![Profile::default()];
        for name in Profile::builtin_names() {
            out.extend(Profile::builtin(name));
        }
        for e in builtin() {
            out.push(Profile {
                name: format!("primary-{}", e.name()),
                primary: e.name().to_string(),
                fallbacks: vec!["json".into(), "bracket".into(), "hermes".into()],
                fallbacks_enabled: true,
                ..Profile::default()
            });
        }
        out
    })
}

struct Fixed {
    extractors: Vec<Box<dyn Extractor>>,
    tools: Vec<ToolDef>,
    toolset: Toolset,
    types: ParamTypes,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let tools = pipeline_tools();
        Fixed {
            extractors: builtin(),
            toolset: Toolset::new(&tools),
            types: ParamTypes::from_tools(&tools),
            tools,
        }
    })
}

/// `pipeline`: byte 0 picks the profile (every built-in profile, and every
/// extractor as a primary with fallbacks), bit 0 of byte 1 allows repairs;
/// the rest is the output. An `execute` must carry only calls that pass
/// [`independently_valid`].
pub fn fail_closed(data: &[u8]) {
    let [pick, flags, rest @ ..] = data else {
        return;
    };
    let Ok(output) = std::str::from_utf8(rest) else {
        return;
    };
    let f = fixed();
    let profiles = pipeline_profiles();
    let mut profile = profiles[usize::from(*pick) % profiles.len()].clone();
    profile.allow_repairs = flags & 1 == 1;
    let mut input = Input::new(output);
    input.param_types = Some(&f.types);
    let result = pipeline::run(&profile, &f.extractors, &input, &f.toolset, None);
    if let Decision::Execute { calls } = &result.decision {
        assert!(!calls.is_empty(), "{}: execute without calls", profile.name);
        for call in calls {
            if let Err(why) = independently_valid(call) {
                panic!(
                    "{}: executed {call:?} ({why}) from {output:?} with tools {:?}",
                    profile.name,
                    f.tools.len()
                );
            }
        }
    }
}

/// `load`: transcript loading of any text as `.json` and `.jsonl`, plus the
/// byte-preserving `labels` edit on any text that is a JSON object.
pub fn load_transcript(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for path in ["fuzz.json", "fuzz.jsonl"] {
        for loaded in load::load_str(Path::new(path), text) {
            match loaded {
                Ok(t) => {
                    let _ = t.location();
                }
                Err(e) => assert!(!e.reason.is_empty()),
            }
        }
    }
    same_whatever_came_before(text);
    // The edit keeps every other member byte for byte, in order, and leaves
    // exactly one `labels` member (duplicates included: a JSON reader keeps
    // the last, so the last is replaced and the earlier ones are removed), so
    // that what was written is what is read back.
    if let Ok(Value::Object(before)) = serde_json::from_str::<Value>(text) {
        let edited = jsontext::set_member(text, "labels", "{\"tag\": \"pass\"}").unwrap();
        let after: Value = serde_json::from_str(&edited)
            .unwrap_or_else(|e| panic!("the edit of {text:?} is not JSON ({e}): {edited:?}"));
        assert_eq!(after["labels"], json!({"tag": "pass"}), "{text:?}");
        for (k, v) in &before {
            if k != "labels" {
                assert_eq!(&after[k.as_str()], v, "member `{k}` changed in {text:?}");
            }
        }
        let others = |t: &str| -> Vec<String> {
            jsontext::members(t)
                .unwrap()
                .0
                .into_iter()
                .filter(|m| m.key != "labels")
                .map(|m| t[m.key_start..m.value.end].to_string())
                .collect()
        };
        assert_eq!(
            others(text),
            others(&edited),
            "other members' bytes in {text:?}"
        );
        let labels = jsontext::members(&edited)
            .unwrap()
            .0
            .iter()
            .filter(|m| m.key == "labels")
            .count();
        assert_eq!(
            labels, 1,
            "`labels` members after the edit of {text:?}: {edited:?}"
        );
    }
}

/// A line reads the same whatever lines came before it. `parse_transcript`
/// shares a tool list with the previous line this thread read when its
/// bytes are the same, cutting them out of the line before parsing it
/// (issue 11); read in order, every line must give what it gives after a
/// line with another tool list, where nothing can be shared.
fn same_whatever_came_before(text: &str) {
    // A tool list long enough to be shared (over 64 bytes) that no line
    // of `text` is likely to carry; equal ones would only be shared again.
    const OTHER: &str = r#"{"output": "", "tools": [{"type": "function", "function": {"name": "fuzz_other_list_0123456789", "parameters": {}}}]}"#;
    let path = Path::new("fuzz.jsonl");
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let in_order: Vec<load::Loaded> = lines
        .iter()
        .map(|&(i, l)| load::parse_transcript(l, path, Some(i + 1), "fuzz"))
        .collect();
    for (&(i, line), read) in lines.iter().zip(&in_order) {
        let _ = load::parse_transcript(OTHER, path, None, "other");
        let alone = load::parse_transcript(line, path, Some(i + 1), "fuzz");
        assert_eq!(
            &alone,
            read,
            "line {} of {text:?} reads differently after the lines before it",
            i + 1
        );
    }
}

/// Outputs every loaded pattern is run on.
const PATTERN_OUTPUTS: [&str; 4] = [
    "[EXECUTE:bash:ls -la /tmp]",
    "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>",
    "<think>[EXECUTE:bash:pwd]</think> ```json\n{\"tool\": \"x\"}\n```",
    "<function=f><parameter=a>1</parameter></function>",
];

/// `patterns`: any text as a patterns file; every pattern it yields is run,
/// strict and lenient, on a few outputs and on its own example.
pub fn patterns_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut catalog = Catalog::new();
    if catalog.add_patterns(text).is_err() {
        return;
    }
    for mode in catalog.into_custom() {
        let example = mode.example().to_string();
        for out in PATTERN_OUTPUTS.iter().copied().chain([example.as_str()]) {
            for s in [
                toolgate_formats::Strictness::Strict,
                toolgate_formats::Strictness::Lenient,
            ] {
                for c in mode.extract(&Input::new(out), s) {
                    assert!(c.span.end <= out.len() && c.span.start <= c.span.end);
                }
            }
        }
    }
}
