//! The allowlist and strict schema validation.
//!
//! A [`Toolset`] is built once per transcript from its tool definitions and
//! compiles one [`Schema`] per tool. Checking a call is then:
//!
//! 1. the tool name must be allowlisted (otherwise [`Label::WrongTool`]);
//! 2. the tool must be usable: a schema with a remote `$ref` (anything not
//!    starting with `#`), an unrecognized `$schema`, or a schema that does not
//!    compile makes every call to that tool a `schema_violation` that says why.
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

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Validator};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use toolgate_core::{Call, Label, ToolDef};

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
/// Deepest instance level the undeclared-key walk visits.
const MAX_WALK_DEPTH: usize = 128;
/// Most schemas gathered for one instance location (bounds recursive `$ref`s).
const MAX_GROUP: usize = 256;

/// One compiled schema: a `jsonschema` validator plus what the strict
/// undeclared-key walk needs, or the reason the schema is unusable.
pub struct Schema {
    root: Value,
    compiled: Result<Validator, String>,
    strict: bool,
    patterns: HashMap<String, Option<Regex>>,
    anchors: HashMap<String, String>,
    /// The undeclared-key walk compiled ahead, for a schema that uses none
    /// of the keywords that make [`Walk`] expand ([`Plain`]); `None`: the
    /// general walk runs.
    plain: Option<Plain>,
    /// The schema as a [`Flat`] one, when it is: arguments it accepts are
    /// valid without the validator (and without copying them for it).
    flat: Option<Flat>,
}

/// A flat object schema of scalar-typed properties — `{"type": "object",
/// "properties": {"city": {"type": "string"}, …}, "required": […],
/// "additionalProperties": false}`, with only `description`/`title` beside
/// — the shape most tool schemas have. Arguments whose every key is a
/// declared property holding a value of its type, with every required key
/// present, are valid under it in every draft, strict or not; for anything
/// else (a missing or undeclared key, a wrong type, a float where an
/// integer is declared) [`Flat::accepts`] says nothing and the validator
/// decides, with its own reasons.
struct Flat {
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
        Schema::build(schema, true, true)
    }

    /// [`Schema::strict`], with `format` asserted (every draft) or not (as
    /// the draft says).
    pub fn strict_with(schema: &Value, assert_formats: bool) -> Schema {
        Schema::build(schema, true, assert_formats)
    }

    /// Compiles `schema` to be checked exactly as written, without the
    /// undeclared-key walk. Used for an expectation's `arguments` schema,
    /// which states predicates about some arguments, not the whole list.
    pub fn as_written(schema: &Value) -> Schema {
        Schema::build(schema, false, true)
    }

    fn build(schema: &Value, strict: bool, assert_formats: bool) -> Schema {
        let mut compiled = compile(schema, assert_formats);
        let mut patterns = HashMap::new();
        let mut anchors = HashMap::new();
        if strict && compiled.is_ok() {
            if let Some(reason) = unfollowable_reference(schema) {
                compiled = Err(format!(
                    "the undeclared-argument check cannot follow its schema: {reason}"
                ));
            }
            collect_patterns(schema, &mut patterns);
            collect_anchors(schema, &mut anchors);
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
    fn flat_accepts(&self, arguments: &Map<String, Value>) -> bool {
        self.flat.as_ref().is_some_and(|f| f.accepts(arguments))
    }

    /// [`Schema::check`] of arguments already held as a JSON object value
    /// (what the validator reads), without copying them.
    fn check_instance(&self, instance: &Value) -> Result<(), Violation> {
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

impl Schema {
    /// The undeclared-key violations of `instance`, in discovery order.
    fn undeclared(&self, instance: &Value, found: &mut Vec<Violation>) {
        match &self.plain {
            Some(plain) => plain.visit(instance, &mut String::new(), 0, found),
            None => self.undeclared_general(instance, found),
        }
    }

    /// [`Schema::undeclared`] by the general [`Walk`].
    fn undeclared_general(&self, instance: &Value, found: &mut Vec<Violation>) {
        let mut walk = Walk {
            root: &self.root,
            patterns: &self.patterns,
            anchors: &self.anchors,
            out: found,
        };
        walk.visit(vec![&self.root], instance, &mut String::new(), 0);
    }
}

/// The keywords that make [`Walk::expand`], [`Walk::declaration`] or
/// [`item_schemas`] look past one schema's `properties`,
/// `additionalProperties` and object `items`.
const NOT_PLAIN: [&str; 15] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "allOf",
    "anyOf",
    "oneOf",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
];

/// The undeclared-key walk of a *plain* schema — every subschema it can
/// reach is a boolean or an object without [`NOT_PLAIN`] keywords and with
/// object (or boolean) `items` — compiled once: what [`Walk::visit`] would
/// look up in the schema on every call is read here ahead. Where the
/// general walk has one schema or none at a location, so does this, and it
/// reports the same violations in the same order (a test compares them).
enum Plain {
    /// No object schema applies (the boolean `false`, or an array's items
    /// without an `items` schema): objects below are not checked, arrays
    /// are descended for the depth limit only.
    Nothing,
    /// One object schema.
    Node(Box<PlainNode>),
}

struct PlainNode {
    /// Its `type` excludes `object` / `array`.
    excludes_object: bool,
    excludes_array: bool,
    /// It has `properties` or `additionalProperties` at all.
    constrains_keys: bool,
    properties: HashMap<String, Declared>,
    /// `additionalProperties` `true` or a schema.
    additional: Option<Declared>,
    /// An object `items`.
    items: Plain,
}

/// What declares a key.
enum Declared {
    /// The boolean schema `true`: nothing below is walked.
    Free,
    Schema(Plain),
}

impl Declared {
    fn of(child: &Value, depth: usize) -> Option<Declared> {
        match child {
            Value::Bool(true) => Some(Declared::Free),
            other => Plain::of(other, depth).map(Declared::Schema),
        }
    }
}

impl Plain {
    /// `schema` compiled, or `None` if it is not plain (or nests deeper
    /// than the walk goes).
    fn of(schema: &Value, depth: usize) -> Option<Plain> {
        if depth > MAX_WALK_DEPTH + 1 {
            return None;
        }
        let Value::Object(map) = schema else {
            return Some(Plain::Nothing);
        };
        if NOT_PLAIN.iter().any(|k| map.contains_key(*k)) {
            return None;
        }
        let mut properties = HashMap::new();
        if let Some(Value::Object(props)) = map.get("properties") {
            for (key, child) in props {
                properties.insert(key.clone(), Declared::of(child, depth + 1)?);
            }
        }
        let additional = match map.get("additionalProperties") {
            Some(child @ (Value::Bool(true) | Value::Object(_))) => {
                Some(Declared::of(child, depth + 1)?)
            }
            _ => None,
        };
        let items = match map.get("items") {
            Some(items @ Value::Object(_)) => Plain::of(items, depth + 1)?,
            Some(Value::Array(_)) => return None,
            _ => Plain::Nothing,
        };
        Some(Plain::Node(Box::new(PlainNode {
            excludes_object: excludes_type(schema, "object"),
            excludes_array: excludes_type(schema, "array"),
            constrains_keys: constrains_keys(schema),
            properties,
            additional,
            items,
        })))
    }

    /// [`Walk::visit`] of `instance` under this schema.
    fn visit(&self, instance: &Value, path: &mut String, depth: usize, out: &mut Vec<Violation>) {
        if depth > MAX_WALK_DEPTH {
            if matches!(instance, Value::Object(_) | Value::Array(_)) {
                out.push(too_deep(path));
            }
            return;
        }
        let node = match self {
            Plain::Node(node) => Some(&**node),
            Plain::Nothing => None,
        };
        match instance {
            Value::Object(map) => {
                let Some(node) = node else { return };
                if node.excludes_object || !node.constrains_keys {
                    return;
                }
                for (key, value) in map {
                    let declared = node.properties.get(key).or(node.additional.as_ref());
                    let len = path.len();
                    push_pointer(path, key);
                    match declared {
                        None => out.push(hallucinated(path)),
                        Some(Declared::Free) => {}
                        Some(Declared::Schema(child)) => child.visit(value, path, depth + 1, out),
                    }
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                if node.is_some_and(|n| n.excludes_array) {
                    return;
                }
                let below = node.map_or(&Plain::Nothing, |n| &n.items);
                for (i, item) in items.iter().enumerate() {
                    if !matches!(item, Value::Object(_) | Value::Array(_)) {
                        continue;
                    }
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    below.visit(item, path, depth + 1, out);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
}

/// `path` plus `/` and `key` as a JSON pointer segment ([`escape_pointer`]).
fn push_pointer(path: &mut String, key: &str) {
    path.push('/');
    if key.contains(['~', '/']) {
        path.push_str(&escape_pointer(key));
    } else {
        path.push_str(key);
    }
}

/// The violation for an argument no schema declares.
fn hallucinated(path: &str) -> Violation {
    Violation::new(
        Label::HallucinatedParam,
        path.to_string(),
        format!(
            "argument `{}` is not declared by the schema",
            clip(path, 120)
        ),
    )
}

/// The violation for a value nested deeper than the walk goes.
fn too_deep(path: &str) -> Violation {
    Violation::new(
        Label::SchemaViolation,
        path.to_string(),
        format!("the undeclared-argument check stops at {MAX_WALK_DEPTH} levels of nesting"),
    )
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
}

/// Longest name (in characters) [`Toolset::closest`] compares; OpenAI caps
/// function names at 64.
pub const MAX_SUGGEST_NAME: usize = 64;
/// Most allowlisted names [`Toolset::closest`] compares against.
pub const MAX_SUGGEST_CANDIDATES: usize = 1000;

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
        for def in defs {
            if let Some(i) = names.iter().position(|n| *n == def.name) {
                let count = defs.iter().filter(|d| d.name == def.name).count();
                schemas[i] = Schema {
                    root: Value::Bool(false),
                    compiled: Err(format!(
                        "tool `{}` is unusable: it is defined {count} times",
                        def.name
                    )),
                    strict: true,
                    patterns: HashMap::new(),
                    anchors: HashMap::new(),
                    plain: None,
                    flat: None,
                };
                continue;
            }
            let schema = match &def.parameters {
                Some(p) => {
                    let mut s = Schema::strict_with(p, assert_formats);
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
        Toolset {
            known: true,
            names,
            schemas,
            recent: Mutex::new(Vec::new()),
            recent_closest: Mutex::new(Vec::new()),
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

    /// The allowlisted name nearest to `name` by edit distance (ASCII
    /// case-insensitive), when it is close enough to be a plausible intent:
    /// at most a third of the longer name's length, and at least 1 edit.
    /// Bounded work: names longer than [`MAX_SUGGEST_NAME`] characters are
    /// never compared, and only the first [`MAX_SUGGEST_CANDIDATES`]
    /// allowlisted names are candidates.
    pub fn closest(&self, name: &str) -> Option<&str> {
        // Replay asks for the same unknown name in every mode: remember.
        if let Ok(recent) = self.recent_closest.lock()
            && let Some((_, found)) = recent.iter().find(|(n, _)| n == name)
        {
            return found.and_then(|i| self.names.get(i)).map(String::as_str);
        }
        let found = self.closest_index(name);
        if let Ok(mut recent) = self.recent_closest.lock() {
            if recent.len() >= RECENT_CHECKS {
                let _oldest = recent.remove(0);
            }
            recent.push((name.to_string(), found));
        }
        found.and_then(|i| self.names.get(i)).map(String::as_str)
    }

    fn closest_index(&self, name: &str) -> Option<usize> {
        if name.len() > 4 * MAX_SUGGEST_NAME {
            return None;
        }
        let len = name.chars().count();
        if len > MAX_SUGGEST_NAME {
            return None;
        }
        let lower = name.to_ascii_lowercase();
        self.names
            .iter()
            .take(MAX_SUGGEST_CANDIDATES)
            .enumerate()
            .filter_map(|(i, n)| {
                let n_len = n.chars().count();
                if n_len > MAX_SUGGEST_NAME {
                    return None;
                }
                let allowed = n_len.max(len).div_ceil(3).max(1);
                // The length difference is a lower bound of the distance.
                if n_len.abs_diff(len) > allowed {
                    return None;
                }
                let d = edit_distance_within(&lower, &n.to_ascii_lowercase(), allowed)?;
                Some((d, i))
            })
            .min_by_key(|(d, _)| *d)
            .map(|(_, i)| i)
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

fn compile(schema: &Value, assert_formats: bool) -> Result<Validator, String> {
    if let Some(r) = remote_ref(schema) {
        return Err(format!("remote $ref `{}` is never fetched", clip(r, 120)));
    }
    within_bounds(schema)?;
    let draft = match Draft::default().detect(schema) {
        Draft::Unknown => {
            let uri = schema.get("$schema").and_then(Value::as_str).unwrap_or("");
            return Err(format!(
                "`$schema` `{}` names no known draft",
                clip(uri, 120)
            ));
        }
        d => d,
    };
    let options = jsonschema::options().with_draft(draft);
    // `false` leaves the draft's own rule (asserted up to draft-07).
    let options = if assert_formats {
        options.should_validate_formats(true)
    } else {
        options
    };
    options
        .build(schema)
        .map_err(|e| format!("its schema does not compile: {}", clip(&e.to_string(), 160)))
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
    // Done nodes: address → (expanded size, depth below); `None` while on the path.
    let mut done: HashMap<*const Value, Option<(u64, usize)>> = HashMap::new();
    struct Frame<'v> {
        children: Vec<&'v Value>,
        next: usize,
        size: u64,
        depth: usize,
        node: &'v Value,
        base: &'v Value,
    }
    fn frame<'v>(
        node: &'v Value,
        base: &'v Value,
        root: &'v Value,
        anchors: &HashMap<String, String>,
    ) -> Frame<'v> {
        let mut children = Vec::new();
        let mut base = base;
        match node {
            Value::Object(map) => {
                if !std::ptr::eq(node, root)
                    && map
                        .get("$id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| !id.starts_with('#'))
                {
                    base = node;
                }
                for (k, child) in map {
                    match (k.as_str(), child) {
                        ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(r)) => {
                            if let Some(target) = resolve_local(base, anchors, k, r) {
                                children.push(target);
                            }
                        }
                        _ if DATA_KEYWORDS.contains(&k.as_str()) => {}
                        (_, Value::Object(_) | Value::Array(_)) => children.push(child),
                        _ => {}
                    }
                }
            }
            Value::Array(items) => children.extend(
                items
                    .iter()
                    .filter(|c| matches!(c, Value::Object(_) | Value::Array(_))),
            ),
            _ => {}
        }
        Frame {
            children,
            next: 0,
            size: 1,
            depth: 0,
            node,
            base,
        }
    }
    let mut path = vec![frame(schema, schema, schema, &anchors)];
    done.insert(std::ptr::from_ref(schema), None);
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
            match done.get(&std::ptr::from_ref(child)) {
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
                    done.insert(std::ptr::from_ref(child), None);
                    path.push(frame(child, base, schema, &anchors));
                }
            }
            continue;
        }
        // All children done: pop the frame, pass its totals to the parent.
        let Some(finished) = path.pop() else { break };
        let depth = finished.depth + 1;
        done.insert(
            std::ptr::from_ref(finished.node),
            Some((finished.size, depth)),
        );
        if let Some(parent) = path.last_mut() {
            parent.size = parent.size.saturating_add(finished.size);
            parent.depth = parent.depth.max(depth);
        }
    }
    Ok(())
}

/// A local reference's target within `base` (the root or an embedded
/// resource): `#`, `#/json/pointer`, `#anchor`, a `$dynamicRef`'s
/// `$dynamicAnchor`; `$recursiveRef` is `#`.
fn resolve_local<'v>(
    base: &'v Value,
    anchors: &HashMap<String, String>,
    keyword: &str,
    reference: &str,
) -> Option<&'v Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() || keyword == "$recursiveRef" {
        return Some(base);
    }
    if !fragment.starts_with('/') {
        let dynamic = (keyword == "$dynamicRef")
            .then(|| anchors.get(&format!("$dynamic:{fragment}")))
            .flatten();
        let pointer = dynamic.or_else(|| anchors.get(fragment))?;
        return base.pointer(pointer);
    }
    base.pointer(&percent_decode(fragment))
}

/// Keywords whose values are data, not subschemas: never scanned for `$ref`.
const DATA_KEYWORDS: [&str; 5] = ["const", "enum", "default", "examples", "description"];

/// The first `$ref` (or `$dynamicRef`/`$recursiveRef`) that is not local.
fn remote_ref(schema: &Value) -> Option<&str> {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    if matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef")
                        && let Value::String(r) = child
                    {
                        if !r.starts_with('#') {
                            return Some(r);
                        }
                        continue;
                    }
                    if DATA_KEYWORDS.contains(&k.as_str()) {
                        continue;
                    }
                    stack.push(child);
                }
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    None
}

/// Why the undeclared-key walk could not follow the schema's references,
/// if so: a `$ref` under an embedded `$id` resolves against that resource,
/// not the root, and a `$dynamicRef`/`$recursiveRef` depends on the dynamic
/// scope once the schema holds more than one resource. (In a schema of one
/// resource, `$recursiveRef` is `#` and `$dynamicRef` its `$dynamicAnchor`,
/// which the walk follows.) The tool is then unusable: the check cannot
/// decide, so it fails closed.
fn unfollowable_reference(schema: &Value) -> Option<String> {
    let draft4 = Draft::default().detect(schema) == Draft::Draft4;
    // (value, inside an embedded resource, is the root)
    let mut stack = vec![(schema, false, true)];
    let mut embedded = false;
    let mut dynamic = None;
    while let Some((v, inside, is_root)) = stack.pop() {
        match v {
            Value::Object(map) => {
                let id = map
                    .get("$id")
                    .or_else(|| map.get("id").filter(|_| draft4))
                    .and_then(Value::as_str)
                    .filter(|id| !id.starts_with('#'));
                let inside = inside || (id.is_some() && !is_root);
                embedded |= inside;
                for (k, child) in map {
                    match (k.as_str(), child) {
                        ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(r)) => {
                            if inside {
                                return Some(format!(
                                    "`{k}` `{}` is under an embedded `$id`",
                                    clip(r, 80)
                                ));
                            }
                            if k != "$ref" {
                                dynamic.get_or_insert_with(|| k.clone());
                            }
                        }
                        _ if DATA_KEYWORDS.contains(&k.as_str()) => {}
                        _ => stack.push((child, inside, false)),
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, inside, false))),
            _ => {}
        }
    }
    match dynamic {
        Some(k) if embedded => Some(format!(
            "`{k}` in a schema with embedded `$id` resources depends on the dynamic scope"
        )),
        _ => None,
    }
}

/// Every `patternProperties` regex of the schema, compiled once.
fn collect_patterns(schema: &Value, out: &mut HashMap<String, Option<Regex>>) {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::Object(pp)) = map.get("patternProperties") {
                    for pattern in pp.keys() {
                        // The validator's dialect: ECMA-262 translated the
                        // way `jsonschema` does (`\d`, `\w` are ASCII). A
                        // pattern that does not translate or compile
                        // declares nothing (fail closed).
                        out.entry(pattern.clone()).or_insert_with(|| {
                            let translated = jsonschema_regex::to_rust_regex(pattern).ok()?;
                            regex::RegexBuilder::new(&translated)
                                .size_limit(1 << 20)
                                .build()
                                .ok()
                        });
                    }
                }
                for (k, child) in map {
                    if !DATA_KEYWORDS.contains(&k.as_str()) {
                        stack.push(child);
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
}

/// Every `$anchor` (and draft 6/7 `"$id": "#name"`) of the schema → the JSON
/// pointer of the subschema that carries it.
fn collect_anchors(schema: &Value, out: &mut HashMap<String, String>) {
    let mut stack = vec![(schema, String::new())];
    while let Some((v, pointer)) = stack.pop() {
        match v {
            Value::Object(map) => {
                let anchor = map.get("$anchor").and_then(Value::as_str).or_else(|| {
                    map.get("$id")
                        .and_then(Value::as_str)
                        .and_then(|id| id.strip_prefix('#'))
                });
                if let Some(a) = anchor {
                    out.entry(a.to_string()).or_insert_with(|| pointer.clone());
                }
                // In a schema of one resource (see `unfollowable_reference`)
                // a `$dynamicRef` resolves to its one `$dynamicAnchor`.
                if let Some(a) = map.get("$dynamicAnchor").and_then(Value::as_str) {
                    out.entry(format!("$dynamic:{a}"))
                        .or_insert_with(|| pointer.clone());
                }
                for (k, child) in map {
                    if !DATA_KEYWORDS.contains(&k.as_str()) {
                        stack.push((child, format!("{pointer}/{}", escape_pointer(k))));
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    stack.push((child, format!("{pointer}/{i}")));
                }
            }
            _ => {}
        }
    }
}

fn map_error(e: &jsonschema::ValidationError<'_>) -> Violation {
    let path = e.instance_path().as_str().to_string();
    let at = if path.is_empty() {
        "/".to_string()
    } else {
        path.clone()
    };
    match e.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            let full = format!("{path}/{}", escape_pointer(&name));
            Violation::new(
                Label::MissingRequired,
                full,
                format!(
                    "required argument `{}` is missing at `{at}`",
                    clip(&name, 80)
                ),
            )
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let first = unexpected.first().cloned().unwrap_or_default();
            hallucinated(&format!("{path}/{}", escape_pointer(&first)))
        }
        ValidationErrorKind::Type { .. } => Violation::new(
            Label::TypeCoercion,
            path,
            format!("wrong type at `{at}`: {}", clip(&e.to_string(), 160)),
        ),
        ValidationErrorKind::AnyOf { .. }
        | ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => Violation::new(
            Label::SchemaViolation,
            path,
            format!(
                "`{at}` matches no allowed alternative (anyOf/oneOf): {}",
                clip(&e.to_string(), 120)
            ),
        ),
        _ => Violation::new(
            Label::SchemaViolation,
            path,
            format!(
                "`{at}` violates `{}`: {}",
                e.kind().keyword(),
                clip(&e.to_string(), 160)
            ),
        ),
    }
}

/// The schemas that apply to one instance location (see [`Walk::expand`]).
struct Group<'s> {
    base: Vec<&'s Value>,
    branches: Vec<&'s Value>,
    /// Why the walk cannot tell what this location declares, if so.
    undecidable: Option<String>,
}

/// The undeclared-key walk: see the module docs for what counts as declared.
struct Walk<'s, 'o> {
    root: &'s Value,
    patterns: &'s HashMap<String, Option<Regex>>,
    anchors: &'s HashMap<String, String>,
    out: &'o mut Vec<Violation>,
}

impl<'s> Walk<'s, '_> {
    /// Visits `instance` under the schemas `direct` (conjunctive: all apply).
    fn visit(&mut self, direct: Vec<&'s Value>, instance: &Value, path: &mut String, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            // Deeper than any JSON reader nests: fail closed.
            if matches!(instance, Value::Object(_) | Value::Array(_)) {
                self.out.push(too_deep(path));
            }
            return;
        }
        let Group {
            base,
            branches,
            undecidable,
        } = self.expand(direct);
        if let Some(why) = undecidable
            && matches!(instance, Value::Object(_) | Value::Array(_))
        {
            let at = if path.is_empty() { "/" } else { path.as_str() };
            self.out.push(Violation::new(
                Label::SchemaViolation,
                path.clone(),
                format!("the undeclared-argument check cannot decide at `{at}`: {why}"),
            ));
            return;
        }
        match instance {
            Value::Object(map) => {
                // A schema that excludes objects reports a type error instead.
                if base.iter().any(|s| excludes_type(s, "object")) {
                    return;
                }
                // A schema that says nothing about an object's keys (`{}`,
                // `{"type": "object"}`, an array without `items`) is a
                // free-form dict: its keys are the caller's data, not
                // parameters the model could hallucinate.
                if !base
                    .iter()
                    .chain(branches.iter())
                    .any(|s| constrains_keys(s))
                {
                    return;
                }
                for (key, value) in map {
                    let mut declared = false;
                    let mut free = false;
                    let mut children: Vec<&'s Value> = Vec::new();
                    for s in base.iter().chain(branches.iter()) {
                        if let Some(child) = self.declaration(s, key) {
                            declared = true;
                            free |= child.iter().any(|c| matches!(c, Value::Bool(true)));
                            children.extend(child);
                        }
                    }
                    let len = path.len();
                    push_pointer(path, key);
                    if !declared {
                        self.out.push(hallucinated(path));
                    } else if !free {
                        self.visit(children, value, path, depth + 1);
                    }
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                if base.iter().any(|s| excludes_type(s, "array")) {
                    return;
                }
                for (i, item) in items.iter().enumerate() {
                    if !matches!(item, Value::Object(_) | Value::Array(_)) {
                        continue;
                    }
                    let mut children = Vec::new();
                    for s in base.iter().chain(branches.iter()) {
                        item_schemas(s, i, &mut children);
                    }
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    self.visit(children, item, path, depth + 1);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// The schemas that apply to the same instance: `direct`, their `$ref`
    /// targets and `allOf` members (base), and the alternatives of `anyOf`,
    /// `oneOf`, `if`/`then`/`else`, `dependentSchemas` (branches, used only
    /// permissively: what they declare counts as declared).
    fn expand(&self, direct: Vec<&'s Value>) -> Group<'s> {
        let mut base: Vec<&'s Value> = Vec::new();
        let mut branches: Vec<&'s Value> = Vec::new();
        let mut undecidable = None;
        let mut stack: Vec<(&'s Value, bool)> =
            direct.into_iter().rev().map(|s| (s, false)).collect();
        while let Some((s, is_branch)) = stack.pop() {
            let Value::Object(map) = s else { continue };
            if base
                .iter()
                .chain(branches.iter())
                .any(|seen: &&Value| std::ptr::eq(*seen, s))
            {
                continue;
            }
            if base.len() + branches.len() >= MAX_GROUP {
                // What the rest would declare is unknown: fail closed.
                undecidable = Some(format!(
                    "more than {MAX_GROUP} subschemas apply to one value"
                ));
                break;
            }
            if is_branch {
                branches.push(s);
            } else {
                base.push(s);
            }
            for keyword in ["$ref", "$dynamicRef", "$recursiveRef"] {
                let Some(r) = map.get(keyword).and_then(Value::as_str) else {
                    continue;
                };
                match self.resolve(keyword, r) {
                    Some(target) => stack.push((target, is_branch)),
                    None => {
                        undecidable.get_or_insert_with(|| {
                            format!(
                                "`{keyword}` `{}` resolves to nothing it can read",
                                clip(r, 80)
                            )
                        });
                    }
                }
            }
            if let Some(Value::Array(all)) = map.get("allOf") {
                stack.extend(all.iter().map(|b| (b, is_branch)));
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alts)) = map.get(key) {
                    stack.extend(alts.iter().map(|b| (b, true)));
                }
            }
            for key in ["if", "then", "else"] {
                if let Some(b) = map.get(key) {
                    stack.push((b, true));
                }
            }
            if let Some(Value::Object(deps)) = map.get("dependentSchemas") {
                stack.extend(deps.values().map(|b| (b, true)));
            }
        }
        Group {
            base,
            branches,
            undecidable,
        }
    }

    /// Whether schema `s` declares `key`; if so, the subschemas that apply
    /// to its value (JSON Schema semantics: `additionalProperties` only for
    /// keys neither in `properties` nor matched by `patternProperties`).
    fn declaration(&self, s: &'s Value, key: &str) -> Option<Vec<&'s Value>> {
        let map = s.as_object()?;
        let mut children = Vec::new();
        let mut declared = false;
        if let Some(child) = map.get("properties").and_then(|p| p.get(key)) {
            declared = true;
            children.push(child);
        }
        if let Some(Value::Object(pp)) = map.get("patternProperties") {
            for (pattern, child) in pp {
                if let Some(Some(re)) = self.patterns.get(pattern)
                    && re.is_match(key)
                {
                    declared = true;
                    children.push(child);
                }
            }
        }
        if !declared {
            for keyword in ["additionalProperties", "unevaluatedProperties"] {
                match map.get(keyword) {
                    Some(child @ Value::Bool(true)) => {
                        declared = true;
                        children.push(child);
                    }
                    Some(child @ Value::Object(_)) => {
                        declared = true;
                        children.push(child);
                    }
                    _ => {}
                }
            }
        }
        declared.then_some(children)
    }

    /// A local reference's target (`#`, `#/json/pointer`, `#anchor`; for
    /// `$dynamicRef` the `$dynamicAnchor` of that name first; `$recursiveRef`
    /// is `#`: the schema is one resource, see `unfollowable_reference`).
    /// Remote references resolve to nothing (they made the schema unusable).
    fn resolve(&self, keyword: &str, reference: &str) -> Option<&'s Value> {
        resolve_local(self.root, self.anchors, keyword, reference)
    }
}

/// The subschemas that apply to item `i` of an array under schema `s`.
fn item_schemas<'s>(s: &'s Value, i: usize, out: &mut Vec<&'s Value>) {
    let Some(map) = s.as_object() else { return };
    let prefix_len = match map.get("prefixItems") {
        Some(Value::Array(prefix)) => {
            if let Some(p) = prefix.get(i) {
                out.push(p);
            }
            prefix.len()
        }
        _ => 0,
    };
    match map.get("items") {
        Some(items @ Value::Object(_)) if i >= prefix_len => out.push(items),
        Some(Value::Array(tuple)) => match tuple.get(i) {
            Some(p) => out.push(p),
            None => {
                if let Some(extra @ Value::Object(_)) = map.get("additionalItems") {
                    out.push(extra);
                }
            }
        },
        _ => {}
    }
    if let Some(extra @ Value::Object(_)) = map.get("unevaluatedItems") {
        out.push(extra);
    }
}

/// Whether `s` has a `type` that does not allow `ty`.
fn excludes_type(s: &Value, ty: &str) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t != ty,
        Some(Value::Array(ts)) => !ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

/// A JSON pointer segment for `key` (`~` → `~0`, `/` → `~1`).
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Percent-decodes a URI fragment (`%24defs` → `$defs`); invalid sequences stay.
fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
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

/// Levenshtein distance over chars, O(n·m) time and O(m) space; inputs are
/// clipped to [`MAX_SUGGEST_NAME`] chars (callers skip longer names).
/// `Some(distance)` when it is at most `max`; stops as soon as a whole row
/// exceeds `max` (the distance can only grow from there).
fn edit_distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().take(MAX_SUGGEST_NAME).collect();
    let b: Vec<char> = b.chars().take(MAX_SUGGEST_NAME).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
        if prev.iter().min().is_some_and(|m| *m > max) {
            return None;
        }
    }
    Some(prev[b.len()]).filter(|d| *d <= max)
}

/// Whether `schema` says anything about an object's keys.
fn constrains_keys(schema: &Value) -> bool {
    [
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
    ]
    .iter()
    .any(|k| schema.get(k).is_some())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

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

/// The compiled walk of a plain schema ([`Plain`]) against the general
/// [`Walk`]: same violations, same order, on the bundled and peer corpora's
/// schemas and arguments and on schemas built to reach every rule.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod plain_walk {
    use super::*;
    use serde_json::json;
    use std::path::Path;
    use toolgate_formats::{Input, ParamTypes, Strictness};

    /// Compares both walks; says whether the plain one ran.
    fn same(schema: &Value, instance: &Value) -> bool {
        let s = Schema::strict(schema);
        let (mut plain, mut general) = (Vec::new(), Vec::new());
        s.undeclared(instance, &mut plain);
        s.undeclared_general(instance, &mut general);
        let seen = |v: &[Violation]| -> Vec<(Label, String, String)> {
            v.iter()
                .map(|v| (v.label, v.path.clone(), v.reason.clone()))
                .collect()
        };
        assert_eq!(seen(&plain), seen(&general), "{schema} on {instance}");
        s.plain.is_some()
    }

    fn nested_arrays(depth: usize) -> Value {
        (0..depth).fold(json!([{"x": 1}]), |v, _| json!([v]))
    }

    #[test]
    fn built_schemas_reach_every_rule() {
        let item = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let schemas = [
            json!({"type": "object", "properties": {"x": true, "y": false, "z": {"type": "object", "properties": {"q": {}}}}}),
            json!({"type": "object", "properties": {"x": {}}, "additionalProperties": true}),
            json!({"type": "object", "properties": {"x": {}}, "additionalProperties": false}),
            json!({"type": "object", "additionalProperties": {"type": "object", "properties": {"k": {}}}}),
            json!({"type": "object", "properties": {"list": {"type": "array", "items": item}}}),
            json!({"type": "object", "properties": {"list": {"type": "array", "items": true}}}),
            json!({"type": "object", "properties": {"list": {"type": ["array", "null"]}}}),
            json!({"type": "object", "properties": {"o": {"type": "string"}, "p": {"type": ["object", "null"], "properties": {}}}}),
            json!({"type": "object", "properties": {"a~b/c": {"type": "object", "properties": {}}}}),
            json!({"type": "object", "properties": {"free": {"type": "object"}}}),
            json!({"type": "object", "properties": "not an object", "additionalProperties": false}),
            json!(false),
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d"}}, "$defs": {"d": {}}}),
        ];
        let instances = [
            json!({}),
            json!({"x": 1, "y": {"deep": 1}, "z": {"q": 1, "r": 2}, "w": [1]}),
            json!({"x": {"any": 1}, "extra": {"k": 1}, "k": 3}),
            json!({"extra": {"k": 1, "j": 2}}),
            json!({"list": [{"a": 1}, {"b": 2}, 3, [{"c": 1}], [[{"d": 1}]]]}),
            json!({"o": {"n": 1}, "p": {"n": 1}, "a~b/c": {"u": 1}, "free": {"u": 1}}),
            json!({"list": nested_arrays(140)}),
            json!({"a~b/c": nested_arrays(130), "x": nested_arrays(135)}),
        ];
        let mut plain = 0;
        for schema in &schemas {
            for instance in &instances {
                plain += usize::from(same(schema, instance));
            }
        }
        // All but the `$ref` schema and the one that does not compile
        // (`properties` a string) are plain.
        assert_eq!(plain, (schemas.len() - 2) * instances.len());
    }

    #[test]
    fn corpus_schemas_and_arguments() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut paths = vec![root.join("transcripts")];
        let peers = root.join("../shared/corpora/peers");
        if peers.is_dir() {
            paths.push(peers);
        }
        let extractors = toolgate_formats::builtin();
        let (mut compared, mut plain) = (0, 0);
        for t in toolgate_core::load_paths(&paths).into_iter().flatten() {
            let types = ParamTypes::from_transcript(&t);
            let input = Input::from_transcript(&t, &types);
            let mut args: Vec<Value> = Vec::new();
            for e in &extractors {
                for c in e.extract(&input, Strictness::Lenient) {
                    if let Some(call) = c.call() {
                        args.push(Value::Object(call.arguments));
                    }
                }
            }
            args.dedup();
            for def in t.tools.iter() {
                let Some(schema) = &def.parameters else {
                    continue;
                };
                for a in &args {
                    plain += usize::from(same(schema, a));
                    compared += 1;
                }
            }
        }
        assert!(
            // The bundled corpus alone gives 400 comparisons, 386 plain.
            compared >= 400 && plain > compared / 2,
            "{plain} of {compared}"
        );
    }
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
