//! The valid-payload fast path of `jsonread` (serde_json first, the
//! failure-classifying reader only when that fails) never changes a result:
//! on generated valid and near-valid payloads — duplicate keys, `NaN`,
//! trailing commas, lone surrogates, raw control characters, deep nesting,
//! numbers beyond 64 bits or that would round, `-0`, Python literals,
//! single quotes, unquoted keys, fences — `read_all` / `read_prefix` equal
//! the classifying reader alone (value, end, repairs, or the same failure
//! kind, message and offset), in both strictnesses; and every JSON-payload
//! extractor finds the same candidates with the fast path on and off, so
//! the labels computed from them cannot differ either.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use toolgate_formats::testing::{
    read_all, read_all_classifying, read_prefix, read_prefix_classifying, without_fast_path,
};
use toolgate_formats::{Input, Strictness, by_name};

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        // Beyond 64 bits, both signs.
        "-?[1-9][0-9]{19,24}",
        // Fractions and exponents, some of which round as f64.
        "-?(0|[1-9][0-9]{0,18})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,4})?",
        Just("-0".to_string()),
        Just("-0.0".to_string()),
        Just("01".to_string()),
        Just("1.".to_string()),
        Just("1e".to_string()),
        Just("-".to_string()),
        Just("9007199254740993".to_string()),
        Just("9223372036854775808".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("18446744073709551615".to_string()),
        Just("18446744073709551616".to_string()),
    ]
}

/// String contents: plain text, every escape, bad escapes, surrogates
/// (paired, lone high, lone low), raw control characters, non-ASCII.
fn string_body() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[a-z ]{1,6}",
            Just("\\n".to_string()),
            Just("\\\"".to_string()),
            Just("\\\\".to_string()),
            Just("\\/".to_string()),
            Just("\\b\\f\\r\\t".to_string()),
            Just("\\u00e9".to_string()),
            Just("\\u0000".to_string()),
            Just("\\uD83D\\uDE00".to_string()),
            Just("\\uD83D".to_string()),
            Just("\\uDE00".to_string()),
            Just("\\uD83Dx".to_string()),
            Just("\\u12".to_string()),
            Just("\\d".to_string()),
            Just("\\'".to_string()),
            Just("\n".to_string()),
            Just("\t".to_string()),
            Just("\u{1}".to_string()),
            Just("é€😀".to_string()),
            Just("'".to_string()),
        ],
        0..4,
    )
    .prop_map(|parts| parts.concat())
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => string_body().prop_map(|s| format!("\"{s}\"")),
        1 => string_body().prop_map(|s| format!("'{s}'")),
        2 => number(),
        1 => prop::sample::select(vec![
            "true", "false", "null", "True", "False", "None", "NaN", "Infinity", "-Infinity",
            "nul", "undefined",
        ])
        .prop_map(str::to_string),
    ]
}

/// Keys from a small set so that duplicates are common.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(vec!["a", "b", "name", "arguments", "city", "é"])
            .prop_map(|k| format!("\"{k}\"")),
        1 => Just("city".to_string()),
        1 => Just("'city'".to_string()),
        1 => string_body().prop_map(|s| format!("\"{s}\"")),
    ]
}

fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", " ", "\n", "\t", "\r\n  "])
}

/// A JSON-ish value: mostly valid, with the deviations the reader
/// classifies (trailing commas, missing separators, comments) mixed in.
fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            (
                prop::collection::vec((ws(), key(), ws(), inner.clone()), 0..5),
                prop::sample::select(vec!["", "", "", "", ",", " /* c */"]),
                ws(),
            )
                .prop_map(|(members, tail, w)| {
                    let body: Vec<String> = members
                        .into_iter()
                        .map(|(w1, k, w2, v)| format!("{w1}{k}{w2}:{w2}{v}"))
                        .collect();
                    let tail = if body.is_empty() { "" } else { tail };
                    format!("{{{}{tail}{w}}}", body.join(","))
                }),
            (
                prop::collection::vec((ws(), inner), 0..5),
                prop::sample::select(vec!["", "", "", "", ",", ";"]),
            )
                .prop_map(|(items, tail)| {
                    let body: Vec<String> =
                        items.into_iter().map(|(w, v)| format!("{w}{v}")).collect();
                    let tail = if body.is_empty() { "" } else { tail };
                    format!("[{}{tail}]", body.join(","))
                }),
        ]
    })
}

/// A payload as models write it around a value: whitespace, a fence, a cut.
fn payload() -> impl Strategy<Value = String> {
    (
        value(),
        ws(),
        prop::sample::select(vec!["", "", "", "```json\n", "```\n"]),
        prop::sample::select(vec!["", "", " trailing", "\n```", "}", "]", ";{}"]),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(v, w, fence, after, cut, do_cut)| {
            let mut s = format!("{w}{fence}{v}{w}{after}");
            if do_cut && !s.is_empty() {
                let mut at = cut.index(s.len());
                while !s.is_char_boundary(at) {
                    at -= 1;
                }
                s.truncate(at);
            }
            s
        })
}

/// Nesting around the depth cap (the reader: 128; serde_json: 127).
fn deep() -> impl Strategy<Value = String> {
    (120usize..136, any::<bool>()).prop_map(|(n, objects)| {
        if objects {
            format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n))
        } else {
            format!("{}1{}", "[".repeat(n), "]".repeat(n))
        }
    })
}

const BOTH: [Strictness; 2] = [Strictness::Strict, Strictness::Lenient];

fn same_reads(text: &str) {
    for s in BOTH {
        for at_end in [false, true] {
            assert_eq!(
                read_all(text, s, at_end),
                read_all_classifying(text, s, at_end),
                "read_all {s:?} at_end={at_end} of {text:?}"
            );
            assert_eq!(
                read_prefix(text, s, at_end),
                read_prefix_classifying(text, s, at_end),
                "read_prefix {s:?} at_end={at_end} of {text:?}"
            );
        }
    }
}

/// The JSON-payload extractors, each with its wrapper around a payload.
fn wrapped(payload: &str) -> Vec<(&'static str, String)> {
    vec![
        ("hermes", format!("<tool_call>\n{payload}\n</tool_call>")),
        ("hermes", format!("Sure.\n<tool_call>{payload}")),
        ("llama3", format!("<|python_tag|>{payload}")),
        ("llama3", format!("Here: {payload} done")),
        ("mistral", format!("[TOOL_CALLS] {payload}")),
        ("mistral", format!("[TOOL_CALLS]get_weather[ARGS]{payload}")),
        ("json", payload.to_string()),
        ("marker", format!("TOOL_CALL: {payload}")),
    ]
}

fn same_candidates(payload: &str) {
    for (mode, text) in wrapped(payload) {
        let Some(x) = by_name(mode) else {
            panic!("no built-in mode {mode}");
        };
        for s in BOTH {
            let input = Input::new(&text);
            let fast = x.extract(&input, s);
            let slow = without_fast_path(|| x.extract(&input, s));
            assert_eq!(fast, slow, "{mode} {s:?} on {text:?}");
        }
    }
}

/// A call object with generated arguments: the shape the extractors read.
fn call_payload() -> impl Strategy<Value = String> {
    (
        value(),
        prop::sample::select(vec![
            "arguments",
            "parameters",
            "args",
            "arguments\": {}, \"x",
        ]),
        any::<bool>(),
    )
        .prop_map(|(args, key, list)| {
            let call = format!("{{\"name\": \"get_weather\", \"{key}\": {args}}}");
            if list {
                format!("[{call}, {{\"name\": \"get_time\", \"arguments\": {{}}}}]")
            } else {
                call
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fast_path_agrees_with_the_classifying_reader(text in payload()) {
        same_reads(&text);
    }

    #[test]
    fn fast_path_agrees_on_deep_nesting(text in deep()) {
        same_reads(&text);
    }

    #[test]
    fn extractors_find_the_same_candidates_with_and_without_the_fast_path(
        p in prop_oneof![call_payload(), payload()]
    ) {
        same_candidates(&p);
    }
}

/// The cases the fast path must hand to the reader, one by one: each is
/// read by the classifying reader (same result as without the fast path)
/// and gives the reader's own verdict.
#[test]
fn what_serde_json_reads_differently_goes_to_the_reader() {
    use toolgate_core::FailureKind;
    for (text, kind) in [
        (r#"{"a": 1, "a": 2}"#, Some(FailureKind::Malformed)),
        (r#"{"a": 1.9999999999999999}"#, Some(FailureKind::Malformed)),
        (
            r#"{"a": 18446744073709551616}"#,
            Some(FailureKind::Malformed),
        ),
        (
            r#"{"a": -9223372036854775809}"#,
            Some(FailureKind::Malformed),
        ),
        (r#"{"a": 1e-400}"#, Some(FailureKind::Malformed)),
        (r#"{"a": "\uD800"}"#, Some(FailureKind::Escaping)),
        (r#"{"a": 1,}"#, Some(FailureKind::Malformed)),
        (r#"{"a": NaN}"#, Some(FailureKind::Malformed)),
        (r#"{"a": -0}"#, None),
        (r#"{"a": 0.5}"#, None),
    ] {
        same_reads(text);
        let got = read_all(text, Strictness::Strict, false);
        assert_eq!(got.as_ref().err().map(|f| f.kind), kind, "{text}");
    }
    // `-0` stays the integer 0 (serde_json would read the float -0.0).
    let zero = read_all(r#"{"a": -0}"#, Strictness::Strict, false).unwrap();
    assert!(zero.value["a"].is_i64() || zero.value["a"].is_u64());
    // Nesting: 128 levels read (serde_json stops at 127), 129 do not.
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(read_all(&deep(128), Strictness::Strict, false).is_ok());
    assert!(read_all(&deep(129), Strictness::Strict, false).is_err());
}
