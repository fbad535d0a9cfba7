//! `tool_calls_tag`: Jamba, Hunyuan-A13B, MiniMax-Text-01 and Apriel — a
//! `<tool_calls>` tag around a JSON array of call objects (MiniMax-Text-01:
//! one object per line instead of an array).
//!
//! ```text
//! <tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>
//! <tool_calls>
//! {"name": "get_current_weather", "arguments": {"city": "Dallas"}}
//! {"name": "get_current_weather", "arguments": {"city": "Orlando"}}
//! </tool_calls>
//! ```
//!
//! Inside a closed tag everything must be calls: a line that is not a call
//! object is one `malformed` candidate, and reading resumes at the next line
//! starting with `{`. Without `</tool_calls>` the JSON's own end ends the
//! block; an output that ends inside it is `truncated`. Hunyuan's
//! `<tool_calls><tool_call>f<tool_sep>…` form is a different mode (tagged
//! group) and reads as `malformed` here.

use super::prelude::*;

/// The `<tool_calls>` section (Hunyuan's and HY v4's calls sit in it too).
pub(crate) const SECTION: &str = "<tool_calls>";
/// Closes [`SECTION`].
pub(crate) const SECTION_END: &str = "</tool_calls>";
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `tool_calls_tag` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "tool_calls_tag",
        example: r#"<tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>"#,
        describe: "Jamba / Hunyuan-A13B / MiniMax-Text-01 / Apriel: <tool_calls> + JSON call array (or one object per line) + </tool_calls>",
        blocks: vec![Block::pair(SECTION, SECTION_END)],
        payload: Payload::Calls { sep: None },
    })
}

/// The `tool_calls_tag` format.
pub(crate) const FORMAT: Def = Def {
    position: 310,
    extractor,
    group: Group::JsonLike,
    models: &["jamba", "hunyuan-a13b", "minimax-text-01", "apriel"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "tool_calls_tag",
        families: "Jamba, Hunyuan-A13B, MiniMax-Text-01, Apriel",
        engine: Engine::JsonBlock,
        opener: SECTION,
        closers: &[SECTION_END],
        blocks: &[(SECTION, SECTION_END)],
        openers: Some(&[SECTION]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
