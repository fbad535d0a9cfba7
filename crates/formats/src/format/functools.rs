//! `functools`: Phi-4-mini and FireFunction v2 — the word `functools`
//! followed by a JSON array of call objects.
//!
//! ```text
//! functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
//! ```
//!
//! FireFunction v2 writes a space before it (` functools[…]`); text after the
//! list is content. An output that ends inside the list is `truncated`.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `functools` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "functools",
        example: r#"functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]"#,
        describe: "Phi-4-mini / FireFunction v2: functools + a JSON array of call objects",
        blocks: vec![Block::open("functools")],
        payload: Payload::Calls { sep: None },
    })
}

/// The `functools` format.
pub(crate) const FORMAT: Def = Def {
    position: 290,
    extractor,
    group: Group::JsonLike,
    models: &["phi-4-mini", "firefunction"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "functools",
        families: "Phi-4-mini, FireFunction v2",
        engine: Engine::JsonBlock,
        opener: "functools",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["functools"]),
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
    fn one_call_between_prose() {
        let out = "Let me check the weather for you.\nfunctools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]\nWould you like to know more?";
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("get_weather", r#"{"city": "Tokyo"}"#)]
        );
    }

    #[test]
    fn parallel() {
        let out = " functools[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"k\": \"v\"}}]";
        assert_eq!(
            calls(&*extractor(), out),
            vec![call("a", "{}"), call("b", r#"{"k": "v"}"#)]
        );
    }

    #[test]
    fn truncated_and_malformed() {
        let cut = strict(
            &*extractor(),
            r#"functools[{"name": "func", "arguments": {"#,
        );
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        let bad = strict(&*extractor(), "functools[ This is just text ]");
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn the_word_in_prose_is_not_a_call() {
        assert!(
            strict(
                &*extractor(),
                "Use the `functools` module, e.g. functools.partial."
            )
            .is_empty()
        );
    }

    #[test]
    fn trailing_comma_is_repaired_only_leniently() {
        let out = r#"functools[{"name": "a", "arguments": {}},]"#;
        assert_eq!(
            strict(&*extractor(), out)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        let fixed = lenient(&*extractor(), out);
        assert_eq!(fixed[0].call().unwrap().name, "a");
        assert_eq!(
            fixed[0].repairs,
            vec![toolgate_core::Repair::TrailingCommas]
        );
    }
}
