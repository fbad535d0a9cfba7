//! Recording: every exchange becomes one transcript file in `--record DIR`.
//!
//! One `.jsonl` file per exchange, one line per upstream attempt (a retried
//! exchange is k samples of the same exchange: `sample` 0, 1, …; the line
//! with `proxy.served: true` is the answer the client got). Each line is a
//! transcript (SPEC §2) that `toolgate label` and the inspector read:
//!
//! ```json
//! {"exchange": "1763900000000-4242-000001", "sample": 0, "model": "qwen3-8b",
//!  "task": "from x-toolgate-task", "tools": [...], "tool_choice": "auto",
//!  "output": "<raw upstream content>", "reasoning": "...",
//!  "tool_calls": [<the upstream's native calls>], "finish_reason": "stop",
//!  "chunks": ["<streamed deltas>", "..."],
//!  "request": {<the request as sent upstream, --redact applied>},
//!  "response": {<the upstream's JSON, non-streamed>},
//!  "timing": {"started_unix_ms": 0, "upstream_ms": 0.0, "first_byte_ms": null, "total_ms": 0.0},
//!  "proxy": {"mode": "enforce", "stream": false, "status": 200, "served": true,
//!            "retry": null, "decision": "execute", "label": "pass", "telemetry": {...}}}
//! ```
//!
//! Exchanges are appended to segment files (`segment-UNIXMS-PID-N.jsonl`,
//! a new one past [`SEGMENT_BYTES`]): a group of finished exchanges is one
//! `write` and one `fdatasync`, so recording costs one sync per group, not a
//! temporary file, a sync and a rename per exchange. A reader sees an
//! exchange as soon as its group is written. Every line ends with `\n`; a
//! last line without one is a write cut short (a crash, a full disk), which
//! the loader reports as torn and skips, never reads as a record. After a
//! failed write the segment is closed (its end cut back where possible) and
//! the next group starts a new one, so a torn line is always a segment's
//! last. A group is appended holding `flock(LOCK_EX)` on the segment, taken
//! before checking that the segment's path still names the open file:
//! `label --write` replaces a file only under the same lock, and only when
//! it holds just what it read, so a group never goes to a segment replaced
//! (labelled) meanwhile, whose records would be lost with the old file; it
//! starts a new segment instead ([`Recorder::locked`]). Headers are never recorded (`Authorization` and API keys live
//! there); a top-level `api_key` request field is dropped too, and each
//! `--redact` JSON pointer replaces that request value with `"[redacted]"`,
//! in `request` and in what the line copies out of it (`model`, `tools`,
//! `tool_choice`: [`Recorder::redacted_copies`]). Log lines and metric
//! labels still name the model; the upstream's answer is kept as it came,
//! but for the text of the client's credentials when the upstream echoes
//! it, scrubbed from every string of the exchange before it gets here
//! ([`Exchange::scrub`]).
//!
//! What a line costs (issue 24): the line is written member by member
//! from the exchange's own values ([`Line::write`]: its keys as literals,
//! no intermediate `Value` object), on the worker
//! that served the exchange when no hook needs the exchange whole
//! ([`Recorder::render`]): the record thread then appends bytes and syncs,
//! and the exchange's values are freed on the thread that allocated them
//! (a free from another thread costs both threads more). The judgment
//! is a [`Judgment`] (the handler's strings and the telemetry struct, not
//! the `Value` tree `Judged::to_json` built on the worker for every
//! exchange); `timing` and the `proxy` facts are written from their fields.
//! The client's body and the upstream's answer are written as they came
//! when they are already serde's form of their `Value` (compact, serde's
//! escapes and numbers, no repeated key: [`super::verbatim`]) and nothing
//! is dropped or redacted, so neither is parsed again on the record thread
//! nor kept parsed on the worker (the form is checked, not the grammar:
//! both were parsed whole on the request path before they got here);
//! otherwise the record thread parses them,
//! and the request is copied into a serialized form only when something is
//! redacted or several attempts share it. The allowlist is read from the
//! request (its bytes, or its `Value`), not copied out of it, unless a hook
//! needs the exchange whole; the `recordings` metric is counted once per
//! group. Tests hold every byte against the `Value` objects these replaced
//! ([`Recorder::lines_as_value`], `Judged::to_json`, and the parsed forms
//! of bodies kept as they came).

use super::members::{MemberKey, Members, Name, own};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use toolgate_core::jsonstr;

/// A segment file grows to about this size before the next one begins
/// (the inspector re-reads a changed file whole: segments stay small).
pub const SEGMENT_BYTES: u64 = 4 * 1024 * 1024;

/// About how many bytes of a group are built before they are written (the
/// group is synced once, at its end).
const WRITE_PIECE: usize = 1024 * 1024;

/// What replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// One upstream attempt of an exchange.
#[derive(Clone, Debug, Default)]
pub struct Attempt {
    /// The request body as sent upstream (shared, not copied, between the
    /// attempts that send the same body; `Null` when it did not parse).
    pub request: Arc<Value>,
    /// The upstream's JSON response (non-streamed), when parsed; see
    /// [`Attempt::response_body`].
    pub response: Option<Value>,
    /// The upstream's JSON response as it came, standing for
    /// [`Attempt::response`] in an exchange that is kept: the recorder
    /// writes these bytes when they are serde's own form of the `Value`
    /// ([`super::verbatim`]) and parses them otherwise; the record thread
    /// parses them for a hook. Set only when they parsed as the answer.
    pub response_body: Option<bytes::Bytes>,
    /// The upstream's HTTP status (0: no response); for a request the
    /// proxy refused itself without asking the upstream (enforce, a body
    /// it cannot read), the status the client got.
    pub status: u16,
    /// The raw `content` of `choices[0]`.
    pub output: String,
    /// The separate reasoning text.
    pub reasoning: Option<String>,
    /// The upstream's native `tool_calls` (`Some` when the key was present).
    pub tool_calls: Option<Vec<Value>>,
    /// `finish_reason`.
    pub finish_reason: Option<String>,
    /// The content deltas, when streamed.
    pub chunks: Option<Vec<String>>,
    /// The proxy's decision and telemetry as a JSON object, for a hook
    /// (the record thread fills it from [`Attempt::judgment`] when a hook
    /// is set); the recorder writes [`Attempt::judgment`] when there is one,
    /// this otherwise.
    pub judged: Option<Value>,
    /// The proxy's decision and telemetry as the handler left them, when
    /// the exchange is kept (recorded or handed to a hook): written into
    /// the record as they are, never built into a `Value` first.
    pub judgment: Option<Judgment>,
    /// The decision, label and gate of the judgment, set whenever the
    /// attempt was judged (the exchange's log line reads them; the
    /// judgment is kept only when the exchange is).
    pub verdict: Option<Verdict>,
    /// Why the attempt failed (transport error, timeout, non-JSON answer).
    pub error: Option<String>,
    /// Wall-clock start, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// Upstream time, ms (to the end of the body).
    pub upstream_ms: f64,
    /// The answer the client got.
    pub served: bool,
    /// Why another attempt followed (`reroll`, `reemit`).
    pub retry: Option<&'static str>,
    /// The upstream's `usage` for this attempt (streams: the usage chunk).
    pub usage: Option<Value>,
}

impl Exchange {
    /// Replaces the text of `secrets` (the client's credentials, which an
    /// upstream may echo: in its answer, an error event, a content type)
    /// everywhere in the exchange's attempts — the output, reasoning,
    /// chunks, calls, usage, error, the requests sent (a re-emit quotes the
    /// answer), the answer itself (its bytes are parsed only when they may
    /// hold one: [`crate::secrets::json_may_hold`]) and the judgment — with
    /// the one scrubber `toolgate run` uses for its samples.
    pub(crate) fn scrub(&mut self, secrets: &[String]) {
        use crate::secrets::{scrub_in, scrub_value};
        if let Some(e) = &mut self.request_error {
            scrub_in(e, secrets);
        }
        for a in &mut self.attempts {
            scrub_in(&mut a.output, secrets);
            for text in a.reasoning.iter_mut().chain(a.error.iter_mut()) {
                scrub_in(text, secrets);
            }
            for chunk in a.chunks.iter_mut().flatten() {
                scrub_in(chunk, secrets);
            }
            for v in a
                .tool_calls
                .iter_mut()
                .flatten()
                .chain(a.usage.iter_mut())
                .chain(a.response.iter_mut())
                .chain(a.judged.iter_mut())
            {
                scrub_value(v, secrets);
            }
            if let Some(body) = &a.response_body
                && crate::secrets::json_may_hold(body, secrets)
            {
                // Parsed on the request path already, so it parses; were
                // it ever not to, it is not recorded.
                let mut v = serde_json::from_slice::<Value>(body).ok();
                if v.as_mut().is_none_or(|v| scrub_value(v, secrets)) {
                    a.response = v;
                    a.response_body = None;
                }
            }
            if crate::secrets::value_holds(&a.request, secrets) {
                let mut request = Value::clone(&a.request);
                scrub_value(&mut request, secrets);
                a.request = Arc::new(request);
            }
            // The judgment's texts (reasons, calls, other choices) come
            // from the answer: written as a `Value` when one held a secret.
            if let Some(j) = &a.judgment
                && let Ok(mut v) = serde_json::to_value(j)
                && scrub_value(&mut v, secrets)
            {
                a.judged = Some(v);
                a.judgment = None;
            }
        }
    }
}

/// What the exchange's log line says of an attempt's judgment: the
/// `decision`, `label` and `gate` of [`Attempt::judgment`], set also when
/// the judgment itself is not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// `execute`, `reject`, `no_call`, …
    pub decision: &'static str,
    /// The label.
    pub label: &'static str,
    /// The gate that rejected the output, if one did.
    pub gate: Option<&'static str>,
}

/// One exchange: a client request and everything the proxy did for it.
#[derive(Clone, Debug, Default)]
pub struct Exchange {
    /// The request's model.
    pub model: Option<String>,
    /// The `x-toolgate-task` header.
    pub task: Option<String>,
    /// The request's `tools`.
    pub tools: Option<Value>,
    /// The request's `tool_choice`.
    pub tool_choice: Option<Value>,
    /// The request's legacy `functions` (part of the allowlist).
    pub functions: Option<Value>,
    /// The profile that judged the exchange.
    pub profile: Option<String>,
    /// Why that profile (`--profile`, `configured (glob)`, `by name (…)`,
    /// `default`).
    pub profile_source: Option<String>,
    /// Why the request body could not be judged (not JSON, `stream` not a
    /// boolean, …).
    pub request_error: Option<String>,
    /// The request body's length, in bytes.
    pub request_bytes: usize,
    /// `observe`, `shadow` or `enforce`.
    pub mode: &'static str,
    /// Streamed or not.
    pub stream: bool,
    /// Every upstream attempt, in order.
    pub attempts: Vec<Attempt>,
    /// Time to the first byte sent to the client, ms.
    pub first_byte_ms: Option<f64>,
    /// Whole exchange, ms.
    pub total_ms: f64,
    /// The client went away before the end.
    pub client_disconnected: bool,
}

/// The client's request of an exchange whose `tools`, `tool_choice` and
/// `functions` were not copied into it: they are read here, and the
/// attempts that sent it are written with it.
#[derive(Clone, Copy)]
pub enum Client<'a> {
    /// Parsed (the attempts that sent it hold it).
    Parsed(&'a Value),
    /// As it came; the attempts that sent it hold `placeholder`. Written as
    /// it came when that is serde's form of it and nothing of it is
    /// dropped or redacted ([`super::verbatim`]), else parsed first.
    Body {
        /// The request body.
        body: &'a [u8],
        /// What the attempts that sent it hold instead (by address).
        placeholder: &'a Arc<Value>,
    },
}

/// The client's request as a line writes it (see [`Recorder::lines_into`]).
enum ClientText<'a> {
    /// Its bytes: the request, its allowlist and its `tool_choice`.
    Verbatim {
        request: &'a str,
        tools: &'a str,
        tool_choice: Option<&'a str>,
        placeholder: &'a Arc<Value>,
    },
    /// Its values.
    Parsed {
        request: Option<&'a Value>,
        placeholder: Option<&'a Arc<Value>>,
    },
}

/// One exchange of a group to append.
#[derive(Clone, Copy)]
pub enum Entry<'a> {
    /// Its lines, as [`Recorder::render`] wrote them.
    Rendered(&'a [u8]),
    /// The exchange, written here (with the client's request it reads its
    /// allowlist from, see [`Recorder::append_from`]).
    Exchange(&'a Exchange, Option<Client<'a>>),
}

/// The request's members that hold schemas (a tool's, an answer's: the
/// OpenAI `response_format`, vLLM's `guided_json` and `structured_outputs`,
/// llama.cpp's `json_schema`, Ollama's `format`): their `password` or
/// `api_key` properties are parameters, never redacted. The runner's stored
/// request follows the same rule.
pub(crate) const REQUEST_SCHEMAS: [&str; 7] = [
    "tools",
    "functions",
    "response_format",
    "guided_json",
    "structured_outputs",
    "json_schema",
    "format",
];

/// How long the recorder waits for another holder of a segment's lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Writes exchanges into a directory.
pub struct Recorder {
    dir: PathBuf,
    redact: Vec<String>,
    seq: AtomicU64,
    /// The process id, as names hold it (read once: `getpid` is a system
    /// call).
    pid: u32,
    /// The segment being appended to; `None` before the first write, past
    /// [`SEGMENT_BYTES`] and after a failed write.
    segment: Mutex<Option<Segment>>,
    segments: AtomicU64,
    /// The buffer a group's lines are built in, kept between groups (it
    /// grows to a piece once, not on every group).
    scratch: Mutex<Vec<u8>>,
}

/// An open segment file.
struct Segment {
    path: PathBuf,
    file: std::fs::File,
    len: u64,
    /// Device and inode: a segment deleted or replaced under the proxy is
    /// noticed (a write to an unlinked file would lose records silently).
    id: (u64, u64),
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    (meta.len(), 0)
}

impl Recorder {
    /// A recorder into `dir` (created if missing) with these `--redact`
    /// JSON pointers.
    pub fn new(dir: &Path, redact: Vec<String>) -> std::io::Result<Recorder> {
        std::fs::create_dir_all(dir)?;
        Ok(Recorder {
            dir: dir.to_path_buf(),
            redact,
            seq: AtomicU64::new(1),
            pid: std::process::id(),
            segment: Mutex::new(None),
            segments: AtomicU64::new(1),
            scratch: Mutex::new(Vec::new()),
        })
    }

    /// A new exchange name: `UNIXMS-PID-SEQ`, sortable by time.
    pub fn next_name(&self) -> String {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        name(ms, self.pid, seq)
    }

    /// The request as recorded: `api_key` dropped, every other
    /// credential-named member at any depth replaced (the importer's rule,
    /// `toolgate_core::sanitize::is_credential_key`: LiteLLM's
    /// `aws_secret_access_key`, `azure_ad_token`, `extra_headers`'
    /// `Authorization`, …) outside the tool and answer schemas (`tools`,
    /// `functions`, `response_format`, whose `password` or `api_key`
    /// properties are a tool's parameters, not secrets), `--redact` pointers
    /// replaced.
    pub fn redacted(&self, request: &Value) -> Value {
        let mut r = request.clone();
        if let Value::Object(m) = &mut r {
            m.remove("api_key");
            let mut found = Vec::new();
            for (k, v) in m.iter_mut() {
                if !REQUEST_SCHEMAS.contains(&k.as_str()) {
                    toolgate_core::sanitize::redact_member(k, v, k, &mut found, 0);
                }
            }
        }
        for pointer in &self.redact {
            if let Some(v) = r.pointer_mut(pointer) {
                *v = json!(REDACTED);
            }
        }
        r
    }

    /// The members a line copies out of the client's request (`model`,
    /// `tools`, `tool_choice`, `functions`: from `request` when the
    /// recorder has it, else from the exchange, which holds the handler's
    /// copies) with the `--redact` pointers replaced as in the recorded
    /// `request`; `None` when no pointer can reach one of them (the line
    /// writes them from where they are, uncopied). A pointer names a value
    /// of the request, so it is applied to an object of the same keys.
    fn redacted_copies(&self, ex: &Exchange, request: Option<&Value>) -> Option<Value> {
        const COPIED: [&str; 4] = ["model", "tools", "tool_choice", "functions"];
        let reaches = |p: &String| {
            // `""` is the whole request; else its first reference token
            // (none of these keys holds `~` or `/`, so no escape to undo).
            p.is_empty() || p.split('/').nth(1).is_some_and(|t| COPIED.contains(&t))
        };
        if !self.redact.iter().any(reaches) {
            return None;
        }
        let mut m = serde_json::Map::new();
        if let Some(model) = &ex.model {
            m.insert("model".into(), json!(model));
        }
        let (tools, tool_choice, functions) = match request {
            Some(r) => (r.get("tools"), r.get("tool_choice"), r.get("functions")),
            None => (
                ex.tools.as_ref(),
                ex.tool_choice.as_ref(),
                ex.functions.as_ref(),
            ),
        };
        for (key, v) in COPIED[1..].iter().zip([tools, tool_choice, functions]) {
            if let Some(v) = v {
                m.insert((*key).into(), v.clone());
            }
        }
        let mut copies = Value::Object(m);
        for pointer in self.redact.iter().filter(|p| reaches(p)) {
            if let Some(v) = copies.pointer_mut(pointer) {
                *v = json!(REDACTED);
            }
        }
        Some(copies)
    }

    /// The request as recorded ([`Recorder::redacted`]), serialized; copied
    /// first only when there is something to drop or replace.
    fn raw_request(&self, request: &Value) -> Option<Box<RawValue>> {
        if self.untouched(request) {
            serde_json::value::to_raw_value(request).ok()
        } else {
            serde_json::value::to_raw_value(&self.redacted(request)).ok()
        }
    }

    /// Whether the request is recorded as it is (nothing to drop or
    /// replace).
    fn untouched(&self, request: &Value) -> bool {
        request.get("api_key").is_none()
            && self.redact.iter().all(|p| request.pointer(p).is_none())
            && !toolgate_core::sanitize::value_names_credential(request, &REQUEST_SCHEMAS)
    }

    /// An attempt's request as recorded: written from the request itself
    /// when nothing is redacted and no other attempt sent it (the common
    /// case: no copy), else serialized once per exchange and shared
    /// ([`Recorder::shared_request`]).
    fn request_of<'a>(
        &self,
        ex: &Exchange,
        held: &Arc<Value>,
        r: &'a Arc<Value>,
        last: &mut Option<(&'a Arc<Value>, Rc<RawValue>)>,
    ) -> Option<Req<'a>> {
        if r.is_null() {
            return None;
        }
        // `held`: what the attempts that sent it hold (the request, or the
        // client body's placeholder).
        let alone = ex
            .attempts
            .iter()
            .filter(|b| Arc::ptr_eq(&b.request, held))
            .nth(1)
            .is_none();
        if alone && self.untouched(r) {
            return Some(Req::Borrowed(Json::Value(r)));
        }
        Self::shared_request(r, last, |r| self.raw_request(r)).map(Req::Shared)
    }

    /// An attempt's request as `serialize` records it, `None` when it has
    /// none; `last` holds the request serialized before, reused when this
    /// attempt sent the same one (re-rolls share one `Arc`).
    fn shared_request<'a>(
        request: &'a Arc<Value>,
        last: &mut Option<(&'a Arc<Value>, Rc<RawValue>)>,
        serialize: impl FnOnce(&Value) -> Option<Box<RawValue>>,
    ) -> Option<Rc<RawValue>> {
        if request.is_null() {
            return None;
        }
        if let Some((r, raw)) = last.as_ref()
            && Arc::ptr_eq(r, request)
        {
            return Some(Rc::clone(raw));
        }
        let raw: Rc<RawValue> = serialize(request)?.into();
        *last = Some((request, Rc::clone(&raw)));
        Some(raw)
    }

    /// The transcript lines of `exchange` named `name`. Attempts that sent
    /// the same request (re-rolls share one `Arc`) share its redacted,
    /// serialized form: a large request is copied once per exchange, not
    /// once per attempt. The exchange's text (tools, output, chunks, the
    /// response) is written from where it is, not copied into a `Value`
    /// first; the bytes are those of the object [`Recorder::lines_as_value`]
    /// builds (a test holds them together).
    #[cfg(test)]
    pub fn lines(&self, name: &str, ex: &Exchange) -> String {
        self.lines_from(name, ex, None)
    }

    /// [`Recorder::lines`] of an exchange whose `tools`, `tool_choice` and
    /// `functions` are read from the client's request (see
    /// [`Recorder::append_from`]).
    #[cfg(test)]
    pub fn lines_from(&self, name: &str, ex: &Exchange, client: Option<Client<'_>>) -> String {
        let mut out = Vec::new();
        self.lines_into(&mut out, name, ex, client);
        // serde_json writes UTF-8 only.
        String::from_utf8(out).unwrap_or_default()
    }

    /// The client's body as the line writes it: as it came when it is
    /// serde's form of a request ([`super::verbatim`]) that nothing is
    /// dropped from or redacted in, with an allowlist of one array (or
    /// none); `None` otherwise (it is parsed).
    fn verbatim_request<'a>(&self, body: &'a [u8]) -> Option<(&'a str, &'a str, Option<&'a str>)> {
        if !self.redact.is_empty() {
            return None;
        }
        let o = super::verbatim::verbatim_object(body)?;
        // A body the record thread's parse refuses (`stream` neither a
        // boolean nor null) is recorded as that parse leaves it.
        if o.get("api_key").is_some()
            || o.get("stream")
                .is_some_and(|v| !matches!(v, "true" | "false" | "null"))
        {
            return None;
        }
        // A credential-named member anywhere ([`Recorder::redacted`]'s
        // rule): the body is recorded parsed, with it replaced.
        if toolgate_core::sanitize::holds_credential_key(body, &REQUEST_SCHEMAS) {
            return None;
        }
        // The allowlist is the arrays among `tools` and `functions`
        // ([`AllowList`]); two are joined by the parsed path.
        let arrays: Vec<&str> = [o.get("tools"), o.get("functions")]
            .into_iter()
            .flatten()
            .filter(|v| v.starts_with('['))
            .collect();
        let tools = match arrays.as_slice() {
            [] => "[]",
            [one] => one,
            _ => return None,
        };
        // Each is a whole value of the checked body, in serde's form.
        Some((o.whole, tools, o.get("tool_choice")))
    }

    /// [`Recorder::lines`], appended to `out` (a group's buffer: no
    /// string per exchange).
    fn lines_into(&self, out: &mut Vec<u8>, name: &str, ex: &Exchange, client: Option<Client<'_>>) {
        // A client body that is not written as it came is parsed here.
        let mut parsed_here: Option<Arc<Value>> = None;
        let text = match client {
            None => ClientText::Parsed {
                request: None,
                placeholder: None,
            },
            Some(Client::Parsed(r)) => ClientText::Parsed {
                request: Some(r),
                placeholder: None,
            },
            Some(Client::Body { body, placeholder }) => match self.verbatim_request(body) {
                Some((request, tools, tool_choice)) => ClientText::Verbatim {
                    request,
                    tools,
                    tool_choice,
                    placeholder,
                },
                None => {
                    parsed_here = Some(Arc::new(
                        super::request::read_value(body).unwrap_or(Value::Null),
                    ));
                    ClientText::Parsed {
                        request: parsed_here.as_deref(),
                        placeholder: Some(placeholder),
                    }
                }
            },
        };
        let (tools, tool_choice) = match &text {
            ClientText::Verbatim {
                tools, tool_choice, ..
            } => (AllowList::Raw(tools), tool_choice.map(Json::Raw)),
            ClientText::Parsed {
                request: Some(r), ..
            } => (
                AllowList::Values(r.get("tools"), r.get("functions")),
                r.get("tool_choice").map(Json::Value),
            ),
            ClientText::Parsed { request: None, .. } => (
                AllowList::Values(ex.tools.as_ref(), ex.functions.as_ref()),
                ex.tool_choice.as_ref().map(Json::Value),
            ),
        };
        // What the line copies out of the request is written as the
        // recorded request holds it: a redacted value is nowhere in the
        // line (a verbatim body is never redacted, so it has no copies).
        let copies = match &text {
            ClientText::Verbatim { .. } => None,
            ClientText::Parsed { request, .. } => self.redacted_copies(ex, *request),
        };
        let (model, tools, tool_choice) = match &copies {
            Some(c) => (
                c.get("model").and_then(Value::as_str),
                AllowList::Values(c.get("tools"), c.get("functions")),
                c.get("tool_choice").map(Json::Value),
            ),
            None => (ex.model.as_deref(), tools, tool_choice),
        };
        let mut last = None;
        for (i, a) in ex.attempts.iter().enumerate() {
            let request = match &text {
                ClientText::Verbatim {
                    request,
                    placeholder,
                    ..
                } if Arc::ptr_eq(&a.request, placeholder) => {
                    Some(Req::Borrowed(Json::Raw(request)))
                }
                ClientText::Parsed {
                    placeholder: Some(p),
                    ..
                } if Arc::ptr_eq(&a.request, p) => parsed_here
                    .as_ref()
                    .and_then(|r| self.request_of(ex, p, r, &mut last)),
                _ => self.request_of(ex, &a.request, &a.request, &mut last),
            };
            // The answer: as it came when that is serde's form of it, else
            // parsed (it parsed on the worker: it parses here).
            let parsed_response;
            let response = match (&a.response, &a.response_body) {
                (Some(v), _) => Some(Json::Value(v)),
                (None, Some(body)) => match super::verbatim::verbatim(body) {
                    Some(raw) => Some(Json::Raw(raw)),
                    None => {
                        parsed_response = serde_json::from_slice::<Value>(body).ok();
                        parsed_response.as_ref().map(Json::Value)
                    }
                },
                (None, None) => None,
            };
            let line = Line {
                exchange: name,
                sample: i,
                model,
                task: ex.task.as_deref(),
                tools,
                tool_choice,
                output: &a.output,
                reasoning: a.reasoning.as_deref(),
                tool_calls: a.tool_calls.as_deref(),
                finish_reason: a.finish_reason.as_deref(),
                chunks: a.chunks.as_deref(),
                request,
                response,
                timing: timing(ex, a),
                proxy: proxy_fields(ex, a),
            };
            let before = out.len();
            // Serializing JSON values and strings cannot fail; if it ever
            // did, the line is left empty, as before.
            if line.write(out).is_err() {
                out.truncate(before);
            }
            out.push(b'\n');
        }
    }

    /// The lines as [`Recorder::lines`] wrote them before it wrote from the
    /// exchange's fields: every field copied into a `Value` object. The
    /// reference its bytes are tested against.
    #[cfg(test)]
    pub(crate) fn lines_as_value(&self, name: &str, ex: &Exchange) -> String {
        let mut out = String::new();
        let mut last = None;
        // Stands in for the request while the line is serialized; random, so
        // no text of the exchange (untrusted) can hold it.
        let nonce = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(self.seq.load(Ordering::Relaxed));
            h.finish()
        };
        let placeholder = format!("toolgate-request-{nonce:016x}");
        let quoted = format!("\"{placeholder}\"");
        for (i, a) in ex.attempts.iter().enumerate() {
            let request = Self::shared_request(&a.request, &mut last, |r| {
                serde_json::value::to_raw_value(&self.redacted(r)).ok()
            });
            let mut t = serde_json::Map::new();
            t.insert("exchange".into(), json!(name));
            t.insert("sample".into(), json!(i));
            if let Some(m) = &ex.model {
                t.insert("model".into(), json!(m));
            }
            if let Some(task) = &ex.task {
                t.insert("task".into(), json!(task));
            }
            // The allowlist: `tools`, then the legacy `functions`.
            let mut tools = match &ex.tools {
                Some(Value::Array(v)) => v.clone(),
                _ => Vec::new(),
            };
            if let Some(Value::Array(f)) = &ex.functions {
                tools.extend(f.iter().cloned());
            }
            let tools = Value::Array(tools);
            t.insert("tools".into(), tools);
            if let Some(tc) = &ex.tool_choice {
                t.insert("tool_choice".into(), tc.clone());
            }
            t.insert("output".into(), json!(a.output));
            if let Some(r) = &a.reasoning {
                t.insert("reasoning".into(), json!(r));
            }
            if let Some(calls) = &a.tool_calls {
                t.insert("tool_calls".into(), json!(calls));
            }
            if let Some(f) = &a.finish_reason {
                t.insert("finish_reason".into(), json!(f));
            }
            if let Some(c) = &a.chunks {
                t.insert("chunks".into(), json!(c));
            }
            // Filled in below from `request` (kept out of the map so that
            // it is not parsed back into a `Value`).
            if request.is_some() {
                t.insert("request".into(), json!(placeholder));
            }
            if let Some(r) = &a.response {
                t.insert("response".into(), r.clone());
            }
            t.insert(
                "timing".into(),
                json!({
                    "started_unix_ms": a.started_unix_ms,
                    "upstream_ms": round(a.upstream_ms),
                    "first_byte_ms": ex.first_byte_ms.filter(|_| a.served).map(round),
                    "total_ms": round(ex.total_ms),
                }),
            );
            let mut proxy = json!({
                "mode": ex.mode,
                "stream": ex.stream,
                "status": a.status,
                "served": a.served,
                "retry": a.retry,
                "error": a.error,
                "client_disconnected": ex.client_disconnected,
            });
            if let Value::Object(p) = &mut proxy {
                if let Some(u) = &a.usage {
                    p.insert("usage".into(), u.clone());
                }
                if let Some(profile) = &ex.profile {
                    p.insert("profile".into(), json!(profile));
                }
                if let Some(source) = &ex.profile_source {
                    p.insert("profile_source".into(), json!(source));
                }
                if let Some(e) = &ex.request_error {
                    p.insert("request_error".into(), json!(e));
                    p.insert("request_bytes".into(), json!(ex.request_bytes));
                }
            }
            let judged = match &a.judgment {
                Some(j) => serde_json::to_value(j).ok(),
                None => a.judged.clone(),
            };
            if let (Some(Value::Object(j)), Value::Object(p)) = (&judged, &mut proxy) {
                for (k, v) in j {
                    p.insert(k.clone(), v.clone());
                }
            }
            t.insert("proxy".into(), proxy);
            // Serializing a JSON value cannot fail.
            let line = serde_json::to_string(&Value::Object(t)).unwrap_or_default();
            match &request {
                Some(raw) => match line.split_once(&quoted) {
                    Some((before, after)) => {
                        out.push_str(before);
                        out.push_str(raw.get());
                        out.push_str(after);
                    }
                    None => out.push_str(&line),
                },
                None => out.push_str(&line),
            }
            out.push('\n');
        }
        out
    }

    /// Appends `exchange` and syncs; returns the segment written (the
    /// tests' one-exchange form of [`Recorder::append`]).
    #[cfg(test)]
    pub fn write(&self, ex: &Exchange) -> std::io::Result<PathBuf> {
        self.append(&[ex])
    }

    /// The tests' form of [`Recorder::append_from`]: exchanges that hold
    /// their own `tools`, `tool_choice` and `functions`.
    #[cfg(test)]
    pub fn append(&self, exchanges: &[&Exchange]) -> std::io::Result<PathBuf> {
        let group: Vec<(&Exchange, Option<Client<'_>>)> =
            exchanges.iter().map(|e| (*e, None)).collect();
        self.append_from(&group)
    }

    /// Appends the exchanges' lines to the current segment (written in
    /// pieces of about a MiB), then syncs the data once (a group commit);
    /// returns the segment. An exchange whose `tools`, `tool_choice` and
    /// `functions` were not copied out of the client's request comes with
    /// that request, and they are written from there (the record thread
    /// copies them into the exchange only for a hook).
    #[cfg(test)]
    pub fn append_from(
        &self,
        exchanges: &[(&Exchange, Option<Client<'_>>)],
    ) -> std::io::Result<PathBuf> {
        let entries: Vec<Entry<'_>> = exchanges
            .iter()
            .map(|(ex, client)| Entry::Exchange(ex, *client))
            .collect();
        self.append_entries(&entries)
    }

    /// An exchange's lines as [`Recorder::append_entries`] writes them,
    /// under a fresh name: what a worker renders so that the record thread
    /// only appends bytes ([`Entry::Rendered`]).
    pub fn render(&self, ex: &Exchange, client: Option<Client<'_>>) -> Vec<u8> {
        // About what the lines take (each holds the request and its tools,
        // the answer, the output and ~1 KiB of the rest), so that the
        // buffer is not grown and copied on the way; at most 16 MiB ahead.
        let guess: usize = ex
            .attempts
            .iter()
            .map(|a| {
                2 * ex.request_bytes
                    + a.response_body.as_ref().map_or(0, |b| b.len())
                    + a.output.len()
                    + a.chunks
                        .as_ref()
                        .map_or(0, |c| c.iter().map(String::len).sum())
                    + 1024
            })
            .sum();
        let mut out = Vec::with_capacity(guess.min(16 << 20));
        self.lines_into(&mut out, &self.next_name(), ex, client);
        out
    }

    /// Appends the entries' lines to the current segment, in order, in
    /// pieces of about a MiB, then syncs the data once (a group commit);
    /// returns the segment.
    pub fn append_entries(&self, entries: &[Entry<'_>]) -> std::io::Result<PathBuf> {
        self.append_with(|write| {
            // Written in pieces of about WRITE_PIECE bytes: a group of large
            // exchanges (8 MiB requests) is never held as one buffer. A
            // poisoned lock only means a panic elsewhere: the buffer is
            // cleared before use.
            let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
            let text = &mut *scratch;
            text.clear();
            let mut written = Ok(());
            for entry in entries {
                match entry {
                    // A large rendered exchange is written from where it is.
                    Entry::Rendered(lines) if lines.len() >= WRITE_PIECE => {
                        if !text.is_empty() {
                            written = write(text);
                            text.clear();
                        }
                        written = written.and_then(|()| write(lines));
                    }
                    Entry::Rendered(lines) => text.extend_from_slice(lines),
                    Entry::Exchange(ex, client) => {
                        let name = self.next_name();
                        self.lines_into(text, &name, ex, *client);
                    }
                }
                if written.is_ok() && text.len() >= WRITE_PIECE {
                    written = write(text);
                    text.clear();
                }
                if written.is_err() {
                    break;
                }
            }
            if written.is_ok() && !text.is_empty() {
                written = write(text);
            }
            // What one large exchange grew it to is not kept.
            text.clear();
            text.shrink_to(2 * WRITE_PIECE);
            written
        })
    }

    /// Appends what `fill` writes (whole lines, in pieces) to the current
    /// segment with one sync at the end. A failure cuts the segment back to
    /// where the group began, so it ends with a whole line.
    fn append_with(
        &self,
        fill: impl FnOnce(&mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()>,
    ) -> std::io::Result<PathBuf> {
        // A poisoned lock only means a panic elsewhere; a segment after a
        // failed write is dropped below, so the state is valid.
        let mut guard = self.segment.lock().unwrap_or_else(|p| p.into_inner());
        let live = match guard.take() {
            Some(seg) if seg.len < SEGMENT_BYTES => self.locked(seg),
            _ => None,
        };
        let mut seg = match live {
            Some(seg) => seg,
            None => self.locked(self.open_segment()?).ok_or_else(|| {
                std::io::Error::other("a new segment was replaced before it was written")
            })?,
        };
        let mut wrote = 0u64;
        let written = {
            let file = &mut seg.file;
            let mut write = |piece: &[u8]| -> std::io::Result<()> {
                file.write_all(piece)?;
                wrote += piece.len() as u64;
                Ok(())
            };
            fill(&mut write)
        }
        .and_then(|()| seg.file.sync_data());
        match written {
            Ok(()) => {
                seg.len += wrote;
                let path = seg.path.clone();
                // A segment whose lock cannot be released is closed (which
                // releases it): the next group starts a new one.
                if seg.file.unlock().is_ok() {
                    *guard = Some(seg);
                }
                Ok(path)
            }
            Err(e) => {
                // Cut a partial write back so that the segment ends with a
                // whole line; if that fails too, the torn line stays the
                // segment's last (the segment is not written again). Still
                // under the lock; closing the file releases it.
                let _ = seg.file.set_len(seg.len);
                // A segment that holds no record yet (one this group opened)
                // is removed: on a full disk each group would otherwise leave
                // one more empty file behind (creating a file needs no free
                // block), without bound until the inodes run out.
                if seg.len == 0 && self.still_there(&seg) {
                    let _ = std::fs::remove_file(&seg.path);
                }
                Err(e)
            }
        }
    }

    /// The segment, locked for a group's append, when its path still names
    /// it; `None` (and closed, which releases the lock) when it was deleted
    /// or replaced. `label --write` replaces a file only holding the same
    /// lock, after checking that the file holds just what it read: a
    /// segment still at its path once the lock is taken stays there, and
    /// what the group appends is in the file that path names, until the
    /// lock is released. What the lock costs: `flock(LOCK_EX)` here and
    /// `flock(LOCK_UN)` after the group's `fdatasync`, two system calls per
    /// group, next to the `stat` this check always made. Where the lock
    /// cannot be taken the group is appended without it (a record is never
    /// dropped for want of a lock).
    fn locked(&self, seg: Segment) -> Option<Segment> {
        // `label --write` holds it for a check and a rename (a re-read of at
        // most one segment): a holder past a second is another program, and
        // the recorder does not wait on it (its queue would grow with every
        // exchange, and shutdown would wait past `--grace`).
        if let Err(e) = toolgate_core::load::lock_exclusive_within(&seg.file, LOCK_WAIT) {
            tracing::warn!(
                segment = %seg.path.display(),
                error = %e,
                "cannot lock the segment: appending without the lock"
            );
        }
        self.still_there(&seg).then_some(seg)
    }

    /// Whether the segment's path still names the open file.
    fn still_there(&self, seg: &Segment) -> bool {
        std::fs::metadata(&seg.path).is_ok_and(|m| file_id(&m) == seg.id)
    }

    /// Starts a new segment (and makes its name durable).
    fn open_segment(&self) -> std::io::Result<Segment> {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let n = self.segments.fetch_add(1, Ordering::Relaxed);
        let path = self
            .dir
            .join(format!("segment-{ms}-{}-{n:04}.jsonl", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)?;
        let id = file_id(&file.metadata()?);
        #[cfg(unix)]
        if let Ok(d) = std::fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(Segment {
            path,
            file,
            len: 0,
            id,
        })
    }
}

/// One transcript line, written from the exchange's own fields (the keys
/// and their order are those of [`Recorder::lines_as_value`]).
struct Line<'a> {
    exchange: &'a str,
    sample: usize,
    model: Option<&'a str>,
    task: Option<&'a str>,
    tools: AllowList<'a>,
    tool_choice: Option<Json<'a>>,
    output: &'a str,
    reasoning: Option<&'a str>,
    tool_calls: Option<&'a [Value]>,
    finish_reason: Option<&'a str>,
    chunks: Option<&'a [String]>,
    request: Option<Req<'a>>,
    response: Option<Json<'a>>,
    timing: Timing,
    proxy: ProxyFields<'a>,
}

impl Line<'_> {
    /// The line's object, written into `out` member by member: the keys as
    /// the bytes they are, text kept as it came copied in whole, and each
    /// value as serde_json writes it (the bytes serializing the same
    /// fields as one struct gave, which the tests hold against the `Value`
    /// object this replaced).
    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let mut o = Members::open(out);
        o.str(own!("exchange"), self.exchange);
        o.value(own!("sample"), &self.sample)?;
        o.some_str(own!("model"), self.model);
        o.some_str(own!("task"), self.task);
        self.tools.write(o.key(own!("tools")))?;
        if let Some(t) = self.tool_choice {
            t.member(&mut o, own!("tool_choice"))?;
        }
        o.str(own!("output"), self.output);
        o.some_str(own!("reasoning"), self.reasoning);
        o.some(own!("tool_calls"), self.tool_calls)?;
        o.some_str(own!("finish_reason"), self.finish_reason);
        o.some(own!("chunks"), self.chunks)?;
        match &self.request {
            Some(Req::Borrowed(j)) => j.member(&mut o, own!("request"))?,
            Some(Req::Shared(raw)) => o.raw(own!("request"), raw.get()),
            None => {}
        }
        if let Some(r) = self.response {
            r.member(&mut o, own!("response"))?;
        }
        let mut t = Members::open(o.key(own!("timing")));
        t.value(own!("started_unix_ms"), &self.timing.started_unix_ms)?;
        t.value(own!("upstream_ms"), &self.timing.upstream_ms)?;
        t.value(own!("first_byte_ms"), &self.timing.first_byte_ms)?;
        t.value(own!("total_ms"), &self.timing.total_ms)?;
        t.close();
        let mut p = Members::open(o.key(own!("proxy")));
        for (k, v) in &self.proxy.0 {
            v.write(p.key(*k))?;
        }
        p.close();
        o.close();
        Ok(())
    }
}

/// The line's `request`: the request itself or the client's body as it
/// came, or its redacted (or shared) serialized form.
enum Req<'a> {
    Borrowed(Json<'a>),
    Shared(Rc<RawValue>),
}

/// The line's `response` or `tool_choice`: a value, or text as it came
/// (serde's form of that value: [`super::verbatim`]).
#[derive(Clone, Copy)]
enum Json<'a> {
    Value(&'a Value),
    Raw(&'a str),
}

impl Json<'_> {
    /// Writes `"key":` and the value, or the text as it came.
    fn member(self, o: &mut Members<'_>, key: impl MemberKey) -> serde_json::Result<()> {
        match self {
            Json::Value(v) => o.value(key, v),
            Json::Raw(text) => {
                o.raw(key, text);
                Ok(())
            }
        }
    }
}

/// The allowlist: `tools`, then the legacy `functions` (arrays only); or
/// the one array of a body written as it came.
#[derive(Clone, Copy)]
enum AllowList<'a> {
    Values(Option<&'a Value>, Option<&'a Value>),
    Raw(&'a str),
}

impl AllowList<'_> {
    /// Writes the list: one array, as serde_json writes a sequence.
    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        fn part(v: Option<&Value>) -> &[Value] {
            match v {
                Some(Value::Array(items)) => items.as_slice(),
                _ => &[],
            }
        }
        let (tools, functions) = match self {
            AllowList::Values(t, f) => (part(*t), part(*f)),
            AllowList::Raw(text) => {
                out.extend_from_slice(text.as_bytes());
                return Ok(());
            }
        };
        out.push(b'[');
        for (i, t) in tools.iter().chain(functions).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, t)?;
        }
        out.push(b']');
        Ok(())
    }
}

/// The line's `timing` (the keys and numbers of the object it was built
/// as: a non-finite number is `null` either way).
struct Timing {
    started_unix_ms: u64,
    upstream_ms: f64,
    first_byte_ms: Option<f64>,
    total_ms: f64,
}

fn timing(ex: &Exchange, a: &Attempt) -> Timing {
    Timing {
        started_unix_ms: a.started_unix_ms,
        upstream_ms: round(a.upstream_ms),
        first_byte_ms: ex.first_byte_ms.filter(|_| a.served).map(round),
        total_ms: round(ex.total_ms),
    }
}

/// The proxy's judgment of one attempt, as recorded: the object
/// `Judged::to_json` built (`profile`, `decision`, `label`, `gate`,
/// `reason`, `pipeline`, `telemetry`, then `native` when there were native
/// calls), kept as the handler's own values and written straight into the
/// line. Building it is a few moves and clones of short strings; no map is
/// built on the request path and none is serialized a second time.
#[derive(Clone, Debug)]
pub struct Judgment {
    /// The profile that judged.
    pub profile: String,
    /// `execute`, `no_call` or `reject` (the whole output).
    pub decision: &'static str,
    /// The label that goes with the decision.
    pub label: &'static str,
    /// The failing gate.
    pub gate: Option<&'static str>,
    /// Why it was rejected.
    pub reason: Option<String>,
    /// The text pipeline's decision, label, mode and calls.
    pub pipeline: PipelineJudgment,
    /// The telemetry record.
    pub telemetry: toolgate_core::Telemetry,
    /// The native calls' set, when the upstream sent any.
    pub native: Option<NativeJudgment>,
    /// With several choices, each one's decision (`index`, `decision`,
    /// `label`, `gate`; for a stream's other choices also their `output`,
    /// `tool_calls` and `finish_reason`, which the transcript's own fields,
    /// `choices[0]`'s, do not hold).
    pub choices: Option<Value>,
}

/// [`Judgment::pipeline`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct PipelineJudgment {
    /// The pipeline's decision.
    pub decision: &'static str,
    /// The pipeline's label.
    pub label: &'static str,
    /// The mode whose candidates were selected.
    pub parse_mode: Option<String>,
    /// The calls it executes (`{"name", "arguments"}`).
    pub calls: Vec<toolgate_core::Call>,
}

/// [`Judgment::native`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct NativeJudgment {
    /// How many native calls.
    pub calls: usize,
    /// Why each failing one fails.
    pub failed: Vec<String>,
    /// Their label.
    pub label: &'static str,
}

impl Judgment {
    /// The keys and values of the judgment's object, in order.
    fn entries(&self) -> impl Iterator<Item = (&'static str, Fact<'_>)> {
        [
            ("profile", Fact::Str(&self.profile)),
            ("decision", Fact::Str(self.decision)),
            ("label", Fact::Str(self.label)),
            ("gate", Fact::OptStr(self.gate)),
            ("reason", Fact::OptStr(self.reason.as_deref())),
            ("pipeline", Fact::Pipeline(&self.pipeline)),
            ("telemetry", Fact::Telemetry(&self.telemetry)),
        ]
        .into_iter()
        .chain(self.native.as_ref().map(|n| ("native", Fact::Native(n))))
        .chain(self.choices.as_ref().map(|c| ("choices", Fact::Value(c))))
    }
}

impl serde::Serialize for Judgment {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.entries())
    }
}

/// One value of the line's `proxy` object, written from where it is.
enum Fact<'a> {
    Str(&'a str),
    OptStr(Option<&'a str>),
    Bool(bool),
    Num(u64),
    Value(&'a Value),
    Pipeline(&'a PipelineJudgment),
    Telemetry(&'a toolgate_core::Telemetry),
    Native(&'a NativeJudgment),
}

impl serde::Serialize for Fact<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Fact::Str(v) => s.serialize_str(v),
            Fact::OptStr(v) => v.serialize(s),
            Fact::Bool(v) => s.serialize_bool(*v),
            Fact::Num(v) => s.serialize_u64(*v),
            Fact::Value(v) => v.serialize(s),
            Fact::Pipeline(v) => v.serialize(s),
            Fact::Telemetry(v) => v.serialize(s),
            Fact::Native(v) => v.serialize(s),
        }
    }
}

impl Fact<'_> {
    /// Writes the value as its `Serialize` does (the same bytes): strings
    /// through [`jsonstr`], flags and counts directly, the telemetry member
    /// by member ([`telemetry`]), the rest through serde_json.
    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            Fact::Str(v) | Fact::OptStr(Some(v)) => jsonstr::write(out, v),
            Fact::OptStr(None) => out.extend_from_slice(b"null"),
            Fact::Bool(v) => out.extend_from_slice(if *v { b"true" } else { b"false" }),
            Fact::Num(v) => out.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes()),
            Fact::Telemetry(t) => telemetry(out, t)?,
            Fact::Value(_) | Fact::Pipeline(_) | Fact::Native(_) => {
                serde_json::to_writer(&mut *out, self)?
            }
        }
        Ok(())
    }
}

/// `t` as its derived `Serialize` writes it (its keys are literals here;
/// every field is named, so a field added to `Telemetry` does not compile
/// until it is written here too).
fn telemetry(out: &mut Vec<u8>, t: &toolgate_core::Telemetry) -> serde_json::Result<()> {
    let toolgate_core::Telemetry {
        parse_mode,
        fallback_used,
        candidate_count,
        schema_validation,
        schema_reason,
        gate,
        decision,
        repairs,
        tool_result_status,
    } = t;
    let mut o = Members::open(out);
    o.str(own!("parse_mode"), parse_mode);
    Fact::Bool(*fallback_used).write(o.key(own!("fallback_used")))?;
    Fact::Num(*candidate_count as u64).write(o.key(own!("candidate_count")))?;
    o.value(own!("schema_validation"), schema_validation)?;
    o.some_str(own!("schema_reason"), schema_reason.as_deref());
    o.value(own!("gate"), gate)?;
    o.str(own!("decision"), decision);
    o.value(own!("repairs"), repairs)?;
    o.value(own!("tool_result_status"), tool_result_status)?;
    o.close();
    Ok(())
}

/// The line's `proxy`: the exchange's and attempt's facts, then the
/// judgment's keys (which replace facts of the same name in place, as
/// inserting them into one object did), written without copying the
/// judgment.
fn proxy_fields<'a>(ex: &'a Exchange, a: &'a Attempt) -> ProxyFields<'a> {
    let mut entries: Vec<(Name<'a>, Fact<'a>)> = Vec::with_capacity(20);
    entries.extend([
        (Name::Own("mode"), Fact::Str(ex.mode)),
        (Name::Own("stream"), Fact::Bool(ex.stream)),
        (Name::Own("status"), Fact::Num(u64::from(a.status))),
        (Name::Own("served"), Fact::Bool(a.served)),
        (Name::Own("retry"), Fact::OptStr(a.retry)),
        (Name::Own("error"), Fact::OptStr(a.error.as_deref())),
        (
            Name::Own("client_disconnected"),
            Fact::Bool(ex.client_disconnected),
        ),
    ]);
    if let Some(u) = &a.usage {
        entries.push((Name::Own("usage"), Fact::Value(u)));
    }
    if let Some(profile) = &ex.profile {
        entries.push((Name::Own("profile"), Fact::Str(profile)));
    }
    if let Some(source) = &ex.profile_source {
        entries.push((Name::Own("profile_source"), Fact::Str(source)));
    }
    if let Some(e) = &ex.request_error {
        entries.push((Name::Own("request_error"), Fact::Str(e)));
        entries.push((
            Name::Own("request_bytes"),
            Fact::Num(ex.request_bytes as u64),
        ));
    }
    let mut put =
        |k: Name<'a>, v: Fact<'a>| match entries.iter_mut().find(|(e, _)| e.text() == k.text()) {
            Some(e) => e.1 = v,
            None => entries.push((k, v)),
        };
    match (&a.judgment, &a.judged) {
        (Some(j), _) => j.entries().for_each(|(k, v)| put(Name::Own(k), v)),
        (None, Some(Value::Object(j))) => j
            .iter()
            .for_each(|(k, v)| put(Name::Any(k), Fact::Value(v))),
        _ => {}
    }
    ProxyFields(entries)
}

/// The line's `proxy` object (see [`proxy_fields`]), written by
/// [`Line::write`].
struct ProxyFields<'a>(Vec<(Name<'a>, Fact<'a>)>);

/// `MS-PID-SEQ`, the sequence number at least six digits (zero-padded):
/// `format!("{ms}-{pid}-{seq:06}")`, written without the formatter.
fn name(ms: u128, pid: u32, seq: u64) -> String {
    let mut digits = itoa::Buffer::new();
    let mut name = String::with_capacity(48);
    name.push_str(digits.format(ms));
    name.push('-');
    name.push_str(digits.format(pid));
    name.push('-');
    let seq = digits.format(seq);
    for _ in seq.len()..6 {
        name.push('0');
    }
    name.push_str(seq);
    name
}

fn round(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_formatters() {
        for (ms, pid, seq) in [
            (0, 0, 0),
            (1_763_900_000_123, 4242, 1),
            (1_763_900_000_123, 1, 99_999),
            (1, 2, 999_999),
            (1, 2, 1_000_000),
            (u128::MAX, u32::MAX, u64::MAX),
        ] {
            assert_eq!(name(ms, pid, seq), format!("{ms}-{pid}-{seq:06}"));
        }
    }

    #[test]
    fn redaction_and_api_keys() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(
            dir.path(),
            vec!["/messages/0/content".into(), "/nope/x".into()],
        )
        .unwrap();
        let req = json!({"api_key": "sk-secret", "messages": [{"role": "user", "content": "my password"}]});
        let red = r.redacted(&req);
        assert_eq!(
            red,
            json!({"messages": [{"role": "user", "content": REDACTED}]})
        );
    }

    /// The fifth probe (stop 42): credential-named members other than a
    /// top-level `api_key` (LiteLLM's client-side credentials, extra
    /// headers) were written to the record. They are replaced at any depth
    /// as the importer replaces them, but a tool's `password` parameter is
    /// a schema, kept.
    #[test]
    fn credentials_anywhere_in_the_request_are_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(dir.path(), Vec::new()).unwrap();
        let password = json!({"type": "string"});
        let req = json!({
            "model": "m",
            "aws_secret_access_key": "AKIA-secret",
            "azure_ad_token": "eyJ-secret",
            "vertex_credentials": "{\"private_key\": \"-----BEGIN secret\"}",
            "extra_headers": {"Authorization": "Bearer sk-secret", "X-Trace": "t1"},
            "metadata": {"user_api_key": "sk-user-secret", "max_tokens": 5},
            "tools": [{"type": "function", "function": {"name": "login", "parameters": {
                "type": "object", "properties": {"password": password, "api_key": password}}}}],
            "response_format": {"type": "json_schema", "json_schema": {"schema": {
                "type": "object", "properties": {"access_token": {"type": "string"}}}}},
            "messages": [{"role": "user", "content": "hi"}],
        });
        let red = r.redacted(&req);
        let text = red.to_string();
        for value in ["AKIA-", "eyJ-", "BEGIN", "sk-secret", "sk-user"] {
            assert!(!text.contains(value), "{value}: {text}");
        }
        let sanitized = toolgate_core::sanitize::REDACTED;
        assert_eq!(red["aws_secret_access_key"], sanitized);
        assert_eq!(red["extra_headers"]["Authorization"], sanitized);
        assert_eq!(red["extra_headers"]["X-Trace"], "t1");
        assert_eq!(red["metadata"]["max_tokens"], 5);
        assert_eq!(red["tools"], req["tools"], "a tool's parameters are kept");
        assert_eq!(red["response_format"], req["response_format"]);
    }

    /// A client body and an upstream answer kept as they came are written
    /// as the lines of their parsed values are: as they came when that is
    /// serde's form of them (and nothing is dropped or redacted), parsed
    /// first otherwise.
    #[test]
    fn bodies_kept_as_they_came_are_written_as_their_values() {
        let dir = tempfile::tempdir().unwrap();
        let plain = Recorder::new(dir.path(), vec![]).unwrap();
        let redacting = Recorder::new(dir.path(), vec!["/secret".into()]).unwrap();
        let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "minimum": 1.5}}}]);
        let requests = [
            json!({"model": "m", "messages": [{"role": "user", "content": "a\u{0}\"é😀/"}], "tools": tools, "tool_choice": {"type": "function", "function": {"name": "f"}}, "stream": false}),
            json!({"model": "m", "tools": tools, "functions": [{"name": "g"}], "secret": "s3"}),
            json!({"model": "m", "functions": [{"name": "g"}], "tools": null, "n": -0.0}),
            json!({"model": "m", "api_key": "sk-secret", "tools": tools}),
            json!({"model": "m", "stream": "yes", "tools": tools}),
            json!({"messages": []}),
        ];
        let response = json!({"id": "r", "choices": [{"message": {"content": "x\n\t\u{1b}/é"}}], "usage": {"total_tokens": 3}, "p": 0.25});
        let answers = [
            serde_json::to_vec(&response).unwrap(),
            serde_json::to_vec_pretty(&response).unwrap(),
        ];
        let mut verbatim = 0;
        for req in &requests {
            for body in [
                serde_json::to_vec(req).unwrap(),
                serde_json::to_vec_pretty(req).unwrap(),
            ] {
                for answer in &answers {
                    let parsed =
                        Arc::new(super::super::request::read_value(&body).unwrap_or(Value::Null));
                    let placeholder = Arc::new(Value::Null);
                    let other = Arc::new(json!({"model": "m", "messages": ["re-emitted"]}));
                    let attempt = |request: &Arc<Value>, kept: bool| Attempt {
                        request: Arc::clone(request),
                        response: (!kept).then(|| serde_json::from_slice(answer).unwrap()),
                        response_body: kept.then(|| bytes::Bytes::from(answer.clone())),
                        output: "out".into(),
                        status: 200,
                        ..Attempt::default()
                    };
                    let ex = |request: &Arc<Value>, kept: bool| Exchange {
                        model: Some("m".into()),
                        mode: "enforce",
                        attempts: vec![
                            attempt(request, kept),
                            attempt(request, kept),
                            attempt(&other, kept),
                            Attempt::default(),
                        ],
                        ..Exchange::default()
                    };
                    let (as_values, as_bodies) = (ex(&parsed, false), ex(&placeholder, true));
                    let client = Client::Body {
                        body: &body,
                        placeholder: &placeholder,
                    };
                    for r in [&plain, &redacting] {
                        assert_eq!(
                            r.lines_from("n-1", &as_bodies, Some(client)),
                            r.lines_from("n-1", &as_values, Some(Client::Parsed(&parsed))),
                            "{}",
                            String::from_utf8_lossy(&body)
                        );
                        verbatim += usize::from(r.verbatim_request(&body).is_some());
                    }
                }
            }
        }
        // Only the plain recorder, the compact bodies with one allowlist
        // array (or none) and nothing to drop: the first, third and last
        // requests, with each of the two answers.
        assert_eq!(verbatim, 6);
    }

    /// Every fact the line writes itself is the bytes its `Serialize`
    /// writes: strings with escapes, both flags, counts up to `u64::MAX`,
    /// and the telemetry with every optional field absent and present.
    #[test]
    fn facts_are_the_bytes_serde_writes() {
        use toolgate_core::{Gate, Repair, SchemaValidation, Telemetry, ToolResultStatus};
        // An executed call's: every optional field absent.
        let bare = Telemetry {
            decision: "execute".into(),
            parse_mode: "primary".into(),
            candidate_count: 1,
            schema_validation: SchemaValidation::Pass,
            fallback_used: false,
            repairs: Vec::new(),
            schema_reason: None,
            gate: None,
            tool_result_status: None,
        };
        let full = Telemetry {
            parse_mode: "lenient:hermes\"\u{1}é".into(),
            fallback_used: true,
            candidate_count: usize::MAX,
            schema_validation: SchemaValidation::Fail,
            schema_reason: Some("city: \"x\" is not of type \"integer\"\n".into()),
            gate: Some(Gate::Schema),
            decision: "reject".into(),
            repairs: vec![Repair::SingleQuotes, Repair::TrailingCommas],
            tool_result_status: Some(ToolResultStatus::Error),
        };
        let facts = [
            Fact::Str("plain"),
            Fact::Str("q\"b\\c\u{0}\u{7f}\u{202e}"),
            Fact::OptStr(None),
            Fact::OptStr(Some("tab\t")),
            Fact::Bool(true),
            Fact::Bool(false),
            Fact::Num(0),
            Fact::Num(u64::MAX),
            Fact::Telemetry(&bare),
            Fact::Telemetry(&full),
        ];
        for f in facts {
            let mut got = Vec::new();
            f.write(&mut got).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                serde_json::to_string(&f).unwrap()
            );
        }
    }

    #[test]
    fn lines_are_the_bytes_of_the_value_object_they_replaced() {
        let r = Recorder::new(tempfile::tempdir().unwrap().path(), vec!["/secret".into()]).unwrap();
        let shared = Arc::new(
            json!({"model": "m", "secret": "s3", "messages": [{"content": "a\u{0}\"é😀"}]}),
        );
        let judged = json!({"profile": "hermes", "decision": "execute", "label": "pass",
            "gate": null, "reason": null, "pipeline": {"calls": [{"name": "f", "arguments": {"b": 1, "a": [1.5, -0.0, 1e300]}}]},
            "telemetry": {"x": 1}, "native": {"calls": 1}});
        let full = Attempt {
            request: Arc::clone(&shared),
            response: Some(
                json!({"id": "r", "choices": [{"message": {"content": "x\n\t\u{1b}"}}], "usage": {"total_tokens": 3}}),
            ),
            response_body: None,
            status: 200,
            output: "line\nwith \"quotes\" \\ and \u{1b} and 😀".into(),
            reasoning: Some("think".into()),
            tool_calls: Some(vec![
                json!({"id": "c", "function": {"name": "f", "arguments": "{}"}}),
            ]),
            finish_reason: Some("tool_calls".into()),
            chunks: Some(vec!["a".into(), "\u{0}".into(), String::new()]),
            judged: Some(judged),
            verdict: None,
            judgment: None,
            error: Some("unchecked: why".into()),
            started_unix_ms: 1_763_900_000_123,
            upstream_ms: 12.345_678,
            served: true,
            retry: Some("reroll"),
            usage: Some(json!({"prompt_tokens": 1})),
        };
        let bare = Attempt {
            request: Arc::new(Value::Null),
            ..Attempt::default()
        };
        let exchanges = [
            Exchange {
                model: Some("m".into()),
                task: Some("t".into()),
                tools: Some(json!([{"type": "function", "function": {"name": "f"}}])),
                tool_choice: Some(json!("auto")),
                functions: Some(json!([{"name": "g"}])),
                profile: Some("other".into()),
                profile_source: Some("--profile".into()),
                mode: "enforce",
                stream: true,
                attempts: vec![full.clone(), full.clone(), bare.clone()],
                first_byte_ms: Some(3.0004),
                total_ms: 20.5,
                client_disconnected: true,
                ..Exchange::default()
            },
            Exchange {
                tools: Some(json!({"not": "an array"})),
                functions: Some(json!("nope")),
                request_error: Some("the request body is not valid JSON".into()),
                request_bytes: 12,
                mode: "observe",
                attempts: vec![
                    bare.clone(),
                    Attempt {
                        request: Arc::new(
                            json!({"model": "m", "messages": [], "z": {"secret": 1}}),
                        ),
                        // A key JSON escapes (a hook's judgment may hold
                        // any), beside ones it does not.
                        judged: Some(
                            json!({"profile": "p", "mode": "m2", "zz": [1], "k\"\n\\\u{1}é\u{7f}": 2}),
                        ),
                        ..Attempt::default()
                    },
                ],
                ..Exchange::default()
            },
            Exchange::default(),
        ];
        for ex in &exchanges {
            assert_eq!(r.lines("n-1", ex), r.lines_as_value("n-1", ex));
            // The same lines with the allowlist read from the client's
            // request instead of copied out of it.
            let mut client = serde_json::Map::new();
            for (k, v) in [
                ("tools", &ex.tools),
                ("tool_choice", &ex.tool_choice),
                ("functions", &ex.functions),
            ] {
                if let Some(v) = v {
                    client.insert(k.into(), v.clone());
                }
            }
            let bare = Exchange {
                tools: None,
                tool_choice: None,
                functions: None,
                ..ex.clone()
            };
            let client = Value::Object(client);
            assert_eq!(
                r.lines_from("n-1", &bare, Some(Client::Parsed(&client))),
                r.lines_as_value("n-1", ex)
            );
        }
        // Judgments written from the handler's values: the profile replaces
        // the exchange's in place, or follows the facts when there is none;
        // a request sent once is written as it is, or redacted.
        let engine = toolgate_validator::Engine::new(
            toolgate_validator::Profile::builtin("hermes").unwrap(),
        );
        let tools = [toolgate_core::ToolDef {
            name: "f".into(),
            description: None,
            parameters: Some(json!({"type": "object", "required": ["a"]})),
        }];
        let judgment = |text: &str, natives: &[Value]| {
            let natives = (!natives.is_empty()).then_some(natives);
            let j = super::super::judge::judge(&engine, &tools, text, None, natives, None, None);
            Some(j.judgment())
        };
        let native =
            json!({"id": "c", "type": "function", "function": {"name": "g", "arguments": "{}"}});
        let judged = [
            Attempt {
                request: Arc::new(
                    json!({"model": "m", "messages": [{"content": "é\u{1}😀"}], "n": [1.5, -0.0, 1e300]}),
                ),
                judgment: judgment(
                    "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"\\\"x\\\"\"}}</tool_call>",
                    &[],
                ),
                served: true,
                ..Attempt::default()
            },
            Attempt {
                request: Arc::new(json!({"model": "m", "api_key": "sk-1", "secret": "s5"})),
                judgment: judgment(
                    "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
                    &[native],
                ),
                usage: Some(json!({"total_tokens": 3})),
                ..Attempt::default()
            },
            Attempt {
                request: Arc::clone(&shared),
                judgment: judgment("prose", &[]),
                judged: Some(json!({"ignored": "the judgment is written"})),
                ..Attempt::default()
            },
            Attempt {
                request: Arc::clone(&shared),
                judgment: judgment("<tool_call>{", &[]),
                ..Attempt::default()
            },
        ];
        for profile in [Some("other".to_string()), None] {
            let ex = Exchange {
                profile,
                attempts: judged.to_vec(),
                ..Exchange::default()
            };
            let text = r.lines("n-2", &ex);
            assert_eq!(text, r.lines_as_value("n-2", &ex));
            assert!(!text.contains("s3") && !text.contains("s5") && !text.contains("sk-1"));
            assert!(!text.contains("ignored"));
        }
        assert!(!r.lines("n-1", &exchanges[0]).contains("s3"));
    }

    #[test]
    fn attempts_sharing_a_request_record_it_redacted_on_every_line() {
        let r = Recorder::new(tempfile::tempdir().unwrap().path(), vec!["/secret".into()]).unwrap();
        let shared = Arc::new(json!({"model": "m", "secret": "s3", "big": "x".repeat(1000)}));
        let other = Arc::new(json!({"model": "m", "secret": "s4", "n": 2}));
        let a = |req: &Arc<Value>, out: &str| Attempt {
            request: Arc::clone(req),
            output: out.into(),
            ..Attempt::default()
        };
        let ex = Exchange {
            attempts: vec![a(&shared, "one"), a(&shared, "two"), a(&other, "three")],
            ..Exchange::default()
        };
        let text = r.lines("x", &ex);
        assert!(!text.contains("s3") && !text.contains("s4"));
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["request"], lines[1]["request"]);
        assert_eq!(lines[0]["request"]["secret"], REDACTED);
        assert_eq!(lines[0]["request"]["big"].as_str().unwrap().len(), 1000);
        assert_eq!(lines[2]["request"]["n"], 2);
        assert_eq!(lines[1]["output"], "two");
    }

    #[test]
    fn every_attempt_is_a_sample_that_the_loader_reads() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(&dir.path().join("sub"), Vec::new()).unwrap();
        let attempt = |out: &str, served| Attempt {
            request: Arc::new(json!({"model": "m", "api_key": "sk-secret"})),
            output: out.into(),
            finish_reason: Some("stop".into()),
            served,
            ..Attempt::default()
        };
        let ex = Exchange {
            model: Some("m".into()),
            tools: Some(
                json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]),
            ),
            mode: "enforce",
            attempts: vec![attempt("<tool_call>{", false), attempt("hi", true)],
            ..Exchange::default()
        };
        let path = r.write(&ex).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-secret"));
        let loaded = toolgate_core::load::load_file(&path);
        assert_eq!(loaded.len(), 2);
        let t1 = loaded[1].as_ref().unwrap();
        assert_eq!(t1.output, "hi");
        assert_eq!(t1.sample, Some(1));
        assert_eq!(t1.tools[0].name, "f");
        assert_eq!(t1.raw["proxy"]["served"], true);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left behind");
    }

    fn exchange(output: &str) -> Exchange {
        Exchange {
            model: Some("m".into()),
            mode: "observe",
            attempts: vec![Attempt {
                request: Arc::new(json!({"model": "m"})),
                output: output.into(),
                served: true,
                ..Attempt::default()
            }],
            ..Exchange::default()
        }
    }

    fn segments(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    }

    /// A group of exchanges is appended to one segment, each exchange's
    /// lines whole and in order, and every later group to the same segment
    /// until it is full.
    #[test]
    fn groups_append_to_one_segment_until_it_is_full() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(dir.path(), Vec::new()).unwrap();
        let (a, b, c) = (exchange("one"), exchange("two"), exchange("three"));
        let first = r.append(&[&a, &b]).unwrap();
        let second = r.append(&[&c]).unwrap();
        assert_eq!(first, second);
        let name = first.file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            name.starts_with("segment-") && name.ends_with(".jsonl"),
            "{name}"
        );
        let loaded = toolgate_core::load::load_file(&first);
        let outputs: Vec<String> = loaded
            .iter()
            .map(|t| t.as_ref().unwrap().output.clone())
            .collect();
        assert_eq!(outputs, ["one", "two", "three"]);
        let ids: std::collections::HashSet<String> = loaded
            .iter()
            .map(|t| {
                t.as_ref().unwrap().raw["exchange"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(ids.len(), 3, "each exchange is named");
        // Past SEGMENT_BYTES the next group starts a new segment.
        let big = exchange(&"x".repeat(SEGMENT_BYTES as usize));
        assert_eq!(r.append(&[&big]).unwrap(), first);
        let next = r.append(&[&a]).unwrap();
        assert_ne!(next, first);
        assert_eq!(segments(dir.path()), [first, next]);
    }

    /// Lines rendered on a worker and exchanges written on the record
    /// thread go into one group in order, each as [`Recorder::render`]
    /// writes it, a rendered exchange past a piece from where it is.
    #[test]
    fn rendered_and_whole_exchanges_append_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(dir.path(), Vec::new()).unwrap();
        let (a, b) = (exchange("one"), exchange("two"));
        let big = exchange(&"y".repeat(WRITE_PIECE + 10));
        let (ra, rbig) = (r.render(&a, None), r.render(&big, None));
        assert!(rbig.len() >= WRITE_PIECE);
        let path = r
            .append_entries(&[
                Entry::Rendered(&ra),
                Entry::Exchange(&b, None),
                Entry::Rendered(&rbig),
                Entry::Rendered(&ra),
            ])
            .unwrap();
        let text = std::fs::read(&path).unwrap();
        // The rendered lines are there byte for byte, in order.
        let at = |needle: &[u8], from: usize| {
            from + text[from..]
                .windows(needle.len())
                .position(|w| w == needle)
                .unwrap()
        };
        assert_eq!(at(&ra, 0), 0);
        let two = at(b"\"output\":\"two\"", ra.len());
        let big_at = at(&rbig, two);
        assert_eq!(at(&ra, big_at + rbig.len()), big_at + rbig.len());
        assert_eq!(text.len(), big_at + rbig.len() + ra.len());
        // A rendered exchange is the line the record thread writes for it.
        let loaded = toolgate_core::load::load_file(&path);
        let outputs: Vec<String> = loaded
            .iter()
            .map(|t| t.as_ref().unwrap().output.clone())
            .collect();
        assert_eq!(
            outputs,
            ["one", "two", "y".repeat(WRITE_PIECE + 10).as_str(), "one"]
        );
        let name = loaded[0].as_ref().unwrap().raw["exchange"]
            .as_str()
            .unwrap();
        assert_eq!(
            String::from_utf8(ra.clone()).unwrap(),
            r.lines(name, &a),
            "render is lines under a fresh name"
        );
    }

    /// A segment deleted under the recorder is not written to (its records
    /// would be lost unseen): the next group goes to a new segment, and with
    /// the directory gone the write fails.
    #[test]
    fn a_deleted_segment_or_directory_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(dir.path(), Vec::new()).unwrap();
        let first = r.write(&exchange("one")).unwrap();
        std::fs::remove_file(&first).unwrap();
        let second = r.write(&exchange("two")).unwrap();
        assert_ne!(first, second);
        let loaded = toolgate_core::load::load_file(&second);
        assert_eq!(loaded.len(), 1);
        assert_eq!(loaded[0].as_ref().unwrap().output, "two");
        std::fs::remove_dir_all(dir.path()).unwrap();
        assert!(r.write(&exchange("three")).is_err());
    }

    /// A crash in the middle of a group's write leaves the segment with a
    /// torn last line: the loader reads the whole records before it and
    /// reports the torn one, never reads it as a record.
    #[test]
    fn a_write_cut_short_leaves_whole_records_and_one_reported_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(dir.path(), Vec::new()).unwrap();
        let path = r.write(&exchange("whole")).unwrap();
        let next = r.lines("cut", &exchange("cut short"));
        let half = &next.as_bytes()[..next.len() / 2];
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(half)
            .unwrap();
        let loaded = toolgate_core::load::load_file(&path);
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[0].as_ref().unwrap().output, "whole");
        let e = loaded[1].as_ref().unwrap_err();
        assert_eq!(e.reason, toolgate_core::load::TORN);
        assert_eq!(e.line, Some(2));
    }

    // probe44b: on a full disk every failed group left one more empty
    // segment file behind.
    #[test]
    fn a_failed_write_leaves_no_empty_segment_and_the_next_group_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::new(dir.path(), Vec::new()).unwrap();
        for _ in 0..5 {
            let e = r
                .append_with(|write| {
                    write(b"{\"torn\":")?;
                    Err(std::io::Error::other("no space left on device"))
                })
                .unwrap_err();
            assert_eq!(e.to_string(), "no space left on device");
        }
        assert_eq!(segments(dir.path()).len(), 0, "no empty segment is left");
        let path = r.write(&exchange("after")).unwrap();
        assert_eq!(segments(dir.path()), [path]);
        // A segment that holds records is kept, cut back to its last one;
        // the next group starts a new segment, as before.
        r.append_with(|write| {
            write(b"{\"torn\":")?;
            Err(std::io::Error::other("no space left on device"))
        })
        .unwrap_err();
        r.write(&exchange("later")).unwrap();
        let all = segments(dir.path());
        assert_eq!(all.len(), 2);
        assert!(all.iter().all(|p| std::fs::metadata(p).unwrap().len() > 0));
        assert_eq!(recorded(dir.path()), ["after", "later"]);
    }

    /// The outputs of every record in the segments of `dir`, each once.
    fn recorded(dir: &Path) -> Vec<String> {
        let mut outputs: Vec<String> = segments(dir)
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .flat_map(|p| toolgate_core::load::load_file(p))
            .map(|t| t.unwrap().output)
            .collect();
        outputs.sort();
        outputs
    }

    /// Records appended while `label --write` rewrites the segment survive:
    /// a group appended after the labeller read the segment makes it leave
    /// the segment alone, and a group that comes while it holds the lock to
    /// replace the segment waits, then finds the segment replaced and goes
    /// to a new one (without the lock it went to the replaced file).
    #[test]
    fn records_appended_while_label_write_rewrites_the_segment_survive() {
        use toolgate_core::load::{Stage, WriteOutcome, write_labels_staged};
        let dir = tempfile::tempdir().unwrap();
        let r = Arc::new(Recorder::new(dir.path(), Vec::new()).unwrap());
        let first = r.write(&exchange("r0")).unwrap();
        let labels = vec![("hermes".to_string(), "no_call".to_string())];
        let err = write_labels_staged(&first, &[(Some(1), labels.clone())], None, &mut |stage| {
            if stage == Stage::Staged {
                assert_eq!(r.write(&exchange("r1")).unwrap(), first);
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("appended to"), "{err}");
        let (started, wait) = std::sync::mpsc::channel();
        let mut appender = None;
        let outcome = write_labels_staged(&first, &[(Some(1), labels)], None, &mut |stage| {
            if stage == Stage::Checked {
                let r = Arc::clone(&r);
                let started = started.clone();
                appender = Some(std::thread::spawn(move || {
                    started.send(()).unwrap();
                    r.write(&exchange("r2")).unwrap()
                }));
                wait.recv().unwrap();
                // Time enough for an append that does not wait for the lock
                // to land in the file about to be replaced.
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        })
        .unwrap();
        assert_eq!(outcome, WriteOutcome::Written);
        let second = appender.unwrap().join().unwrap();
        assert_ne!(second, first, "the replaced segment is not appended to");
        assert_eq!(r.write(&exchange("r3")).unwrap(), second);
        assert_eq!(recorded(dir.path()), ["r0", "r1", "r2", "r3"]);
        let labelled = toolgate_core::load::load_file(&first);
        assert_eq!(labelled.len(), 2);
        assert_eq!(
            labelled[0].as_ref().unwrap().raw["labels"]["hermes"],
            "no_call"
        );
    }

    /// The sixth probe (stop 42): a process holding a segment's lock for
    /// good stalled the recorder (its queue grew to 476 MB, shutdown waited
    /// past `--grace`). The recorder waits a second, then appends without
    /// the lock: the record is written, nothing waits for good.
    #[test]
    fn a_lock_held_for_good_elsewhere_does_not_stall_the_recorder() {
        let dir = tempfile::tempdir().unwrap();
        let r = Arc::new(Recorder::new(dir.path(), Vec::new()).unwrap());
        r.append(&[&exchange("first")]).unwrap();
        let held = std::fs::File::open(&segments(dir.path())[0]).unwrap();
        held.lock().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let writer = Arc::clone(&r);
        std::thread::spawn(move || {
            let _ = tx.send(writer.append(&[&exchange("second")]).is_ok());
        });
        let appended = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the recorder waited on the lock for good");
        assert!(appended);
        assert_eq!(recorded(dir.path()), ["first", "second"]);
        drop(held);
    }

    /// The prober's race as a loop: one thread records groups while another
    /// labels every segment over and over (reading it, then writing labels
    /// checked against what it read); every record is there at the end.
    #[test]
    fn every_record_survives_a_label_write_loop() {
        const GROUPS: usize = 300;
        let dir = tempfile::tempdir().unwrap();
        let r = Arc::new(Recorder::new(dir.path(), Vec::new()).unwrap());
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let recorder = {
            let (r, done) = (Arc::clone(&r), Arc::clone(&done));
            std::thread::spawn(move || {
                for i in 0..GROUPS {
                    let (a, b) = (exchange(&format!("{i}a")), exchange(&format!("{i}b")));
                    r.append(&[&a, &b]).unwrap();
                }
                done.store(true, Ordering::SeqCst);
            })
        };
        let (mut written, mut refused) = (0, 0);
        let mut pass = 0;
        while !done.load(Ordering::SeqCst) {
            pass += 1;
            for path in segments(dir.path()) {
                let Ok(bytes) = std::fs::read(&path) else {
                    continue;
                };
                let lines = bytes.iter().filter(|b| **b == b'\n').count();
                let label = vec![("hermes".to_string(), format!("pass{pass}"))];
                let updates: Vec<_> = (1..=lines).map(|n| (Some(n), label.clone())).collect();
                let read = toolgate_core::load::Fingerprint::of(&bytes);
                match toolgate_core::load::write_labels_checked(&path, &updates, Some(read)) {
                    Ok(_) => written += 1,
                    Err(_) => refused += 1,
                }
            }
        }
        recorder.join().unwrap();
        // Recording done, every segment is labelled (the loop may have been
        // refused every time on a loaded machine: the recorder kept adding).
        for path in segments(dir.path()) {
            let bytes = std::fs::read(&path).unwrap();
            let lines = bytes.iter().filter(|b| **b == b'\n').count();
            let label = vec![("hermes".to_string(), "last".to_string())];
            let updates: Vec<_> = (1..=lines).map(|n| (Some(n), label.clone())).collect();
            let read = toolgate_core::load::Fingerprint::of(&bytes);
            toolgate_core::load::write_labels_checked(&path, &updates, Some(read)).unwrap();
            written += 1;
        }
        let mut want: Vec<String> = (0..GROUPS)
            .flat_map(|i| [format!("{i}a"), format!("{i}b")])
            .collect();
        want.sort();
        assert_eq!(
            recorded(dir.path()),
            want,
            "{written} written, {refused} refused"
        );
    }
}
