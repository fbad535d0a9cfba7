//! # The irregular formats
//!
//! The formats no engine configuration describes, each with its own
//! hand-written reader. Everything else is a format file
//! ([`crate::format`]) naming an engine and its tokens; these are the named
//! exceptions (issue 27 item 2), and why:
//!
//! - [`gemma`]: Gemma 4 / FunctionGemma's own literal syntax — bare keys,
//!   strings quoted by a special token (`<|"|>`, `<escape>`) holding raw
//!   text with no escapes. No JSON or Python literal reader reads it, so it
//!   has its own reader (iterative, depth-capped).
//! - [`json`]: the whole output is the payload — a call object or an array
//!   of them standing alone (fenced or not), with no marker at all; prose
//!   around it makes it no call. No engine reads "the entire text".
//! - [`native`]: reads no text. The calls are the transcript's own
//!   `tool_calls` (OpenAI's `function.name` and `function.arguments` as a
//!   JSON string), so there is nothing to configure.
//!
//! Harmony's channels are the other irregular format; its reader is still
//! in [`crate::families::tagged`].
//!
//! Not listed here: the seed modes in [`crate::modes`] (`hermes`, `tag`,
//! `marker`, `fence`) each add a rule of their own to the `json_block`
//! shape (hermes skips a non-JSON payload inside its tag instead of failing
//! it; tag reads the name from an attribute; marker reads one object per
//! whole-word marker, up to the next marker; fence reads fenced blocks), so
//! the `json_block` engine does not give their labels byte for byte yet;
//! and `bracket` is the pythonic engine's parser.

pub mod gemma;
pub mod json;
pub mod native;
