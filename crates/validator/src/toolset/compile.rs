//! Compiling a tool's schema into a [`Schema`]: the `jsonschema` validator
//! (no network, no file resolver; a remote `$ref` is found before compiling
//! and makes the tool unusable), the bounds on a schema's nesting and
//! expansion, the pattern regexes the walk needs, and the flat-schema
//! shortcut ([`Flat`]) that decides valid arguments of the commonest tool
//! schemas without the validator. [`Schema::check`] runs the validator,
//! the strict walk ([`super::walk`]) and the label mapping
//! ([`super::labels`]), and keeps the first violation by SPEC §5 order.

use super::labels::map_error;
use super::refs::{
    collect_anchors, in_place_cycle, members, remote_ref, resolve_local, subschemas,
    unfollowable_reference,
};
use super::walk::Plain;
use super::{Schema, Violation, clip};
use jsonschema::{Draft, PatternOptions, Validator};
use regex_automata::meta::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use toolgate_core::Label;

/// A flat object schema of scalar-typed properties — `{"type": "object",
/// "properties": {"city": {"type": "string"}, …}, "required": […],
/// "additionalProperties": false}`, with only `description`/`title` beside
/// — the shape most tool schemas have. Arguments whose every key is a
/// declared property holding a value of its type, with every required key
/// present, are valid under it in every draft, strict or not; for anything
/// else (a missing or undeclared key, a wrong type, a float where an
/// integer is declared) [`Flat::accepts`] says nothing and the validator
/// decides, with its own reasons.
pub(super) struct Flat {
    properties: Vec<(String, Scalar)>,
    required: Vec<String>,
}

#[derive(Clone, Copy)]
enum Scalar {
    String,
    Integer,
    Number,
    Boolean,
    Null,
}

impl Flat {
    fn of(schema: &Value) -> Option<Flat> {
        let obj = schema.as_object()?;
        let mut flat = Flat {
            properties: Vec::new(),
            required: Vec::new(),
        };
        let mut typed = false;
        for (k, v) in obj {
            match k.as_str() {
                "type" => {
                    if v != "object" {
                        return None;
                    }
                    typed = true;
                }
                "properties" => {
                    for (name, prop) in v.as_object()? {
                        flat.properties.push((name.clone(), Scalar::of(prop)?));
                    }
                }
                "required" => {
                    for r in v.as_array()? {
                        flat.required.push(r.as_str()?.to_string());
                    }
                }
                "additionalProperties" if *v == Value::Bool(false) => {}
                "description" | "title" => {}
                _ => return None,
            }
        }
        typed.then_some(flat)
    }

    /// Whether `arguments` are valid for sure (`false`: not known).
    fn accepts(&self, arguments: &Map<String, Value>) -> bool {
        // A few keys (most calls): compared in order, with no key hashed.
        let has = |r: &String| {
            if arguments.len() <= 8 {
                arguments.keys().any(|k| k == r)
            } else {
                arguments.contains_key(r)
            }
        };
        self.required.iter().all(has)
            && arguments.iter().all(|(k, v)| {
                self.properties
                    .iter()
                    .find(|(p, _)| p == k)
                    .is_some_and(|(_, t)| t.holds(v))
            })
    }
}

impl Scalar {
    /// `{"type": T}` (with a description or title at most) for a scalar T.
    fn of(prop: &Value) -> Option<Scalar> {
        let mut scalar = None;
        for (k, v) in prop.as_object()? {
            match k.as_str() {
                "type" => {
                    scalar = Some(match v.as_str()? {
                        "string" => Scalar::String,
                        "integer" => Scalar::Integer,
                        "number" => Scalar::Number,
                        "boolean" => Scalar::Boolean,
                        "null" => Scalar::Null,
                        _ => return None,
                    });
                }
                "description" | "title" => {}
                _ => return None,
            }
        }
        scalar
    }

    fn holds(self, v: &Value) -> bool {
        match self {
            Scalar::String => v.is_string(),
            // Integers as written (a float such as `1.0` is left to the
            // validator: drafts differ on it).
            Scalar::Integer => v.is_i64() || v.is_u64(),
            Scalar::Number => v.is_number(),
            Scalar::Boolean => v.is_boolean(),
            Scalar::Null => v.is_null(),
        }
    }
}

impl Schema {
    /// Compiles `schema` for strict checking: the schema as written plus
    /// undeclared properties rejected at any depth (the tool-schema rule).
    pub fn strict(schema: &Value) -> Schema {
        Schema::build(schema, true, true, &mut PATTERN_BUDGET.clone())
    }

    /// [`Schema::strict`], with `format` asserted (every draft) or not (as
    /// the draft says).
    pub fn strict_with(schema: &Value, assert_formats: bool) -> Schema {
        Schema::strict_within(schema, assert_formats, &mut PATTERN_BUDGET.clone())
    }

    /// [`Schema::strict_with`], its patterns charged to `budget` (bytes
    /// left of [`PATTERN_BUDGET`], shared by the schemas of one tool list).
    pub(crate) fn strict_within(
        schema: &Value,
        assert_formats: bool,
        budget: &mut usize,
    ) -> Schema {
        Schema::build(schema, true, assert_formats, budget)
    }

    /// Compiles `schema` to be checked exactly as written, without the
    /// undeclared-key walk. Used for an expectation's `arguments` schema,
    /// which states predicates about some arguments, not the whole list.
    pub fn as_written(schema: &Value) -> Schema {
        Schema::as_written_within(schema, &mut PATTERN_BUDGET.clone())
    }

    /// [`Schema::as_written`], its patterns charged to `budget` (see
    /// [`Schema::strict_within`]).
    pub(crate) fn as_written_within(schema: &Value, budget: &mut usize) -> Schema {
        Schema::build(schema, false, true, budget)
    }

    fn build(schema: &Value, strict: bool, assert_formats: bool, budget: &mut usize) -> Schema {
        let (mut compiled, mut patterns) = match charge_patterns(schema, strict, budget) {
            Ok(patterns) => (compile(schema, assert_formats), patterns),
            Err(spent) => (Err(spent), HashMap::new()),
        };
        let mut anchors = HashMap::new();
        if strict && compiled.is_ok() {
            if let Some(reason) = unfollowable_reference(schema) {
                compiled = Err(format!(
                    "the undeclared-argument check cannot follow its schema: {reason}"
                ));
            }
            collect_anchors(schema, &mut anchors);
        } else {
            patterns.clear();
        }
        let plain = (strict && compiled.is_ok())
            .then(|| Plain::of(schema, 0))
            .flatten();
        let flat = compiled.is_ok().then(|| Flat::of(schema)).flatten();
        Schema {
            root: schema.clone(),
            compiled,
            strict,
            patterns,
            anchors,
            plain,
            flat,
        }
    }

    /// Why the schema cannot be used (a remote `$ref`, an unknown `$schema`,
    /// a schema that does not compile), if so.
    pub fn unusable_reason(&self) -> Option<&str> {
        self.compiled.as_ref().err().map(String::as_str)
    }

    /// The top-level property names the schema declares, required ones
    /// first (each group in the schema's order).
    pub fn property_names(&self) -> Vec<&str> {
        let Some(props) = self.root.get("properties").and_then(Value::as_object) else {
            return Vec::new();
        };
        let required: Vec<&str> = self
            .root
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut names: Vec<&str> = props
            .keys()
            .map(String::as_str)
            .filter(|k| required.contains(k))
            .collect();
        names.extend(
            props
                .keys()
                .map(String::as_str)
                .filter(|k| !required.contains(k)),
        );
        names
    }

    /// Checks an arguments object. The violation returned is the first by
    /// SPEC §5 rule order (ties: the first found).
    pub fn check(&self, arguments: &Map<String, Value>) -> Result<(), Violation> {
        if self.flat_accepts(arguments) {
            return Ok(());
        }
        self.check_instance(&Value::Object(arguments.clone()))
    }

    /// Whether the schema is [`Flat`] and `arguments` are valid under it:
    /// then [`Schema::check`] is `Ok` without running the validator.
    pub(super) fn flat_accepts(&self, arguments: &Map<String, Value>) -> bool {
        self.flat.as_ref().is_some_and(|f| f.accepts(arguments))
    }

    /// [`Schema::check`] of arguments already held as a JSON object value
    /// (what the validator reads), without copying them.
    pub(super) fn check_instance(&self, instance: &Value) -> Result<(), Violation> {
        let validator = match &self.compiled {
            Ok(v) => v,
            Err(reason) => return Err(Violation::new(Label::SchemaViolation, "", reason.clone())),
        };
        // `is_valid` answers what an empty `iter_errors` would, without
        // building an error iterator per keyword.
        let mut found: Vec<Violation> = if validator.is_valid(instance) {
            Vec::new()
        } else {
            validator
                .iter_errors(instance)
                .map(|e| map_error(&e))
                .collect()
        };
        // The boolean schema `true` allows anything: nothing is undeclared.
        if self.strict && self.root != Value::Bool(true) {
            self.undeclared(instance, &mut found);
        }
        // `min_by_key` keeps the first of equal labels: discovery order breaks ties.
        match found
            .into_iter()
            .reduce(|best, v| if v.label < best.label { v } else { best })
        {
            Some(v) => Err(v),
            None => Ok(()),
        }
    }
}

pub(super) fn compile(schema: &Value, assert_formats: bool) -> Result<Validator, String> {
    if let Some(r) = remote_ref(schema) {
        return Err(format!("remote $ref `{}` is never fetched", clip(r, 120)));
    }
    if let Some(why) = in_place_cycle(schema) {
        return Err(why);
    }
    within_bounds(schema)?;
    let draft = Draft::default().detect(schema);
    if let Some(uri) = unknown_draft(schema, draft) {
        return Err(format!(
            "`$schema` `{}` names no known draft",
            clip(uri, 120)
        ));
    }
    // `pattern`, `patternProperties` (and what `additionalProperties`,
    // `unevaluatedProperties` and `propertyNames` match with them) run on
    // the linear-time `regex` engine, never the default backtracking one:
    // the subjects are model output, and `^(\w+\s?)*(?<!x)$` cost up to
    // 65 ms per 42-byte string there (a million steps each), so a 64 MiB
    // answer meant hours of CPU. A pattern this engine cannot express
    // (lookaround, backreferences) fails to compile: the tool is unusable
    // and says which pattern ([`nonlinear_pattern`]).
    let options = jsonschema::options()
        .with_draft(draft)
        .with_pattern_options(PatternOptions::regex().size_limit(PATTERN_SIZE_LIMIT));
    // `false` leaves the draft's own rule (asserted up to draft-07).
    let options = if assert_formats {
        options.should_validate_formats(true)
    } else {
        options
    };
    options
        .build(schema)
        .map_err(|e| match nonlinear_pattern(schema) {
            Some(why) => why,
            None => format!("its schema does not compile: {}", clip(&e.to_string(), 160)),
        })
}

/// The `$schema` that names no known draft, of the root or of an embedded
/// resource (a subschema with its own `$id`, or `id` under a draft-4 root:
/// what [`unfollowable_reference`] takes for one), if any. `jsonschema`
/// read an embedded one as draft 2020-12, so the tool was checked under a
/// draft its author never named; the root's was refused. A `$schema`
/// outside a resource's root is not read by the validator, nor here.
fn unknown_draft(schema: &Value, draft: Draft) -> Option<&str> {
    subschemas(schema).find_map(|map| {
        let is_root = schema.as_object().is_some_and(|r| std::ptr::eq(r, map));
        let resource = is_root
            || map
                .get("$id")
                .or_else(|| map.get("id").filter(|_| draft == Draft::Draft4))
                .and_then(Value::as_str)
                .is_some_and(|id| !id.starts_with('#'));
        let uri = map.get("$schema").and_then(Value::as_str)?;
        (resource && Draft::from_schema_uri(uri) == Draft::Unknown).then_some(uri)
    })
}

/// Most bytes a schema pattern may compile to (the `regex` crate's
/// estimate), in the validator and in the undeclared-key walk alike: the
/// engine's work per subject byte grows with it.
pub const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Most bytes the patterns of one tool list (or of one schema compiled
/// alone) may compile to, all together, as the `regex` crate reports the
/// heap its compiled regexes hold ([`charge_patterns`]). Each pattern is
/// bounded by [`PATTERN_SIZE_LIMIT`], but not their number: 2,000 tools of
/// one `\p{L}{20}` pattern each (60 bytes of request per tool, 1 MB
/// compiled) held 2 GB and took minutes to compile (hostile-client probe).
/// Real patterns compile to a few KB (`^[a-z0-9_-]{3,64}$`: 11 KB,
/// `^.{1,256}$`: 270 KB); the budget is of the order of what a request's
/// JSON values may cost (`--max-request-nodes`).
pub const PATTERN_BUDGET: usize = 64 << 20;

/// Charges what `schema`'s patterns compile to (each distinct `pattern`
/// once, each `patternProperties` key once more when `strict`: the
/// undeclared-key walk holds its own copy) to `budget`, the bytes left. The
/// error — the budget is spent — is why the tool is unusable. Each pattern
/// is compiled here within what is left, so a spent budget costs little
/// more; a pattern that does not compile is the validator's to refuse,
/// with its own reason. Returned: the compiled `patternProperties` keys
/// when `strict`, handed to the walk, which matches keys with these very
/// regexes (not compiled twice); a key that does not compile is absent and
/// declares nothing (fail closed).
fn charge_patterns(
    schema: &Value,
    strict: bool,
    budget: &mut usize,
) -> Result<HashMap<String, Regex>, String> {
    // Each distinct pattern with how many times it is charged, and whether
    // the walk keeps it.
    let mut found: HashMap<&str, (usize, bool)> = HashMap::new();
    for map in subschemas(schema) {
        if let Some(Value::String(p)) = map.get("pattern") {
            found.entry(p).or_insert((1, false));
        }
        if let Some(Value::Object(pp)) = map.get("patternProperties") {
            for p in pp.keys() {
                let (times, kept) = found.entry(p).or_insert((1, false));
                *times += usize::from(strict);
                *kept |= strict;
            }
        }
    }
    let spent = || {
        format!(
            "its patterns, with those of the tools before it, compile to more than {PATTERN_BUDGET} bytes"
        )
    };
    // Sorted: the same schema spends its budget the same way every run.
    let mut patterns: Vec<(&str, (usize, bool))> = found.into_iter().collect();
    patterns.sort_unstable();
    let mut walk = HashMap::new();
    for (pattern, (times, kept)) in patterns {
        let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
            continue;
        };
        let limit = PATTERN_SIZE_LIMIT.min(*budget);
        match linear_regex_within(&translated, limit) {
            Ok(re) => {
                let cost = re.memory_usage().saturating_mul(times);
                *budget = budget.checked_sub(cost).ok_or_else(spent)?;
                if kept {
                    walk.insert(pattern.to_string(), re);
                }
            }
            // Too large for what is left (not for a pattern alone).
            Err(Unmatchable::TooLarge) if limit < PATTERN_SIZE_LIMIT => {
                *budget = 0;
                return Err(spent());
            }
            Err(_) => {}
        }
    }
    Ok(walk)
}

/// A translated pattern compiled for the linear-time engine as the `regex`
/// crate compiles it for the validator (`regex::RegexBuilder` builds this
/// same `meta::Regex`: leftmost-first, UTF-8, a 2 MiB lazy-DFA cache),
/// within `limit` bytes of NFA.
fn linear_regex_within(translated: &str, limit: usize) -> Result<Regex, Unmatchable> {
    let config = Regex::config()
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .nfa_size_limit(Some(limit))
        .hybrid_cache_capacity(2 << 20);
    Regex::builder()
        .configure(config)
        .syntax(regex_automata::util::syntax::Config::new().utf8(true))
        .build(translated)
        .map_err(|e| {
            if e.size_limit().is_some() {
                Unmatchable::TooLarge
            } else {
                Unmatchable::Unsupported
            }
        })
}

/// Why an ECMA-262 pattern has no linear-time matcher.
enum Unmatchable {
    /// Not ECMA-262 (as `jsonschema` translates it): the validator's own
    /// error says so.
    NotEcma,
    /// Lookaround or a backreference: the `regex` crate has no such thing.
    Unsupported,
    /// Compiles to more than [`PATTERN_SIZE_LIMIT`] (or than the budget
    /// left, in [`charge_patterns`]).
    TooLarge,
}

/// `pattern` compiled as the validator runs it: ECMA-262 translated the
/// way `jsonschema` does (`\d`, `\w` are ASCII) for the linear-time `regex`
/// engine, within [`PATTERN_SIZE_LIMIT`].
fn linear_regex(pattern: &str) -> Result<Regex, Unmatchable> {
    let translated = jsonschema_regex::to_rust_regex(pattern).map_err(|_| Unmatchable::NotEcma)?;
    linear_regex_within(&translated, PATTERN_SIZE_LIMIT)
}

/// The first `pattern` or `patternProperties` key of a schema that is
/// valid ECMA-262 but has no linear-time matcher, as the reason its tool is
/// unusable. Looked for only once the validator refused to compile the
/// schema, so a pattern the validator never compiles (under an unknown
/// keyword) costs nothing.
fn nonlinear_pattern(schema: &Value) -> Option<String> {
    for map in subschemas(schema) {
        let own = map.get("pattern").and_then(Value::as_str);
        let keys = map
            .get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|pp| pp.keys().map(String::as_str));
        for pattern in own.into_iter().chain(keys) {
            let shown = clip(pattern, 120);
            match linear_regex(pattern) {
                Ok(_) | Err(Unmatchable::NotEcma) => {}
                Err(Unmatchable::Unsupported) => {
                    return Some(format!(
                        "pattern `{shown}` uses lookaround or a backreference, which toolgate does not match (patterns run in linear time only)"
                    ));
                }
                Err(Unmatchable::TooLarge) => {
                    return Some(format!(
                        "pattern `{shown}` compiles to more than {PATTERN_SIZE_LIMIT} bytes"
                    ));
                }
            }
        }
    }
    None
}

/// Longest path through a schema, counting nesting and `$ref` hops (cycles
/// cut): a 12,000-link `$ref` chain would overflow the stack of the
/// recursive compiler and evaluator.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// Most schema nodes once every `$ref` is expanded (memoized, cycles cut):
/// `d_i = {"allOf": [{"$ref": d_i+1}, {"$ref": d_i+1}]}` is 3 KB at depth 40
/// but 2^40 evaluations.
pub const MAX_SCHEMA_EXPANDED: u64 = 100_000;

/// Checks a schema against [`MAX_SCHEMA_DEPTH`] and [`MAX_SCHEMA_EXPANDED`]
/// before anything recursive sees it: one iterative depth-first pass over
/// the schema's objects and arrays plus local reference targets, each node's
/// expanded size memoized. The error is why the tool is unusable.
fn within_bounds(schema: &Value) -> Result<(), String> {
    let mut anchors = HashMap::new();
    collect_anchors(schema, &mut anchors);
    // Done nodes: (address, read as a map of names: see [`members`]) →
    // (expanded size, depth below); `None` while on the path. A map of
    // names reached by a `$ref` is read as a schema: both readings count.
    let mut done: HashMap<(*const Value, bool), Option<(u64, usize)>> = HashMap::new();
    struct Frame<'v> {
        children: Vec<(&'v Value, bool)>,
        next: usize,
        size: u64,
        depth: usize,
        node: (&'v Value, bool),
        base: &'v Value,
    }
    fn frame<'v>(
        (node, names): (&'v Value, bool),
        base: &'v Value,
        root: &'v Value,
        anchors: &HashMap<String, String>,
    ) -> Frame<'v> {
        let mut children = Vec::new();
        let mut base = base;
        match node {
            Value::Object(map) if names => children.extend(
                members(map, true)
                    .filter(|(_, c, _)| matches!(c, Value::Object(_) | Value::Array(_)))
                    .map(|(_, c, n)| (c, n)),
            ),
            Value::Object(map) => {
                if !std::ptr::eq(node, root)
                    && map
                        .get("$id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| !id.starts_with('#'))
                {
                    base = node;
                }
                for (k, child, child_names) in members(map, false) {
                    match (k.as_str(), child) {
                        ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(r)) => {
                            if let Some(target) = resolve_local(base, anchors, k, r) {
                                children.push((target, false));
                            }
                        }
                        (_, Value::Object(_) | Value::Array(_)) => {
                            children.push((child, child_names));
                        }
                        _ => {}
                    }
                }
            }
            Value::Array(items) => children.extend(
                items
                    .iter()
                    .filter(|c| matches!(c, Value::Object(_) | Value::Array(_)))
                    .map(|c| (c, false)),
            ),
            _ => {}
        }
        Frame {
            children,
            next: 0,
            size: 1,
            depth: 0,
            node: (node, names),
            base,
        }
    }
    let key = |(v, names): (&Value, bool)| (std::ptr::from_ref(v), names);
    let mut path = vec![frame((schema, false), schema, schema, &anchors)];
    done.insert(key((schema, false)), None);
    loop {
        let on_path = path.len();
        let Some(top) = path.last_mut() else { break };
        if top.size > MAX_SCHEMA_EXPANDED {
            return Err(format!(
                "its schema expands to more than {MAX_SCHEMA_EXPANDED} subschemas once its $refs are followed"
            ));
        }
        if let Some(&child) = top.children.get(top.next) {
            top.next += 1;
            match done.get(&key(child)) {
                Some(Some((size, depth))) => {
                    top.size = top.size.saturating_add(*size);
                    top.depth = top.depth.max(*depth);
                }
                // A cycle: evaluated lazily, as deep as the instance goes.
                Some(None) => top.size = top.size.saturating_add(1),
                None => {
                    if on_path >= MAX_SCHEMA_DEPTH {
                        return Err(format!(
                            "its schema nests deeper than {MAX_SCHEMA_DEPTH} levels, counting $ref hops"
                        ));
                    }
                    let base = top.base;
                    done.insert(key(child), None);
                    path.push(frame(child, base, schema, &anchors));
                }
            }
            continue;
        }
        // All children done: pop the frame, pass its totals to the parent.
        let Some(finished) = path.pop() else { break };
        let depth = finished.depth + 1;
        done.insert(key(finished.node), Some((finished.size, depth)));
        if let Some(parent) = path.last_mut() {
            parent.size = parent.size.saturating_add(finished.size);
            parent.depth = parent.depth.max(depth);
        }
    }
    Ok(())
}

/// The flat-schema shortcut ([`Flat`]) only ever says "valid" where the
/// validator does: generated arguments (missing, undeclared and mistyped
/// keys, floats for integers, nested values) under flat schemas, strict and
/// as written, every draft.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod flat_shortcut {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn schemas() -> Vec<Value> {
        let props = json!({
            "city": {"type": "string", "description": "a city"},
            "days": {"type": "integer"},
            "temp": {"type": "number", "title": "t"},
            "metric": {"type": "boolean"},
            "none": {"type": "null"}
        });
        let mut out = Vec::new();
        for draft in [
            None,
            Some("http://json-schema.org/draft-04/schema#"),
            Some("http://json-schema.org/draft-07/schema#"),
            Some("https://json-schema.org/draft/2020-12/schema"),
        ] {
            for additional in [None, Some(false)] {
                let mut s = json!({"type": "object", "properties": props, "required": ["city"]});
                if let Some(a) = additional {
                    s["additionalProperties"] = json!(a);
                }
                if let Some(d) = draft {
                    s["$schema"] = json!(d);
                }
                out.push(s);
            }
        }
        out
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!("Antwerp")),
            Just(json!(3)),
            Just(json!(-3)),
            Just(json!(u64::MAX)),
            Just(json!(3.0)),
            Just(json!(2.5)),
            Just(json!(true)),
            Just(Value::Null),
            Just(json!({"x": 1})),
            Just(json!([1])),
        ]
    }

    fn arguments() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::vec(
            (
                prop::sample::select(vec!["city", "days", "temp", "metric", "none", "extra"]),
                value(),
            ),
            0..6,
        )
        .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn the_shortcut_says_valid_only_where_the_validator_does(args in arguments()) {
            for schema in schemas() {
                for s in [Schema::strict(&schema), Schema::as_written(&schema)] {
                    let full = s.check_instance(&Value::Object(args.clone()));
                    if s.flat_accepts(&args) {
                        prop_assert_eq!(&full, &Ok(()), "{} on {:?}", schema, args);
                    }
                    // `check` (shortcut first) equals the validator alone.
                    prop_assert_eq!(s.check(&args), full);
                }
            }
        }
    }

    #[test]
    fn flat_schemas_are_recognised_and_others_are_not() {
        let flat = json!({"type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"], "additionalProperties": false});
        assert!(Schema::strict(&flat).flat.is_some());
        assert!(Schema::strict(&flat).flat_accepts(json!({"city": "Lima"}).as_object().unwrap()));
        assert!(!Schema::strict(&flat).flat_accepts(json!({}).as_object().unwrap()));
        for not_flat in [
            json!({"type": "object", "properties": {"city": {"type": "string", "enum": ["a"]}}}),
            json!({"type": "object", "properties": {"city": {"type": ["string", "null"]}}}),
            json!({"type": "object", "properties": {"d": {"type": "string", "format": "date"}}}),
            json!({"type": "object", "properties": {"o": {"type": "object"}}}),
            json!({"type": "object", "additionalProperties": true}),
            json!({"properties": {"city": {"type": "string"}}}),
            json!({"type": "object", "minProperties": 1}),
        ] {
            assert!(Schema::strict(&not_flat).flat.is_none(), "{not_flat}");
        }
    }
}

/// What compiling a tool list's patterns costs, printed (not asserted):
/// `cargo test -p toolgate-validator --lib pattern_compile_timing --
/// --ignored --nocapture`. 50 distinct patterns as `pattern`s and as
/// `patternProperties` keys (strict: the undeclared-key walk matches them
/// too), with the budget's share and the validator's; the fastest of 30
/// runs each (the machine is shared).
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::print_stdout)]
mod timing {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, Instant};

    fn fastest(mut f: impl FnMut()) -> Duration {
        (0..30)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    }

    #[test]
    #[ignore = "timing, run by hand"]
    fn pattern_compile_timing() {
        let patterns: Vec<String> = (0..50)
            .map(|i| format!("^[a-z0-9_-]{{3,64}}-{i}$"))
            .collect();
        let props: Map<String, Value> = patterns
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("p{i}"), json!({"type": "string", "pattern": p})))
            .collect();
        let keys: Map<String, Value> = patterns
            .iter()
            .map(|p| (p.clone(), json!({"type": "string"})))
            .collect();
        for (name, schema) in [
            (
                "50 `pattern`s",
                json!({"type": "object", "properties": props}),
            ),
            (
                "50 `patternProperties` keys",
                json!({"type": "object", "patternProperties": keys}),
            ),
        ] {
            let whole = fastest(|| assert_eq!(Schema::strict(&schema).unusable_reason(), None));
            let budget = fastest(|| {
                charge_patterns(&schema, true, &mut PATTERN_BUDGET.clone()).unwrap();
            });
            let validator = fastest(|| {
                compile(&schema, true).unwrap();
            });
            println!(
                "{name}: Schema::strict {whole:?}, of which the budget {budget:?}, the validator {validator:?}"
            );
        }
    }
}
