//! Captured streams: Server-Sent Events as the client received them.
//!
//! # Wire format
//!
//! OpenAI chat completions: `data: {chat.completion.chunk}` lines, a last
//! `data: [DONE]`, optionally a usage chunk with empty `choices`. Content
//! deltas (a string, or `text`/`thinking` parts) are concatenated into
//! `output` and kept as `chunks`; reasoning deltas
//! (`reasoning_content`/`reasoning`, `thinking` parts) into `reasoning`;
//! `refusal` deltas into `import.refusal`; tool-call deltas are reassembled
//! per call ([`StreamedCalls`], placed as the proxy places them,
//! [`crate::delta`]: by `id`, else by `index`; the id from the first
//! fragment that has one, a name piece joined unless it repeats the name,
//! `arguments` concatenated), the legacy
//! `function_call` deltas as one call of their own after them (native
//! calls and a legacy call are one set, as a response's). An `error` carrying
//! `failed_generation` ends the stream with that text as its output. An SSE
//! `error:` field (llama.cpp's mid-stream failure, [`is_error_field`]) is an
//! error event in every stream kind.
//!
//! OpenAI Responses: `event:`/`data:` pairs of `response.*` events — the
//! lifecycle (`response.created` … `response.completed`/`.incomplete`/
//! `.failed`), `response.output_item.added`/`.done`, and the deltas of
//! output text, reasoning (summary and text), function-call arguments and
//! custom-tool input, each by `output_index` (or `item_id`). The equivalent
//! response is read by [`responses::document`].
//!
//! Anthropic Messages: `event:`/`data:` pairs — `message_start`,
//! `content_block_start`, `content_block_delta` (`text_delta`,
//! `thinking_delta`, `input_json_delta` accumulated per block `index`),
//! `content_block_stop`, `message_delta` (`stop_reason`), `message_stop`;
//! `ping` (a keep-alive) is part of no message and begins none. A block
//! event without an integer `index`, a block started twice, a delta other
//! than text of a block never started, a delta of a block after its
//! `content_block_stop`, or a block event or `message_delta` after
//! `message_stop` makes the message a load error
//! (`AnthropicStream::broken`): a lost, merged or grown block could be a
//! call. A message that reached `message_stop` ended whole, with or without
//! a `stop_reason` (as a chat stream that reached `[DONE]`).
//!
//! One file may hold several streams one after the other: `[DONE]`, a
//! Responses terminal event or `message_stop` ends one, and so does the
//! start of the next (`message_start`, `response.created`, a chunk of
//! another completion): a stream without its end is kept and marked
//! `import.unterminated` — unless it is a chat stream whose every choice
//! finished — and read as cut by the token limit: its last call (in a chat
//! stream, that of each choice without a `finish_reason`) is cut off
//! ([`cut_unterminated`]). A chat chunk of another `id` begins the next stream only when
//! the current one finished, kept one id over several chunks, or the chunk
//! opens a completion (`role`, from a server that sends it on openings
//! only): some servers give every chunk an id of its own, and their
//! stream stays one ([`OpenaiStream::begins_another`]). A usage chunk
//! without choices belongs to the stream before it, whatever its `id`. The
//! one case this cannot tell apart: a stream cut off after its opening chunk
//! and followed by another completion is read as one. A chat choice that ends in a provider error is refused; the
//! stream's other choices are still read. Bare JSON lines
//! of chunks or events read too (and, through `super::convert`, one JSON
//! array of them). A stream's request (its tools) comes from a companion
//! `STEM.request.json` beside the file. Counts are capped while reading
//! ([`MAX_STREAM_CHOICES`], [`MAX_STREAM_PARTS`], [`MAX_FILE_STREAMS`],
//! [`MAX_LINE_ERRORS`]), each cap with an error saying what was not read.

use super::{
    Converted, FailedGeneration, Kind, NoteKind, Record, add_note, anthropic, error_what, openai,
    responses, str_of,
};
use crate::delta::{CallSlots, Fragment, Placed};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// (line, reason) of a stream line that could not be read.
pub(crate) type LineError = (Option<usize>, String);

/// Whether `finish_reason` is one of the reasons a generation ends on its
/// own — `stop`, `tool_calls`, `function_call`, or a server's spelling of
/// those (`eos`, `end_turn`, `stop_sequence`, `tool_use`) — after which a
/// tool call that carried no arguments at all is a call without arguments
/// (`{}`, noted [`NoteKind::ArgumentsAbsent`]). Any other reason (the token
/// limit, a filter, one unknown here) may have cut the call before its
/// arguments: it is never read as `{}`, and stays `""` (truncation, SPEC §9
/// `native`).
pub(crate) fn ends_on_its_own(finish_reason: &str) -> bool {
    matches!(
        finish_reason,
        "stop" | "tool_calls" | "function_call" | "eos" | "end_turn" | "stop_sequence" | "tool_use"
    )
}

/// One SSE payload: its line, the `data:` text (or a bare JSON line) and
/// the `event:` name of its event, when one was given; or the value of an
/// `error:` field ([`is_error_field`]).
struct Payload<'a> {
    line: usize,
    data: Cow<'a, str>,
    event: Option<&'a str>,
    /// The payload is an `error:` field's value, not an event's data.
    error_field: bool,
}

/// An SSE line's field name and value, as the event-stream format splits
/// them: the name up to the first `:`, the value after it without one
/// leading space; a line without `:` is a field with an empty value.
pub fn sse_field(line: &str) -> (&str, &str) {
    match line.split_once(':') {
        Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
        None => (line, ""),
    }
}

/// Whether an SSE field ([`sse_field`]) reports the upstream's failure:
/// llama.cpp's server writes a failure mid-stream as an `error:` field,
/// then `data: [DONE]`. The standard ignores a field it does not know, so
/// a stream read by it alone ends cleanly with the error dropped and what
/// the failure cut read as the answer. One rule for the proxy's stream
/// reader (an error where the field stands) and the importer (an error
/// event: the stream it interrupts is not imported).
pub fn is_error_field(field: &str) -> bool {
    field == "error"
}

/// The lines of `text` as the event-stream format ends them: at CRLF, at
/// LF, or at a lone CR (WHATWG HTML, "Parsing an event stream").
pub(crate) fn sse_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let t = rest?;
        match t.find(['\r', '\n']) {
            Some(i) => {
                let end = if t[i..].starts_with("\r\n") {
                    i + 2
                } else {
                    i + 1
                };
                rest = Some(&t[end..]).filter(|r| !r.is_empty());
                Some(&t[..i])
            }
            None => {
                rest = None;
                Some(t)
            }
        }
    })
}

/// The payloads of `text`, read lazily (a big capture is not listed first).
///
/// As the event-stream format reads them: lines end at CRLF, LF or CR; the
/// `data:` fields of one event (up to the blank line that dispatches it)
/// are one payload, joined with `\n` (a server may split one JSON object
/// over several `data:` lines); an `event:` field names the event's
/// payloads. A capture cut off inside an event still yields what it holds.
///
/// Captures that dropped the blank lines between events (logs, hand-made
/// files) hold one JSON object per `data:` line with no event boundary:
/// when the joined data of an event is not one JSON value, each of its
/// `data:` lines is read as a payload of its own, as they were written.
/// Joining JSON texts never makes one JSON value, so a stream written
/// either way reads as its author meant; a payload that is broken either
/// way is reported line by line.
///
/// A line that opens with `{` is a payload of its own (a JSON-lines
/// capture of chunks); `id:`, `retry:`, comments (`:`) and other lines
/// carry no payload.
fn payloads(text: &str) -> impl Iterator<Item = Payload<'_>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = sse_lines(text).enumerate();
    let mut event: Option<&str> = None;
    // The current event's `data:` lines: (1-based line, text).
    let mut data: Vec<(usize, &str)> = Vec::new();
    let mut ready: VecDeque<Payload<'_>> = VecDeque::new();
    let mut ended = false;
    std::iter::from_fn(move || {
        loop {
            if let Some(p) = ready.pop_front() {
                return Some(p);
            }
            if ended {
                return None;
            }
            let Some((i, line)) = lines.next() else {
                ended = true;
                dispatch(&mut data, event, &mut ready);
                continue;
            };
            if line.trim().is_empty() {
                dispatch(&mut data, event, &mut ready);
                event = None;
            } else if let Some(name) = line.strip_prefix("event:") {
                event = Some(name.trim());
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push((i + 1, rest.strip_prefix(' ').unwrap_or(rest)));
            } else if is_error_field(sse_field(line).0) {
                // At its line, before the data of its event (dispatched at
                // the blank line after it): the stream breaks here.
                ready.push_back(Payload {
                    line: i + 1,
                    data: Cow::Borrowed(sse_field(line).1),
                    event,
                    error_field: true,
                });
            } else if line.trim_start().starts_with('{') {
                dispatch(&mut data, event, &mut ready);
                ready.push_back(Payload {
                    line: i + 1,
                    data: Cow::Borrowed(line.trim()),
                    event,
                    error_field: false,
                });
            }
            // `id:`, `retry:`, comments and other lines carry no payload.
        }
    })
}

/// Dispatches the `data:` lines of one event ([`payloads`]): one payload,
/// or one per line when their join is not one JSON value.
fn dispatch<'a>(
    data: &mut Vec<(usize, &'a str)>,
    event: Option<&'a str>,
    ready: &mut VecDeque<Payload<'a>>,
) {
    match data.as_slice() {
        [] => {}
        [(line, text)] => ready.push_back(Payload {
            line: *line,
            data: Cow::Borrowed(text),
            event,
            error_field: false,
        }),
        [(line, _), ..] => {
            let joined = data.iter().map(|(_, t)| *t).collect::<Vec<_>>().join("\n");
            if serde_json::from_str::<serde::de::IgnoredAny>(&joined).is_ok() {
                ready.push_back(Payload {
                    line: *line,
                    data: Cow::Owned(joined),
                    event,
                    error_field: false,
                });
            } else {
                ready.extend(data.iter().map(|(line, text)| Payload {
                    line: *line,
                    data: Cow::Borrowed(text),
                    event,
                    error_field: false,
                }));
            }
        }
    }
    data.clear();
}

/// Most choice indexes one chat-completions stream may have: the limit of a
/// chat completion's choices ([`super::openai`]), streamed or not.
pub(crate) use super::openai::MAX_STREAM_CHOICES;
/// Most tool calls of one streamed choice, output items of one Responses
/// stream, or content blocks of one Anthropic message.
pub(crate) const MAX_STREAM_PARTS: usize = 1024;
/// Most streams one capture file may hold; the rest of the file is not read.
pub(crate) const MAX_FILE_STREAMS: usize = 10_000;
/// Most unreadable lines reported one by one per file; the rest are counted.
pub(crate) const MAX_LINE_ERRORS: usize = 100;

/// What a stream file yields, with its line errors capped so that a file of
/// bad lines cannot grow memory by one error per line.
#[derive(Default)]
struct Out {
    items: Vec<Result<Record, LineError>>,
    errors: usize,
}

impl Out {
    fn err(&mut self, line: Option<usize>, reason: String) {
        self.errors += 1;
        if self.errors <= MAX_LINE_ERRORS {
            self.items.push(Err((line, reason)));
        }
    }

    fn ok(&mut self, record: Record) {
        self.items.push(Ok(record));
    }

    /// The records one stream converted to, each finished by `finish` (which
    /// gets the record's index among them), or the reason it did not convert.
    fn records(
        &mut self,
        line: Option<usize>,
        converted: Converted,
        mut finish: impl FnMut(usize, &mut Map<String, Value>),
    ) {
        match converted {
            Ok(records) => {
                for (i, (id, mut object)) in records.into_iter().enumerate() {
                    finish(i, &mut object);
                    self.ok(Record { line, id, object });
                }
            }
            Err(reason) => self.err(line, reason),
        }
    }

    fn done(mut self) -> Vec<Result<Record, LineError>> {
        if self.errors > MAX_LINE_ERRORS {
            self.items.push(Err((
                None,
                format!(
                    "{} more errors not shown (only the first {MAX_LINE_ERRORS} are reported)",
                    self.errors - MAX_LINE_ERRORS
                ),
            )));
        }
        self.items
    }
}

/// The error for a stream beyond [`MAX_FILE_STREAMS`].
fn too_many_streams(line: usize) -> String {
    format!(
        "more than {MAX_FILE_STREAMS} streams in one file: line {line} and the rest are not read"
    )
}

/// What one event did to the stream being read ([`split_streams`]).
enum Step {
    /// An error event (the reason): it ends the stream it interrupts, which
    /// is not imported (a provider error is never a transcript).
    Error(String),
    /// An error inside the stream (the reason), which the stream's own
    /// payloads may still follow (OpenAI's `data: {"error"}` before its
    /// `[DONE]`): the stream is not imported, and the payloads up to its end
    /// (`[DONE]`, or the next stream's start) are dropped with it rather
    /// than read as a stream of their own.
    ErrorWithin(String),
    /// Read into the current stream.
    Fed,
    /// Part of no stream (Anthropic's `ping` keep-alive): begins none.
    Skip,
    /// Ends the current stream, if one has begun (a `message_stop` before
    /// any event of a message).
    Close,
    /// Read into the current stream, which it ends (a terminal event).
    FedAndClosed,
    /// Begins a new stream (a second `message_start`, `response.created`,
    /// a chunk of another completion): the current one ends before it —
    /// without its terminal event, so cut off unless it finished — and the
    /// event is read into a new stream. Nothing of one response is read
    /// into another.
    Begins,
}

/// The streams of a capture file, cut the one way every provider's streams
/// are: payloads read in order, at most [`MAX_FILE_STREAMS`] streams (the
/// rest of the file is not read and the file says so), `[DONE]` closing a
/// stream when `done_closes`, and every JSON object handed to `event` (with
/// whether its SSE `event:` name is `error`). Each stream comes with whether
/// it was cut off: it ended without its terminal event (the file ended, or
/// the next stream began, inside it) and `finished` does not say it
/// finished anyway (an OpenAI stream whose every choice has its
/// `finish_reason`).
///
/// A stream is not imported when it cannot be read whole (fail-closed: a
/// provider error never becomes a transcript, and a lost payload could have
/// held a call):
/// - an error event ([`Step::Error`], [`Step::ErrorWithin`]) ends the
///   stream it interrupts, which is dropped; the one error, at the event's
///   line, says so;
/// - an unreadable payload, or one that is not a JSON object (`noun` names
///   what the provider calls a payload), is reported at its line and the
///   stream holding it is dropped when it ends.
fn split_streams<S: Default>(
    text: &str,
    out: &mut Out,
    done_closes: bool,
    noun: &str,
    mut event: impl FnMut(&mut S, &Value, usize, bool) -> Step,
    finished: impl Fn(&S) -> bool,
) -> Vec<(usize, S, bool)> {
    let mut st = Split {
        streams: Vec::new(),
        current: S::default(),
        first: None,
        lost: false,
        dropping: false,
    };
    let lost_why = |what: String| {
        format!(
            "{what} (a lost {noun} could have held a call: the stream holding this line is not imported)"
        )
    };
    for p in payloads(text) {
        if st.streams.len() >= MAX_FILE_STREAMS {
            out.err(Some(p.line), too_many_streams(p.line));
            st.first = None;
            st.dropping = true;
            break;
        }
        let mut close = !p.error_field && done_closes && p.data.trim() == "[DONE]";
        if !close {
            let v = match crate::strict::from_str(&p.data) {
                // An `error:` field is an error event's payload whatever
                // it holds: its object, else its text.
                Ok(v) if p.error_field && v.is_object() => v,
                _ if p.error_field => Value::String(p.data.trim().to_string()),
                Ok(v) if v.is_object() => v,
                Ok(_) => {
                    out.err(
                        Some(p.line),
                        lost_why(format!("the {noun} is not a JSON object")),
                    );
                    st.lost = true;
                    continue;
                }
                Err(e) => {
                    out.err(Some(p.line), lost_why(crate::strict::reason(&e)));
                    st.lost = true;
                    continue;
                }
            };
            let error_event = p.event == Some("error") || p.error_field;
            let mut step = event(&mut st.current, &v, p.line, error_event);
            if let Step::Begins = step {
                st.end(true, &finished);
                // A stream that stays open to its next one's start (an
                // Anthropic message after its `message_stop`) is counted
                // there: this event begins the one over the cap.
                if st.streams.len() >= MAX_FILE_STREAMS {
                    out.err(Some(p.line), too_many_streams(p.line));
                    st.dropping = true;
                    break;
                }
                step = match event(&mut st.current, &v, p.line, error_event) {
                    // A new stream begins nothing before it.
                    Step::Begins => Step::Fed,
                    step => step,
                };
            }
            // The stream's own payloads still follow an `error:` field
            // (llama.cpp's `[DONE]`): dropped with it up to its end.
            if p.error_field
                && let Step::Error(why) = step
            {
                step = Step::ErrorWithin(why);
            }
            match step {
                Step::Error(_) | Step::ErrorWithin(_) if st.dropping => {
                    // The stream is dropped, and its error already said so.
                    if matches!(step, Step::Error(_)) {
                        st.dropping = false;
                        st.current = S::default();
                    }
                    continue;
                }
                Step::Error(ref reason) | Step::ErrorWithin(ref reason) => {
                    let within = matches!(step, Step::ErrorWithin(_));
                    let reason = match st.first.take() {
                        Some(begun) => {
                            format!("{reason} (the stream from line {begun} is not imported)")
                        }
                        None => reason.clone(),
                    };
                    out.err(Some(p.line), reason);
                    st.lost = false;
                    if within {
                        // Kept to tell where the stream ends; never imported.
                        st.dropping = true;
                    } else {
                        st.current = S::default();
                    }
                    continue;
                }
                Step::Fed | Step::FedAndClosed if !st.dropping => {
                    st.first.get_or_insert(p.line);
                }
                _ => {}
            }
            close = matches!(step, Step::Close | Step::FedAndClosed);
        }
        if close {
            st.end(false, &finished);
        }
    }
    st.end(true, &finished);
    st.streams
}

/// [`split_streams`]'s state: the streams read so far and the one being read.
struct Split<S> {
    /// (first line, stream, cut off) of each stream kept.
    streams: Vec<(usize, S, bool)>,
    current: S,
    /// The line the current stream began at, once an event fed it.
    first: Option<usize>,
    /// A payload of the current stream could not be read: it is dropped.
    lost: bool,
    /// The current stream was interrupted by an error ([`Step::ErrorWithin`]):
    /// its payloads up to its end are dropped with it.
    dropping: bool,
}

impl<S: Default> Split<S> {
    /// Ends the current stream, kept unless lost or dropped; `cut` when
    /// without its terminal event (cut off unless `finished` says otherwise).
    fn end(&mut self, cut: bool, finished: &impl Fn(&S) -> bool) {
        let stream = std::mem::take(&mut self.current);
        if let Some(line) = self.first.take()
            && !self.lost
            && !self.dropping
        {
            let cut_off = cut && !finished(&stream);
            self.streams.push((line, stream, cut_off));
        }
        self.lost = false;
        self.dropping = false;
    }
}

/// The id suffix of a file's stream: its first line when the file holds
/// more than one stream, so that each record's id is distinct.
fn stream_suffix(count: usize, line: Option<usize>) -> String {
    if count > 1 {
        format!(":{}", line.unwrap_or(0))
    } else {
        String::new()
    }
}

/// Cuts the last call of a transcript read from a stream that did not end
/// (`import.unterminated`; for a chat stream, a choice without its
/// `finish_reason`), one rule for every stream importer.
///
/// Without its end the stream never said why the answer stopped, so it is
/// read as stopped by the token limit: its last call is cut off whatever
/// its arguments hold ([`super::cut_last_call`]) — whole-looking JSON
/// may be the first of its keys, and later parallel calls may be lost.
/// Its arguments become `""`, which SPEC §5 rule 5 labels `truncation` for
/// a native call, so nothing executes; the arguments received are kept in
/// `import.truncated_input`, unless nothing was received (`""`) or an
/// importer already kept them there (a Responses item cut by its status).
fn cut_unterminated(object: &mut Map<String, Value>) {
    // Taken out and put back in place (the two members are borrowed at
    // once), so that the record keeps its members' order.
    let Some(Value::Array(slot)) = object.get_mut("tool_calls") else {
        return;
    };
    let mut calls = std::mem::take(slot);
    if let Some(Value::Object(info)) = object.get_mut(super::IMPORT_MEMBER) {
        super::cut_last_call_into(&mut calls, info);
    }
    if let Some(Value::Array(slot)) = object.get_mut("tool_calls") {
        *slot = calls;
    }
}

/// Where a stream stands in its file.
struct Place {
    /// The line of its first payload.
    line: Option<usize>,
    /// Its id suffix ([`stream_suffix`]).
    suffix: String,
    /// The file ended inside it.
    unterminated: bool,
}

/// Every stream of a capture file, converted: [`split_streams`] cuts them,
/// then `convert` turns each (with its [`Place`]) into records or errors.
fn read_streams<S: Default>(
    text: &str,
    done_closes: bool,
    noun: &str,
    event: impl FnMut(&mut S, &Value, usize, bool) -> Step,
    finished: impl Fn(&S) -> bool,
    mut convert: impl FnMut(S, Place, &mut Out),
) -> Vec<Result<Record, LineError>> {
    let mut out = Out::default();
    let streams = split_streams(text, &mut out, done_closes, noun, event, finished);
    let count = streams.len();
    for (line, stream, cut_off) in streams {
        let line = Some(line);
        let place = Place {
            line,
            suffix: stream_suffix(count, line),
            unterminated: cut_off,
        };
        convert(stream, place, &mut out);
    }
    out.done()
}

/// Every stream of a capture file of the stream kind `kind`, converted.
pub(crate) fn streams(
    kind: Kind,
    text: &str,
    request: Option<&Value>,
) -> Vec<Result<Record, LineError>> {
    match kind {
        Kind::OpenaiStream => read_streams(
            text,
            true,
            "chunk",
            openai_event,
            OpenaiStream::finished,
            |s, at, out| openai_stream(s, at, request, out),
        ),
        // Without `message_stop`, a message never finished.
        Kind::AnthropicStream => read_streams(
            text,
            false,
            "event",
            anthropic_event,
            |s: &AnthropicStream| s.ended,
            |s, at, out| anthropic_stream(s, at, request, out),
        ),
        _ => read_streams(
            text,
            true,
            "event",
            responses_event,
            |_| false,
            |s, at, out| responses_stream(s, at, request, out),
        ),
    }
}

/// OpenAI or Anthropic, from the first payload that says.
pub(crate) fn stream_kind(text: &str) -> Kind {
    for p in payloads(text).take(8) {
        if p.error_field {
            continue;
        }
        if p.data.trim() == "[DONE]" {
            return Kind::OpenaiStream;
        }
        if !crate::nodes::too_many_in_document(p.data.as_bytes())
            && let Ok(v) = serde_json::from_str::<Value>(&p.data)
        {
            if v.get("object").and_then(Value::as_str) == Some("chat.completion.chunk")
                || v.get("choices").is_some()
            {
                return Kind::OpenaiStream;
            }
            if matches!(
                v.get("type").and_then(Value::as_str),
                Some("message_start" | "content_block_start" | "content_block_delta" | "ping")
            ) {
                return Kind::AnthropicStream;
            }
            if is_responses_event(&v) {
                return Kind::ResponsesStream;
            }
        }
    }
    Kind::OpenaiStream
}

#[derive(Default)]
struct OpenaiChoice {
    content: String,
    chunks: Vec<String>,
    reasoning: Option<String>,
    /// `refusal` deltas, concatenated.
    refusal: Option<String>,
    calls: StreamedCalls,
    /// The legacy `function_call` deltas: one call of its own, listed after
    /// `calls` (read at index 0 of `calls`, beside a native call it was
    /// merged into that call, its name lost).
    legacy: StreamedCalls,
    finish: Option<String>,
}

/// The tool calls of one streamed choice, told apart by their fragments
/// as the proxy tells them apart ([`crate::delta::CallSlots`]).
#[derive(Default)]
struct StreamedCalls {
    /// Which call each fragment belongs to.
    slots: CallSlots,
    /// The calls in arrival order (`slots`' numbers).
    list: Vec<StreamedCall>,
}

/// Why a streamed call fragment was not read.
enum Unread {
    /// A new call past [`MAX_STREAM_PARTS`].
    Capped,
    /// [`crate::delta::UNPLACEABLE`].
    Unplaceable,
}

impl StreamedCalls {
    /// Adds one fragment: `{"id", "function": {"name", "arguments"}}` at
    /// `index` (`position` in its list), or, `index` `None` with `legacy`,
    /// a legacy `function_call` delta ([`Fragment::legacy`]: its one call).
    fn feed(
        &mut self,
        index: Option<u64>,
        position: u64,
        fragment: &Value,
        legacy: bool,
    ) -> Result<(), Unread> {
        // An empty id (sent on continuation fragments by some servers) is none.
        let id = fragment
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty() && !legacy);
        let f = fragment.get("function").unwrap_or(fragment);
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty());
        let text = match f.get("arguments") {
            None | Some(Value::Null) => None,
            Some(Value::String(a)) => Some(Cow::Borrowed(a.as_str())),
            // Arguments sent as a JSON value rather than its text: its text,
            // never dropped (a call must not pass with fewer arguments than
            // the model wrote).
            Some(other) => Some(Cow::Owned(other.to_string())),
        };
        let fragment = match legacy {
            true => Fragment::legacy(name, text.as_deref()),
            false => Fragment {
                index,
                index_filled: false,
                position,
                id,
                name,
                arguments: text.as_deref(),
            },
        };
        let placed = self.slots.place(&fragment, MAX_STREAM_PARTS);
        let n = match placed {
            Placed::Call { n, .. } => n,
            Placed::Capped => return Err(Unread::Capped),
            Placed::Unplaceable => return Err(Unread::Unplaceable),
        };
        if n >= self.list.len() {
            self.list.resize_with(n + 1, StreamedCall::default);
        }
        let entry = &mut self.list[n];
        // The first id stands; the name is the slots' ([`CallSlots::name`]).
        if let Some(id) = id {
            entry.id.get_or_insert_with(|| id.to_string());
        }
        if let Some(text) = text {
            entry
                .arguments
                .get_or_insert_with(String::new)
                .push_str(&text);
        }
        Ok(())
    }

    /// Wire indexes that distinct calls (by `id`) shared.
    fn reused(&self) -> Vec<i64> {
        self.slots
            .reused()
            .iter()
            .map(|&i| i64::try_from(i).unwrap_or(i64::MAX))
            .collect()
    }

    /// The calls in order: by wire index, then arrival.
    fn into_calls(self) -> Vec<StreamedCall> {
        let slots = self.slots;
        let mut list: Vec<_> = self.list.into_iter().enumerate().collect();
        list.sort_by_key(|(n, _)| slots.key(*n));
        list.into_iter()
            .map(|(n, mut call)| {
                let name = slots.name(n);
                if !name.is_empty() {
                    call.name = Some(name.to_string());
                }
                call
            })
            .collect()
    }
}

/// One tool call reassembled from its deltas.
#[derive(Default)]
struct StreamedCall {
    id: Option<String>,
    name: Option<String>,
    /// The concatenated `arguments` strings; `None` while every delta's
    /// `arguments` was null or absent.
    arguments: Option<String>,
}

/// A chat stream read to its end.
struct Finished {
    /// The equivalent non-streamed response.
    response: Value,
    /// Each choice's content chunks.
    chunks: BTreeMap<i64, Vec<String>>,
    /// Choices with a complete call that carried no argument text.
    without_arguments: Vec<i64>,
    /// Choices whose distinct calls shared a wire `index`, with those indexes.
    reused: Vec<(i64, Vec<i64>)>,
    /// Choices without a `finish_reason`: in a stream that did not end,
    /// their last call is cut ([`cut_unterminated`]).
    unfinished: Vec<i64>,
}

#[derive(Default)]
struct OpenaiStream {
    id: Option<String>,
    model: Option<String>,
    usage: Option<Value>,
    choices: BTreeMap<i64, OpenaiChoice>,
    /// The error that ended the stream carried the model's text.
    failed: Option<FailedGeneration>,
    /// Why some deltas were not read ([`MAX_STREAM_CHOICES`],
    /// [`MAX_STREAM_PARTS`]); reported once for the stream.
    capped: Option<String>,
    /// Some chunk had `choices` (else this is no chat-completions stream).
    saw_choices: bool,
    /// Why the stream cannot be read (a `finish_reason` that is not a
    /// string): it is not imported.
    invalid: Option<String>,
    /// Choices that ended in a provider error, with the error's line and
    /// reason: refused, and their later deltas not read; the stream's other
    /// choices are still its answers ([`openai::choice_error`]).
    errored: BTreeMap<i64, (usize, String)>,
    /// How many chunks with an `id` were read, and whether those ids
    /// differed: a server that keeps one id per completion, or one that
    /// gives every chunk its own ([`Self::begins_another`]).
    id_chunks: usize,
    ids_differ: bool,
    /// Some chunk with choices had no `role` in any delta: the server sends
    /// `role` on a completion's opening chunk only, so a chunk with one
    /// opens a completion.
    roleless_chunk: bool,
}

impl OpenaiStream {
    /// Whether the stream finished though it never reached `[DONE]`: every
    /// choice it has has its `finish_reason` (a file of chunks without
    /// `[DONE]`, one completion after another).
    fn finished(&self) -> bool {
        !(self.choices.is_empty() && self.errored.is_empty())
            && self.choices.values().all(|c| c.finish.is_some())
    }

    /// Whether chunk `v` is no part of this stream but the start of the
    /// next.
    ///
    /// A chunk of another `id` is another completion's when this stream
    /// finished (every choice it has seen has its `finish_reason`), when
    /// this stream kept one id over several chunks (a cut-off stream, then
    /// the next), or when the chunk opens a completion (`role` in a delta)
    /// and this server sends `role` on openings only. Otherwise the server
    /// gives every chunk an id of its own (LiteLLM for providers without an
    /// upstream id, Foundry Local, old llama.cpp and ms-swift) and the
    /// chunk is this stream's. A chunk without choices (the trailing usage
    /// chunk) never begins a stream: it carries no answer. Without `id`s,
    /// a delta for a choice that already finished begins the next stream.
    fn begins_another(&self, v: &Value) -> bool {
        if self.choices.is_empty() && self.errored.is_empty() {
            // Not begun: Azure's prompt-filter chunk (`id` `""`, no choices)
            // opens the stream whose chunks follow.
            return false;
        }
        let choices = v
            .get("choices")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if choices.is_empty() {
            return false;
        }
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        if let (Some(mine), Some(id)) = (&self.id, id) {
            if mine == id {
                return false;
            }
            let opens = choices
                .iter()
                .any(|c| c.pointer("/delta/role").is_some_and(Value::is_string));
            if self.finished()
                || (self.id_chunks >= 2 && !self.ids_differ)
                || (opens && self.roleless_chunk)
            {
                return true;
            }
        }
        choices.iter().enumerate().any(|(pos, c)| {
            let index = c.get("index").and_then(Value::as_i64).unwrap_or(pos as i64);
            // An errored choice has ended too.
            let finished = self.errored.contains_key(&index)
                || self.choices.get(&index).is_some_and(|c| c.finish.is_some());
            finished && c.get("delta").is_some_and(carries_text)
        })
    }

    fn feed(&mut self, v: &Value) {
        if let Some(id) = v
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
        {
            let mine = self.id.get_or_insert_with(|| id.to_string());
            self.ids_differ |= mine != id;
            self.id_chunks += 1;
        }
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model.get_or_insert_with(|| m.to_string());
        }
        // Groq puts the usage of a stream under `x_groq`.
        let usage = v.get("usage").or_else(|| v.pointer("/x_groq/usage"));
        if let Some(u) = usage.filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(choices) = v.get("choices").and_then(Value::as_array) else {
            return;
        };
        self.saw_choices = true;
        if !choices.is_empty()
            && !choices
                .iter()
                .any(|c| c.pointer("/delta/role").is_some_and(Value::is_string))
        {
            self.roleless_chunk = true;
        }
        for (pos, c) in choices.iter().enumerate() {
            let index = c.get("index").and_then(Value::as_i64).unwrap_or(pos as i64);
            if self.errored.contains_key(&index) {
                // What follows a choice's error (a trailing `finish_reason`,
                // usage) is no answer either.
                continue;
            }
            if self.choices.len() >= MAX_STREAM_CHOICES && !self.choices.contains_key(&index) {
                self.capped.get_or_insert_with(|| {
                    format!("more than {MAX_STREAM_CHOICES} choice indexes in one stream: choice {index} and later new ones are not read")
                });
                continue;
            }
            let acc = self.choices.entry(index).or_default();
            match c.get("finish_reason") {
                None | Some(Value::Null) => {}
                // `""` (SGLang 0.4.3, Ollama in 2024) and `"null"`
                // (KoboldCpp) on every chunk are no finish; the first
                // finish stands (Dynamo repeats an empty `stop` after
                // `tool_calls`), as the proxy reads a stream.
                Some(Value::String(f)) if f.is_empty() || f == "null" => {}
                Some(Value::String(f)) => {
                    acc.finish.get_or_insert_with(|| f.clone());
                }
                Some(_) => {
                    self.invalid.get_or_insert_with(|| {
                        format!("choice {index}: `finish_reason` must be a string or null")
                    });
                }
            }
            let Some(delta) = c.get("delta") else {
                continue;
            };
            match delta.get("content") {
                Some(Value::String(t)) if !t.is_empty() => {
                    acc.content.push_str(t);
                    acc.chunks.push(t.clone());
                }
                // Content parts (Mistral's Magistral streams `text` and
                // `thinking` parts): text is content, thinking reasoning.
                Some(content @ Value::Array(parts)) => {
                    for part in parts {
                        let text = match part {
                            Value::String(t) => Some(t.as_str()),
                            _ if part.get("type").and_then(Value::as_str) == Some("text") => {
                                part.get("text").and_then(Value::as_str)
                            }
                            _ => None,
                        };
                        if let Some(t) = text.filter(|t| !t.is_empty()) {
                            acc.content.push_str(t);
                            acc.chunks.push(t.to_string());
                        }
                    }
                    if let Some(r) = openai::thinking_text(Some(content)) {
                        acc.reasoning.get_or_insert_with(String::new).push_str(&r);
                    }
                }
                _ => {}
            }
            if let Some(t) = delta
                .get("refusal")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                acc.refusal.get_or_insert_with(String::new).push_str(t);
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(t) = delta.get(key).and_then(Value::as_str) {
                    acc.reasoning.get_or_insert_with(String::new).push_str(t);
                    break;
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (k, call) in calls.iter().enumerate() {
                    if openai::is_custom_call(call) {
                        self.invalid.get_or_insert_with(|| {
                            openai::custom_call(
                                &format!("choice {index}: a streamed tool call"),
                                call,
                            )
                        });
                        continue;
                    }
                    let i = call.get("index").and_then(Value::as_u64);
                    match acc.calls.feed(i, k as u64, call, false) {
                        Ok(()) => {}
                        Err(Unread::Capped) => {
                            self.capped.get_or_insert_with(|| {
                                format!("more than {MAX_STREAM_PARTS} tool calls in choice {index}: the later ones are not read")
                            });
                        }
                        Err(Unread::Unplaceable) => {
                            self.invalid.get_or_insert_with(|| {
                                format!("choice {index}: {}", crate::delta::UNPLACEABLE)
                            });
                        }
                    }
                }
            }
            // The legacy functions API streams one call as `function_call`.
            if let Some(call) = delta.get("function_call").filter(|f| f.is_object()) {
                // Its one call, named by the rule of every streamed call
                // (a name repeated in every fragment is read once): at
                // `index` 0 without an id, never unplaceable (that needs no
                // index) nor a second call.
                if let Err(Unread::Capped) = acc.legacy.feed(None, 0, call, true) {
                    self.capped.get_or_insert_with(|| {
                        format!("more than {MAX_STREAM_PARTS} legacy function calls in choice {index}: the later ones are not read")
                    });
                }
            }
        }
    }

    /// The equivalent non-streamed response, each choice's chunks, and the
    /// choices whose calls had no argument text at all but are complete.
    ///
    /// `ended`: the stream ended with `[DONE]`. A call whose every
    /// `arguments` delta was null or absent is a call without arguments
    /// (`"{}"`) when its choice ended cleanly — `finish_reason` `stop`,
    /// `tool_calls`, `function_call` (or a server's spelling of those:
    /// `eos`, `end_turn`, `stop_sequence`, `tool_use`), or none in a stream
    /// that ended — and stays `""` (truncation, SPEC §9 `native`) when the
    /// stream was cut off or ended for any other reason (`length`,
    /// `content_filter`, one unknown here). Choices ending in a provider
    /// error never get here ([`openai::choice_error`]).
    fn finish(self, ended: bool) -> Finished {
        let mut chunks = BTreeMap::new();
        let mut choices = Vec::new();
        let mut without_arguments = Vec::new();
        let mut reused = Vec::new();
        let mut unfinished = Vec::new();
        let mut all = self.choices;
        if let Some(failed) = &self.failed {
            // The model's whole text: what was streamed before the error is
            // its beginning, or it is replaced (`chunks` still concatenate
            // to `output`, SPEC §2).
            let c = all.entry(0).or_default();
            match failed.text.strip_prefix(c.content.as_str()) {
                Some(rest) if !c.content.is_empty() => {
                    if !rest.is_empty() {
                        c.chunks.push(rest.to_string());
                    }
                }
                _ if failed.text.is_empty() => c.chunks.clear(),
                _ => c.chunks = vec![failed.text.clone()],
            }
            c.content = failed.text.clone();
        }
        for (index, c) in all {
            let complete = match c.finish.as_deref() {
                Some(reason) => ends_on_its_own(reason),
                None => ended,
            };
            if c.finish.is_none() {
                unfinished.push(index);
            }
            let mut filled = false;
            let shared = c.calls.reused();
            if !shared.is_empty() {
                reused.push((index, shared));
            }
            let calls: Vec<Value> = c
                .calls
                .into_calls()
                .into_iter()
                .chain(c.legacy.into_calls())
                .map(|call| {
                    let arguments = match call.arguments {
                        Some(a) => a,
                        None if complete => {
                            filled = true;
                            "{}".to_string()
                        }
                        None => String::new(),
                    };
                    let mut out = Map::new();
                    if let Some(id) = call.id {
                        out.insert("id".into(), json!(id));
                    }
                    out.insert("type".into(), json!("function"));
                    out.insert(
                        "function".into(),
                        json!({"name": call.name.unwrap_or_default(), "arguments": arguments}),
                    );
                    Value::Object(out)
                })
                .collect();
            if filled {
                without_arguments.push(index);
            }
            let mut message = Map::new();
            message.insert("role".into(), json!("assistant"));
            message.insert("content".into(), json!(c.content));
            if let Some(r) = c.refusal {
                message.insert("refusal".into(), json!(r));
            }
            if let Some(r) = c.reasoning {
                message.insert("reasoning_content".into(), json!(r));
            }
            // Only a stream that sent calls holds the server's native calls:
            // `[]` would claim a parser that found none (a false
            // `server_dropped` beside raw markup), as a non-streamed answer
            // without `tool_calls` claims nothing.
            if !calls.is_empty() {
                message.insert("tool_calls".into(), Value::Array(calls));
            }
            choices.push(json!({"index": index, "message": Value::Object(message),
                "finish_reason": c.finish}));
            chunks.insert(index, c.chunks);
        }
        let mut response = Map::new();
        if let Some(id) = self.id {
            response.insert("id".into(), json!(id));
        }
        if let Some(m) = self.model {
            response.insert("model".into(), json!(m));
        }
        response.insert("choices".into(), Value::Array(choices));
        if let Some(u) = self.usage {
            response.insert("usage".into(), u);
        }
        Finished {
            response: Value::Object(response),
            chunks,
            without_arguments,
            reused,
            unfinished,
        }
    }
}

/// One payload of an OpenAI stream ([`split_streams`]).
///
/// An `error` member (not null), or a payload of an SSE `error` event, is
/// an error: the stream is not imported — unless it carries
/// `failed_generation` (Groq's `tool_use_failed`), the model's text.
fn openai_event(current: &mut OpenaiStream, v: &Value, line: usize, error_event: bool) -> Step {
    let error = v
        .get("error")
        .filter(|e| !e.is_null())
        .or(error_event.then_some(v));
    if let Some(e) = error {
        if let Some(failed) = FailedGeneration::of(e) {
            // The error ends the stream; the text it carries is the
            // model's output (noted on the transcript).
            current.failed = Some(failed);
            return Step::FedAndClosed;
        }
        let why = format!("the stream reports an error: {}", error_what(e));
        // An SSE `error` event ends the stream; an `error` chunk is still
        // followed by the stream's `[DONE]`.
        return if error_event {
            Step::Error(why)
        } else {
            Step::ErrorWithin(why)
        };
    }
    if current.begins_another(v) {
        return Step::Begins;
    }
    // A choice that ends in an error (OpenRouter's mid-stream error,
    // vLLM's and SGLang's `abort`) is refused; with `n` > 1 the stream's
    // other choices are still answers, each a transcript of its own.
    for (pos, c) in v
        .get("choices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let index = c.get("index").and_then(Value::as_i64).unwrap_or(pos as i64);
        if current.errored.contains_key(&index) {
            continue;
        }
        if let Some(why) = openai::choice_error(c) {
            current.choices.remove(&index);
            current
                .errored
                .insert(index, (line, format!("the stream's choice {index} {why}")));
        }
    }
    current.feed(v);
    Step::Fed
}

/// Whether a chunk's delta carries any of the model's text or calls (a
/// choice's closing chunk carries `{}`).
fn carries_text(delta: &Value) -> bool {
    delta.as_object().is_some_and(|d| {
        d.iter().any(|(k, v)| match v {
            Value::Null => false,
            Value::String(s) => k != "role" && !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => true,
        })
    })
}

/// One OpenAI stream of a capture file, converted.
fn openai_stream(stream: OpenaiStream, at: Place, request: Option<&Value>, out: &mut Out) {
    let Place {
        line,
        suffix,
        unterminated,
    } = at;
    let failed = stream.failed.as_ref().map(|f| f.what.clone());
    for (at, why) in stream.errored.values() {
        let what = if stream.choices.is_empty() {
            format!("the stream from line {} is not imported", line.unwrap_or(0))
        } else {
            "the stream's other choices are imported".to_string()
        };
        out.err(Some(*at), format!("{why} ({what})"));
    }
    if stream.choices.is_empty() && !stream.errored.is_empty() {
        return;
    }
    if !stream.saw_choices && failed.is_none() {
        out.err(line, "no chunk of this stream has `choices`: not a chat-completions stream (the streams read are OpenAI chat completions and Responses, and Anthropic Messages)".into());
        return;
    }
    if let Some(why) = stream.invalid {
        out.err(line, why);
        return;
    }
    if let Some(why) = &stream.capped {
        out.err(line, why.clone());
    }
    let Finished {
        response,
        chunks,
        without_arguments,
        reused,
        unfinished,
    } = stream.finish(!unterminated);
    let converted =
        openai::chat_records(request, &response, Map::new(), &suffix, Kind::OpenaiStream);
    out.records(line, converted, |i, object| {
        let index = object
            .get("sample")
            .and_then(Value::as_i64)
            .unwrap_or(i as i64);
        let parts = chunks.get(&index).cloned().unwrap_or_default();
        object.insert("chunks".into(), json!(parts));
        // A choice that finished is whole, even in a stream that did not end.
        if unterminated && unfinished.contains(&index) {
            cut_unterminated(object);
        }
        if let Some(Value::Object(info)) = object.get_mut(super::IMPORT_MEMBER) {
            if request.is_none() {
                info.insert(
                    "note".into(),
                    json!("no STEM.request.json beside the stream: tools unknown"),
                );
            }
            if unterminated {
                info.insert("unterminated".into(), json!(true));
            }
            if let Some(what) = failed.as_ref().filter(|_| index == 0) {
                add_note(
                    info,
                    NoteKind::FailedGeneration,
                    FailedGeneration::note(what),
                );
            }
            if let Some((_, slots)) = reused.iter().find(|(c, _)| *c == index) {
                add_note(
                    info,
                    NoteKind::IndexReused,
                    format!(
                        "the stream gave distinct calls (by `id`) the same `index` ({slots:?}): each was read as a call of its own"
                    ),
                );
            }
            if without_arguments.contains(&index) {
                add_note(info, NoteKind::ArgumentsAbsent, "a complete streamed call carried no `arguments` text (null or absent in every delta): read as `{}`".into());
            }
        }
    });
}

/// Appends `text` to the string member `key` of `block` in place (a copy of
/// the text so far per delta would make a long block quadratic).
fn append(block: &mut Map<String, Value>, key: &str, text: &str) {
    match block.get_mut(key) {
        Some(Value::String(s)) => s.push_str(text),
        _ => {
            block.insert(key.into(), json!(text));
        }
    }
}

#[derive(Default)]
struct AnthropicStream {
    message: Map<String, Value>,
    blocks: BTreeMap<i64, (Map<String, Value>, String)>,
    chunks: Vec<String>,
    stop_reason: Option<Value>,
    /// Why some blocks were not read ([`MAX_STREAM_PARTS`]).
    capped: Option<String>,
    /// Blocks that got their `content_block_stop`: a delta of one is
    /// refused ([`Self::broken`]).
    stopped: std::collections::BTreeSet<i64>,
    /// The message reached its `message_stop`: it ended whole
    /// ([`streams`]' `finished`), and a block event or `message_delta`
    /// after it is refused ([`Self::broken`]).
    ended: bool,
    /// Some event was read into it (a `message_start` then begins another).
    begun: bool,
    /// Why its content blocks cannot be read whole, when they cannot: a
    /// block event without an integer `index`, a block started twice, a
    /// delta of a block no `content_block_start` opened (a lost event), a
    /// delta of a block after its `content_block_stop`, a block event or
    /// `message_delta` after `message_stop`. The message is not imported: a
    /// lost, merged or grown block could have been a call.
    broken: Option<String>,
}

impl AnthropicStream {
    fn feed(&mut self, v: &Value) {
        self.begun = true;
        let kind = v.get("type").and_then(Value::as_str);
        let block_event = matches!(
            kind,
            Some("content_block_start" | "content_block_delta" | "content_block_stop")
        );
        // The message ended: what these add was never part of it (a client
        // that reads every event, as the Anthropic SDK's accumulator does,
        // would have grown the finished message).
        if self.ended && (block_event || kind == Some("message_delta")) {
            let kind = kind.unwrap_or_default();
            self.broken.get_or_insert_with(|| {
                format!("a `{kind}` after `message_stop`: the message had ended, and what the event adds was never part of it")
            });
            return;
        }
        let index = match v.get("index").and_then(Value::as_i64) {
            Some(i) => i,
            // Read as block 0, it would replace or extend another block.
            None if block_event => {
                let kind = kind.unwrap_or_default();
                self.broken.get_or_insert_with(|| {
                    format!("a `{kind}` without an integer `index`: which block it belongs to is unknown")
                });
                return;
            }
            None => 0,
        };
        if matches!(kind, Some("content_block_start" | "content_block_delta"))
            && self.blocks.len() >= MAX_STREAM_PARTS
            && !self.blocks.contains_key(&index)
        {
            self.capped.get_or_insert_with(|| {
                format!("more than {MAX_STREAM_PARTS} content blocks in one message: block {index} and later new ones are not read")
            });
            return;
        }
        match kind {
            Some("message_start") => {
                if let Some(Value::Object(m)) = v.get("message") {
                    self.message = m.clone();
                }
            }
            Some("content_block_start") => {
                if self.blocks.contains_key(&index) {
                    self.broken.get_or_insert_with(|| {
                        format!("content block {index} is started twice: the second start would replace what the first one received")
                    });
                    return;
                }
                if let Some(Value::Object(b)) = v.get("content_block") {
                    self.blocks.insert(index, (b.clone(), String::new()));
                }
            }
            Some("content_block_delta") => {
                let Some(delta) = v.get("delta") else { return };
                // Appended, it would change a call after it closed (read as
                // another call, or as cut).
                if self.stopped.contains(&index) {
                    self.broken.get_or_insert_with(|| {
                        format!("a `content_block_delta` of block {index} after its `content_block_stop`: a closed block cannot grow")
                    });
                    return;
                }
                let text = delta.get("type").and_then(Value::as_str) == Some("text_delta");
                // A text delta is text whatever start was lost; any other
                // delta needs its block's start (a tool call's name and id).
                if !text && !self.blocks.contains_key(&index) {
                    self.broken.get_or_insert_with(|| {
                        format!("a `content_block_delta` of block {index}, which no `content_block_start` opened (an event was lost: the block's type, and a tool call's name and id, are unknown)")
                    });
                    return;
                }
                let entry = self.blocks.entry(index).or_default();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = delta.get("text").and_then(Value::as_str) {
                            append(&mut entry.0, "text", t);
                            entry.0.entry("type").or_insert(json!("text"));
                            if !t.is_empty() {
                                self.chunks.push(t.to_string());
                            }
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(t) = delta.get("thinking").and_then(Value::as_str) {
                            append(&mut entry.0, "thinking", t);
                            entry.0.entry("type").or_insert(json!("thinking"));
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(t) = delta.get("partial_json").and_then(Value::as_str) {
                            entry.1.push_str(t);
                        }
                    }
                    _ => {}
                }
            }
            Some("content_block_stop") if self.blocks.contains_key(&index) => {
                self.stopped.insert(index);
            }
            Some("message_delta") => {
                if let Some(r) = v.get("delta").and_then(|d| d.get("stop_reason")) {
                    self.stop_reason = Some(r.clone());
                }
                if let Some(Value::Object(u)) = v.get("usage") {
                    let usage = self.message.entry("usage").or_insert_with(|| json!({}));
                    if let Value::Object(m) = usage {
                        m.extend(u.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// The equivalent non-streamed message.
    ///
    /// `ended`: the stream reached `message_stop`.
    fn finish(mut self, ended: bool) -> (Value, Vec<String>) {
        let mut content = Vec::new();
        for (index, (mut block, json)) in self.blocks {
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                // The accumulated partial JSON, kept as text so that a stream
                // cut off mid-call stays cut off; none at all means the
                // start event's (empty) input — unless the stream was cut
                // off before the block closed: then nothing of the input
                // arrived, and `""` says so (truncation, as for OpenAI).
                let cut = !ended && !self.stopped.contains(&index);
                let input = if json.is_empty() && cut {
                    json!("")
                } else if json.is_empty() {
                    block.get("input").cloned().unwrap_or(json!({}))
                } else {
                    json!(json)
                };
                block.insert("input".into(), input);
            }
            content.push(Value::Object(block));
        }
        self.message.insert("type".into(), json!("message"));
        self.message.insert("content".into(), Value::Array(content));
        if let Some(r) = self.stop_reason {
            self.message.insert("stop_reason".into(), r);
        }
        (Value::Object(self.message), self.chunks)
    }
}

/// One payload of an Anthropic stream ([`split_streams`]).
/// An `error` event (`overloaded_error` …) ends the stream unimported.
fn anthropic_event(
    current: &mut AnthropicStream,
    v: &Value,
    _line: usize,
    error_event: bool,
) -> Step {
    let kind = v.get("type").and_then(Value::as_str);
    match kind {
        // An error after the message ended interrupts no message: the
        // message stands, the error is said on its own.
        _ if current.ended && (error_event || kind == Some("error")) => Step::Begins,
        _ if error_event => Step::Error(stream_error(v)),
        Some("error") => Step::Error(stream_error(v)),
        // The message ended, whole: the stream stays open until the next
        // `message_start` (or the file's end), so that an event of the
        // message after its end is refused rather than read as a stream of
        // its own. A repeated `message_stop` adds nothing.
        Some("message_stop") if current.begun => {
            current.ended = true;
            Step::Fed
        }
        Some("message_stop") => Step::Close,
        // A keep-alive: part of no message. Fed, one before a
        // `message_start` (or between two messages) began a stream of its
        // own, imported as an empty answer (`no_call`).
        Some("ping") => Step::Skip,
        // The message before it never reached its `message_stop`.
        Some("message_start") if current.begun => Step::Begins,
        _ => {
            current.feed(v);
            Step::Fed
        }
    }
}

/// One Anthropic stream of a capture file, converted.
fn anthropic_stream(stream: AnthropicStream, at: Place, request: Option<&Value>, out: &mut Out) {
    if let Some(why) = &stream.capped {
        out.err(at.line, why.clone());
    }
    if let Some(why) = &stream.broken {
        out.err(
            at.line,
            format!("{why}; the message is not imported (a lost, merged or grown block could have been a call)"),
        );
        return;
    }
    let (message, chunks) = stream.finish(!at.unterminated);
    let converted = anthropic::records(
        request,
        &message,
        Map::new(),
        &at.suffix,
        Kind::AnthropicStream,
    );
    out.records(at.line, converted, |_, object| {
        object.insert("chunks".into(), json!(chunks));
        if at.unterminated {
            cut_unterminated(object);
            if let Some(Value::Object(info)) = object.get_mut(super::IMPORT_MEMBER) {
                info.insert("unterminated".into(), json!(true));
            }
        }
    });
}

/// One output item of a Responses stream, as its events built it.
#[derive(Default)]
struct ResponsesItem {
    /// The item of `response.output_item.added`, replaced by the one of
    /// `response.output_item.done`.
    item: Map<String, Value>,
    /// `response.output_item.done` came: `item` is the whole item.
    done: bool,
    /// `output_text` deltas by `content_index`.
    text: BTreeMap<i64, String>,
    /// Reasoning summary deltas by `summary_index`.
    summary: BTreeMap<i64, String>,
    /// Reasoning text deltas by `content_index`.
    reasoning: BTreeMap<i64, String>,
    /// Function-call argument deltas, concatenated.
    arguments: Option<String>,
    /// The whole arguments of `response.function_call_arguments.done`.
    arguments_done: Option<String>,
    /// Custom-tool input deltas (`response.custom_tool_call_input.delta`),
    /// concatenated.
    input: Option<String>,
    /// The whole input of `response.custom_tool_call_input.done`.
    input_done: Option<String>,
}

impl ResponsesItem {
    /// The output item the events describe: the done item when it came,
    /// else the added item completed with the deltas.
    ///
    /// `completed`: the response completed, so every item did, whatever
    /// status its added event gave (`in_progress`); otherwise an item
    /// without its done event keeps that status, which says it was cut.
    fn finish(self, completed: bool) -> Value {
        if self.done {
            return Value::Object(self.item);
        }
        let mut item = self.item;
        if completed {
            item.remove("status");
        }
        let kind = match item.get("type").and_then(Value::as_str) {
            Some(t) => t.to_string(),
            None if self.arguments.is_some() || self.arguments_done.is_some() => {
                "function_call".into()
            }
            None if self.input.is_some() || self.input_done.is_some() => "custom_tool_call".into(),
            None if !self.summary.is_empty() || !self.reasoning.is_empty() => "reasoning".into(),
            None => "message".into(),
        };
        let parts = |texts: BTreeMap<i64, String>, kind: &str| -> Value {
            Value::Array(
                texts
                    .into_values()
                    .map(|t| json!({"type": kind, "text": t}))
                    .collect(),
            )
        };
        match kind.as_str() {
            "message" if !self.text.is_empty() => {
                item.insert("content".into(), parts(self.text, "output_text"));
            }
            "reasoning" => {
                if !self.summary.is_empty() {
                    item.insert("summary".into(), parts(self.summary, "summary_text"));
                }
                if !self.reasoning.is_empty() {
                    item.insert("content".into(), parts(self.reasoning, "reasoning_text"));
                }
            }
            "function_call" => {
                // The done event's whole text, else the deltas, else what
                // the added item carried (usually `""`: nothing streamed).
                if let Some(a) = self.arguments_done.or(self.arguments) {
                    item.insert("arguments".into(), json!(a));
                }
            }
            "custom_tool_call" => {
                if let Some(a) = self.input_done.or(self.input) {
                    item.insert("input".into(), json!(a));
                }
            }
            _ => {}
        }
        item.insert("type".into(), json!(kind));
        Value::Object(item)
    }
}

/// The members of a Responses object that echo the run's terms, which a
/// terminal event that leaves them out does not undo
/// ([`ResponsesStream::feed`]).
const RUN_TERMS: &[&str] = &["parallel_tool_calls", "tool_choice"];

/// One Responses API stream (`response.created` … `response.completed`).
#[derive(Default)]
struct ResponsesStream {
    /// The response object of the latest lifecycle event.
    response: Map<String, Value>,
    /// Output items by `output_index`.
    items: BTreeMap<i64, ResponsesItem>,
    /// `item_id` → `output_index`, for events that carry only the id.
    ids: HashMap<String, i64>,
    /// `output_text` deltas in arrival order.
    chunks: Vec<String>,
    /// The terminal event's status (`completed`, `incomplete`, `failed`).
    terminal: Option<String>,
    /// The line of the terminal event (where a failure is reported).
    terminal_line: Option<usize>,
    /// Why some events were not read ([`MAX_STREAM_PARTS`]).
    capped: Option<String>,
}

/// Appends `text` to part `part`; `false` (nothing added) when that would
/// be a part past [`MAX_STREAM_PARTS`].
fn push_part(parts: &mut BTreeMap<i64, String>, part: i64, text: &str) -> bool {
    if parts.len() >= MAX_STREAM_PARTS && !parts.contains_key(&part) {
        return false;
    }
    parts.entry(part).or_default().push_str(text);
    true
}

impl ResponsesStream {
    fn cap_parts(&mut self, index: i64) {
        self.capped.get_or_insert_with(|| {
            format!("more than {MAX_STREAM_PARTS} content parts in output item {index}: the later ones are not read")
        });
    }

    /// Appends the delta `t` to the part `v[part_key]` of the texts `which`
    /// picks in item `index`; `false` (noted in `capped`) when that part is
    /// one too many.
    fn push_delta(
        &mut self,
        index: i64,
        v: &Value,
        part_key: &str,
        t: &str,
        which: fn(&mut ResponsesItem) -> &mut BTreeMap<i64, String>,
    ) -> bool {
        let part = v.get(part_key).and_then(Value::as_i64).unwrap_or(0);
        let entry = self.items.entry(index).or_default();
        if push_part(which(entry), part, t) {
            return true;
        }
        self.cap_parts(index);
        false
    }

    /// The output index an event is about: its `output_index`, else the
    /// index its `item_id` was added at, else the last item's.
    fn index_of(&self, v: &Value) -> i64 {
        if let Some(i) = v.get("output_index").and_then(Value::as_i64) {
            return i;
        }
        v.get("item_id")
            .and_then(Value::as_str)
            .and_then(|id| self.ids.get(id).copied())
            .or_else(|| self.items.keys().next_back().copied())
            .unwrap_or(0)
    }

    /// Whether `response.created` event `v` begins another response: this
    /// stream already has one, or output items, and `v`'s response is not
    /// the same one (by `id`, when both have one).
    fn begins_another(&self, v: &Value) -> bool {
        if self.response.is_empty() && self.items.is_empty() {
            return false;
        }
        let id = |r: Option<&Value>| {
            r.and_then(|r| r.get("id"))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        match (
            self.response.get("id").and_then(Value::as_str),
            id(v.get("response")).as_deref(),
        ) {
            (Some(mine), Some(theirs)) => mine != theirs,
            _ => true,
        }
    }

    fn feed(&mut self, v: &Value) {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        let delta = v.get("delta").and_then(Value::as_str);
        let index = self.index_of(v);
        let lifecycle = matches!(
            kind,
            "response.created"
                | "response.in_progress"
                | "response.queued"
                | "response.completed"
                | "response.incomplete"
                | "response.failed"
        );
        if !lifecycle && self.items.len() >= MAX_STREAM_PARTS && !self.items.contains_key(&index) {
            self.capped.get_or_insert_with(|| {
                format!("more than {MAX_STREAM_PARTS} output items in one stream: item {index} and later new ones are not read")
            });
            return;
        }
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {
                if let Some(Value::Object(r)) = v.get("response") {
                    self.response = r.clone();
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                if let Some(Value::Object(r)) = v.get("response") {
                    let earlier = std::mem::replace(&mut self.response, r.clone());
                    // The run's terms an earlier event echoed and a trimmed
                    // terminal event leaves out: lost, `parallel_tool_calls:
                    // false` or a narrowing choice would no longer apply.
                    for key in RUN_TERMS {
                        if !self.response.contains_key(*key)
                            && let Some(v) = earlier.get(*key)
                        {
                            self.response.insert((*key).into(), v.clone());
                        }
                    }
                }
                let status = kind.trim_start_matches("response.");
                self.terminal = Some(status.to_string());
            }
            "response.output_item.added" | "response.output_item.done" => {
                let Some(Value::Object(item)) = v.get("item") else {
                    return;
                };
                if let Some(id) = item.get("id").and_then(Value::as_str) {
                    self.ids.insert(id.to_string(), index);
                }
                let entry = self.items.entry(index).or_default();
                entry.item = item.clone();
                entry.done = kind.ends_with(".done");
            }
            // `response.text.delta`: the Realtime API's (and early Responses
            // servers') name for the same event.
            "response.output_text.delta" | "response.text.delta" => {
                if let Some(t) = delta
                    && self.push_delta(index, v, "content_index", t, |i| &mut i.text)
                    && !t.is_empty()
                {
                    self.chunks.push(t.to_string());
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_summary.delta" => {
                if let Some(t) = delta {
                    self.push_delta(index, v, "summary_index", t, |i| &mut i.summary);
                }
            }
            "response.reasoning_text.delta" | "response.reasoning.delta" => {
                if let Some(t) = delta {
                    self.push_delta(index, v, "content_index", t, |i| &mut i.reasoning);
                }
            }
            // A function call's arguments, or a custom tool's free-text
            // input (refused by `responses::document`, which names the call):
            // deltas concatenated, the done event's whole text kept apart.
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                if let Some(t) = delta {
                    let entry = self.items.entry(index).or_default();
                    let so_far = if kind.starts_with("response.function_call") {
                        &mut entry.arguments
                    } else {
                        &mut entry.input
                    };
                    so_far.get_or_insert_with(String::new).push_str(t);
                }
            }
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done" => {
                let function = kind.starts_with("response.function_call");
                let key = if function { "arguments" } else { "input" };
                if let Some(a) = v.get(key).and_then(Value::as_str) {
                    let entry = self.items.entry(index).or_default();
                    let whole = if function {
                        &mut entry.arguments_done
                    } else {
                        &mut entry.input_done
                    };
                    *whole = Some(a.to_string());
                }
            }
            _ => {}
        }
    }

    /// The equivalent Responses API response: the terminal event's own
    /// `output` when it has one (the server's final word), else the items
    /// the events built.
    ///
    /// The final word may refine a streamed item (its whole arguments, its
    /// status) but not make a call vanish or appear: a streaming client
    /// (the OpenAI SDK's event handlers) saw the streamed calls and may have
    /// run them. When the final output and the streamed items disagree on
    /// which calls exist ([`call_disagreement`]), the stream is refused.
    fn finish(self) -> Result<(Map<String, Value>, Vec<String>), String> {
        let mut response = self.response;
        let has_output = response
            .get("output")
            .and_then(Value::as_array)
            .is_some_and(|o| !o.is_empty());
        let completed = self.terminal.as_deref() == Some("completed");
        // A function call's argument deltas whose item no
        // `response.output_item.added`/`.done` sent: the call's name and
        // id were lost with that event. Built from the deltas alone it would
        // be a call of `""` (`wrong_tool`, blamed on the model). (A custom
        // tool's input deltas are refused as a custom call already.)
        let unnamed = self
            .items
            .iter()
            .find(|(_, i)| {
                i.item.is_empty() && (i.arguments.is_some() || i.arguments_done.is_some())
            })
            .map(|(index, _)| *index);
        let streamed: Vec<(i64, Value)> = self
            .items
            .into_iter()
            .map(|(index, item)| (index, item.finish(completed)))
            .collect();
        match (&self.terminal, response.get("output")) {
            (Some(status), Some(Value::Array(output))) if has_output => {
                if !streamed.is_empty()
                    && let Some(why) = call_disagreement(status, &streamed, output)
                {
                    return Err(why);
                }
            }
            _ => {
                if let Some(index) = unnamed {
                    return Err(format!(
                        "a call's arguments were streamed for output item {index}, which no \
                         `response.output_item.added` or `.done` sent (an event was lost: the \
                         call's name and id are unknown), and the final `output` does not \
                         hold it: the stream is not imported"
                    ));
                }
                let output = streamed.into_iter().map(|(_, item)| item).collect();
                response.insert("output".into(), Value::Array(output));
            }
        }
        response.insert("object".into(), json!("response"));
        Ok((response, self.chunks))
    }
}

/// The calls among output items `(position, item)`: the items a client
/// runs ([`responses::is_client_call`]).
fn client_calls<'a>(items: impl IntoIterator<Item = (i64, &'a Value)>) -> Vec<(i64, &'a Value)> {
    items
        .into_iter()
        .filter(|(_, item)| str_of(item, "type").is_some_and(responses::is_client_call))
        .collect()
}

/// The identities of a set of calls: their `call_id`s, item `id`s, and
/// positions (for a call that carries neither).
#[derive(Default)]
struct CallKeys<'a> {
    call_ids: HashSet<&'a str>,
    ids: HashSet<&'a str>,
    positions: HashSet<i64>,
}

impl<'a> CallKeys<'a> {
    fn of(calls: &[(i64, &'a Value)]) -> Self {
        let mut keys = CallKeys::default();
        for (position, item) in calls {
            keys.positions.insert(*position);
            if let Some(c) = str_of(item, "call_id").filter(|c| !c.is_empty()) {
                keys.call_ids.insert(c);
            }
            if let Some(i) = str_of(item, "id").filter(|i| !i.is_empty()) {
                keys.ids.insert(i);
            }
        }
        keys
    }

    /// Whether call `item` at `position` is one of these: the same
    /// `call_id` or item `id`; a call with neither, a call at its position.
    fn holds(&self, position: i64, item: &Value) -> bool {
        let call_id = str_of(item, "call_id").filter(|c| !c.is_empty());
        let id = str_of(item, "id").filter(|i| !i.is_empty());
        if call_id.is_none() && id.is_none() {
            return self.positions.contains(&position);
        }
        call_id.is_some_and(|c| self.call_ids.contains(c))
            || id.is_some_and(|i| self.ids.contains(i))
    }
}

/// How a call is named in an error: its type, name (bounded, quoted) and
/// `call_id` (else `id`).
fn call_shown(item: &Value) -> String {
    let kind = str_of(item, "type").unwrap_or("");
    let name: String = str_of(item, "name")
        .unwrap_or("")
        .chars()
        .take(64)
        .collect();
    format!("`{kind}` {name:?}{}", responses::call_id_shown(item))
}

/// Why a Responses stream whose terminal event (`response.{status}`) holds
/// `output` is refused, when it is: the output and the `streamed` items
/// (by `output_index`) disagree on which calls exist — a streamed call the
/// output leaves out (read from the output alone, the call a streaming
/// client saw, and may have run, would vanish, the answer read as text), or
/// a call in the output the stream never sent. Calls are matched by
/// `call_id` or item `id` (by position when a call has neither); the output
/// may still refine a matched call's fields.
fn call_disagreement(status: &str, streamed: &[(i64, Value)], output: &[Value]) -> Option<String> {
    let streamed = client_calls(streamed.iter().map(|(i, item)| (*i, item)));
    let last = client_calls(
        output
            .iter()
            .enumerate()
            .map(|(i, item)| (i64::try_from(i).unwrap_or(i64::MAX), item)),
    );
    let (streamed_keys, last_keys) = (CallKeys::of(&streamed), CallKeys::of(&last));
    let missing = |calls: &[(i64, &Value)], keys: &CallKeys| -> Vec<String> {
        calls
            .iter()
            .filter(|(position, item)| !keys.holds(*position, item))
            .map(|(_, item)| call_shown(item))
            .take(4)
            .collect()
    };
    let left_out = missing(&streamed, &last_keys);
    let never_streamed = missing(&last, &streamed_keys);
    if left_out.is_empty() && never_streamed.is_empty() {
        return None;
    }
    let mut what = Vec::new();
    if !left_out.is_empty() {
        what.push(format!(
            "the stream sent {} that the final `output` leaves out",
            left_out.join(", ")
        ));
    }
    if !never_streamed.is_empty() {
        what.push(format!(
            "the final `output` holds {} that the stream never sent",
            never_streamed.join(", ")
        ));
    }
    Some(format!(
        "the `response.{status}` event's `output` and the streamed items disagree on the calls: {}: a streaming client saw the streamed calls, so the stream is not imported",
        what.join("; ")
    ))
}

/// The reason of an error event: its `error` object's code and message, or
/// the event's own (`{"type": "error", "code", "message"}`).
fn stream_error(v: &Value) -> String {
    let e = v.get("error").filter(|e| e.is_object()).unwrap_or(v);
    format!("the stream reports an error: {}", error_what(e))
}

/// Whether a stream event is of the Responses API.
pub(crate) fn is_responses_event(v: &Value) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("response."))
}

/// One payload of a Responses API stream ([`split_streams`]).
///
/// A terminal event (`response.completed`, `response.incomplete`,
/// `response.failed`) or `[DONE]` ends a stream. A failed response, and an
/// `error` event, are reported as errors; a stream without a terminal event
/// is kept, without `finish_reason`, marked `import.unterminated`, its last
/// call cut ([`cut_unterminated`]).
fn responses_event(
    current: &mut ResponsesStream,
    v: &Value,
    line: usize,
    error_event: bool,
) -> Step {
    let kind = v.get("type").and_then(Value::as_str);
    if error_event || kind == Some("error") {
        return Step::Error(stream_error(v));
    }
    if kind == Some("response.created") && current.begins_another(v) {
        return Step::Begins;
    }
    current.feed(v);
    if current.terminal.is_some() {
        current.terminal_line.get_or_insert(line);
        Step::FedAndClosed
    } else {
        Step::Fed
    }
}

/// One Responses API stream of a capture file, converted.
fn responses_stream(
    mut stream: ResponsesStream,
    at: Place,
    request: Option<&Value>,
    out: &mut Out,
) {
    let line = at.line;
    let terminal = stream.terminal.clone();
    if terminal.as_deref() == Some("failed") {
        // The event says so whatever its response object holds.
        stream.response.insert("status".into(), json!("failed"));
    }
    if let Some(why) = &stream.capped {
        out.err(line, why.clone());
    }
    // A terminal event whose response failed or carries an error is not an
    // answer: reported at that event's line, the stream not imported.
    if terminal.is_some()
        && let Some(why) = responses::not_an_answer(&Value::Object(stream.response.clone()))
    {
        out.err(stream.terminal_line.or(line), why);
        return;
    }
    let terminal_line = stream.terminal_line;
    let (mut response, chunks) = match stream.finish() {
        Ok(finished) => finished,
        Err(why) => {
            out.err(terminal_line.or(line), why);
            return;
        }
    };
    if terminal.is_none() {
        // Cut off: the status is the last lifecycle event's (`in_progress`),
        // not a final one; the stream is read as unterminated instead.
        response.remove("status");
    }
    let mut doc = Map::new();
    if let Some(r) = request {
        doc.insert("request".into(), r.clone());
    }
    doc.insert("response".into(), Value::Object(response));
    out.records(line, responses::document(&doc, &at.suffix), |_, object| {
        object.insert("chunks".into(), json!(chunks));
        if terminal.is_none() {
            // Cut off: the derived `tool_calls`/`stop` would
            // claim an end the stream never reached.
            object.remove("finish_reason");
            cut_unterminated(object);
        }
        if let Some(Value::Object(info)) = object.get_mut(super::IMPORT_MEMBER) {
            info.insert("from".into(), json!(Kind::ResponsesStream.name()));
            if terminal.is_none() {
                info.insert("unterminated".into(), json!(true));
                // No finish reason was derived (removed above).
                info.remove("finish_reason_derived");
            }
        }
    });
}
