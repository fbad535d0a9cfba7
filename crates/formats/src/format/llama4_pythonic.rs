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
        parameter: None,
        openers: Some(&["<|python_start|>", "["]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1), g(b='x')]",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::families::jsonlike::testutil::*;
    use toolgate_core::{FailureKind, Span};

    #[test]
    fn block_and_bare_list() {
        let e = extractor();
        let out = "<|python_start|>[get_weather(city='LA', metric='C'), get_weather(), do_something_cool(steps=[])]<|python_end|>";
        assert_eq!(
            calls(&*e, out),
            vec![
                call("get_weather", r#"{"city": "LA", "metric": "C"}"#),
                call("get_weather", "{}"),
                call("do_something_cool", r#"{"steps": []}"#)
            ]
        );
        let found = strict(&*e, out);
        assert_eq!(found[0].span, Span::new(17, 51));
        assert_eq!(&out[17..51], "get_weather(city='LA', metric='C')");
        let out = "[register_user(name='Doe', age=9, role=None, passed_test=True)]";
        assert_eq!(
            calls(&*e, out),
            vec![call(
                "register_user",
                r#"{"name": "Doe", "age": 9, "role": null, "passed_test": true}"#
            )]
        );
    }

    #[test]
    fn a_list_after_leading_text_that_ends_the_output() {
        let e = extractor();
        let out = "To answer that I need the date and the weather.\n[get_todays_date(), get_weather(location=\"Dublin, Ireland\", date=\"2025-04-14\")]\n";
        assert_eq!(
            calls(&*e, out),
            vec![
                call("get_todays_date", "{}"),
                call(
                    "get_weather",
                    r#"{"location": "Dublin, Ireland", "date": "2025-04-14"}"#
                )
            ]
        );
        // Cut off inside the list: truncated, still this mode's.
        let cut = strict(&*e, "Checking. [get_weather(city='L");
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        // Prose after the list, or two lists: a mention, not a call block.
        assert!(strict(&*e, "Checking. [get_weather(city='LA')] and then I answer.").is_empty());
        assert!(strict(&*e, "Either [f(x=1)] or [g(y=2)]").is_empty());
    }

    #[test]
    fn lists_in_prose_and_other_bare_brackets_are_not_this_mode() {
        let e = extractor();
        assert!(strict(&*e, "See [f(x=1)] in the docs.").is_empty());
        assert!(strict(&*e, r#"[TOOL_CALLS][{"name": "f", "arguments": {}}]"#).is_empty());
        assert!(strict(&*e, r#"[{"name": "f", "arguments": {}}]"#).is_empty());
        // After the token, anything but a call list is a broken call.
        let found = strict(&*e, "<|python_start|>print(1)<|python_end|>");
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn truncated_and_malformed() {
        let cut = strict(
            &*extractor(),
            "<|python_start|>[get_weather(city='LA', metric='C'), register_user(name='Doe', age=9)",
        );
        assert!(cut[0].call().is_some());
        assert_eq!(
            cut.last().unwrap().failure().unwrap().kind,
            FailureKind::Truncated
        );
        let early = strict(
            &*extractor(),
            "<|python_start|>[get_weather(city='LA'<|python_end|>",
        );
        assert_eq!(early[0].failure().unwrap().kind, FailureKind::Malformed);
        let positional = strict(&*extractor(), "<|python_start|>[f('x')]<|python_end|>");
        assert_eq!(
            positional[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }
}
