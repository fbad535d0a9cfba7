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

/// `label_list` (the Python package's entry) on a list in memory writes the
/// same lines as the batch stream on the file, detection's second look
/// included: the records cannot disagree.
#[test]
fn a_list_in_memory_gives_the_batch_streams_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..12 {
        if i == 5 {
            text.push_str("{not json\n");
            continue;
        }
        let model = if i % 3 == 0 { "qwen3-8b" } else { "acme-1" };
        let mut line = json!({"id": format!("t{i}"), "model": model, "tools": tools(),
                              "output": hermes(&format!("c{i}"))});
        if i == 7 {
            line["labels"] = json!({"zeta": "pass", "hermes": "no_call", "json": "pass"});
        }
        text.push_str(&format!("{line}\n"));
    }
    let path = dir.path().join("list.jsonl");
    std::fs::write(&path, text).unwrap();
    let engine = Engine::new(Profile::default());
    let auto = Auto::default();
    let summarizer = Summarizer {
        engine: &engine,
        compare: false,
        require_labels: false,
        record: Some(Record::Line),
    };
    let mut streamed: Vec<String> = Vec::new();
    stream_paths(
        &engine,
        &auto,
        std::slice::from_ref(&path),
        &options(2),
        |t, o, c| summarizer.summarize(t, o, c),
        |entry| match entry {
            Entry::Done { value, .. } => {
                streamed.push(String::from_utf8(value.line.unwrap()).unwrap());
            }
            Entry::Bad(e) => streamed.push(toolgate_core::jsonout::line(
                &toolgate_core::jsonout::versioned(toolgate_batch::error_record(&e)),
            )),
            Entry::FileEnd { .. } => {}
        },
    );
    let loaded = toolgate_core::load::load_file(&path);
    let listed = toolgate_batch::label_list(loaded, &engine, &auto, None);
    let listed: Vec<String> = listed
        .into_iter()
        .map(|l| String::from_utf8(l.line).unwrap())
        .collect();
    assert_eq!(listed.len(), 12);
    assert_eq!(listed, streamed);
    // The models were judged by detection (acme) and by name (qwen3), and
    // the stored labels are written in the file's order.
    let record = |i: usize| serde_json::from_str::<Value>(&listed[i]).unwrap();
    assert_eq!(record(1)["profile"]["source"], "detected");
    assert_eq!(record(0)["profile"]["source"], "by name");
    assert_eq!(
        record(5)["error"].as_str().map(|e| e.starts_with("line 6")),
        Some(true)
    );
    let stored: Vec<String> = record(7)["stored"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(stored, ["zeta", "hermes", "json"]);
}

/// `label --check`'s counts and the reviewer's summary, as a library: a
/// changed transcript, an unlabeled one, a stored label of a mode the run
/// did not replay, and the markdown naming the change.
#[test]
fn a_check_is_tallied_and_rendered_for_a_reviewer() {
    use toolgate_batch::review::{self, Section, Tally};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("check.jsonl");
    let lines = [
        json!({"id": "changed", "model": "m", "tools": tools(), "output": hermes("Gent"),
               "labels": {"hermes": "no_call", "zeta": "pass"}}),
        json!({"id": "bare", "model": "m", "tools": tools(), "output": "no call"}),
        json!({"id": "toolless", "model": "m", "output": "no call", "labels": {}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let engine = Engine::new(Profile::reading("hermes"));
    let auto = Auto::given(Profile::reading("hermes"));
    let summarizer = Summarizer {
        engine: &engine,
        compare: true,
        require_labels: true,
        record: None,
    };
    let entries = toolgate_batch::collect(&engine, &auto, &[path], &options(1), |t, o, c| {
        summarizer.summarize(t, o, c)
    });
    let mut tally = Tally::default();
    let mut sections = Vec::new();
    for entry in &entries {
        let Entry::Done { transcript, value } = entry else {
            panic!("every line reads");
        };
        assert!(tally.add(transcript, value));
        if !value.diffs.is_empty() {
            sections.push(Section {
                path: "check.jsonl".into(),
                line: transcript.line,
                id: transcript.id.clone(),
                model: transcript.model.clone(),
                unlabeled: value.unlabeled,
                whys: value.whys.clone(),
            });
        }
    }
    assert_eq!(tally.checked, 3);
    assert_eq!(tally.changed, 1, "the unlabeled one fails apart");
    assert_eq!(tally.unlabeled, 1);
    assert_eq!(tally.unlabeled_failing, 1);
    assert_eq!(tally.tools_unknown, 1);
    assert_eq!(tally.cut_short, 0);
    assert_eq!(tally.not_replayed, ["zeta"]);
    let md = review::markdown(
        &sections,
        &toolgate_batch::BadInputs::default(),
        &tally.counts(true),
        None,
    );
    assert!(
        md.starts_with("## toolgate label check\n\n**1** of 3 transcript(s)"),
        "{md}"
    );
    assert!(md.contains("(failing: `--require-labels`)"), "{md}");
    assert!(md.contains("| `hermes` | `no_call` → **`pass`** |"), "{md}");
    assert!(md.contains("store the current labels with"), "{md}");
    let notes = review::annotations(&sections[0]);
    assert!(notes.starts_with("::warning file=check.jsonl,line=1,title=toolgate%3A label changed::changed: mode hermes: label no_call → pass"), "{notes}");
}

/// Regression (s47-files): `label --write` held one label map per
/// transcript of a file until the file's end, some 290 bytes each (30,000
/// transcripts: 8.8 MB more than `label`; a multi-GB JSONL file, hundreds
/// of megabytes). Transcripts with the same labels share one map now: 200
/// transcripts of two kinds hold two maps, and every line still gets its
/// labels.
#[test]
fn label_write_holds_each_distinct_set_of_labels_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..200 {
        let output = if i % 2 == 0 {
            hermes(&format!("c{i}"))
        } else {
            "no call".to_string()
        };
        let line = json!({"id": format!("t{i}"), "model": "m", "tools": tools(), "output": output});
        text.push_str(&format!("{line}\n"));
    }
    let path = dir.path().join("batch.jsonl");
    std::fs::write(&path, text).unwrap();
    let engine = Engine::new(Profile::reading("hermes"));
    let auto = Auto::given(Profile::reading("hermes"));
    let summarizer = Summarizer {
        engine: &engine,
        compare: false,
        require_labels: false,
        record: None,
    };
    let mut store = toolgate_batch::LabelStore::default();
    let mut held = 0;
    stream_paths(
        &engine,
        &auto,
        std::slice::from_ref(&path),
        &options(2),
        |t, outcome, chosen| summarizer.summarize(t, outcome, chosen),
        |entry| match entry {
            Entry::Done { transcript, value } => store.add(&transcript, &value),
            Entry::Bad(e) => panic!("{e}"),
            Entry::FileEnd { path, fingerprint } => {
                held = store.held_maps();
                store.file_end(&path, fingerprint);
            }
        },
    );
    assert_eq!(held, 2);
    assert_eq!(store.held_maps(), 0, "emptied once no file is open");
    assert!(store.finish());
    let written = std::fs::read_to_string(&path).unwrap();
    for (i, line) in written.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        // Nothing read: an empty map says "labelled, nothing to see".
        let want = if i % 2 == 0 {
            json!({"hermes": "pass", "llama3": "pass", "granite": "pass"})
        } else {
            json!({})
        };
        assert_eq!(v["labels"], want, "line {}", i + 1);
    }
    assert_eq!(written.lines().count(), 200);
}

/// Probe s47: `label` decided `execute` for a transcript whose request set
/// `parallel_tool_calls: false` and whose answer made two calls, where the
/// proxy rejected it at the `single` gate. The transcript's own member (what
/// `toolgate import` writes) and a proxy recording's `request` both carry
/// it; the label stays the model's (`pass`, nothing to relabel), the
/// decision is the proxy's. Without the flag both calls execute.
#[test]
fn label_rejects_two_calls_where_the_request_set_parallel_tool_calls_false() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one_call.jsonl");
    let two = format!("{}\n{}", hermes("Paris"), hermes("Rome"));
    let lines = [
        json!({"id": "member", "model": "m", "tools": tools(), "output": two,
               "parallel_tool_calls": false, "labels": {"hermes": "pass"}}),
        json!({"id": "recording", "model": "m", "tools": tools(), "output": two,
               "request": {"model": "m", "tools": tools(), "parallel_tool_calls": false},
               "labels": {"hermes": "pass"}}),
        json!({"id": "free", "model": "m", "tools": tools(), "output": two,
               "labels": {"hermes": "pass"}}),
        json!({"id": "true", "model": "m", "tools": tools(), "output": two,
               "parallel_tool_calls": true, "labels": {"hermes": "pass"}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
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
    let got: Vec<(String, String, Value, usize)> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Done { value, .. } => Some(value),
            Entry::Bad(err) => panic!("every line reads: {}", err.reason),
            Entry::FileEnd { .. } => None,
        })
        .map(|labels| {
            // The stored label stands (other modes that read the calls
            // are new, not stored).
            assert!(
                labels.diffs.iter().all(|d| d.stored.is_none()),
                "labels unchanged: {:?}",
                labels.diffs
            );
            let record: Value = serde_json::from_slice(labels.line.as_deref().unwrap()).unwrap();
            assert_eq!(record["profile"]["label"], "pass", "{record}");
            assert_eq!(record["labels"]["hermes"], "pass", "{record}");
            (
                record["id"].as_str().unwrap().to_string(),
                record["profile"]["decision"].as_str().unwrap().to_string(),
                record["profile"]["gate"].clone(),
                record["profile"]["calls"].as_array().unwrap().len(),
            )
        })
        .collect();
    let row = |id: &str, decision: &str, gate: Value, calls: usize| {
        (id.to_string(), decision.to_string(), gate, calls)
    };
    assert_eq!(
        got,
        [
            row("member", "reject", json!("single"), 0),
            row("recording", "reject", json!("single"), 0),
            row("free", "execute", Value::Null, 2),
            row("true", "execute", Value::Null, 2),
        ]
    );
}
