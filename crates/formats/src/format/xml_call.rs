//! `xml_call`: XML calls with the name as an attribute and one child
//! element per argument, in two spellings (plain and `tool:`-namespaced).
//! Read by [`crate::families::tagged::xml_call`]; its tags are spelled here.

use super::hermes::{CLOSE, OPEN};
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::xml_call::{Spelling, XmlCall};

/// The plain call opener, Hermes's `<tool_call>` without its `>` (the
/// attributes follow).
const CALL: &str = OPEN.split_at(OPEN.len() - 1).0;
/// The namespaced call opener.
const NS_CALL: &str = "<tool:call";
/// The namespaced call closer.
const NS_CALL_END: &str = "</tool:call>";
/// The plain arguments closer.
const ARGS_END: &str = "</args>";
/// The closer of the example's argument element (MiniMax-M3's row shows
/// the same element, [`super::minimax_m3`]).
pub(crate) const CITY_END: &str = "</city>";

/// The `xml_call` extractor: both spellings.
pub(crate) const XML_CALL: Configured = Configured {
    example: "<tool_call name=\"get_weather\"><args><city>Antwerp</city></args></tool_call>",
    describe: "XML call with a name attribute: <tool_call name=\"f\"><args><k>v</k></args></tool_call> (also <tool:call …><tool:args>); values typed by the tool schema",
    config: Config::XmlCall(XmlCall {
        mode: "xml_call",
        spellings: &[
            Spelling {
                open: CALL,
                close: CLOSE,
                args: "<args",
                args_close: ARGS_END,
            },
            Spelling {
                open: NS_CALL,
                close: NS_CALL_END,
                args: "<tool:args",
                args_close: "</tool:args>",
            },
        ],
    }),
};

/// The `xml_call` format.
pub(crate) const FORMAT: Def = Def {
    position: 170,
    extractor: || Box::new(XML_CALL),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "xml_call",
        families: "XML-prompted models",
        engine: Engine::Scanner,
        opener: cat!(CALL, " name=\"NAME\"><args> (or ", NS_CALL, " …><tool:args>)"),
        closers: &[CITY_END, ARGS_END, CLOSE],
        blocks: &[(cat!(CALL, " name="), CLOSE), (NS_CALL, NS_CALL_END)],
        parameter: Some(("<KEY>", "</KEY>")),
        openers: Some(&[CALL, NS_CALL]),
        payload: PayloadKind::TaggedValues,
        conventions: "one element per argument inside <args>",
        ..NO_EXTRAS
    },
};
