//! One extractor for every row that is nothing but an engine configuration
//! (issue 8): the engine's tokens, an example and a description. The
//! per-row modules (`atem`, `minimax_m2`, `minicpm5`, `step3`,
//! `deepseek_dsml`, `glm`, `hunyuan`, `longcat_xml`, `kimi`, and issue 27's
//! `kimi_k3`, `minimax_m3`, `deepseek_dsml_plain`, `seed_oss`, `hy_v4`, and
//! `qwen_xml` and the irregular scanners `deepseek`, `harmony`, `xml_call`)
//! hold a [`Configured`] constant, their docs and their peer-style tests; the
//! dispatch from configuration to engine is written once, here, and shared
//! with user-declared formats ([`crate::declared`]).

use toolgate_core::Candidate;

use super::jsonlike::marked::Marked;
use super::tagged::deepseek::{self, DeepSeek};
use super::tagged::glm::{self, Tokens};
use super::tagged::harmony::{self, Harmony};
use super::tagged::invoke::{self, Syntax};
use super::tagged::name_json::{self, NameJson};
use super::tagged::qwen_xml::{self, FunctionXml};
use super::tagged::xml_call::{self, XmlCall};
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
    /// DeepSeek V3's special-token calls, fenced or not
    /// ([`super::tagged::deepseek`]; an irregular scanner).
    DeepSeek(DeepSeek),
    /// gpt-oss's harmony messages ([`super::tagged::harmony`]; an irregular
    /// scanner).
    Harmony(Harmony),
    /// XML calls with one element per argument ([`super::tagged::xml_call`];
    /// an irregular scanner).
    XmlCall(XmlCall),
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
            Config::DeepSeek(d) => d.mode,
            Config::Harmony(h) => h.mode,
            Config::XmlCall(x) => x.mode,
        }
    }

    /// Every candidate of `input` (output, then the reasoning field).
    pub(crate) fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        if let Config::JsonBlock(m) = self {
            // The marker engine reads both texts itself (its reasoning rules).
            return m.extract(input, strictness);
        }
        util::scan_texts(input, |text| match self {
            Config::JsonBlock(_) => Vec::new(),
            Config::NameJson(c) => name_json::scan(text, input, strictness, c),
            Config::KeyValue(t) => glm::scan(text, input, strictness, t),
            Config::Invoke(s) => invoke::scan(text, s, input, strictness),
            Config::FunctionXml(x) => qwen_xml::scan(text, x, input, strictness),
            Config::DeepSeek(d) => deepseek::scan(text, d, input, strictness),
            Config::Harmony(h) => harmony::scan(text, h, input, strictness),
            Config::XmlCall(x) => xml_call::scan(text, x, input, strictness),
        })
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
