//! `$ref` handling, without ever fetching: local references resolved as
//! JSON pointers or `$anchor`s, remote ones (anything not starting with
//! `#`) detected before compiling, and the references the strict walk
//! cannot follow (under an embedded `$id`, dynamic references in a schema
//! with embedded resources) found so the tool fails closed.

use super::clip;
use jsonschema::Draft;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A local reference's target within `base` (the root or an embedded
/// resource): `#`, `#/json/pointer`, `#anchor`, a `$dynamicRef`'s
/// `$dynamicAnchor`; `$recursiveRef` is `#`.
pub(super) fn resolve_local<'v>(
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

/// Keywords whose value maps names (of properties, patterns, definitions)
/// to subschemas: its keys are names, never keywords.
const NAME_MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// The members of `map` that can hold subschemas, each with whether it is
/// itself a map of names. `names`: `map` is a map of names (the value of
/// `properties`, `$defs`…), whose every member is a subschema whatever its
/// name — a property may be called `enum`, `default` or `description` —
/// else `map` is a schema, whose data keywords ([`DATA_KEYWORDS`]) hold no
/// subschema. The one rule every scan of a schema's tree follows: skipping
/// those names under `properties` too hid a property's `$id`, anchors,
/// patterns, cycles and expansion from the scans, while the validator
/// read them (an undeclared argument executed).
pub(super) fn members(
    map: &Map<String, Value>,
    names: bool,
) -> impl Iterator<Item = (&String, &Value, bool)> {
    map.iter().filter_map(move |(k, child)| {
        if names {
            Some((k, child, false))
        } else if DATA_KEYWORDS.contains(&k.as_str()) {
            None
        } else {
            Some((
                k,
                child,
                NAME_MAPS.contains(&k.as_str()) && child.is_object(),
            ))
        }
    })
}

/// Every schema object of `schema` (the root first, then depth-first),
/// reached through [`members`]: the maps of names themselves (`properties`,
/// `$defs`…) and data keywords are not schemas and are not yielded. The
/// one visitor of the scans that only read each schema's own keywords
/// (patterns, `$schema`); scans that follow references or track the
/// enclosing resource keep their own stacks.
pub(super) fn subschemas(schema: &Value) -> Subschemas<'_> {
    Subschemas {
        stack: vec![(schema, false)],
    }
}

/// The iterator of [`subschemas`].
pub(super) struct Subschemas<'v> {
    /// (value, is a map of names: see [`members`])
    stack: Vec<(&'v Value, bool)>,
}

impl<'v> Iterator for Subschemas<'v> {
    type Item = &'v Map<String, Value>;

    fn next(&mut self) -> Option<Self::Item> {
        while let Some((v, names)) = self.stack.pop() {
            match v {
                Value::Object(map) => {
                    self.stack
                        .extend(members(map, names).map(|(_, c, n)| (c, n)));
                    if !names {
                        return Some(map);
                    }
                }
                Value::Array(items) => self.stack.extend(items.iter().map(|c| (c, false))),
                _ => {}
            }
        }
        None
    }
}

/// The first `$ref` (or `$dynamicRef`/`$recursiveRef`) that is not local.
pub(super) fn remote_ref(schema: &Value) -> Option<&str> {
    // (value, is a map of names: see [`members`])
    let mut stack = vec![(schema, false)];
    while let Some((v, names)) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, child, child_names) in members(map, names) {
                    if !names
                        && matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef")
                        && let Value::String(r) = child
                    {
                        if !r.starts_with('#') {
                            return Some(r);
                        }
                        continue;
                    }
                    stack.push((child, child_names));
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, false))),
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
pub(super) fn unfollowable_reference(schema: &Value) -> Option<String> {
    let draft4 = Draft::default().detect(schema) == Draft::Draft4;
    // (value, inside an embedded resource, is the root, is a map of names)
    let mut stack = vec![(schema, false, true, false)];
    let mut embedded = false;
    let mut dynamic = None;
    while let Some((v, inside, is_root, names)) = stack.pop() {
        match v {
            Value::Object(map) => {
                let id = map
                    .get("$id")
                    .or_else(|| map.get("id").filter(|_| draft4))
                    .and_then(Value::as_str)
                    .filter(|id| !names && !id.starts_with('#'));
                let inside = inside || (id.is_some() && !is_root);
                embedded |= inside;
                for (k, child, child_names) in members(map, names) {
                    match (k.as_str(), child) {
                        ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(r)) if !names => {
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
                        _ => stack.push((child, inside, false, child_names)),
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, inside, false, false))),
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

/// Every `$anchor` (and draft 6/7 `"$id": "#name"`) of the schema → the JSON
/// pointer of the subschema that carries it.
pub(super) fn collect_anchors(schema: &Value, out: &mut HashMap<String, String>) {
    // (value, its JSON pointer, is a map of names)
    let mut stack = vec![(schema, String::new(), false)];
    while let Some((v, pointer, names)) = stack.pop() {
        match v {
            Value::Object(map) => {
                if !names {
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
                }
                for (k, child, child_names) in members(map, names) {
                    let at = format!("{pointer}/{}", escape_pointer(k));
                    stack.push((child, at, child_names));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    stack.push((child, format!("{pointer}/{i}"), false));
                }
            }
            _ => {}
        }
    }
}

/// Keywords whose subschemas apply to the instance itself (not to a
/// member or an item of it). A cycle through these alone never reaches
/// the instance's parts: evaluating it never ends.
const IN_PLACE: [&str; 9] = [
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
];

/// Why `schema` cannot be evaluated, if a chain of `$ref`s (and in-place
/// applicators: `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
/// `dependentSchemas`) leads from a subschema back to itself without
/// going down into a member or an item: `{"$ref": "#"}`, two definitions
/// naming each other, a property whose schema is its own `$ref`. The
/// validator took such a schema as accepting anything, so the tool
/// executed any arguments; fail closed instead. Recursion through
/// `properties`, `items` and the like is fine (it ends with the instance).
/// Linear in the schema's size: one depth-first search with colours over
/// the in-place edges, from every subschema.
pub(super) fn in_place_cycle(schema: &Value) -> Option<String> {
    let mut anchors = HashMap::new();
    collect_anchors(schema, &mut anchors);
    // Every subschema object with the resource it resolves `$ref`s in.
    let mut nodes: Vec<(&Value, &Value)> = Vec::new();
    // (value, its resource, is a map of names)
    let mut stack = vec![(schema, schema, false)];
    while let Some((v, base, names)) = stack.pop() {
        match v {
            Value::Object(map) if names => {
                stack.extend(members(map, true).map(|(_, c, n)| (c, base, n)));
            }
            Value::Object(map) => {
                let base = if !std::ptr::eq(v, schema)
                    && map
                        .get("$id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| !id.starts_with('#'))
                {
                    v
                } else {
                    base
                };
                nodes.push((v, base));
                stack.extend(members(map, false).map(|(_, c, n)| (c, base, n)));
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, base, false))),
            _ => {}
        }
    }
    let base_of: HashMap<*const Value, &Value> = nodes
        .iter()
        .map(|(v, b)| (std::ptr::from_ref(*v), *b))
        .collect();
    let next = |v| in_place_next(v, schema, &base_of, &anchors);
    // 1: on the current path; 2: done.
    let mut colour: HashMap<*const Value, u8> = HashMap::with_capacity(nodes.len());
    for &(start, _) in &nodes {
        if colour.contains_key(&std::ptr::from_ref(start)) {
            continue;
        }
        colour.insert(std::ptr::from_ref(start), 1);
        let mut path: Vec<(&Value, Vec<&Value>, usize)> = vec![(start, next(start), 0)];
        while let Some((node, succ, i)) = path.last_mut() {
            let Some(&child) = succ.get(*i) else {
                colour.insert(std::ptr::from_ref(*node), 2);
                path.pop();
                continue;
            };
            *i += 1;
            match colour.get(&std::ptr::from_ref(child)) {
                Some(1) => {
                    return Some(
                        "its schema refers back to itself without reading any argument (a \
                         cycle of $ref, allOf, anyOf…): no argument can be checked against it"
                            .to_string(),
                    );
                }
                Some(_) => {}
                None => {
                    colour.insert(std::ptr::from_ref(child), 1);
                    path.push((child, next(child), 0));
                }
            }
        }
    }
    None
}

/// The in-place successors of subschema `v` ([`in_place_cycle`]): its
/// resolved references and its [`IN_PLACE`] subschemas, objects only (a
/// boolean schema ends a chain).
fn in_place_next<'v>(
    v: &'v Value,
    root: &'v Value,
    base_of: &HashMap<*const Value, &'v Value>,
    anchors: &HashMap<String, String>,
) -> Vec<&'v Value> {
    let mut out = Vec::new();
    let Value::Object(map) = v else {
        return out;
    };
    let base = base_of.get(&std::ptr::from_ref(v)).copied().unwrap_or(root);
    for (k, child) in map {
        match (k.as_str(), child) {
            ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(r)) => {
                // A target that does not resolve is the compiler's to refuse.
                if let Some(t) = resolve_local(base, anchors, k, r) {
                    out.push(t);
                }
            }
            ("dependentSchemas" | "dependencies", Value::Object(m)) => out.extend(m.values()),
            (k, Value::Array(items)) if IN_PLACE.contains(&k) => out.extend(items.iter()),
            (k, Value::Object(_)) if IN_PLACE.contains(&k) => out.push(child),
            _ => {}
        }
    }
    out.retain(|c| c.is_object());
    out
}

/// A JSON pointer segment for `key` (`~` → `~0`, `/` → `~1`).
pub(super) fn escape_pointer(key: &str) -> String {
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
