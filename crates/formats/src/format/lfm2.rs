//! `lfm2`: Liquid LFM2 — a call list between `<|tool_call_start|>` and
//! `<|tool_call_end|>`, Python-style or as JSON call objects.
//!
//! ```text
//! Let me check the time.<|tool_call_start|>[get_time(city="Paris")]<|tool_call_end|>
//! <|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Berlin"}}]<|tool_call_end|>
//! ```
//!
//! Pythonic lists are read by the `bracket` mode's parser; JSON lists by the
//! SPEC §9 call-object rules. Calls inside `<think>…</think>` are reasoning.
//! An empty block is `malformed`; an output that ends inside the list is
//! `truncated`.

use super::prelude::*;
use super::kimi::CALL_END;
use crate::Extractor;
use crate::families::jsonlike::pythonic::Pythonic;

/// The `lfm2` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Pythonic {
        name: "lfm2",
        example: r#"<|tool_call_start|>[get_time(city="Paris")]<|tool_call_end|>"#,
        describe: "LFM2: <|tool_call_start|>[f(a=1)] or [{\"name\", \"arguments\"}]<|tool_call_end|>",
        open: "<|tool_call_start|>",
        close: CALL_END,
        bare_start: false,
        unbracketed: false,
        json_lists: true,
    })
}

/// The `lfm2` format.
pub(crate) const FORMAT: Def = Def {
    position: 400,
    extractor,
    group: Group::JsonLike,
    models: &[
        "lfm2",
        // openPangu writes a JSON call list between the same two tokens
        // (vLLM's `pangu` and `openpangu_v2` parsers and their tests).
        "openpangu",
    ],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "lfm2",
        families: "Liquid LFM2",
        engine: Engine::Pythonic,
        opener: "<|tool_call_start|>",
        separator: Some(","),
        closers: &[CALL_END],
        blocks: &[("<|tool_call_start|>", CALL_END)],
        openers: Some(&["<|tool_call_start|>"]),
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1)] or a JSON call list",
        ..NO_EXTRAS
    },
};
