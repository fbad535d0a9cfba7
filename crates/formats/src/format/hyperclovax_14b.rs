//! `hyperclovax_14b`: HyperCLOVAX-SEED-Think-14B — a ` -> tool/function_call`
//! header line, then a JSON array of call objects.
//!
//! ```text
//! -> tool/function_call
//! [{"name": "get_weather", "arguments": {"city": "Seoul"}}]<|im_end|>
//! ```
//!
//! Derived from vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/hyperclovax_seed_think_14b_tool_parser.py`, and its
//! tests): the header the chat template writes for a call message, then the
//! call list (`arguments` or `parameters`, SPEC §9's keys). No closer: the
//! list's own end ends it, and text after it (the `<|im_end|>` end of turn)
//! is content; an output that ends inside the list is `truncated`.
//!
//! Not read: the abbreviated `-> tool/NAME\n{…}` the model sometimes writes
//! (vLLM does not read it either: no call), and the bare list a reasoning
//! parser leaves after stripping the header (vLLM reads it when the request
//! has tools; a bare list is the `json`/`xlam` modes' reading). The 32B
//! HyperCLOVAX-SEED-Think writes GLM's markup instead (`glm`).

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The header of a call message.
const HEADER: &str = "-> tool/function_call";

/// The `hyperclovax_14b` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "hyperclovax_14b",
        example: "-> tool/function_call\n[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Seoul\"}}]",
        describe: "HyperCLOVAX-SEED-Think-14B: ` -> tool/function_call` + a JSON array of call objects",
        blocks: vec![Block::open(HEADER)],
        payload: Payload::Calls { sep: None },
    })
}

/// The `hyperclovax_14b` format.
pub(crate) const FORMAT: Def = Def {
    position: 275,
    extractor,
    group: Group::JsonLike,
    models: &["hyperclovax-seed-think-14b"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "hyperclovax_14b",
        families: "HyperCLOVAX-SEED-Think-14B",
        engine: Engine::JsonBlock,
        opener: HEADER,
        closers: &[],
        blocks: &[],
        openers: Some(&[HEADER]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
