//! # toolgate-formats: phase 1, extraction
//!
//! An [`Extractor`] turns model output into [`Candidate`]s. Extraction is
//! string work only: it never executes anything, never consults the
//! allowlist, never fails (bad input is reported as a candidate's
//! [`ParseFailure`](toolgate_core::ParseFailure)), and runs in time linear in
//! the output length.
//!
//! ## One funnel
//!
//! Callers extract through [`extract`]: it runs a mode over an [`Input`] with
//! a [`Strictness`] and applies the rules every mode shares, so no caller
//! re-decides them. Two rules are per concept rather than per format:
//!
//! - **Missing closer** (SPEC §9): when the output ends inside a block of a
//!   mode's row, the last live candidate reaching into it is `truncated`.
//!   Every built-in and declared mode carries it (they are wrapped in it when
//!   built), so it holds for [`Extractor::extract`] too.
//! - **Reasoning markers inside a candidate**: a reasoning span whose
//!   opening lies inside a candidate of the output (`<think>` in a call's
//!   string argument), or whose only marker, an orphan `</think>`, does, is
//!   not reasoning: it is the candidate's own text, not a block the model
//!   reasoned in. [`extract`] extracts again without those spans, and
//!   without any span if the second pass is crossed again (at most three
//!   passes: linear). Left as reasoning, such a marker hid the calls after
//!   it (a `<think>` in the first call's argument made the second call
//!   reasoning, so a disallowed call there went unjudged and the first
//!   executed alone), or the calls before an orphan `</think>`.
//! - **Candidate cap** (issue 9): at most [`Input::max_candidates`]
//!   ([`DEFAULT_MAX_CANDIDATES`] unless the caller sets another) candidates
//!   per mode per output; past it the first ones and the last are kept and
//!   the rest fold into one `malformed` stand-in that gives the true count.
//!   Built-in modes enforce it while they scan (bounded memory); [`extract`]
//!   applies it to every mode, a custom pattern's included.
//!
//! Every extractor has a strict and a lenient variant ([`Strictness`]): the
//! lenient one applies the named [`Repair`](toolgate_core::Repair)s and
//! records each. [`reads_strictness`] tells whether an extraction ever
//! branched on it, so replay can skip the lenient pass when it would repeat
//! the strict one.
//!
//! ```
//! use toolgate_formats::{Input, Strictness, by_name, extract};
//! let hermes = by_name("hermes").unwrap();
//! let out = r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>"#;
//! let found = extract(hermes.as_ref(), &Input::new(out), Strictness::Strict);
//! assert_eq!(found[0].call().unwrap().name, "get_weather");
//! ```
//!
//! ## The modes: built-in, pattern, declared
//!
//! Each built-in wire format is one file of data (`src/format/<mode>.rs`)
//! naming the engine that reads it; [`builtin`] lists them in a stable replay
//! order and [`by_name`] finds one. At run time a user adds modes as data:
//! regex patterns (a patterns file, seed 003) and declared formats (a
//! formats file, read by the same engines as the built-in rows and under the
//! same rules). The [`Catalog`] assembles a run's modes, built-in then
//! custom, from the texts of those files and of [`CONFIG_FILE`], and applies
//! the name-clash rules (mode names are the keys of every label map; a
//! declared format may not take a built-in profile's name); its errors are
//! [`CatalogError`], [`PatternError`] and [`FormatError`].
//! [`config_models`] reads the `[models]` table of [`CONFIG_FILE`] for the
//! validator's `auto` profile.
//!
//! ## The format table, as data
//!
//! What the rest of the project knows about each built-in format is its
//! [`Format`] row ([`FORMATS`], [`row`]; owned as a [`Row`], which
//! [`Extractor::row`] also gives for a declared format): its model families,
//! its [`Engine`] (the shape that reads it), its tokens, its [`StopToken`],
//! its [`PayloadKind`] and the [`Triggers`] the prefilter searches for.
//! [`closer_cuts_of`] finds where an example's closers end (the cross-format
//! table tests cut examples there). Derived from the same files: the model
//! table of `auto` ([`mode_for_model`], [`BARE_READERS`]) and the built-in
//! profiles ([`profiles`]).
//!
//! ## Helpers for the layers above
//!
//! - Streaming: [`openers`] are the tokens that can begin a candidate of a
//!   mode (a gateway holds text back only from the first of them), and a
//!   mode whose candidate may begin at byte 0 without one has a
//!   [`StartRule`] ([`start_rule`], [`Start`], [`START_SEGMENT`]).
//! - Replay: the [`Prefilter`] finds, in one pass over an output, which
//!   modes can find anything in it.
//! - Shared string work: [`reasoning_spans`] (where an output reasons),
//!   [`json_type_name`] (`an object`, `a string`, … for messages) and
//!   [`find_from`] (a cached SIMD substring search).
//!
//! Every module is private: the list above, re-exported here, is the
//! crate's whole surface.
#![deny(missing_docs)]

mod callobj;
mod cap;
mod catalog;
mod declared;
mod description;
mod families;
mod find;
mod format;
mod input;
mod irregular;
mod jsonread;
mod models;
mod openers;
mod patterns;
mod prefilter;
mod reasoning;
mod rules;
mod table;
mod util;

// Extraction.
pub use input::{DEFAULT_MAX_CANDIDATES, Input, ParamTypes, Strictness, reads_strictness};
// The modes of a run.
pub use catalog::{CONFIG_FILE, Catalog, CatalogError, config_models};
pub use declared::FormatError;
pub use patterns::PatternError;
// The format table and what is derived from it.
pub use description::{Engine, Format, PayloadKind, Row, StopToken, Triggers, closer_cuts_of};
pub use format::profiles;
pub use models::{BARE_READERS, mode_for_model};
pub use table::{FORMATS, row};
// Helpers for the layers above.
pub use callobj::type_name as json_type_name;
pub use find::find_from;
pub use openers::{START_SEGMENT, Start, StartRule, openers, start_rule};
pub use prefilter::Prefilter;
pub use reasoning::spans as reasoning_spans;

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
    /// The mode's own rules only: callers go through [`extract`], which
    /// also applies the candidate cap.
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate>;
    /// The mode's row of the format table: the built-in row of that name, or
    /// a declared format's own; `None` for a custom regex pattern.
    fn row(&self) -> Option<Row> {
        table::row(self.name()).map(Format::to_row)
    }
    /// The literal tokens that can begin a candidate, for streaming
    /// hold-back: the row's [`openers`](Format::openers) (a built-in
    /// row's, or a declared format's own); `None` when a candidate can begin
    /// without a fixed token (a custom regex pattern): hold the whole output.
    fn openers(&self) -> Option<&'static [&'static str]> {
        openers::openers(self.name())
    }
}

/// Every candidate `extractor` finds in `input`, under the rules every mode
/// shares (see the crate docs): the mode's own extraction, which carries the
/// missing-closer rule, then the candidate cap of
/// [`Input::max_candidates`]. The one way callers extract.
pub fn extract(
    extractor: &dyn Extractor,
    input: &Input<'_>,
    strictness: Strictness,
) -> Vec<Candidate> {
    let mut found = extractor.extract(input, strictness);
    let crossed = reasoning::crossed(input.output, &input.reasoning, &found);
    if crossed.iter().any(|&c| c) {
        let mut again = input.clone();
        let mut keep = crossed.iter().map(|&c| !c);
        again.reasoning.retain(|_| keep.next().unwrap_or(false));
        found = extractor.extract(&again, strictness);
        if reasoning::crossed(input.output, &again.reasoning, &found).contains(&true) {
            again.reasoning.clear();
            found = extractor.extract(&again, strictness);
        }
    }
    cap::cap_candidates(&mut found, input.max_candidates);
    found
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

/// Internals the crate's own integration tests reach (not API: hidden, and
/// free to change). The peer-corpus tests compare each engine group's raw
/// extractors (without the shared rules) with other parsers' verdicts, and
/// the `jsonread` property test holds the JSON reader's fast path equal to
/// its slow path; neither is observable through the public surface.
#[doc(hidden)]
pub mod testing {
    pub use crate::jsonread::{
        read_all, read_all_classifying, read_prefix, read_prefix_classifying, without_fast_path,
    };

    /// The raw extractors of the `families::tagged` engines, in replay order.
    pub fn tagged() -> Vec<Box<dyn crate::Extractor>> {
        crate::families::tagged::all()
    }

    /// The raw extractors of the `families::jsonlike` engines, in replay
    /// order.
    pub fn jsonlike() -> Vec<Box<dyn crate::Extractor>> {
        crate::families::jsonlike::all()
    }
}

/// The examples in the docs of the private modules `callobj`, `jsonread`
/// and `util` (marked `ignore` there), run here: rustdoc runs a doctest as
/// an outside crate, which cannot reach a private module.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod private_examples {
    use crate::{Input, Strictness};
    use serde_json::json;
    use toolgate_core::{FailureKind, Repair, Span};

    #[test]
    fn callobj_reads_the_seed_keys() {
        use crate::callobj::{CallObj, from_value};
        let v = json!({"tool_name": "greet", "parameters": {"name": "Alice"}});
        let CallObj::Call(parts) = from_value(&v, Strictness::Strict) else {
            panic!("not a call: {v}")
        };
        assert_eq!(parts.name.as_deref(), Some("greet"));
        assert_eq!(parts.arguments.unwrap()["name"], "Alice");
    }

    #[test]
    fn callobj_arguments_object_repairs_double_encoding_leniently() {
        use crate::callobj::arguments_object;
        let encoded = json!("{\"city\": \"Antwerp\"}");
        let (got, _) = arguments_object(encoded.clone(), Vec::new(), Strictness::Strict, 7);
        assert_eq!(got.unwrap_err().kind, FailureKind::Escaping);
        let (got, repairs) = arguments_object(encoded, Vec::new(), Strictness::Lenient, 7);
        assert_eq!(got.unwrap()["city"], "Antwerp");
        assert_eq!(repairs, vec![Repair::DoubleEncodedArguments]);
    }

    #[test]
    fn jsonread_reads_cuts_and_repairs() {
        use crate::jsonread::read_all;
        let ok = read_all(r#"{"city": "Antwerp"}"#, Strictness::Strict, true).unwrap();
        assert_eq!(ok.value["city"], "Antwerp");
        let cut = read_all(r#"{"city": "Antw"#, Strictness::Strict, true).unwrap_err();
        assert_eq!(cut.kind, FailureKind::Truncated);
        let fixed = read_all("{'city': 'Antwerp',}", Strictness::Lenient, true).unwrap();
        assert_eq!(
            fixed.repairs,
            vec![Repair::SingleQuotes, Repair::TrailingCommas]
        );
    }

    #[test]
    fn util_scan_texts_runs_a_toy_mode_over_output_and_reasoning() {
        use crate::families::jsonlike::json_array;
        use crate::util;
        // A toy mode: the payload after `CALL ` up to the end of the line.
        let input = Input::new("<think>CALL {\"name\": \"a\"}</think>\nCALL {\"name\": \"b\"}");
        let found = util::scan_texts(&input, |text| {
            let mut out = Vec::new();
            for at in util::find_all(text, "CALL ") {
                let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
                let end = text[at..end].find("</think>").map_or(end, |n| at + n);
                out.extend(json_array::json_calls(
                    "toy",
                    text,
                    at + 5..end,
                    Span::new(at, end),
                    end == text.len(),
                    Strictness::Strict,
                    json_array::MissingName::Fail,
                ));
            }
            out
        });
        assert_eq!(found.len(), 2);
        assert!(found[0].source.is_reasoning());
        assert_eq!(found[1].name.as_deref(), Some("b"));
    }
}
