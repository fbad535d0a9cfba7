//! `llama4_pythonic`: Llama 4 (and Llama 3.2 pythonic templates) — a
//! Python-style call list between `<|python_start|>` and `<|python_end|>`,
//! or bare: at the start of the output, or after leading text as the
//! output's last thing (`Let me check. [get_weather(city='LA')]`).
//!
//! ```text
//! <|python_start|>[get_weather(city='LA', metric='C'), register_user(name='Doe', age=9)]<|python_end|>
//! [get_weather(city='San Francisco', metric='celsius')]
//! ```
//!
//! The list is read by the `bracket` mode's parser (Python or JSON literals,
//! named arguments only). Unlike `bracket`, which takes a call list anywhere
//! in the text, this mode reads only the family's call block. A bare list
//! after leading text is read only in an output without `<|python_start|>`,
//! and only when it is one list ending the output: vLLM issue #22917 (the
//! model writes its reasoning, then the list; vLLM's `llama4_pythonic`
//! parser matches only at the start and drops the calls) and SGLang's
//! `pythonic` detector (which reads the list after text) — while a list
//! mentioned inside prose stays prose. Without
//! `<|python_end|>` (stripped as a stop token) the list's own `]` ends it; an
//! output that ends inside the list is `truncated`.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::pythonic::Pythonic;

/// The `llama4_pythonic` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Pythonic {
        name: "llama4_pythonic",
        example: "<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>",
        describe: "Llama 4: <|python_start|>[f(a=1), g(b='x')]<|python_end|> (or the bare list at the start)",
        open: "<|python_start|>",
        close: "<|python_end|>",
        bare_start: true,
        unbracketed: false,
        json_lists: false,
    })
}

/// The `llama4_pythonic` format.
pub(crate) const FORMAT: Def = Def {
    position: 390,
    extractor,
    group: Group::JsonLike,
    models: &["llama-4", "llama4"],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "llama4_pythonic",
        families: "Llama 4",
        engine: Engine::Pythonic,
        opener: "<|python_start|>",
        separator: Some(","),
        closers: &["<|python_end|>"],
        blocks: &[("<|python_start|>", "<|python_end|>")],
        openers: Some(&["<|python_start|>", "["]),
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1), g(b='x')]",
        ..NO_EXTRAS
    },
};
