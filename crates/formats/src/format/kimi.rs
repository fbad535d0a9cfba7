//! `kimi`: Kimi K2 special-token calls.
//!
//! # Wire format
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>{"city": "Shanghai"}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! gives two `get_weather` calls. The call id is `functions.NAME:INDEX`; the
//! name is what stands between `functions.` and the last `:` (the prefix is
//! optional: `get_weather:0` names `get_weather`). The arguments are one JSON
//! object.
//!
//! - An id that is not `[functions.]NAME:INDEX` (`functions.f.0`, a bare
//!   counter `0`) is a `malformed` candidate without a name: the name is
//!   never guessed from the arguments or the tool list.
//! - The section markers are optional. A call whose `<|tool_call_end|>` is
//!   missing ends at the next `<|tool_call_begin|>`, the section end, or the
//!   end of the output; a complete JSON object there is a call like any
//!   other, an incomplete one at the end of the output is `truncated`.
//! - Arguments given as a JSON string holding an object (double-encoded) are
//!   `escaping`; the lenient variant decodes them and records the repair.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::name_json::{NameJson, indexed_name};

const MODE: &str = "kimi";
const CALL: &str = "<|tool_call_begin|>";
const ARGS: &str = "<|tool_call_argument_begin|>";
pub(crate) const CALL_END: &str = "<|tool_call_end|>";
/// The section opener.
const SECTION: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";

/// The `kimi` extractor: the name-then-JSON engine with Kimi's tokens.
pub(crate) const KIMI: Configured = Configured {
    example: "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Antwerp\"}<|tool_call_end|><|tool_calls_section_end|>",
    describe: "Kimi K2: <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{json}<|tool_call_end|> inside <|tool_calls_section_begin|>…<|tool_calls_section_end|>",
    config: Config::NameJson(KIMI_TOKENS),
};

/// Kimi's spelling of the name-then-JSON shape.
const KIMI_TOKENS: NameJson<'static> = NameJson {
    mode: MODE,
    call: CALL,
    args: ARGS,
    call_end: CALL_END,
    section: Some(SECTION),
    section_end: Some(SECTION_END),
    namespace: Some("functions."),
    name_of: indexed_name,
    header: "functions.NAME:INDEX",
};

/// The `kimi` format.
pub(crate) const FORMAT: Def = Def {
    position: 90,
    extractor: || Box::new(KIMI),
    group: Group::Tagged,
    models: &["kimi-k2"],
    bare_reader: false,
    profile: Some(Profile {
        name: "kimi",
        rank: 7,
    }),
    row: Format {
        name: "kimi",
        families: "Kimi K2",
        engine: Engine::NameThenJson,
        opener: "<|tool_calls_section_begin|><|tool_call_begin|>",
        separator: Some("<|tool_call_argument_begin|>"),
        closers: &[CALL_END, "<|tool_calls_section_end|>"],
        blocks: &[
            (SECTION, "<|tool_calls_section_end|>"),
            ("<|tool_call_begin|>", CALL_END),
        ],
        openers: Some(&[SECTION, "<|tool_call_begin|>"]),
        payload: PayloadKind::JsonArguments,
        conventions: "functions.NAME:INDEX, then the JSON arguments object",
        ..NO_EXTRAS
    },
};
