//! Extraction cases re-typed from tool-call parsing tests and recorded
//! traffic of projects outside `../shared/corpora/peers` (issue 22, "go
//! looking for the next ones"): the wire shape of each case in our own
//! values, and what toolgate's matching mode must find. The label-level
//! comparison lives in `crates/validator/tests/outside_suites.rs`; the
//! deliberate differences are listed in CONFORMANCE.md ("Outside suites").
#![allow(clippy::unwrap_used)]

use toolgate_core::{Candidate, FailureKind, Repair};
use toolgate_formats::{Input, Strictness, by_name};

fn extract(mode: &str, out: &str, strictness: Strictness) -> Vec<Candidate> {
    by_name(mode).unwrap().extract(&Input::new(out), strictness)
}

/// Qwen2.5-Coder wraps the JSON call in a ```json fence inside
/// `<tool_call>` (kronk PR 950, odysseus PR 5887, tabbyAPI's
/// `tests/tool_parser_test.py` strips such fences): the tag says "this is a
/// call", so hermes reports a candidate. Strict reading labels the stray fence
/// malformed; lenient strips it with the `stray_fences` repair. Before, the
/// block was not a hermes candidate at all and the output was labeled
/// `no_call`, as if the model had not called.
#[test]
fn hermes_payload_in_a_stray_fence_is_a_candidate() {
    for out in [
        "<tool_call>\n```json\n{\"name\": \"now\", \"arguments\": {}}\n```\n</tool_call>",
        "<tool_call>\n```\n[{\"name\": \"now\", \"arguments\": {}}]\n```\n</tool_call>",
    ] {
        let c = extract("hermes", out, Strictness::Strict);
        assert_eq!(c.len(), 1, "{out}");
        let f = c[0].arguments.as_ref().unwrap_err();
        assert_eq!(f.kind, FailureKind::Malformed, "{out}: {f:?}");
        let c = extract("hermes", out, Strictness::Lenient);
        assert_eq!(c.len(), 1, "{out}");
        let call = c[0]
            .call()
            .unwrap_or_else(|| panic!("{out}: {:?}", c[0].arguments));
        assert_eq!(call.name, "now", "{out}");
        assert!(call.arguments.is_empty(), "{out}");
        assert!(c[0].repairs.contains(&Repair::StrayFences), "{out}");
    }
    // Another family's syntax in the same tag is still not hermes'.
    for out in [
        "<tool_call>\n<function=now>\n</function>\n</tool_call>",
        "<tool_call>now\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
        "<tool_call>`now`</tool_call>",
    ] {
        assert!(
            extract("hermes", out, Strictness::Strict).is_empty(),
            "{out}"
        );
        assert!(
            extract("hermes", out, Strictness::Lenient).is_empty(),
            "{out}"
        );
    }
}

/// The same stray fence after `[TOOL_CALLS]` (a pre-v11 list, as tabbyAPI's
/// `tests/tool_parser_test.py` feeds its JSON reader): strict reading stays
/// `malformed`, and lenient now strips the fence (`stray_fences`) as every
/// other JSON-payload mode does, instead of reading the fence as a tool name.
#[test]
fn mistral_list_in_a_stray_fence_is_repaired_by_lenient_replay() {
    let out = "[TOOL_CALLS]```json\n[{\"name\": \"now\", \"arguments\": {}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Seoul\"}}]\n```";
    let c = extract("mistral", out, Strictness::Strict);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].arguments.as_ref().unwrap_err().kind,
        FailureKind::Malformed
    );
    let c = extract("mistral", out, Strictness::Lenient);
    let names: Vec<_> = c.iter().filter_map(|c| c.call()).map(|c| c.name).collect();
    assert_eq!(names, ["now", "get_weather"]);
    assert!(c.iter().all(|c| c.repairs.contains(&Repair::StrayFences)));
    assert_eq!(c[1].call().unwrap().arguments["city"], "Seoul");
}

fn native(calls: &[serde_json::Value], strictness: Strictness) -> Vec<Candidate> {
    let input = Input {
        tool_calls: Some(calls),
        ..Input::new("")
    };
    by_name("native").unwrap().extract(&input, strictness)
}

/// Recorded TGI responses (text-generation-inference's
/// `integration-tests/models/__snapshots__/test_tools_llama/*.json`): 1.4.x
/// answered with `function.parameters` (an object, `description: null`,
/// an integer `id`); 2.x with `function.arguments` as an object; 3.x with
/// the usual JSON string. The 1.4 call was labeled `truncation` ("arguments
/// missing"), blaming the model for a complete call in another key.
#[test]
fn native_reads_tgi_shapes_and_spec_argument_keys() {
    use serde_json::json;
    let args = json!({"format": "celsius", "location": "Ghent"});
    for call in [
        json!({"id": 0, "type": "function", "function": {"description": null,
            "name": "get_current_weather", "parameters": args}}),
        json!({"id": "0", "type": "function", "function": {"description": null,
            "name": "get_current_weather", "arguments": args}}),
        json!({"id": "0", "type": "function", "function": {"description": null,
            "name": "get_current_weather", "arguments": args.to_string()}}),
        json!({"id": "0", "type": "function", "function": {
            "name": "get_current_weather", "arguments": null, "params": args}}),
    ] {
        let c = native(std::slice::from_ref(&call), Strictness::Strict);
        let got = c[0].call().unwrap_or_else(|| panic!("{call}: {:?}", c[0]));
        assert_eq!(got.name, "get_current_weather");
        assert_eq!(
            serde_json::Value::Object(std::sync::Arc::unwrap_or_clone(got.arguments)),
            args,
            "{call}"
        );
    }
    // Two argument keys: ambiguous, never one of them silently.
    let call = json!({"function": {"name": "f", "arguments": "{}", "parameters": {"a": 1}}});
    let c = native(&[call], Strictness::Strict);
    assert_eq!(
        c[0].arguments.as_ref().unwrap_err().kind,
        FailureKind::Malformed
    );
    // No argument key at all is still a cut-off call (SPEC §9).
    let c = native(&[json!({"function": {"name": "f"}})], Strictness::Strict);
    assert_eq!(
        c[0].arguments.as_ref().unwrap_err().kind,
        FailureKind::Truncated
    );
}

/// vllm-mlx `tests/test_gpt_oss_tool_parsing.py`: an analysis message that a
/// new `<|channel|>` ends without `<|end|>`, then a commentary call. The
/// harmony mode ends a message body at `<|channel|>`, but the reasoning
/// span ran on to `<|end|>`/`<|start|>` only, so the call was taken for
/// reasoning and the output labeled `no_call`. Both now end the message at
/// the same tokens.
#[test]
fn harmony_call_after_an_unterminated_analysis_message_is_live() {
    use toolgate_core::Source;
    let out = "<|channel|>analysis<|message|>Reading it.<|channel|>commentary to=functions.read_file<|message|>{\"path\": \"/tmp/x\"}<|call|>";
    let c = extract("harmony", out, Strictness::Strict);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].source, Source::Output);
    let call = c[0].call().unwrap();
    assert_eq!(call.name, "read_file");
    assert_eq!(call.arguments["path"], "/tmp/x");
    // The reasoning span is the analysis message alone.
    let s = toolgate_formats::reasoning_spans(out);
    assert_eq!(s.len(), 1);
    assert_eq!(
        &out[s[0].start..s[0].end],
        "<|channel|>analysis<|message|>Reading it."
    );
}

/// vLLM's `tests/tool_parsers/test_intern_s1_tool_parser.py` (stop 48):
/// vLLM decodes with a space between special tokens by default, so a served
/// InternLM / Intern-S1 call reads `<|action_start|> <|plugin|>`. The mode
/// knew only the two tokens side by side, and the call was not a candidate
/// at all (`no_call`, as if the model had not called). Other text between
/// the tokens is still no opener.
#[test]
fn internlm_opener_spaced_by_the_detokenizer_is_a_call() {
    for out in [
        "<|action_start|> <|plugin|>\n{\"name\": \"now\", \"parameters\": {}}\n<|action_end|>",
        "Let me look.<|action_start|> <|plugin|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lyon\"}}",
    ] {
        for strictness in [Strictness::Strict, Strictness::Lenient] {
            let c = extract("internlm", out, strictness);
            assert_eq!(c.len(), 1, "{out}");
            let call = c[0]
                .call()
                .unwrap_or_else(|| panic!("{out}: {:?}", c[0].arguments));
            assert!(
                ["now", "get_weather"].contains(&call.name.as_ref()),
                "{out}"
            );
        }
    }
    // The spaced spelling cut off inside the object is still `truncated`.
    let c = extract(
        "internlm",
        "<|action_start|> <|plugin|>{\"name\": \"now\", \"parameters\": {",
        Strictness::Strict,
    );
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].arguments.as_ref().unwrap_err().kind,
        FailureKind::Truncated
    );
    // Prose between the two tokens opens nothing.
    let out = "<|action_start|> then <|plugin|>{\"name\": \"now\", \"parameters\": {}}";
    assert!(extract("internlm", out, Strictness::Strict).is_empty());
}
