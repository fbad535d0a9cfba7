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
        separator: None,
        closers: &[SECTION_END],
        blocks: &[(SECTION, SECTION_END)],
        parameter: None,
        openers: Some(&[SECTION]),
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
    use toolgate_core::{FailureKind, Source};

    #[test]
    fn array_between_prose() {
        let out = "I will call the tool now. <tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Boston\"}}]</tool_calls>\nThank you!";
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("get_weather", r#"{"city": "Boston"}"#)]
        );
    }

    #[test]
    fn one_object_per_line_with_a_broken_line() {
        let out = "<tool_calls>\n{\"name\": \"a\", \"arguments\": {}}\n{invalid json here}\n{\"name\": \"b\", \"arguments\": {\"p\": 1}}\n</tool_calls>";
        let found = strict(&*extractor(), out);
        assert_eq!(found.len(), 3);
        assert_eq!(found[1].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("a", "{}"), call("b", r#"{"p": 1}"#)]
        );
    }

    #[test]
    fn unclosed_tag_cut_off_is_truncated() {
        let found = strict(
            &*extractor(),
            "<tool_calls>\n{\"name\": \"a\", \"arguments\": {\"city\": \"Bos",
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn fenced_payload_inside_the_tag_is_a_stray_fence() {
        let out = "<tool_calls>```json\n[{\"name\": \"a\", \"arguments\": {}}]\n```</tool_calls>";
        assert_eq!(
            strict(&*extractor(), out)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        let found = lenient(&*extractor(), out);
        assert_eq!(found[0].call().unwrap().name, "a");
        assert_eq!(found[0].repairs, vec![toolgate_core::Repair::StrayFences]);
    }

    #[test]
    fn call_inside_think_is_reasoning() {
        let out = "<think>maybe <tool_calls>\n{\"name\": \"ignored\", \"arguments\": {}}\n</tool_calls></think>\n<tool_calls>\n{\"name\": \"real\", \"arguments\": {}}\n</tool_calls>";
        let found = strict(&*extractor(), out);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].source, Source::OutputReasoning);
        assert_eq!(calls(&*extractor(), out), vec![call("real", "{}")]);
    }
}
