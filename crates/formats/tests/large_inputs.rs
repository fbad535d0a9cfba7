//! Outputs too large to be fixtures (megabytes of markup): each pins an
//! engine's bound on adversarial input — linear time, the candidate cap, a
//! nesting depth read without recursion. The readings of ordinary outputs
//! are fixtures (`tests/fixtures.rs`); these were the per-format unit
//! tests that could not become one.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use std::collections::HashMap;
use toolgate_core::FailureKind;
use toolgate_formats::{Input, ParamTypes, Strictness};

/// Issue 22: Kimi's markers are looked for outside JSON strings; the walk to
/// the section end must stop at the next call, or 30,000 calls in one
/// section would each walk to its far end. The cap keeps the first 1,000.
#[test]
fn kimi_many_calls_before_a_far_section_end_stay_linear() {
    let kimi = toolgate_formats::by_name("kimi").unwrap();
    let call = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": \"<|tool_call_end|>\"}<|tool_call_end|>";
    let out = format!(
        "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>",
        call.repeat(30_000)
    );
    let t = std::time::Instant::now();
    let c = toolgate_formats::extract(&*kimi, &Input::new(&out), Strictness::Strict);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(c.len(), toolgate_formats::DEFAULT_MAX_CANDIDATES);
    assert_eq!(
        c[0].call().unwrap().arguments["a"],
        json!("<|tool_call_end|>")
    );
}

/// MiniMax-M3's nested argument elements are read with an explicit stack:
/// 100,000 unclosed elements are a malformed call, not a stack overflow
/// (the depth cap itself, one past `jsonread::MAX_DEPTH`, is a fixture).
#[test]
fn minimax_m3_deeply_unclosed_elements_are_malformed() {
    let m3 = toolgate_formats::by_name("minimax_m3").unwrap();
    let types = ParamTypes {
        tools: HashMap::from([(
            "f".to_string(),
            HashMap::from([("v".to_string(), vec!["object".to_string()])]),
        )]),
    };
    let body = "<a>".repeat(100_000);
    let out = format!("<tool_call><invoke name=\"f\"><v>{body}</v></invoke></tool_call>");
    let mut input = Input::new(&out);
    input.param_types = Some(&types);
    let c = toolgate_formats::extract(&*m3, &input, Strictness::Strict);
    assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
}
