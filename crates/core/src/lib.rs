//! # toolgate-core: the vocabulary
//!
//! toolgate turns raw LLM output into tool calls that are safe to execute.
//! This crate holds the words every other crate speaks in, and the reading
//! and writing of transcript files; it knows nothing of wire formats, JSON
//! Schema or terminals.
//!
//! ## Place in the dependency order
//!
//! First and alone: core depends on no other toolgate crate, and every
//! other crate depends on it (formats → validator → batch → matrix, tui,
//! proxy → otel, python → the `toolgate` binary). A type two crates must
//! agree on lives here.
//!
//! ## Main types
//!
//! - [`Call`]: the normalized call `{"name": …, "arguments": {…}}` (SPEC §1).
//! - [`Candidate`]: what an extractor found — its mode, byte [`Span`], raw
//!   payload, the tool name when readable, and either parsed arguments or a
//!   [`ParseFailure`] (SPEC §3), with the lenient [`Repair`]s applied.
//! - [`Label`]: `pass` or one of the eleven failures (SPEC §5), with the
//!   [`RetryAdvice`] that follows from it.
//! - [`Decision`], [`Gate`], [`Telemetry`]: what the pipeline decided and
//!   the record it leaves behind (SPEC §4).
//! - [`Transcript`]: one captured model interaction, with typed members read
//!   once by the loader ([`StoredLabels`], [`ImportInfo`], [`ProxyInfo`]).
//!   `tools_known` keeps an absent tool list apart from an empty one.
//! - [`load`]: `.json`, `.jsonl` and the `request`/`response` form, and
//!   every other stack's capture format through [`import`]; bad files are
//!   [`LoadError`]s. [`convert`] is `toolgate import` as a library.
//! - [`strict`]: JSON as `serde_json` reads it, but an object repeating a
//!   key is refused (ambiguous), which every document the loader and the
//!   importers read goes through.
//! - [`relabel`], [`jsontext`] and `load`'s writers: the one rule of which
//!   labels are stored and compared, and byte-preserving, atomic edits of a
//!   transcript's `labels` member.
//! - [`answer`]: the shape a chat completion or stream chunk must have
//!   before its calls can be judged — one rule for `toolgate proxy --mode
//!   enforce` and the Python guardrails.
//! - [`choice`]: which of a request's tools its `tool_choice` (or legacy
//!   `function_call`) lets the model call; the proxy narrows its allowlist
//!   by it.
//! - [`sanitize`] and [`jsonout`]: untrusted text made safe for a terminal,
//!   as plain text, table cells and JSON records.
//!
//! ## Invariants
//!
//! - **Bad input is data.** A file that cannot be read, is not UTF-8, not
//!   JSON, too large or not a regular file is a [`LoadError`] with path,
//!   line and reason; nothing here stops a batch, and nothing panics on any
//!   input.
//! - **Bounded memory.** Files are read within a size limit, JSONL as a
//!   stream of lines; capture conversion holds one input at a time.
//! - **Nothing raw on screen.** Every string from a transcript that is
//!   printed goes through [`sanitize`] (text) or [`jsonout`] (JSON, where
//!   DEL, C1 controls and bidi overrides are escaped as well).
//! - **Writes are atomic and exact.** Labels are written through an
//!   exclusive random temporary file and a rename; every byte outside the
//!   `labels` member stays as it was, and a file that changed since it was
//!   read is not overwritten.
//! - **Providers' envelopes, not models' text.** The importers convert API
//!   envelopes; they never interpret what the model wrote. No async runtime.
//!
//! ## The public surface
//!
//! The types above are re-exported here. Modules are public where other
//! crates name them by path (`answer`, `load`, `import`, `sanitize`, `jsonout`,
//! `jsontext`, `relabel`, `convert`); the file reading (`file`) and the
//! label writer (`write`) are private, reached through [`load`].
//!
//! ```
//! use toolgate_core::{Call, Label};
//! let call = Call::new("get_weather", serde_json::json!({"city": "Antwerp"}));
//! assert_eq!(call.to_json()["arguments"]["city"], "Antwerp");
//! assert_eq!("type_coercion".parse::<Label>().unwrap(), Label::TypeCoercion);
//! ```
#![deny(missing_docs)]

pub mod answer;
mod call;
mod candidate;
pub mod choice;
pub mod convert;
mod decision;
pub mod delta;
mod file;
pub mod import;
pub mod jsonout;
pub mod jsonstr;
pub mod jsontext;
mod label;
pub mod load;
pub mod nodes;
pub mod relabel;
pub mod sanitize;
pub mod stdio;
pub mod strict;
mod transcript;
mod write;

/// Most choices one chat completion may hold, streamed or not (OpenAI's
/// `n` is at most 128): one cap for everything that reads an answer — the
/// importers (a response with more is not read, a stream's later indexes
/// are not) and the proxy (an answer with more is unchecked, a stream
/// naming more is broken) — so that memory follows an answer's size, not
/// the number of choices it names.
pub const MAX_CHOICES: usize = 128;

pub use call::Call;
pub use candidate::{Candidate, FailureKind, ParseFailure, Repair, Source, Span};
pub use decision::{Decision, Gate, SchemaValidation, Telemetry, ToolResultStatus};
pub use file::utf8_prefix;
pub use import::ImportInfo;
pub use label::{Label, RetryAdvice};
pub use load::{LoadError, Loaded, load_paths};
pub use transcript::{
    Expectation, ExpectedCall, NativeCall, ProxyInfo, StoredLabels, ToolDef, Transcript,
};
