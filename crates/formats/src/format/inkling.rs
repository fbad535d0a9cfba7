//! `inkling`: Inkling's structured tool messages — a model message whose
//! header names the tool, then `<|content_invoke_tool_json|>`, a JSON object
//! with `name` and `args`, and `<|end_message|>`.
//!
//! ```text
//! <|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Antwerp"}}<|end_message|>
//! ```
//!
//! Follows SGLang's reference detector (`sgl-project/sglang`,
//! `python/sglang/srt/function_call/inkling_detector.py`, whose docstring
//! gives the wire format and whose tokens come from
//! `sglang/srt/parser/inkling_tokenizer.py`); vLLM's `inkling` parser
//! (`vllm/tool_parsers/inkling_tool_parser.py`) delegates to an engine
//! adapter. Inkling's chat template was not found in the sources read.
//!
//! Decisions, by the `marked` engine:
//! - the payload between `<|content_invoke_tool_json|>` and
//!   `<|end_message|>` is one SPEC §9 call object (or a list of them) whose
//!   arguments key is `args` ([`crate::families::jsonlike::marked::Payload::ArgsKey`]): strict
//!   mode accepts it here, as this format's own key; unknown keys are
//!   refused as everywhere;
//! - a missing `<|end_message|>` after a complete object is `truncated` by
//!   the missing-closer rule (the message may have gone on), an output that
//!   ends inside the object is `truncated`;
//! - the header's tool name (`<|message_model|>NAME`, right before the
//!   opener) must be the payload's `name`: a call whose header names
//!   another tool is `malformed` (SGLang drops it); a call without a header
//!   is read from its payload, as SGLang does.

use super::prelude::*;
use crate::families::jsonlike::marked::{Block, Marked, Payload};
use crate::input::{Input, Strictness};
use crate::{Extractor, util};
use toolgate_core::{Candidate, FailureKind, ParseFailure};

/// The token that opens a model message; the tool's name follows it.
const HEADER: &str = "<|message_model|>";

/// The `inkling` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Inkling(Marked {
        name: "inkling",
        example: r#"<|message_model|>get_weather<|content_invoke_tool_json|>{"name": "get_weather", "args": {"city": "Antwerp"}}<|end_message|>"#,
        describe: "Inkling: <|message_model|>NAME<|content_invoke_tool_json|> + {\"name\", \"args\"} + <|end_message|>",
        blocks: vec![Block::pair(
            "<|content_invoke_tool_json|>",
            "<|end_message|>",
        )],
        payload: Payload::ArgsKey("args"),
    }))
}

/// The marker engine's reading plus the header rule.
struct Inkling(Marked<'static>);

impl Extractor for Inkling {
    fn name(&self) -> &str {
        self.0.name
    }
    fn example(&self) -> &str {
        self.0.example
    }
    fn describe(&self) -> &str {
        self.0.describe
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| {
            let mut found = self.0.scan_text(text, input, strictness);
            check_headers(text, &mut found);
            found
        })
    }
}

/// A call whose message header (the text from `<|message_model|>` right up
/// to the call's opener) names another tool than its payload is
/// `malformed`. One forward pass over the headers: the candidates come in
/// text order.
fn check_headers(text: &str, found: &mut [Candidate]) {
    let b = text.as_bytes();
    let finder = memchr::memmem::Finder::new(HEADER);
    let mut next = finder.find(b);
    let mut last = None;
    for c in found.iter_mut() {
        while let Some(h) = next.filter(|h| *h < c.span.start) {
            last = Some(h);
            next = finder.find(&b[h + 1..]).map(|n| n + h + 1);
        }
        let Some(h) = last else { continue };
        let Some(header) = text.get(h + HEADER.len()..c.span.start) else {
            continue;
        };
        // Another token between the header and the opener: not this
        // call's header.
        if header.contains("<|") || c.arguments.is_err() {
            continue;
        }
        let header = header.trim();
        if !header.is_empty() && c.name.as_deref() != Some(header) {
            let payload = c.name.as_deref().unwrap_or("");
            c.arguments = Err(ParseFailure::new(
                FailureKind::Malformed,
                format!("the message header names `{header}`, the payload `{payload}`"),
                h,
            ));
            c.repairs.clear();
        }
    }
}

/// The `inkling` format.
pub(crate) const FORMAT: Def = Def {
    position: 440,
    extractor,
    group: Group::JsonLike,
    models: &["inkling"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "inkling",
        families: "Inkling",
        engine: Engine::JsonBlock,
        opener: "<|message_model|>NAME<|content_invoke_tool_json|>",
        closers: &["<|end_message|>"],
        blocks: &[("<|content_invoke_tool_json|>", "<|end_message|>")],
        // The header names the tool: held as call markup.
        openers: Some(&["<|content_invoke_tool_json|>", "<|message_model|>"]),
        payload: PayloadKind::JsonCall,
        conventions: "{\"name\": NAME, \"args\": {…}}: args is the arguments key (or the SPEC §9 keys); a <|message_model|> header naming another tool than the payload is malformed",
        ..NO_EXTRAS
    },
};
