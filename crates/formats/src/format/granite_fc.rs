//! `granite_fc`: Granite-20B-FunctionCalling — `<function_call>` followed by
//! one JSON call object; parallel calls repeat the marker.
//!
//! ```text
//! <function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}
//! <function_call> {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}
//! ```
//!
//! There is no closing token: the object's own end ends the call, and text
//! after it is content. An output that ends inside the object is `truncated`.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `granite_fc` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "granite_fc",
        example: r#"<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}"#,
        describe: "Granite-20B-FC: <function_call> + one JSON call object, repeated for parallel calls",
        blocks: vec![Block::open("<function_call>")],
        payload: Payload::Calls { sep: None },
    })
}

/// The `granite_fc` format.
pub(crate) const FORMAT: Def = Def {
    position: 280,
    extractor,
    group: Group::JsonLike,
    models: &["granite-20b-functioncalling"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "granite_fc",
        families: "Granite-20B-FC",
        engine: Engine::JsonBlock,
        opener: "<function_call>",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<function_call>"]),
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
    fn one_call() {
        let out = "Let me check the weather for you.\n<function_call> {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}";
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("get_weather", r#"{"city": "Tokyo"}"#)]
        );
    }

    #[test]
    fn parallel_calls_repeat_the_marker() {
        let out = "<function_call> {\"name\": \"a\", \"arguments\": {}}\n<function_call> {\"name\": \"b\", \"arguments\": {}}";
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("a", "{}"), call("b", "{}")]
        );
    }

    #[test]
    fn cut_off_object_is_truncated() {
        let found = strict(
            &*extractor(),
            r#"<function_call> {"name": "func", "arguments": {"#,
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Truncated);
        assert_eq!(found[0].name.as_deref(), Some("func"));
    }

    #[test]
    fn broken_call_does_not_hide_the_next_one() {
        let out =
            "<function_call> {\"name\": 'a'}\n<function_call> {\"name\": \"b\", \"arguments\": {}}";
        let found = strict(&*extractor(), out);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(found[1].call().unwrap().name, "b");
        // The lenient variant repairs the single quotes and records it.
        let found = lenient(&*extractor(), out);
        assert_eq!(found[0].call().unwrap().name, "a");
        assert_eq!(found[0].repairs, vec![toolgate_core::Repair::SingleQuotes]);
    }
}
