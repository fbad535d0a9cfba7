//! The batch engine and the label engine driven as a library: input order
//! with errors in place, and a changed stored label found, explained and
//! rendered without the binary.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use toolgate_batch::{BatchOptions, Entry, Record, Summarizer, stream_paths};
use toolgate_core::Label;
use toolgate_core::load::LoadOptions;
use toolgate_validator::{Auto, Engine, Profile};

fn hermes(city: &str) -> String {
    format!(
        "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}</tool_call>"
    )
}

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"], "additionalProperties": false}}}])
}

fn options(workers: usize) -> BatchOptions {
    BatchOptions {
        load: LoadOptions::default(),
        workers,
    }
}

#[test]
fn entries_come_in_input_order_with_a_bad_line_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..100 {
        if i == 37 {
            text.push_str("{not json\n");
            continue;
        }
        let line = json!({"id": format!("t{i}"), "model": "m", "tools": tools(),
                          "output": hermes(&format!("c{i}"))});
        text.push_str(&format!("{line}\n"));
    }
    let path = dir.path().join("batch.jsonl");
    std::fs::write(&path, text).unwrap();
    let engine = Engine::new(Profile::reading("hermes"));
    let auto = Auto::given(Profile::reading("hermes"));
    for workers in [1, 4] {
        let mut seen = Vec::new();
        stream_paths(
            &engine,
            &auto,
            std::slice::from_ref(&path),
            &options(workers),
            |_, outcome, _| outcome.profile.label,
            |entry| match entry {
                Entry::Done { transcript, value } => {
                    assert_eq!(value, Label::Pass, "{}", transcript.id);
                    seen.push(transcript.id.clone());
                }
                Entry::Bad(e) => {
                    assert_eq!(e.line, Some(38));
                    seen.push("bad".into());
                }
                Entry::FileEnd { path: end, .. } => {
                    assert_eq!(end, path);
                    seen.push("end".into());
                }
            },
        );
        let mut want: Vec<String> = (0..100)
            .map(|i| {
                if i == 37 {
                    "bad".to_string()
                } else {
                    format!("t{i}")
                }
            })
            .collect();
        want.push("end".into());
        assert_eq!(seen, want, "{workers} workers");
    }
}

#[test]
fn a_changed_stored_label_is_found_explained_and_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.json");
    let transcript = json!({"id": "one", "model": "m", "tools": tools(),
        "output": hermes("Antwerp"), "labels": {"hermes": "no_call"}});
    std::fs::write(&path, transcript.to_string()).unwrap();
    let engine = Engine::new(Profile::reading("hermes"));
    let auto = Auto::given(Profile::reading("hermes"));
    let summarizer = Summarizer {
        engine: &engine,
        compare: true,
        require_labels: false,
        record: Some(Record::Line),
    };
    let entries = toolgate_batch::collect(&engine, &auto, &[path], &options(2), |t, o, c| {
        summarizer.summarize(t, o, c)
    });
    let [Entry::Done { value: labels, .. }] = entries.as_slice() else {
        panic!("one transcript");
    };
    // hermes changed; other modes that read the call are new (not stored).
    let at = labels
        .diffs
        .iter()
        .position(|d| d.mode == "hermes")
        .unwrap();
    assert_eq!(labels.diffs[at].stored.as_deref(), Some("no_call"));
    assert_eq!(labels.diffs[at].now, Label::Pass);
    assert!(
        labels
            .diffs
            .iter()
            .all(|d| d.mode == "hermes" || d.stored.is_none())
    );
    assert_eq!(labels.whys.len(), labels.diffs.len());
    let why = &labels.whys[at];
    assert_eq!((why.mode.as_str(), why.now), ("hermes", Label::Pass));
    assert!(
        why.candidate
            .as_deref()
            .is_some_and(|c| c.contains("Antwerp")),
        "{why:?}"
    );
    let record: Value = serde_json::from_slice(labels.line.as_deref().unwrap()).unwrap();
    assert_eq!(record["id"], "one");
    assert_eq!(record["labels"]["hermes"], "pass");
    assert_eq!(record["stored"], json!({"hermes": "no_call"}));
    assert_eq!(record["changed"][at]["mode"], "hermes");
    assert_eq!(record["changed"][at]["stored"], "no_call");
    assert_eq!(record["changed"][at]["now"], "pass");
    assert_eq!(record["profile"]["label"], "pass");
}
