//! Issue 7: without `--profile`, every model is judged in its own wire
//! format (`auto`), and every matrix cell names the profile and why.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn weather(model: &str, sample: usize, output: &str) -> Value {
    json!({
        "id": format!("{model}-{sample}"),
        "model": model,
        "task": "weather",
        "sample": sample,
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"], "additionalProperties": false}}}],
        "output": output,
        "expect": {"calls": [{"name": "get_weather", "arguments": {"city": "Gent"}}]},
    })
}

/// Six models, three samples each: five answer correctly, each in its own
/// format (one under a model name that says nothing about its format), and
/// one answers in prose.
const MODELS: [(&str, &str); 6] = [
    (
        "hermes-3-llama-3.1-8b",
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Gent"}}</tool_call>"#,
    ),
    (
        "mistral-small-3.1-24b-instruct",
        r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Gent"}"#,
    ),
    (
        "apertus-8b-instruct-2509",
        r#"<|tools_prefix|>[{"get_weather": {"city": "Gent"}}]<|tools_suffix|>"#,
    ),
    (
        "gemma-4-12b-it",
        r#"<|tool_call>call:get_weather{city:<|"|>Gent<|"|>}<tool_call|>"#,
    ),
    (
        "house-model-7b",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Gent</arg_value>\n</tool_call>",
    ),
    ("chatty-1b", "It is probably sunny in Gent today."),
];

fn write_corpus(dir: &Path) {
    for (model, output) in MODELS {
        for sample in 0..3 {
            let t = weather(model, sample, output);
            fs::write(dir.join(format!("{model}-{sample}.json")), t.to_string()).unwrap();
        }
    }
}

#[test]
fn matrix_judges_each_model_by_its_own_profile() {
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path());
    let out = toolgate(
        dir.path(),
        &["matrix", ".", "--by", "model", "--format", "json"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The matrix JSON is a document: `schema_version`, `by`, `cells`, `routing`.
    let cells = doc["cells"].clone();
    let cells = cells.as_array().unwrap();
    assert_eq!(cells.len(), 6);
    let got: Vec<(String, f64, String, String, String)> = cells
        .iter()
        .map(|c| {
            (
                c["keys"]["model"].as_str().unwrap().to_string(),
                c["rate"].as_f64().unwrap(),
                c["profile"]["name"].as_str().unwrap().to_string(),
                c["profile"]["source"].as_str().unwrap().to_string(),
                c["profile"]["source_detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let row = |m: &str, rate: f64, p: &str, s: &str, d: &str| {
        (
            m.to_string(),
            rate,
            p.to_string(),
            s.to_string(),
            d.to_string(),
        )
    };
    assert_eq!(
        got,
        [
            row(
                "apertus-8b-instruct-2509",
                1.0,
                "apertus",
                "by name",
                "by name (apertus)"
            ),
            row("chatty-1b", 0.0, "default", "default", "default"),
            row(
                "gemma-4-12b-it",
                1.0,
                "gemma",
                "by name",
                "by name (gemma-4)"
            ),
            row(
                "hermes-3-llama-3.1-8b",
                1.0,
                "hermes",
                "by name",
                "by name (hermes)"
            ),
            row(
                "house-model-7b",
                1.0,
                "glm",
                "detected",
                "detected from 3 transcripts"
            ),
            row(
                "mistral-small-3.1-24b-instruct",
                1.0,
                "mistral",
                "by name",
                "by name (mistral)"
            ),
        ]
    );
    let prose = cells
        .iter()
        .find(|c| c["keys"]["model"] == "chatty-1b")
        .unwrap();
    assert_eq!(prose["labels"], json!({"no_call": 3}));

    // `--profile` judges every model by one profile, and says so.
    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            ".",
            "--by",
            "model",
            "--format",
            "json",
            "--profile",
            "glm",
        ],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The matrix JSON is a document: `schema_version`, `by`, `cells`, `routing`.
    let cells = doc["cells"].clone();
    for c in cells.as_array().unwrap() {
        assert_eq!(
            c["profile"],
            json!({"name": "glm", "source": "given", "source_detail": "--profile"})
        );
        let want = if c["keys"]["model"] == "house-model-7b" {
            1.0
        } else {
            0.0
        };
        assert_eq!(c["rate"], want, "{c}");
    }
}

/// The `[models]` table of `toolgate.toml` comes first, in file order.
#[test]
fn configured_models_table_wins_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path());
    fs::write(
        dir.path().join("toolgate.toml"),
        "[models]\n\"house-*\" = \"hermes\"\n\"*\" = \"apertus\"\n",
    )
    .unwrap();
    let out = toolgate(dir.path(), &["label", ".", "--format", "jsonl"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let profile_of = |model: &str| {
        let r = records.iter().find(|r| r["model"] == model).unwrap();
        (
            r["profile"]["name"].as_str().unwrap().to_string(),
            r["profile"]["source_detail"].as_str().unwrap().to_string(),
            r["profile"]["label"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        profile_of("house-model-7b"),
        (
            "hermes".into(),
            "configured (house-*)".into(),
            "no_call".into()
        )
    );
    assert_eq!(
        profile_of("gemma-4-12b-it"),
        ("apertus".into(), "configured (*)".into(), "no_call".into())
    );
    assert_eq!(
        profile_of("apertus-8b-instruct-2509"),
        ("apertus".into(), "configured (*)".into(), "pass".into())
    );

    // A profile the table names must exist.
    fs::write(
        dir.path().join("toolgate.toml"),
        "[models]\n\"x\" = \"nope\"\n",
    )
    .unwrap();
    let out = toolgate(dir.path(), &["matrix", "."]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown profile `nope`"), "{err}");
}

/// `--by mode`: per model and mode, the mode's own label and how many labels
/// change between strict and lenient; modes that find nothing are left out.
#[test]
fn matrix_by_mode_is_parser_sensitivity_per_model() {
    let dir = tempfile::tempdir().unwrap();
    let strict = weather(
        "m",
        0,
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Gent"}}</tool_call>"#,
    );
    let repaired = weather(
        "m",
        1,
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Gent",}}</tool_call>"#,
    );
    fs::write(dir.path().join("a.json"), strict.to_string()).unwrap();
    fs::write(dir.path().join("b.json"), repaired.to_string()).unwrap();
    let out = toolgate(
        dir.path(),
        &["matrix", ".", "--by", "mode", "--format", "json"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The matrix JSON is a document: `schema_version`, `by`, `cells`, `routing`.
    let cells = doc["cells"].clone();
    let hermes = cells
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["keys"] == json!({"model": "m", "mode": "hermes"}))
        .unwrap();
    assert_eq!(hermes["n"], 2);
    assert_eq!(hermes["passes"], 1);
    assert_eq!(hermes["labels"], json!({"malformed_json": 1, "pass": 1}));
    assert_eq!(hermes["lenient_changed"], 1);
    assert!(
        cells
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["keys"]["mode"] != "tag"),
        "tag finds nothing here: {cells}"
    );
}

/// Issue 7, on the bundled corpus: `detect` chooses the best mode as `auto`
/// does (never a mode that found nothing: `glm-4.5-air` and
/// `nemotron-nano-9b-v2` got `tag`), and recommends a profile for every model.
#[test]
fn detect_on_the_bundled_corpus_recommends_a_profile_for_every_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = toolgate(root, &["detect", "--format", "json", "transcripts"]);
    assert_eq!(out.status.code(), Some(0));
    let groups: Value = serde_json::from_slice(&out.stdout).unwrap();
    let groups = groups.as_array().unwrap();
    let best = |model: &str| {
        let g = groups.iter().find(|g| g["model"] == model).unwrap();
        (g["best_mode"].clone(), g["recommended_profile"].clone())
    };
    assert_eq!(best("glm-4.5-air"), (json!("glm"), json!("glm")));
    assert_eq!(
        best("nemotron-nano-9b-v2"),
        (json!("nemotron"), json!("nemotron"))
    );
    for g in groups {
        assert!(g["recommended_profile"].is_string(), "{g}");
        if let Some(mode) = g["best_mode"].as_str() {
            assert!(g["modes"][mode]["found"].as_u64().unwrap() > 0, "{g}");
        }
    }
}

/// Issue 7, on the bundled corpus: `matrix --by model` rates no model 0%
/// whose outputs pass in some mode (it rated every apertus, deepseek-v3.2,
/// functionary, gemma-4 and lfm2 model 0% under the default profile).
#[test]
fn no_model_is_rated_zero_while_its_outputs_pass_in_a_mode() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = toolgate(
        root,
        &["matrix", "transcripts", "--by", "model", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The matrix JSON is a document: `schema_version`, `by`, `cells`, `routing`.
    let cells = doc["cells"].clone();
    let out = toolgate(root, &["label", "transcripts", "--format", "jsonl"]);
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut zero = Vec::new();
    for c in cells.as_array().unwrap() {
        let model = c["keys"]["model"].as_str().unwrap();
        if c["passes"] != 0 {
            continue;
        }
        let passing: Vec<String> = records
            .iter()
            .filter(|r| r["model"] == model)
            .flat_map(|r| {
                r["labels"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(_, l)| *l == "pass")
                    .map(|(m, _)| m.clone())
                    .collect::<Vec<_>>()
            })
            .collect();
        if !passing.is_empty() {
            zero.push(format!("{model} ({}): passes in {passing:?}", c["profile"]));
        }
    }
    assert!(zero.is_empty(), "{zero:#?}");
}

/// A model whose native calls never parse (Python-style arguments) was
/// rated `no_call` by the default profile, which never reads `tool_calls`:
/// "fall back to another model" for a model that called the tool every
/// time. `native` found the calls, so it judges them: `malformed_json`, a
/// re-roll.
#[test]
fn a_model_whose_native_calls_never_parse_is_not_rated_no_call() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..3)
        .map(|i| {
            let mut t = weather("acme-chat-7b", i, "");
            t["finish_reason"] = json!("tool_calls");
            t["tool_calls"] = json!([{"id": "c", "type": "function",
                "function": {"name": "get_weather", "arguments": "{'city': 'Gent'}"}}]);
            format!("{t}\n")
        })
        .collect();
    fs::write(dir.path().join("x.jsonl"), lines).unwrap();
    let out = toolgate(
        dir.path(),
        &["matrix", "x.jsonl", "--by", "model", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = &doc["cells"][0];
    assert_eq!(cell["profile"]["name"], "native", "{cell}");
    assert_eq!(cell["profile"]["source"], "detected", "{cell}");
    assert_eq!(cell["labels"], json!({"malformed_json": 3}), "{cell}");
    assert_eq!(cell["retry_advice"], "reroll", "{cell}");
}

/// `parse` keeps `default` unless `--model NAME` (or `--profile`) is given.
#[test]
fn parse_uses_the_models_profile_only_when_told_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let t = weather("x", 0, "");
    fs::write(dir.path().join("tools.json"), t["tools"].to_string()).unwrap();
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(MODELS[4].1.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let v = run(&["parse", "--tools", "tools.json", "-"]);
    assert_eq!(v["decision"], "no_call");
    assert!(v.get("profile").is_none());
    let v = run(&["parse", "--tools", "tools.json", "--model", "glm-4.6", "-"]);
    assert_eq!(v["decision"], "execute");
    assert_eq!(
        v["profile"],
        json!({"name": "glm", "source": "by name", "source_detail": "by name (glm-4.6)"})
    );
}

/// The `[models]` globs of toolgate.toml (the validator's `glob_match`,
/// what `auto` and the proxy's per-model profiles match with): `*` spans
/// any run, and the whole name must match.
#[test]
fn model_globs_match_whole_names() {
    use toolgate_validator::auto::glob_match;
    assert!(glob_match("qwen3*", "qwen3-8b"));
    assert!(glob_match("*coder*", "qwen3-coder-30b"));
    assert!(glob_match("exact", "exact"));
    assert!(!glob_match("exact", "exactly"));
    assert!(!glob_match("a*b", "ab-c"));
    assert!(glob_match("a*b*c", "a-b-c"));
    assert!(!glob_match("ab*ba", "aba"));
}
