//! `harmony`: its tokens, row, models and profile. Read by
//! [`crate::families::tagged::harmony`]. The message framing it shares with
//! the analysis channel (`<|start|>`, `<|channel|>`, `<|message|>`, the
//! message ends) is [`crate::reasoning::harmony`]'s; what only calls use is
//! spelled here.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::harmony::Harmony;
use crate::reasoning::harmony::{BODY_ENDS, CALL, CHANNEL, MESSAGE, START};

/// Constrains the body's format in a header (`<|constrain|>json`).
const CONSTRAIN: &str = "<|constrain|>";
/// What a recipient starts with.
const TO: &str = "to=";
/// The namespace of function recipients.
const FUNCTIONS: &str = "functions.";

/// The `harmony` extractor.
pub(crate) const HARMONY: Configured = Configured {
    example: "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Antwerp\"}<|call|>",
    describe: "gpt-oss harmony: <|channel|>commentary to=functions.f <|constrain|>json<|message|>{json}<|call|> (recipient in the role header or after the channel)",
    config: Config::Harmony(Harmony {
        mode: "harmony",
        message: MESSAGE,
        ends: BODY_ENDS,
        header_tokens: [START, CHANNEL, CONSTRAIN],
        recipient: TO,
        functions: FUNCTIONS,
    }),
};

/// The `harmony` format.
pub(crate) const FORMAT: Def = Def {
    position: 110,
    extractor: || Box::new(HARMONY),
    group: Group::Tagged,
    models: &["gpt-oss"],
    bare_reader: false,
    profile: Some(Profile {
        name: "gpt-oss",
        rank: 5,
    }),
    row: Format {
        name: "harmony",
        families: "gpt-oss",
        engine: Engine::Scanner,
        opener: cat!(CHANNEL, "commentary ", TO, FUNCTIONS, "NAME"),
        separator: Some(MESSAGE),
        closers: &[CALL],
        blocks: &[],
        // A call's span starts at its header's first token or at its
        // `to=functions.` recipient.
        openers: Some(&[START, CHANNEL, CONSTRAIN, cat!(TO, FUNCTIONS)]),
        stop_token: Some(StopToken {
            token: CALL,
            stripped_by: "vLLM and the OpenAI harmony renderer: a stop token of gpt-oss",
        }),
        payload: PayloadKind::JsonArguments,
        conventions: "recipient to=functions.NAME in the role header or after the channel",
        ..NO_EXTRAS
    },
};
