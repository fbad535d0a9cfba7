//! `longcat`: Meituan LongCat — the Hermes shape under its own tag name.
//!
//! ```text
//! <longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>
//! ```
//!
//! One call object per tag; several tags are parallel calls.

use super::prelude::*;

/// LongCat's call tags (its XML-argument calls use them too: `longcat_xml`).
pub(crate) const OPEN: &str = "<longcat_tool_call>";
/// Closes [`OPEN`].
pub(crate) const CLOSE: &str = "</longcat_tool_call>";
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `longcat` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "longcat",
        example: r#"<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>"#,
        describe: "LongCat: <longcat_tool_call> + a JSON call object + </longcat_tool_call>",
        blocks: vec![Block::pair(OPEN, CLOSE)],
        payload: Payload::Calls { sep: None },
    })
}

/// The `longcat` format.
pub(crate) const FORMAT: Def = Def {
    position: 330,
    extractor,
    group: Group::JsonLike,
    models: &["longcat"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "longcat",
        families: "Meituan LongCat",
        engine: Engine::JsonBlock,
        opener: OPEN,
        separator: None,
        closers: &[CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: None,
        openers: Some(&[OPEN]),
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
    fn parallel_tags() {
        let out = "<longcat_tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}</longcat_tool_call>\n<longcat_tool_call>{\"name\": \"get_time\", \"arguments\": {}}</longcat_tool_call>";
        assert_eq!(
            calls(&*extractor(), out),
            vec![
                call("get_weather", r#"{"city": "Tokyo"}"#),
                call("get_time", "{}")
            ]
        );
    }

    #[test]
    fn truncated_and_malformed() {
        let cut = strict(
            &*extractor(),
            "Some text with <longcat_tool_call>invalid json",
        );
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Malformed);
        let cut = strict(
            &*extractor(),
            r#"<longcat_tool_call>{"name": "func", "arguments": {"#,
        );
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        let bad = strict(
            &*extractor(),
            r#"<longcat_tool_call>{"name": "func", "arguments": "not a dict"}</longcat_tool_call>"#,
        );
        assert_eq!(bad[0].failure().unwrap().kind, FailureKind::Malformed);
    }
}
