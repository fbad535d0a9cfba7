//! The strict undeclared-key walk: every key of the arguments, at any
//! depth, must be declared by a schema that applies to its object
//! (`properties`, a matching `patternProperties`, `additionalProperties` or
//! `unevaluatedProperties` `true` or a schema), following local `$ref`s,
//! `allOf`, and every branch of `anyOf`/`oneOf`/`if`/`then`/`else` and
//! `dependentSchemas`. [`Plain`] is the walk compiled ahead for a schema
//! that uses none of the expanding keywords; [`Walk`] is the general one.
//! Both are bounded (depth, schemas per location) and fail closed.

use super::refs::{escape_pointer, resolve_local};
use super::{Schema, Violation, clip};
use regex_automata::meta::Regex;
use serde_json::Value;
use std::collections::HashMap;
use toolgate_core::Label;

/// Deepest instance level the undeclared-key walk visits.
const MAX_WALK_DEPTH: usize = 128;

/// Most schemas gathered for one instance location (bounds recursive `$ref`s).
const MAX_GROUP: usize = 256;

impl Schema {
    /// The undeclared-key violations of `instance`, in discovery order.
    pub(super) fn undeclared(&self, instance: &Value, found: &mut Vec<Violation>) {
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
pub(super) enum Plain {
    /// No object schema applies (the boolean `false`, or an array's items
    /// without an `items` schema): objects below are not checked, arrays
    /// are descended for the depth limit only.
    Nothing,
    /// One object schema.
    Node(Box<PlainNode>),
}

pub(super) struct PlainNode {
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
    pub(super) fn of(schema: &Value, depth: usize) -> Option<Plain> {
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
pub(super) fn hallucinated(path: &str) -> Violation {
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
    patterns: &'s HashMap<String, Regex>,
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
                if let Some(re) = self.patterns.get(pattern)
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
                        args.push(Value::Object(std::sync::Arc::unwrap_or_clone(
                            call.arguments,
                        )));
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
