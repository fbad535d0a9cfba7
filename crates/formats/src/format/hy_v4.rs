//! `hy_v4`: Tencent HY v4 (Hunyuan 4) calls, the GLM key/value shape inside
//! `<tool_calls>`, without HY v3's `<tool_sep>`.
//!
//! # Wire format
//!
//! ```text
//! <tool_calls>
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Beijing</arg_value>
//! </tool_call>
//! <tool_call>get_current_date</tool_call>
//! </tool_calls>
//! ```
//!
//! gives `get_weather` with `{"city": "Beijing"}` and `get_current_date`
//! with `{}`. Derived from vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/hy_v4_tool_parser.py`: the name is the text of a
//! `<tool_call>` up to its first `<arg_key>`, then `<arg_key>`/`<arg_value>`
//! pairs typed by the tool's schema; the section tokens are
//! `<tool_calls>`/`</tool_calls>`) and the HY v4 chat template's call
//! rendering.
//!
//! Where it differs from HY v3 ([`crate::format::hunyuan`]): no `<tool_sep>` after
//! the name. Where it differs from GLM ([`crate::families::tagged::glm`]), which writes the
//! same call markup: HY v4's calls stand inside `<tool_calls>`, so only calls
//! there count, and GLM's bare calls are not read as HY v4's.
//!
//! - Values are raw text typed like `qwen_xml` (SPEC §9); the rules of the
//!   key/value engine hold (a key without a value, a key given twice, stray
//!   text: `malformed`; output ending inside a call: `truncated`).
//! - Not read: checkpoints whose structural tokens carry a per-checkpoint
//!   suffix (`<tool_call:6124c78e>`), which vLLM reads from the tokenizer's
//!   vocabulary; toolgate has no tokenizer to ask.

use super::glm::{GLM_TOKENS, KEY};
use super::hunyuan::HUNYUAN_TOKENS;
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// The `hy_v4` extractor: the key/value engine, GLM's tokens in Hunyuan's
/// section.
pub(crate) const HY_V4: Configured = Configured {
    example: "<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Antwerp</arg_value></tool_call></tool_calls>",
    describe: "HY v4: <tool_calls><tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>; values typed by the tool schema",
    config: Config::KeyValue(Tokens {
        mode: "hy_v4",
        sep: None,
        block: HUNYUAN_TOKENS.block,
        ..GLM_TOKENS
    }),
};

/// The `hy_v4` format.
pub(crate) const FORMAT: Def = Def {
    position: 240,
    extractor: || Box::new(HY_V4),
    group: Group::Tagged,
    models: &["hy-v4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "hy_v4",
        families: "HY v4 (Hunyuan 4)",
        separator: Some(KEY),
        conventions: "name right after <tool_call> (no <tool_sep>), then <arg_key>k</arg_key><arg_value>v</arg_value> pairs; calls count only inside <tool_calls>",
        // Hunyuan's section, call, closers and parameter markup.
        ..super::hunyuan::FORMAT.row
    },
};
