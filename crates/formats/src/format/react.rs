//! `react`: its row, models and profile. Read by [`crate::families::jsonlike::react`].

use super::prelude::*;

/// The `react` format.
pub(crate) const FORMAT: Def = Def {
    position: 450,
    extractor: || Box::new(crate::families::jsonlike::react::React),
    group: Group::JsonLike,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "react",
        families: "ReAct-prompted agents (LangChain's ReAct output format)",
        engine: Engine::NameThenJson,
        opener: "Action: NAME",
        separator: Some("Action Input:"),
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["Action:"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "Action: NAME, then Action Input: and one JSON object, up to Observation: (the agent's stop sequence), the next Action: or the end; Action without Action Input, a non-JSON input and a Final Answer: beside an action are malformed",
    },
};
