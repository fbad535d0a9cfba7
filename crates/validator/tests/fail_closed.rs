//! The fail-closed invariant, under random and mutated candidates.
//!
//! Whatever the extractors hand over, an `Execute` decision of the default
//! profile only ever carries calls that (a) name an allowlisted tool, (b) pass
//! `Toolset::check`, and (c) come from selected live candidates that parsed
//! without repairs, exactly as the model wrote them (nothing added).
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolgate_core::{
    Candidate, Decision, FailureKind, ParseFailure, Repair, Source, Span, ToolDef,
};
use toolgate_formats::{Extractor, Input, Strictness};
use toolgate_validator::{Profile, Toolset, pipeline};

/// Returns fixed candidates whatever the input.
struct Fixed {
    name: &'static str,
    candidates: Vec<Candidate>,
}

impl Extractor for Fixed {
    fn name(&self) -> &str {
        self.name
    }
    fn example(&self) -> &str {
        "<tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>"
    }
    fn describe(&self) -> &str {
        "fixed candidates"
    }
    fn extract(&self, _input: &Input<'_>, _strictness: Strictness) -> Vec<Candidate> {
        self.candidates.clone()
    }
}

fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "get_weather".into(),
            description: None,
            parameters: Some(json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "minLength": 1},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14},
                    "unit": {"enum": ["C", "F"]},
                    "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]}
                },
                "required": ["city"]
            })),
        },
        ToolDef {
            name: "now".into(),
            description: None,
            parameters: None,
        },
        ToolDef {
            name: "remote".into(),
            description: None,
            parameters: Some(json!({"$ref": "https://example.com/schema.json"})),
        },
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-20i64..20).prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-zA-Z0-9 \\\\\"]{0,8}".prop_map(Value::String),
        prop_oneof![Just("C"), Just("F"), Just("K"), Just("Antwerp"), Just("")]
            .prop_map(|s| json!(s)),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("city".to_string()),
        Just("days".to_string()),
        Just("unit".to_string()),
        Just("where".to_string()),
        Just("lat".to_string()),
        "[a-z]{1,5}",
    ]
}

/// Random argument objects, biased towards near-valid ones.
fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    let valid = (
        prop_oneof![Just(json!("Antwerp")), Just(json!("")), Just(json!(42))],
        prop::option::of(prop_oneof![
            Just(json!(3)),
            Just(json!("3")),
            Just(json!(0)),
            Just(json!(2.5))
        ]),
        prop::option::of(prop_oneof![
            Just(json!({"lat": 51.2})),
            Just(json!({})),
            Just(json!({"lat": 1, "x": 2}))
        ]),
        prop::option::of((key(), leaf())),
        any::<bool>(),
    )
        .prop_map(|(city, days, at, extra, drop_city)| {
            let mut m = Map::new();
            if !drop_city {
                m.insert("city".into(), city);
            }
            if let Some(d) = days {
                m.insert("days".into(), d);
            }
            if let Some(w) = at {
                m.insert("where".into(), w);
            }
            if let Some((k, v)) = extra {
                m.insert(k, v);
            }
            m
        });
    let random =
        prop::collection::btree_map(key(), value(), 0..4).prop_map(|m| m.into_iter().collect());
    let exact = prop_oneof![
        Just(json!({"city": "Antwerp"})),
        Just(json!({"city": "Ghent", "days": 3, "unit": "C"})),
        Just(json!({"city": "Liège", "where": {"lat": 50.6}})),
    ]
    .prop_map(|v| v.as_object().cloned().unwrap_or_default());
    prop_oneof![4 => exact, 3 => valid, 2 => random, 1 => Just(Map::new())]
}

fn name() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        6 => Just(Some("get_weather".to_string())),
        2 => Just(Some("now".to_string())),
        1 => Just(Some("remote".to_string())),
        1 => Just(Some("get_wether".to_string())),
        1 => Just(Some("rm_rf".to_string())),
        1 => Just(None),
    ]
}

fn repair() -> impl Strategy<Value = Repair> {
    prop_oneof![
        Just(Repair::SingleQuotes),
        Just(Repair::TrailingCommas),
        Just(Repair::PythonLiterals),
        Just(Repair::DoubleEncodedArguments),
    ]
}

fn candidate(mode: &'static str) -> impl Strategy<Value = Candidate> {
    (
        name(),
        prop_oneof![
            12 => arguments().prop_map(Ok),
            1 => Just(Err(FailureKind::Truncated)),
            1 => Just(Err(FailureKind::Escaping)),
            1 => Just(Err(FailureKind::Malformed)),
        ],
        prop_oneof![5 => Just(Vec::new()), 1 => prop::collection::vec(repair(), 1..3)],
        prop_oneof![5 => Just(Source::Output), 1 => Just(Source::OutputReasoning), 1 => Just(Source::ReasoningField)],
        0usize..3000,
    )
        .prop_map(move |(name, args, repairs, source, size)| {
            let arguments = args.map_err(|kind| ParseFailure::new(kind, "broken payload", 0));
            let raw = match &arguments {
                Ok(a) => {
                    let mut r = Value::Object(a.clone()).to_string();
                    if size > 2500 {
                        r.push_str(&" ".repeat(size));
                    }
                    r
                }
                Err(_) => "{\"city\": ".to_string(),
            };
            Candidate {
                mode: mode.into(),
                source,
                span: Span::new(0, raw.len()),
                raw,
                name,
                arguments: arguments.map(std::sync::Arc::new),
                repairs,
            }
        })
}

fn output() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        3 => Just("need_tool: yes\n{...}".to_string()),
        3 => Just("CALL_TOOL\n[...]".to_string()),
        1 => Just("I could CALL_TOOL here".to_string()),
        1 => "[a-z :\n]{0,20}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn execute_only_carries_checked_calls(
        tag in prop::collection::vec(candidate("tag"), 0..3),
        json_ in prop::collection::vec(candidate("json"), 0..3),
        bracket in prop::collection::vec(candidate("bracket"), 0..3),
        text in output(),
    ) {
        let extractors: Vec<Box<dyn Extractor>> = vec![
            Box::new(Fixed { name: "tag", candidates: tag.clone() }),
            Box::new(Fixed { name: "json", candidates: json_.clone() }),
            Box::new(Fixed { name: "bracket", candidates: bracket.clone() }),
        ];
        let defs = tools();
        let toolset = Toolset::new(&defs);
        let profile = Profile::default();
        let r = pipeline::run(&profile, &extractors, &Input::new(&text), &toolset, None);

        let any_live = [&tag, &json_, &bracket].iter().any(|cs| cs.iter().any(Candidate::is_live));
        prop_assert_eq!(matches!(r.decision, Decision::NoCall), !any_live);

        if let Decision::Execute { calls } = &r.decision {
            prop_assert!(!calls.is_empty());
            for call in calls {
                prop_assert!(toolset.is_allowed(&call.name), "not allowlisted: {}", call.name);
                prop_assert!(toolset.check(call).is_ok(), "fails its schema: {:?}", call);
                prop_assert!(call.name != "remote", "an unusable tool executed");
            }
            // Every selected live candidate parsed, without repairs, and the
            // calls are exactly theirs.
            let selected: Vec<&Candidate> = match r.parse_mode.as_deref() {
                Some("tag") => tag.iter(),
                Some("json") => json_.iter(),
                Some("bracket") => bracket.iter(),
                other => panic!("execute without a selected mode: {other:?}"),
            }
            .filter(|c| c.is_live())
            .collect();
            prop_assert!(selected.iter().all(|c| c.failure().is_none() && c.repairs.is_empty()));
            let theirs: Vec<_> = selected.iter().filter_map(|c| c.call()).collect();
            prop_assert_eq!(&theirs, calls);
            if r.fallback_used {
                prop_assert_eq!(calls.len(), 1);
                prop_assert!(text.lines().any(|l| l.trim() == "need_tool: yes" || l.trim() == "CALL_TOOL"));
            }
        }
        // The telemetry agrees with the decision.
        prop_assert_eq!(r.telemetry.decision.as_str(), r.decision.kind());
        prop_assert_eq!(r.telemetry.gate, r.decision.gate());
    }
}
