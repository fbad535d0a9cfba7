//! # toolgate-formats: phase 1, extraction
//!
//! An [`Extractor`] turns model output into [`Candidate`]s. Extraction is
//! string work only: it never executes anything, never consults the
//! allowlist, never fails (bad input is reported as a candidate's
//! [`ParseFailure`](toolgate_core::ParseFailure)), and runs in time linear in
//! the output length.
//!
//! Each wire format is one file of data ([`format`]) naming the extractor
//! that reads it; [`builtin`] lists them in a stable order. At run time a user adds modes as data: declared
//! formats ([`declared`], read by the built-in engines) and regex patterns
//! ([`patterns`]). Every extractor has a strict and a lenient variant
//! ([`Strictness`]): the lenient one applies the named
//! [`Repair`](toolgate_core::Repair)s and records each.
//!
//! ```
//! use toolgate_formats::{Input, Strictness, by_name};
//! let hermes = by_name("hermes").unwrap();
//! let out = r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>"#;
//! let found = hermes.extract(&Input::new(out), Strictness::Strict);
//! assert_eq!(found[0].call().unwrap().name, "get_weather");
//! ```
#![deny(missing_docs)]

pub mod callobj;
pub mod cap;
pub mod catalog;
pub mod declared;
mod description;
pub mod families;
mod find;
pub mod format;
pub mod input;
pub mod irregular;
pub mod jsonread;
pub mod models;
pub mod modes;
pub mod openers;
pub mod patterns;
pub mod prefilter;
pub mod reasoning;
pub mod rules;
pub mod table;
pub mod util;

pub use catalog::CatalogError;
pub use input::{Input, ParamTypes, Strictness, reads_strictness};
use toolgate_core::Candidate;

/// One wire format: `text -> candidates`.
pub trait Extractor: Send + Sync {
    /// The mode name (`hermes`, `tag`, a custom pattern's name, …).
    fn name(&self) -> &str;
    /// One example output in this format (for `toolgate formats`).
    fn example(&self) -> &str;
    /// A one-line description of the wire shape.
    fn describe(&self) -> &str;
    /// Every candidate in `input`, in output order. Candidates inside reasoning
    /// are returned too, with a reasoning [`Source`](toolgate_core::Source).
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate>;
    /// The mode's row of the format table: the built-in row of that name, or
    /// a declared format's own ([`declared`]); `None` for a custom regex
    /// pattern.
    fn row(&self) -> Option<table::Row> {
        table::row(self.name()).map(table::Format::to_row)
    }
    /// The literal tokens that can begin a candidate, for streaming
    /// hold-back: the row's [`openers`](table::Format::openers) (a built-in
    /// row's, or a declared format's own); `None` when a candidate can begin
    /// without a fixed token (a custom regex pattern): hold the whole output.
    fn openers(&self) -> Option<&'static [&'static str]> {
        openers::openers(self.name())
    }
}

/// The built-in extractors, in the stable order used for replay, tables and
/// snapshots. `native` is included: it finds nothing unless the transcript
/// has `tool_calls`.
pub fn builtin() -> Vec<Box<dyn Extractor>> {
    format::ALL
        .iter()
        .map(|d| {
            Box::new(rules::Ruled {
                inner: (d.extractor)(),
                row: d.row,
            }) as Box<dyn Extractor>
        })
        .collect()
}

/// The built-in extractor called `name`.
pub fn by_name(name: &str) -> Option<Box<dyn Extractor>> {
    builtin().into_iter().find(|e| e.name() == name)
}
