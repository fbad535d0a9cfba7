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
    models: &["lfm2"],
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
        parameter: None,
        openers: Some(&["<|tool_call_start|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1)] or a JSON call list",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::families::jsonlike::testutil::*;
    use toolgate_core::{FailureKind, Source};

    #[test]
    fn pythonic_json_and_parallel_blocks() {
        let e = extractor();
        let out = r#"<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|> Some text <|tool_call_start|>[search(query="food"), f()]<|tool_call_end|>"#;
        assert_eq!(
            calls(&*e, out),
            vec![
                call("get_weather", r#"{"city": "Paris"}"#),
                call("search", r#"{"query": "food"}"#),
                call("f", "{}")
            ]
        );
        let out = r#"<|tool_call_start|>[{"name": "get_weather", "parameters": {"city": "Madrid"}}]<|tool_call_end|>"#;
        assert_eq!(
            calls(&*e, out),
            vec![call("get_weather", r#"{"city": "Madrid"}"#)]
        );
    }

    #[test]
    fn think_and_truncation_and_empty() {
        let e = extractor();
        let out = "<think>Let me think about <|tool_call_start|>[f(arg1=1)]<|tool_call_end|> hmm</think><|tool_call_start|>[f(arg1=1)]<|tool_call_end|>";
        let found = strict(&*e, out);
        assert_eq!(found[0].source, Source::OutputReasoning);
        assert_eq!(calls(&*e, out), vec![call("f", r#"{"arg1": 1}"#)]);
        let cut = strict(&*e, "<|tool_call_start|>[special_function(arg1=");
        assert_eq!(cut[0].name.as_deref(), Some("special_function"));
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        let empty = strict(&*e, "<|tool_call_start|><|tool_call_end|>");
        assert_eq!(empty[0].failure().unwrap().kind, FailureKind::Malformed);
    }
}
