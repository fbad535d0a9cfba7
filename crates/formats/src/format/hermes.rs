//! `hermes`: its row, models and profile. Read by [`crate::irregular::hermes`].

use super::prelude::*;
use crate::find::StaticFinder;
use crate::irregular::hermes::Hermes;

pub(crate) const OPEN: &str = "<tool_call>";
pub(crate) const CLOSE: &str = "</tool_call>";

static OPEN_FINDER: StaticFinder = StaticFinder::new(OPEN);
static CLOSE_FINDER: StaticFinder = StaticFinder::new(CLOSE);

/// The `hermes` extractor: its engine with this file's tokens.
pub(crate) const HERMES: Hermes = Hermes {
    open: &OPEN_FINDER,
    close: &CLOSE_FINDER,
};

/// The `hermes` format.
pub(crate) const FORMAT: Def = Def {
    position: 60,
    extractor: || Box::new(HERMES),
    group: Group::Seed,
    models: &[
        "hermes",
        "qwen2.5",
        "qwen2-",
        "qwen3",
        "qwq",
        "smollm3",
        // ERNIE 4.5 writes Hermes's <tool_call> JSON.
        "ernie-4.5",
        "ernie4.5",
        "ernie-4_5",
    ],
    bare_reader: false,
    profile: Some(Profile {
        name: "hermes",
        rank: 1,
    }),
    row: Format {
        name: "hermes",
        families: "Hermes 2/3, Qwen 2.5/3, many fine-tunes",
        engine: Engine::JsonBlock,
        opener: OPEN,
        closers: &[CLOSE],
        blocks: &[(OPEN, CLOSE)],
        openers: Some(&[OPEN]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
