//! `command_r`: Cohere Command R7B action blocks and Command R+ `Action:`
//! fenced JSON — both a list of `{"tool_name": …, "parameters": {…}}`.
//!
//! ~~~text
//! <|START_THINKING|>I'm thinking<|END_THINKING|><|START_ACTION|>[
//!     {"tool_call_id": "0", "tool_name": "special_function", "parameters": {"arg1": 1}}
//! ]<|END_ACTION|>
//!
//! Action:
//! ```json
//! [{"tool_name": "special_function", "parameters": {"arg1": 1}}]
//! ```
//! ~~~
//!
//! **Command A** (Command A, A Reasoning, A Vision, A Plus: "Command 4" in
//! the stacks) writes exactly this on the wire, so it is a model mapping to
//! this mode (`command-a` in [`crate::models`]), not a mode of its own:
//! SGLang's `cohere_command4` detector
//! (`sgl-project/sglang`, `python/sglang/srt/function_call/cohere_command4_detector.py`,
//! quoting the model's `chat_template.jinja`) reads the same
//! `<|START_THINKING|>…<|END_THINKING|><|START_ACTION|>[{"tool_call_id",
//! "tool_name", "parameters"}, …]<|END_ACTION|>` as Command R7B, and vLLM's
//! `cohere_command` parser (`vllm/tool_parsers/cohere_command_tool_parser.py`)
//! differs between its `cmd3` and `cmd4` filters only in options of the
//! `cohere_melody` filter, not in the tokens.
//!
//! The SPEC §9 key rules read `tool_name` and `parameters`; `tool_call_id`
//! is this format's own metadata key (elsewhere it is an unknown key). Calls inside `<|START_THINKING|>…<|END_THINKING|>` are
//! reasoning. An output that ends inside the list is `truncated`.

use super::fence::JSON_FENCE;
use super::prelude::*;

/// Command R7B's action block.
const START: &str = "<|START_ACTION|>";
/// Closes [`START`].
const END: &str = "<|END_ACTION|>";

/// Command R+'s action line (ReAct agents write it too: `react`).
pub(crate) const ACTION: &str = "Action:";
use crate::families::jsonlike::marked::{Block, Marked, Payload};
use crate::Extractor;

/// Command R's own metadata key: its chat template writes it in every call
/// object (an id cannot hold the arguments). In every other format that key
/// is unknown (`malformed`).
const METADATA: &[&str] = &["tool_call_id"];

/// The `command_r` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "command_r",
        example: "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"special_function\", \"parameters\": {\"arg1\": 1}}\n]<|END_ACTION|>",
        describe: "Command R7B: <|START_ACTION|> + [{\"tool_name\", \"parameters\"}] + <|END_ACTION|>; Command R+: Action: + ```json list",
        blocks: vec![
            Block::pair(START, END),
            Block {
                open: ACTION,
                close: None,
                fenced: true,
            },
        ],
        payload: Payload::CallsWithMetadata(METADATA),
    })
}

/// The `command_r` format.
pub(crate) const FORMAT: Def = Def {
    position: 360,
    extractor,
    group: Group::JsonLike,
    models: &["command-r", "command-a"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "command_r",
        families: "Command R7B, Command R+, Command A",
        engine: Engine::JsonBlock,
        opener: cat!(START, " (R+: ", ACTION, " + ", JSON_FENCE, ")"),
        closers: &[END],
        blocks: &[(START, END)],
        openers: Some(&[START, ACTION]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
