//! `kimi_k3`: its row, models and profile. Read by [`crate::families::tagged::kimi_k3`].

use super::prelude::*;

/// The `kimi_k3` format.
pub(crate) const FORMAT: Def = Def {
    position: 200,
    extractor: || Box::new(crate::families::tagged::kimi_k3::KIMI_K3),
    group: Group::Tagged,
    models: &["kimi-k3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "kimi_k3",
        families: "Kimi K3",
        engine: Engine::TaggedParameters,
        opener: "<|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"N\"<|sep|>",
        separator: Some("<|open|>argument key=\"KEY\" type=\"TYPE\"<|sep|>"),
        closers: &[
            "<|close|>argument<|sep|>",
            "<|close|>call<|sep|>",
            "<|close|>tools<|sep|>",
        ],
        blocks: &[("<|open|>tools<|sep|>", "<|close|>tools<|sep|>")],
        parameter: Some((
            "<|open|>argument key=\"KEY\" type=\"string\"<|sep|>",
            "<|close|>argument<|sep|>",
        )),
        openers: Some(&["<|open|>tools<|sep|>", "<|open|>call "]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "tool attribute names the tool, index optional; type=\"string\" values verbatim, other types JSON, no type: typed by the tool schema",
    },
};
