//! The allowlist and strict schema validation.
//!
//! A [`Toolset`] is built once per transcript from its tool definitions and
//! compiles one [`Schema`] per tool. Checking a call is then:
//!
//! 1. the tool name must be allowlisted (otherwise [`Label::WrongTool`]);
//! 2. the tool must be usable: a schema with a remote `$ref` (anything not
//!    starting with `#`), an unrecognized `$schema`, a `pattern` (or
//!    `patternProperties` key) with lookaround or a backreference, or a
//!    schema that does not compile makes every call to that tool a
//!    `schema_violation` that says why. Patterns run on the linear-time
//!    `regex` engine, so checking is linear in the arguments for every
//!    schema; a backtracking engine, even with a step limit per match, would
//!    make an answer of many strings cost strings × limit.
//!    Nothing is ever fetched: the `jsonschema` crate is built without network
//!    and file resolvers, and remote references are detected by scanning the
//!    schema before it is compiled;
//! 3. the arguments are validated by `jsonschema` against the schema *as
//!    written* (draft 2020-12 unless `$schema` names another draft; no
//!    coercion, ever);
//! 4. *strictness*: undeclared properties are rejected at any depth unless
//!    explicitly allowed. A key is declared when it is in `properties`,
//!    matches a `patternProperties` regex, or a schema applying to that
//!    object has `additionalProperties` (or `unevaluatedProperties`) `true` or
//!    a schema. Pattern keys are matched in the validator's own ECMA-262
//!    dialect (`\d` and `\w` are ASCII). Declarations are collected from the
//!    schema, its local `$ref` targets (JSON pointers such as `#/$defs/x`, and
//!    `$anchor`s; `$dynamicRef`/`$recursiveRef` in a schema of one resource),
//!    `allOf`,
//!    and — permissively — every branch of `anyOf`, `oneOf`,
//!    `if`/`then`/`else` and `dependentSchemas`. A free-form object
//!    (`{"type": "object"}` with no properties) therefore declares nothing:
//!    write `additionalProperties: true` to allow arbitrary keys. A value
//!    declared by the boolean schema `true` (`"properties": {"x": true}` or
//!    `additionalProperties: true`) is free: nothing below it is walked.
//!    Where the walk cannot follow the schema it fails closed: a reference
//!    under an embedded `$id`, or a dynamic reference in a schema with
//!    embedded resources, makes the tool unusable; a reference it cannot
//!    resolve, more than 256 subschemas applying to one value, or nesting
//!    deeper than 128 levels is a `schema_violation` saying it cannot decide.
//!
//! A tool definition without `parameters` takes no arguments: its schema is
//! `{"type": "object", "properties": {}, "additionalProperties": false}`.
//!
//! Every failure is mapped to a label from the error's *kind* and instance
//! path, never from its message text: `Required` → `missing_required`;
//! `AdditionalProperties`, `UnevaluatedProperties` and the undeclared-key walk
//! → `hallucinated_param`; `Type` → `type_coercion`; anything else (including
//! any failure inside `anyOf`/`oneOf`, `enum`, `const`, ranges, patterns) →
//! `schema_violation`. When one call fails in several ways, the rule order
//! of SPEC §5 decides: a missing required key anywhere beats an undeclared key
//! anywhere, which beats a wrong type, which beats anything else.
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::{Call, Label, ToolDef};
//! use toolgate_validator::Toolset;
//!
//! let tools = [ToolDef {
//!     name: "get_weather".into(),
//!     description: None,
//!     parameters: Some(json!({
//!         "type": "object",
//!         "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
//!         "required": ["city"]
//!     })),
//! }];
//! let toolset = Toolset::new(&tools);
//! assert!(toolset.check(&Call::new("get_weather", json!({"city": "Antwerp"}))).is_ok());
//! let bad = toolset.check(&Call::new("get_weather", json!({"city": "Antwerp", "days": "3"})));
//! assert_eq!(bad.unwrap_err().label, Label::TypeCoercion);
//! let extra = toolset.check(&Call::new("get_weather", json!({"city": "Antwerp", "unit": "C"})));
//! assert_eq!(extra.unwrap_err().label, Label::HallucinatedParam);
//! ```

//!
//! The module is split by concern: `compile` builds a [`Schema`] (the
//! validator, the flat-schema shortcut, the bounds on a schema's size),
//! `refs` handles `$ref`s (local resolution, remote detection, anchors),
//! `walk` is the strict undeclared-key walk, `labels` maps a validator
//! error to a label, and `suggest` finds the closest allowlisted name.
//! This file holds the [`Toolset`] (the allowlist, its schemas and the
//! cache of recent checks) and the types the parts share.

mod compile;
mod labels;
mod refs;
mod suggest;
mod walk;

pub(crate) use compile::PATTERN_BUDGET;

use compile::Flat;
use jsonschema::Validator;
use regex_automata::meta::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use toolgate_core::{Call, Label, ToolDef};
use walk::Plain;

/// Why a call failed its tool's schema (or the expectation's schema).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// `missing_required`, `hallucinated_param`, `type_coercion` or
    /// `schema_violation` (and `wrong_tool` from [`Toolset::check`] when the
    /// tool is not allowlisted).
    pub label: Label,
    /// A human-readable reason naming the instance path.
    pub reason: String,
    /// The JSON pointer of the offending argument (`""` for the arguments
    /// object itself).
    pub path: String,
}

impl Violation {
    fn new(label: Label, path: impl Into<String>, reason: impl Into<String>) -> Violation {
        Violation {
            label,
            reason: reason.into(),
            path: path.into(),
        }
    }
}

/// Longest reason kept (schema errors can quote large instances).
const MAX_REASON: usize = 240;

/// One compiled schema: a `jsonschema` validator plus what the strict
/// undeclared-key walk needs, or the reason the schema is unusable.
pub struct Schema {
    root: Value,
    compiled: Result<Validator, String>,
    strict: bool,
    /// The `patternProperties` keys that compile, as the pattern budget
    /// compiled them (a key absent declares nothing).
    patterns: HashMap<String, Regex>,
    anchors: HashMap<String, String>,
    /// The undeclared-key walk compiled ahead, for a schema that uses none
    /// of the keywords that make [`Walk`] expand ([`Plain`]); `None`: the
    /// general walk runs.
    plain: Option<Plain>,
    /// The schema as a [`Flat`] one, when it is: arguments it accepts are
    /// valid without the validator (and without copying them for it).
    flat: Option<Flat>,
}

/// A remembered check: the tool name, the arguments as the object value the
/// validator read, and the result.
type RecentCheck = (String, Value, Result<(), Violation>);

/// The tools of one transcript: allowlist plus compiled validators.
pub struct Toolset {
    /// Whether the tool list is known ([`Toolset::unknown`]: the transcript
    /// has no `tools`, SPEC §4).
    known: bool,
    names: Vec<String>,
    schemas: Vec<Schema>,
    /// The most recent [`Toolset::check`] results. Replay meets the same call
    /// many times (several modes find it, strict and lenient, in the label
    /// and in the gates), and a check clones and walks the arguments. A
    /// result depends only on the schema and the call, so reuse is exact.
    /// Each call is kept as the tool name and the arguments as the object
    /// value the validator read: one copy of the arguments per new call.
    recent: Mutex<Vec<RecentCheck>>,
    /// The most recent [`Toolset::closest`] answers (index into `names`).
    recent_closest: Mutex<Vec<(String, Option<usize>)>>,
    /// The bytes its schemas' patterns compiled to (charged to
    /// [`PATTERN_BUDGET`]).
    pattern_bytes: usize,
}

/// How many check results a [`Toolset`] remembers.
const RECENT_CHECKS: usize = 8;

/// JSON equality that also requires object keys in the same order (`==` on
/// objects ignores order). Recurses as deep as the values, like their own
/// `Clone` and `PartialEq` (the JSON readers bound nesting depth).
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => same_map(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_json(x, y))
        }
        _ => a == b,
    }
}

fn same_map(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb))
}

impl Toolset {
    /// Compiles every tool's schema once, asserting `format` in every draft.
    /// A name defined more than once is allowlisted but unusable: which
    /// definition applies would be a guess (the loader also warns).
    pub fn new(defs: &[ToolDef]) -> Toolset {
        Toolset::with_format_assertion(defs, true)
    }

    /// [`Toolset::new`], with `format` asserted in every draft or only where
    /// the draft says (a profile's `assert_formats`).
    pub fn with_format_assertion(defs: &[ToolDef], assert_formats: bool) -> Toolset {
        let mut names: Vec<String> = Vec::new();
        let mut schemas = Vec::new();
        // Each name's place in `names` and how often it is defined: one
        // lookup per definition, so a long list costs linear time (a
        // search of `names` per definition made 60,000 tools take 25 s of
        // a proxy worker).
        let mut seen: HashMap<&str, (usize, usize)> = HashMap::with_capacity(defs.len());
        // One budget for the patterns of the whole list.
        let mut budget = compile::PATTERN_BUDGET;
        for def in defs {
            if let Some((i, count)) = seen.get_mut(def.name.as_str()) {
                *count += 1;
                // Marked once; its message is written with the final count below.
                if *count == 2 {
                    schemas[*i] = Schema {
                        root: Value::Bool(false),
                        compiled: Err(String::new()),
                        strict: true,
                        patterns: HashMap::new(),
                        anchors: HashMap::new(),
                        plain: None,
                        flat: None,
                    };
                }
                continue;
            }
            seen.insert(&def.name, (names.len(), 1));
            let schema = match &def.parameters {
                Some(p) => {
                    let mut s = Schema::strict_within(p, assert_formats, &mut budget);
                    if let Err(reason) = &mut s.compiled {
                        *reason = format!("tool `{}` is unusable: {reason}", def.name);
                    }
                    s
                }
                None => Schema::strict(&no_arguments_schema()),
            };
            names.push(def.name.clone());
            schemas.push(schema);
        }
        for (name, &(i, count)) in &seen {
            if count > 1 {
                schemas[i].compiled = Err(format!(
                    "tool `{name}` is unusable: it is defined {count} times"
                ));
            }
        }
        Toolset {
            known: true,
            names,
            schemas,
            recent: Mutex::new(Vec::new()),
            recent_closest: Mutex::new(Vec::new()),
            pattern_bytes: compile::PATTERN_BUDGET - budget,
        }
    }

    /// The tools of a transcript whose tool list is unknown (no `tools`
    /// member, no request: SPEC §4 "tools unknown"). Nothing is allowlisted
    /// — the `allowlist` gate fails for every call — but labels do not
    /// blame the model for the missing list: the labeler skips the
    /// allowlist part of rule 8 and the tool schemas of rules 9–12
    /// ([`Toolset::is_known`]).
    pub fn unknown() -> Toolset {
        Toolset {
            known: false,
            ..Toolset::new(&[])
        }
    }

    /// The bytes the schemas' patterns compiled to (what a cache of
    /// compiled tool lists weighs them by).
    pub(crate) fn pattern_bytes(&self) -> usize {
        self.pattern_bytes
    }

    /// Whether the tool list is known (`false` for [`Toolset::unknown`]).
    pub fn is_known(&self) -> bool {
        self.known
    }

    /// Whether `name` is allowlisted.
    pub fn is_allowed(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// The allowlisted names, in definition order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The compiled schema of tool `name`.
    pub fn schema(&self, name: &str) -> Option<&Schema> {
        let i = self.names.iter().position(|n| n == name)?;
        self.schemas.get(i)
    }

    /// Why tool `name` is unusable (remote `$ref`, schema that does not
    /// compile), if it is.
    pub fn unusable_reason(&self, name: &str) -> Option<&str> {
        self.schema(name)?.unusable_reason()
    }
    /// Checks `call` strictly against its tool's schema. A tool that is not
    /// allowlisted yields a [`Label::WrongTool`] violation.
    pub fn check(&self, call: &Call) -> Result<(), Violation> {
        self.check_parts(&call.name, &call.arguments)
    }

    /// [`Toolset::check`] of the call `name(arguments)`.
    pub fn check_parts(&self, name: &str, arguments: &Map<String, Value>) -> Result<(), Violation> {
        // A poisoned lock only means another thread panicked mid-update of
        // this cache; the check then simply runs uncached. A result is
        // reused only for the very same call, object keys compared in order
        // too: a violation's reason can depend on key order (discovery
        // order breaks ties).
        // Valid arguments of a flat schema (most tool schemas): decided
        // from the arguments as they are.
        if self.schema(name).is_some_and(|s| s.flat_accepts(arguments)) {
            return Ok(());
        }
        if let Ok(recent) = self.recent.lock()
            && let Some((_, _, result)) = recent.iter().find(|(n, a, _)| {
                n == name && a.as_object().is_some_and(|a| same_map(a, arguments))
            })
        {
            return result.clone();
        }
        // The one copy: the validator reads a `Value`, and the cache keeps it.
        let instance = Value::Object(arguments.clone());
        let result = self.check_instance(name, &instance);
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() >= RECENT_CHECKS {
                let _oldest = recent.remove(0);
            }
            recent.push((name.to_string(), instance, result.clone()));
        }
        result
    }

    #[cfg(test)]
    fn check_uncached(&self, name: &str, arguments: &Map<String, Value>) -> Result<(), Violation> {
        self.check_instance(name, &Value::Object(arguments.clone()))
    }

    /// The check of `name` with its arguments as an object value.
    fn check_instance(&self, name: &str, instance: &Value) -> Result<(), Violation> {
        match self.schema(name) {
            Some(schema) => schema.check_instance(instance).map_err(|mut v| {
                v.reason = format!("`{name}`: {}", v.reason);
                v
            }),
            None => Err(Violation::new(
                Label::WrongTool,
                "",
                format!("tool `{name}` is not allowlisted"),
            )),
        }
    }

    /// Checks `call` against an extra schema (an expectation's `arguments`
    /// schema) as written, with the same label mapping as [`Toolset::check`].
    /// Compiles the schema on each call; use [`Schema::as_written`] to reuse.
    pub fn check_extra(&self, call: &Call, schema: &Value) -> Result<(), Violation> {
        Schema::as_written(schema).check(&call.arguments)
    }
}

/// The schema of a tool defined without `parameters`: no arguments at all.
pub fn no_arguments_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// `s` cut to at most `max` bytes at a char boundary, with `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    let limit = max.min(MAX_REASON);
    if s.len() <= limit {
        return s.to_string();
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use compile::MAX_SCHEMA_DEPTH;
    use serde_json::json;
    use suggest::edit_distance_within;

    fn tool(name: &str, params: Value) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: None,
            parameters: Some(params),
        }
    }

    fn check(params: Value, args: Value) -> Result<(), Violation> {
        Toolset::new(&[tool("t", params)]).check(&Call::new("t", args))
    }

    fn label_of(params: Value, args: Value) -> Label {
        check(params, args).unwrap_err().label
    }

    #[test]
    fn valid_arguments_pass() {
        let s = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
        assert_eq!(check(s, json!({"city": "Antwerp"})), Ok(()));
    }

    #[test]
    fn error_kinds_map_to_labels() {
        let s = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1},
                "unit": {"enum": ["C", "F"]}
            },
            "required": ["city"]
        });
        assert_eq!(label_of(s.clone(), json!({})), Label::MissingRequired);
        assert_eq!(
            label_of(s.clone(), json!({"city": "A", "x": 1})),
            Label::HallucinatedParam
        );
        assert_eq!(
            label_of(s.clone(), json!({"city": "A", "days": "3"})),
            Label::TypeCoercion
        );
        assert_eq!(
            label_of(s.clone(), json!({"city": 42})),
            Label::TypeCoercion
        );
        assert_eq!(
            label_of(s.clone(), json!({"city": "A", "days": 0})),
            Label::SchemaViolation
        );
        assert_eq!(
            label_of(s, json!({"city": "A", "unit": "K"})),
            Label::SchemaViolation
        );
    }

    #[test]
    fn rule_order_decides_within_one_call() {
        let s = json!({
            "type": "object",
            "properties": {
                "loc": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                "days": {"type": "integer"}
            }
        });
        // missing (nested) beats undeclared (top level) beats type.
        let v = check(s.clone(), json!({"loc": {}, "extra": 1, "days": "2"})).unwrap_err();
        assert_eq!(v.label, Label::MissingRequired);
        assert_eq!(v.path, "/loc/city");
        let v = check(s, json!({"loc": {"city": "A", "zip": "1"}, "days": "2"})).unwrap_err();
        assert_eq!(v.label, Label::HallucinatedParam);
        assert_eq!(v.path, "/loc/zip");
    }

    #[test]
    fn declared_keys_pattern_and_additional_schema() {
        let s = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^x_": {"type": "integer"}},
            "additionalProperties": false
        });
        assert_eq!(check(s.clone(), json!({"a": "1", "x_n": 2})), Ok(()));
        assert_eq!(
            label_of(s.clone(), json!({"x_n": "2"})),
            Label::TypeCoercion
        );
        assert_eq!(label_of(s, json!({"y": 2})), Label::HallucinatedParam);
        let open =
            json!({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}});
        assert_eq!(check(open.clone(), json!({"anything": "x"})), Ok(()));
        assert_eq!(label_of(open, json!({"anything": 1})), Label::TypeCoercion);
        let free = json!({"type": "object", "properties": {"meta": {"type": "object", "additionalProperties": true}}});
        assert_eq!(check(free, json!({"meta": {"k": {"deep": 1}}})), Ok(()));
    }

    #[test]
    fn undeclared_keys_are_rejected_at_any_depth_and_in_arrays() {
        let s = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}
            }
        });
        assert_eq!(check(s.clone(), json!({"items": [{"id": 1}]})), Ok(()));
        let v = check(s, json!({"items": [{"id": 1}, {"id": 2, "name": "x"}]})).unwrap_err();
        assert_eq!(v.label, Label::HallucinatedParam);
        assert_eq!(v.path, "/items/1/name");
    }

    #[test]
    fn local_refs_resolve_and_declare() {
        let s = json!({
            "type": "object",
            "$defs": {"loc": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            "properties": {"where": {"$ref": "#/$defs/loc"}}
        });
        assert_eq!(check(s.clone(), json!({"where": {"city": "A"}})), Ok(()));
        assert_eq!(
            label_of(s.clone(), json!({"where": {}})),
            Label::MissingRequired
        );
        assert_eq!(
            label_of(s, json!({"where": {"city": "A", "zip": 1}})),
            Label::HallucinatedParam
        );
    }

    #[test]
    fn anchor_refs_resolve_and_declare() {
        let s = json!({
            "type": "object",
            "$defs": {"loc": {"$anchor": "loc", "type": "object", "properties": {"city": {"type": "string"}}}},
            "properties": {"where": {"$ref": "#loc"}}
        });
        assert_eq!(check(s.clone(), json!({"where": {"city": "A"}})), Ok(()));
        assert_eq!(
            label_of(s, json!({"where": {"city": "A", "zip": 1}})),
            Label::HallucinatedParam
        );
    }

    #[test]
    fn remote_ref_makes_the_tool_unusable() {
        let s =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}});
        let v = check(s, json!({"a": 1})).unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        assert_eq!(
            v.reason,
            "`t`: tool `t` is unusable: remote $ref `https://example.com/a.json` is never fetched"
        );
        // A `$ref` that only appears as data is not a reference.
        let s = json!({"type": "object", "properties": {"a": {"const": {"$ref": "http://x"}}}});
        assert_eq!(label_of(s, json!({"a": 1})), Label::SchemaViolation);
        let ts = Toolset::new(&[tool(
            "t",
            json!({"properties": {"a": {"const": {"$ref": "http://x"}}}}),
        )]);
        assert_eq!(ts.unusable_reason("t"), None);
    }

    /// Regression (ReDoS through a tool's `pattern`): the default
    /// backtracking engine ran `^(\w+\s?)*(?<!x)$` to its million-step limit
    /// on each `"aaaa…!"` (25–65 ms per string), so one answer of many such
    /// strings held a proxy worker for minutes. Patterns run on the linear
    /// `regex` engine; one it cannot express makes the tool unusable, as a
    /// remote `$ref` does, without a match ever being tried.
    #[test]
    fn a_pattern_without_a_linear_time_matcher_makes_the_tool_unusable() {
        let hostile = r"^(\w+\s?)*(?<!x)$";
        let why = format!(
            "tool `t` is unusable: pattern `{hostile}` uses lookaround or a backreference, which toolgate does not match (patterns run in linear time only)"
        );
        let strings: Vec<Value> = (0..300)
            .map(|i| json!(format!("{}{i}!", "a".repeat(40))))
            .collect();
        for (schema, args) in [
            // The probe's tool: an array of patterned strings.
            (
                json!({"type": "object", "properties": {"x": {"type": "array",
                    "items": {"type": "string", "pattern": hostile}}}}),
                json!({"x": strings}),
            ),
            // The pattern as a `patternProperties` key …
            (
                json!({"type": "object", "patternProperties": {hostile: {"type": "string"}},
                    "additionalProperties": true}),
                Value::Object(
                    (0..300)
                        .map(|i| (format!("{}{i}!", "a".repeat(40)), json!("v")))
                        .collect(),
                ),
            ),
            // … and on the values of a free-form map.
            (
                json!({"type": "object", "properties": {"x": {"type": "object",
                    "additionalProperties": {"type": "string", "pattern": hostile}}}}),
                json!({"x": (0..300).map(|i| (format!("k{i}"), strings[i].clone()))
                    .collect::<Map<String, Value>>()}),
            ),
        ] {
            let ts = Toolset::new(&[tool("t", schema.clone())]);
            assert_eq!(ts.unusable_reason("t"), Some(why.as_str()), "{schema}");
            let v = ts.check(&Call::new("t", args)).unwrap_err();
            assert_eq!(v.label, Label::SchemaViolation);
            assert_eq!(v.reason, format!("`t`: {why}"));
        }
        // Lookahead and backreferences alike; the pattern is named.
        for pattern in ["^(?!eo:)", "^(?=.*[A-Z]).{8,}$", r"^(a+)\1$"] {
            let ts = Toolset::new(&[tool(
                "t",
                json!({"type": "object", "properties": {"p": {"type": "string", "pattern": pattern}}}),
            )]);
            let why = ts.unusable_reason("t").unwrap();
            assert!(
                why.contains(&format!("pattern `{pattern}` uses lookaround")),
                "{why}"
            );
        }
        // Regular but huge: refused by size, before any match.
        let ts = Toolset::new(&[tool(
            "t",
            json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "^(a{1000}){1000}$"}}}),
        )]);
        assert_eq!(
            ts.unusable_reason("t"),
            Some(
                "tool `t` is unusable: pattern `^(a{1000}){1000}$` compiles to more than 1048576 bytes"
            )
        );
        // Not ECMA-262 at all: the validator's own complaint, as before.
        let ts = Toolset::new(&[tool(
            "t",
            json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "[a"}}}),
        )]);
        let why = ts.unusable_reason("t").unwrap();
        assert!(why.contains("its schema does not compile"), "{why}");
        // A regex written as data (`format: regex`) is only parsed, never
        // run: lookaround there is fine.
        let ts = Toolset::new(&[tool(
            "t",
            json!({"type": "object", "properties": {"re": {"type": "string", "format": "regex"}}}),
        )]);
        assert_eq!(ts.check(&Call::new("t", json!({"re": hostile}))), Ok(()));
        assert_eq!(
            ts.check(&Call::new("t", json!({"re": "(a"})))
                .unwrap_err()
                .label,
            Label::SchemaViolation
        );
    }

    /// Patterns the linear engine expresses keep their meaning, however
    /// hostile the strings: `^(\w+\s?)*$` is the classic catastrophic one
    /// for a backtracker.
    #[test]
    fn ordinary_patterns_accept_and_refuse_as_before() {
        let code = json!({"type": "object", "properties": {"c": {"type": "string", "pattern": "^[A-Z]{3}$"}}});
        assert_eq!(check(code.clone(), json!({"c": "EUR"})), Ok(()));
        let v = check(code, json!({"c": "eur"})).unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        assert_eq!(v.path, "/c");
        assert!(v.reason.contains("violates `pattern`"), "{}", v.reason);
        let words = json!({"type": "object", "properties": {"x": {"type": "array",
            "items": {"type": "string", "pattern": r"^(\w+\s?)*$"}}}});
        let hostile: Vec<String> = (0..300)
            .map(|i| format!("{}{i}!", "a".repeat(40)))
            .collect();
        let v = check(words.clone(), json!({"x": hostile})).unwrap_err();
        assert_eq!((v.label, v.path.as_str()), (Label::SchemaViolation, "/x/0"));
        assert_eq!(check(words, json!({"x": ["a few words", "one"]})), Ok(()));
        let keys = json!({"type": "object", "patternProperties": {r"^(\w+\s?)*$": {"type": "integer"}},
            "additionalProperties": false});
        assert_eq!(check(keys.clone(), json!({"a b": 1})), Ok(()));
        assert_eq!(label_of(keys, json!({"a b!": 1})), Label::HallucinatedParam);
    }

    #[test]
    fn relative_file_ref_is_remote_too() {
        let ts = Toolset::new(&[tool("t", json!({"$ref": "defs.json#/a"}))]);
        assert_eq!(
            ts.unusable_reason("t"),
            Some("tool `t` is unusable: remote $ref `defs.json#/a` is never fetched")
        );
    }

    #[test]
    fn failures_inside_any_of_are_schema_violations() {
        let s = json!({
            "type": "object",
            "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}
        });
        assert_eq!(check(s.clone(), json!({"v": 3})), Ok(()));
        assert_eq!(label_of(s, json!({"v": true})), Label::SchemaViolation);
        let one = json!({
            "type": "object",
            "properties": {"v": {"oneOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}
            ]}}
        });
        assert_eq!(check(one.clone(), json!({"v": {"a": "x"}})), Ok(()));
        assert_eq!(label_of(one, json!({"v": {}})), Label::SchemaViolation);
    }

    #[test]
    fn schemas_silent_about_keys_are_free_form_dicts() {
        assert_eq!(check(json!(true), json!({"a": {"b": 1}})), Ok(()));
        // `{}` and `{"type": "object"}` say nothing about keys: a free-form dict.
        assert_eq!(check(json!({}), json!({"a": 1})), Ok(()));
        let config = json!({"type": "object", "properties": {
            "config": {"type": "object", "description": "Configuration dict"},
            "todos": {"type": "array"}}});
        assert_eq!(
            check(
                config.clone(),
                json!({"config": {"any": 1}, "todos": [{"id": 1}]})
            ),
            Ok(())
        );
        // Naming properties (even none) closes the object.
        assert_eq!(
            label_of(json!({"type": "object", "properties": {}}), json!({"a": 1})),
            Label::HallucinatedParam
        );
        assert_eq!(
            label_of(config, json!({"conf": {}})),
            Label::HallucinatedParam
        );
        let free = json!({"type": "object", "properties": {"x": true}});
        assert_eq!(
            check(free, json!({"x": {"anything": [1, {"deep": 2}]}})),
            Ok(())
        );
    }

    #[test]
    fn missing_parameters_means_no_arguments() {
        let ts = Toolset::new(&[ToolDef {
            name: "now".into(),
            description: None,
            parameters: None,
        }]);
        assert_eq!(ts.check(&Call::new("now", json!({}))), Ok(()));
        let v = ts
            .check(&Call::new("now", json!({"tz": "UTC"})))
            .unwrap_err();
        assert_eq!(v.label, Label::HallucinatedParam);
    }

    #[test]
    fn older_drafts_are_honoured() {
        // Draft 4: exclusiveMaximum is a boolean modifier.
        let s = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "maximum": 5, "exclusiveMaximum": true}}
        });
        assert_eq!(check(s.clone(), json!({"n": 4})), Ok(()));
        assert_eq!(label_of(s, json!({"n": 5})), Label::SchemaViolation);
        let unknown = json!({"$schema": "https://example.com/my-meta", "type": "object"});
        let ts = Toolset::new(&[tool("t", unknown)]);
        assert!(
            ts.unusable_reason("t")
                .unwrap()
                .contains("names no known draft")
        );
    }

    /// Review finding: an embedded resource (`$id`) whose `$schema` names no
    /// known draft was read as draft 2020-12 (the tool was usable, its
    /// arguments checked under a draft its author never named). It is
    /// refused as a top-level unknown `$schema` is; a known draft embedded
    /// is still honoured.
    #[test]
    fn an_embedded_unknown_schema_makes_the_tool_unusable() {
        let embedded = json!({"type": "object", "properties": {"a": {
            "$id": "https://example.com/a", "$schema": "http://example.com/x",
            "type": "string"}}});
        let ts = Toolset::new(&[tool("t", embedded)]);
        assert_eq!(
            ts.unusable_reason("t"),
            Some("tool `t` is unusable: `$schema` `http://example.com/x` names no known draft")
        );
        let v = ts.check(&Call::new("t", json!({"a": "x"}))).unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        // Under a map of names or a data keyword it is no resource's `$schema`.
        let not_a_resource = json!({"type": "object", "properties": {
            "a": {"type": "string", "default": {"$id": "https://example.com/d",
                "$schema": "http://example.com/x"}},
            "$schema": {"type": "string"}}});
        assert_eq!(
            check(not_a_resource, json!({"a": "x", "$schema": "y"})),
            Ok(())
        );
        // Draft 4 names an embedded resource with `id`.
        let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object", "properties": {"a": {"id": "https://example.com/a",
            "$schema": "http://example.com/y", "type": "string"}}});
        assert_eq!(
            Toolset::new(&[tool("t", draft4)]).unusable_reason("t"),
            Some("tool `t` is unusable: `$schema` `http://example.com/y` names no known draft")
        );
        // Without its own `$id` a subschema is no resource: its `$schema`
        // is not read (by the validator either).
        let no_id = json!({"type": "object", "properties": {"a": {
            "$schema": "http://example.com/x", "type": "string"}}});
        assert_eq!(check(no_id, json!({"a": "x"})), Ok(()));
        let known = json!({"type": "object", "properties": {"a": {
            "$id": "https://example.com/a",
            "$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}}});
        assert_eq!(check(known, json!({"a": "x"})), Ok(()));
    }

    #[test]
    fn no_coercion_of_numbers_or_booleans() {
        let s = json!({"type": "object", "properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}});
        assert_eq!(label_of(s.clone(), json!({"n": "42"})), Label::TypeCoercion);
        assert_eq!(
            label_of(s.clone(), json!({"b": "true"})),
            Label::TypeCoercion
        );
        assert_eq!(label_of(s, json!({"n": 4.5})), Label::TypeCoercion);
    }

    #[test]
    fn not_allowlisted_is_wrong_tool_and_closest_suggests() {
        let ts = Toolset::new(&[
            tool("get_weather", json!({})),
            tool("search_web", json!({})),
        ]);
        let v = ts.check(&Call::new("get_wether", json!({}))).unwrap_err();
        assert_eq!(v.label, Label::WrongTool);
        assert_eq!(ts.closest("get_wether"), Some("get_weather"));
        assert_eq!(ts.closest("Search_Web"), Some("search_web"));
        assert_eq!(ts.closest("delete_everything"), None);
        assert!(ts.is_allowed("search_web"));
        assert_eq!(ts.names(), ["get_weather", "search_web"]);
    }

    #[test]
    fn did_you_mean_work_is_bounded() {
        // Issue 9 item 10: 5,000 tools with 200-character names took 23 s
        // of edit distances for one transcript.
        let long: Vec<ToolDef> = (0..5000)
            .map(|i| tool(&format!("{i:04}{}", "x".repeat(196)), json!({})))
            .collect();
        let ts = Toolset::new(&long);
        let started = std::time::Instant::now();
        for i in 0..50 {
            let probe = format!("{i:04}{}y", "x".repeat(195));
            assert_eq!(
                ts.closest(&probe),
                None,
                "names past 64 characters are not compared"
            );
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        // Short names: only the first 1,000 allowlisted names are candidates.
        let mut short: Vec<ToolDef> = (0..1500)
            .map(|i| tool(&format!("tool_{i:05}"), json!({})))
            .collect();
        short.push(tool("get_weather", json!({})));
        let ts = Toolset::new(&short);
        assert_eq!(ts.closest("tool_00007x"), Some("tool_00007"));
        assert_eq!(ts.closest("get_wether"), None);
        assert_eq!(ts.closest("tool_00007x"), Some("tool_00007"), "remembered");
        assert_eq!(edit_distance_within("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance_within("kitten", "sitting", 2), None);
    }

    #[test]
    fn expectation_schema_is_checked_as_written() {
        let ts = Toolset::new(&[tool(
            "w",
            json!({"type": "object", "properties": {"city": {}, "unit": {}}}),
        )]);
        let call = Call::new("w", json!({"city": "Ghent", "unit": "C"}));
        let expect = json!({"properties": {"city": {"const": "Antwerp"}}});
        assert_eq!(
            ts.check_extra(&call, &expect).unwrap_err().label,
            Label::SchemaViolation
        );
        let ok = Call::new("w", json!({"city": "Antwerp", "unit": "C"}));
        assert_eq!(ts.check_extra(&ok, &expect), Ok(()));
        let req = json!({"required": ["days"]});
        assert_eq!(
            ts.check_extra(&ok, &req).unwrap_err().label,
            Label::MissingRequired
        );
    }

    #[test]
    fn recursive_schemas_terminate() {
        let s = json!({
            "type": "object",
            "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "properties": {"root": {"$ref": "#/$defs/node"}, "self": {"$ref": "#"}}
        });
        let mut deep = json!({});
        for _ in 0..40 {
            deep = json!({"kids": [deep]});
        }
        assert_eq!(check(s.clone(), json!({"root": deep})), Ok(()));
        assert_eq!(check(s.clone(), json!({"self": {"self": {}}})), Ok(()));
        assert_eq!(
            label_of(s, json!({"self": {"self": {"x": 1}}})),
            Label::HallucinatedParam
        );
    }

    /// Issue 9 item 3: where the walk cannot follow the schema it fails
    /// closed; before, each of these executed an undeclared argument.
    #[test]
    fn undeclared_key_check_fails_closed_where_it_cannot_follow() {
        // A `$ref` under an embedded `$id` resolves against that resource.
        let embedded = json!({"type": "object",
            "$defs": {"x": {"type": "object", "additionalProperties": true}},
            "properties": {"p": {"$id": "https://example.com/p",
                "$defs": {"x": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "$ref": "#/$defs/x"}}});
        let ts = Toolset::new(&[tool("t", embedded)]);
        let why = ts.unusable_reason("t").unwrap();
        assert!(why.contains("under an embedded `$id`"), "{why}");
        assert_eq!(
            ts.check(&Call::new("t", json!({"p": {"a": "x", "evil": 1}})))
                .unwrap_err()
                .label,
            Label::SchemaViolation
        );
        // `$dynamicRef` in a one-resource schema is followed to its anchor.
        let dynamic = json!({"type": "object",
            "$defs": {"node": {"$dynamicAnchor": "node", "type": "object",
                "properties": {"a": {"type": "string"}, "kids": {"type": "array", "items": {"$dynamicRef": "#node"}}}}},
            "properties": {"n": {"$dynamicRef": "#node"}}});
        assert_eq!(
            check(
                dynamic.clone(),
                json!({"n": {"a": "x", "kids": [{"a": "y"}]}})
            ),
            Ok(())
        );
        let v = check(
            dynamic.clone(),
            json!({"n": {"a": "x", "kids": [{"evil": 1}]}}),
        )
        .unwrap_err();
        assert_eq!(
            (v.label, v.path.as_str()),
            (Label::HallucinatedParam, "/n/kids/0/evil")
        );
        let recursive = json!({"$schema": "https://json-schema.org/draft/2019-09/schema",
            "$recursiveAnchor": true, "type": "object",
            "properties": {"a": {"type": "string"}, "sub": {"$recursiveRef": "#"}}});
        let v = check(recursive, json!({"sub": {"a": "x", "evil": 1}})).unwrap_err();
        assert_eq!(
            (v.label, v.path.as_str()),
            (Label::HallucinatedParam, "/sub/evil")
        );
        // With embedded resources the dynamic scope decides: unusable.
        let mut scoped = dynamic;
        scoped["properties"]["m"] = json!({"$id": "https://example.com/m", "type": "object"});
        let ts = Toolset::new(&[tool("t", scoped)]);
        let why = ts.unusable_reason("t").unwrap();
        assert!(why.contains("dynamic scope"), "{why}");
        // More subschemas than the walk gathers: it cannot decide.
        let mut all: Vec<Value> = (0..300).map(|_| json!({})).collect();
        all.push(json!({"properties": {"a": {"type": "string"}}}));
        let wide = json!({"type": "object", "allOf": all});
        let v = check(wide, json!({"a": "x", "evil": 1})).unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        assert!(v.reason.contains("cannot decide"), "{}", v.reason);
        // Pattern keys are read in ECMA-262's dialect: `\d` is ASCII.
        let pattern =
            json!({"type": "object", "patternProperties": {"^arg_\\d+$": {"type": "string"}}});
        assert_eq!(check(pattern.clone(), json!({"arg_3": "x"})), Ok(()));
        assert_eq!(
            label_of(pattern, json!({"arg_\u{663}": "x"})),
            Label::HallucinatedParam
        );
        let word = json!({"type": "object", "patternProperties": {"^\\w+$": {}}});
        assert_eq!(
            label_of(word, json!({"na\u{ef}ve": 1})),
            Label::HallucinatedParam
        );
    }

    #[test]
    fn format_is_asserted_in_every_draft_unless_turned_off() {
        let email = |draft: &str| {
            json!({"$schema": draft, "type": "object",
                "properties": {"to": {"type": "string", "format": "email"}}})
        };
        for draft in [
            "https://json-schema.org/draft/2020-12/schema",
            "https://json-schema.org/draft/2019-09/schema",
            "http://json-schema.org/draft-07/schema#",
        ] {
            let ts = Toolset::new(&[tool("t", email(draft))]);
            let bad = Call::new("t", json!({"to": "not an email"}));
            assert_eq!(
                ts.check(&bad).unwrap_err().label,
                Label::SchemaViolation,
                "{draft}"
            );
            let ok = Call::new("t", json!({"to": "a@example.com"}));
            assert_eq!(ts.check(&ok), Ok(()), "{draft}");
        }
        // Turned off, the draft decides: 2020-12 treats `format` as an annotation.
        let ts = Toolset::with_format_assertion(
            &[tool(
                "t",
                email("https://json-schema.org/draft/2020-12/schema"),
            )],
            false,
        );
        assert_eq!(
            ts.check(&Call::new("t", json!({"to": "not an email"}))),
            Ok(())
        );
    }

    #[test]
    fn a_name_defined_twice_is_unusable_not_first_wins() {
        let open = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let closed = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let ts = Toolset::new(&[tool("rm", open), tool("ls", json!({})), tool("rm", closed)]);
        assert_eq!(ts.names(), ["rm", "ls"]);
        assert_eq!(
            ts.unusable_reason("rm"),
            Some("tool `rm` is unusable: it is defined 2 times")
        );
        let v = ts
            .check(&Call::new("rm", json!({"path": "/"})))
            .unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        assert_eq!(ts.check(&Call::new("ls", json!({}))), Ok(()));
        let thrice = Toolset::new(&[
            tool("rm", json!({})),
            tool("rm", json!({})),
            tool("rm", json!({})),
        ]);
        assert_eq!(
            thrice.unusable_reason("rm"),
            Some("tool `rm` is unusable: it is defined 3 times"),
            "the message counts every definition"
        );
    }

    #[test]
    fn a_long_list_of_repeated_names_is_read_in_one_pass() {
        // 100,000 definitions of 10 names: a search of the names (and a
        // count over the whole list) per definition was 10^9 comparisons.
        let defs: Vec<ToolDef> = (0..100_000)
            .map(|i| ToolDef {
                name: format!("t{}", i % 10),
                description: None,
                parameters: None,
            })
            .collect();
        let ts = Toolset::new(&defs);
        assert_eq!(ts.names().len(), 10);
        assert_eq!(
            ts.unusable_reason("t7"),
            Some("tool `t7` is unusable: it is defined 10000 times")
        );
    }

    #[test]
    fn a_schema_that_refers_back_to_itself_in_place_makes_the_tool_unusable() {
        // Each accepted any arguments (hostile-client and data probes).
        let cycles = [
            json!({"$ref": "#"}),
            json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}),
            json!({"type": "object", "properties": {"city": {"$ref": "#/properties/city"}}}),
            json!({"type": "object", "anyOf": [{"required": ["a"]}, {"not": {"$ref": "#"}}]}),
            json!({"type": "object", "properties": {"a": {"$anchor": "x", "oneOf": [{"$ref": "#x"}]}}}),
            json!({"type": "object", "dependentSchemas": {"a": {"$ref": "#"}}}),
            json!({"type": "object", "if": {"$ref": "#/$defs/i"}, "$defs": {"i": {"then": {"$ref": "#/$defs/i"}}}}),
        ];
        for schema in &cycles {
            let ts = Toolset::new(&[tool("f", schema.clone())]);
            assert_eq!(
                ts.unusable_reason("f"),
                Some(
                    "tool `f` is unusable: its schema refers back to itself without reading \
                     any argument (a cycle of $ref, allOf, anyOf…): no argument can be checked \
                     against it"
                ),
                "{schema}"
            );
            let v = ts.check(&Call::new("f", json!({"a": 1}))).unwrap_err();
            assert_eq!(v.label, Label::SchemaViolation, "{schema}");
        }
        // Recursion that goes down into the arguments ends with them.
        let tree = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#"}},
                "next": {"anyOf": [{"type": "null"}, {"$ref": "#"}]}
            },
            "required": ["name"]
        });
        let ts = Toolset::new(&[tool("tree", tree)]);
        assert_eq!(ts.unusable_reason("tree"), None);
        let ok = json!({"name": "a", "children": [{"name": "b", "children": []}], "next": {"name": "c"}});
        assert_eq!(ts.check(&Call::new("tree", ok)), Ok(()));
        let bad = json!({"name": "a", "children": [{"children": []}]});
        assert_eq!(
            ts.check(&Call::new("tree", bad)).map_err(|v| v.label),
            Err(Label::MissingRequired)
        );
    }

    /// A property (or definition) named like a data keyword — `default`,
    /// `description`, `enum`, `const`, `examples` — is a subschema the
    /// validator reads: the schema scans skipped it as data (hostile tool
    /// definitions probe). Each row: schema, arguments, expected result.
    #[test]
    fn a_property_named_like_a_data_keyword_is_scanned_as_a_schema() {
        // Fail-open before: `evil` executed (the walk followed `#/$defs/x`
        // from the root, the validator from the embedded resource).
        let embedded = json!({"type": "object", "additionalProperties": false,
            "$defs": {"x": {"type": "object", "additionalProperties": true}},
            "properties": {"default": {"$id": "https://example.com/p",
                "$defs": {"x": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "$ref": "#/$defs/x"}}});
        let ts = Toolset::new(&[tool("t", embedded)]);
        let why = ts.unusable_reason("t").unwrap();
        assert!(why.contains("under an embedded `$id`"), "{why}");
        let v = ts
            .check(&Call::new("t", json!({"default": {"a": "x", "evil": 1}})))
            .unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        // Fail-open before: any value executed for `description`.
        let cycle = json!({"type": "object",
            "properties": {"description": {"$ref": "#/properties/description"}}});
        let ts = Toolset::new(&[tool("t", cycle)]);
        assert!(
            ts.unusable_reason("t")
                .unwrap()
                .contains("refers back to itself"),
            "{:?}",
            ts.unusable_reason("t")
        );
        assert_eq!(
            ts.check(&Call::new("t", json!({"description": {"any": 1}})))
                .unwrap_err()
                .label,
            Label::SchemaViolation
        );
        // The remote reference is named as such (before: "does not compile").
        let remote = json!({"type": "object",
            "properties": {"enum": {"$ref": "http://127.0.0.1:9/x.json"}}});
        assert_eq!(
            Toolset::new(&[tool("t", remote)]).unusable_reason("t"),
            Some("tool `t` is unusable: remote $ref `http://127.0.0.1:9/x.json` is never fetched")
        );
        // Declared keys were refused: patterns and anchors below these
        // names were not collected.
        let pattern = json!({"type": "object", "properties": {"examples": {"type": "object",
            "patternProperties": {"^a": {}}, "additionalProperties": false}}});
        assert_eq!(
            check(pattern.clone(), json!({"examples": {"ab": 1}})),
            Ok(())
        );
        let v = check(pattern, json!({"examples": {"b": 1}})).unwrap_err();
        assert_eq!(
            (v.label, v.path.as_str()),
            (Label::HallucinatedParam, "/examples/b")
        );
        let anchor = json!({"type": "object", "properties": {
            "const": {"$anchor": "c", "type": "object", "properties": {"a": {}}},
            "x": {"$ref": "#c"}}});
        assert_eq!(check(anchor.clone(), json!({"x": {"a": 1}})), Ok(()));
        assert_eq!(
            label_of(anchor, json!({"x": {"b": 1}})),
            Label::HallucinatedParam
        );
        // The expansion bound counts them: 200 references to a definition
        // of 2^13 evaluations under `enum` took seconds per check.
        let mut defs = Map::new();
        for i in 0..13 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d13".into(), json!({"type": "object", "properties": {}}));
        let refs: Vec<Value> = (0..200).map(|_| json!({"$ref": "#/$defs/d0"})).collect();
        let wide = json!({"type": "object", "$defs": defs,
            "properties": {"enum": {"allOf": refs}}});
        let why = Toolset::new(&[tool("t", wide)])
            .unusable_reason("t")
            .unwrap()
            .to_string();
        assert!(why.contains("more than 100000 subschemas"), "{why}");
        // The keywords themselves still hold data, never subschemas.
        let data = json!({"type": "object", "properties": {
            "a": {"enum": [{"$ref": "http://x"}], "default": {"$ref": "#/nowhere"}},
            "$ref": {"type": "string"}}});
        assert_eq!(
            check(data, json!({"a": {"$ref": "http://x"}, "$ref": "x"})),
            Ok(())
        );
    }

    /// Hostile-client probe: 2,000 tools of one `\p{L}{20}` pattern each
    /// (about 1 MB compiled) held 2 GB and took minutes. The patterns of a
    /// list share [`PATTERN_BUDGET`]: the tools past it are unusable.
    #[test]
    fn the_patterns_of_a_tool_list_share_one_budget() {
        let heavy = |i: usize| {
            tool(
                &format!("t{i}"),
                json!({"type": "object", "properties": {"a": {"type": "string",
                    "pattern": format!("\\p{{L}}{{20}}x{i}")}}}),
            )
        };
        let defs: Vec<ToolDef> = (0..80).map(heavy).collect();
        let ts = Toolset::new(&defs);
        assert_eq!(ts.unusable_reason("t0"), None);
        assert_eq!(
            ts.check(&Call::new("t0", json!({"a": "x"})))
                .unwrap_err()
                .label,
            Label::SchemaViolation
        );
        assert_eq!(
            ts.unusable_reason("t79"),
            Some(
                "tool `t79` is unusable: its patterns, with those of the tools before it, \
                 compile to more than 67108864 bytes"
            )
        );
        let v = ts.check(&Call::new("t79", json!({"a": "x"}))).unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        assert!(v.reason.contains("unusable"), "{}", v.reason);
        assert!(ts.pattern_bytes() <= PATTERN_BUDGET);
        // Ordinary patterns (a few KB each) are far from it.
        let light: Vec<ToolDef> = (0..300)
            .map(|i| {
                tool(
                    &format!("t{i}"),
                    json!({"type": "object", "properties": {
                        "a": {"type": "string", "pattern": "^[a-z0-9_-]{3,64}$"},
                        "d": {"type": "string", "pattern": format!("^\\d{{4}}-\\d{{2}}-{i}$")}}}),
                )
            })
            .collect();
        let ts = Toolset::new(&light);
        assert_eq!(ts.unusable_reason("t299"), None);
        assert_eq!(
            ts.check(&Call::new("t299", json!({"a": "abc", "d": "2020-01-299"}))),
            Ok(())
        );
    }

    /// `{"$defs": {"d0": {"$ref": "#/$defs/d1"}, …}, "$ref": "#/$defs/d0"}`.
    fn ref_chain(links: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..links {
            defs.insert(
                format!("d{i}"),
                json!({"$ref": format!("#/$defs/d{}", i + 1)}),
            );
        }
        defs.insert(
            format!("d{links}"),
            json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
        );
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    }

    /// `d_i = {"allOf": [{"$ref": d_i+1}, {"$ref": d_i+1}]}`.
    fn ref_dag(depth: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..depth {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(
            format!("d{depth}"),
            json!({"type": "object", "properties": {}}),
        );
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    }

    /// Issue 9 items 5 and 6: a 12,000-link chain overflowed the stack
    /// (abort), a depth-40 allOf DAG never finished. Both are unusable now,
    /// decided at compile time; schemas within the bounds still work, on a
    /// thread with a small stack.
    #[test]
    fn deep_and_exponential_schemas_are_unusable_with_a_reason() {
        let ts = Toolset::new(&[tool("chain", ref_chain(12_000)), tool("dag", ref_dag(40))]);
        let why = ts.unusable_reason("chain").unwrap();
        assert!(why.contains("deeper than 128 levels"), "{why}");
        let why = ts.unusable_reason("dag").unwrap();
        assert!(why.contains("more than 100000 subschemas"), "{why}");
        let v = ts.check(&Call::new("dag", json!({}))).unwrap_err();
        assert_eq!(v.label, Label::SchemaViolation);
        // Within the bounds: compiled and checked on a 256 KiB stack.
        let small = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let ts = Toolset::new(&[
                    tool("chain", ref_chain(MAX_SCHEMA_DEPTH - 8)),
                    tool("dag", ref_dag(12)),
                ]);
                assert_eq!(ts.unusable_reason("chain"), None);
                assert_eq!(ts.unusable_reason("dag"), None);
                (
                    ts.check(&Call::new("chain", json!({"a": 1}))),
                    ts.check(&Call::new("chain", json!({"a": "x"})))
                        .map_err(|v| v.label),
                    ts.check(&Call::new("dag", json!({"x": 1})))
                        .map_err(|v| v.label),
                )
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(
            small,
            (
                Ok(()),
                Err(Label::TypeCoercion),
                Err(Label::HallucinatedParam)
            )
        );
    }

    #[test]
    fn deepest_instance_under_a_recursive_schema_fits_a_worker_stack() {
        let s =
            json!({"type": "object", "properties": {"k": {"$ref": "#"}, "v": {"type": "integer"}}});
        let mut deep = json!({"v": 1});
        for _ in 0..126 {
            deep = json!({"k": deep});
        }
        let mut bad = json!({"v": "x"});
        for _ in 0..126 {
            bad = json!({"k": bad});
        }
        let labels = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let ts = Toolset::new(&[tool("t", s)]);
                let ok = ts.check(&Call::new("t", deep));
                let bad = ts.check(&Call::new("t", bad)).map_err(|v| v.label);
                (ok, bad)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(labels, (Ok(()), Err(Label::TypeCoercion)));
    }

    #[test]
    fn remembered_check_results_equal_fresh_ones() {
        let schema = json!({"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"], "additionalProperties": false});
        let ts = Toolset::new(&[tool("t", schema.clone())]);
        // More distinct calls than are remembered, each checked twice, so
        // both hits and evictions happen.
        let calls: Vec<Call> = (0..RECENT_CHECKS as i64 + 3)
            .flat_map(|i| {
                [
                    Call::new("t", json!({"city": "Antwerp", "days": i})),
                    Call::new("t", json!({"city": i})),
                    Call::new("u", json!({"city": "Antwerp"})),
                ]
            })
            .collect();
        for call in calls.iter().chain(&calls).chain(calls.iter().rev()) {
            let fresh = Toolset::new(&[tool("t", schema.clone())])
                .check_uncached(&call.name, &call.arguments);
            assert_eq!(ts.check(call), fresh, "{call:?}");
        }
        assert_eq!(
            ts.check(&Call::new("t", json!({"city": 3})))
                .unwrap_err()
                .label,
            Label::TypeCoercion
        );
        assert_eq!(ts.recent.lock().unwrap().len(), RECENT_CHECKS);
    }

    #[test]
    fn same_json_compares_key_order_too() {
        assert!(same_json(
            &json!({"a": 1, "b": [{"c": 2}]}),
            &json!({"a": 1, "b": [{"c": 2}]})
        ));
        assert!(!same_json(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        assert!(!same_json(&json!({"a": [1, 2]}), &json!({"a": [1, 2, 3]})));
        assert!(!same_json(&json!({"a": 1}), &json!({"a": 1.0})));
    }
}
