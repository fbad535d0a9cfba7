//! Importing the captures users already have (issue 13).
//!
//! Every other stack writes its own capture format. This module turns each
//! into toolgate's flat transcript object (SPEC §2) — the same object a
//! `.json` transcript holds — so that `toolgate import` can write them out
//! and the loader ([`crate::load`]) can read them directly, detected per file.
//!
//! | [`Kind`] | what | raw text kept |
//! |---|---|---|
//! | `openai-chat` | chat-completions `request`/`response` pairs or bare responses: every choice (`n > 1` → samples) | yes |
//! | `openai-stream` | a captured chat-completions SSE stream (`data:` lines, `[DONE]`) | yes |
//! | `openai-batch-output` | Batch output JSONL (`response.body`, or `response` as vLLM's `run-batch` writes it), joined on `custom_id` with the input JSONL | yes |
//! | `openai-responses` | Responses API `output[]` items | no: `native` only |
//! | `openai-responses-stream` | a captured Responses API stream (`response.*` events) | no: `native` only |
//! | `anthropic`, `anthropic-stream` | Messages `content[]` blocks and their stream events | no: `native` only |
//! | `otel` | OpenTelemetry GenAI spans, OTLP JSON (`gen_ai.output.messages` and the older `gen_ai.completion.N.*`) | no: `native` only |
//! | `bfcl` | BFCL result and score files | prompt mode yes, FC mode `native` only |
//!
//! Companion files hold no exchange of their own and yield no transcript:
//! the Batch input JSONL (`custom_id`, `body`), BFCL question and
//! possible-answer files, and a stream's `STEM.request.json`. They are joined
//! to the files that need them ([`Companions`]).
//!
//! Formats whose raw text the provider already parsed away ("post-parse")
//! mark each transcript with `"import": {"raw_text": false}`: only the
//! `native` mode judges them, and server findings that compare raw text with
//! native calls do not apply ([`ImportInfo::raw_text`],
//! [`crate::Transcript::has_raw_text`]).
//!
//! Bad input is data: every document that cannot be read becomes a
//! [`LoadError`] with path, line and reason; the rest of the file is read.

mod anthropic;
mod bfcl;
mod literals;
mod openai;
mod otel;
mod responses;
mod sse;

/// What `toolgate run` reads a chat-completions answer with, so that a run
/// and an import of the same exchange agree on what the model said.
pub use openai::{choice_error, content_text, is_error_finish, legacy_function_call};
/// The SSE field rule the proxy's stream reader shares with the importer.
pub use sse::{is_error_field, sse_field};

use crate::file::LoadError;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A capture format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// toolgate's own transcript objects (`output` …).
    Toolgate,
    /// OpenAI chat-completions request/response pairs, or bare responses.
    OpenaiChat,
    /// A captured OpenAI chat-completions stream (SSE `data:` lines).
    OpenaiStream,
    /// A bare chat-completions request (a stream's `STEM.request.json`): a companion.
    OpenaiRequest,
    /// OpenAI Batch input JSONL (`custom_id`, `body`): a companion.
    BatchInput,
    /// OpenAI Batch output JSONL (`custom_id`, `response`).
    BatchOutput,
    /// OpenAI Responses API responses (or request/response pairs).
    Responses,
    /// A captured Responses API stream (`response.*` events).
    ResponsesStream,
    /// Anthropic Messages responses (or request/response pairs).
    Anthropic,
    /// A captured Anthropic Messages stream (SSE events).
    AnthropicStream,
    /// OpenTelemetry GenAI spans, OTLP JSON export.
    Otel,
    /// BFCL result or score files.
    Bfcl,
    /// BFCL question or possible-answer files: a companion.
    BfclData,
}

/// The format names `--from` accepts, with the kinds each may be.
pub const FROM_NAMES: &[(&str, &[Kind])] = &[
    ("toolgate", &[Kind::Toolgate]),
    (
        "openai-chat",
        &[Kind::OpenaiChat, Kind::OpenaiStream, Kind::OpenaiRequest],
    ),
    ("openai-batch", &[Kind::BatchOutput, Kind::BatchInput]),
    (
        "openai-responses",
        &[Kind::Responses, Kind::ResponsesStream, Kind::OpenaiRequest],
    ),
    ("anthropic", &[Kind::Anthropic, Kind::AnthropicStream]),
    ("otel", &[Kind::Otel]),
    ("bfcl", &[Kind::Bfcl, Kind::BfclData]),
];

impl Kind {
    /// Its name in messages and in the `import.from` member.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Toolgate => "toolgate",
            Kind::OpenaiChat => "openai-chat",
            Kind::OpenaiStream => "openai-stream",
            Kind::OpenaiRequest => "openai-request",
            Kind::BatchInput => "openai-batch-input",
            Kind::BatchOutput => "openai-batch-output",
            Kind::Responses => "openai-responses",
            Kind::ResponsesStream => "openai-responses-stream",
            Kind::Anthropic => "anthropic",
            Kind::AnthropicStream => "anthropic-stream",
            Kind::Otel => "otel",
            Kind::Bfcl => "bfcl",
            Kind::BfclData => "bfcl-data",
        }
    }

    /// Whether the provider parsed the raw text away: only `native` judges
    /// these transcripts.
    pub fn post_parse(self) -> bool {
        matches!(
            self,
            Kind::Responses
                | Kind::ResponsesStream
                | Kind::Anthropic
                | Kind::AnthropicStream
                | Kind::Otel
        )
    }

    /// Whether files of this kind only serve other files (no transcript).
    pub fn companion(self) -> bool {
        matches!(
            self,
            Kind::BatchInput | Kind::BfclData | Kind::OpenaiRequest
        )
    }
}

/// The kinds a `--from` name allows, or `None` for an unknown name.
pub fn from_name(name: &str) -> Option<&'static [Kind]> {
    FROM_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, kinds)| *kinds)
}

/// The member of a transcript object that [`ImportInfo`] is read from.
pub const IMPORT_MEMBER: &str = "import";

/// Where an imported transcript came from: its `import` member, read once
/// by the loader into [`crate::Transcript::origin`]. The importers write the
/// member (`import_info`, `add_note`); every reader goes through this
/// type, so the member's keys are named in this module only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportInfo {
    /// The capture format it was imported from (`import.from`, a
    /// [`Kind::name`]), when named.
    pub from: Option<String>,
    /// Whether it still holds the model's raw text: `false` for post-parse
    /// imports (`"import": {"raw_text": false}`); `true` when not stated.
    pub raw_text: bool,
    /// The importer's typed notes (`import.notes`); notes of unknown kinds
    /// are skipped.
    pub notes: Vec<(NoteKind, String)>,
    /// `import.finish_reason_derived`: the finish reason was derived by the
    /// importer, not reported by the provider.
    pub finish_reason_derived: bool,
    /// `import.forced_tool`: the request forced a named tool.
    pub forced_tool: bool,
}

impl ImportInfo {
    /// The typed form of an `import` member; `None` when it is not an
    /// object (then nothing of it is read, as if absent).
    pub fn read(member: &Value) -> Option<ImportInfo> {
        let m = member.as_object()?;
        let flag = |key: &str| m.get(key).and_then(Value::as_bool);
        Some(ImportInfo {
            from: m.get("from").and_then(Value::as_str).map(str::to_string),
            raw_text: flag("raw_text").unwrap_or(true),
            notes: read_notes(m.get("notes")),
            finish_reason_derived: flag("finish_reason_derived").unwrap_or(false),
            forced_tool: flag("forced_tool").unwrap_or(false),
        })
    }

    /// The detail of the first note of this kind.
    pub fn note(&self, kind: NoteKind) -> Option<&str> {
        self.notes
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, detail)| detail.as_str())
    }
}

/// One JSON document of a file: a whole-file value (`line` `None`) or one line.
pub(crate) struct Doc {
    pub line: Option<usize>,
    pub value: Result<Value, String>,
}

/// The documents of `text`: the whole text when it is one JSON value (and
/// the file is not `.jsonl`), else one per non-blank line, parsed as they
/// are taken (a big JSONL capture is not held parsed all at once).
pub(crate) fn documents<'a>(path: &Path, text: &'a str) -> Box<dyn Iterator<Item = Doc> + 'a> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    // A repeated key is refused (`crate::strict`): the whole document's
    // error, not a reason to read it as lines.
    match (!jsonl).then(|| crate::strict::from_str(text)) {
        Some(Ok(value)) => {
            return Box::new(std::iter::once(Doc {
                line: None,
                value: Ok(value),
            }));
        }
        Some(Err(e)) if crate::strict::is_duplicate(&e) => {
            return Box::new(std::iter::once(Doc {
                line: None,
                value: Err(e.to_string()),
            }));
        }
        _ => {}
    }
    Box::new(
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| Doc {
                line: Some(i + 1),
                value: crate::strict::from_str(l).map_err(|e| crate::strict::reason(&e)),
            }),
    )
}

/// The stream a chunk or event belongs to, when `v` is one: a
/// chat-completions chunk (`chat.completion.chunk`, or `choices[0].delta`),
/// a Responses event (`response.*`) or an Anthropic Messages event.
fn stream_element_kind(v: &Value) -> Option<Kind> {
    if v.get("object").and_then(Value::as_str) == Some("chat.completion.chunk")
        || v.pointer("/choices/0/delta").is_some()
    {
        return Some(Kind::OpenaiStream);
    }
    if sse::is_responses_event(v) {
        return Some(Kind::ResponsesStream);
    }
    match v.get("type").and_then(Value::as_str) {
        Some("message_start" | "content_block_start" | "content_block_delta") => {
            Some(Kind::AnthropicStream)
        }
        _ => None,
    }
}

/// A stream saved as one JSON array of its chunks or events (as SDK users
/// dump them): the elements as JSON lines, which the stream readers read
/// (a line number is then the element's 1-based position).
fn array_as_lines(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).trim_start();
    if !text.starts_with('[') {
        return None;
    }
    // Each element as it was written (not parsed and written again, which
    // would keep only the last of a repeated key, hiding it from the
    // strict read of each line); a raw line break can only be whitespace
    // between tokens (a JSON string holds none), so it becomes a space.
    let Ok(items) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(text) else {
        return None;
    };
    let mut out = String::with_capacity(text.len());
    for item in items {
        out.extend(
            item.get()
                .chars()
                .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
        );
        out.push('\n');
    }
    Some(out)
}

/// The kind of one JSON document, when it is recognizably one.
fn kind_of(v: &Value) -> Option<Kind> {
    if let Some(items) = v.as_array() {
        return items.first().and_then(stream_element_kind);
    }
    let obj = v.as_object()?;
    let has = |k: &str| obj.contains_key(k);
    if obj.get("output").is_some_and(Value::is_string) {
        return Some(Kind::Toolgate);
    }
    // A stream saved as JSON lines of bare chunks or events.
    if let Some(k) = stream_element_kind(v) {
        return Some(k);
    }
    if has("resourceSpans") {
        return Some(Kind::Otel);
    }
    if has("custom_id") {
        return Some(if has("body") {
            Kind::BatchInput
        } else {
            Kind::BatchOutput
        });
    }
    if let Some(response) = obj.get("response").filter(|r| r.is_object()) {
        return response_kind(response).or(Some(Kind::OpenaiChat));
    }
    // A response stored as JSON text, as some loggers store it (and the
    // request beside it: [`request_of`]): the object it holds decides.
    if let Some(Value::String(text)) = obj.get("response")
        && let Some(response) = object_text(text)
    {
        return response_kind(&response).or(Some(Kind::OpenaiChat));
    }
    if let Some(k) = response_kind(v) {
        return Some(k);
    }
    // BFCL: score files start with a summary line, then one entry per failure.
    if has("accuracy") && has("total_count") {
        return Some(Kind::Bfcl);
    }
    if has("id") && (has("result") || has("model_result_raw") || has("model_result")) {
        return Some(Kind::Bfcl);
    }
    if has("id") && (has("ground_truth") || (has("question") && has("function"))) {
        return Some(Kind::BfclData);
    }
    // A provider's error body saved as the capture: read as a chat response,
    // which reports it as the error it is ([`error_body`]).
    if error_body(v).is_some() && !has("choices") && !has("output") && !has("content") {
        return Some(Kind::OpenaiChat);
    }
    // A logged exchange whose `response` is null (a LiteLLM payload of a
    // failed call): read as a chat document, which says why it is no
    // answer, rather than as a request companion that yields nothing.
    if has("messages") && obj.get("response").is_some_and(Value::is_null) {
        return Some(Kind::OpenaiChat);
    }
    // A chat-completions request (`messages`) or a Responses one (`input`
    // with its `model`: a lone `input` member is not enough to go quiet).
    if (has("messages") || (has("input") && has("model"))) && !has("choices") && !has("output") {
        return Some(Kind::OpenaiRequest);
    }
    None
}

/// The provider whose response `v` is.
///
/// A Responses object says `"object": "response"`; without it, an `output`
/// list is one when the `id` is a Responses id (`resp_…`) or its first item
/// is a typed output item. `{"output": []}` alone is recognizably nothing
/// (read as toolgate's format, which says `output` must be a string).
fn response_kind(v: &Value) -> Option<Kind> {
    let responses_output = v.get("output").and_then(Value::as_array).is_some_and(|o| {
        str_of(v, "id").is_some_and(|id| id.starts_with("resp_"))
            || o.first().and_then(|i| str_of(i, "type")).is_some()
    });
    if str_of(v, "object") == Some("response") || responses_output {
        return Some(Kind::Responses);
    }
    if v.get("type").and_then(Value::as_str) == Some("message")
        && v.get("content").is_some_and(Value::is_array)
    {
        return Some(Kind::Anthropic);
    }
    if v.get("choices").is_some_and(Value::is_array) {
        return Some(Kind::OpenaiChat);
    }
    None
}

/// What a document of a format `import` does not read is, when it is
/// recognizably one (a user's next try after the formats listed in the
/// README): named in the error instead of what toolgate's own format, or a
/// chat completion, lacks (`` missing `output` ``, `` no `choices` ``),
/// which said nothing about why. Never read as a format: the error only.
pub fn foreign_format(v: &Value) -> Option<&'static str> {
    let has = |k: &str| v.get(k).is_some();
    let kind = if has("candidates") || has("promptFeedback") {
        "a Gemini generateContent response (`candidates`)"
    } else if v.get("message").is_some_and(Value::is_object) && has("done") {
        "an Ollama /api/chat response (`message`, `done`)"
    } else if has("done") && v.get("response").is_some_and(Value::is_string) {
        "an Ollama /api/generate response (`response`, `done`)"
    } else if v.pointer("/output/message").is_some() || has("stopReason") {
        "a Bedrock Converse response (`output.message`, `stopReason`)"
    } else if [
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    .iter()
    .any(|k| has(k))
        && v.as_object().is_some_and(|o| o.len() == 1)
    {
        "a Bedrock ConverseStream event"
    } else if v.pointer("/log/entries").is_some() {
        "a HAR capture (`log.entries`)"
    } else if has("custom_id") && v.get("result").is_some_and(Value::is_object) {
        "an Anthropic Message Batches result (`custom_id`, `result`)"
    } else {
        return None;
    };
    Some(kind)
}

/// Why a document that is not a JSON object is not read: a stream saved as
/// a JSON array of another provider's chunks (Gemini's
/// streamGenerateContent answers with one) is named ([`foreign_format`]).
pub fn not_an_object(value: &Value) -> String {
    let items = value.as_array();
    let first = items.and_then(|items| items.first());
    if let Some(what) = first.and_then(foreign_format) {
        return foreign_error(&format!("a JSON array of {what}"));
    }
    // Transcripts gathered into one array (a pretty-printed export).
    if let (Some(items), Some(Kind::Toolgate)) = (items, first.and_then(kind_of)) {
        return format!(
            "not a JSON object but an array of {} transcripts: a transcript file holds one \
             object, a `.jsonl` file one per line (e.g. `jq -c '.[]' FILE > FILE.jsonl`)",
            items.len()
        );
    }
    "not a JSON object".into()
}

/// The error for a document of a format `import` does not read
/// ([`foreign_format`]).
pub fn foreign_error(what: &str) -> String {
    format!(
        "{what}: not a format toolgate reads (it reads toolgate transcripts, OpenAI chat \
         completions, Batch and Responses, Anthropic Messages, OpenTelemetry GenAI spans and \
         BFCL results); nothing is imported from it"
    )
}

/// Why a request/response pair must not be read in toolgate's own form,
/// which takes `response.choices[0]` alone (SPEC §1's `request`,
/// `response` row), when the chat importer reads it otherwise: a line of a
/// JSONL whose first lines are flat transcripts is read in that form, and
/// there a second choice's calls, a legacy `function_call` or a provider's
/// error were dropped in silence (the choice a `no_call`). Refused with
/// the importer's reason, or the count it would read, instead: the pair is
/// read whole only as `import` reads it (`--from openai-chat` reads the
/// flat lines too).
pub fn pair_form_refusal(raw: &Map<String, Value>) -> Option<String> {
    let response = raw.get("response").filter(|r| r.is_object())?;
    let mut refused = Vec::new();
    let records = match openai::chat_document(raw, "pair", &mut refused) {
        Ok(records) => records,
        Err(reason) => return Some(reason),
    };
    const HOW: &str = "toolgate's request/response form reads `choices[0]` alone; import the file \
         (`toolgate import --from openai-chat`, which reads flat transcripts too) to read the pair whole";
    if let Some(reason) = refused.first() {
        return Some(format!("{reason} ({HOW})"));
    }
    if records.len() > 1 {
        return Some(format!(
            "the response holds {} choices, each an answer: {HOW}",
            records.len()
        ));
    }
    let calls = |v: Option<&Value>| v.and_then(Value::as_array).map_or(0, Vec::len);
    let read = calls(records.first().and_then(|(_, r)| r.get("tool_calls")));
    let first = calls(response.pointer("/choices/0/message/tool_calls"));
    (read != first).then(|| {
        format!(
            "the answer holds {read} call(s) where `message.tool_calls` lists {first} (a legacy \
             `function_call`): {HOW}"
        )
    })
}

/// Detects the format of a file from its text: an SSE stream when its
/// first meaningful line is an SSE field, else the first JSON document that
/// is recognizably one format. `None`: nothing recognizable (the loader then
/// reads it as toolgate's own format and reports what is missing).
pub fn detect(path: &Path, text: &str) -> Option<Kind> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Lines as a stream ends them (a lone CR too): a CR-only capture that
    // opens with a comment is one `.lines()` line, skipped as a comment.
    let first = sse::sse_lines(text)
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with(':'))?;
    if ["data:", "event:", "id:", "retry:", "error:"]
        .iter()
        .any(|field| first.starts_with(field))
    {
        return Some(sse::stream_kind(text));
    }
    if first.starts_with('{')
        && first.contains("\"chat.completion.chunk\"")
        && path.extension().and_then(|e| e.to_str()) != Some("json")
    {
        return Some(Kind::OpenaiStream);
    }
    let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    // A document of too many values is not built to detect it: the
    // loader's read refuses it with the reason.
    if !jsonl
        && !crate::nodes::too_many_in_document(text.as_bytes())
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return kind_of(&value);
    }
    // JSON lines: the first few decide (a big file is not parsed twice).
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .find_map(|l| {
            (!crate::nodes::too_many_in_document(l.as_bytes()))
                .then(|| serde_json::from_str::<Value>(l).ok())
                .flatten()
                .as_ref()
                .and_then(kind_of)
        })
}

/// What companion files supply to the files that need them.
#[derive(Debug, Default, Clone)]
pub struct Companions {
    /// Batch input bodies by `custom_id`.
    pub batch: HashMap<String, Value>,
    /// BFCL questions by `id` (`function`, `question`).
    pub bfcl_questions: HashMap<String, Value>,
    /// BFCL possible answers by `id` (`ground_truth`).
    pub bfcl_answers: HashMap<String, Value>,
    /// `custom_id`s that name two different bodies among the Batch inputs
    /// given (two batches in one folder, both numbered `request-1` …): an
    /// output line of one of them is refused, never joined with a body
    /// that may be another batch's (`keep`, the one rule).
    pub batch_ambiguous: HashSet<String>,
    /// BFCL ids that name two different questions or two different
    /// answers among the data files given: refused likewise.
    pub bfcl_ambiguous: HashSet<String>,
    /// Requests by the stream they serve (`dir/STEM.request.json` →
    /// `dir/STEM`, the stream file without its extension; `dir` canonical
    /// when it exists, so that any spelling of a path finds it).
    pub requests: HashMap<PathBuf, Value>,
    /// A stream's own request file (`STEM.request.json` beside `STEM.sse`)
    /// that could not be read or is no request: said, since without it the
    /// stream's transcripts are judged with their tools unknown.
    pub unread: Vec<crate::file::LoadError>,
}

impl Companions {
    /// Adds what the file `path` (of kind `kind`, text `text`) supplies.
    pub fn add(&mut self, path: &Path, text: &str, kind: Kind) {
        match kind {
            Kind::BatchInput => {
                for doc in documents(path, text) {
                    if let Ok(v) = doc.value
                        && let Some(id) = v.get("custom_id").and_then(Value::as_str)
                        && let Some(body) = v.get("body")
                    {
                        keep(&mut self.batch, &mut self.batch_ambiguous, id, body.clone());
                    }
                }
            }
            Kind::BfclData => {
                for doc in documents(path, text) {
                    let Ok(v) = doc.value else { continue };
                    let Some(id) = v.get("id").and_then(Value::as_str) else {
                        continue;
                    };
                    let map = if v.get("ground_truth").is_some() {
                        &mut self.bfcl_answers
                    } else {
                        &mut self.bfcl_questions
                    };
                    keep(map, &mut self.bfcl_ambiguous, id, v.clone());
                }
            }
            Kind::OpenaiRequest => {
                if let Some(doc) = documents(path, text).next()
                    && let Ok(v) = doc.value
                {
                    self.requests.insert(request_key(path), v);
                }
            }
            _ => {}
        }
    }

    /// The companions found beside `path` (same directory), for a kind that
    /// needs them: what the loader uses when reading one file directly.
    ///
    /// Any spelling of `path` finds the same files (`f.sse`, `./f.sse`, an
    /// absolute path, a path through a symlinked folder); a symlinked file
    /// also finds its companions beside the file it points to. Siblings are
    /// read as transcript files are (regular files only, within the size
    /// limit), so a FIFO or a device beside the file cannot stall the read.
    pub fn beside(path: &Path, kind: Kind) -> Companions {
        let mut out = Companions::default();
        let wanted: &[Kind] = match kind {
            Kind::BatchOutput => &[Kind::BatchInput],
            Kind::Bfcl => &[Kind::BfclData],
            Kind::OpenaiStream | Kind::AnthropicStream | Kind::ResponsesStream => {
                &[Kind::OpenaiRequest]
            }
            _ => return out,
        };
        let streamed = matches!(
            kind,
            Kind::OpenaiStream | Kind::AnthropicStream | Kind::ResponsesStream
        );
        let real = std::fs::canonicalize(path).ok();
        // (directory, the stem a stream's request must have there)
        let mut places = vec![(dir_of(path), stem_of(path))];
        if let Some(real) = &real {
            let place = (dir_of(real), stem_of(real));
            if !places.contains(&place) {
                places.push(place);
            }
        }
        let opts = crate::file::LoadOptions::default();
        for (dir, stem) in places {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut siblings: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| crate::file::is_transcript_file(p))
                .filter(|p| !streamed || request_stem(p) == stem)
                .collect();
            siblings.sort();
            for sibling in siblings {
                if real.is_some() && std::fs::canonicalize(&sibling).ok() == real {
                    continue;
                }
                // Only a stream's request is named for it (`STEM.request.json`);
                // Batch inputs and BFCL data are any file of the folder.
                let own = streamed
                    && sibling
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().ends_with(".request.json"));
                let mut unread = |why: String| {
                    if own {
                        out.unread.push(crate::file::LoadError {
                            path: sibling.clone(),
                            line: None,
                            reason: format!(
                                "the request of {} is not read: {why}; its transcripts are \
                                 judged with the tools unknown",
                                path.file_name().unwrap_or_default().to_string_lossy()
                            ),
                        });
                    }
                };
                let text = match crate::file::read_transcript_text(&sibling, &opts) {
                    Ok((text, _)) => text,
                    Err(why) => {
                        unread(why);
                        continue;
                    }
                };
                match detect(&sibling, &text) {
                    Some(k) if wanted.contains(&k) => out.add(&sibling, &text, k),
                    _ => unread(match crate::strict::from_str(&text) {
                        Err(e) => crate::strict::reason(&e),
                        Ok(_) => "not a chat-completions or Responses request".to_string(),
                    }),
                }
            }
        }
        out
    }
}

/// Adds `value` under `id` to `map`, the companions' one rule for an id
/// given twice: the same value again changes nothing (a file given twice,
/// a line repeated); another value makes `id` ambiguous, and the join on
/// it is refused where it is made, since which one the capture answered is
/// a guess — taking the first or the last would judge an answer against
/// another request's tools without a word.
fn keep(map: &mut HashMap<String, Value>, ambiguous: &mut HashSet<String>, id: &str, value: Value) {
    match map.get(id) {
        Some(known) if *known != value => {
            ambiguous.insert(id.to_string());
        }
        Some(_) => {}
        None => {
            map.insert(id.to_string(), value);
        }
    }
}

/// The directory holding `path`, spelled one way: canonical when it exists,
/// so that `f.sse`, `./f.sse`, `/abs/f.sse` and a path through a symlinked
/// folder agree; as given otherwise (a bare name's parent `""` is `.`).
fn dir_of(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// `dir/STEM.request.json` → `dir/STEM` (`dir` as [`dir_of`] spells it).
fn request_key(path: &Path) -> PathBuf {
    dir_of(path).join(request_stem(path))
}

/// The keys a stream file's request may be stored under: `dir/STEM.sse` →
/// `dir/STEM`, and for a symlinked stream also the key of the file it
/// points to.
fn stream_keys(path: &Path) -> Vec<PathBuf> {
    let mut keys = vec![dir_of(path).join(stem_of(path))];
    if let Ok(real) = std::fs::canonicalize(path) {
        let key = dir_of(&real).join(stem_of(&real));
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

impl Companions {
    /// The request of the stream file `path`, found under any of its keys.
    fn request_for(&self, path: &Path) -> Option<&Value> {
        stream_keys(path)
            .iter()
            .find_map(|key| self.requests.get(key))
    }
}

/// `dir/STEM.request.json` → `STEM`.
fn request_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".request.json")
        .map(str::to_string)
        .unwrap_or_else(|| stem_of(path))
}

fn stem_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What a converter makes of one document: (default id, transcript object)
/// pairs, or why the document cannot be read.
pub(crate) type Converted = Result<Vec<(String, Map<String, Value>)>, String>;

/// One converted transcript object, before [`crate::load::from_object`].
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// 1-based line of the document it came from (`None`: the whole file).
    pub line: Option<usize>,
    /// The transcript's default id.
    pub id: String,
    /// The flat transcript object (SPEC §2) plus an `import` member saying
    /// where it came from.
    pub object: Map<String, Value>,
}

/// Converts the text of one file of kind `kind` into transcript objects.
/// Companion kinds yield nothing. Every document that cannot be converted is
/// an error naming `path`, its line and the reason; the others still convert.
pub fn convert(
    path: &Path,
    text: &str,
    kind: Kind,
    companions: &Companions,
) -> Vec<Result<Record, LoadError>> {
    let mut out = convert_records(path, text, kind, companions);
    // Calls whose arguments were read from JSON values hold the floats
    // `serde_json` read their numbers as: the literals a float does not
    // hold go back in, to be judged as written (`literals`).
    let literals = literals::Literals::of(text);
    if literals.is_empty() {
        return out;
    }
    // A document per line: each call gets its own line's literals (two
    // lines' literals may be written as the same float). A stream's
    // records span lines: the file's.
    let streamed = matches!(
        kind,
        Kind::OpenaiStream | Kind::ResponsesStream | Kind::AnthropicStream
    );
    let lines: Vec<&str> = if streamed {
        Vec::new()
    } else {
        text.lines().collect()
    };
    let mut of_line: Option<(usize, literals::Literals)> = None;
    for rec in out.iter_mut().flatten() {
        match rec
            .line
            .and_then(|n| Some((n, *lines.get(n.checked_sub(1)?)?)))
        {
            Some((n, line)) => {
                if of_line.as_ref().is_none_or(|(m, _)| *m != n) {
                    of_line = Some((n, literals::Literals::of(line)));
                }
                if let Some((_, own)) = &of_line {
                    restore_literals(&mut rec.object, own);
                }
            }
            None => restore_literals(&mut rec.object, &literals),
        }
    }
    out
}

/// Puts back into each call's `arguments` the literals of the capture that
/// a float does not hold ([`literals::Literals::restore`]).
fn restore_literals(object: &mut Map<String, Value>, literals: &literals::Literals) {
    let Some(Value::Array(calls)) = object.get_mut("tool_calls") else {
        return;
    };
    for call in calls {
        let Some(Value::Object(function)) = call.get_mut("function") else {
            continue;
        };
        let Some(arguments) = function.get_mut("arguments") else {
            continue;
        };
        if let Some(text) = literals.restore(arguments) {
            *arguments = Value::String(text);
        }
    }
}

fn convert_records(
    path: &Path,
    text: &str,
    kind: Kind,
    companions: &Companions,
) -> Vec<Result<Record, LoadError>> {
    let stem = stem_of(path);
    let err = |line: Option<usize>, reason: String| LoadError {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let lines;
    let text = match kind {
        Kind::OpenaiStream | Kind::ResponsesStream | Kind::AnthropicStream => {
            lines = array_as_lines(text);
            lines.as_deref().unwrap_or(text)
        }
        _ => text,
    };
    match kind {
        Kind::OpenaiStream | Kind::ResponsesStream | Kind::AnthropicStream => {
            let request = companions.request_for(path);
            return sse::streams(kind, text, request)
                .into_iter()
                .map(|r| r.map_err(|(line, reason)| err(line, reason)))
                .map(|r| r.map(|rec| with_stem(rec, &stem)))
                .collect();
        }
        k if k.companion() => return Vec::new(),
        _ => {}
    }
    let mut out = Vec::new();
    let mut errors = 0usize;
    for doc in documents(path, text) {
        let base = match doc.line {
            Some(n) => format!("{stem}:{n}"),
            None => stem.clone(),
        };
        let value = match doc.value {
            Ok(v) => v,
            Err(reason) => {
                push_error(&mut out, &mut errors, err(doc.line, reason));
                continue;
            }
        };
        let Value::Object(obj) = value else {
            push_error(&mut out, &mut errors, err(doc.line, not_an_object(&value)));
            continue;
        };
        if kind == Kind::Otel {
            // Per span: a span that cannot be read does not stop the others.
            for r in otel::document(&obj, &base) {
                match r {
                    Ok((id, object)) => out.push(Ok(Record {
                        line: doc.line,
                        id,
                        object,
                    })),
                    Err(reason) => push_error(&mut out, &mut errors, err(doc.line, reason)),
                }
            }
            continue;
        }
        // Choices refused beside good ones (`n` > 1), reported after them.
        let mut refused = Vec::new();
        let converted: Converted = match kind {
            Kind::Toolgate => Ok(vec![(base.clone(), obj)]),
            // A JSONL file may mix toolgate's flat objects with pairs.
            Kind::OpenaiChat if obj.get("output").is_some_and(Value::is_string) => {
                Ok(vec![(base.clone(), obj)])
            }
            Kind::OpenaiChat => openai::chat_document(&obj, &base, &mut refused),
            Kind::BatchOutput => openai::batch_output(&obj, companions, &mut refused),
            Kind::Responses => responses::document(&obj, &base),
            Kind::Anthropic => anthropic::document(&obj, &base),
            Kind::Bfcl => bfcl::document(&obj, companions),
            _ => Ok(Vec::new()),
        };
        match converted {
            Ok(records) => out.extend(records.into_iter().map(|(id, object)| {
                Ok(Record {
                    line: doc.line,
                    id,
                    object,
                })
            })),
            Err(reason) => push_error(&mut out, &mut errors, err(doc.line, reason)),
        }
        for reason in refused {
            push_error(&mut out, &mut errors, err(doc.line, reason));
        }
    }
    if errors > sse::MAX_LINE_ERRORS {
        out.push(Err(err(
            None,
            format!(
                "{} more errors not shown (only the first {} are reported)",
                errors - sse::MAX_LINE_ERRORS,
                sse::MAX_LINE_ERRORS
            ),
        )));
    }
    out
}

/// Keeps the first [`sse::MAX_LINE_ERRORS`] errors of a file and counts the
/// rest, so that a file of bad lines cannot grow memory by one error each.
fn push_error(out: &mut Vec<Result<Record, LoadError>>, errors: &mut usize, error: LoadError) {
    *errors += 1;
    if *errors <= sse::MAX_LINE_ERRORS {
        out.push(Err(error));
    }
}

fn with_stem(mut rec: Record, stem: &str) -> Record {
    rec.id = format!("{stem}{}", rec.id);
    rec.object.insert("id".into(), json!(rec.id));
    rec
}

/// What an importer noted about one transcript, kept in `import.notes` as
/// `{"kind": …, "detail": …}` objects: things the capture did that a reader
/// of the labels should know, named so that tools can count them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoteKind {
    /// A complete streamed call had no argument text at all (null or absent
    /// in every delta): read as `{}`, not as a cut-off `""`.
    ArgumentsAbsent,
    /// The stream ended with an error carrying the model's text
    /// (`failed_generation`, Groq's `tool_use_failed`): that text is the
    /// output, and the server's parser produced no call.
    FailedGeneration,
    /// The stream gave distinct calls (by `id`) the same `index` (Ollama,
    /// OpenAI-compatible Gemini shims): each was read as a call of its own.
    IndexReused,
    /// A Responses output (or an Anthropic message) held items that are
    /// neither text, reasoning nor a function call (built-in tool calls such
    /// as `web_search_call`, their results, MCP tool lists): not judged, and
    /// named. Server-side calls are only skipped beside a function call or
    /// before a text answer; otherwise (text before them is a preamble),
    /// they make the document a load error ([`server_calls_only`]), as a
    /// `custom_tool_call` does.
    ItemsSkipped,
    /// A chat answer given as audio (gpt-4o-audio: `content` null,
    /// `message.audio` holding the sound and its `transcript`): the
    /// transcript is the output, the text the model spoke.
    AudioTranscript,
}

impl NoteKind {
    /// Every kind.
    pub const ALL: [NoteKind; 5] = [
        NoteKind::ArgumentsAbsent,
        NoteKind::FailedGeneration,
        NoteKind::IndexReused,
        NoteKind::ItemsSkipped,
        NoteKind::AudioTranscript,
    ];

    /// The snake_case name in `import.notes[].kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::ArgumentsAbsent => "arguments_absent",
            NoteKind::FailedGeneration => "failed_generation",
            NoteKind::IndexReused => "index_reused",
            NoteKind::ItemsSkipped => "items_skipped",
            NoteKind::AudioTranscript => "audio_transcript",
        }
    }
}

/// The typed notes of an `import.notes` array; unknown kinds are skipped.
fn read_notes(notes: Option<&Value>) -> Vec<(NoteKind, String)> {
    notes
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|n| {
            let kind = str_of(n, "kind")?;
            let kind = NoteKind::ALL.into_iter().find(|k| k.as_str() == kind)?;
            Some((kind, str_of(n, "detail").unwrap_or("").to_string()))
        })
        .collect()
}

/// Appends a typed note to an `import` member.
pub(crate) fn add_note(import: &mut Map<String, Value>, kind: NoteKind, detail: String) {
    let notes = import.entry("notes").or_insert_with(|| json!([]));
    if let Value::Array(list) = notes {
        list.push(json!({"kind": kind.as_str(), "detail": detail}));
    }
}

// ---- helpers shared by the converters ----

/// An error event carrying `failed_generation` (Groq's `tool_use_failed`, streamed or not:
/// the server could not parse the model's calls and sends its raw text in
/// the error instead of the chunks).
pub(crate) struct FailedGeneration {
    pub text: String,
    /// The error's `code` (or `type`) and `message`, for the note.
    pub what: String,
}

impl FailedGeneration {
    /// The failed generation of an `error` member, when it carries one.
    pub(crate) fn of(error: &Value) -> Option<FailedGeneration> {
        let text = error.get("failed_generation")?.as_str()?.to_string();
        let code = ["code", "type"]
            .iter()
            .find_map(|k| error.get(*k).and_then(Value::as_str))
            .unwrap_or("error");
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        Some(FailedGeneration {
            text,
            what: format!("`{code}`: {message}"),
        })
    }

    /// The detail of the [`NoteKind::FailedGeneration`] note.
    pub(crate) fn note(what: &str) -> String {
        format!(
            "the server answered with the error {what}; its `failed_generation` (the model's text) is the output, and the server returned no call for it"
        )
    }
}

/// A capture document split into its parts: the request (a pair's), the
/// response (a bare document is its own response), the members carried over
/// to the transcript (a pair's, minus `request` and `response`) and the
/// record id (the pair's `id`, else `base`).
pub(crate) struct Pair<'a> {
    pub(crate) request: Option<std::borrow::Cow<'a, Value>>,
    pub(crate) response: std::borrow::Cow<'a, Value>,
    pub(crate) carry: Map<String, Value>,
    pub(crate) id: String,
    /// Whether the document was a request/response pair.
    pub(crate) paired: bool,
}

/// Splits a document the one way every provider's pairs are written:
/// `{"request": …, "response": …, other members}` or a bare response.
/// The request is read by [`request_of`], the response by [`response_of`].
pub(crate) fn pair<'a>(obj: &'a Map<String, Value>, base: &str) -> Result<Pair<'a>, String> {
    Ok(match obj.get("response") {
        Some(response) => {
            let mut carry = obj.clone();
            carry.remove("request");
            carry.remove("response");
            let id = carry
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| base.to_string(), str::to_string);
            Pair {
                request: request_of(obj.get("request"))?,
                response: response_of(response)?,
                carry,
                id,
                paired: true,
            }
        }
        None => Pair {
            request: None,
            response: std::borrow::Cow::Owned(Value::Object(obj.clone())),
            carry: Map::new(),
            id: base.to_string(),
            paired: false,
        },
    })
}

/// A pair's `request` member as a request object. Absent or `null`: no
/// request was captured (the tools are unknown, SPEC §4). A string is the
/// request as JSON text, as some loggers store it: read as the object it
/// holds. Anything else cannot be read — taken as a request without
/// `tools`, it would be a known, empty allowlist that blames every call as
/// `wrong_tool`.
pub(crate) fn request_of(
    member: Option<&Value>,
) -> Result<Option<std::borrow::Cow<'_, Value>>, String> {
    match member {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(std::borrow::Cow::Borrowed(v))),
        Some(Value::String(text)) => match crate::strict::from_str(text) {
            Ok(v @ Value::Object(_)) => Ok(Some(std::borrow::Cow::Owned(v))),
            Ok(_) => Err(
                "the `request` is a string whose JSON is not an object: the request cannot be read"
                    .into(),
            ),
            Err(e) => Err(format!(
                "the `request` is a string that is not a JSON object ({}): the request cannot be read",
                crate::strict::reason(&e)
            )),
        },
        Some(_) => Err(
            "the `request` must be an object (or null when not captured): the request cannot be read"
                .into(),
        ),
    }
}

/// A pair's `response` member as a response object: the object itself, or
/// JSON text holding one (as some loggers store it, as for the request:
/// [`request_of`]). Anything else is read as it is: the importer says what
/// it misses.
pub(crate) fn response_of(member: &Value) -> Result<std::borrow::Cow<'_, Value>, String> {
    match member {
        Value::String(text) => match crate::strict::from_str(text) {
            Ok(v @ Value::Object(_)) => Ok(std::borrow::Cow::Owned(v)),
            Ok(_) => Err(
                "the `response` is a string whose JSON is not an object: the response cannot be read"
                    .into(),
            ),
            Err(e) => Err(format!(
                "the `response` is a string that is not a JSON object ({}): the response cannot be read",
                crate::strict::reason(&e)
            )),
        },
        other => Ok(std::borrow::Cow::Borrowed(other)),
    }
}

/// JSON text holding an object, read for detection only: `None` for any
/// other text (a prose `response` is not a capture's), or for one of too
/// many values ([`crate::strict::from_str`] refuses it unbuilt).
fn object_text(text: &str) -> Option<Value> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    crate::strict::from_str(text).ok().filter(Value::is_object)
}

/// The `import` member: where a transcript came from.
pub(crate) fn import_info(kind: Kind) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("from".into(), json!(kind.name()));
    m.insert("raw_text".into(), json!(!kind.post_parse()));
    if kind.post_parse() {
        m.insert(
            "note".into(),
            json!(
                "the provider parsed the raw text away: only the native mode judges this transcript"
            ),
        );
    }
    m
}

/// An OpenAI-shape native call with `arguments` as a JSON string (an object
/// is serialized; a string is kept byte for byte, so a cut-off one stays cut off).
pub(crate) fn native_call(id: Option<&str>, name: &str, arguments: &Value) -> Value {
    let args = match arguments {
        Value::String(s) => Value::String(s.clone()),
        Value::Null => Value::String(String::new()),
        other => Value::String(other.to_string()),
    };
    let mut call = Map::new();
    if let Some(id) = id {
        call.insert("id".into(), json!(id));
    }
    call.insert("type".into(), json!("function"));
    call.insert("function".into(), json!({"name": name, "arguments": args}));
    Value::Object(call)
}

/// Whether a finish or stop reason, in a provider's own spelling, is its
/// token limit: Anthropic's `max_tokens` and `model_context_window_exceeded`
/// (the context window ran out mid-generation: cut as by the limit),
/// Gemini's `MAX_TOKENS`. The post-parse importers write it `length`, the
/// word SPEC §2 reads as evidence of truncation.
pub(crate) fn at_token_limit(reason: &str) -> bool {
    matches!(
        reason,
        "max_tokens" | "model_context_window_exceeded" | "MAX_TOKENS"
    )
}

/// Whether a finish or stop reason says that the provider stopped the
/// generation before the model ended it, one rule for every importer: its
/// token limit ([`at_token_limit`]), a content filter (OpenAI's and
/// Azure's `content_filter`), Anthropic's `refusal` (its classifiers
/// intervened), or Gemini's stops for safety and validity (`SAFETY`,
/// `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`,
/// `MALFORMED_FUNCTION_CALL`; any case, as instrumentations spell them).
///
/// A message stopped so whose last part is a tool call has that call cut
/// off whatever its arguments hold ([`cut_last_call`]): the provider may
/// return the part it parsed as whole-looking JSON, and later calls may be
/// lost. A Responses object says the same with its `incomplete` status
/// (any `incomplete_details.reason`), which its importer reads as this.
///
/// `length` is not among them: an OpenAI-style provider sends a call's
/// argument text as generated, so a call its limit cut is incomplete JSON,
/// `truncation` already (SPEC §5 rule 5), and `length` is left as recorded;
/// only from a provider that parses calls does it cut (`otel::parses_calls`).
pub(crate) fn stopped_early(reason: &str) -> bool {
    at_token_limit(reason)
        || reason == "content_filter"
        || reason == "refusal"
        || [
            "SAFETY",
            "RECITATION",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "MALFORMED_FUNCTION_CALL",
        ]
        .iter()
        .any(|r| reason.eq_ignore_ascii_case(r))
}

/// Cuts off the last of `calls`, for a message the provider stopped early
/// ([`stopped_early`], or a stream that never said why it stopped) whose
/// last part is that call: the call is incomplete, whatever its arguments
/// hold. Its arguments become `""`, which SPEC §5 rule 5 labels
/// `truncation` for a native call, so nothing executes. Returns the
/// arguments received, to be kept in `import.truncated_input`; `None` when
/// there is no call to cut.
pub(crate) fn cut_last_call(calls: &mut [Value]) -> Option<Value> {
    let Some(Value::Object(call)) = calls.last_mut() else {
        return None;
    };
    let Some(Value::Object(function)) = call.get_mut("function") else {
        return None;
    };
    function.insert("arguments".into(), json!(""))
}

/// [`cut_last_call`], keeping the arguments received in `import`'s
/// `truncated_input` unless nothing was received (`""`: a call cut before
/// its arguments, or cut already) or an importer already kept them there
/// (a Responses item cut by its own status).
pub(crate) fn cut_last_call_into(calls: &mut [Value], import: &mut Map<String, Value>) {
    let received = cut_last_call(calls).filter(|r| r.as_str() != Some(""));
    if let Some(received) = received
        && !import.contains_key("truncated_input")
    {
        import.insert("truncated_input".into(), received);
    }
}

/// A bare tool definition (`{"type": "function", "function": {…}}`).
pub(crate) fn tool_def(
    name: &str,
    description: Option<&Value>,
    parameters: Option<&Value>,
) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), json!(name));
    if let Some(d) = description.filter(|d| d.is_string()) {
        f.insert("description".into(), d.clone());
    }
    if let Some(p) = parameters.filter(|p| !p.is_null()) {
        f.insert("parameters".into(), p.clone());
    }
    json!({"type": "function", "function": Value::Object(f)})
}

/// `expect` from a tool choice: `none` → no call; a named function → that
/// call; `auto`/`required`/`any` → nothing (absent `expect` already means
/// "one or more calls of any allowlisted tool").
pub(crate) fn expect_from_choice(name_or_none: Option<Result<&str, ()>>) -> Option<Value> {
    match name_or_none? {
        Err(()) => Some(json!({"calls": []})),
        Ok(name) => Some(json!({"calls": [{"name": name}]})),
    }
}

/// Keeps of `tools` (definitions in either shape, `{"type": "function",
/// "function": {"name"}}` or flat `{"name"}`) those whose name `allowed`
/// holds ([`crate::choice::narrowing`]); returns the names of the others, left
/// out of the allowlist.
pub(crate) fn keep_allowed_tools(tools: &mut Vec<Value>, allowed: &[String]) -> Vec<Value> {
    let mut left_out = Vec::new();
    tools.retain(|t| {
        let name = t
            .get("function")
            .and_then(|f| str_of(f, "name"))
            .or_else(|| str_of(t, "name"));
        let keep = name.is_some_and(|n| allowed.iter().any(|a| a == n));
        if !keep {
            left_out.push(json!(name.unwrap_or("?")));
        }
        keep
    });
    left_out
}

/// Whether a captured request's `parallel_tool_calls` (`value`, the member
/// as written) lets at most one call execute, by the proxy's rule
/// ([`crate::choice::one_call_at_most`]). The importers write it as the
/// transcript's `parallel_tool_calls: false`, which replay applies as the
/// proxy does: an output of more than one call is rejected at the `single`
/// gate. A value that is not a boolean (or null) is a load error naming it,
/// as an unreadable `tool_choice` is (the proxy refuses such a request).
pub(crate) fn one_call_of(value: Option<&Value>) -> Result<bool, String> {
    crate::choice::one_call_at_most(value).map_err(|e| format!("the request's {e}"))
}

/// The same limit read from an Anthropic Messages request's `tool_choice`
/// (`choice`): its `disable_parallel_tool_use: true` is written as the
/// transcript's `parallel_tool_calls: false`, so replay rejects an answer
/// of more than one `tool_use` at the `single` gate as for Chat
/// Completions ([`crate::choice::parallel_disabled`]); a value that is not
/// a boolean (or null) is a load error naming it.
pub(crate) fn one_call_of_anthropic(choice: Option<&Value>) -> Result<bool, String> {
    crate::choice::parallel_disabled(choice.and_then(|c| c.get("disable_parallel_tool_use")))
        .map_err(|e| format!("the request's {e}"))
}

/// What a one-reply importer (Anthropic Messages, Responses) read from a
/// response, before it becomes a transcript object ([`Reply::record`]).
pub(crate) struct Reply {
    pub(crate) model: Option<String>,
    /// The request's tools; `None` without a request (the tool list is then
    /// unknown: no `tools` key, SPEC §4).
    pub(crate) tools: Option<Vec<Value>>,
    pub(crate) output: String,
    pub(crate) reasoning: Option<String>,
    pub(crate) calls: Vec<Value>,
    pub(crate) finish_reason: Option<String>,
    pub(crate) expect: Option<Value>,
    /// The request set `parallel_tool_calls: false` ([`one_call_of`]), or
    /// Anthropic's `disable_parallel_tool_use: true`
    /// ([`one_call_of_anthropic`]).
    pub(crate) one_call: bool,
    pub(crate) import: Map<String, Value>,
}

impl Reply {
    /// The transcript object `id`: the read members in their fixed order,
    /// then the document's own members (`carry`) beside them, never over
    /// them ([`carry_over`]).
    pub(crate) fn record(self, id: String, carry: Map<String, Value>) -> Converted {
        let mut rec = Map::new();
        rec.insert("id".into(), json!(id));
        if let Some(m) = self.model {
            rec.insert("model".into(), json!(m));
        }
        if let Some(tools) = self.tools {
            rec.insert("tools".into(), Value::Array(tools));
        }
        if self.one_call {
            rec.insert("parallel_tool_calls".into(), json!(false));
        }
        rec.insert("output".into(), json!(self.output));
        if let Some(r) = self.reasoning {
            rec.insert("reasoning".into(), json!(r));
        }
        rec.insert("tool_calls".into(), Value::Array(self.calls));
        if let Some(f) = self.finish_reason {
            rec.insert("finish_reason".into(), json!(f));
        }
        if let Some(e) = self.expect {
            rec.insert("expect".into(), e);
        }
        rec.insert(IMPORT_MEMBER.into(), Value::Object(self.import));
        carry_over(&mut rec, &carry, false);
        Ok(vec![(id, rec)])
    }
}

/// The members of a transcript object an importer computes from the
/// capture itself. A pair document's own member of one of these names never
/// replaces what was computed: a wrapper's `tool_calls` would otherwise be
/// judged (and executed) as the model's, its `tools` would replace the
/// request's allowlist, its `import` would hide what the importer noted.
/// `model` and `sample` are metadata the capture may lack: the document's
/// fills them when the importer found none.
const COMPUTED_MEMBERS: &[&str] = &[
    "model",
    "sample",
    "tools",
    "parallel_tool_calls",
    "output",
    "reasoning",
    "tool_calls",
    "finish_reason",
    "chunks",
    IMPORT_MEMBER,
];

/// Copies a pair document's other members (`id`, `task`, `expect`,
/// `labels`, a logger's own fields …) onto the transcript object `rec`,
/// whose `import` member is already written. A member named as one the
/// importer computes ([`COMPUTED_MEMBERS`]) is not copied; when it differs
/// from what was computed its name is listed in `import.ignored_members`,
/// and so is a member named as one of the transcript's own that does not
/// have its type ([`own_member_fits`]). Credentials at any depth (by name,
/// [`crate::sanitize::is_credential_key`], or by a value's shape: a URL's
/// `?key=`, a header list, `Bearer …`, [`redact_member`]) are replaced by
/// [`REDACTED`], their paths listed
/// in `import.redacted_members`: imported transcripts are meant to be
/// committed as corpora, and the proxy never records them either. `expect`
/// and `labels` are not searched: they are toolgate's own members, whose
/// keys are argument names and mode names, never credentials (an expected
/// `page_token` redacted would blame the model). `skip_id`: the `id` is not
/// copied (a split choice has its own).
pub(crate) fn carry_over(rec: &mut Map<String, Value>, carry: &Map<String, Value>, skip_id: bool) {
    let mut ignored = Vec::new();
    let mut redacted = Vec::new();
    for (k, v) in carry {
        if k == "id" && skip_id {
            continue;
        }
        if COMPUTED_MEMBERS.contains(&k.as_str()) {
            let fills = matches!(k.as_str(), "model" | "sample") && !rec.contains_key(k);
            if !fills {
                if rec.get(k) != Some(v) {
                    ignored.push(json!(k));
                }
                continue;
            }
        }
        if !own_member_fits(k, v) {
            ignored.push(json!(k));
            continue;
        }
        let mut v = v.clone();
        if matches!(k.as_str(), "expect" | "labels") {
            // Toolgate's own: schemas and label names (see above).
        } else {
            redact_member(k, &mut v, k, &mut redacted, 0);
        }
        rec.insert(k.clone(), v);
    }
    if let Some(Value::Object(import)) = rec.get_mut(IMPORT_MEMBER) {
        if !ignored.is_empty() {
            import.insert("ignored_members".into(), Value::Array(ignored));
        }
        if !redacted.is_empty() {
            import.insert("redacted_members".into(), Value::Array(redacted));
        }
    }
}

/// Whether a wrapper member named as one of the transcript's own (SPEC §2)
/// has the type the loader reads it as. A logger's `"id": 12345`,
/// `"labels": ["production"]` or `"labels": {"env": "prod"}` means something
/// else by the name: carried, it would make the whole record unreadable (or
/// store labels of a mode named `env`), so it is dropped instead and named
/// in `import.ignored_members`. `null` is the member's absence and fits.
fn own_member_fits(key: &str, value: &Value) -> bool {
    if value.is_null() {
        return true;
    }
    match key {
        "id" | "task" => value.is_string(),
        "expect" => value.is_object(),
        // Mode names cannot be checked (a declared format is a mode), the
        // labels can: each must be one of the label names.
        "labels" => value.as_object().is_some_and(|m| {
            m.values().all(|l| {
                l.as_str()
                    .is_some_and(|l| l.parse::<crate::Label>().is_ok())
            })
        }),
        _ => true,
    }
}

pub use crate::sanitize::REDACTED;
use crate::sanitize::redact_member;

/// The model a response was from: the response's own `model`, else the
/// request's (a pair document's `model` fills it only when both lack one,
/// [`carry_over`]).
pub(crate) fn model_of(response: &Value, request: Option<&Value>) -> Option<String> {
    str_of(response, "model")
        .or_else(|| request.and_then(|r| str_of(r, "model")))
        .map(str::to_string)
}

/// Notes the response's `usage` object and its `id` in the `import` member.
pub(crate) fn note_usage_and_id(import: &mut Map<String, Value>, response: &Value) {
    if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
        import.insert("usage".into(), u.clone());
    }
    if let Some(id) = str_of(response, "id") {
        import.insert("response_id".into(), json!(id));
    }
}

/// An error object as `` `code`: message `` for a load error: its `code`
/// (a string or a number), else its `type`, and its `message` (a bare
/// string is the message). Both are the provider's text: bounded.
pub(crate) fn error_what(error: &Value) -> String {
    let code = match error.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
    .or_else(|| str_of(error, "type").map(str::to_string))
    .unwrap_or_else(|| "error".into());
    let message = match error {
        Value::String(s) => s.as_str(),
        _ => str_of(error, "message").unwrap_or(""),
    };
    let bound = |s: &str, n: usize| -> String { s.chars().take(n).collect() };
    format!("`{}`: {}", bound(&code, 64), bound(message, 500))
}

/// Why `response` is a provider's error body rather than an answer, when
/// it is one: `{"error": {…}}` (OpenAI and compatible servers), Anthropic's
/// `{"type": "error", "error": {…}}`, vLLM's `{"object": "error",
/// "message", "code"}`. A provider error never becomes a transcript.
pub(crate) fn error_body(response: &Value) -> Option<String> {
    let error = response.get("error").filter(|e| !e.is_null());
    let typed =
        str_of(response, "type") == Some("error") || str_of(response, "object") == Some("error");
    if error.is_none() && !typed {
        return None;
    }
    let what = error_what(
        error
            .filter(|e| e.is_object() || e.is_string())
            .unwrap_or(response),
    );
    Some(format!("the response is an error, not an answer: {what}"))
}

/// The name of a server-side tool call for [`server_calls_only`]: its type,
/// and the tool's name when it has one (the model's: bounded, quoted).
pub(crate) fn server_call_name(kind: &str, item: &Value) -> String {
    let kind: String = kind.chars().take(64).collect();
    match str_of(item, "name") {
        Some(name) => {
            let name: String = name.chars().take(64).collect();
            format!("{kind} {name:?}")
        }
        None => kind,
    }
}

/// The reason a response that is only server-side tool calls (built-in
/// tools the provider runs itself: web search, MCP, code execution) is not
/// imported. They are the model's calls, but not of the request's function
/// tools, and toolgate cannot judge them: read as an answer without calls,
/// the response would be the model's `no_call` (or `pass` where no call
/// was expected). With a function call beside them, that call is judged,
/// and with a text answer after them, that text is the answer; the server
/// calls are named in the note `items_skipped`. Text before them is a
/// preamble ("Let me search."), not an answer. Calls of built-in tools the
/// client runs (computer use, shell) are never server-side: refused on
/// their own, as custom tool calls are.
pub(crate) fn server_calls_only(calls: &[String]) -> String {
    let shown: Vec<&str> = calls.iter().take(8).map(String::as_str).collect();
    let more = match calls.len().saturating_sub(shown.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "the response's only tool calls are server-side ({}{more}): the provider runs them, \
         they are not calls of the request's function tools and cannot be judged, and the \
         response is not imported rather than read as `no_call`",
        shown.join(", ")
    )
}

/// A request's tool list under `key` (`tools`, or the legacy `functions`):
/// `None` when absent or null (none declared), else it must be a list — an
/// object read as `[]` would be a known, empty allowlist that blames every
/// call as `wrong_tool`.
pub(crate) fn tool_list<'a>(request: &'a Value, key: &str) -> Result<Option<&'a [Value]>, String> {
    // A request that is not an object (a companion's, a Batch input body)
    // has no tools to read; read as one without them it would be `tools: []`.
    if !request.is_object() {
        return Err("the request must be an object: its tools cannot be read".into());
    }
    match request.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(_) => Err(format!(
            "the request's `{key}` must be a list: the tools cannot be read"
        )),
    }
}

/// A string member, or `None`.
pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Parses a value that may be JSON text (`"[…]"`) or the value itself.
pub(crate) fn json_or_value(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
