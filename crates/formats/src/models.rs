//! Which wire format a model family emits, by model name.
//!
//! [`FAMILIES`] is data keyed by mode name: each row names a mode and the
//! model-name fragments of the families whose chat templates emit it. A
//! format declares its models in its own file ([`crate::format`]). The validator's `auto`
//! profile reads this table (the `by name` source); nothing here runs a model
//! name through an extractor.
//!
//! Matching ([`mode_for_model`]) is case-insensitive substring matching, and
//! the fragment found **earliest** in the name wins; at the same position the
//! longer fragment wins (the more specific family: `qwen3-coder` over
//! `qwen3`, `deepseek-v3.2` over `deepseek-v3`). Fine-tunes name themselves
//! before their base model (`hermes-3-llama-3.1-8b` is a Hermes model, not a
//! Llama one), so the order of rows does not matter. A name holding one of
//! [`NOT_THE_BASE`] (a distillation) says nothing about its format and matches
//! no row.
//!
//! ```
//! use toolgate_formats::mode_for_model;
//! assert_eq!(mode_for_model("Qwen/Qwen3-Coder-30B-A3B-Instruct"), Some(("qwen_xml", "qwen3-coder")));
//! assert_eq!(mode_for_model("qwen3-8b"), Some(("hermes", "qwen3")));
//! assert_eq!(mode_for_model("hermes-3-llama-3.1-8b"), Some(("hermes", "hermes")));
//! assert_eq!(mode_for_model("deepseek-v3.2-exp"), Some(("deepseek_dsml", "deepseek-v3.2")));
//! assert_eq!(mode_for_model("my-finetune"), None);
//! ```

pub use crate::description::ModelFamily;

/// The model families toolgate knows, keyed by mode name: the `models` of
/// each format file ([`crate::format`]), in replay order.
pub const FAMILIES: &[ModelFamily] = crate::format::FAMILIES;

/// Modes that read a bare payload (a JSON call object, a pythonic list)
/// wherever it appears, without a family's own markup: they read what many
/// families wrap in markup, so when one of them and a family's mode read a
/// model's outputs equally well, the family's mode is the better guess.
pub const BARE_READERS: &[&str] = &crate::format::BARE_READERS;

/// Name fragments that say a model's format is not its base family's: a
/// distillation keeps the base's tokenizer but not its tool-call training.
pub const NOT_THE_BASE: &[&str] = &["-distill"];

/// The mode the model family named in `model` emits, with the fragment that
/// matched: earliest fragment in the name, then the longest; `None` when no
/// fragment matches or the name holds one of [`NOT_THE_BASE`].
pub fn mode_for_model(model: &str) -> Option<(&'static str, &'static str)> {
    let name = model.to_lowercase();
    if NOT_THE_BASE.iter().any(|f| name.contains(f)) {
        return None;
    }
    let mut best: Option<(usize, usize, &'static str, &'static str)> = None;
    for family in FAMILIES {
        for fragment in family.fragments {
            let Some(at) = name.find(fragment) else {
                continue;
            };
            let better = match best {
                None => true,
                Some((b_at, b_len, _, _)) => at < b_at || (at == b_at && fragment.len() > b_len),
            };
            if better {
                best = Some((at, fragment.len(), family.mode, fragment));
            }
        }
    }
    best.map(|(_, _, mode, fragment)| (mode, fragment))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_names_a_builtin_mode_and_lowercase_fragments() {
        let modes: Vec<String> = crate::builtin()
            .iter()
            .map(|e| e.name().to_string())
            .collect();
        for family in FAMILIES {
            assert!(modes.iter().any(|m| m == family.mode), "{}", family.mode);
            for f in family.fragments {
                assert_eq!(f.to_lowercase(), *f);
            }
        }
    }

    /// Issue 27 item 6 (formats-b): the families added or pinned then.
    #[test]
    fn issue_27_families_map_to_their_modes() {
        let cases = [
            ("Salesforce/Llama-xLAM-2-8b-fc-r", Some("xlam")),
            ("Salesforce/xLAM-1B-fc-r", Some("xlam")),
            ("Salesforce/Qwen-xLAM-32B-fc-r", Some("xlam")),
            (
                "sbintuitions/sarashina2.2-3b-instruct-v0.1",
                Some("sarashina"),
            ),
            ("inkling-base", Some("inkling")),
            // Command A writes Command R7B's action block (command_r.rs).
            ("CohereLabs/c4ai-command-a-03-2025", Some("command_r")),
            ("CohereLabs/command-a-reasoning-08-2025", Some("command_r")),
            ("CohereLabs/command-a-plus-05-2026-fp8", Some("command_r")),
            // ERNIE 4.5 writes Hermes's <tool_call> blocks (hermes.rs).
            ("baidu/ERNIE-4.5-21B-A3B-Thinking", Some("hermes")),
            ("baidu/ERNIE-4.5-300B-A47B-PT", Some("hermes")),
            // Poolside Laguna writes GLM-4.5's calls (glm.rs).
            ("poolside/Laguna-XS.2", Some("glm")),
        ];
        for (model, mode) in cases {
            assert_eq!(mode_for_model(model).map(|m| m.0), mode, "{model}");
        }
    }

    /// Families vLLM added parsers for after the peer corpus was read
    /// (stop 48), whose wire format an existing mode reads.
    #[test]
    fn stop_48_vllm_families_map_to_their_modes() {
        let cases = [
            ("IQuestLab/IQuest-Coder-V1-40B-Instruct", Some("qwen_xml")),
            // V2 has its own call tokens: its own mode.
            (
                "IQuestLab/IQuest-Coder-V2-Instruct",
                Some("iquest_coder_v2"),
            ),
            ("XiaomiMiMo/MiMo-V2-Flash", Some("qwen_xml")),
            ("FreedomIntelligence/openPangu-Embedded-7B", Some("lfm2")),
            ("internlm/Intern-S1-mini", Some("internlm")),
            (
                "naver-hyperclovax/HyperCLOVAX-SEED-Think-14B",
                Some("hyperclovax_14b"),
            ),
            // The 32B writes GLM's markup with JSON-encoded values: its own
            // mode, which reads them as JSON first.
            (
                "naver-hyperclovax/HyperCLOVAX-SEED-Think-32B",
                Some("hyperclovax_seed_think"),
            ),
        ];
        for (model, mode) in cases {
            assert_eq!(mode_for_model(model).map(|m| m.0), mode, "{model}");
        }
    }

    /// Stop 49: the families of the three vLLM parsers read since.
    #[test]
    fn stop_49_vllm_families_map_to_their_modes() {
        let cases = [
            ("k2-horizon", Some("k2_horizon")),
            ("solar-open2", Some("solar_open2")),
            ("upstage/Solar-Open-2-Instruct", Some("solar_open2")),
            // The 14B keeps its own header format: the longer fragment.
            (
                "naver-hyperclovax/HyperCLOVAX-SEED-Think-14B",
                Some("hyperclovax_14b"),
            ),
            (
                "naver-hyperclovax/HyperCLOVAX-SEED-Think-32B",
                Some("hyperclovax_seed_think"),
            ),
        ];
        for (model, mode) in cases {
            assert_eq!(mode_for_model(model).map(|m| m.0), mode, "{model}");
        }
    }

    #[test]
    fn earliest_then_longest_fragment_wins() {
        let cases = [
            ("hermes-3-llama-3.1-8b", Some("hermes")),
            ("NousResearch/Hermes-3-Llama-3.1-8B", Some("hermes")),
            ("qwen3-coder-30b-a3b-instruct", Some("qwen_xml")),
            ("qwen2.5-7b-instruct", Some("hermes")),
            ("meta-llama/Llama-3.3-70B-Instruct", Some("llama3")),
            ("llama-4-scout-17b-16e-instruct", Some("llama4_pythonic")),
            ("deepseek-v3-0324", Some("deepseek")),
            ("deepseek-v3.2", Some("deepseek_dsml")),
            ("functiongemma-270m-it", Some("gemma")),
            ("gemma-3-12b-it", None),
            ("hunyuan-a13b-instruct", Some("tool_calls_tag")),
            ("hunyuan-t1", Some("hunyuan")),
            ("granite-20b-functioncalling", Some("granite_fc")),
            ("granite-3.3-8b-instruct", Some("granite")),
            ("deepseek-r1-distill-qwen-14b", None),
            ("glm-4.5-air", Some("glm")),
            // StepFun 3.5 / 3.7 write Qwen3-Coder's XML, Step-3 its steptml.
            ("stepfun-ai/Step-3.5-Flash", Some("qwen_xml")),
            ("step3p5", Some("qwen_xml")),
            ("stepfun-ai/Step-3.7-Flash", Some("qwen_xml")),
            ("stepfun-ai/step3", Some("step3")),
            (
                "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                Some("qwen_xml"),
            ),
            // DeepSeek V4.1's spaced DSML tags are not V4's.
            ("deepseek-ai/DeepSeek-V4.1-Flash", Some("deepseek_v41")),
            ("deepseek-ai/DeepSeek-V4-Flash", Some("deepseek_dsml")),
            // GigaChat 3.5 writes GCML, GigaChat 3 a JSON call object.
            ("ai-sage/GigaChat3.5-10B-A1.8B", Some("gigachat35")),
            ("ai-sage/GigaChat3-10B-A1.8B", Some("gigachat")),
            ("", None),
        ];
        for (model, mode) in cases {
            assert_eq!(mode_for_model(model).map(|m| m.0), mode, "{model}");
        }
    }
}
