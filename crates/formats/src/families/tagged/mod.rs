//! Families whose calls are markup with key/value parameters or special
//! tokens around JSON: `qwen_xml`, `glm`, `kimi`, `deepseek`, `harmony`, and
//! the further markup the peer corpus shows real models emit.
//!
//! XML-ish values (`qwen_xml`, `glm` and the like) are typed by the tool's
//! schema (SPEC §9): a string unless the schema says otherwise, then read as
//! JSON, and left a string when they do not read as that type.

use crate::Extractor;

mod common;
mod invoke;

pub mod deepseek;
pub mod deepseek_dsml;
pub mod glm;
pub mod harmony;
pub mod hunyuan;
pub mod kimi;
pub mod minicpm5;
pub mod minimax_m2;
pub mod qwen_xml;
pub mod step3;
pub mod xml_call;

/// This group's modes, in replay order: the SPEC §3 modes first, then the
/// families the peer corpus adds.
pub fn all() -> Vec<Box<dyn Extractor>> {
    vec![
        Box::new(qwen_xml::QwenXml),
        Box::new(glm::Glm),
        Box::new(kimi::Kimi),
        Box::new(deepseek::DeepSeek),
        Box::new(harmony::Harmony),
        Box::new(deepseek_dsml::DeepSeekDsml),
        Box::new(minimax_m2::MiniMaxM2),
        Box::new(hunyuan::Hunyuan),
        Box::new(step3::Step3),
        Box::new(minicpm5::MiniCpm5),
        Box::new(xml_call::XmlCall),
    ]
}
