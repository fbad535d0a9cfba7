//! Streamed chat completions (`"stream": true`).
//!
//! `observe` and `shadow` relay the upstream's bytes as they arrive, unchanged
//! but for comments that read as the proxy's own, dropped as enforce drops
//! them ([`OwnComments`]; `shadow` appends one SSE comment with the decision
//! after them), and read
//! a copy to record the exchange, up to `[DONE]`: as in enforce, `[DONE]`
//! ends the answer, and what follows it is relayed but not judged.
//!
//! `enforce` re-encodes the stream, choice by choice:
//!
//! - content deltas go through a [`Holdback`] of the profile's openers: text
//!   that cannot begin a tool call is forwarded as it arrives; from the first
//!   opener on, the rest is buffered;
//! - native `tool_calls` deltas are accumulated, never forwarded as they come;
//! - at the choice's `finish_reason` the batch pipeline decides ([`judge`])
//!   on the whole set (text calls, native `tool_calls`, legacy
//!   `function_call`); what it releases — the held text before the call markup as
//!   one content delta, each call as one complete `tool_calls` delta
//!   (`index`, `id`, `type`, name, full arguments), the finish chunk, and
//!   everything the upstream sends after the first finish — is held until
//!   the upstream's `[DONE]` (or a clean end after every choice finished);
//! - reasoning deltas, usage chunks and SSE comments pass through (while
//!   frames are held, one comment between two data frames: keep-alives
//!   would arrive in one burst), except comments that read as the proxy's
//!   own decision or usage lines, which the upstream cannot forge; the
//!   stream ends with `: toolgate decision=… label=…` and `data: [DONE]`.
//! - frames held before the first byte or after a finish are counted
//!   against the size limit (with a per-frame cost), so many tiny events
//!   cannot hold more memory than one large answer.
//!
//! Every event is checked ([`super::check::check_chunk`]): an event that is
//! not JSON or not UTF-8, an upstream `error` event (or `error:` field, or
//! a choice ending in a provider error), an unknown call-bearing
//! field, a choice that goes on after its `finish_reason`, more than
//! [`MAX_CHOICES`] choices, a reset, a stall past `--timeout`, the size limit or an end
//! before `[DONE]` makes the stream broken: nothing held is released, the
//! client gets `data: {"error": …}` and the connection is cut without
//! `[DONE]` (or a 502 when nothing was sent yet). In `observe`/`shadow` a
//! broken upstream stream is cut the same way (without the error event: the
//! relay is byte-faithful and may be mid-event), so it never ends cleanly.
//!
//! Nothing is sent to the client until the first forwardable text (or the
//! end): until then a rejected sampling artifact is re-rolled and a
//! multi-candidate fallback gets its re-emit request, invisibly; when that
//! happens at the end, the response headers carry the decision too. A client
//! that goes away cancels the upstream request (its connection is dropped).

use super::check::{self, MAX_CHOICES, clip};
use super::judge::{Judged, Retry, judge};
use super::record::{Attempt, Exchange};
use super::sse::{Comment, Item, OwnComments, Reader, own_comment};
use super::{
    Ctx, Mode, Proxy, error_response, insert_profile_headers, log_exchange, ms, reemit_request,
    response_headers, upstream_error,
};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};
use toolgate_core::answer::EXTRA_CONTENT;
use toolgate_core::delta::{CallSlots, Fragment, Placed, UNPLACEABLE};
use toolgate_core::import::choice_error;
use toolgate_validator::stream::Holdback;

type Frame = Result<Bytes, std::io::Error>;

/// The status and headers of the response, sent when the first byte is.
struct Head {
    status: StatusCode,
    headers: HeaderMap,
}

/// Starts the relay task (which holds one of the `--max-streams` permits
/// until it ends); answers once it commits to a response.
pub(crate) async fn handle(
    p: Arc<Proxy>,
    ctx: Ctx,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Response {
    if p.cfg.mode != Mode::Enforce {
        return faithful(p, ctx, permit).await;
    }
    let (head_tx, head_rx) = oneshot::channel::<Head>();
    let (tx, mut rx) = mpsc::channel::<Frame>(64);
    tokio::spawn(async move {
        relay(p, ctx, Out::new(head_tx, tx)).await;
        drop(permit);
    });
    match head_rx.await {
        Ok(head) => {
            let stream = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
            let mut resp = Response::new(Body::from_stream(stream));
            *resp.status_mut() = head.status;
            *resp.headers_mut() = head.headers;
            resp
        }
        Err(_) => error_response(StatusCode::INTERNAL_SERVER_ERROR, "the relay stopped"),
    }
}

/// The client side: frames queue until the first byte is committed.
struct Out {
    head: Option<oneshot::Sender<Head>>,
    tx: mpsc::Sender<Frame>,
    pending: Vec<Bytes>,
    gone: bool,
    first_byte: Option<Instant>,
}

impl Out {
    fn new(head: oneshot::Sender<Head>, tx: mpsc::Sender<Frame>) -> Out {
        Out {
            head: Some(head),
            tx,
            pending: Vec::new(),
            gone: false,
            first_byte: None,
        }
    }

    fn committed(&self) -> bool {
        self.head.is_none()
    }

    /// Sends the head and every queued frame.
    async fn commit(&mut self, head: Head) {
        if let Some(h) = self.head.take() {
            self.first_byte = Some(Instant::now());
            if h.send(head).is_err() {
                self.gone = true;
                return;
            }
            for frame in std::mem::take(&mut self.pending) {
                self.send_now(frame).await;
            }
        }
    }

    /// Queues `frame` before the commit, sends it after.
    async fn send(&mut self, frame: Bytes) {
        if self.committed() {
            self.send_now(frame).await;
        } else {
            self.pending.push(frame);
        }
    }

    async fn send_now(&mut self, frame: Bytes) {
        if !self.gone && self.tx.send(Ok(frame)).await.is_err() {
            self.gone = true;
        }
    }

    /// Cuts the response body: the client sees an incomplete stream, never
    /// a clean end.
    async fn abort(&mut self, why: &str) {
        if !self.gone {
            let _ = self
                .tx
                .send(Err(std::io::Error::other(why.to_string())))
                .await;
            self.gone = true;
        }
    }

    /// Answer the whole exchange with a 502 whose JSON body is `error`
    /// (only before anything was committed).
    async fn bad_gateway(&mut self, error: &Value) {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        self.commit(Head {
            status: StatusCode::BAD_GATEWAY,
            headers,
        })
        .await;
        self.send_now(Bytes::from(error.to_string())).await;
    }

    /// A broken upstream: before the first byte a 502; after it (when
    /// `event`), an SSE error event; then the body is cut without `[DONE]`.
    async fn fail(&mut self, why: &str, event: bool) {
        let error = json!({"error": {"message": format!("toolgate: {why}"), "type": "toolgate_proxy_error", "code": "upstream_stream_broken"}});
        if !self.committed() {
            self.pending.clear();
            self.bad_gateway(&error).await;
            return;
        }
        if event {
            self.send_now(data_frame(&error)).await;
            // Let the server write the event out before the cut: hyper may
            // drop what it buffered when the body fails. Bounded: ~120 ms.
            for _ in 0..50 {
                if self.gone || self.tx.capacity() == self.tx.max_capacity() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.abort(why).await;
    }
}

fn data_frame(v: &Value) -> Bytes {
    Bytes::from(format!("data: {v}\n\n"))
}

fn comment_frame(text: &str) -> Bytes {
    // One line: a newline would end the comment and start a field.
    let line: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    Bytes::from(format!(":{line}\n\n"))
}

fn sse_head(upstream: &HeaderMap, ctx: &Ctx, judged: Option<(&Judged, usize)>) -> Head {
    let mut headers = response_headers(upstream);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some((j, attempts)) = judged {
        j.insert_headers(&mut headers, attempts);
        insert_profile_headers(&mut headers, ctx);
    }
    Head {
        status: StatusCode::OK,
        headers,
    }
}

/// The most native calls one streamed choice may hold: the candidate cap
/// ([`toolgate_formats::DEFAULT_MAX_CANDIDATES`]), past which the `native`
/// mode folds the rest into one malformed candidate and the set is
/// rejected whatever it holds.
pub(crate) const MAX_STREAMED_CALLS: usize = toolgate_formats::DEFAULT_MAX_CANDIDATES;

/// A native call being streamed.
#[derive(Default, Debug)]
struct NativeAcc {
    /// A native call's number in its choice's [`CallSlots`], which hold
    /// its name.
    number: usize,
    id: Option<Value>,
    arguments: String,
    /// The call's vendor metadata (Gemini's thought signature), relayed as
    /// first sent; see [`toolgate_core::answer::EXTRA_CONTENT`].
    extra: Option<Value>,
}

/// One choice of the stream.
struct ChoiceAcc {
    hold: Holdback,
    chunks: Vec<String>,
    reasoning: Option<String>,
    /// Streamed calls by (`index`, how many calls before this one reused
    /// that index): Ollama and Gemini's OpenAI shims stream parallel calls
    /// each at `index` 0 under its own `id`.
    native: BTreeMap<(u64, u32), NativeAcc>,
    /// Which call of `native` each fragment belongs to.
    slots: CallSlots,
    /// A legacy `function_call` being streamed: its arguments, and its
    /// name in `legacy_slots` (call 0, [`Fragment::legacy`]).
    legacy: Option<NativeAcc>,
    legacy_slots: CallSlots,
    finish: Option<String>,
    done: bool,
    judged: Option<Judged>,
}

impl ChoiceAcc {
    fn new(hold: Holdback) -> ChoiceAcc {
        ChoiceAcc {
            hold,
            chunks: Vec::new(),
            reasoning: None,
            native: BTreeMap::new(),
            slots: CallSlots::default(),
            legacy: None,
            legacy_slots: CallSlots::default(),
            finish: None,
            done: false,
            judged: None,
        }
    }

    /// The streamed `tool_calls`, assembled.
    fn tool_calls(&self) -> Option<Vec<Value>> {
        if self.native.is_empty() {
            return None;
        }
        Some(
            self.native
                .iter()
                .map(|(&(i, reuse), n)| {
                    let id = match reuse {
                        0 => format!("call_upstream{i}"),
                        r => format!("call_upstream{i}_{r}"),
                    };
                    let mut call = json!({
                        "id": n.id.clone().unwrap_or_else(|| json!(id)),
                        "type": "function",
                        "function": {"name": self.slots.name(n.number), "arguments": n.arguments},
                    });
                    if let (Some(extra), Value::Object(c)) = (&n.extra, &mut call) {
                        c.insert(EXTRA_CONTENT.into(), extra.clone());
                    }
                    call
                })
                .collect(),
        )
    }

    /// The streamed legacy `function_call`, assembled.
    fn function_call(&self) -> Option<Value> {
        self.legacy
            .as_ref()
            .map(|n| json!({"name": self.legacy_slots.name(0), "arguments": n.arguments}))
    }

    /// Every native call as a transcript keeps them (`function_call` last).
    fn native_calls(&self) -> Option<Vec<Value>> {
        let mut calls = self.tool_calls();
        if let Some(f) = self.function_call() {
            calls
                .get_or_insert_with(Vec::new)
                .push(super::judge::legacy_as_call(&f));
        }
        calls
    }
}

/// Whether a streamed `delta` adds to its choice: text, reasoning, a call
/// or a legacy call (a role or an empty string adds nothing).
fn says_something(delta: &Map<String, Value>) -> bool {
    delta.iter().any(|(k, v)| match k.as_str() {
        "content" | "reasoning_content" | "reasoning" => v.as_str().is_some_and(|t| !t.is_empty()),
        "tool_calls" => v.as_array().is_some_and(|a| !a.is_empty()),
        "function_call" => !v.is_null(),
        _ => false,
    })
}

/// Everything read from one upstream stream.
struct StreamState {
    choices: BTreeMap<u64, ChoiceAcc>,
    /// The first chunk's top-level fields (id, object, created, model, …).
    template: Option<Map<String, Value>>,
    bytes: usize,
    proto: Holdback,
    /// The upstream's usage chunk.
    usage: Option<Value>,
}

impl StreamState {
    fn new(proto: Holdback) -> StreamState {
        StreamState {
            choices: BTreeMap::new(),
            template: None,
            bytes: 0,
            proto,
            usage: None,
        }
    }

    /// The judgment that speaks for the whole answer
    /// ([`super::judge::speaks_for`]): its headers, its decision comment,
    /// the log line, the metrics and the record all say this one.
    fn speaks(&self) -> Option<&Judged> {
        super::judge::speaks_for(self.choices.values().filter_map(|a| a.judged.as_ref()))
    }

    /// [`StreamState::speaks`], moved out of its choice.
    fn take_speaking(&mut self) -> Option<Judged> {
        let speaks = self.speaks()?;
        let index = self
            .choices
            .iter()
            .find(|(_, a)| a.judged.as_ref().is_some_and(|j| std::ptr::eq(j, speaks)))
            .map(|(i, _)| *i)?;
        self.choices.get_mut(&index)?.judged.take()
    }

    fn choice(&mut self, index: u64) -> &mut ChoiceAcc {
        let proto = &self.proto;
        self.choices
            .entry(index)
            .or_insert_with(|| ChoiceAcc::new(proto.clone()))
    }

    /// Reads one chunk into the accumulators. With `edit`, removes what
    /// `enforce` must hold (content beyond the forwardable text, native
    /// calls, finish reasons) and returns the indices whose finish arrived.
    /// Refuses (the stream is broken there, in every mode) a chunk that
    /// names more than [`MAX_CHOICES`] choices in all, and a choice that
    /// goes on after its `finish_reason`: what it would add was never
    /// judged with the rest of its set.
    fn absorb(&mut self, chunk: &mut Value, edit: bool) -> Result<Vec<u64>, String> {
        let mut finished = Vec::new();
        // The template is a chunk that carries choices: Azure's first
        // chunk (`prompt_filter_results`, `choices: []`) has an empty `id`,
        // `model` and `object`, and clients drop a chunk whose `object` is
        // not `chat.completion.chunk`.
        if self.template.is_none()
            && let Value::Object(m) = &*chunk
            && m.get("choices")
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty())
        {
            let mut t = m.clone();
            t.remove("choices");
            t.remove("usage");
            self.template = Some(t);
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(Value::Array(choices)) = chunk.get_mut("choices") else {
            return Ok(finished);
        };
        for (pos, choice) in choices.iter_mut().enumerate() {
            // A choice that ended in a provider error (`finish_reason`
            // `error` or `abort`, an `error` on the choice: OpenRouter,
            // vLLM, SGLang) holds what arrived before the failure, not the
            // model's answer: judged, a call written before an abort ran
            // and a missing one was the model's `no_call`. The stream is
            // broken there, in every mode, as the importer and `toolgate
            // run` refuse such a choice ([`choice_error`]).
            if let Some(why) = choice_error(choice) {
                let index = choice
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(pos as u64);
                return Err(format!("the upstream's choice {index} {why}"));
            }
            let Value::Object(choice) = choice else {
                continue;
            };
            // A choice without `index` is the one at its place in the
            // chunk, as the importer and the guardrail read it: two choices
            // of one chunk are never one choice, whose halves could make a
            // call neither holds (a null or non-integer index is refused by
            // the shape check).
            let index = choice
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(pos as u64);
            if self.choices.len() >= MAX_CHOICES && !self.choices.contains_key(&index) {
                return Err(format!(
                    "unchecked: the stream has more than {MAX_CHOICES} choices"
                ));
            }
            let acc = self.choice(index);
            if acc.finish.is_some()
                && choice
                    .get("delta")
                    .and_then(Value::as_object)
                    .is_some_and(says_something)
            {
                // A repeated finish that adds nothing (NVIDIA Dynamo and
                // older SGLang send `tool_calls` then an empty `stop`)
                // is no more than that; the first finish stands.
                return Err(format!(
                    "unchecked: choice {index} went on after its finish_reason"
                ));
            }
            // Text held back: its tokens must not reach the client through
            // the choice's `logprobs` either, nor through a copy of the
            // content beside the delta (Together's chunks repeat each
            // delta's content as the choice's `text`): the copy says what
            // is forwarded.
            let mut withheld = false;
            let mut forwarded: Option<String> = None;
            if let Some(Value::Object(delta)) = choice.get_mut("delta") {
                if let Some(Value::String(text)) = delta.get("content") {
                    let text = text.clone();
                    acc.chunks.push(text.clone());
                    let forward = acc.hold.push(&text).to_string();
                    withheld = forward.len() < text.len();
                    if edit && withheld {
                        forwarded = Some(forward.clone());
                    }
                    if edit {
                        if forward.is_empty() {
                            delta.remove("content");
                        } else {
                            delta.insert("content".into(), Value::String(forward));
                        }
                    }
                }
                // `reasoning_content`, else `reasoning`, as a non-streamed
                // message is read: a server that sends both (the same
                // text under two names) is not read twice.
                let reasoning = match delta.get("reasoning_content") {
                    Some(Value::String(r)) => Some(r),
                    _ => match delta.get("reasoning") {
                        Some(Value::String(r)) => Some(r),
                        _ => None,
                    },
                };
                if let Some(r) = reasoning {
                    acc.reasoning.get_or_insert_with(String::new).push_str(r);
                }
                if let Some(Value::Array(calls)) = delta.get("tool_calls") {
                    for (pos, call) in calls.iter().enumerate() {
                        // An empty id or name is none.
                        let id = call
                            .get("id")
                            .and_then(Value::as_str)
                            .filter(|id| !id.is_empty());
                        let fragment = Fragment {
                            index: call.get("index").and_then(Value::as_u64),
                            index_filled: false,
                            position: pos as u64,
                            id,
                            name: call
                                .pointer("/function/name")
                                .and_then(Value::as_str)
                                .filter(|n| !n.is_empty()),
                            arguments: call.pointer("/function/arguments").and_then(Value::as_str),
                        };
                        // The call it belongs to, as the importer reads it
                        // ([`CallSlots`]): by id, else the last call at its
                        // index (position without one), or the next call
                        // there (Ollama and Gemini's OpenAI shims stream
                        // parallel calls each at index 0, or without index,
                        // each whole in one delta), never a merge into one
                        // call named `get_weatherget_weather` with `{…}{…}`
                        // arguments. A call past the candidate cap: the set
                        // cannot execute (a capped mode fails its `parse`
                        // gate), and each call held costs hundreds of times
                        // its bytes once judged (200,000 `{"index": N}` in
                        // 3.4 MB of stream took 736 MB): the stream breaks
                        // there, as it does on a delta that cannot be placed.
                        let (key, number) = match acc.slots.place(&fragment, MAX_STREAMED_CALLS) {
                            Placed::Call { n, .. } => (acc.slots.key(n), n),
                            Placed::Capped => {
                                return Err(format!(
                                    "unchecked: choice {index} streams more than \
                                     {MAX_STREAMED_CALLS} tool calls"
                                ));
                            }
                            Placed::Unplaceable => {
                                return Err(format!("unchecked: choice {index}: {UNPLACEABLE}"));
                            }
                        };
                        let n = acc.native.entry(key).or_default();
                        n.number = number;
                        // The first id stands (as the importer reads it):
                        // a later fragment's, or an empty one, would break
                        // matching the tool result to its call.
                        if n.id.is_none()
                            && let Some(id) = id
                        {
                            n.id = Some(Value::String(id.to_string()));
                        }
                        if n.extra.is_none()
                            && let Some(extra) = call.get(EXTRA_CONTENT).filter(|v| !v.is_null())
                        {
                            n.extra = Some(extra.clone());
                        }
                        if let Some(a) = call.pointer("/function/arguments").and_then(Value::as_str)
                        {
                            n.arguments.push_str(a);
                        }
                    }
                    if edit {
                        delta.remove("tool_calls");
                    }
                }
                if let Some(Value::Object(f)) = delta.get("function_call") {
                    let n = acc.legacy.get_or_insert_with(NativeAcc::default);
                    let arguments = f.get("arguments").and_then(Value::as_str);
                    // The one legacy call, named by the rule of every
                    // streamed call (MiniMax through NVIDIA NIM repeats the
                    // name in every fragment: read once, as the batch
                    // answer's name). At index 0 without an id every delta
                    // is call 0: never capped nor unplaceable (were it, the
                    // stream breaks as for a native call).
                    let fragment =
                        Fragment::legacy(f.get("name").and_then(Value::as_str), arguments);
                    if !matches!(
                        acc.legacy_slots.place(&fragment, 1),
                        Placed::Call { n: 0, .. }
                    ) {
                        return Err(format!("unchecked: choice {index}: {UNPLACEABLE}"));
                    }
                    if let Some(a) = arguments {
                        n.arguments.push_str(a);
                    }
                }
                if edit {
                    delta.remove("function_call");
                }
            }
            if edit && withheld && choice.get("logprobs").is_some_and(|l| !l.is_null()) {
                choice.insert("logprobs".into(), Value::Null);
            }
            if let Some(forwarded) = forwarded
                && choice.get("text").is_some_and(Value::is_string)
            {
                choice.insert("text".into(), Value::String(forwarded));
            }
            if let Some(Value::String(f)) = choice.get("finish_reason") {
                // `""` (SGLang 0.4.3, Ollama in 2024) and `"null"`
                // (KoboldCpp) on every chunk mean no finish yet.
                let finish = !f.is_empty() && f != "null";
                if finish && acc.finish.is_none() {
                    acc.finish = Some(f.clone());
                    if !acc.done {
                        finished.push(index);
                    }
                }
                if edit {
                    choice.insert("finish_reason".into(), Value::Null);
                }
            }
        }
        Ok(finished)
    }

    /// A chunk for choice `index` built on the template.
    fn chunk(&self, index: u64, delta: Value, finish: Value) -> Value {
        let mut c = self.template.clone().unwrap_or_default();
        c.insert(
            "choices".into(),
            json!([{"index": index, "delta": delta, "logprobs": null, "finish_reason": finish}]),
        );
        Value::Object(c)
    }

    /// Whether an edited chunk still says something: usage, a top-level
    /// field beside the chunk's own (Azure's `prompt_filter_results`), or
    /// a choice with a delta, a finish, or a field of its own (Azure's
    /// `content_filter_results`/`content_filter_offsets`).
    fn worth_sending(chunk: &Value) -> bool {
        if chunk.get("usage").is_some_and(|u| !u.is_null()) {
            return true;
        }
        const OWN: [&str; 7] = [
            "id",
            "object",
            "created",
            "model",
            "system_fingerprint",
            "service_tier",
            "choices",
        ];
        if chunk.as_object().is_some_and(|m| {
            m.iter()
                .any(|(k, v)| !v.is_null() && !OWN.contains(&k.as_str()))
        }) {
            return true;
        }
        match chunk.get("choices") {
            Some(Value::Array(choices)) => choices.iter().any(|c| {
                c.get("delta")
                    .and_then(Value::as_object)
                    .is_some_and(|d| !d.is_empty())
                    || c.get("finish_reason").is_some_and(|f| !f.is_null())
                    || c.as_object().is_some_and(|m| {
                        m.iter().any(|(k, v)| {
                            !v.is_null()
                                && !matches!(
                                    k.as_str(),
                                    "index" | "delta" | "finish_reason" | "logprobs"
                                )
                        })
                    })
            }),
            _ => true,
        }
    }

    /// Whether forwarded content or reasoning is in this edited chunk (it
    /// commits). Reasoning is never held: a server whose reasoning parser
    /// is on streams minutes of it before any content, and the client (and
    /// any gateway before it with a first-byte timeout) got nothing, not
    /// even the head, until the first content or the end.
    fn carries_content(chunk: &Value) -> bool {
        chunk
            .get("choices")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    [
                        "/delta/content",
                        "/delta/reasoning_content",
                        "/delta/reasoning",
                    ]
                    .iter()
                    .any(|p| {
                        c.pointer(p)
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty())
                    })
                })
            })
    }
}

/// How one upstream stream ended.
enum End {
    /// `[DONE]`, or a clean end after every choice finished.
    Done,
    /// The client went away.
    ClientGone,
    /// The upstream failed mid-stream, or sent what cannot be checked.
    Failed(String),
    /// Ask again (enforce, before the first byte).
    Again(Retry),
}

async fn relay(p: Arc<Proxy>, ctx: Ctx, mut out: Out) {
    let mode = p.cfg.mode;
    let model = ctx.model.clone();
    let model = model.as_deref();
    let mut ex = Unfinished {
        p: Arc::clone(&p),
        ex: Some(ctx.exchange(mode, true)),
        started: ctx.started,
        deferred: ctx.deferred(),
    };
    // `None`: the client's request; a re-emit sends another.
    let mut request: Option<Arc<Value>> = None;
    let mut body = ctx.body.clone();
    let mut rerolls = 0;
    let mut reemitted = false;
    // A text not judged for calls ([`Ctx::text_may_call`]) is held for
    // nothing: it streams, logprobs and all.
    let proto = if ctx.text_may_call() {
        Holdback::for_profile_in(&ctx.engine.profile, &ctx.engine.extractors)
    } else {
        Holdback::new(Some(Vec::new()))
    };
    let url = p.chat_url(ctx.query.as_deref());
    let mut status = 200u16;
    loop {
        let t0 = Instant::now();
        let mut attempt = ctx.attempt(request.as_ref());
        let sent = tokio::time::timeout(
            p.cfg.timeout,
            p.client
                .post(&url)
                .headers(ctx.headers.clone())
                .header(header::CONTENT_TYPE, "application/json")
                .body(body.clone())
                .send(),
        )
        .await;
        let resp = match sent {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                fail(
                    &p,
                    &mut out,
                    ex.get(),
                    attempt,
                    (model, ctx.secrets()),
                    upstream_error(&e),
                )
                .await;
                status = 502;
                break;
            }
            Err(_) => {
                fail(
                    &p,
                    &mut out,
                    ex.get(),
                    attempt,
                    (model, ctx.secrets()),
                    "timeout".into(),
                )
                .await;
                status = 502;
                break;
            }
        };
        attempt.status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let is_sse = check::is_sse_type(content_type.as_deref());
        // What enforce does not relay: an answer it cannot check (coded, or
        // not an event stream), a redirect or a status neither a success nor
        // an error (`not_relayed`).
        let refused = if mode != Mode::Enforce {
            None
        } else if resp.status().is_success() && super::content_coded(resp.headers()) {
            Some((true, super::coded_why(resp.headers())))
        } else if resp.status().is_success() && !is_sse {
            Some((
                true,
                format!(
                    "the upstream answered a streamed request with {}, not an event stream",
                    content_type
                        .map_or("no content type".into(), |c| format!("`{}`", clip(&c, 80)))
                ),
            ))
        } else {
            super::not_relayed(resp.status()).map(|why| (false, why))
        };
        if let Some((unchecked, why)) = refused {
            if unchecked {
                p.metrics.unchecked(model);
                attempt.error = Some(format!("unchecked: {why}"));
            } else {
                p.metrics.upstream_error(model);
                attempt.error = Some(why.clone());
            }
            attempt.served = true;
            ex.get().attempts.push(attempt);
            out.fail(&why, true).await;
            status = 502;
            break;
        }
        if !resp.status().is_success() || !is_sse {
            // An error answer (or, outside enforce, anything that is not a
            // stream): relayed as it is, each read within --timeout.
            if !resp.status().is_success() {
                p.metrics.upstream_error(model);
            }
            status = resp.status().as_u16();
            attempt.error = Some(format!(
                "upstream status {}, not an event stream",
                resp.status()
            ));
            let mut headers = response_headers(resp.headers());
            if let Some(ct) = resp.headers().get(header::CONTENT_TYPE) {
                headers.insert(header::CONTENT_TYPE, ct.clone());
            }
            let code = resp.status();
            out.commit(Head {
                status: code,
                headers,
            })
            .await;
            let mut s = resp.bytes_stream();
            let mut relayed = 0usize;
            loop {
                match next_bytes(&p, &out, &mut s).await {
                    Ok(Some(b)) => {
                        relayed += b.len();
                        if relayed > p.cfg.max_response {
                            attempt.error = Some("the upstream answer is too large".into());
                            out.abort("too large").await;
                            break;
                        }
                        out.send_now(b).await;
                        if out.gone {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(End::Failed(e)) => {
                        attempt.error = Some(e);
                        out.abort("the upstream failed").await;
                        break;
                    }
                    Err(_) => {
                        ex.get().client_disconnected = true;
                        break;
                    }
                }
            }
            attempt.served = true;
            ex.get().attempts.push(attempt);
            break;
        }
        let upstream_headers = resp.headers().clone();
        let mut state = StreamState::new(proto.clone());
        // Only `enforce` streams through this relay ([`faithful`] serves
        // observe and shadow).
        let usage_before: Vec<Value> = ex
            .get()
            .attempts
            .iter()
            .filter_map(|a| a.usage.clone())
            .collect();
        let end = enforce_stream(
            &p,
            &ctx,
            &mut out,
            resp,
            &mut state,
            &upstream_headers,
            (ex.get().attempts.len() + 1, &usage_before),
            rerolls,
            reemitted,
        )
        .await;
        attempt.upstream_ms = ms(t0);
        p.metrics
            .upstream_latency(model, t0.elapsed().as_secs_f64());
        fill_attempt(&mut attempt, &mut state, &ctx);
        let mut broken = None;
        match end {
            End::Again(Retry::Reroll) => {
                out.pending.clear();
                rerolls += 1;
                attempt.retry = Some("reroll");
                p.metrics.retry(model, "reroll");
                ex.get().attempts.push(attempt);
                continue;
            }
            End::Again(Retry::Reemit(msg)) => {
                out.pending.clear();
                reemitted = true;
                attempt.retry = Some("reemit");
                p.metrics.retry(model, "reemit");
                let sent = reemit_request(
                    request.as_ref().unwrap_or(ctx.request()),
                    &attempt.output,
                    &msg,
                );
                body = Bytes::from(serde_json::to_vec(&sent).unwrap_or_default());
                request = Some(Arc::new(sent));
                ex.get().attempts.push(attempt);
                continue;
            }
            End::Again(Retry::None) | End::Done => {}
            End::ClientGone => ex.get().client_disconnected = true,
            End::Failed(e) => {
                if e.starts_with("unchecked") {
                    p.metrics.unchecked(model);
                } else {
                    p.metrics.upstream_error(model);
                }
                tracing::warn!(
                    model = model.unwrap_or(""),
                    error = %crate::secrets::scrub(e.clone(), ctx.secrets()),
                    "upstream stream broken"
                );
                if !out.committed() {
                    status = 502;
                }
                out.fail(&e, mode == Mode::Enforce).await;
                attempt.error = Some(e.clone());
                broken = Some(e);
            }
        }
        match &broken {
            Some(e) => reject_broken(&p, model, &mut attempt, e),
            None => {
                if let Some(j) = state.speaks() {
                    if mode == Mode::Enforce && j.native.as_ref().is_some_and(|n| !n.passes()) {
                        p.metrics.native_rejected(model);
                    }
                    p.metrics
                        .decision(model, j.decision(), j.label().as_str(), j.gate());
                }
            }
        }
        attempt.served = true;
        ex.get().attempts.push(attempt);
        if !out.committed() {
            out.commit(sse_head(&upstream_headers, &ctx, None)).await;
        }
        break;
    }
    let mut ex = ex.finish();
    ex.total_ms = ms(ctx.started);
    ex.first_byte_ms = out
        .first_byte
        .map(|t| (t - ctx.started).as_secs_f64() * 1000.0);
    p.metrics.request(model, true, status);
    log_exchange(&ex, status);
    p.record(ex, ctx.deferred());
}

/// A streamed exchange in progress: recorded when its relay is dropped
/// unfinished (the runtime stopping at the end of the grace), so that no
/// exchange goes unrecorded.
struct Unfinished {
    p: Arc<Proxy>,
    ex: Option<Exchange>,
    started: Instant,
    /// What the record thread fills in if the exchange ends here.
    deferred: Option<super::Deferred>,
}

impl Unfinished {
    fn get(&mut self) -> &mut Exchange {
        // Taken only by `finish` and `drop`, which end its use.
        self.ex.get_or_insert_with(Exchange::default)
    }

    fn finish(mut self) -> Exchange {
        self.ex.take().unwrap_or_default()
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(mut ex) = self.ex.take() {
            ex.attempts.push(Attempt {
                error: Some("stopped: the proxy shut down with the stream in flight".into()),
                served: true,
                ..Attempt::default()
            });
            ex.total_ms = ms(self.started);
            log_exchange(&ex, 0);
            self.p.record(ex, self.deferred.take());
        }
    }
}

/// The upstream could not be asked: before the first byte, a 502.
async fn fail(
    p: &Proxy,
    out: &mut Out,
    ex: &mut Exchange,
    mut attempt: Attempt,
    (model, secrets): (Option<&str>, &[String]),
    e: String,
) {
    p.metrics.upstream_error(model);
    tracing::warn!(
        model = model.unwrap_or(""),
        error = %crate::secrets::scrub(e.clone(), secrets),
        "upstream failed"
    );
    attempt.error = Some(e.clone());
    attempt.served = true;
    ex.attempts.push(attempt);
    if out.committed() {
        out.abort("the upstream failed").await;
        return;
    }
    let body = json!({"error": {"message": format!("upstream: {e}"), "type": "toolgate_proxy_error", "code": null}});
    out.bad_gateway(&body).await;
}

/// Nothing of a broken stream executes: the attempt's record says so and
/// the reject is counted.
fn reject_broken(p: &Proxy, model: Option<&str>, attempt: &mut Attempt, e: &str) {
    if let Some(j) = &mut attempt.judgment {
        j.decision = "reject";
        j.gate = Some("stream");
        j.reason = Some(format!("broken stream: {e}"));
    }
    if let Some(v) = &mut attempt.verdict {
        v.decision = "reject";
        v.gate = Some("stream");
    }
    p.metrics
        .decision(model, "reject", "broken_stream", Some("stream"));
}

fn judge_choice(ctx: &Ctx, acc: &ChoiceAcc) -> Judged {
    let native = acc.tool_calls();
    let legacy = acc.function_call();
    judge(
        &ctx.engine,
        &ctx.tools,
        if ctx.text_may_call() {
            acc.hold.text()
        } else {
            ""
        },
        acc.reasoning.as_deref(),
        native.as_deref(),
        legacy.as_ref(),
        acc.finish.as_deref(),
    )
    .under_terms_of(|| ctx.one_call_only())
}

fn fill_attempt(attempt: &mut Attempt, state: &mut StreamState, ctx: &Ctx) {
    attempt.usage = state.usage.take();
    if let Some(acc) = state.choices.values_mut().next() {
        attempt.output = acc.hold.text().to_string();
        // Moved, not copied: nothing reads the deltas after this.
        attempt.chunks = Some(std::mem::take(&mut acc.chunks));
        attempt.reasoning = acc.reasoning.clone();
        attempt.tool_calls = acc.native_calls();
        attempt.finish_reason = acc.finish.clone();
    } else {
        attempt.chunks = Some(Vec::new());
    }
    // Judged once: `verdict` is set whenever the attempt is (the judgment
    // only when the exchange is kept).
    if attempt.verdict.is_none() {
        ctx.set_judged(attempt, state.speaks());
    }
    if state.choices.len() > 1
        && let Some(j) = attempt.judgment.as_mut()
    {
        j.choices = Some(choices_entries(state));
    }
}

/// Every choice of a stream of several, for the record: each one's index
/// and decision (`null` when it was not judged: the stream broke first)
/// and, beside the lowest index (whose text and calls are the transcript's
/// own), its text, native calls and finish reason.
fn choices_entries(state: &StreamState) -> Value {
    let entries = state.choices.iter().map(|(index, acc)| {
        let mut m = match &acc.judged {
            Some(j) => super::judge::choice_entry(*index, j),
            None => {
                let mut m = Map::new();
                m.insert("index".into(), json!(index));
                m.insert("decision".into(), Value::Null);
                m
            }
        };
        if Some(index) != state.choices.keys().next() {
            m.insert("output".into(), json!(acc.hold.text()));
            m.insert("tool_calls".into(), json!(acc.native_calls()));
            m.insert("finish_reason".into(), json!(acc.finish));
        }
        Value::Object(m)
    });
    Value::Array(entries.collect())
}

fn decision_comment(j: &Judged) -> Bytes {
    let mut text = format!(
        " toolgate decision={} label={}",
        j.decision(),
        j.label().as_str()
    );
    if let Some(g) = j.gate() {
        text.push_str(&format!(" gate={g}"));
    }
    comment_frame(&super::judge::header_safe(&text))
}

/// Reads the next piece of the upstream body, watching the client.
async fn next_bytes<S>(p: &Proxy, out: &Out, s: &mut S) -> Result<Option<Bytes>, End>
where
    S: futures_util::Stream<Item = Result<Bytes, reqwest::Error>> + Unpin,
{
    tokio::select! {
        _ = out.tx.closed() => Err(End::ClientGone),
        next = tokio::time::timeout(p.cfg.timeout, s.next()) => match next {
            Err(_) => Err(End::Failed("timeout: the upstream stream stalled".into())),
            Ok(None) => Ok(None),
            Ok(Some(Err(e))) => Err(End::Failed(upstream_error(&e))),
            Ok(Some(Ok(b))) => Ok(Some(b)),
        }
    }
}

/// What one queued frame costs beside its bytes (the `Bytes` handle, its
/// slot and the allocation's own overhead), counted so that many tiny
/// events cannot hold more memory than the size limit allows.
const FRAME_COST: usize = 64;

/// Sends `frame` now, or holds it when a choice has finished (what follows a
/// finish waits for the upstream's `[DONE]`) or nothing was sent yet.
/// Returns what it holds, in bytes ([`FRAME_COST`] each beside its own).
async fn emit(out: &mut Out, deferred: &mut Vec<Bytes>, hold: bool, frame: Bytes) -> usize {
    let held = frame.len() + FRAME_COST;
    if hold {
        deferred.push(frame);
        held
    } else if out.committed() {
        out.send(frame).await;
        0
    } else {
        out.send(frame).await;
        held
    }
}

/// `enforce`: check, hold, judge at each choice's end, re-encode; release
/// at `[DONE]`.
#[allow(clippy::too_many_arguments)]
async fn enforce_stream(
    p: &Proxy,
    ctx: &Ctx,
    out: &mut Out,
    resp: reqwest::Response,
    state: &mut StreamState,
    upstream_headers: &HeaderMap,
    (attempt_no, usage_before): (usize, &[Value]),
    rerolls: u32,
    reemitted: bool,
) -> End {
    let mut s = resp.bytes_stream();
    let mut reader = Reader::default();
    let mut may_retry = true;
    let mut deferred: Vec<Bytes> = Vec::new();
    let mut hold = false;
    // The bytes of the frames held (before the first byte, or after a
    // finish): bounded by the size limit, as the stream itself is.
    let mut held = 0usize;
    // A comment is held since the last data frame.
    let mut comment_held = false;
    loop {
        let (items, eof) = match next_bytes(p, out, &mut s).await {
            Ok(Some(b)) => {
                state.bytes += b.len();
                if state.bytes > p.cfg.max_response {
                    return End::Failed("the upstream stream is larger than the size limit".into());
                }
                (reader.push(&b), false)
            }
            Ok(None) => (reader.finish(), true),
            Err(end) => return end,
        };
        let items = match items {
            Ok(items) => items,
            Err(e) => return End::Failed(format!("unchecked: {}", e.0)),
        };
        // `[DONE]` ends the body: what follows it in the same read is not read.
        let mut done = false;
        for item in items {
            match item {
                // Comments pass through, but while frames are held only
                // one between two data frames (a run of keep-alives would
                // reach the client in one burst, and many tiny comments
                // would only take memory), and never one that reads as
                // the proxy's own decision or usage line: the upstream
                // cannot forge them.
                Item::Comment(c) => {
                    let forged = own_comment(c.as_bytes()) == Comment::Own;
                    let queued = hold || !out.committed();
                    let repeat = queued && comment_held;
                    if !forged && !repeat {
                        comment_held = queued;
                        held += emit(out, &mut deferred, hold, comment_frame(&c)).await;
                    }
                }
                Item::Data(d) if d.trim() == "[DONE]" => {
                    done = true;
                    break;
                }
                Item::Data(d) => {
                    let mut chunk = match read_chunk(&d, p.cfg.max_response_nodes) {
                        Ok(v) => v,
                        Err(why) => return End::Failed(why),
                    };
                    let finished = match state.absorb(&mut chunk, true) {
                        Ok(finished) => finished,
                        Err(why) => return End::Failed(why),
                    };
                    if StreamState::worth_sending(&chunk) {
                        if !hold && StreamState::carries_content(&chunk) && !out.committed() {
                            out.commit(sse_head(upstream_headers, ctx, None)).await;
                            // What was held before the first byte is sent.
                            held = 0;
                        }
                        held += emit(out, &mut deferred, hold, data_frame(&chunk)).await;
                        comment_held = false;
                        if held > p.cfg.max_response {
                            return End::Failed(
                                "the upstream stream holds more than the size limit before its decision"
                                    .into(),
                            );
                        }
                    }
                    for index in finished {
                        let single = state.choices.len() == 1;
                        match finish_choice(
                            p,
                            ctx,
                            out,
                            state,
                            index,
                            single && may_retry,
                            rerolls,
                            reemitted,
                        ) {
                            Err(retry) => {
                                if ctx
                                    .request()
                                    .pointer("/stream_options/include_usage")
                                    .and_then(Value::as_bool)
                                    == Some(true)
                                {
                                    drain_usage(p, out, &mut s, &mut reader, state).await;
                                }
                                return End::Again(retry);
                            }
                            Ok(frames) => deferred.extend(frames),
                        }
                        hold = true;
                        may_retry = false;
                    }
                    if out.gone {
                        return End::ClientGone;
                    }
                }
            }
        }
        if !done && eof {
            let finished = !state.choices.is_empty() && state.choices.values().all(|a| a.done);
            if !finished {
                return End::Failed("the upstream stream ended before [DONE]".into());
            }
        }
        if done || eof {
            // A lone choice that ended without its finish is judged here,
            // still before the first byte when nothing was forwarded: a
            // sampling artifact is re-rolled as at a finish.
            if may_retry
                && state.choices.len() == 1
                && let Some((&index, acc)) = state.choices.iter().next()
                && !acc.done
            {
                match finish_choice(p, ctx, out, state, index, true, rerolls, reemitted) {
                    Err(retry) => return End::Again(retry),
                    Ok(frames) => deferred.extend(frames),
                }
            }
            finish_all(
                ctx,
                out,
                state,
                upstream_headers,
                (attempt_no, usage_before),
                deferred,
            )
            .await;
            return End::Done;
        }
    }
}

/// An event's data as a chunk, or why the stream breaks there: not JSON,
/// an error object (the upstream failed mid-stream), or not a chunk's
/// shape (`check::check_chunk`). One rule for enforce and for the
/// faithful relay of observe and shadow.
fn read_chunk(data: &str, max_nodes: usize) -> Result<Value, String> {
    // A key given twice is refused, as in a non-streamed answer: the
    // relayed bytes hold both copies (`checked::UniqueValue`); and an
    // event of more than `max_nodes` values, whose `Value` would cost
    // tens of times its bytes.
    let nodes = super::checked::Nodes::new(max_nodes);
    let mut de = serde_json::Deserializer::from_str(data);
    let chunk =
        serde::de::DeserializeSeed::deserialize(super::checked::UniqueValue(&nodes), &mut de)
            .and_then(|v| de.end().map(|()| v))
            .map_err(|e| {
                if nodes.over() {
                    return format!(
                        "unchecked: {}",
                        super::check::too_many_values("stream event", max_nodes)
                    );
                }
                // A data error is the only other one the reader makes: a repeat.
                let what = if e.is_data() { "ambiguous" } else { "not JSON" };
                format!("unchecked: a stream event is {what}: {e}")
            })?;
    if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
        return Err(format!(
            "the upstream sent an error event: {}",
            clip(&err.to_string(), 300)
        ));
    }
    check::check_chunk(&chunk).map_err(|why| format!("unchecked: {why}"))?;
    Ok(chunk)
}

/// Reads what is left of a stream being re-rolled (usually the usage chunk
/// and `[DONE]`, right after the finish) for its usage; bounded by the size
/// limit and by `--timeout` in all, not per read: an upstream that pings
/// comments after the finish held the re-roll, with nothing sent to the
/// client, for `--timeout` per ping (probe 44: 30 s for 30 pings). Past
/// it the usage is left unread and the re-roll goes on.
async fn drain_usage<S>(
    p: &Proxy,
    out: &Out,
    s: &mut S,
    reader: &mut Reader,
    state: &mut StreamState,
) where
    S: futures_util::Stream<Item = Result<Bytes, reqwest::Error>> + Unpin,
{
    let drain = async {
        loop {
            let Ok(Some(b)) = next_bytes(p, out, s).await else {
                return;
            };
            state.bytes += b.len();
            if state.bytes > p.cfg.max_response {
                return;
            }
            let Ok(items) = reader.push(&b) else {
                return;
            };
            for item in items {
                match item {
                    Item::Data(d) if d.trim() == "[DONE]" => return,
                    Item::Data(d) => {
                        if let Ok(v) = serde_json::from_str::<Value>(&d)
                            && let Some(u) = v.get("usage").filter(|u| u.is_object())
                        {
                            state.usage = Some(u.clone());
                        }
                    }
                    Item::Comment(_) => {}
                }
            }
        }
    };
    // Elapsed: the usage is missing from the sum, as when the upstream
    // sends none.
    let _ = tokio::time::timeout(p.cfg.timeout, drain).await;
}

/// The stream ended properly: finishes every choice still open, commits
/// (with the decision headers when nothing was sent yet), releases what was
/// held, then the decision comment and `[DONE]`.
async fn finish_all(
    ctx: &Ctx,
    out: &mut Out,
    state: &mut StreamState,
    upstream_headers: &HeaderMap,
    (attempt_no, usage_before): (usize, &[Value]),
    mut deferred: Vec<Bytes>,
) {
    let open: Vec<u64> = state
        .choices
        .iter()
        .filter(|(_, a)| !a.done)
        .map(|(i, _)| *i)
        .collect();
    for index in open {
        if let Ok(frames) = release_choice(ctx, state, index) {
            deferred.extend(frames);
        }
    }
    // The decision that speaks for every choice (`choices[0]`'s unless
    // another rejects, or executes where it does not).
    let speaks = state.speaks();
    if !out.committed() {
        out.commit(sse_head(
            upstream_headers,
            ctx,
            speaks.map(|j| (j, attempt_no)),
        ))
        .await;
    }
    for f in deferred {
        out.send(f).await;
    }
    if let Some(j) = speaks {
        out.send(decision_comment(j)).await;
    }
    // Re-rolled attempts cost tokens too: their usage, summed with this one's.
    if !usage_before.is_empty()
        && let Some(total) = super::check::usage_total(
            usage_before
                .iter()
                .chain(state.usage.as_ref())
                .map(super::check::counts_of),
        )
    {
        out.send(comment_frame(&format!(" toolgate usage_total {total}")))
            .await;
    }
    out.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
}

/// Judges choice `index`: a retry when one is allowed and advised, else the
/// frames that release its decision (sent only once the stream ends well).
#[allow(clippy::too_many_arguments)]
fn finish_choice(
    p: &Proxy,
    ctx: &Ctx,
    out: &Out,
    state: &mut StreamState,
    index: u64,
    may_retry: bool,
    rerolls: u32,
    reemitted: bool,
) -> Result<Vec<Bytes>, Retry> {
    let acc = state.choice(index);
    let j = judge_choice(ctx, acc);
    if may_retry && !out.committed() {
        // `may_ask_again` reads the request: only asked when a retry is.
        match j.retry() {
            Retry::Reroll if rerolls < p.cfg.retries && ctx.may_ask_again() => {
                acc.done = true;
                acc.judged = Some(j);
                return Err(Retry::Reroll);
            }
            Retry::Reemit(msg)
                if !reemitted && super::can_reemit(ctx.request()) && ctx.may_ask_again() =>
            {
                acc.done = true;
                acc.judged = Some(j);
                return Err(Retry::Reemit(msg));
            }
            _ => {}
        }
    }
    acc.judged = Some(j);
    release_choice(ctx, state, index)
}

/// The frames of choice `index`'s decision: the held text before the call markup,
/// each released call, the finish chunk.
fn release_choice(ctx: &Ctx, state: &mut StreamState, index: u64) -> Result<Vec<Bytes>, Retry> {
    let acc = state.choice(index);
    if acc.judged.is_none() {
        acc.judged = Some(judge_choice(ctx, acc));
    }
    acc.done = true;
    let Some(j) = acc.judged.as_ref() else {
        return Ok(Vec::new());
    };
    let forwarded = acc.hold.forwarded();
    let tail = j.enforced_content(acc.hold.text(), forwarded);
    let calls = j.tool_calls();
    let legacy = j.function_call().cloned();
    let finish = j.enforced_finish_reason();
    let mut frames = Vec::new();
    if let Some(t) = tail {
        frames.push(state.chunk(index, json!({"content": t}), Value::Null));
    }
    for (i, call) in calls.into_iter().enumerate() {
        let mut call = call;
        if let Value::Object(m) = &mut call {
            let mut with_index = Map::new();
            with_index.insert("index".into(), json!(i));
            with_index.extend(std::mem::take(m));
            *m = with_index;
        }
        frames.push(state.chunk(index, json!({"tool_calls": [call]}), Value::Null));
    }
    if let Some(f) = legacy {
        frames.push(state.chunk(index, json!({"function_call": f}), Value::Null));
    }
    frames.push(state.chunk(index, json!({}), finish));
    Ok(frames.iter().map(data_frame).collect())
}

/// `observe` / `shadow` without a relay task: the response body is the
/// upstream's byte stream itself, through a [`Tee`] that reads a copy of
/// each piece as it passes and judges the whole once it has ended. The
/// bytes the client gets are the upstream's, unchanged, in the same pieces
/// (but for the upstream's comments that read as the proxy's own, dropped:
/// [`OwnComments`]);
/// a broken upstream stream cuts the body (never a clean end); `shadow`
/// appends its `: toolgate decision=…` comment after a clean end.
pub(crate) async fn faithful(
    p: Arc<Proxy>,
    ctx: Ctx,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Response {
    let url = p.chat_url(ctx.query.as_deref());
    let send = p
        .client
        .post(&url)
        .headers(ctx.headers.clone())
        .header(header::CONTENT_TYPE, "application/json")
        .body(ctx.body.clone())
        .send();
    let mode = p.cfg.mode;
    let proto = Holdback::for_profile(&ctx.engine.profile);
    let ctx = Arc::new(ctx);
    let mut tee = Tee {
        ex: Some(ctx.exchange(mode, true)),
        attempt: Some(ctx.attempt(None)),
        p,
        ctx,
        state: StreamState::new(proto),
        reader: Reader::default(),
        reading: true,
        done: false,
        after_done: false,
        broken: None,
        sse: true,
        upstream: None,
        stall: None,
        cut: None,
        t0: Instant::now(),
        first_byte: None,
        status: 200,
        own: OwnComments::default(),
        tail: None,
        ended: false,
        _permit: permit,
    };
    // A client that goes away now drops `tee`: recorded as disconnected.
    let resp = match tokio::time::timeout(tee.p.cfg.timeout, send).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return tee.unreachable(upstream_error(&e)),
        Err(_) => return tee.unreachable("timeout".into()),
    };
    let status = resp.status();
    tee.status = status.as_u16();
    if let Some(a) = tee.attempt.as_mut() {
        a.status = status.as_u16();
    }
    let is_sse = check::is_sse_type(
        resp.headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
    );
    let coded = super::content_coded(resp.headers());
    let head = if status.is_success() && is_sse && !coded {
        sse_head(resp.headers(), &tee.ctx, None)
    } else if coded && status.is_success() {
        // Relayed as it came, header included; not read (not decompressed).
        tee.p.metrics.unchecked(tee.ctx.model.as_deref());
        tee.sse = false;
        tee.reading = false;
        if let Some(a) = tee.attempt.as_mut() {
            a.error = Some(format!("unchecked: {}", super::coded_why(resp.headers())));
        }
        Head {
            status,
            headers: response_headers(resp.headers()),
        }
    } else {
        // An error answer (or anything that is not a stream): relayed as
        // it is, each read within --timeout.
        if !status.is_success() {
            tee.p.metrics.upstream_error(tee.ctx.model.as_deref());
        }
        tee.sse = false;
        tee.reading = false;
        if let Some(a) = tee.attempt.as_mut() {
            a.error = Some(format!("upstream status {status}, not an event stream"));
        }
        let mut headers = response_headers(resp.headers());
        if let Some(ct) = resp.headers().get(header::CONTENT_TYPE) {
            headers.insert(header::CONTENT_TYPE, ct.clone());
        }
        Head { status, headers }
    };
    tee.upstream = Some(Box::pin(resp.bytes_stream()));
    tee.stall = Some(Box::pin(tokio::time::sleep(tee.p.cfg.timeout)));
    tee.first_byte = Some(Instant::now());
    let mut out = Response::new(Body::from_stream(tee));
    *out.status_mut() = head.status;
    *out.headers_mut() = head.headers;
    out
}

/// How long a faithful relay waits after the piece that broke a stream
/// before it cuts the body (see [`Tee::broken`]).
const CUT_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

type Upstream = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static>,
>;

/// The upstream's body on its way to the client, read as it passes.
struct Tee {
    p: Arc<Proxy>,
    ctx: Arc<Ctx>,
    /// Taken when the exchange is finished (recorded).
    ex: Option<Exchange>,
    attempt: Option<Attempt>,
    state: StreamState,
    reader: Reader,
    /// The copy is still read (false once it is not valid SSE, or for a
    /// relayed non-stream answer).
    reading: bool,
    /// `[DONE]` was read: the answer ended there, and what follows is
    /// relayed, never read ([`Tee::read_copy`]).
    done: bool,
    /// Something other than blank lines came after `[DONE]` (warned of
    /// when the exchange is finished).
    after_done: bool,
    /// Why the stream broke, at an event that enforce would not pass
    /// ([`Tee::read_copy`]): the body is cut after the piece that held it.
    broken: Option<String>,
    /// A 2xx event stream (else relayed as is, not judged).
    sse: bool,
    upstream: Option<Upstream>,
    /// `--timeout` between two reads.
    stall: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    /// The pause before a broken stream's cut ([`CUT_PAUSE`]).
    cut: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    t0: Instant,
    first_byte: Option<Instant>,
    status: u16,
    /// Drops the upstream's comments that read as the proxy's own (as
    /// enforce drops them) from the bytes relayed.
    own: OwnComments,
    /// `shadow`'s decision comment, sent after the upstream's end.
    tail: Option<Bytes>,
    ended: bool,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Tee {
    /// The upstream could not be asked: a 502, recorded.
    fn unreachable(mut self, e: String) -> Response {
        let model = self.ctx.model.clone();
        self.p.metrics.upstream_error(model.as_deref());
        tracing::warn!(
            model = model.as_deref().unwrap_or(""),
            error = %crate::secrets::scrub(e.clone(), self.ctx.secrets()),
            "upstream failed"
        );
        self.status = 502;
        self.sse = false;
        if let Some(a) = self.attempt.as_mut() {
            a.error = Some(e.clone());
        }
        self.finish(None, false);
        let body = json!({"error": {"message": format!("upstream: {e}"), "type": "toolgate_proxy_error", "code": null}});
        let mut out = Response::new(Body::from(body.to_string()));
        *out.status_mut() = StatusCode::BAD_GATEWAY;
        out.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        out
    }

    /// How the upstream's body ended, once it has.
    fn end_of_body(&self) -> End {
        if !self.sse {
            return End::Done;
        }
        if let Some(why) = &self.broken {
            return End::Failed(why.clone());
        }
        let finished = !self.state.choices.is_empty()
            && self.state.choices.values().all(|a| a.finish.is_some());
        if self.done || (self.reading && finished) {
            End::Done
        } else if !self.reading {
            End::Failed("unchecked: the upstream stream could not be read".into())
        } else {
            End::Failed("the upstream stream ended before [DONE]".into())
        }
    }

    /// Reads a copy of a piece that passes. An event that breaks the
    /// stream (as enforce reads it: [`read_chunk`], the SSE reader's
    /// errors) stops the reading and, once the piece is relayed up to the
    /// end of that event, the body ([`Tee::broken`]); returns that length
    /// (what follows it in the piece, a `[DONE]` included, is not relayed:
    /// the client never sees a clean end after a break).
    ///
    /// `[DONE]` ends the answer, as in enforce (which reads nothing after
    /// it and sends nothing after it), and as OpenAI clients stop reading
    /// there: what follows is relayed as it came but neither read nor
    /// judged, so shadow's decision is enforce's. Reading on made shadow
    /// reject (a call after its choice's finish) what enforce executed.
    fn read_copy(&mut self, bytes: &[u8]) -> Option<usize> {
        if self.done {
            self.after_done |= !bytes.iter().all(u8::is_ascii_whitespace);
            return None;
        }
        if !self.reading {
            return None;
        }
        let (items, error) = self.reader.push_ends(bytes);
        for (item, end) in items {
            match item {
                Item::Data(d) if d.trim() == "[DONE]" => {
                    self.done = true;
                    self.after_done = !bytes
                        .get(end..)
                        .unwrap_or_default()
                        .iter()
                        .all(u8::is_ascii_whitespace);
                    return None;
                }
                Item::Data(d) => {
                    if let Err(why) = read_chunk(&d, self.p.cfg.max_response_nodes)
                        .and_then(|mut v| self.state.absorb(&mut v, false))
                    {
                        self.reading = false;
                        self.broken = Some(why);
                        return Some(end);
                    }
                }
                Item::Comment(_) => {}
            }
        }
        if let Some((e, at)) = error {
            self.reading = false;
            self.broken = Some(format!("unchecked: {}", e.0));
            return Some(at);
        }
        None
    }

    /// Finishes the exchange: judged (for the record and `shadow`'s
    /// comment), counted, logged, recorded. `end` is `None` when the
    /// upstream was never read (unreachable); `gone` when the client left.
    /// In `observe` at a clean end, the judging runs after the body has
    /// ended (a task of its own), off the response path.
    fn finish(&mut self, end: Option<End>, gone: bool) {
        let (Some(ex), Some(attempt)) = (self.ex.take(), self.attempt.take()) else {
            return;
        };
        let model = self.ctx.model.clone();
        let model = model.as_deref();
        let mut status = self.status;
        let mut after = After {
            ex,
            attempt,
            state: {
                let proto = self.state.proto.clone();
                std::mem::replace(&mut self.state, StreamState::new(proto))
            },
            judge: self.sse,
            broken: None,
        };
        after.attempt.upstream_ms = ms(self.t0);
        after.attempt.served = true;
        if end.is_some() {
            self.p
                .metrics
                .upstream_latency(model, self.t0.elapsed().as_secs_f64());
        }
        after.ex.first_byte_ms = self
            .first_byte
            .map(|t| (t - self.ctx.started).as_secs_f64() * 1000.0);
        if gone {
            after.ex.client_disconnected = true;
            if crate::server::stopping() {
                after.attempt.error =
                    Some("stopped: the proxy shut down with the stream in flight".into());
            }
        }
        match end {
            Some(End::Failed(e)) => {
                if e.starts_with("unchecked") {
                    self.p.metrics.unchecked(model);
                } else {
                    self.p.metrics.upstream_error(model);
                }
                tracing::warn!(
                    model = model.unwrap_or(""),
                    error = %crate::secrets::scrub(e.clone(), self.ctx.secrets()),
                    "upstream stream broken"
                );
                after.attempt.error = Some(e.clone());
                after.broken = Some(e);
            }
            None if !gone => status = 502,
            _ => {}
        }
        if self.after_done {
            tracing::warn!(
                model = model.unwrap_or(""),
                "the upstream sent data after [DONE]: relayed, not judged"
            );
        }
        let shadow = self.p.cfg.mode == Mode::Shadow;
        let clean = after.broken.is_none() && status != 502 && !gone && self.sse;
        if shadow || !clean {
            // The comment needs the decision before the end; a cut stream
            // or a departed client has no end to wait for.
            let j = after.run(&self.p, &self.ctx, status);
            if shadow
                && clean
                && let Some(j) = j
            {
                self.tail = Some(decision_comment(&j));
            }
        } else {
            let (p, ctx) = (Arc::clone(&self.p), Arc::clone(&self.ctx));
            match tokio::runtime::Handle::try_current() {
                Ok(h) if !crate::server::stopping() => {
                    h.spawn(async move {
                        after.run(&p, &ctx, status);
                    });
                }
                _ => {
                    after.run(&p, &ctx, status);
                }
            }
        }
    }
}

/// What is left to do for a finished faithful stream.
struct After {
    ex: Exchange,
    attempt: Attempt,
    state: StreamState,
    /// An event stream was read (else nothing to judge).
    judge: bool,
    broken: Option<String>,
}

impl After {
    /// Judges, counts, logs and records; returns the judgment that speaks
    /// for the answer ([`super::judge::speaks_for`]: `choices[0]`'s unless
    /// another choice rejects, or executes where it does not).
    fn run(mut self, p: &Arc<Proxy>, ctx: &Ctx, status: u16) -> Option<Judged> {
        let model = ctx.model.as_deref();
        let mut speaking = None;
        if self.judge {
            for acc in self.state.choices.values_mut() {
                if acc.judged.is_none() {
                    acc.judged = Some(judge_choice(ctx, acc));
                }
            }
            fill_attempt(&mut self.attempt, &mut self.state, ctx);
            // Shadow's comment, like the record, speaks for every choice;
            // moved out, not copied: nothing reads the choices after this.
            speaking = self.state.take_speaking();
            match &self.broken {
                Some(e) => reject_broken(p, model, &mut self.attempt, e),
                None => {
                    if let Some(j) = &speaking {
                        p.metrics
                            .decision(model, j.decision(), j.label().as_str(), j.gate());
                    }
                }
            }
        }
        self.ex.attempts.push(self.attempt);
        self.ex.total_ms = ms(ctx.started);
        p.metrics.request(model, true, status);
        log_exchange(&self.ex, status);
        p.record(self.ex, ctx.deferred());
        speaking
    }
}

impl futures_util::Stream for Tee {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::future::Future;
        use std::task::Poll;
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(this.tail.take().map(Ok));
        }
        if let Some(why) = this.broken.clone() {
            // The piece that broke the stream was relayed; nothing after it
            // is. The cut waits a moment first: hyper writes out what it
            // holds while the body is pending, and drops it (the head
            // included) when the body fails at once.
            let pause = this
                .cut
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(CUT_PAUSE)));
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.ended = true;
            this.finish(Some(End::Failed(why)), false);
            return Poll::Ready(Some(Err(std::io::Error::other(
                "the upstream stream broke",
            ))));
        }
        let (Some(up), Some(stall)) = (this.upstream.as_mut(), this.stall.as_mut()) else {
            return Poll::Ready(None);
        };
        let next = match up.as_mut().poll_next(cx) {
            Poll::Ready(next) => next,
            Poll::Pending => {
                if stall.as_mut().poll(cx).is_ready() {
                    let why = if this.sse {
                        "timeout: the upstream stream stalled"
                    } else {
                        "timeout: the upstream answer stalled"
                    };
                    this.ended = true;
                    this.finish(Some(End::Failed(why.into())), false);
                    return Poll::Ready(Some(Err(std::io::Error::other(why))));
                }
                return Poll::Pending;
            }
        };
        match next {
            Some(Ok(bytes)) => {
                stall
                    .as_mut()
                    .reset(tokio::time::Instant::now() + this.p.cfg.timeout);
                this.state.bytes += bytes.len();
                if this.state.bytes > this.p.cfg.max_response {
                    let why = if this.sse {
                        "the upstream stream is larger than the size limit"
                    } else {
                        "the upstream answer is too large"
                    };
                    this.ended = true;
                    this.finish(Some(End::Failed(why.into())), false);
                    return Poll::Ready(Some(Err(std::io::Error::other(why))));
                }
                let bytes = match this.read_copy(&bytes) {
                    Some(cut) if cut < bytes.len() => bytes.slice(..cut),
                    _ => bytes,
                };
                if !this.sse {
                    return Poll::Ready(Some(Ok(bytes)));
                }
                let bytes = this.own.pass(bytes);
                if bytes.is_empty() {
                    // All of it held or dropped: read on.
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Poll::Ready(Some(Ok(bytes)))
            }
            Some(Err(e)) => {
                let why = upstream_error(&e);
                this.ended = true;
                this.finish(Some(End::Failed(why)), false);
                Poll::Ready(Some(Err(std::io::Error::other("the upstream failed"))))
            }
            None => {
                this.ended = true;
                match this.end_of_body() {
                    End::Failed(why) => {
                        this.finish(Some(End::Failed(why)), false);
                        Poll::Ready(Some(Err(std::io::Error::other(
                            "the upstream stream broke",
                        ))))
                    }
                    end => {
                        this.finish(Some(end), false);
                        // A last comment line held without its line end.
                        let held = this.own.finish();
                        if !held.is_empty() {
                            return Poll::Ready(Some(Ok(held)));
                        }
                        Poll::Ready(this.tail.take().map(Ok))
                    }
                }
            }
        }
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        // Dropped unfinished: the client went away (or the proxy stopped).
        if self.ex.is_some() {
            let end = self.upstream.is_some().then_some(End::ClientGone);
            self.finish(end, true);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn calls_chunk(from: usize, to: usize) -> Value {
        let calls: Vec<Value> = (from..to).map(|i| json!({"index": i})).collect();
        json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
    }

    /// Probe (p7): every distinct streamed `index` held a call, judged
    /// and recorded at the end; 200,000 of them in 3.4 MB of stream took
    /// 736 MB (any mode), a 60 MB stream would take gigabytes. Past the
    /// candidate cap the choice is refused as unchecked, in every mode
    /// (`absorb` is the faithful relay's reader too).
    /// Probe (s46): MiniMax through NVIDIA NIM repeats a call's whole
    /// name in every fragment; the names were joined into
    /// `get_weatherget_weather` (a correct call rejected as `wrong_tool`)
    /// where the importer reads `get_weather`: the first name stands.
    #[test]
    fn a_name_repeated_in_every_fragment_is_read_once() {
        let fragment = |args: &str| {
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
                "type": "function", "function": {"name": "get_weather", "arguments": args}}]}}]})
        };
        for edit in [true, false] {
            let mut state = StreamState::new(Holdback::new(Some(Vec::new())));
            for args in ["", "{\"city\": ", "\"Paris\"}"] {
                assert_eq!(state.absorb(&mut fragment(args), edit), Ok(Vec::new()));
            }
            let calls = state.choices[&0].tool_calls().unwrap();
            assert_eq!(
                calls,
                [json!({"id": "call_1", "type": "function", "function":
                    {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}})]
            );
        }
    }

    /// Probe (s46): a choice that ended in a provider error was judged
    /// as the model's answer; it breaks the stream, in every mode.
    #[test]
    fn a_choice_ending_in_a_provider_error_is_refused() {
        for edit in [true, false] {
            let mut state = StreamState::new(Holdback::new(Some(Vec::new())));
            let mut chunk =
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "abort"}]});
            assert_eq!(
                state.absorb(&mut chunk, edit),
                Err(
                    "the upstream's choice 0 ended in a provider error, not an answer: \
                     `finish_reason` \"abort\" (a provider error never becomes a transcript)"
                        .into()
                )
            );
        }
    }

    #[test]
    fn a_choice_streaming_more_calls_than_the_cap_is_refused() {
        for edit in [true, false] {
            let mut state = StreamState::new(Holdback::new(Some(Vec::new())));
            let mut chunk = calls_chunk(0, MAX_STREAMED_CALLS);
            assert_eq!(state.absorb(&mut chunk, edit), Ok(Vec::new()));
            // Fragments of calls already held still join them.
            let mut more = calls_chunk(0, 3);
            assert_eq!(state.absorb(&mut more, edit), Ok(Vec::new()));
            let mut over = calls_chunk(5_000_000, 5_000_001);
            assert_eq!(
                state.absorb(&mut over, edit),
                Err(format!(
                    "unchecked: choice 0 streams more than {MAX_STREAMED_CALLS} tool calls"
                ))
            );
            assert_eq!(state.choices[&0].native.len(), MAX_STREAMED_CALLS);
        }
    }
}
