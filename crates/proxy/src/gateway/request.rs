//! Reading a chat completion request: only the fields the proxy needs.
//!
//! A request is mostly `messages`, which the proxy forwards and never reads.
//! [`read`] walks the body once without building it: every string, number
//! and key goes through the same serde_json parser a `Value` would (so the
//! same bodies are refused: invalid UTF-8, lone surrogate escapes, numbers
//! out of range, nesting past 128), but only `model`, `stream` and
//! `tool_choice` become values; `tools` and `functions` are kept as their
//! bytes, which find the allowlist already read ([`ToolCache`]).
//!
//! Whatever the fast reader is unsure of goes to the reader it stands in
//! for ([`read_value`]: the body as a `Value`): a body it refuses (the
//! error message comes from the full parse, positions and all), tools it
//! has not seen, and the one key serde_json's `Value` treats specially (the
//! raw-value token). So a fast read gives exactly what the full read gives.
//! The property test `fast_and_full_reads_agree` holds them together on
//! valid and hostile bodies.

use super::checked::{Counted, Key, Nodes, Seen};
use super::scan::Cur;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use toolgate_core::ToolDef;

/// What the proxy reads of a chat request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fields {
    /// `model`, when it is a string (unclipped).
    pub model: Option<String>,
    /// `stream: true`.
    pub stream: bool,
    /// The allowlist: `tools`, then the legacy `functions`.
    pub tools: Arc<Vec<ToolDef>>,
    /// Whether the request has a top-level key that may ask for a JSON
    /// answer ([`JSON_KEYS`], each as JSON decodes it: an escaped
    /// `response\u005fformat` is `response_format`): only then is the
    /// request read for it (`Ctx::asks_json`).
    pub json_keys: bool,
}

/// The request's keys that may ask for a JSON answer, in any server's
/// words (`Ctx::asks_json` reads what they ask).
pub(crate) const JSON_KEYS: [&str; 5] = [
    "response_format",
    "guided_json",
    "structured_outputs",
    "json_schema",
    "format",
];

/// Why a chat request body is not read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Unreadable {
    /// It cannot be judged: not JSON, not an object, ambiguous, `stream`
    /// or `parallel_tool_calls` neither a boolean nor null.
    Invalid(String),
    /// It holds more JSON values than the limit (`--max-request-nodes`):
    /// refused before more of it is built.
    TooManyNodes(usize),
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Unreadable::Invalid(why) => f.write_str(why),
            Unreadable::TooManyNodes(n) => write!(
                f,
                "the request body holds more than {n} JSON values (objects, arrays, keys, strings, numbers, booleans, nulls): the limit, --max-request-nodes"
            ),
        }
    }
}

/// The default `--max-request-nodes`. A real chat request stays far
/// below: a thousand messages of a few fields each, a hundred tools of a
/// hundred properties with a few keywords each, and base64 images (one
/// string each) come to some 100,000 nodes; a million leaves ten times
/// that. Past it, what a `Value` of the body costs (up to some 70 bytes a
/// node, for every copy the proxy makes) is what the limit bounds: about
/// 100 MB, where the 64 MiB byte limit alone let one request cost 4 GB.
pub const DEFAULT_MAX_REQUEST_NODES: usize = 1_000_000;

/// [`read_value`], refusing first, without building it, a body of more
/// than `max_nodes` JSON values.
pub(crate) fn read_value_within(body: &[u8], max_nodes: usize) -> Result<Value, Unreadable> {
    if super::checked::too_many_nodes(body, &Nodes::new(max_nodes)) {
        return Err(Unreadable::TooManyNodes(max_nodes));
    }
    read_value(body).map_err(Unreadable::Invalid)
}

/// Why a chat request body cannot be judged, if it cannot: not JSON, not
/// an object, ambiguous, `stream` or `parallel_tool_calls` neither a
/// boolean nor null. Builds the body
/// whatever its size: a body from a client goes through
/// [`read_value_within`] (or [`read`]) first.
pub(crate) fn read_value(body: &[u8]) -> Result<Value, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the request body is not valid JSON: {e}"))?;
    if !v.is_object() {
        return Err("the request body is not a JSON object".into());
    }
    // The body goes upstream as it came: a key given twice would be judged
    // by its last value (`tools`, `stream`, `model`…) and read upstream
    // maybe by its first.
    if let Some(why) = super::checked::repeated_key(body) {
        return Err(format!("the request body is ambiguous: {why}"));
    }
    // The members the proxy acts on as booleans. A server reading the
    // request leniently (pydantic: `"false"`, `0`, `"no"`) may take another
    // value for one of them than the proxy: `parallel_tool_calls: "false"`
    // was one call at most to vLLM and any number to the proxy.
    for key in BOOLEANS {
        match v.get(key) {
            None | Some(Value::Null) | Some(Value::Bool(_)) => {}
            Some(other) => {
                return Err(format!(
                    "`{key}` must be true or false, not {}",
                    super::check::clip(&other.to_string(), 40)
                ));
            }
        }
    }
    // Which tools may be called: a choice that cannot be read leaves the
    // allowlist unknown ([`toolgate_core::choice`]).
    toolgate_core::choice::allowed(&v)?;
    Ok(v)
}

/// The request's members the proxy acts on as booleans (`stream`, and
/// `parallel_tool_calls: false`, one call at most): each must be a boolean
/// or null, else the request cannot be judged.
const BOOLEANS: [&str; 2] = ["stream", "parallel_tool_calls"];

/// The fields of a request read as a `Value` (by [`read_value`]).
pub(crate) fn fields_of(request: &Value) -> Fields {
    Fields {
        model: request
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string),
        stream: request.get("stream").and_then(Value::as_bool) == Some(true),
        tools: Arc::new(narrowed(request_tools(request), request)),
        json_keys: JSON_KEYS.iter().any(|k| request.get(k).is_some()),
    }
}

/// `tools` narrowed to those the request's `tool_choice` (or legacy
/// `function_call`) lets the model call ([`toolgate_core::choice`]): a
/// call of another of its tools is `wrong_tool`, also from an upstream
/// that ignored the choice. `"none"` keeps them all: vLLM without a tool
/// parser needs it to accept tools, and the proxy reads the calls from the
/// text itself. A choice that cannot be read allows none (the full read
/// refuses such a request before).
fn narrowed(mut tools: Vec<ToolDef>, request: &Value) -> Vec<ToolDef> {
    use toolgate_core::choice::Allowed;
    match toolgate_core::choice::allowed(request) {
        Ok(Allowed::Any | Allowed::NoCall) => {}
        Ok(allowed) => tools.retain(|t| allowed.allows(&t.name)),
        Err(_) => tools.clear(),
    }
    tools
}

/// The request's allowlist: its `tools` and its legacy `functions`, read as
/// the loader reads a transcript's (OpenAI or bare definitions). Unreadable
/// tools allowlist nothing: fail closed.
pub(crate) fn request_tools(request: &Value) -> Vec<ToolDef> {
    let mut all = Vec::new();
    for key in ["tools", "functions"] {
        let Some(tools) = request.get(key) else {
            continue;
        };
        let mut obj = Map::new();
        obj.insert("output".into(), json!(""));
        obj.insert("tools".into(), tools.clone());
        match toolgate_core::load::from_object(
            obj,
            std::path::Path::new("<request>"),
            None,
            "request".into(),
        ) {
            Ok(t) => all.extend(t.tools.iter().cloned()),
            Err(_) => return Vec::new(),
        }
    }
    all
}

/// Reads a request body: the fast read when it can vouch for it, else the
/// full one. The `Value` is returned when the full read ran (the caller
/// keeps it rather than parse the body again). A body of more than
/// `max_nodes` JSON values is refused as the count passes the limit
/// (both reads count).
pub(crate) fn read(
    cache: &ToolCache,
    body: &[u8],
    max_nodes: usize,
) -> Result<(Fields, Option<Value>), Unreadable> {
    match fast(cache, body, max_nodes) {
        Fast::Read(fields) => Ok((fields, None)),
        Fast::TooManyNodes => Err(Unreadable::TooManyNodes(max_nodes)),
        Fast::NewTools { tools, functions } => {
            let v = read_value_within(body, max_nodes)?;
            let fields = fields_of(&v);
            // These bytes parsed, at this place in a body: the next body
            // that holds them there holds the same tools (and as many
            // nodes: the fast read, which skips them, counts them so).
            let nodes = [tools, functions]
                .into_iter()
                .flatten()
                .map(|t| node_count(t.as_bytes()))
                .sum();
            cache.insert(tools, functions, &fields.tools, nodes);
            Ok((fields, Some(v)))
        }
        Fast::Unsure => {
            let v = read_value_within(body, max_nodes)?;
            Ok((fields_of(&v), Some(v)))
        }
    }
}

/// How many JSON values `text` (which parsed) holds.
fn node_count(text: &[u8]) -> usize {
    let nodes = Nodes::new(usize::MAX);
    super::checked::too_many_nodes(text, &nodes);
    usize::MAX - nodes.left()
}

/// What the fast read found.
enum Fast<'a> {
    /// Everything, tools included.
    Read(Fields),
    /// Tools it has not read before (these bytes).
    NewTools {
        tools: Option<&'a str>,
        functions: Option<&'a str>,
    },
    /// A body it does not vouch for: the full read decides.
    Unsure,
    /// More JSON values than the limit: the read stopped there.
    TooManyNodes,
}

fn fast<'a>(cache: &ToolCache, body: &'a [u8], max_nodes: usize) -> Fast<'a> {
    // The whole body checked as UTF-8 at once (SIMD), then read as text:
    // serde_json's reader of a `str` does not check each string again.
    let Ok(text) = simdutf8::basic::from_utf8(body) else {
        return Fast::Unsure;
    };
    // The usual body is read by hand ([`super::scan::request`]); what that
    // reader leaves, by serde_json's.
    let (top, left) = match scan(text, max_nodes) {
        Some(read) => read,
        None => {
            let nodes = Nodes::new(max_nodes);
            let mut de = serde_json::Deserializer::from_str(text);
            let Ok(top) = de.deserialize_any(TopVisitor(&nodes)) else {
                if nodes.over() {
                    return Fast::TooManyNodes;
                }
                return Fast::Unsure;
            };
            if de.end().is_err() {
                return Fast::Unsure;
            }
            (top, nodes.left())
        }
    };
    let model = match top.model {
        Some(Scalar::Str(m)) => Some(m),
        _ => None,
    };
    let stream = match top.stream {
        None | Some(Scalar::Null) => false,
        Some(Scalar::Bool(b)) => b,
        // Refused: the full read says why.
        Some(_) => return Fast::Unsure,
    };
    // Read by the full read when needed (`Ctx::one_call_only`); anything
    // but a boolean or null is refused there.
    if !matches!(
        top.parallel_tool_calls,
        None | Some(Scalar::Null | Scalar::Bool(_))
    ) {
        return Fast::Unsure;
    }
    // A choice that narrows the allowlist (or one to refuse): the full
    // read, whose tools are narrowed and not cached as the bytes' list.
    if top.narrows {
        return Fast::Unsure;
    }
    let (tools, functions) = (top.tools, top.functions);
    match cache.find(tools, functions) {
        Some((_, tool_nodes)) if tool_nodes > left => Fast::TooManyNodes,
        Some((tools, _)) => Fast::Read(Fields {
            model,
            stream,
            tools,
            json_keys: top.json_keys,
        }),
        None => Fast::NewTools { tools, functions },
    }
}

/// The top-level fields of a request body as `request`'s serde read takes
/// them, and the node budget left after them (`tools` and `functions`,
/// kept as text, not counted: the tool cache counts them), or `None`: not
/// taken here ([`Cur`] gives up, or a value is not one read here).
fn scan(text: &str, max_nodes: usize) -> Option<(Top<'_>, usize)> {
    let mut c = Cur::new(text, max_nodes);
    let mut top = Top::default();
    c.object(|c, k| {
        match k {
            "model" => top.model = Some(scalar(c)?),
            "stream" => top.stream = Some(scalar(c)?),
            "parallel_tool_calls" => top.parallel_tool_calls = Some(scalar(c)?),
            "tools" => top.tools = Some(c.raw()?),
            "functions" => top.functions = Some(c.raw()?),
            "tool_choice" => {
                top.narrows |= match scalar(c)? {
                    Scalar::Null => false,
                    Scalar::Str(s) => !matches!(s.as_str(), "auto" | "required" | "none"),
                    Scalar::Bool(_) | Scalar::Other => true,
                };
            }
            "function_call" => {
                top.narrows = true;
                c.skip(0, false)?;
            }
            k => {
                top.json_keys |= JSON_KEYS.contains(&k);
                c.skip(0, false)?;
            }
        }
        Some(())
    })?;
    c.end().map(|left| (top, left))
}

/// A value as the request's reader keeps it: a string, a boolean,
/// null, or something else (checked and counted).
fn scalar(c: &mut Cur<'_>) -> Option<Scalar> {
    Some(match c.peek()? {
        b'"' => Scalar::Str(c.string()?.into_owned()),
        b't' => c.literal(b"true").map(|()| Scalar::Bool(true))?,
        b'f' => c.literal(b"false").map(|()| Scalar::Bool(false))?,
        b'n' => c.literal(b"null").map(|()| Scalar::Null)?,
        _ => c.skip(0, false).map(|()| Scalar::Other)?,
    })
}

/// The top-level fields, as a `Value` would hold them: a key given twice
/// counts as its last value.
#[derive(Default)]
pub(super) struct Top<'a> {
    pub model: Option<Scalar>,
    pub stream: Option<Scalar>,
    pub parallel_tool_calls: Option<Scalar>,
    /// The text of `tools` (as serde_json's `RawValue` keeps it: from the
    /// value's first byte to its last).
    pub tools: Option<&'a str>,
    pub functions: Option<&'a str>,
    /// A key of [`JSON_KEYS`] was met (decoded).
    pub json_keys: bool,
    /// `tool_choice` other than absent, null, `"auto"`, `"required"` or
    /// `"none"`, or a legacy `function_call`: it may narrow the allowlist
    /// ([`narrowed`]), or be refused.
    pub narrows: bool,
}

/// `model`, `stream` or `parallel_tool_calls` as far as the proxy reads it: an array or object is
/// read (and counted) as [`Counted`], not built.
pub(super) enum Scalar {
    Str(String),
    Bool(bool),
    Null,
    Other,
}

struct ScalarSeed<'n>(&'n Nodes);

impl<'de> serde::de::DeserializeSeed<'de> for ScalarSeed<'_> {
    type Value = Scalar;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed<'_> {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Scalar, E> {
        self.0.take(1).map(|()| Scalar::Bool(b))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Scalar, E> {
        self.0.take(1).map(|()| Scalar::Other)
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Scalar, E> {
        self.0.take(1).map(|()| Scalar::Other)
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Scalar, E> {
        self.0.take(1).map(|()| Scalar::Other)
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Scalar, E> {
        self.0.take(1).map(|()| Scalar::Str(s.to_string()))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Scalar, E> {
        self.0.take(1).map(|()| Scalar::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        self.0.take(1)?;
        while seq.next_element_seed(Counted(self.0))?.is_some() {}
        Ok(Scalar::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        self.0.take(1)?;
        let mut seen = Seen::default();
        while let Some(k) = map.next_key::<Key<'de>>()? {
            seen.insert(k.0)?;
            self.0.take(1)?;
            map.next_value_seed(Counted(self.0))?;
        }
        Ok(Scalar::Other)
    }
}

/// Reads the top object, counting its values in the budget (`tools` and
/// `functions`, skipped as bytes, are counted by the cache that knows
/// them).
struct TopVisitor<'n>(&'n Nodes);

impl<'de> Visitor<'de> for TopVisitor<'_> {
    type Value = Top<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top<'de>, A::Error> {
        let mut top = Top::default();
        let mut seen = Seen::default();
        self.0.take(1)?;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            // A key given twice: the full read refuses the body.
            seen.insert(key.0.clone())?;
            self.0.take(1)?;
            match key.0.as_ref() {
                "model" => top.model = Some(map.next_value_seed(ScalarSeed(self.0))?),
                "stream" => top.stream = Some(map.next_value_seed(ScalarSeed(self.0))?),
                "parallel_tool_calls" => {
                    top.parallel_tool_calls = Some(map.next_value_seed(ScalarSeed(self.0))?);
                }
                // Kept as bytes: they find the tools already read, or the
                // full read parses them (the fast read does not vouch for
                // bytes it skipped).
                "tools" => top.tools = Some(map.next_value::<&RawValue>()?.get()),
                "functions" => top.functions = Some(map.next_value::<&RawValue>()?.get()),
                // A key given twice is refused above, so the last value is
                // the only one.
                "tool_choice" => {
                    top.narrows |= match map.next_value_seed(ScalarSeed(self.0))? {
                        Scalar::Null => false,
                        Scalar::Str(s) => !matches!(s.as_str(), "auto" | "required" | "none"),
                        Scalar::Bool(_) | Scalar::Other => true,
                    };
                }
                "function_call" => {
                    top.narrows = true;
                    map.next_value_seed(Counted(self.0))?;
                }
                k => {
                    top.json_keys |= JSON_KEYS.contains(&k);
                    map.next_value_seed(Counted(self.0))?;
                }
            }
        }
        Ok(top)
    }
}

/// Allowlists read before, by the bytes of the request's `tools` and
/// `functions`: a client sends the same tools with every request, and
/// reading them (into `ToolDef`s) costs more than the rest of the request.
/// Bounded: at most [`TOOL_CACHE_ENTRIES`] lists and [`TOOL_CACHE_BYTES`]
/// of their text; past either it starts over.
///
/// Keyed by a randomly seeded foldhash of the text (a client cannot choose
/// collisions it cannot see), and an entry is only taken when its text is
/// the request's, byte for byte: a collision costs a miss, never another
/// list.
#[derive(Default)]
pub(crate) struct ToolCache {
    inner: Mutex<CacheInner>,
    hasher: foldhash::fast::RandomState,
}

#[derive(Default)]
struct CacheInner {
    by_hash: HashMap<u64, Vec<Entry>, foldhash::fast::RandomState>,
    entries: usize,
    bytes: usize,
}

struct Entry {
    tools: Option<Box<str>>,
    functions: Option<Box<str>>,
    defs: Arc<Vec<ToolDef>>,
    /// The JSON values of `tools` and `functions`.
    nodes: usize,
}

/// The most allowlists kept.
pub(crate) const TOOL_CACHE_ENTRIES: usize = 256;
/// The most text of allowlists kept.
pub(crate) const TOOL_CACHE_BYTES: usize = 16 * 1024 * 1024;

impl ToolCache {
    fn hash(&self, tools: Option<&str>, functions: Option<&str>) -> u64 {
        let mut h = self.hasher.build_hasher();
        for part in [tools, functions] {
            match part {
                Some(s) => {
                    h.write_u8(1);
                    h.write_usize(s.len());
                    h.write(s.as_bytes());
                }
                None => h.write_u8(0),
            }
        }
        h.finish()
    }

    /// The allowlist read from exactly these bytes before, and how many
    /// JSON values the bytes hold.
    fn find(
        &self,
        tools: Option<&str>,
        functions: Option<&str>,
    ) -> Option<(Arc<Vec<ToolDef>>, usize)> {
        if tools.is_none() && functions.is_none() {
            return Some((Arc::default(), 0));
        }
        let h = self.hash(tools, functions);
        // A poisoned lock (a panic elsewhere) only disables the cache.
        let inner = self.inner.lock().ok()?;
        inner
            .by_hash
            .get(&h)?
            .iter()
            .find(|e| e.tools.as_deref() == tools && e.functions.as_deref() == functions)
            .map(|e| (Arc::clone(&e.defs), e.nodes))
    }

    /// Remembers `defs` as the allowlist of these bytes (`nodes` JSON
    /// values).
    fn insert(
        &self,
        tools: Option<&str>,
        functions: Option<&str>,
        defs: &Arc<Vec<ToolDef>>,
        nodes: usize,
    ) {
        let size = tools.map_or(0, str::len) + functions.map_or(0, str::len);
        if size > TOOL_CACHE_BYTES / 4 {
            return;
        }
        let h = self.hash(tools, functions);
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.entries >= TOOL_CACHE_ENTRIES || inner.bytes + size > TOOL_CACHE_BYTES {
            *inner = CacheInner::default();
        }
        let list = inner.by_hash.entry(h).or_default();
        if list
            .iter()
            .any(|e| e.tools.as_deref() == tools && e.functions.as_deref() == functions)
        {
            return;
        }
        list.push(Entry {
            tools: tools.map(Box::from),
            functions: functions.map(Box::from),
            defs: Arc::clone(defs),
            nodes,
        });
        inner.entries += 1;
        inner.bytes += size;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The full read's answer: what the proxy read before the fast one.
    fn full(body: &[u8]) -> Result<Fields, String> {
        read_value(body).map(|v| fields_of(&v))
    }

    fn read_n(cache: &ToolCache, body: &[u8]) -> Result<(Fields, Option<Value>), Unreadable> {
        read(cache, body, DEFAULT_MAX_REQUEST_NODES)
    }

    /// Reads `body` through `cache` and checks the answer is the full
    /// read's; returns whether the fast read answered alone.
    fn agree(cache: &ToolCache, body: &[u8]) -> bool {
        scan_agrees(body);
        let got = read(cache, body, DEFAULT_MAX_REQUEST_NODES);
        let want = full(body);
        match (&got, &want) {
            (Ok((f, v)), Ok(w)) => {
                assert_eq!(f, w, "{}", String::from_utf8_lossy(body));
                if let Some(v) = v {
                    assert_eq!(Some(v), read_value(body).ok().as_ref());
                }
                v.is_none()
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, &Unreadable::Invalid(b.clone()));
                false
            }
            _ => panic!(
                "fast {got:?} but full {want:?} for {}",
                String::from_utf8_lossy(body)
            ),
        }
    }

    /// When the hand-written reader takes a body, serde's reader takes it
    /// too and reads the same fields, the same tool text, and the same
    /// count of values.
    fn scan_agrees(body: &[u8]) {
        let Some((top, left)) = std::str::from_utf8(body)
            .ok()
            .and_then(|t| scan(t, DEFAULT_MAX_REQUEST_NODES))
        else {
            return;
        };
        let shown = String::from_utf8_lossy(body);
        let nodes = Nodes::new(DEFAULT_MAX_REQUEST_NODES);
        let text = std::str::from_utf8(body).unwrap();
        let mut de = serde_json::Deserializer::from_str(text);
        let serde = match de.deserialize_any(TopVisitor(&nodes)) {
            Ok(top) => top,
            Err(e) => {
                // Only the text of `tools` or `functions` is delimited,
                // not checked, by the scan: such text cannot be one the
                // cache holds (each parsed), so the full read decides.
                let parses =
                    |t: Option<&str>| t.is_none_or(|t| serde_json::from_str::<Value>(t).is_ok());
                assert!(
                    !(parses(top.tools) && parses(top.functions)),
                    "scanned, refused by serde ({e}): {shown}"
                );
                return;
            }
        };
        de.end().unwrap();
        let scalar = |s: &Option<Scalar>| match s {
            None => "absent".to_string(),
            Some(Scalar::Str(s)) => format!("str {s}"),
            Some(Scalar::Bool(b)) => format!("bool {b}"),
            Some(Scalar::Null) => "null".to_string(),
            Some(Scalar::Other) => "other".to_string(),
        };
        let fields = |t: &Top<'_>| {
            (
                scalar(&t.model),
                scalar(&t.stream),
                scalar(&t.parallel_tool_calls),
                t.tools.map(str::to_string),
                t.functions.map(str::to_string),
                t.json_keys,
                t.narrows,
            )
        };
        assert_eq!(fields(&top), fields(&serde), "{shown}");
        assert_eq!(left, nodes.left(), "{shown}");
    }

    /// The usual request is read by hand.
    #[test]
    fn the_usual_request_is_scanned() {
        let b = body(
            r#""messages": [{"role": "system", "content": "Be brief.\nUse tools."}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}], "temperature": 0.2, "max_tokens": 256, "stream": true, "tool_choice": "auto""#,
        );
        let (top, _) = scan(std::str::from_utf8(&b).unwrap(), usize::MAX).expect("taken");
        assert_eq!(top.tools, Some(TOOLS));
        assert!(matches!(top.stream, Some(Scalar::Bool(true))));
        assert!(matches!(top.model, Some(Scalar::Str(ref m)) if m == "m"));
        assert!(!top.narrows && !top.json_keys);
        scan_agrees(&b);
    }

    const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]"#;

    fn body(rest: &str) -> Vec<u8> {
        format!(r#"{{"model": "m", "tools": {TOOLS}, {rest}}}"#).into_bytes()
    }

    #[test]
    fn fast_and_full_reads_agree() {
        let cache = ToolCache::default();
        let mut hostile: Vec<Vec<u8>> = vec![
            body(r#""messages": [{"role": "user", "content": "hi"}]"#),
            body(r#""stream": true, "messages": []"#),
            body(r#""stream": null"#),
            body(r#""stream": "yes""#),
            body(r#""stream": 1"#),
            // A key given twice is refused (the full read says which).
            body(r#""stream": "yes", "stream": true"#),
            body(r#""stream": true, "stream": "yes""#),
            body(r#""parallel_tool_calls": false"#),
            body(r#""parallel_tool_calls": null"#),
            body(r#""parallel_tool_calls": "false""#),
            body(r#""parallel_tool_calls": 0"#),
            body(r#""parallel_tool_calls": [false]"#),
            // A choice that narrows the allowlist, or is refused.
            body(r#""tool_choice": "none""#),
            body(r#""tool_choice": "auto", "tool_choice": "none""#),
            body(r#""tool_choice": {"type": "function", "function": {"name": "get_weather"}}"#),
            body(r#""tool_choice": {"type": "function", "function": {"name": "other"}}"#),
            body(r#""tool_choice": {"type": "allowed_tools", "allowed_tools": {"tools": []}}"#),
            body(r#""tool_choice": {"type": "function"}"#),
            body(r#""tool_choice": "sometimes""#),
            body(r#""tool\u005fchoice": {"type": "function", "function": {"name": "x"}}"#),
            body(r#""function_call": {"name": "x"}"#),
            body(r#""function_call": "none""#),
            body(r#""model": 3"#),
            body(r#""model": "a", "model": "b""#),
            // Keys that may ask for JSON, as JSON decodes them.
            body(r#""response_format": {"type": "json_object"}"#),
            body(r#""response\u005fformat": {"type": "json_object"}"#),
            body(r#""\u0066ormat": "json""#),
            body(r#""messages": [{"response_format": 1, "format": 2}]"#),
            // What a skipped field must still be refused for.
            body(r#""messages": [{"content": "\ud800"}]"#),
            body(r#""messages": [{"content": "a\udc00b"}]"#),
            body(r#""messages": [{"\ud800": 1}]"#),
            body(r#""messages": [1e400]"#),
            body(r#""messages": [-1e400]"#),
            body(r#""messages": [01]"#),
            body(r#""messages": ["a\qb"]"#),
            body("\"messages\": [\"a\u{1}b\"]"),
            body(r#""messages": [NaN]"#),
            body(r#""messages": [1,]"#),
            body(r#""messages": {"a": 1,}"#),
            body(r#""$serde_json::private::RawValue": "[1]""#),
            body(r#""messages": [{"$serde_json::private::RawValue": "{"}]"#),
            body(r#""messages": [{"$serde_json::private::RawValue": "1"}]"#),
            body(r#""tools": [{"type": "function", "function": {"name": "\ud800"}}]"#),
            body(r#""tools": [1e999]"#),
            body(r#""tools": null"#),
            body(r#""tools": "nope""#),
            body(r#""functions": [{"name": "f", "parameters": {"type": "object"}}]"#),
            body(r#""tools": [], "tools": [{"type": "function", "function": {"name": "x"}}]"#),
            br#"{"model": "m"} x"#.to_vec(),
            br#"{"model": "m"}  "#.to_vec(),
            br#"[1, 2]"#.to_vec(),
            br#""text""#.to_vec(),
            b"".to_vec(),
            br#"{"model": "m""#.to_vec(),
            br#"{}"#.to_vec(),
            br#"{"stream": true}"#.to_vec(),
        ];
        let mut bad_utf8 = body(r#""messages": ["xx"]"#);
        let at = bad_utf8.len() - 4;
        bad_utf8[at] = 0xff;
        hostile.push(bad_utf8);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        hostile.push(body(&format!(r#""messages": {deep}"#)));
        let deep = format!("{}{}", "[".repeat(126), "]".repeat(126));
        hostile.push(body(&format!(r#""messages": {deep}"#)));
        let mut fast_answers = 0;
        // Twice: the second time every valid allowlist is a cache hit.
        for _ in 0..2 {
            for b in &hostile {
                fast_answers += usize::from(agree(&cache, b));
            }
        }
        assert!(
            fast_answers > 10,
            "the fast read answered {fast_answers} times"
        );
    }

    /// `Ctx::asks_json` searched the body's bytes for the key names, so
    /// `"response\u005fformat"` (the same key to every JSON reader) was
    /// missed: the JSON answer was judged for calls and, with `--retries`,
    /// re-rolled. The reader meets keys decoded, at the top level only.
    #[test]
    fn keys_asking_for_json_are_met_as_json_decodes_them() {
        let cache = ToolCache::default();
        for _ in 0..2 {
            for (rest, json_keys) in [
                (r#""response_format": {"type": "json_object"}"#, true),
                (r#""response\u005fformat": {"type": "json_object"}"#, true),
                (r#""guided\u005Fjson": {}"#, true),
                (r#""\u0066ormat": "json""#, true),
                (r#""json_schema": null"#, true),
                (
                    r#""messages": [{"role": "user", "content": "format"}]"#,
                    false,
                ),
                (
                    r#""metadata": {"response_format": {"type": "json_object"}}"#,
                    false,
                ),
                (r#""response_formats": 1"#, false),
            ] {
                let (fields, _) = read_n(&cache, &body(rest)).unwrap();
                assert_eq!(fields.json_keys, json_keys, "{rest}");
            }
        }
    }

    /// pydantic reads `"false"`, `0`, `"no"` as `false`: vLLM (which keeps
    /// one call under `parallel_tool_calls: false`) and the proxy (which
    /// rejects more than one) disagreed, and two calls were served to a
    /// client that asked for one. Such a request is refused, by both reads
    /// (the second time through the cache), as a `stream` that is not a
    /// boolean is.
    #[test]
    fn parallel_tool_calls_must_be_a_boolean() {
        let cache = ToolCache::default();
        for _ in 0..2 {
            for (value, shown) in [
                (r#""false""#, r#""false""#),
                ("0", "0"),
                (r#""no""#, r#""no""#),
                ("[false]", "[false]"),
            ] {
                let b = body(&format!(r#""parallel_tool_calls": {value}"#));
                assert_eq!(
                    read_n(&cache, &b).unwrap_err(),
                    Unreadable::Invalid(format!(
                        "`parallel_tool_calls` must be true or false, not {shown}"
                    )),
                    "{value}"
                );
            }
            for value in ["false", "true", "null"] {
                let b = body(&format!(r#""parallel_tool_calls": {value}"#));
                assert!(read_n(&cache, &b).is_ok(), "{value}");
            }
        }
    }

    #[test]
    fn a_key_given_twice_anywhere_makes_the_request_ambiguous() {
        // The proxy judged the last copy; an upstream that reads the first
        // saw other tools, another `stream`, another model.
        let cache = ToolCache::default();
        let tools = r#"[{"type": "function", "function": {"name": "get_weather"}}]"#;
        // The tools read once, so that the fast read knows their bytes.
        let whole = |fields: &str| format!(r#"{{"n": 1, {fields}}}"#).into_bytes();
        assert!(read_n(&cache, &whole(&format!(r#""tools": {tools}"#))).is_ok());
        for (key, fields) in [
            ("stream", r#""stream": false, "stream": true"#.to_string()),
            ("model", r#""model": "a", "model": "b""#.to_string()),
            ("tools", format!(r#""tools": [], "tools": {tools}"#)),
            ("tools", format!(r#""tools": {tools}, "tools": []"#)),
            ("content", r#""messages": [{"role": "user", "content": "a", "content": "b"}]"#.to_string()),
            ("name", r#""tools": [{"type": "function", "function": {"name": "rm", "name": "ls"}}]"#.to_string()),
            ("type", r#""tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "type": "string"}}}]"#.to_string()),
            ("stream", r#""str\u0065am": false, "stream": true"#.to_string()),
        ] {
            let e = read_n(&cache, &whole(&fields)).expect_err(&fields).to_string();
            assert_eq!(
                e.split(" at line").next(),
                Some(format!("the request body is ambiguous: the key `{key}` is repeated").as_str()),
                "{fields}"
            );
        }
    }

    #[test]
    fn a_body_of_more_json_values_than_the_limit_is_refused() {
        // 1 object + 2 keys + "m" + 1 array + 3 numbers.
        let small = br#"{"model": "m", "messages": [1, 2, 3]}"#;
        assert_eq!(node_count(small), 8);
        let cache = ToolCache::default();
        assert!(read(&cache, small, 8).is_ok());
        assert_eq!(
            read(&cache, small, 7).unwrap_err(),
            Unreadable::TooManyNodes(7)
        );
        // The full read (new tools) and the fast one (the same tools,
        // skipped as bytes, counted by the cache) count alike.
        let with_tools = body(r#""messages": [1, 2, 3]"#);
        let n = node_count(&with_tools);
        for _ in 0..2 {
            assert_eq!(
                read(&cache, &with_tools, n - 1).unwrap_err(),
                Unreadable::TooManyNodes(n - 1)
            );
            assert!(read(&cache, &with_tools, n).is_ok());
        }
        assert_eq!(
            read(&cache, &with_tools, n - 1).unwrap_err(),
            Unreadable::TooManyNodes(n - 1),
            "a cache hit counts the tools"
        );
        // Counted alike wherever the values are: `model`, `stream`, deep.
        for b in [
            &br#"{"model": {"a": [1, 2, 3, 4]}}"#[..],
            br#"{"stream": [[[[1, 2, 3, 4, 5]]]]}"#,
            br#"{"x": {"a": {"b": {"c": 1}}, "d": 2}}"#,
        ] {
            let n = node_count(b);
            assert_eq!(
                read(&cache, b, n - 1).unwrap_err(),
                Unreadable::TooManyNodes(n - 1)
            );
            assert_ne!(read(&cache, b, n).err(), Some(Unreadable::TooManyNodes(n)));
        }
        // The raw-value token's string (which a `Value` parses) counts as
        // many nodes as it has bytes, plus one.
        let raw = br#"{"$serde_json::private::RawValue": "[1,2,3,4,5,6,7,8,9]"}"#;
        assert_eq!(node_count(raw), 1 + 1 + 19 + 1);
    }

    #[test]
    fn the_cache_answers_only_for_the_same_bytes() {
        let cache = ToolCache::default();
        let a = body(r#""messages": []"#);
        assert!(!agree(&cache, &a), "first sight: the full read");
        assert!(agree(&cache, &a), "then the cache");
        let spaced = format!(
            r#"{{"model": "m", "tools": {}, "messages": []}}"#,
            TOOLS.replace(", ", ",")
        );
        assert!(!agree(&cache, spaced.as_bytes()), "other bytes: read again");
        let (f, _) = read_n(&cache, &a).unwrap();
        assert_eq!(f.tools.len(), 1);
        assert_eq!(f.tools[0].name, "get_weather");
        let none = br#"{"model": "m", "messages": []}"#;
        assert!(agree(&cache, none));
        assert!(read_n(&cache, none).unwrap().0.tools.is_empty());
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = ToolCache::default();
        for i in 0..TOOL_CACHE_ENTRIES + 10 {
            let b =
                format!(r#"{{"tools": [{{"type": "function", "function": {{"name": "f{i}"}}}}]}}"#);
            agree(&cache, b.as_bytes());
            let inner = cache.inner.lock().unwrap();
            assert!(inner.entries <= TOOL_CACHE_ENTRIES && inner.bytes <= TOOL_CACHE_BYTES);
        }
    }

    /// Pieces of JSON, valid and not, that a generated body is made of.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("\"model\"".to_string()),
            Just("\"stream\"".to_string()),
            Just("\"parallel_tool_calls\"".to_string()),
            Just("\"tool_choice\"".to_string()),
            Just("\"function_call\"".to_string()),
            Just("\"none\"".to_string()),
            Just(r#"{"type": "function", "function": {"name": "get_weather"}}"#.to_string()),
            Just("\"tools\"".to_string()),
            Just("\"functions\"".to_string()),
            Just("\"messages\"".to_string()),
            Just("\"$serde_json::private::RawValue\"".to_string()),
            Just(TOOLS.to_string()),
            Just("true".to_string()),
            Just("null".to_string()),
            Just("\"\\ud800\"".to_string()),
            Just("\"\\ud83d\\ude00\"".to_string()),
            Just("1e400".to_string()),
            Just("-0.5".to_string()),
            Just("18446744073709551616".to_string()),
            Just("\"a\\\"b\"".to_string()),
            Just("\"é\"".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(":".to_string()),
            Just(",".to_string()),
            Just(" ".to_string()),
            "[a-z\\\\\"]{0,3}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn generated_bodies_read_alike(pieces in proptest::collection::vec(piece(), 0..24)) {
            let cache = ToolCache::default();
            let text = format!("{{{}}}", pieces.concat());
            agree(&cache, text.as_bytes());
            agree(&cache, text.as_bytes());
        }

        #[test]
        fn generated_objects_read_alike(
            entries in proptest::collection::vec((piece(), piece()), 0..8),
        ) {
            let cache = ToolCache::default();
            let inner: Vec<String> = entries.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let text = format!("{{{}}}", inner.join(", "));
            agree(&cache, text.as_bytes());
            agree(&cache, text.as_bytes());
        }
    }
}
