//! `react`: ReAct-style agent outputs — `Action:` names the tool,
//! `Action Input:` gives its arguments as a JSON object.
//!
//! ```text
//! Thought: I need the weather in Antwerp.
//! Action: get_weather
//! Action Input: {"city": "Antwerp"}
//! ```
//!
//! There is no model family and no chat template: this is the prompted
//! format of LangChain's ReAct agent, read here as its output parser reads
//! it (`langchain-ai/langchain`,
//! `libs/langchain/langchain/agents/output_parsers/react_single_input.py`:
//! `Action:` then `Action Input:`, `Final Answer:` for the end, and the
//! agent's stop sequence `Observation:`). toolgate judges tool arguments
//! against a JSON Schema, so it asks more of the input than LangChain's
//! single string and fails closed where LangChain guesses:
//!
//! - a **call** is `Action: NAME` (a name without whitespace) followed by
//!   `Action Input:` and one JSON object, ending at `Observation:`, the
//!   next `Action:` or the end of the output; several actions are
//!   parallel calls (LangChain reads only the first);
//! - `Action:` without `Action Input:` before the next action or
//!   `Observation:` is `malformed`; at the end of the output it is
//!   `truncated` (the input may have been cut);
//! - an `Action Input:` that is not a JSON object (`Action Input: Antwerp`,
//!   text after the object before `Observation:`) is `malformed`; a JSON
//!   string holding an object is double-encoded (`escaping`);
//! - `Final Answer:` anywhere in the same text as an action makes every
//!   call of that text `malformed` (LangChain raises "both a final answer
//!   and a parse-able action"): which one the model meant is unknown, so
//!   nothing runs. `Final Answer:` alone is content, not a call;
//! - `Action:` opens a call wherever it stands, as LangChain's pattern
//!   matches anywhere; prose that writes `Action:` and `Action Input:`
//!   followed by something other than a name and an object is therefore a
//!   `malformed` candidate, never a call.
//!
//! Read by the name-then-JSON engine ([`crate::families::tagged`]'s
//! `name_json`) with these tokens; only the `Final Answer:` rule is this
//! module's own.

use super::prelude::*;
use super::command_r::ACTION;
use crate::families::tagged::name_json::{self, NameJson, bare_name};
use crate::input::{Input, Strictness};
use crate::{Extractor, util};
use toolgate_core::{Candidate, FailureKind, ParseFailure};

/// The answer marker that ends a ReAct run instead of an action.
const FINAL_ANSWER: &str = "Final Answer:";

const REACT: NameJson<'static> = NameJson {
    mode: "react",
    call: ACTION,
    args: "Action Input:",
    call_end: "Observation:",
    section: None,
    section_end: None,
    namespace: None,
    name_of: bare_name,
    header: "a tool name without whitespace",
};

/// The `react` extractor.
#[derive(Clone, Copy, Debug, Default)]
pub struct React;

impl Extractor for React {
    fn name(&self) -> &str {
        REACT.mode
    }
    fn example(&self) -> &str {
        "Action: get_weather\nAction Input: {\"city\": \"Antwerp\"}"
    }
    fn describe(&self) -> &str {
        "ReAct: Action: NAME, then Action Input: {JSON arguments}, up to Observation:; Final Answer: beside an action is malformed"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| {
            let mut found = name_json::scan(text, input, strictness, &REACT);
            if let Some(at) = util::find_from(text, FINAL_ANSWER, 0) {
                for c in found.iter_mut().filter(|c| c.arguments.is_ok()) {
                    c.arguments = Err(ParseFailure::new(
                        FailureKind::Malformed,
                        "the output gives both an action and a `Final Answer:`",
                        at,
                    ));
                    c.repairs.clear();
                }
            }
            found
        })
    }
}

/// The `react` format.
pub(crate) const FORMAT: Def = Def {
    position: 450,
    extractor: || Box::new(React),
    group: Group::JsonLike,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "react",
        families: "ReAct-prompted agents (LangChain's ReAct output format)",
        engine: Engine::NameThenJson,
        opener: cat!(ACTION, " NAME"),
        separator: Some("Action Input:"),
        closers: &[],
        blocks: &[],
        openers: Some(&[ACTION]),
        payload: PayloadKind::JsonArguments,
        conventions: "Action: NAME, then Action Input: and one JSON object, up to Observation: (the agent's stop sequence), the next Action: or the end; Action without Action Input, a non-JSON input and a Final Answer: beside an action are malformed",
        ..NO_EXTRAS
    },
};
