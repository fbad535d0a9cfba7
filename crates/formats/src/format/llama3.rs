//! `llama3`: its row, models and profile. Read by [`crate::families::jsonlike::llama3`].

use super::prelude::*;
use crate::families::jsonlike::llama3::Llama3;

/// Llama's tag before a tool call (or before code for the built-in
/// interpreter).
pub(crate) const TAG: &str = "<|python_tag|>";
/// The first key of a bare call object, where a call without the tag may
/// start.
pub(crate) const NAME_KEY: &str = "\"name\"";

/// The `llama3` extractor: its scanner with this file's tokens.
pub(crate) const LLAMA3: Llama3 = Llama3 {
    tag: TAG,
    name_key: NAME_KEY,
};

/// The `llama3` format.
pub(crate) const FORMAT: Def = Def {
    position: 260,
    extractor: || Box::new(LLAMA3),
    group: Group::JsonLike,
    models: &["llama-3", "llama3"],
    bare_reader: true,
    profile: Some(Profile {
        name: "llama3",
        rank: 4,
    }),
    row: Format {
        name: "llama3",
        families: "Llama 3.1 / 3.2 / 3.3",
        engine: Engine::Scanner,
        opener: cat!(TAG, " (or a bare object)"),
        separator: Some(";"),
        closers: &[],
        blocks: &[],
        openers: Some(&[TAG, "{"]),
        // A call starts after the tag, at a `{` whose first key is `"name"`,
        // or at a `{` that begins the text (the extractor's `Starts`).
        triggers: Some(Triggers {
            tokens: &[TAG, NAME_KEY],
            leading: Some(b'{'),
        }),
        payload: PayloadKind::JsonCall,
        conventions: "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9); prose before, between (after `;`) and after the calls is content, as vLLM's llama3_json and SGLang's llama3 detector read it (they take the JSON objects and ignore the text around them)",
        ..NO_EXTRAS
    },
};
