//! Families whose payloads are JSON call objects or pythonic calls behind a
//! family-specific marker: `mistral`, `llama3`, granite, phi-4 `functools`, …
//!
//! Most of them are "marker + JSON" formats and share one engine
//! (`marked`); each module documents its wire shape with a real example.

use crate::Extractor;

pub mod apertus;
pub mod command_r;
pub mod functionary;
pub mod functools;
pub mod gemma;
pub mod gigachat;
pub mod granite;
pub mod granite_fc;
pub mod internlm;
pub mod lfm2;
pub mod llama3;
pub mod llama4_pythonic;
pub mod longcat;
mod marked;
pub mod mistral;
pub mod nemotron;
pub mod olmo;
mod pythonic;
pub mod tool_calls_tag;

/// This group's modes, in replay order.
pub fn all() -> Vec<Box<dyn Extractor>> {
    vec![
        Box::new(mistral::Mistral),
        Box::new(llama3::Llama3),
        granite::extractor(),
        granite_fc::extractor(),
        functools::extractor(),
        internlm::extractor(),
        tool_calls_tag::extractor(),
        nemotron::extractor(),
        longcat::extractor(),
        gigachat::extractor(),
        apertus::extractor(),
        command_r::extractor(),
        Box::new(functionary::Functionary),
        Box::new(gemma::Gemma),
        llama4_pythonic::extractor(),
        lfm2::extractor(),
        olmo::extractor(),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testutil {
    //! Helpers for this group's unit tests.
    use crate::{Extractor, Input, Strictness};
    use serde_json::{Value, json};
    use toolgate_core::Candidate;

    pub fn strict(e: &dyn Extractor, out: &str) -> Vec<Candidate> {
        e.extract(&Input::new(out), Strictness::Strict)
    }

    pub fn lenient(e: &dyn Extractor, out: &str) -> Vec<Candidate> {
        e.extract(&Input::new(out), Strictness::Lenient)
    }

    /// The parsed live calls of the strict variant, as normalized JSON.
    pub fn calls(e: &dyn Extractor, out: &str) -> Vec<Value> {
        strict(e, out)
            .iter()
            .filter(|c| c.is_live())
            .filter_map(|c| c.call().map(|c| c.to_json()))
            .collect()
    }

    pub fn call(name: &str, args: &str) -> Value {
        json!({"name": name, "arguments": serde_json::from_str::<Value>(args).unwrap()})
    }
}
