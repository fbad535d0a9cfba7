//! `xlam`: its row, models and profile. Read by [`crate::families::jsonlike::xlam`].

use super::prelude::*;

/// The `xlam` format.
pub(crate) const FORMAT: Def = Def {
    position: 420,
    extractor: || crate::families::jsonlike::xlam::extractor(),
    group: Group::JsonLike,
    models: &["xlam"],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "xlam",
        families: "Salesforce xLAM (Llama-xLAM-2, Qwen-xLAM, xLAM-1B/3B)",
        engine: Engine::JsonBlock,
        opener: "[ at the start of the output (or [TOOL_CALLS], <tool_call>, ```json)",
        separator: None,
        closers: &[],
        blocks: &[("<tool_call>", "</tool_call>"), ("```json", "```")],
        parameter: None,
        openers: Some(&["[", "<tool_call>", "```json"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9); a bare list counts only at the start of the output or of a reasoning span, and only as [{…; `[]` is no call",
    },
};
