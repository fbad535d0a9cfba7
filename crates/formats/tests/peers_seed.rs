//! The seed modes against what other parsers' test suites assert
//! (`shared/corpora/peers`, see its README). Skipped when the corpus is absent.
//!
//! For each record whose `x_peer.mode` is one of our seed modes:
//! - outcome `calls`: the live (non-reasoning) candidates of the strict or
//!   the lenient variant carry exactly the expected call names (a failed
//!   candidate counts with the name it could still read, e.g. a cut-off
//!   call that a peer's streaming parser reports by name);
//! - outcome `none`: the strict variant yields no parsed live call.
//!
//! Records where toolgate deliberately differs from the peer (SPEC
//! decisions) are listed in [`DELIBERATE`] with the reason; they are printed
//! but not counted. Every mode must agree on ≥ 95% of the rest.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use toolgate_formats::{Input, Strictness, by_name};

const MODES: [&str; 5] = ["hermes", "marker", "fence", "json", "bracket"];

/// (record id, why toolgate differs on purpose). Each was checked by hand.
const DELIBERATE: &[(&str, &str)] = &[
    // marker — SPEC §9: without the `TOOL_CALL` word the mode finds nothing
    // (selectools also scans fences and bare JSON; those are the fence/json modes).
    (
        "selectools/selectools/TestParseWithFencedCodeBlocks::test_fenced_block_without_marker",
        "no TOOL_CALL marker (SPEC §9); the fence mode reads it",
    ),
    (
        "selectools/selectools/TestParseWithFencedCodeBlocks::test_fenced_block_with_language_tag",
        "no TOOL_CALL marker (SPEC §9); the fence mode reads it",
    ),
    (
        "selectools/selectools/TestParseWithInlineJSON::test_bare_json_object",
        "no TOOL_CALL marker (SPEC §9); the json mode reads it",
    ),
    (
        "selectools/selectools/TestParseWithInlineJSON::test_json_in_surrounding_text",
        "no TOOL_CALL marker (SPEC §9)",
    ),
    (
        "selectools/selectools/TestCustomMarker::test_custom_marker_parsed",
        "FUNCTION_CALL is a selectools parser option; a custom pattern covers it",
    ),
    (
        "selectools/selectools/TestSizeLimitEnforcement::test_payload_exceeds_limit",
        "payload size is the `size` gate, not extraction (SPEC §4)",
    ),
    (
        "selectools/selectools/TestMultipleCandidates::test_deduplication",
        "each marker is a candidate; a repeated call is reported (spurious_call), not deduplicated",
    ),
    // json — SPEC §9: the whole output (reasoning and intent lines aside) is the JSON.
    (
        "vllm/xlam/test_extract_tool_calls[single_tool_with_json_code_block]",
        "prose before the JSON: not the json mode (the fence mode reads it)",
    ),
    (
        "vllm/xlam/test_extract_tool_calls[single_tool_with_tool_calls_tag]",
        "prose and [TOOL_CALLS] before the JSON: the mistral mode's shape",
    ),
    (
        "vllm/xlam/test_extract_tool_calls[single_tool_with_tool_call_xml_tags]",
        "prose and <tool_call> before the JSON: the hermes mode's shape",
    ),
    // bracket — SPEC §9: `[` + identifier + `(`; extraction never consults the allowlist.
    (
        "sglang/lfm2/TestLfm2Detector::test_detect_and_parse_json_simple",
        "a JSON call list is not bracket syntax",
    ),
    (
        "sglang/lfm2/TestLfm2Detector::test_detect_and_parse_json_multiple_calls",
        "a JSON call list is not bracket syntax",
    ),
    (
        "sglang/lfm2/TestLfm2Detector::test_detect_and_parse_json_with_parameters_key",
        "a JSON call list is not bracket syntax",
    ),
    (
        "sglang/lfm2/TestLfm2Detector::test_detect_and_parse_unknown_function",
        "an unknown tool is the allowlist gate's job (wrong_tool), not extraction's",
    ),
    (
        "vllm/lfm2/test_echoed_tool_call_body_not_leaked_to_content",
        "the echoed second list is a second candidate (spurious_call), not dropped",
    ),
    (
        "vllm/llama4_pythonic/test_tool_call[parallel_calls_streaming]#2",
        "the record's output is only `<|python_start|>` (a streaming prefix)",
    ),
];

fn deliberate(id: &str) -> Option<&'static str> {
    DELIBERATE
        .iter()
        .find(|(k, _)| *k == id)
        .map(|(_, why)| *why)
}

fn corpus() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora/peers");
    dir.is_dir().then_some(dir)
}

fn live_names(mode: &str, output: &str, s: Strictness) -> (Vec<Option<String>>, usize) {
    let e = by_name(mode).unwrap();
    let c = e.extract(&Input::new(output), s);
    let live: Vec<_> = c.iter().filter(|c| c.is_live()).collect();
    let parsed = live.iter().filter(|c| c.call().is_some()).count();
    (live.iter().map(|c| c.name.clone()).collect(), parsed)
}

fn names_match(
    expected: &[Option<String>],
    got: &[Option<String>],
    count_asserted: bool,
    min: usize,
) -> bool {
    if count_asserted && expected.len() != got.len() {
        return false;
    }
    if !count_asserted && got.len() < min.max(1) {
        return false;
    }
    let mut pool: Vec<Option<String>> = got.to_vec();
    for e in expected.iter().flatten() {
        match pool.iter().position(|g| g.as_deref() == Some(e.as_str())) {
            Some(i) => {
                pool.remove(i);
            }
            None => return false,
        }
    }
    true
}

#[test]
fn seed_modes_agree_with_peer_parsers() {
    let Some(dir) = corpus() else {
        eprintln!("peer corpus not found next to the repository: skipped");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut stats: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut documented = Vec::new();
    for f in files {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let Ok(r) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let x = &r["x_peer"];
            let Some(mode) = x["mode"]
                .as_str()
                .and_then(|m| MODES.iter().find(|n| **n == m))
            else {
                continue;
            };
            let id = r["id"].as_str().unwrap_or("?");
            let output = r["output"].as_str().unwrap_or("");
            let outcome = x["outcome"].as_str().unwrap_or("");
            let ok = match outcome {
                "calls" => {
                    let expected: Vec<Option<String>> = x["calls"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|c| c["name"].as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    let count_asserted = x["count_asserted"].as_bool() != Some(false);
                    let min = x["min_count"].as_u64().unwrap_or(1) as usize;
                    [Strictness::Strict, Strictness::Lenient].iter().any(|s| {
                        names_match(
                            &expected,
                            &live_names(mode, output, *s).0,
                            count_asserted,
                            min,
                        )
                    })
                }
                "none" => live_names(mode, output, Strictness::Strict).1 == 0,
                _ => continue,
            };
            if !ok {
                if let Some(why) = deliberate(id) {
                    documented.push(format!("{mode} {id}: {why}"));
                    continue;
                }
                let got = live_names(mode, output, Strictness::Strict).0;
                disagreements.push(format!("{mode} {outcome} {id}: got {got:?} for {output:?}"));
            }
            let e = stats.entry(mode).or_default();
            e.0 += 1;
            e.1 += usize::from(ok);
        }
    }
    for d in &documented {
        println!("deliberate difference: {d}");
    }
    for d in &disagreements {
        println!("DISAGREE: {d}");
    }
    for (mode, (n, ok)) in &stats {
        println!(
            "{mode}: {ok}/{n} agree ({:.1}%)",
            100.0 * *ok as f64 / *n as f64
        );
    }
    for (mode, (n, ok)) in &stats {
        assert!(
            *ok as f64 >= 0.95 * *n as f64,
            "{mode}: only {ok}/{n} agree with the peers"
        );
    }
    assert_eq!(stats.len(), MODES.len(), "every seed mode has peer records");
}

/// Where the arguments toolgate reads deliberately differ from a peer's.
const DELIBERATE_ARGS: &[(&str, &str)] = &[
    (
        "vllm/hermes/test_hermes_parser_non_streaming_tool_call_until_eos",
        "an unclosed <tool_call> at the end of the output is truncated, even with complete JSON (fail closed)",
    ),
    (
        "llamacpp/lfm2/LFM2-8B-A1B|LFM2.5-Instruct|LFM2.5-8B-A1B#10",
        "bracket strings follow Python: \"\\n\" is a newline (as vLLM's ast-based pythonic parser reads it); llama.cpp keeps the backslash",
    ),
];

/// For calls whose arguments the peer asserts in full: the strict or the
/// lenient variant reads exactly those arguments.
#[test]
fn seed_modes_read_the_same_arguments_as_peer_parsers() {
    let Some(dir) = corpus() else {
        eprintln!("peer corpus not found next to the repository: skipped");
        return;
    };
    let mut stats: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let Ok(r) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let x = &r["x_peer"];
            let Some(mode) = x["mode"]
                .as_str()
                .and_then(|m| MODES.iter().find(|n| **n == m))
            else {
                continue;
            };
            let id = r["id"].as_str().unwrap_or("?");
            if x["outcome"] != "calls" || deliberate(id).is_some() {
                continue;
            }
            let expected: Vec<(String, Value)> = x["calls"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["args_asserted"] == "full")
                .filter_map(|c| Some((c["name"].as_str()?.to_string(), c["arguments"].clone())))
                .collect();
            if expected.is_empty() {
                continue;
            }
            let output = r["output"].as_str().unwrap_or("");
            let ok = [Strictness::Strict, Strictness::Lenient].iter().any(|s| {
                let got: Vec<(String, Value)> = by_name(mode)
                    .unwrap()
                    .extract(&Input::new(output), *s)
                    .iter()
                    .filter(|c| c.is_live())
                    .filter_map(|c| c.call())
                    .map(|c| {
                        (
                            c.name,
                            Value::Object(std::sync::Arc::unwrap_or_clone(c.arguments)),
                        )
                    })
                    .collect();
                expected.iter().all(|e| got.contains(e))
            });
            if !ok {
                match DELIBERATE_ARGS.iter().find(|(k, _)| *k == id) {
                    Some((_, why)) => {
                        println!("deliberate argument difference: {mode} {id}: {why}");
                        continue;
                    }
                    None => println!("ARGUMENTS DISAGREE: {mode} {id}: {output:?}"),
                }
            }
            let e = stats.entry(mode).or_default();
            e.0 += 1;
            e.1 += usize::from(ok);
        }
    }
    for (mode, (n, ok)) in &stats {
        println!("{mode}: arguments {ok}/{n} agree");
        assert!(
            *ok as f64 >= 0.95 * *n as f64,
            "{mode}: only {ok}/{n} argument sets agree"
        );
    }
}
