//! Server findings, each pinned by a bundled transcript under
//! `transcripts/findings/` (SPEC §5 "Server findings"; issue 13).
//!
//! A finding describes the serving stack, never the model: each case also
//! asserts the labels the model gets, so that a finding can never be
//! mistaken for (or silently change) a label.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use toolgate_core::Label;
use toolgate_core::load::load_file;
use toolgate_validator::{Engine, FindingKind, Profile, Replay};

fn replay(file: &str) -> Replay {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("transcripts/findings")
        .join(file);
    let loaded = load_file(&path);
    let t = loaded[0].as_ref().expect("the bundled transcript loads");
    Engine::new(Profile::default()).replay(t)
}

fn kinds(r: &Replay) -> Vec<FindingKind> {
    r.findings.iter().map(|f| f.kind).collect()
}

fn label(r: &Replay, mode: &str) -> Label {
    r.strict_mode(mode).expect("mode replayed").label
}

#[test]
fn markup_residue_native_calls_and_markup_in_content() {
    let r = replay("markup_residue.json");
    assert_eq!(kinds(&r), [FindingKind::MarkupResidue]);
    assert_eq!(label(&r, "native"), Label::Pass);
    assert_eq!(label(&r, "hermes"), Label::Pass);
}

#[test]
fn server_dropped_a_call_that_passes_in_the_models_mode() {
    let r = replay("server_dropped.json");
    assert_eq!(kinds(&r), [FindingKind::ServerDropped]);
    assert!(
        r.findings[0].detail.contains("`hermes`"),
        "{:?}",
        r.findings
    );
    assert_eq!(label(&r, "native"), Label::NoCall);
}

#[test]
fn server_repaired_a_malformed_raw_call() {
    let r = replay("server_repaired.json");
    assert_eq!(
        kinds(&r),
        [FindingKind::MarkupResidue, FindingKind::ServerRepaired]
    );
    assert_eq!(label(&r, "hermes"), Label::MalformedJson);
    assert_eq!(label(&r, "native"), Label::Pass);
}

#[test]
fn count_mismatch_two_raw_calls_one_native() {
    let r = replay("count_mismatch.json");
    assert_eq!(
        kinds(&r),
        [FindingKind::MarkupResidue, FindingKind::CountMismatch]
    );
    assert!(
        r.findings[1]
            .detail
            .starts_with("1 native call(s), 2 in the raw text")
    );
}

#[test]
fn call_in_reasoning_is_the_only_call() {
    let r = replay("call_in_reasoning.json");
    assert_eq!(kinds(&r), [FindingKind::CallInReasoning]);
    assert_eq!(label(&r, "hermes"), Label::NoCall);
}

#[test]
fn finish_reason_stop_with_a_complete_native_call() {
    let r = replay("finish_reason_mismatch.json");
    assert_eq!(kinds(&r), [FindingKind::FinishReasonMismatch]);
    assert_eq!(label(&r, "native"), Label::Pass);
}

/// Regression: a native `arguments: ""` for a tool without parameters was
/// labeled `truncation` — the model's fault — although the model's raw call
/// is complete and the server dropped the `{}`.
#[test]
fn empty_native_arguments_for_a_parameterless_tool_is_the_servers() {
    let r = replay("empty_arguments.json");
    assert_eq!(
        kinds(&r),
        [FindingKind::MarkupResidue, FindingKind::EmptyArguments]
    );
    assert_eq!(label(&r, "native"), Label::Pass);
    assert_eq!(label(&r, "hermes"), Label::Pass);
    let native = r.strict_mode("native").unwrap();
    assert_eq!(native.calls[0].name, "get_time");
    assert!(native.calls[0].arguments.is_empty());
}

/// Without raw text (the server's content was empty), the same empty
/// arguments stay the model's `truncation`: nothing shows the call was complete.
#[test]
fn empty_native_arguments_without_raw_text_stay_truncation() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("transcripts/native/empty_arguments_string.json");
    let loaded = load_file(&path);
    let r = Engine::new(Profile::default()).replay(loaded[0].as_ref().unwrap());
    assert_eq!(label(&r, "native"), Label::Truncation);
    assert!(!kinds(&r).contains(&FindingKind::EmptyArguments));
}

/// Issue 22: a Groq-style `tool_use_failed` error carrying the model's text
/// (imported with the note `failed_generation`) is a capture finding: the
/// model's text keeps its own label, the native `no_call` is the server's.
#[test]
fn failed_generation_is_a_capture_finding_beside_the_models_label() {
    let r = replay("failed_generation.json");
    assert_eq!(kinds(&r), [FindingKind::FailedGeneration]);
    assert!(FindingKind::FailedGeneration.describes_capture());
    assert!(
        r.findings[0].detail.contains("`tool_use_failed`"),
        "{:?}",
        r.findings
    );
    assert_eq!(label(&r, "hermes"), Label::MalformedJson);
    assert_eq!(label(&r, "native"), Label::NoCall);
}

/// Every finding kind but `stream_divergence` (which needs streaming
/// replay) is pinned by one bundled transcript.
#[test]
fn every_finding_kind_has_a_bundled_transcript() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("transcripts/findings");
    for kind in FindingKind::ALL {
        assert!(
            dir.join(format!("{}.json", kind.as_str())).exists(),
            "no transcripts/findings/{kind}.json"
        );
    }
}

/// `label --format jsonl` carries the findings apart from the labels.
#[test]
fn label_jsonl_lists_the_findings() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "label",
            "--format",
            "jsonl",
            "transcripts/findings/server_dropped.json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["labels"]["hermes"], "pass");
    assert_eq!(record["findings"][0]["kind"], "server_dropped");
    assert_eq!(
        record["findings"][0]["detail"],
        "the raw text holds 1 call(s) that pass in mode `hermes`; the server returned no native call"
    );
    assert_eq!(record["findings"].as_array().unwrap().len(), 1);
}

/// The recorded stream lost its last delta: the chunks replayed through the
/// streaming pipeline leave the call open, the recorded output closes it.
#[test]
fn stream_divergence_the_chunks_lose_the_closer() {
    let output_len = "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>".len();
    let parted = output_len - "\n</tool_call>".len();
    let texts = format!(
        "the chunks give {parted} bytes, the recorded output has {output_len}; they part at byte {parted}"
    );
    // The default profile (primary `tag`) finds no call on either side:
    // only the texts differ.
    let r = replay("stream_divergence.json");
    assert_eq!(kinds(&r), [FindingKind::StreamDivergence]);
    assert_eq!(r.findings[0].detail, texts);
    // The model's profile: the streamed call never closes.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("transcripts/findings/stream_divergence.json");
    let loaded = load_file(&path);
    let t = loaded[0].as_ref().expect("the bundled transcript loads");
    let hermes = Engine::new(Profile::builtin("hermes").expect("builtin"));
    let r = hermes.replay(t);
    assert_eq!(kinds(&r), [FindingKind::StreamDivergence]);
    assert_eq!(
        r.findings[0].detail,
        format!("{texts} (the streamed decision is `reject`, the batch decision `execute`)")
    );
    // The model's own call, in `output`, still passes: a finding is never a label.
    assert_eq!(label(&r, "hermes"), Label::Pass);
}

/// Bundled transcripts whose chunks are the honest deltas of their output
/// have no `stream_divergence`, with the default profile and with the one
/// `auto` picks.
#[test]
fn honest_streams_have_no_stream_divergence() {
    for file in ["hermes/streamed_search.json", "kimi/parallel_streamed.json"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("transcripts")
            .join(file);
        let loaded = load_file(&path);
        let t = loaded[0].as_ref().expect("the bundled transcript loads");
        assert!(t.chunks.as_ref().is_some_and(|c| c.len() > 1), "{file}");
        let engine = Engine::new(Profile::default());
        let mode = file.split('/').next().unwrap();
        let named = Profile::builtin(mode).expect("a builtin profile per mode");
        for r in [engine.replay(t), engine.replay_as(t, &named)] {
            assert!(
                !kinds(&r).contains(&FindingKind::StreamDivergence),
                "{file}: {:?}",
                r.findings
            );
        }
    }
}
