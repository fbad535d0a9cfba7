//! `olmo`: OLMo 3 — Python-style calls, one per line, inside
//! `<function_calls>` with no list brackets.
//!
//! ```text
//! <function_calls>get_weather(city='San Francisco', metric='celsius')
//! register_user(name='John Doe', age=37, role=None, passed_test=True)</function_calls>
//! ```
//!
//! The calls are read by the `bracket` mode's parser (see the `pythonic`
//! engine for how the lines become a list). Without `</function_calls>` the
//! block runs to the end of the output and is `truncated`.

use super::prelude::*;

/// OLMo 3's call section (DeepSeek V3.2's markerless DSML uses it too).
pub(crate) const OPEN: &str = "<function_calls>";
/// Closes [`OPEN`].
pub(crate) const CLOSE: &str = "</function_calls>";
use crate::Extractor;
use crate::families::jsonlike::pythonic::Pythonic;

/// The `olmo` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Pythonic {
        name: "olmo",
        example: "<function_calls>get_weather(city='San Francisco', metric='celsius')</function_calls>",
        describe: "OLMo 3: <function_calls>f(a=1)\\ng(b=2)</function_calls>, one pythonic call per line",
        open: OPEN,
        close: CLOSE,
        bare_start: false,
        unbracketed: true,
        json_lists: false,
    })
}

/// The `olmo` format.
pub(crate) const FORMAT: Def = Def {
    position: 410,
    extractor,
    group: Group::JsonLike,
    models: &["olmo-3", "olmo3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "olmo",
        families: "OLMo 3",
        engine: Engine::Pythonic,
        opener: OPEN,
        separator: Some("a line break"),
        closers: &[CLOSE],
        blocks: &[(OPEN, CLOSE)],
        openers: Some(&[OPEN]),
        payload: PayloadKind::PythonLiterals,
        conventions: "one f(a=1) per line",
        ..NO_EXTRAS
    },
};
