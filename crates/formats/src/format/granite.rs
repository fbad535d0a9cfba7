//! `granite`: IBM Granite 3.x — `<|tool_call|>` followed by a JSON array of
//! call objects (no closing token; the stop token ends the turn).
//!
//! ```text
//! <|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
//! ```
//!
//! vLLM's `granite` parser also accepts `<tool_call>` as the opener (Granite
//! 3.1 writes it that way in some templates), so both are openers here. A
//! single object instead of the array is read as one call. Text after the
//! list is ordinary content; an output that ends inside the list is
//! `truncated`.

use super::hermes::OPEN;
use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// Granite's call token; vLLM's parser also accepts Hermes's `<tool_call>`.
const TOKEN: &str = "<|tool_call|>";

/// The `granite` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "granite",
        example: r#"<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]"#,
        describe: "Granite 3.x: <|tool_call|> + a JSON array of {\"name\", \"arguments\"} objects",
        blocks: vec![Block::open(TOKEN), Block::open(OPEN)],
        payload: Payload::Calls { sep: None },
    })
}

/// The `granite` format.
pub(crate) const FORMAT: Def = Def {
    position: 270,
    extractor,
    group: Group::JsonLike,
    models: &["granite-3", "granite-4", "granite3", "granite4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "granite",
        families: "Granite 3.x",
        engine: Engine::JsonBlock,
        opener: TOKEN,
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&[TOKEN, OPEN]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::families::jsonlike::testutil::*;
    use toolgate_core::FailureKind;

    #[test]
    fn one_call_then_content() {
        let out = "Let me check.\n<|tool_call|> [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]\nI'll get that.";
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("get_weather", r#"{"city": "Tokyo"}"#)]
        );
    }

    #[test]
    fn parallel_calls_in_one_list() {
        let out = "<|tool_call|> [\n  {\"name\": \"a\", \"arguments\": {}},\n  {\"name\": \"b\", \"arguments\": {\"x\": 1}}\n]";
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("a", "{}"), call("b", r#"{"x": 1}"#)]
        );
    }

    #[test]
    fn cut_off_list_is_truncated() {
        let found = strict(
            &*extractor(),
            r#"<|tool_call|> [{"name": "func", "arguments": {"#,
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name.as_deref(), Some("func"));
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn string_arguments_are_malformed() {
        let found = strict(
            &*extractor(),
            r#"<tool_call> [{"name": "func", "arguments": "not a dict"}]"#,
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn stray_fence_is_repaired_only_leniently() {
        let out = "<|tool_call|>```json\n[{\"name\": \"a\", \"arguments\": {}}]\n```";
        let found = strict(&*extractor(), out);
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
        let found = lenient(&*extractor(), out);
        assert_eq!(found[0].call().unwrap().name, "a");
        assert_eq!(found[0].repairs, vec![toolgate_core::Repair::StrayFences]);
    }

    #[test]
    fn no_marker_no_candidate() {
        assert!(strict(&*extractor(), r#"Some text [{"name": "func"}]"#).is_empty());
    }
}
