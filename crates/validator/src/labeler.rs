//! The labeler: exactly one label per (transcript, mode), SPEC §5.
//!
//! The rules are checked in this order over the whole set of *live*
//! candidates (candidates found only inside reasoning are ignored entirely);
//! the first that matches wins:
//!
//! | # | label | rule |
//! |---|---|---|
//! | 1 | `no_call` | a call was expected (or `expect` is absent) and there is no candidate |
//! | 2 | `spurious_call` | `expect` says no call and there is a candidate |
//! | 3 | `parallel_collapse` | N ≥ 2 calls expected, 1 ≤ candidates < N |
//! | 4 | `spurious_call` | more candidates than expected calls |
//! | 5 | `truncation` | a `truncated` failure, or `finish_reason` is `length` and the last candidate failed to parse (it is the one open at the end) |
//! | 6 | `escaping_error` | an `escaping` failure, or a parsed string value (any depth) still carries a literal `\uXXXX` or `\"` |
//! | 7 | `malformed_json` | any other failure (including a candidate whose tool name could not be read) |
//! | 8 | `wrong_tool` | a name is not allowlisted, or (with `expect`) the multiset of names differs from the expected one |
//! | 9–12 | schema labels | each call against its tool's strict schema, then against the expectation's `arguments` schema |
//!
//! **Tools unknown** (SPEC §4; [`Toolset::unknown`]): the transcript has no
//! tool list, so rule 8 is decided only from the expectation and rules 9–12
//! only from the expectation's `arguments` schemas — the model is not blamed
//! for a list nobody captured. (The pipeline still rejects at `allowlist`.)
//!
//! Without `expect`, "one or more calls of any allowlisted tool" is expected:
//! rules 3 and 4 do not apply and only the tool schemas are checked.
//!
//! For rules 9–12 each call is matched with an expected call of the same
//! name; when several expected calls share a name, an assignment in which
//! every call passes its expectation is searched for (any order). Across all
//! calls the label is the first by rule order (a missing required argument
//! in one call beats an undeclared one in another).

use crate::toolset::Toolset;
use crate::toolset::{Schema, Violation, clip};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use toolgate_core::{Call, Candidate, Expectation, ExpectedCall, FailureKind, Label};

/// A label and the reason it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labeled {
    /// The label.
    pub label: Label,
    /// Why (empty for `pass`).
    pub reason: String,
}

impl Labeled {
    fn new(label: Label, reason: impl Into<String>) -> Labeled {
        Labeled {
            label,
            reason: reason.into(),
        }
    }
}

/// Most same-name calls whose assignment to expected calls is searched; more
/// are paired in order (the search is quadratic in their number).
const MAX_ASSIGNMENT: usize = 32;

/// Deepest level the escape-artifact scan visits.
const MAX_SCAN_DEPTH: usize = 256;

/// Labels `candidates` (reasoning-only ones are ignored). Indices in the
/// reason (`candidate #i`) are positions in `candidates`.
pub fn label(
    candidates: &[Candidate],
    expect: Option<&Expectation>,
    toolset: &Toolset,
    hit_length_limit: bool,
) -> Labeled {
    let prepared = Prepared::new(candidates);
    label_prepared(&prepared, expect, toolset, hit_length_limit)
}

/// The live candidates of a set, their calls, and each call's schema check
/// computed at most once: the pipeline labels and gates the same
/// candidates, and both need the calls and their checks.
pub(crate) struct Prepared<'c> {
    /// The live candidates with their index in the set.
    pub live: Vec<(usize, &'c Candidate)>,
    /// The calls of the live candidates that have a name and parsed
    /// arguments, with the candidate's index.
    pub calls: Vec<(usize, CallRef<'c>)>,
}

impl<'c> Prepared<'c> {
    pub(crate) fn new(candidates: &'c [Candidate]) -> Prepared<'c> {
        let live: Vec<(usize, &Candidate)> = candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.is_live())
            .collect();
        let calls: Vec<(usize, CallRef<'c>)> = live
            .iter()
            .filter_map(|&(i, c)| match (&c.name, &c.arguments) {
                (Some(name), Ok(arguments)) => Some((
                    i,
                    CallRef {
                        name,
                        arguments,
                        check: std::cell::OnceCell::new(),
                    },
                )),
                _ => None,
            })
            .collect();
        Prepared { live, calls }
    }

    /// `toolset.check` of `self.calls[k]`, computed once.
    pub(crate) fn check(&self, toolset: &Toolset, k: usize) -> &Result<(), Violation> {
        let call = &self.calls[k].1;
        call.check
            .get_or_init(|| toolset.check_parts(call.name, call.arguments))
    }

    /// The calls, owned.
    pub(crate) fn into_calls(self) -> Vec<Call> {
        self.calls.into_iter().map(|(_, c)| c.into_call()).collect()
    }
}

/// A candidate's call, borrowed: labels and gates read it, only a decision
/// to execute needs it owned.
#[derive(Clone)]
pub(crate) struct CallRef<'c> {
    pub name: &'c str,
    /// The candidate's own (shared) arguments: executing them is a
    /// reference count, not a copy of the map.
    pub arguments: &'c std::sync::Arc<Map<String, Value>>,
    /// `toolset.check` of this call, once asked (kept here rather than in
    /// a vector of its own: one allocation less per output).
    check: std::cell::OnceCell<Result<(), Violation>>,
}

impl CallRef<'_> {
    fn into_call(self) -> Call {
        Call {
            name: self.name.to_string(),
            arguments: std::sync::Arc::clone(self.arguments),
        }
    }
}

/// [`label`] of prepared candidates.
pub(crate) fn label_prepared(
    prepared: &Prepared<'_>,
    expect: Option<&Expectation>,
    toolset: &Toolset,
    hit_length_limit: bool,
) -> Labeled {
    label_prepared_as::<true>(prepared, expect, toolset, hit_length_limit)
}

/// [`label`]'s label alone: the same rules, no reason formatted (the batch
/// fast path, [`crate::outcome`], keeps only the label of each mode).
pub(crate) fn label_only(
    c: &[Candidate],
    e: Option<&Expectation>,
    t: &Toolset,
    limit: bool,
) -> Label {
    label_prepared_as::<false>(&Prepared::new(c), e, t, limit).label
}

/// [`label_prepared`], with the reason written only when `REASONS` (else
/// it is empty): the rules and so the label do not depend on it.
fn label_prepared_as<const REASONS: bool>(
    prepared: &Prepared<'_>,
    expect: Option<&Expectation>,
    toolset: &Toolset,
    hit_length_limit: bool,
) -> Labeled {
    // A label and its reason, the reason formatted only when `REASONS`.
    macro_rules! labeled {
        ($label:expr, $($reason:tt)+) => {
            Labeled {
                label: $label,
                reason: if REASONS { format!($($reason)+) } else { String::new() },
            }
        };
    }
    let live = &prepared.live;
    let expected = expect.map(|e| e.calls.as_slice());

    // Rules 1–4: counts.
    match expected {
        None if live.is_empty() => {
            return labeled!(
                Label::NoCall,
                "a tool call was expected and the mode found no candidate"
            );
        }
        Some([]) if live.is_empty() => return Labeled::new(Label::Pass, ""),
        Some([]) => {
            return labeled!(
                Label::SpuriousCall,
                "no call was expected but the mode found {} candidate(s), the first at #{}",
                live.len(),
                live[0].0
            );
        }
        Some(calls) if live.is_empty() => {
            return labeled!(
                Label::NoCall,
                "{} call(s) were expected and the mode found no candidate",
                calls.len(),
            );
        }
        Some(calls) if calls.len() >= 2 && live.len() < calls.len() => {
            return labeled!(
                Label::ParallelCollapse,
                "{} calls were expected but the mode found {}",
                calls.len(),
                live.len(),
            );
        }
        Some(calls) if live.len() > calls.len() => {
            return labeled!(
                Label::SpuriousCall,
                "{} call(s) were expected but the mode found {} candidates",
                calls.len(),
                live.len(),
            );
        }
        _ => {}
    }

    // Rule 5: truncation.
    for &(i, c) in live {
        if let Some(f) = c.failure()
            && f.kind == FailureKind::Truncated
        {
            return labeled!(
                Label::Truncation,
                "candidate #{i}{} is cut off: {}",
                name_suffix(c),
                clip(&f.message, 160),
            );
        }
    }
    if hit_length_limit
        && let Some(&(i, c)) = live.last()
        && let Some(f) = c.failure()
    {
        return labeled!(
            Label::Truncation,
            "finish_reason is `length` and candidate #{i}{} is open at the end: {}",
            name_suffix(c),
            clip(&f.message, 160),
        );
    }

    // Rule 6: escaping.
    for &(i, c) in live {
        if let Some(f) = c.failure()
            && f.kind == FailureKind::Escaping
        {
            return labeled!(
                Label::EscapingError,
                "candidate #{i}{}: {}",
                name_suffix(c),
                clip(&f.message, 160),
            );
        }
    }
    for &(i, c) in live {
        if let Ok(args) = &c.arguments
            && let Some((path, artifact)) = escape_artifact(args)
        {
            return labeled!(
                Label::EscapingError,
                "candidate #{i}{}: the string at `{path}` still carries the escape artifact `{artifact}`",
                name_suffix(c),
            );
        }
    }

    // Rule 7: any other failure.
    for &(i, c) in live {
        if let Some(f) = c.failure() {
            return labeled!(
                Label::MalformedJson,
                "candidate #{i}{}: {}",
                name_suffix(c),
                clip(&f.message, 160),
            );
        }
        if c.name.is_none() {
            return labeled!(
                Label::MalformedJson,
                "candidate #{i}: no tool name could be read"
            );
        }
    }

    // Every live candidate now has a name and parsed arguments.
    let calls = &prepared.calls;

    // Rule 8: wrong tool (the allowlist only when the tool list is known).
    for (i, call) in calls.iter().filter(|_| toolset.is_known()) {
        if !toolset.is_allowed(call.name) {
            let hint = match REASONS.then(|| toolset.closest(call.name)).flatten() {
                Some(n) => format!(" (did you mean `{n}`?)"),
                None => String::new(),
            };
            return labeled!(
                Label::WrongTool,
                "candidate #{i} calls `{}`, which is not allowlisted{hint}",
                clip(call.name, 80),
            );
        }
    }
    if let Some(expected) = expected {
        // One call against one expected call (the usual case) is compared
        // without collecting and sorting the names.
        let same = match (calls.as_slice(), expected) {
            ([(_, call)], [one]) => call.name == one.name,
            _ => {
                let (got, want) = sorted_names(calls, expected);
                got == want
            }
        };
        if !same {
            let (got, want) = sorted_names(calls, expected);
            return labeled!(
                Label::WrongTool,
                "the calls are [{}] but [{}] were expected",
                got.join(", "),
                want.join(", "),
            );
        }
    }

    // Rules 9–12: schemas.
    let mut worst: Option<(Violation, String)> = None;
    let mut consider = |v: Violation, context: String| {
        if worst.as_ref().is_none_or(|(w, _)| v.label < w.label) {
            worst = Some((v, context));
        }
    };
    // The tool schemas only when the tool list is known.
    for (k, (i, _)) in calls.iter().enumerate().filter(|_| toolset.is_known()) {
        if let Err(v) = prepared.check(toolset, k) {
            let context = if REASONS {
                format!("candidate #{i}")
            } else {
                String::new()
            };
            consider(v.clone(), context);
        }
    }
    if let Some(expected) = expected {
        for (v, context) in expectation_violations(calls, expected) {
            consider(v, context);
        }
    }
    match worst {
        Some((v, context)) => labeled!(v.label, "{context}: {}", v.reason),
        None => Labeled::new(Label::Pass, ""),
    }
}

/// The names of `calls` and of `expected`, each list sorted (rule 8 compares
/// them as multisets).
fn sorted_names<'a>(
    calls: &[(usize, CallRef<'a>)],
    expected: &'a [ExpectedCall],
) -> (Vec<&'a str>, Vec<&'a str>) {
    let mut got: Vec<&str> = calls.iter().map(|(_, c)| c.name).collect();
    let mut want: Vec<&str> = expected.iter().map(|e| e.name.as_str()).collect();
    got.sort_unstable();
    want.sort_unstable();
    (got, want)
}

fn name_suffix(c: &Candidate) -> String {
    match &c.name {
        Some(n) => format!(" (`{}`)", clip(n, 80)),
        None => String::new(),
    }
}

/// The violations of the best assignment of calls to expected calls of the
/// same name (names already match as multisets). Empty when some assignment
/// lets every call pass its expectation.
fn expectation_violations(
    calls: &[(usize, CallRef<'_>)],
    expected: &[ExpectedCall],
) -> Vec<(Violation, String)> {
    // Only an expectation's `arguments` schema can be violated.
    if expected.iter().all(|e| e.arguments.is_none()) {
        return Vec::new();
    }
    let mut by_name: BTreeMap<&str, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (ci, (_, call)) in calls.iter().enumerate() {
        by_name.entry(call.name).or_default().0.push(ci);
    }
    for (ei, e) in expected.iter().enumerate() {
        by_name.entry(e.name.as_str()).or_default().1.push(ei);
    }
    let mut out = Vec::new();
    // The expectation's schemas share one pattern budget, as a tool list's do.
    let mut budget = crate::toolset::PATTERN_BUDGET;
    for (call_ids, exp_ids) in by_name.values() {
        // result[a][b]: call call_ids[a] against expectation exp_ids[b].
        let schemas: Vec<Option<Schema>> = exp_ids
            .iter()
            .map(|&ei| {
                expected[ei]
                    .arguments
                    .as_ref()
                    .map(|a| Schema::as_written_within(a, &mut budget))
            })
            .collect();
        if call_ids.len() > MAX_ASSIGNMENT {
            // Too many same-name calls to search assignments (quadratic):
            // pair them in order.
            for (&ci, schema) in call_ids.iter().zip(&schemas) {
                let (idx, call) = &calls[ci];
                if let Some(Err(v)) = schema.as_ref().map(|s| s.check(call.arguments)) {
                    out.push((v, against_expectation(*idx, call)));
                }
            }
            continue;
        }
        let results: Vec<Vec<Result<(), Violation>>> = call_ids
            .iter()
            .map(|&ci| {
                schemas
                    .iter()
                    .map(|s| {
                        s.as_ref()
                            .map_or(Ok(()), |s| s.check(calls[ci].1.arguments))
                    })
                    .collect()
            })
            .collect();
        let matched = max_matching(&results);
        let free_exps: Vec<usize> = (0..exp_ids.len())
            .filter(|b| !matched.contains(&Some(*b)))
            .collect();
        let mut free = free_exps.into_iter();
        for (a, m) in matched.iter().enumerate() {
            if m.is_some() {
                continue;
            }
            let Some(b) = free.next() else { continue };
            if let Err(v) = &results[a][b] {
                let (idx, call) = &calls[call_ids[a]];
                out.push((v.clone(), against_expectation(*idx, call)));
            }
        }
    }
    out
}

fn against_expectation(idx: usize, call: &CallRef<'_>) -> String {
    format!(
        "candidate #{idx} (`{}`) against the expectation",
        clip(call.name, 80)
    )
}

/// A maximum bipartite matching (Kuhn's algorithm): `m[a] = Some(b)` when
/// call `a` is assigned expectation `b` and passes it.
fn max_matching(results: &[Vec<Result<(), Violation>>]) -> Vec<Option<usize>> {
    let n_exp = results.first().map_or(0, Vec::len);
    let mut owner: Vec<Option<usize>> = vec![None; n_exp];
    for a in 0..results.len() {
        let mut seen = vec![false; n_exp];
        augment(a, results, &mut owner, &mut seen);
    }
    let mut m = vec![None; results.len()];
    for (b, o) in owner.iter().enumerate() {
        if let Some(a) = o {
            m[*a] = Some(b);
        }
    }
    m
}

fn augment(
    a: usize,
    results: &[Vec<Result<(), Violation>>],
    owner: &mut [Option<usize>],
    seen: &mut [bool],
) -> bool {
    for b in 0..owner.len() {
        if results[a][b].is_err() || seen[b] {
            continue;
        }
        seen[b] = true;
        // Recursion depth is bounded by the number of calls of one name.
        if owner[b].is_none_or(|other| augment(other, results, owner, seen)) {
            owner[b] = Some(a);
            return true;
        }
    }
    false
}

/// The first string value (any depth, iteratively) that still carries a
/// literal `\uXXXX` or `\"`, with its JSON pointer and the artifact.
fn escape_artifact(args: &Map<String, Value>) -> Option<(String, String)> {
    // Most arguments carry none: look first without building any path.
    if !has_escape_artifact(args) {
        return None;
    }
    let mut stack: Vec<(String, &Value, usize)> = args
        .iter()
        .rev()
        .map(|(k, v)| (format!("/{}", pointer_segment(k)), v, 0))
        .collect();
    while let Some((path, v, depth)) = stack.pop() {
        if depth > MAX_SCAN_DEPTH {
            continue;
        }
        match v {
            Value::String(s) => {
                if let Some(a) = artifact_in(s) {
                    return Some((path, a));
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((format!("{path}/{i}"), item, depth + 1));
                }
            }
            Value::Object(map) => {
                for (k, item) in map.iter().rev() {
                    stack.push((format!("{path}/{}", pointer_segment(k)), item, depth + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// A literal `\"` or `\u` followed by four hex digits in `s`.
/// Whether [`escape_artifact`] finds anything: the same walk (same depth
/// bound), without the paths.
fn has_escape_artifact(args: &Map<String, Value>) -> bool {
    // Flat arguments (no array or object value, most calls): the values
    // themselves, with no stack to allocate.
    if !args
        .values()
        .any(|v| matches!(v, Value::Array(_) | Value::Object(_)))
    {
        return args
            .values()
            .any(|v| matches!(v, Value::String(s) if artifact_in(s).is_some()));
    }
    let mut stack: Vec<(&Value, usize)> = args.values().map(|v| (v, 0)).collect();
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_SCAN_DEPTH {
            continue;
        }
        match v {
            Value::String(s) if artifact_in(s).is_some() => return true,
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|item| (item, depth + 1))),
            _ => {}
        }
    }
    false
}

fn artifact_in(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(pos) = s[from..].find('\\') {
        let i = from + pos;
        match b.get(i + 1) {
            Some(b'"') => return Some("\\\"".into()),
            Some(b'u') if b.len() >= i + 6 && b[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) => {
                return Some(s[i..i + 6].to_string());
            }
            _ => {}
        }
        from = i + 1;
    }
    None
}

fn pointer_segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::FailureKind;

    fn run(cands: &[Candidate], e: Option<&Expectation>) -> Labeled {
        let tools = Toolset::new(&weather_tools());
        let labeled = label(cands, e, &tools, false);
        // The fast path's label, without reasons, is the same.
        assert_eq!(label_only(cands, e, &tools, false), labeled.label);
        labeled
    }

    fn weather(args: serde_json::Value) -> Candidate {
        ok("hermes", "get_weather", args)
    }

    fn one_weather() -> Expectation {
        expect(&[("get_weather", None)])
    }

    #[test]
    fn rule_1_no_call_when_a_call_was_expected() {
        let l = run(&[], Some(&one_weather()));
        assert_eq!(l.label, Label::NoCall);
        assert_eq!(
            l.reason,
            "1 call(s) were expected and the mode found no candidate"
        );
        // Absent expect: a call is expected.
        assert_eq!(run(&[], None).label, Label::NoCall);
    }

    #[test]
    fn rule_1_reasoning_only_candidates_do_not_count() {
        let c = in_reasoning(weather(json!({"city": "Antwerp"})));
        assert_eq!(
            run(std::slice::from_ref(&c), Some(&one_weather())).label,
            Label::NoCall
        );
        // ...nor for rule 2: no call expected, only a reasoning candidate.
        assert_eq!(run(&[c], Some(&expect(&[]))).label, Label::Pass);
    }

    #[test]
    fn a_set_without_live_candidates_labels_as_the_empty_set() {
        // The fast path reuses the empty set's label for such a set.
        let tools = Toolset::new(&weather_tools());
        let hidden = in_reasoning(ok("hermes", "nope", json!({"x": "\\u00e9"})));
        let two = expect(&[("get_weather", None), ("get_weather", None)]);
        for e in [None, Some(expect(&[])), Some(one_weather()), Some(two)] {
            for limit in [false, true] {
                let empty = label_only(&[], e.as_ref(), &tools, limit);
                let hidden = label_only(std::slice::from_ref(&hidden), e.as_ref(), &tools, limit);
                assert_eq!(hidden, empty);
            }
        }
        assert_eq!(label_only(&[], None, &tools, true), Label::NoCall);
        assert_eq!(
            label_only(&[], Some(&expect(&[])), &tools, false),
            Label::Pass
        );
    }

    #[test]
    fn rule_2_spurious_call_when_no_call_was_expected() {
        let l = run(&[weather(json!({"city": "A"}))], Some(&expect(&[])));
        assert_eq!(l.label, Label::SpuriousCall);
        // Of any quality: even a broken candidate.
        let broken = failed("hermes", None, FailureKind::Malformed, "bad");
        assert_eq!(
            run(&[broken], Some(&expect(&[]))).label,
            Label::SpuriousCall
        );
    }

    #[test]
    fn no_call_expected_and_none_found_is_pass() {
        let l = run(&[], Some(&expect(&[])));
        assert_eq!(l, Labeled::new(Label::Pass, ""));
    }

    #[test]
    fn rule_3_parallel_collapse() {
        let two = expect(&[("get_weather", None), ("get_weather", None)]);
        let l = run(&[weather(json!({"city": "A"}))], Some(&two));
        assert_eq!(l.label, Label::ParallelCollapse);
        assert_eq!(l.reason, "2 calls were expected but the mode found 1");
        // A fused hybrid counts as one candidate even when it failed to parse.
        let fused = failed(
            "hermes",
            Some("get_weather"),
            FailureKind::Malformed,
            "trailing text",
        );
        assert_eq!(run(&[fused], Some(&two)).label, Label::ParallelCollapse);
    }

    #[test]
    fn rule_4_more_candidates_than_expected_is_spurious() {
        let l = run(
            &[weather(json!({"city": "A"})), weather(json!({"city": "B"}))],
            Some(&one_weather()),
        );
        assert_eq!(l.label, Label::SpuriousCall);
        assert_eq!(
            l.reason,
            "1 call(s) were expected but the mode found 2 candidates"
        );
    }

    #[test]
    fn without_expect_rules_3_and_4_do_not_apply() {
        let two = [weather(json!({"city": "A"})), weather(json!({"city": "B"}))];
        assert_eq!(run(&two, None).label, Label::Pass);
        assert_eq!(run(&two[..1], None).label, Label::Pass);
    }

    #[test]
    fn rule_5_truncation() {
        let cut = failed(
            "hermes",
            Some("get_weather"),
            FailureKind::Truncated,
            "the output ends inside the payload",
        );
        let l = run(&[cut], Some(&one_weather()));
        assert_eq!(l.label, Label::Truncation);
        assert_eq!(
            l.reason,
            "candidate #0 (`get_weather`) is cut off: the output ends inside the payload"
        );
    }

    #[test]
    fn rule_5_length_limit_makes_the_last_failed_candidate_truncation() {
        let open = failed(
            "hermes",
            Some("get_weather"),
            FailureKind::Malformed,
            "expected `}`",
        );
        let ts = Toolset::new(&weather_tools());
        let e = one_weather();
        assert_eq!(
            label(std::slice::from_ref(&open), Some(&e), &ts, true).label,
            Label::Truncation
        );
        assert_eq!(
            label(&[open], Some(&e), &ts, false).label,
            Label::MalformedJson
        );
        // A failed candidate followed by a good one was not open at the end.
        let two = expect(&[("get_weather", None), ("get_weather", None)]);
        let first_bad = [
            failed("hermes", Some("get_weather"), FailureKind::Malformed, "x"),
            weather(json!({"city": "B"})),
        ];
        assert_eq!(
            label(&first_bad, Some(&two), &ts, true).label,
            Label::MalformedJson
        );
    }

    #[test]
    fn rule_6_escaping_failure() {
        let c = failed(
            "hermes",
            Some("get_weather"),
            FailureKind::Escaping,
            "invalid escape `\\q`",
        );
        assert_eq!(run(&[c], Some(&one_weather())).label, Label::EscapingError);
    }

    #[test]
    fn rule_6_surviving_escape_artifacts() {
        let quote = weather(json!({"city": "say \\\"hi\\\""}));
        let l = run(&[quote], Some(&one_weather()));
        assert_eq!(l.label, Label::EscapingError);
        assert_eq!(
            l.reason,
            "candidate #0 (`get_weather`): the string at `/city` still carries the escape artifact `\\\"`"
        );
        let unicode = weather(json!({"city": "Li\\u00e8ge", "days": 1}));
        assert_eq!(
            run(&[unicode], Some(&one_weather())).label,
            Label::EscapingError
        );
        let nested = ok(
            "hermes",
            "search_web",
            json!({"query": "q", "x": [{"y": "a\\u00E9"}]}),
        );
        assert_eq!(run(&[nested], None).label, Label::EscapingError);
        // A lone backslash or `\u` without four hex digits is not an artifact.
        let fine = weather(json!({"city": "C:\\temp \\u12"}));
        assert_eq!(run(&[fine], Some(&one_weather())).label, Label::Pass);
    }

    #[test]
    fn rule_7_other_failures_are_malformed_json() {
        let c = failed(
            "hermes",
            Some("get_weather"),
            FailureKind::Malformed,
            "expected `,`",
        );
        let l = run(&[c], Some(&one_weather()));
        assert_eq!(l.label, Label::MalformedJson);
        assert_eq!(l.reason, "candidate #0 (`get_weather`): expected `,`");
        let mut nameless = weather(json!({"city": "A"}));
        nameless.name = None;
        let l = run(&[nameless], Some(&one_weather()));
        assert_eq!(
            l,
            Labeled::new(
                Label::MalformedJson,
                "candidate #0: no tool name could be read"
            )
        );
    }

    #[test]
    fn rule_order_truncation_beats_escaping_beats_malformed() {
        let two = expect(&[("get_weather", None), ("get_weather", None)]);
        let m = failed("hermes", Some("get_weather"), FailureKind::Malformed, "m");
        let e = failed("hermes", Some("get_weather"), FailureKind::Escaping, "e");
        let t = failed("hermes", Some("get_weather"), FailureKind::Truncated, "t");
        assert_eq!(
            run(&[m.clone(), e.clone()], Some(&two)).label,
            Label::EscapingError
        );
        assert_eq!(run(&[e, t], Some(&two)).label, Label::Truncation);
        let unknown = ok("hermes", "rm_rf", json!({}));
        assert_eq!(run(&[unknown, m], Some(&two)).label, Label::MalformedJson);
    }

    #[test]
    fn rule_8_not_allowlisted_is_wrong_tool() {
        let l = run(&[ok("hermes", "get_wether", json!({"city": "A"}))], None);
        assert_eq!(l.label, Label::WrongTool);
        assert_eq!(
            l.reason,
            "candidate #0 calls `get_wether`, which is not allowlisted (did you mean `get_weather`?)"
        );
    }

    #[test]
    fn rule_8_allowlisted_but_not_the_expected_tool() {
        let l = run(
            &[ok("hermes", "search_web", json!({"query": "q"}))],
            Some(&one_weather()),
        );
        assert_eq!(l.label, Label::WrongTool);
        assert_eq!(
            l.reason,
            "the calls are [search_web] but [get_weather] were expected"
        );
    }

    #[test]
    fn rule_9_missing_required_from_tool_schema_or_expectation() {
        let l = run(&[weather(json!({"days": 2}))], Some(&one_weather()));
        assert_eq!(l.label, Label::MissingRequired);
        assert_eq!(
            l.reason,
            "candidate #0: `get_weather`: required argument `city` is missing at `/`"
        );
        let e = expect(&[("get_weather", Some(json!({"required": ["days"]})))]);
        assert_eq!(
            run(&[weather(json!({"city": "A"}))], Some(&e)).label,
            Label::MissingRequired
        );
    }

    #[test]
    fn rule_10_hallucinated_param() {
        let l = run(
            &[weather(json!({"city": "A", "unit": "C"}))],
            Some(&one_weather()),
        );
        assert_eq!(l.label, Label::HallucinatedParam);
        assert_eq!(
            l.reason,
            "candidate #0: `get_weather`: argument `/unit` is not declared by the schema"
        );
    }

    #[test]
    fn rule_11_type_coercion() {
        for bad in [
            json!({"city": "A", "days": "2"}),
            json!({"city": 42}),
            json!({"city": "A", "days": true}),
        ] {
            assert_eq!(
                run(&[weather(bad)], Some(&one_weather())).label,
                Label::TypeCoercion
            );
        }
    }

    #[test]
    fn rule_12_schema_violation_from_tool_schema_or_expectation() {
        let l = run(
            &[weather(json!({"city": "A", "days": 0}))],
            Some(&one_weather()),
        );
        assert_eq!(l.label, Label::SchemaViolation);
        let e = expect(&[(
            "get_weather",
            Some(json!({"properties": {"city": {"const": "Antwerp"}}})),
        )]);
        let l = run(&[weather(json!({"city": "Ghent"}))], Some(&e));
        assert_eq!(l.label, Label::SchemaViolation);
        assert!(
            l.reason.starts_with(
                "candidate #0 (`get_weather`) against the expectation: `/city` violates `const`"
            ),
            "{}",
            l.reason
        );
        assert_eq!(
            run(&[weather(json!({"city": "Antwerp"}))], Some(&e)).label,
            Label::Pass
        );
    }

    #[test]
    fn pass_when_nothing_matches() {
        let two = expect(&[("get_weather", None), ("search_web", None)]);
        let cands = [
            ok("hermes", "search_web", json!({"query": "q"})),
            weather(json!({"city": "A", "days": 3})),
        ];
        assert_eq!(run(&cands, Some(&two)), Labeled::new(Label::Pass, ""));
    }

    #[test]
    fn expected_calls_match_in_any_order_with_an_assignment() {
        let e = expect(&[
            (
                "get_weather",
                Some(json!({"properties": {"city": {"const": "Antwerp"}}})),
            ),
            (
                "get_weather",
                Some(json!({"properties": {"city": {"const": "Ghent"}}})),
            ),
        ]);
        let cands = [
            weather(json!({"city": "Ghent"})),
            weather(json!({"city": "Antwerp"})),
        ];
        assert_eq!(run(&cands, Some(&e)).label, Label::Pass);
        let wrong = [
            weather(json!({"city": "Ghent"})),
            weather(json!({"city": "Ghent"})),
        ];
        assert_eq!(run(&wrong, Some(&e)).label, Label::SchemaViolation);
    }

    #[test]
    fn many_same_name_calls_are_paired_in_order() {
        let n = MAX_ASSIGNMENT + 8;
        let cities: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        let exp: Vec<(&str, Option<serde_json::Value>)> = cities
            .iter()
            .map(|c| {
                (
                    "get_weather",
                    Some(json!({"properties": {"city": {"const": c}}})),
                )
            })
            .collect();
        let e = expect(&exp);
        let mut cands: Vec<Candidate> =
            cities.iter().map(|c| weather(json!({"city": c}))).collect();
        assert_eq!(run(&cands, Some(&e)).label, Label::Pass);
        cands[3] = weather(json!({"city": "elsewhere"}));
        let l = run(&cands, Some(&e));
        assert_eq!(l.label, Label::SchemaViolation);
        assert!(
            l.reason
                .starts_with("candidate #3 (`get_weather`) against the expectation"),
            "{}",
            l.reason
        );
    }

    // §9 Labels: single quotes, unquoted keys, Python literals are malformed in
    // strict mode (extractors report them as `malformed`); backslash escapes,
    // inner quotes, control characters and double-encoded arguments are
    // `escaping` failures.
    #[test]
    fn spec9_quote_style_is_malformed_backslashes_are_escaping() {
        for msg in [
            "single-quoted string",
            "unquoted key `city`",
            "Python literal `True`",
        ] {
            let c = failed("json", Some("get_weather"), FailureKind::Malformed, msg);
            assert_eq!(
                run(&[c], Some(&one_weather())).label,
                Label::MalformedJson,
                "{msg}"
            );
        }
        for msg in [
            "invalid escape `\\d`",
            "unescaped `\"` inside a string",
            "raw control character U+000A",
            "`arguments` is a JSON string holding JSON",
        ] {
            let c = failed("json", Some("get_weather"), FailureKind::Escaping, msg);
            assert_eq!(
                run(&[c], Some(&one_weather())).label,
                Label::EscapingError,
                "{msg}"
            );
        }
    }

    // §9 Labels: rules 9–11 apply at any depth, and across one call (and
    // across calls) a missing required key anywhere beats an undeclared key anywhere.
    #[test]
    fn spec9_rules_apply_at_any_depth_missing_beats_undeclared() {
        let tools = [tool(
            "book",
            json!({
                "type": "object",
                "properties": {
                    "who": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]},
                    "when": {"type": "string"}
                }
            }),
        )];
        let ts = Toolset::new(&tools);
        let l = |args| label(&[ok("x", "book", args)], None, &ts, false).label;
        assert_eq!(
            l(json!({"who": {"name": "A", "age": "3"}})),
            Label::TypeCoercion
        );
        assert_eq!(
            l(json!({"who": {"name": "A", "nick": "b"}})),
            Label::HallucinatedParam
        );
        assert_eq!(l(json!({"who": {}, "extra": 1})), Label::MissingRequired);
        assert_eq!(
            l(json!({"who": {"age": "x"}, "when": 5})),
            Label::MissingRequired
        );
        // Across calls: the worse rule wins whatever the order.
        let cands = [
            ok("x", "book", json!({"who": {"name": "A"}, "extra": 1})),
            ok("x", "book", json!({"who": {}})),
        ];
        assert_eq!(
            label(&cands, None, &ts, false).label,
            Label::MissingRequired
        );
    }

    // §9 Labels: a key matched by `additionalProperties: {schema}` is declared.
    #[test]
    fn spec9_additional_properties_schema_declares() {
        let ts = Toolset::new(&[tool(
            "tag",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
        )]);
        assert_eq!(
            label(
                &[ok("x", "tag", json!({"id": "1", "color": "red"}))],
                None,
                &ts,
                false
            )
            .label,
            Label::Pass
        );
        assert_eq!(
            label(
                &[ok("x", "tag", json!({"id": "1", "n": 2}))],
                None,
                &ts,
                false
            )
            .label,
            Label::TypeCoercion
        );
    }

    // §9 Labels: a failure inside anyOf/oneOf is schema_violation (even a type or required one).
    #[test]
    fn spec9_failure_inside_any_of_is_schema_violation() {
        let ts = Toolset::new(&[tool(
            "f",
            json!({
                "type": "object",
                "properties": {
                    "a": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                    "b": {"oneOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}]}
                }
            }),
        )]);
        assert_eq!(
            label(&[ok("x", "f", json!({"a": "1"}))], None, &ts, false).label,
            Label::SchemaViolation
        );
        assert_eq!(
            label(&[ok("x", "f", json!({"b": {}}))], None, &ts, false).label,
            Label::SchemaViolation
        );
        assert_eq!(
            label(
                &[ok("x", "f", json!({"a": null, "b": {"x": "y"}}))],
                None,
                &ts,
                false
            )
            .label,
            Label::Pass
        );
    }

    // §9 Labels: a tool whose schema has a remote $ref is unusable: schema_violation with that reason.
    #[test]
    fn spec9_remote_ref_is_schema_violation_with_reason() {
        let ts = Toolset::new(&[tool("f", json!({"$ref": "https://schemas.example/f.json"}))]);
        let l = label(&[ok("x", "f", json!({}))], None, &ts, false);
        assert_eq!(l.label, Label::SchemaViolation);
        assert_eq!(
            l.reason,
            "candidate #0: `f`: tool `f` is unusable: remote $ref `https://schemas.example/f.json` is never fetched"
        );
    }
}
