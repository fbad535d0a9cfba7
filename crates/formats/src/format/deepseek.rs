//! `deepseek`: its tokens, row, models and profile. Read by
//! [`crate::families::tagged::deepseek`].

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::deepseek::DeepSeek;

/// The section opener.
const CALLS: &str = "<｜tool▁calls▁begin｜>";
/// The section closer.
const CALLS_END: &str = "<｜tool▁calls▁end｜>";
/// The call opener.
const CALL: &str = "<｜tool▁call▁begin｜>";
/// The call closer.
const CALL_END: &str = "<｜tool▁call▁end｜>";
/// Between the header and the arguments.
const SEP: &str = "<｜tool▁sep｜>";

/// The `deepseek` extractor.
pub(crate) const DEEPSEEK: Configured = Configured {
    example: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Antwerp\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    describe: "DeepSeek V3/R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>f + fenced JSON + <｜tool▁call▁end｜>; V3.1: <｜tool▁call▁begin｜>f<｜tool▁sep｜>{json}<｜tool▁call▁end｜>",
    config: Config::DeepSeek(DeepSeek {
        mode: "deepseek",
        calls: CALLS,
        call: CALL,
        sep: SEP,
        call_end: CALL_END,
        calls_end: CALLS_END,
    }),
};

/// The `deepseek` format.
pub(crate) const FORMAT: Def = Def {
    position: 100,
    extractor: || Box::new(DEEPSEEK),
    group: Group::Tagged,
    models: &["deepseek-v3", "deepseek-r1"],
    bare_reader: false,
    profile: Some(Profile {
        name: "deepseek",
        rank: 6,
    }),
    row: Format {
        name: "deepseek",
        families: "DeepSeek V3 / R1 / V3.1",
        engine: Engine::NameThenJson,
        opener: cat!(CALLS, CALL),
        separator: Some(SEP),
        closers: &["```", CALL_END, CALLS_END],
        blocks: &[(CALLS, CALLS_END), (CALL, CALL_END)],
        openers: Some(&[CALLS, CALL]),
        payload: PayloadKind::JsonArguments,
        conventions: "V3: function<｜tool▁sep｜>NAME + fenced JSON; V3.1: NAME<｜tool▁sep｜>JSON",
        ..NO_EXTRAS
    },
};
