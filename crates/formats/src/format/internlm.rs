//! `internlm`: its row, models and profile. Read by [`crate::families::jsonlike::internlm`].

use super::prelude::*;

/// The `internlm` format.
pub(crate) const FORMAT: Def = Def {
    position: 300,
    extractor: || crate::families::jsonlike::internlm::extractor(),
    group: Group::JsonLike,
    models: &["internlm2", "internlm3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "internlm",
        families: "InternLM2 / 2.5",
        engine: Engine::JsonBlock,
        opener: "<|action_start|><|plugin|>",
        separator: None,
        closers: &["<|action_end|>"],
        blocks: &[("<|action_start|>", "<|action_end|>")],
        parameter: None,
        openers: Some(&["<|action_start|>"]),
        triggers: None,
        stop_token: Some(StopToken {
            token: "<|action_end|>",
            stripped_by: "lmdeploy: a stop word of the InternLM2 chat template",
        }),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
