//! `xlam`: Salesforce xLAM — a JSON array of call objects, standing alone at
//! the start of the output (reasoning aside), or wrapped as vLLM's `xlam`
//! parser also reads it: after `[TOOL_CALLS]`, inside `<tool_call>…</tool_call>`
//! or inside a ```` ```json ```` fence.
//!
//! ```text
//! [{"name": "get_weather", "arguments": {"city": "Dallas"}}, {"name": "get_weather", "arguments": {"city": "Orlando"}}]
//! <think>…</think>[{"name": "get_weather", "arguments": {"city": "Dallas"}}]
//! I'll check. <tool_call>[{"name": "get_weather", "arguments": {"city": "Dallas"}}]</tool_call>
//! ```
//!
//! Derived from the chat template vLLM ships for xLAM
//! (`vllm-project/vllm`, `examples/tool_chat_template_xlam_llama.jinja`:
//! "make calls in a single JSON array", rendered as
//! `[{"name": …, "arguments": …}, …]`, and `[]` for no call) and vLLM's
//! reference parser (`vllm/tool_parsers/xlam_tool_parser.py`, now
//! `vllm/frontend/processing/tool_parsers/xlam_tool_parser.py`): a list at
//! the start of the output or after `</think>`, and the three wrappers.
//! `[]` is no call.
//!
//! Decisions (SPEC §9), by the `marked` engine:
//! - a bare list counts only at the start of the output or of a reasoning
//!   span, and only when its `[` is followed by `{` (as in the `json` mode):
//!   prose that mentions `[` or the tokens is not a call;
//! - the payload is a list, wrapped or not: a wrapper around anything else
//!   (`<tool_call>{…}</tool_call>`, Hermes's call) is no candidate here, as
//!   vLLM's parser reads nothing but a list ("not an array": no call);
//! - elements are SPEC §9 call objects (`name`, `arguments`); an element
//!   that is not an object inside a list is `malformed`;
//! - text after the list is content (vLLM drops it the same way); an output
//!   that ends inside the list is `truncated`, and so is a `<tool_call>`
//!   block without `</tool_call>` (the missing-closer rule).
//!
//! Unlike `json`, a call needs no surrounding silence: leading text before
//! a wrapper is content. A top-level object is the `json` (bare) or
//! `hermes` (`<tool_call>`) mode's business.

use super::fence::JSON_FENCE;
use super::hermes::{CLOSE, OPEN};
use super::mistral::TOKEN;
use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `xlam` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "xlam",
        example: r#"[{"name": "get_weather", "arguments": {"city": "Dallas"}}]"#,
        describe: "xLAM: a JSON array of call objects at the start of the output (or after [TOOL_CALLS], in <tool_call>…</tool_call>, in a ```json fence)",
        blocks: vec![
            Block::bare(),
            Block::pair(OPEN, CLOSE),
            Block::open(TOKEN),
            Block::pair(JSON_FENCE, "```"),
        ],
        payload: Payload::List,
    })
}

/// The `xlam` format.
pub(crate) const FORMAT: Def = Def {
    position: 420,
    extractor,
    group: Group::JsonLike,
    models: &["xlam"],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "xlam",
        families: "Salesforce xLAM (Llama-xLAM-2, Qwen-xLAM, xLAM-1B/3B)",
        engine: Engine::JsonBlock,
        opener: cat!(
            "[ at the start of the output (or ",
            TOKEN,
            ", ",
            OPEN,
            ", ",
            JSON_FENCE,
            ")"
        ),
        closers: &[],
        blocks: &[(OPEN, CLOSE), (JSON_FENCE, "```")],
        openers: Some(&["[", OPEN, JSON_FENCE]),
        payload: PayloadKind::JsonCall,
        conventions: "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9); a bare list counts only at the start of the output or of a reasoning span, and only as [{…; `[]` is no call",
        ..NO_EXTRAS
    },
};
