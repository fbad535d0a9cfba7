//! Streamed chat completions (`"stream": true`).
//!
//! `observe` and `shadow` relay the upstream's bytes as they arrive, unchanged
//! (`shadow` appends one SSE comment with the decision after them), and read
//! a copy to record the exchange.
//!
//! `enforce` re-encodes the stream, choice by choice:
//!
//! - content deltas go through a [`Holdback`] of the profile's openers: text
//!   that cannot begin a tool call is forwarded as it arrives; from the first
//!   opener on, the rest is buffered;
//! - native `tool_calls` deltas are accumulated, never forwarded as they come;
//! - at the choice's `finish_reason` (or the end of the stream) the batch
//!   pipeline decides ([`judge`]); the held text outside the calls follows as
//!   one content delta, each call as one complete `tool_calls` delta (`index`,
//!   `id`, `type`, name, full arguments), then the finish chunk;
//! - reasoning deltas, usage chunks and SSE comments pass through; the stream
//!   ends with `: toolgate decision=… label=…` and `data: [DONE]`.
//!
//! Nothing is sent to the client until the first forwardable text (or the
//! end): until then a rejected sampling artifact is re-rolled and a
//! multi-candidate fallback gets its re-emit request, invisibly; when that
//! happens at the end, the response headers carry the decision too. A client
//! that goes away cancels the upstream request (its connection is dropped).

use super::judge::{Judged, Retry, judge};
use super::record::{Attempt, Exchange};
use super::sse::{Item, Reader};
use super::{
    Ctx, MAX_RESPONSE, Mode, Proxy, error_response, log_exchange, ms, now_unix_ms, reemit_request,
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
use toolgate_validator::stream::Holdback;

type Frame = Result<Bytes, std::io::Error>;

/// The status and headers of the response, sent when the first byte is.
struct Head {
    status: StatusCode,
    headers: HeaderMap,
}

/// Starts the relay task; answers once it commits to a response.
pub(crate) async fn handle(p: Arc<Proxy>, ctx: Ctx) -> Response {
    let (head_tx, head_rx) = oneshot::channel::<Head>();
    let (tx, mut rx) = mpsc::channel::<Frame>(64);
    tokio::spawn(relay(p, ctx, Out::new(head_tx, tx)));
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
}

fn data_frame(v: &Value) -> Bytes {
    Bytes::from(format!("data: {v}\n\n"))
}

fn comment_frame(text: &str) -> Bytes {
    // One line: a newline would end the comment and start a field.
    let line: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    Bytes::from(format!(":{line}\n\n"))
}

fn sse_head(upstream: &HeaderMap, judged: Option<(&Judged, usize)>) -> Head {
    let mut headers = response_headers(upstream);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some((j, attempts)) = judged {
        for (k, v) in j.headers(attempts) {
            if let Ok(v) = HeaderValue::from_str(&v) {
                headers.insert(k, v);
            }
        }
    }
    Head {
        status: StatusCode::OK,
        headers,
    }
}

/// A native call being streamed.
#[derive(Default, Debug)]
struct NativeAcc {
    id: Option<Value>,
    name: String,
    arguments: String,
}

/// One choice of the stream.
struct ChoiceAcc {
    hold: Holdback,
    chunks: Vec<String>,
    reasoning: Option<String>,
    native: BTreeMap<u64, NativeAcc>,
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
            finish: None,
            done: false,
            judged: None,
        }
    }

    fn native_calls(&self) -> Option<Vec<Value>> {
        if self.native.is_empty() {
            return None;
        }
        Some(
            self.native
                .iter()
                .map(|(i, n)| {
                    json!({
                        "id": n.id.clone().unwrap_or_else(|| json!(format!("call_upstream{i}"))),
                        "type": "function",
                        "function": {"name": n.name, "arguments": n.arguments},
                    })
                })
                .collect(),
        )
    }
}

/// Everything read from one upstream stream.
struct StreamState {
    choices: BTreeMap<u64, ChoiceAcc>,
    /// The first chunk's top-level fields (id, object, created, model, …).
    template: Option<Map<String, Value>>,
    bytes: usize,
    proto: Holdback,
}

impl StreamState {
    fn new(proto: Holdback) -> StreamState {
        StreamState {
            choices: BTreeMap::new(),
            template: None,
            bytes: 0,
            proto,
        }
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
    fn absorb(&mut self, chunk: &mut Value, edit: bool) -> Vec<u64> {
        let mut finished = Vec::new();
        if self.template.is_none()
            && let Value::Object(m) = &*chunk
        {
            let mut t = m.clone();
            t.remove("choices");
            t.remove("usage");
            self.template = Some(t);
        }
        let Some(Value::Array(choices)) = chunk.get_mut("choices") else {
            return finished;
        };
        for choice in choices.iter_mut() {
            let Value::Object(choice) = choice else {
                continue;
            };
            let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
            let acc = self.choice(index);
            if let Some(Value::Object(delta)) = choice.get_mut("delta") {
                if let Some(Value::String(text)) = delta.get("content") {
                    let text = text.clone();
                    acc.chunks.push(text.clone());
                    let forward = acc.hold.push(&text).to_string();
                    if edit {
                        if forward.is_empty() {
                            delta.remove("content");
                        } else {
                            delta.insert("content".into(), Value::String(forward));
                        }
                    }
                }
                for key in ["reasoning_content", "reasoning"] {
                    if let Some(Value::String(r)) = delta.get(key) {
                        acc.reasoning.get_or_insert_with(String::new).push_str(r);
                    }
                }
                if let Some(Value::Array(calls)) = delta.get("tool_calls") {
                    for (pos, call) in calls.iter().enumerate() {
                        let i = call
                            .get("index")
                            .and_then(Value::as_u64)
                            .unwrap_or(pos as u64);
                        let n = acc.native.entry(i).or_default();
                        if let Some(id) = call.get("id").filter(|v| !v.is_null()) {
                            n.id = Some(id.clone());
                        }
                        if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                            n.name.push_str(name);
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
            }
            if let Some(Value::String(f)) = choice.get("finish_reason") {
                acc.finish = Some(f.clone());
                if !acc.done {
                    finished.push(index);
                }
                if edit {
                    choice.insert("finish_reason".into(), Value::Null);
                }
            }
        }
        finished
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

    /// Whether an edited chunk still says something.
    fn worth_sending(chunk: &Value) -> bool {
        if chunk.get("usage").is_some_and(|u| !u.is_null()) {
            return true;
        }
        match chunk.get("choices") {
            Some(Value::Array(choices)) => choices.iter().any(|c| {
                c.get("delta")
                    .and_then(Value::as_object)
                    .is_some_and(|d| !d.is_empty())
                    || c.get("finish_reason").is_some_and(|f| !f.is_null())
            }),
            _ => true,
        }
    }

    /// Whether forwarded content is in this edited chunk (it commits).
    fn carries_content(chunk: &Value) -> bool {
        chunk
            .get("choices")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.pointer("/delta/content")
                        .and_then(Value::as_str)
                        .is_some_and(|s| !s.is_empty())
                })
            })
    }
}

/// How one upstream stream ended.
enum End {
    /// `[DONE]` or the end of the body.
    Done,
    /// The client went away.
    ClientGone,
    /// The upstream failed mid-stream.
    Failed(String),
    /// Ask again (enforce, before the first byte).
    Again(Retry),
}

async fn relay(p: Arc<Proxy>, ctx: Ctx, mut out: Out) {
    let mode = p.cfg.mode;
    let model = ctx.model.clone();
    let model = model.as_deref();
    let mut ex = ctx.exchange(mode, true);
    let mut body = Value::Object(ctx.request.clone());
    let mut rerolls = 0;
    let mut reemitted = false;
    let proto = Holdback::for_profile(&ctx.engine.profile);
    let url = p.upstream_url("/v1/chat/completions");
    let mut status = 200u16;
    loop {
        let t0 = Instant::now();
        let mut attempt = Attempt {
            request: body.clone(),
            started_unix_ms: now_unix_ms(),
            ..Attempt::default()
        };
        let sent = tokio::time::timeout(
            p.cfg.timeout,
            p.client
                .post(&url)
                .headers(ctx.headers.clone())
                .header(header::CONTENT_TYPE, "application/json")
                .json(&body)
                .send(),
        )
        .await;
        let resp = match sent {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                fail(&p, &mut out, &mut ex, attempt, model, upstream_error(&e)).await;
                status = 502;
                break;
            }
            Err(_) => {
                fail(&p, &mut out, &mut ex, attempt, model, "timeout".into()).await;
                status = 502;
                break;
            }
        };
        attempt.status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !resp.status().is_success() || !is_sse {
            // Not a stream (an error, usually): relayed as it is.
            if !resp.status().is_success() {
                p.metrics.upstream_error(model);
            }
            status = resp.status().as_u16();
            attempt.error = Some(format!(
                "upstream status {}, not an event stream",
                resp.status()
            ));
            attempt.served = true;
            ex.attempts.push(attempt);
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
            while let Some(Ok(b)) = s.next().await {
                out.send_now(b).await;
                if out.gone {
                    break;
                }
            }
            break;
        }
        let upstream_headers = resp.headers().clone();
        let mut state = StreamState::new(proto.clone());
        let end = if mode == Mode::Enforce {
            enforce_stream(
                &p,
                &ctx,
                &mut out,
                resp,
                &mut state,
                &upstream_headers,
                ex.attempts.len() + 1,
                rerolls,
                reemitted,
            )
            .await
        } else {
            faithful_stream(&p, &mut out, resp, &mut state, &upstream_headers).await
        };
        attempt.upstream_ms = ms(t0);
        p.metrics
            .upstream_latency(model, t0.elapsed().as_secs_f64());
        fill_attempt(&mut attempt, &mut state, &ctx);
        match end {
            End::Again(Retry::Reroll) => {
                out.pending.clear();
                rerolls += 1;
                attempt.retry = Some("reroll");
                p.metrics.retry(model, "reroll");
                ex.attempts.push(attempt);
                continue;
            }
            End::Again(Retry::Reemit(msg)) => {
                out.pending.clear();
                reemitted = true;
                attempt.retry = Some("reemit");
                p.metrics.retry(model, "reemit");
                body = reemit_request(&body, &attempt.output, &msg);
                ex.attempts.push(attempt);
                continue;
            }
            End::Again(Retry::None) | End::Done => {}
            End::ClientGone => ex.client_disconnected = true,
            End::Failed(e) => {
                p.metrics.upstream_error(model);
                attempt.error = Some(e);
            }
        }
        if mode != Mode::Enforce {
            // Judge for the record (enforce judged while streaming).
            for acc in state.choices.values_mut() {
                if acc.judged.is_none() {
                    acc.judged = Some(judge_choice(&ctx, acc));
                }
            }
            if mode == Mode::Shadow
                && let Some(j) = state.choices.get(&0).and_then(|a| a.judged.as_ref())
            {
                out.send(decision_comment(j)).await;
            }
            attempt.judged = state
                .choices
                .get(&0)
                .and_then(|a| a.judged.as_ref())
                .map(Judged::to_json);
        }
        if let Some(j) = state.choices.get(&0).and_then(|a| a.judged.as_ref()) {
            let removed = j.native.as_ref().map_or(0, |n| n.removed.len());
            if removed > 0 && mode == Mode::Enforce {
                p.metrics.native_removed(model, removed);
            }
            p.metrics
                .decision(model, j.decision(), j.label().as_str(), j.gate());
        }
        attempt.served = true;
        ex.attempts.push(attempt);
        if !out.committed() {
            out.commit(sse_head(&upstream_headers, None)).await;
        }
        break;
    }
    ex.total_ms = ms(ctx.started);
    ex.first_byte_ms = out
        .first_byte
        .map(|t| (t - ctx.started).as_secs_f64() * 1000.0);
    p.metrics.request(model, true, status);
    log_exchange(&ex, status);
    p.record(ex);
}

/// The upstream could not be asked: before the first byte, a 502.
async fn fail(
    p: &Proxy,
    out: &mut Out,
    ex: &mut Exchange,
    mut attempt: Attempt,
    model: Option<&str>,
    e: String,
) {
    p.metrics.upstream_error(model);
    tracing::warn!(model = model.unwrap_or(""), error = %e, "upstream failed");
    attempt.error = Some(e.clone());
    attempt.served = true;
    ex.attempts.push(attempt);
    if out.committed() {
        return;
    }
    let body = json!({"error": {"message": format!("upstream: {e}"), "type": "toolgate_proxy_error", "code": null}});
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    out.commit(Head {
        status: StatusCode::BAD_GATEWAY,
        headers,
    })
    .await;
    out.send_now(Bytes::from(body.to_string())).await;
}

fn judge_choice(ctx: &Ctx, acc: &ChoiceAcc) -> Judged {
    let native = acc.native_calls();
    judge(
        &ctx.engine,
        &ctx.tools,
        acc.hold.text(),
        acc.reasoning.as_deref(),
        native.as_deref(),
        acc.finish.as_deref(),
    )
}

fn fill_attempt(attempt: &mut Attempt, state: &mut StreamState, _ctx: &Ctx) {
    if let Some(acc) = state.choices.get(&0) {
        attempt.output = acc.hold.text().to_string();
        attempt.chunks = Some(acc.chunks.clone());
        attempt.reasoning = acc.reasoning.clone();
        attempt.tool_calls = acc.native_calls();
        attempt.finish_reason = acc.finish.clone();
        if attempt.judged.is_none() {
            attempt.judged = acc.judged.as_ref().map(Judged::to_json);
        }
    } else {
        attempt.chunks = Some(Vec::new());
    }
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

/// `observe` / `shadow`: the bytes go out as they come; a copy is read.
async fn faithful_stream(
    p: &Proxy,
    out: &mut Out,
    resp: reqwest::Response,
    state: &mut StreamState,
    upstream_headers: &HeaderMap,
) -> End {
    out.commit(sse_head(upstream_headers, None)).await;
    let mut s = resp.bytes_stream();
    let mut reader = Reader::default();
    let mut reading = true;
    loop {
        let bytes = match next_bytes(p, out, &mut s).await {
            Ok(Some(b)) => b,
            Ok(None) => return End::Done,
            Err(end) => return end,
        };
        out.send_now(bytes.clone()).await;
        if out.gone {
            return End::ClientGone;
        }
        state.bytes += bytes.len();
        if reading && state.bytes <= MAX_RESPONSE {
            match reader.push(&bytes) {
                Ok(items) => {
                    for item in items {
                        if let Item::Data(d) = item
                            && let Ok(mut v) = serde_json::from_str::<Value>(&d)
                        {
                            state.absorb(&mut v, false);
                        }
                    }
                }
                // Still relayed; only the record stops growing.
                Err(_) => reading = false,
            }
        }
    }
}

/// `enforce`: hold, judge at each choice's end, re-encode.
#[allow(clippy::too_many_arguments)]
async fn enforce_stream(
    p: &Proxy,
    ctx: &Ctx,
    out: &mut Out,
    resp: reqwest::Response,
    state: &mut StreamState,
    upstream_headers: &HeaderMap,
    attempt_no: usize,
    rerolls: u32,
    reemitted: bool,
) -> End {
    let mut s = resp.bytes_stream();
    let mut reader = Reader::default();
    let mut may_retry = true;
    loop {
        let (items, eof) = match next_bytes(p, out, &mut s).await {
            Ok(Some(b)) => {
                state.bytes += b.len();
                if state.bytes > MAX_RESPONSE {
                    (Err(()), false)
                } else {
                    (reader.push(&b).map_err(|_| ()), false)
                }
            }
            Ok(None) => (reader.finish().map_err(|_| ()), true),
            Err(End::ClientGone) => return End::ClientGone,
            Err(end) => {
                // A stalled or broken upstream: judge what arrived.
                finish_all(p, ctx, out, state, upstream_headers, attempt_no).await;
                return end;
            }
        };
        let Ok(items) = items else {
            finish_all(p, ctx, out, state, upstream_headers, attempt_no).await;
            return End::Failed("the upstream stream is not valid SSE or is too large".into());
        };
        for item in items {
            match item {
                Item::Comment(c) => out.send(comment_frame(&c)).await,
                Item::Data(d) if d.trim() == "[DONE]" => {
                    finish_all(p, ctx, out, state, upstream_headers, attempt_no).await;
                    return End::Done;
                }
                Item::Data(d) => {
                    let Ok(mut chunk) = serde_json::from_str::<Value>(&d) else {
                        // Not JSON: nothing the client could use; dropped.
                        continue;
                    };
                    let finished = state.absorb(&mut chunk, true);
                    if StreamState::worth_sending(&chunk) {
                        if StreamState::carries_content(&chunk) && !out.committed() {
                            out.commit(sse_head(upstream_headers, None)).await;
                        }
                        out.send(data_frame(&chunk)).await;
                    }
                    for index in finished {
                        let single = state.choices.len() == 1 && index == 0;
                        if let Some(retry) = finish_choice(
                            p,
                            ctx,
                            out,
                            state,
                            index,
                            upstream_headers,
                            attempt_no,
                            single && may_retry,
                            rerolls,
                            reemitted,
                        )
                        .await
                        {
                            return End::Again(retry);
                        }
                        may_retry = false;
                    }
                    if out.gone {
                        return End::ClientGone;
                    }
                }
            }
        }
        if eof {
            finish_all(p, ctx, out, state, upstream_headers, attempt_no).await;
            return End::Done;
        }
    }
}

/// Finishes every choice still open, then the decision comment and `[DONE]`.
async fn finish_all(
    p: &Proxy,
    ctx: &Ctx,
    out: &mut Out,
    state: &mut StreamState,
    upstream_headers: &HeaderMap,
    attempt_no: usize,
) {
    let open: Vec<u64> = state
        .choices
        .iter()
        .filter(|(_, a)| !a.done)
        .map(|(i, _)| *i)
        .collect();
    for index in open {
        let _ = finish_choice(
            p,
            ctx,
            out,
            state,
            index,
            upstream_headers,
            attempt_no,
            false,
            0,
            true,
        )
        .await;
    }
    if !out.committed() {
        let judged = state.choices.get(&0).and_then(|a| a.judged.as_ref());
        out.commit(sse_head(upstream_headers, judged.map(|j| (j, attempt_no))))
            .await;
    }
    if let Some(j) = state.choices.get(&0).and_then(|a| a.judged.as_ref()) {
        out.send(decision_comment(j)).await;
    }
    out.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
}

/// Judges choice `index`; returns a retry when one is allowed and advised,
/// else sends the held text, the calls and the finish chunk.
#[allow(clippy::too_many_arguments)]
async fn finish_choice(
    p: &Proxy,
    ctx: &Ctx,
    out: &mut Out,
    state: &mut StreamState,
    index: u64,
    upstream_headers: &HeaderMap,
    attempt_no: usize,
    may_retry: bool,
    rerolls: u32,
    reemitted: bool,
) -> Option<Retry> {
    let acc = state.choice(index);
    let j = judge_choice(ctx, acc);
    acc.done = true;
    if may_retry && !out.committed() {
        match j.retry() {
            Retry::Reroll if rerolls < p.cfg.retries => {
                acc.judged = Some(j);
                return Some(Retry::Reroll);
            }
            Retry::Reemit(msg) if !reemitted => {
                acc.judged = Some(j);
                return Some(Retry::Reemit(msg));
            }
            _ => {}
        }
    }
    let forwarded = acc.hold.forwarded();
    let tail = j.enforced_content(acc.hold.text(), forwarded);
    let calls = j.tool_calls();
    let finish = j.enforced_finish_reason();
    acc.judged = Some(j);
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
    frames.push(state.chunk(index, json!({}), finish));
    if !out.committed() {
        let judged = state.choices.get(&index).and_then(|a| a.judged.as_ref());
        let single = state.choices.len() == 1;
        out.commit(sse_head(
            upstream_headers,
            judged.filter(|_| single).map(|j| (j, attempt_no)),
        ))
        .await;
    }
    for f in frames {
        out.send(data_frame(&f)).await;
    }
    None
}
