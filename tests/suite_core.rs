//! The bundled suite `suites/core.jsonl` and its scorer fixture
//! `tests/fixtures/core_answers.jsonl` (a known-good and at least one
//! known-bad raw answer per task, each with the label it must get).
//!
//! Seed 002: "a conformance harness with an unverified scorer is opinion
//! with YAML". These tests prove the scorer on every task before any model
//! is scored: every good answer is `pass`, every bad one gets exactly its
//! label. `tests/run.rs` proves the same end to end through `toolgate run`
//! and a mock endpoint.
#![allow(clippy::unwrap_used)]

use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use toolgate_core::Label;
use toolgate_core::load::from_object;
use toolgate_proxy::runner::Suite;
use toolgate_validator::{Engine, Profile, Schema};

fn suite() -> Suite {
    Suite::load(Path::new("suites/core.jsonl")).unwrap_or_else(|e| panic!("{e}"))
}

/// task → (mode, [(output, label)]).
fn answers() -> BTreeMap<String, (String, Vec<(String, Label)>)> {
    let text = std::fs::read_to_string("tests/fixtures/core_answers.jsonl").unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let list = v["answers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    (
                        a["output"].as_str().unwrap().to_string(),
                        a["label"].as_str().unwrap().parse::<Label>().unwrap(),
                    )
                })
                .collect();
            (
                v["task"].as_str().unwrap().to_string(),
                (v["mode"].as_str().unwrap().to_string(), list),
            )
        })
        .collect()
}

#[test]
fn the_core_suite_has_40_to_50_tasks_covering_seed_002s_edge_cases() {
    let suite = suite();
    let n = suite.tasks.len();
    assert!((40..=50).contains(&n), "{n} tasks");
    let tags: BTreeSet<&str> = suite
        .tasks
        .iter()
        .flat_map(|t| t.tags.iter().map(String::as_str))
        .collect();
    // Seed 002 / issue 14: parallel calls, nested objects, enums, unicode
    // arguments, int64 boundaries, $ref schemas, no tool needed, required vs
    // optional, long arguments, similar tool names.
    for tag in [
        "parallel",
        "nested",
        "enum",
        "unicode",
        "int64",
        "ref",
        "no_tool",
        "required",
        "long_args",
        "similar_names",
    ] {
        let count = suite
            .tasks
            .iter()
            .filter(|t| t.tags.iter().any(|x| x == tag))
            .count();
        assert!(count >= 2, "tag `{tag}`: {count} tasks");
    }
    assert!(tags.len() >= 10);
    // A mock server selects its answer by the last user message: distinct.
    let users: BTreeSet<&str> = suite
        .tasks
        .iter()
        .map(|t| t.last_user_text().unwrap())
        .collect();
    assert_eq!(users.len(), n);
}

#[test]
fn every_tool_and_expectation_schema_of_the_core_suite_compiles() {
    for task in suite().tasks {
        for tool in &task.tools {
            let params = &tool["function"]["parameters"];
            let schema = Schema::strict(params);
            assert_eq!(schema.unusable_reason(), None, "task {}", task.task);
        }
        for call in task.expect["calls"].as_array().unwrap() {
            if let Some(args) = call.get("arguments") {
                let schema = Schema::as_written(args);
                assert_eq!(schema.unusable_reason(), None, "task {}", task.task);
            }
        }
    }
}

/// The transcript `toolgate run` would write for this answer (the fields
/// the labeler reads).
fn transcript_for(task: &toolgate_proxy::runner::Task, output: &str) -> toolgate_core::Transcript {
    let mut obj = Map::new();
    obj.insert("model".into(), json!("fixture"));
    obj.insert("task".into(), json!(task.task));
    obj.insert("tools".into(), Value::Array(task.tools.clone()));
    obj.insert("expect".into(), task.expect.clone());
    obj.insert("output".into(), json!(output));
    from_object(obj, Path::new("fixture.json"), None, task.task.clone()).unwrap()
}

#[test]
fn the_scorer_labels_every_known_good_and_known_bad_answer_of_every_task() {
    let suite = suite();
    let answers = answers();
    let engine = Engine::new(Profile::default());
    let mut failures = Vec::new();
    let mut labels_seen = BTreeSet::new();
    for task in &suite.tasks {
        let (mode, list) = answers
            .get(&task.task)
            .unwrap_or_else(|| panic!("no answers for task `{}`", task.task));
        assert!(
            list.iter().any(|(_, l)| l.is_pass()) && list.iter().any(|(_, l)| !l.is_pass()),
            "task `{}` needs a known-good and a known-bad answer",
            task.task
        );
        for (i, (output, want)) in list.iter().enumerate() {
            let replay = engine.replay(&transcript_for(task, output));
            let got = replay.strict_mode(mode).unwrap().label;
            labels_seen.insert(got);
            if got != *want {
                failures.push(format!(
                    "{}#{i} ({mode}): want {want}, got {got}",
                    task.task
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(
        answers.len(),
        suite.tasks.len(),
        "answers for unknown tasks"
    );
    // Every label of the taxonomy is exercised by some answer.
    assert_eq!(labels_seen.len(), Label::ALL.len(), "{labels_seen:?}");
}

#[test]
fn a_wrong_expectation_in_the_fixture_would_be_caught() {
    // The scorer test cannot pass vacuously: the good answer of a task run
    // against another task's expectation is not `pass`.
    let suite = suite();
    let answers = answers();
    let engine = Engine::new(Profile::default());
    let a = suite
        .tasks
        .iter()
        .find(|t| t.task == "weather_one_city")
        .unwrap();
    let b = answers.get("unicode_city").unwrap();
    let replay = engine.replay(&transcript_for(a, &b.1[0].0));
    assert_eq!(
        replay.strict_mode("hermes").unwrap().label,
        Label::SchemaViolation
    );
}
