//! One extractor for every row that is nothing but an engine configuration
//! (issue 8): the engine's tokens, an example and a description. The
//! per-row modules (`atem`, `minimax_m2`, `minicpm5`, `step3`,
//! `deepseek_dsml`, `glm`, `hunyuan`, `longcat_xml`, `kimi`, and issue 27's
//! `kimi_k3`, `minimax_m3`, `deepseek_dsml_plain`, `seed_oss`, `hy_v4`) hold a
//! [`Configured`] constant, their docs and their peer-style tests; the
//! dispatch from configuration to engine is written once, here, and shared
//! with user-declared formats ([`crate::declared`]).

use toolgate_core::Candidate;

use super::jsonlike::marked::Marked;
use super::tagged::glm::{self, Tokens};
use super::tagged::invoke::{self, Syntax};
use super::tagged::name_json::{self, NameJson};
use super::tagged::qwen_xml::{self, FunctionXml};
use crate::input::{Input, Strictness};
use crate::{Extractor, util};

/// An engine with its tokens.
pub(crate) enum Config<'a> {
    /// A marker + JSON block ([`super::jsonlike::marked`]).
    JsonBlock(Marked<'a>),
    /// Name, separator, JSON arguments ([`super::tagged::name_json`]).
    NameJson(NameJson<'a>),
    /// `<open>NAME<key>k</key><value>v</value><close>` ([`super::tagged::glm`]).
    KeyValue(Tokens<'a>),
    /// `<invoke name="f"><param name="k">v</param></invoke>`
    /// ([`super::tagged::invoke`]).
    Invoke(Syntax<'a>),
    /// `<wrapper><function=f><parameter=k>v</parameter></function></wrapper>`
    /// ([`super::tagged::qwen_xml`]).
    FunctionXml(FunctionXml<'a>),
}

impl Config<'_> {
    /// The mode name the engine gives its candidates.
    pub(crate) fn mode(&self) -> &str {
        match self {
            Config::JsonBlock(m) => m.name,
            Config::NameJson(c) => c.mode,
            Config::KeyValue(t) => t.mode,
            Config::Invoke(s) => s.mode,
            Config::FunctionXml(x) => x.mode,
        }
    }

    /// Every candidate of `input` (output, then the reasoning field).
    pub(crate) fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        match self {
            Config::JsonBlock(m) => m.extract(input, strictness),
            Config::NameJson(c) => {
                util::scan_texts(input, |text| name_json::scan(text, input, strictness, c))
            }
            Config::KeyValue(t) => {
                util::scan_texts(input, |text| glm::scan(text, input, strictness, t))
            }
            Config::Invoke(s) => {
                util::scan_texts(input, |text| invoke::scan(text, s, input, strictness))
            }
            Config::FunctionXml(x) => {
                util::scan_texts(input, |text| qwen_xml::scan(text, x, input, strictness))
            }
        }
    }
}

/// A built-in mode that is an engine configuration plus its example and
/// description.
pub(crate) struct Configured {
    /// One output in the format (for `toolgate formats` and the table tests).
    pub example: &'static str,
    /// A one-line description of the wire shape.
    pub describe: &'static str,
    /// The engine and its tokens.
    pub config: Config<'static>,
}

impl Extractor for Configured {
    fn name(&self) -> &str {
        self.config.mode()
    }
    fn example(&self) -> &str {
        self.example
    }
    fn describe(&self) -> &str {
        self.describe
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        self.config.extract(input, strictness)
    }
}
