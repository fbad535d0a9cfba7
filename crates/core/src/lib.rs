//! # toolgate-core: the vocabulary
//!
//! Every other toolgate crate speaks in the types defined here, and this crate
//! knows nothing of wire formats, JSON Schema or terminals:
//!
//! - [`Call`]: the normalized call `{"name": …, "arguments": {…}}` (SPEC §1).
//! - [`Candidate`]: what an extractor found — its mode, byte [`Span`], raw
//!   payload, the tool name when readable, and either parsed arguments or a
//!   [`ParseFailure`] (SPEC §3).
//! - [`Label`]: `pass` or one of the eleven failures (SPEC §5), with the retry
//!   advice that follows from it.
//! - [`Decision`], [`Gate`], [`Telemetry`]: what the pipeline decided and the
//!   record it leaves behind (SPEC §4).
//! - [`Transcript`] and [`load`]: captured model interactions and the loading of
//!   `.json` / `.jsonl` files, reporting bad files as data, never aborting.
//!
//! ```
//! use toolgate_core::{Call, Label};
//! let call = Call::new("get_weather", serde_json::json!({"city": "Antwerp"}));
//! assert_eq!(call.to_json()["arguments"]["city"], "Antwerp");
//! assert_eq!("type_coercion".parse::<Label>().unwrap(), Label::TypeCoercion);
//! ```
#![deny(missing_docs)]

mod call;
mod candidate;
pub mod convert;
mod decision;
pub mod file;
pub mod import;
pub mod jsonout;
pub mod jsontext;
mod label;
pub mod load;
pub mod relabel;
pub mod sanitize;
mod transcript;
pub mod write;

pub use call::Call;
pub use candidate::{Candidate, FailureKind, ParseFailure, Repair, Source, Span};
pub use decision::{Decision, Gate, SchemaValidation, Telemetry, ToolResultStatus};
pub use import::ImportInfo;
pub use label::{Label, RetryAdvice};
pub use load::{LoadError, Loaded, load_paths};
pub use transcript::{
    Expectation, ExpectedCall, NativeCall, ProxyInfo, StoredLabels, ToolDef, Transcript,
};
