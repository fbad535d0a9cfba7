//! `toolgate mock-upstream DIR`: an OpenAI-compatible server that answers
//! with the raw outputs of the transcripts in a directory (tests, demos, and
//! the in-repo mock server seed 002's scorer is checked against).
//!
//! # Endpoints
//!
//! - `POST /v1/chat/completions`, streaming (`"stream": true`, SSE) or not.
//! - `GET /v1/models`: the distinct `model`s of the transcripts (`mock` when
//!   none names one).
//! - `GET /mock/requests`: the chat requests received so far (bodies, with
//!   their `path` and `query`, the `authorization` and every
//!   `content-type` header they carried, the names of all their headers),
//!   and requests for paths it does not serve (`not_found: true`, method,
//!   path, query, header names), so tests can check
//!   what a proxy forwarded, and whether it forwarded anything. Held in memory only: the last [`REQUEST_LOG_LIMIT`],
//!   at most [`REQUEST_LOG_BYTES`] of bodies (a body larger than
//!   [`REQUEST_LOG_BODY`] is logged as `{"clipped_bytes": N}`).
//!
//! # Faults
//!
//! A request header `x-mock-fault: NAME` makes the answer misbehave, so
//! that a proxy's fault handling can be tested through it ([`Fault`]):
//! broken bytes, the wrong content type, resets and stalls mid-answer,
//! error events, unknown call fields, the legacy `function_call`, oversized
//! streams; and answers that are well formed but not compact (pretty-printed,
//! keys with escapes).
//!
//! # Which transcript answers
//!
//! Each transcript is known by its keys: its `id`, its `task`, its `prompt`,
//! and the last user message of its `messages` or `request.messages`. A
//! request's last user message (text content, trimmed) selects the
//! transcripts with that key, narrowed to those whose `model` is the
//! request's model when any is; with no key match, the transcripts of the
//! request's model, else all of them. Among the selected ones the mock
//! answers **in turn** (a counter per selection): two transcripts with the
//! same task, a truncated call then a correct one, are a flaky model that a
//! retry fixes.
//!
//! # What it answers
//!
//! `content` is the transcript's raw `output` exactly. With
//! [`MockOptions::native`], a transcript's `tool_calls` and `reasoning` are
//! returned as the server-parsed `message.tool_calls` and
//! `message.reasoning_content`; without it, neither is (a server that keeps
//! the raw text). `finish_reason` is the transcript's, else `tool_calls` when
//! native calls are returned, else `stop`.
//!
//! Streaming replays the transcript's `chunks` when it has them, else splits
//! the output into deltas of [`MockOptions::delta_chars`] characters; with
//! [`MockOptions::split_openers`] a delta also ends right after every `<`,
//! `[`, `{`, `|` and `｜`, so that every tool-call opener arrives split across
//! deltas. The stream starts with an SSE comment and a role chunk, and ends
//! with the finish chunk, a usage chunk when `stream_options.include_usage`
//! asks for it, and `data: [DONE]`.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolgate_core::{LoadError, Transcript, load_paths};

/// How many received requests `GET /mock/requests` keeps.
pub const REQUEST_LOG_LIMIT: usize = 1000;
/// How many bytes of request bodies `GET /mock/requests` keeps.
pub const REQUEST_LOG_BYTES: usize = 8 * 1024 * 1024;
/// A body larger than this is logged by its size only.
pub const REQUEST_LOG_BODY: usize = 1024 * 1024;

/// How long a stalling fault stalls (the client's timeout should end it).
const STALL: Duration = Duration::from_secs(120);

/// A misbehaviour asked for with the `x-mock-fault` request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An invalid UTF-8 byte in the content.
    BadUtf8,
    /// A lone `\ud800` escape in the content.
    LoneSurrogate,
    /// The other kind of answer: SSE for a non-streamed request, JSON for
    /// a streamed one.
    WrongType,
    /// The connection is cut: after the finish chunk (stream), halfway
    /// through the body (not streamed).
    Reset,
    /// The answer stalls: after the finish chunk (stream), halfway through
    /// the body (not streamed).
    Stall,
    /// The stream ends cleanly before its finish chunk and `[DONE]`.
    EndEarly,
    /// An `error` event in the middle of the stream (then `[DONE]`).
    ErrorEvent,
    /// The same error as an SSE event typed `error` (`event: error`) whose
    /// data has no `error` key (then `[DONE]`).
    TypedErrorEvent,
    /// A byte order mark before the stream's first event (which SSE
    /// readers skip), and neither the opening comment nor the role-only
    /// chunk: the first event carries content. The stream is otherwise
    /// right.
    Bom,
    /// A stream event whose data is not JSON.
    NotJson,
    /// An unknown call-bearing field (`tool_use`) in the message or delta.
    UnknownCallField,
    /// The native calls as one legacy `function_call` (`finish_reason:
    /// function_call`).
    Legacy,
    /// 4 MiB of content.
    Huge,
    /// A 500 whose body stalls halfway.
    ErrorStall,
    /// The answer pretty-printed (spaces and newlines between tokens; a
    /// non-streamed answer).
    Pretty,
    /// Every `content` key written with an escape (`"cont\u0065nt"`: the
    /// same name to a JSON reader, other bytes; a non-streamed answer).
    EscapedKeys,
    /// The right answer, plain JSON or SSE, labelled `Content-Encoding:
    /// gzip` (as a server that compresses would send it; the bytes stay
    /// plain, which a proxy must not find out by reading them).
    Coded,
    /// `307 Temporary Redirect` to `/v1/chat/completions/elsewhere`, no
    /// body (streamed or not): an SDK that follows it posts the request
    /// again, to that path.
    Redirect,
}

impl Fault {
    /// The fault named by a header value.
    pub fn parse(name: &str) -> Option<Fault> {
        Some(match name {
            "bad_utf8" => Fault::BadUtf8,
            "lone_surrogate" => Fault::LoneSurrogate,
            "wrong_type" => Fault::WrongType,
            "reset" => Fault::Reset,
            "stall" => Fault::Stall,
            "end_early" => Fault::EndEarly,
            "error_event" => Fault::ErrorEvent,
            "typed_error_event" => Fault::TypedErrorEvent,
            "bom" => Fault::Bom,
            "not_json" => Fault::NotJson,
            "unknown_call_field" => Fault::UnknownCallField,
            "legacy" => Fault::Legacy,
            "huge" => Fault::Huge,
            "error_stall" => Fault::ErrorStall,
            "pretty" => Fault::Pretty,
            "escaped_keys" => Fault::EscapedKeys,
            "redirect" => Fault::Redirect,
            "coded" => Fault::Coded,
            _ => return None,
        })
    }
}

/// How the mock answers.
#[derive(Clone, Debug)]
pub struct MockOptions {
    /// Characters per streamed delta (at least 1).
    pub delta_chars: usize,
    /// End a delta after every `<`, `[`, `{`, `|`, `｜` so openers arrive split.
    pub split_openers: bool,
    /// Return the transcripts' `tool_calls` and `reasoning` natively.
    pub native: bool,
    /// Pause between streamed deltas.
    pub delta_delay: Duration,
}

impl Default for MockOptions {
    fn default() -> MockOptions {
        MockOptions {
            delta_chars: 4,
            split_openers: false,
            native: false,
            delta_delay: Duration::ZERO,
        }
    }
}

/// One answer the mock can give.
#[derive(Clone, Debug)]
struct Entry {
    model: Option<String>,
    keys: Vec<String>,
    output: String,
    reasoning: Option<String>,
    tool_calls: Option<Vec<Value>>,
    finish_reason: Option<String>,
    chunks: Option<Vec<String>>,
}

impl Entry {
    fn from_transcript(t: &Transcript) -> Entry {
        let mut keys = vec![t.id.clone()];
        keys.extend(t.task.clone());
        if let Some(p) = t.prompt() {
            keys.push(p.trim().to_string());
        }
        if let Some(last) = t.messages().and_then(last_user_message) {
            keys.push(last);
        }
        Entry {
            model: t.model.clone(),
            keys,
            output: t.output.clone(),
            reasoning: t.reasoning.clone(),
            tool_calls: t.tool_calls.clone(),
            finish_reason: t.finish_reason.clone(),
            chunks: t.chunks.clone(),
        }
    }
}

/// The text of the last `user` message of an OpenAI `messages` array
/// (string content, or the concatenated `text` parts), trimmed.
pub fn last_user_message(messages: &Value) -> Option<String> {
    let msg = messages
        .as_array()?
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    match msg.get("content")? {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<String>()
                .trim()
                .to_string(),
        ),
        _ => None,
    }
}

/// The mock upstream: transcripts, options and its counters.
pub struct Mock {
    entries: Vec<Entry>,
    options: MockOptions,
    turns: Mutex<HashMap<String, usize>>,
    /// The request log and the bytes of bodies it holds.
    requests: Mutex<(std::collections::VecDeque<(Value, usize)>, usize)>,
    next_id: AtomicU64,
}

impl Mock {
    /// Loads every transcript under `dir`; the files that cannot be loaded
    /// are returned beside the mock (they answer nothing).
    pub fn load(dir: &Path, options: MockOptions) -> (Mock, Vec<LoadError>) {
        let mut transcripts = Vec::new();
        let mut errors = Vec::new();
        for loaded in load_paths(&[dir.to_path_buf()]) {
            match loaded {
                Ok(t) => transcripts.push(t),
                Err(e) => errors.push(e),
            }
        }
        (Mock::from_transcripts(&transcripts, options), errors)
    }

    /// A mock answering with these transcripts.
    pub fn from_transcripts(transcripts: &[Transcript], options: MockOptions) -> Mock {
        Mock {
            entries: transcripts.iter().map(Entry::from_transcript).collect(),
            options: MockOptions {
                delta_chars: options.delta_chars.max(1),
                ..options
            },
            turns: Mutex::new(HashMap::new()),
            requests: Mutex::new((std::collections::VecDeque::new(), 0)),
            next_id: AtomicU64::new(1),
        }
    }

    /// How many transcripts it answers with.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it has no transcript to answer with.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry that answers a request for `model` whose last user message
    /// is `last_user` (see the module documentation), advancing its turn.
    fn select(&self, model: Option<&str>, last_user: Option<&str>) -> Option<&Entry> {
        let of_model = |e: &&Entry| model.is_some() && e.model.as_deref() == model;
        let mut chosen: Vec<&Entry> = match last_user {
            Some(u) => self
                .entries
                .iter()
                .filter(|e| e.keys.iter().any(|k| k == u))
                .collect(),
            None => Vec::new(),
        };
        let by_key = !chosen.is_empty();
        if chosen.iter().any(of_model) {
            chosen.retain(of_model);
        }
        if chosen.is_empty() {
            chosen = self.entries.iter().filter(of_model).collect();
        }
        if chosen.is_empty() {
            chosen = self.entries.iter().collect();
        }
        if chosen.is_empty() {
            return None;
        }
        let turn_key = format!(
            "{}\u{0}{}",
            model.unwrap_or(""),
            if by_key { last_user.unwrap_or("") } else { "" }
        );
        let n = {
            // A poisoned lock only means another request panicked mid-update;
            // the counter is still a usable number.
            let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
            let n = turns.entry(turn_key).or_insert(0);
            let current = *n;
            *n += 1;
            current
        };
        Some(chosen[n % chosen.len()])
    }

    fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| e.model.clone())
            .collect();
        models.sort();
        models.dedup();
        if models.is_empty() {
            models.push("mock".into());
        }
        models
    }

    fn log_request(&self, uri: &Uri, body: &Value, bytes: usize, headers: &HeaderMap) {
        let auth = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(redacted_credential);
        // Every `Content-Type` the request carried, so that a test sees two.
        let content_type: Vec<&str> = headers
            .get_all(header::CONTENT_TYPE)
            .iter()
            .map(|v| v.to_str().unwrap_or("(not text)"))
            .collect();
        let (path, query) = (uri.path(), uri.query());
        let names = header_names(headers);
        let (entry, size) = if bytes > REQUEST_LOG_BODY {
            (
                json!({"path": path, "query": query, "header_names": names, "authorization": auth, "content_type": content_type, "body": {"clipped_bytes": bytes}}),
                64,
            )
        } else {
            (
                json!({"path": path, "query": query, "header_names": names, "authorization": auth, "content_type": content_type, "body": body}),
                bytes,
            )
        };
        self.log(entry, size);
    }

    /// Adds an entry to the request log, within its bounds.
    fn log(&self, entry: Value, size: usize) {
        let mut log = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        log.0.push_back((entry, size));
        log.1 += size;
        while log.0.len() > REQUEST_LOG_LIMIT || log.1 > REQUEST_LOG_BYTES {
            match log.0.pop_front() {
                Some((_, n)) => log.1 -= n,
                None => break,
            }
        }
    }

    /// The HTTP routes.
    pub fn router(self: Arc<Self>) -> Router {
        Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .route("/mock/requests", get(requests))
            .fallback(not_found)
            // Whatever a proxy in front accepts (its default limit).
            .layer(axum::extract::DefaultBodyLimit::max(
                crate::gateway::MAX_REQUEST,
            ))
            .with_state(self)
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(
            json!({"error": {"message": message, "type": "invalid_request_error", "code": null}}),
        ),
    )
        .into_response()
}

/// The names of the headers a request carried, sorted (never their values).
fn header_names(headers: &HeaderMap) -> Vec<&str> {
    let mut names: Vec<&str> = headers.keys().map(|k| k.as_str()).collect();
    names.sort_unstable();
    names
}

/// Logged too (`{"not_found": true, "method", "path", "query",
/// "header_names"}`), so that
/// a test sees a request that reached the upstream at all.
async fn not_found(
    State(mock): State<Arc<Mock>>,
    method: axum::http::Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let path: String = uri.path().chars().take(1024).collect();
    let query: Option<String> = uri.query().map(|q| q.chars().take(1024).collect());
    let names = header_names(&headers);
    let size = 64 + path.len() + query.as_ref().map_or(0, String::len) + 16 * names.len();
    mock.log(
        json!({"not_found": true, "method": method.as_str(), "path": path, "query": query, "header_names": names}),
        size,
    );
    error(
        StatusCode::NOT_FOUND,
        "no such endpoint on the mock upstream",
    )
}

async fn models(State(mock): State<Arc<Mock>>) -> Response {
    let data: Vec<Value> = mock
        .models()
        .into_iter()
        .map(|m| json!({"id": m, "object": "model", "created": 0, "owned_by": "toolgate-mock"}))
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

async fn requests(State(mock): State<Arc<Mock>>) -> Response {
    let log: Vec<Value> = mock
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .0
        .iter()
        .map(|(v, _)| v.clone())
        .collect();
    axum::Json(Value::Array(log)).into_response()
}

async fn chat(
    State(mock): State<Arc<Mock>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "the request body is not JSON");
    };
    if !request.is_object() {
        return error(
            StatusCode::BAD_REQUEST,
            "the request body is not a JSON object",
        );
    }
    mock.log_request(&uri, &request, body.len(), &headers);
    let fault = headers
        .get("x-mock-fault")
        .and_then(|v| v.to_str().ok())
        .and_then(Fault::parse);
    if fault == Some(Fault::Redirect) {
        return Response::builder()
            .status(StatusCode::TEMPORARY_REDIRECT)
            .header(header::LOCATION, "/v1/chat/completions/elsewhere")
            .header(header::CONTENT_LENGTH, "0")
            .body(Body::empty())
            .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "redirect"));
    }
    let model = request.get("model").and_then(Value::as_str);
    let last_user = request.get("messages").and_then(last_user_message);
    let Some(entry) = mock.select(model, last_user.as_deref()) else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the mock upstream has no transcripts",
        );
    };
    let entry = entry.clone();
    let model = model
        .map(str::to_string)
        .or_else(|| entry.model.clone())
        .unwrap_or_else(|| "mock".into());
    let id = format!(
        "chatcmpl-mock-{}",
        mock.next_id.fetch_add(1, Ordering::Relaxed)
    );
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    let mut options = mock.options.clone();
    let mut entry = entry;
    if fault == Some(Fault::Legacy) {
        options.native = true;
    }
    if fault == Some(Fault::Huge) {
        entry.output = "x".repeat(4 * 1024 * 1024);
        entry.chunks = None;
        options.delta_chars = options.delta_chars.max(64 * 1024);
    }
    if fault == Some(Fault::Coded) {
        let mut r = if stream {
            stream_answer(&options, &entry, &id, &model, usage)
        } else {
            axum::Json(answer(&options, &entry, &id, &model)).into_response()
        };
        r.headers_mut().insert(
            header::CONTENT_ENCODING,
            axum::http::HeaderValue::from_static("gzip"),
        );
        return r;
    }
    match (stream, fault) {
        (true, Some(Fault::WrongType)) | (false, None) => {
            axum::Json(answer(&options, &entry, &id, &model)).into_response()
        }
        (false, Some(Fault::WrongType)) | (true, None) => {
            stream_answer(&options, &entry, &id, &model, usage)
        }
        (true, Some(f)) => {
            let frames = stream_frames(&options, &entry, &id, &model, usage);
            faulty_stream(f, frames)
        }
        (false, Some(f)) => faulty_answer(f, answer(&options, &entry, &id, &model)),
    }
}

/// A body of `parts`, each `Ok` sent in turn, an `Err` cutting the
/// connection, `None` stalling for [`STALL`].
fn body_of(parts: Vec<Option<Result<Bytes, std::io::Error>>>) -> Body {
    Body::from_stream(futures_util::stream::unfold(
        parts.into_iter(),
        |mut parts| async move {
            match parts.next()? {
                Some(item) => Some((item, parts)),
                None => {
                    tokio::time::sleep(STALL).await;
                    None
                }
            }
        },
    ))
}

fn cut() -> Option<Result<Bytes, std::io::Error>> {
    Some(Err(std::io::Error::other("mock fault: connection cut")))
}

/// A non-streamed answer with `fault`.
fn faulty_answer(fault: Fault, mut v: Value) -> Response {
    let json = |status: StatusCode, body: Body| {
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "cannot build"))
    };
    match fault {
        Fault::BadUtf8 | Fault::LoneSurrogate => {
            v["choices"][0]["message"]["content"] = json!("@@FAULT@@");
            let text = v.to_string();
            let mut bytes = text.into_bytes();
            let at = find(&bytes, b"@@FAULT@@").unwrap_or(0);
            let with: &[u8] = if fault == Fault::BadUtf8 {
                b"ok \xff"
            } else {
                b"ok \\ud800"
            };
            bytes.splice(at..at + 9, with.iter().copied());
            json(StatusCode::OK, Body::from(bytes))
        }
        Fault::UnknownCallField => {
            v["choices"][0]["message"]["tool_use"] =
                json!([{"name": "rm_rf", "input": {"path": "/"}}]);
            json(StatusCode::OK, Body::from(v.to_string()))
        }
        Fault::Legacy => {
            if let Some(Value::Object(m)) = v.pointer_mut("/choices/0/message")
                && let Some(Value::Array(calls)) = m.remove("tool_calls")
                && let Some(first) = calls.first()
            {
                m.insert(
                    "function_call".into(),
                    first.get("function").cloned().unwrap_or(Value::Null),
                );
                v["choices"][0]["finish_reason"] = json!("function_call");
            }
            json(StatusCode::OK, Body::from(v.to_string()))
        }
        Fault::Reset | Fault::Stall => {
            let text = Bytes::from(v.to_string());
            let half = text.slice(..text.len() / 2);
            let end = if fault == Fault::Reset { cut() } else { None };
            json(StatusCode::OK, body_of(vec![Some(Ok(half)), end]))
        }
        Fault::ErrorStall => json(
            StatusCode::INTERNAL_SERVER_ERROR,
            body_of(vec![
                Some(Ok(Bytes::from_static(b"{\"error\": {\"mess"))),
                None,
            ]),
        ),
        Fault::Pretty => json(
            StatusCode::OK,
            Body::from(serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())),
        ),
        Fault::EscapedKeys => json(
            StatusCode::OK,
            Body::from(v.to_string().replace("\"content\":", "\"cont\\u0065nt\":")),
        ),
        _ => json(StatusCode::OK, Body::from(v.to_string())),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Whether an SSE frame is the finish chunk.
fn is_finish(frame: &Bytes) -> bool {
    find(frame, b"\"finish_reason\":\"").is_some()
}

/// A streamed answer with `fault`.
fn faulty_stream(fault: Fault, frames: Vec<Bytes>) -> Response {
    let finish_at = frames.iter().position(is_finish).unwrap_or(frames.len());
    let mut parts: Vec<Option<Result<Bytes, std::io::Error>>> = Vec::new();
    let mut status = StatusCode::OK;
    match fault {
        Fault::Reset | Fault::Stall => {
            parts.extend(
                frames
                    .iter()
                    .take(finish_at.saturating_add(1))
                    .cloned()
                    .map(|f| Some(Ok(f))),
            );
            parts.push(if fault == Fault::Reset { cut() } else { None });
        }
        Fault::EndEarly => {
            parts.extend(frames.iter().take(finish_at).cloned().map(|f| Some(Ok(f))));
        }
        Fault::ErrorEvent
        | Fault::TypedErrorEvent
        | Fault::NotJson
        | Fault::BadUtf8
        | Fault::LoneSurrogate
        | Fault::UnknownCallField => {
            let bad: Bytes = match fault {
                Fault::ErrorEvent => Bytes::from_static(
                    b"data: {\"error\": {\"message\": \"mock fault: the engine died\", \"type\": \"internal_error\"}}\n\n",
                ),
                Fault::TypedErrorEvent => Bytes::from_static(
                    b"event: error\ndata: {\"message\": \"mock fault: overloaded\", \"code\": 503}\n\n",
                ),
                Fault::NotJson => Bytes::from_static(b"data: {not json\n\n"),
                Fault::BadUtf8 => Bytes::from_static(
                    b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"\xff\"}, \"finish_reason\": null}]}\n\n",
                ),
                Fault::LoneSurrogate => Bytes::from_static(
                    b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"\\ud800\"}, \"finish_reason\": null}]}\n\n",
                ),
                _ => Bytes::from_static(
                    b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"tool_use\": [{\"name\": \"rm_rf\"}]}, \"finish_reason\": null}]}\n\n",
                ),
            };
            for (i, f) in frames.into_iter().enumerate() {
                if i == finish_at {
                    parts.push(Some(Ok(bad.clone())));
                }
                parts.push(Some(Ok(f)));
            }
        }
        Fault::Legacy => {
            // Native deltas as a legacy function_call, streamed.
            for f in frames {
                let text = String::from_utf8_lossy(&f).into_owned();
                let Some(data) = text.strip_prefix("data: ") else {
                    parts.push(Some(Ok(f)));
                    continue;
                };
                let Ok(mut v) = serde_json::from_str::<Value>(data.trim()) else {
                    parts.push(Some(Ok(f)));
                    continue;
                };
                if let Some(Value::Object(d)) = v.pointer_mut("/choices/0/delta")
                    && let Some(Value::Array(calls)) = d.remove("tool_calls")
                {
                    if calls.first().and_then(|c| c.get("index")) != Some(&json!(0)) {
                        continue;
                    }
                    if let Some(func) = calls.first().and_then(|c| c.get("function")) {
                        d.insert("function_call".into(), func.clone());
                    }
                }
                if v.pointer("/choices/0/finish_reason")
                    .is_some_and(Value::is_string)
                {
                    v["choices"][0]["finish_reason"] = json!("function_call");
                }
                parts.push(Some(Ok(frame(&v))));
            }
        }
        Fault::ErrorStall => {
            status = StatusCode::INTERNAL_SERVER_ERROR;
            parts.push(Some(Ok(Bytes::from_static(b"{\"error\": {\"mess"))));
            parts.push(None);
        }
        Fault::Bom => {
            parts.push(Some(Ok(Bytes::from_static("\u{feff}".as_bytes()))));
            parts.extend(frames.into_iter().skip(2).map(|f| Some(Ok(f))));
        }
        // Pretty and EscapedKeys change non-streamed answers only; a
        // redirect is answered before any stream.
        Fault::WrongType
        | Fault::Huge
        | Fault::Pretty
        | Fault::EscapedKeys
        | Fault::Redirect
        | Fault::Coded => {
            parts.extend(frames.into_iter().map(|f| Some(Ok(f))));
        }
    }
    let content_type = if status.is_success() {
        "text/event-stream"
    } else {
        "application/json"
    };
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body_of(parts))
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "cannot build the stream"))
}

fn native_calls<'e>(options: &MockOptions, entry: &'e Entry) -> Option<&'e Vec<Value>> {
    if options.native {
        entry.tool_calls.as_ref().filter(|c| !c.is_empty())
    } else {
        None
    }
}

fn finish_reason(options: &MockOptions, entry: &Entry) -> String {
    entry.finish_reason.clone().unwrap_or_else(|| {
        if native_calls(options, entry).is_some() {
            "tool_calls".into()
        } else {
            "stop".into()
        }
    })
}

fn usage(entry: &Entry) -> Value {
    // A rough token count: the mock has no tokenizer.
    let completion = entry.output.len().div_ceil(4);
    json!({"prompt_tokens": 10, "completion_tokens": completion, "total_tokens": 10 + completion})
}

/// The non-streaming chat completion for `entry`.
fn answer(options: &MockOptions, entry: &Entry, id: &str, model: &str) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    let calls = native_calls(options, entry);
    let content = if calls.is_some() && entry.output.is_empty() {
        Value::Null
    } else {
        json!(entry.output)
    };
    message.insert("content".into(), content);
    if options.native
        && let Some(r) = &entry.reasoning
    {
        message.insert("reasoning_content".into(), json!(r));
    }
    if let Some(calls) = calls {
        message.insert("tool_calls".into(), json!(calls));
    }
    json!({
        "id": id,
        "object": "chat.completion",
        "created": 1_700_000_000u64,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(options, entry),
        }],
        "usage": usage(entry),
    })
}

/// Splits `text` into deltas of at most `size` characters, also ending a
/// delta after each opener-starting character when `split_openers`.
pub fn split_deltas(text: &str, size: usize, split_openers: bool) -> Vec<String> {
    let size = size.max(1);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut count = 0;
    for c in text.chars() {
        current.push(c);
        count += 1;
        let opener_start = split_openers && matches!(c, '<' | '[' | '{' | '|' | '｜');
        if count >= size || opener_start {
            out.push(std::mem::take(&mut current));
            count = 0;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn chunk(id: &str, model: &str, choices: Value) -> Value {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": 1_700_000_000u64,
        "model": model,
        "choices": choices,
    })
}

fn frame(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

/// Every SSE frame of the streamed answer, in order.
fn stream_frames(
    options: &MockOptions,
    entry: &Entry,
    id: &str,
    model: &str,
    include_usage: bool,
) -> Vec<Bytes> {
    let delta = |d: Value| {
        chunk(
            id,
            model,
            json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": null}]),
        )
    };
    let mut frames = vec![Bytes::from_static(b": toolgate mock upstream\n\n")];
    frames.push(frame(&delta(json!({"role": "assistant", "content": ""}))));
    if options.native
        && let Some(r) = &entry.reasoning
    {
        for piece in split_deltas(r, options.delta_chars, false) {
            frames.push(frame(&delta(json!({"reasoning_content": piece}))));
        }
    }
    let pieces = match &entry.chunks {
        Some(chunks) => chunks.clone(),
        None => split_deltas(&entry.output, options.delta_chars, options.split_openers),
    };
    for piece in pieces {
        frames.push(frame(&delta(json!({"content": piece}))));
    }
    if let Some(calls) = native_calls(options, entry) {
        for (i, call) in calls.iter().enumerate() {
            let name = call
                .pointer("/function/name")
                .cloned()
                .unwrap_or(Value::Null);
            let call_id = call
                .get("id")
                .cloned()
                .unwrap_or_else(|| json!(format!("call_mock{i}")));
            let args = match call.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            frames.push(frame(&delta(json!({"tool_calls": [{
                "index": i, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": ""}
            }]}))));
            for piece in split_deltas(&args, options.delta_chars.max(8), false) {
                frames.push(frame(&delta(json!({"tool_calls": [{
                    "index": i, "function": {"arguments": piece}
                }]}))));
            }
        }
    }
    frames.push(frame(&chunk(
        id,
        model,
        json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": finish_reason(options, entry)}]),
    )));
    if include_usage {
        let mut u = chunk(id, model, json!([]));
        u["usage"] = usage(entry);
        frames.push(frame(&u));
    }
    frames.push(Bytes::from_static(b"data: [DONE]\n\n"));
    frames
}

fn stream_answer(
    options: &MockOptions,
    entry: &Entry,
    id: &str,
    model: &str,
    include_usage: bool,
) -> Response {
    let frames = stream_frames(options, entry, id, model, include_usage);
    let delay = options.delta_delay;
    let stream = futures_util::stream::unfold(
        (frames.into_iter(), true),
        move |(mut frames, first)| async move {
            let next = frames.next()?;
            if !first && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Some((Ok::<Bytes, std::io::Error>(next), (frames, false)))
        },
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "cannot build the stream"))
}

/// Serves `mock` on `listen` until Ctrl-C or SIGTERM (the `toolgate
/// mock-upstream` command). `on_ready` is called with the bound address
/// (port 0 picks one).
///
/// `workers`: [`ServeOptions::workers`](crate::server::ServeOptions);
/// `None` (tokio's work-stealing pool) is how the proxy benchmarks serve it.
pub fn run_blocking(
    mock: Mock,
    listen: SocketAddr,
    workers: Option<usize>,
    on_ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    crate::server::run_blocking(
        listen,
        move || Arc::new(mock).router(),
        crate::server::ServeOptions {
            workers,
            ..Default::default()
        },
        on_ready,
    )
}

pub use crate::server::Background;

/// Starts `mock` on `127.0.0.1:0` in a background thread; stopped when the
/// returned [`Background`] is dropped. For tests of anything that talks to
/// an OpenAI-compatible server (the proxy, the runner).
pub fn spawn(mock: Mock) -> std::io::Result<Background> {
    crate::server::spawn_with(mock_serving(), move || Arc::new(mock).router())
}

/// How the mock is served: on tokio's work-stealing pool, as it was when
/// the proxy benchmarks were first taken, so that the upstream called
/// directly stays the same upstream across them (BENCHMARKS.md).
fn mock_serving() -> crate::server::ServeOptions {
    crate::server::ServeOptions {
        workers: None,
        ..Default::default()
    }
}

/// A credential as the request log shows it: its scheme, its length and
/// its last four characters (`Bearer [14 bytes, ends cret]`), enough for a
/// test to see that the proxy forwarded the client's own, never the
/// credential itself: `/mock/requests` answers anyone who asks, through a
/// proxy too (second hostile-client probe).
fn redacted_credential(value: &str) -> String {
    let (scheme, secret) = value.split_once(' ').unwrap_or(("", value));
    let tail: String = {
        let mut last: Vec<char> = secret.chars().rev().take(4).collect();
        last.reverse();
        last.into_iter().collect()
    };
    let shown = format!("[{} bytes, ends {tail}]", secret.len());
    if scheme.is_empty() {
        shown
    } else {
        format!("{scheme} {shown}")
    }
}
