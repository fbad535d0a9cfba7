//! The table of wire formats: one row per built-in mode, with what the rest
//! of the project needs to know about it as data (SPEC §3, issue 8).
//!
//! A row says which model families emit the format, which engine (shape)
//! reads it, its opener / separator / closer tokens, whether a missing
//! closer may be a stop token a serving stack strips (and which stack), what
//! the payload is and how the name and arguments are spelled. The row feeds
//! `toolgate formats`, the docs and the cross-format test table
//! (`crates/validator/tests/formats_table.rs`), which runs the same semantic
//! cases (missing closer, missing closer with `finish_reason: "length"`,
//! double-encoded arguments, …) through every row.
//!
//! The extractor of a mode still lives in its module; [`row`] finds the row
//! of a mode by name, and a test pins that every built-in extractor has
//! exactly one row and every row one extractor.
//!
//! Adding a format: one row here, one extractor (usually a few lines of
//! engine configuration), a bundled transcript under `transcripts/`, and its
//! peer-style tests; the cross-format table then checks the shared rules.

/// The engine (shape) that reads a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A marker (or tag) followed by a JSON call object or an array of them
    /// (`families::jsonlike::marked`, `hermes`, `tag`).
    JsonBlock,
    /// A tool name, a separator, then a JSON arguments object (`kimi`,
    /// `deepseek`, `harmony`, `mistral`, `functionary`).
    NameThenJson,
    /// Tagged parameters: name/key/value prefix–suffix pairs, values typed by
    /// the tool schema (`families::tagged::common`, `invoke`).
    TaggedParameters,
    /// Python-style calls with named arguments (`bracket`,
    /// `families::jsonlike::pythonic`).
    Pythonic,
    /// A hand-written scanner for an irregular format.
    Scanner,
}

impl Engine {
    /// The snake_case name shown by `toolgate formats`.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::JsonBlock => "json_block",
            Engine::NameThenJson => "name_then_json",
            Engine::TaggedParameters => "tagged_parameters",
            Engine::Pythonic => "pythonic",
            Engine::Scanner => "scanner",
        }
    }
}

/// What a call's payload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadKind {
    /// A JSON call object (`{"name": …, "arguments": {…}}`) or an array of
    /// them; the arguments are a JSON object read by the shared reader.
    JsonCall,
    /// A JSON arguments object after the name (the name is markup).
    JsonArguments,
    /// Tagged parameters whose text values are typed by the tool schema.
    TaggedValues,
    /// Python-style literals.
    PythonLiterals,
    /// A format's own literal syntax (gemma's `key:<|"|>text<|"|>`).
    OwnLiterals,
}

impl PayloadKind {
    /// The snake_case name shown by `toolgate formats`.
    pub fn as_str(self) -> &'static str {
        match self {
            PayloadKind::JsonCall => "json_call",
            PayloadKind::JsonArguments => "json_arguments",
            PayloadKind::TaggedValues => "tagged_values",
            PayloadKind::PythonLiterals => "python_literals",
            PayloadKind::OwnLiterals => "own_literals",
        }
    }

    /// Whether the arguments are a JSON object (so double-encoded arguments,
    /// `"arguments": "{\"k\": 1}"`, are an `escaping` failure, SPEC §5 rule 6).
    pub fn reads_json_arguments(self) -> bool {
        matches!(self, PayloadKind::JsonCall | PayloadKind::JsonArguments)
    }
}

/// A closer that serving stacks strip as a stop token, so a call may arrive
/// without it (SPEC §9). Under `finish_reason: "length"` it is never excused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopToken {
    /// The token, e.g. `<|call|>`.
    pub token: &'static str,
    /// The serving stack(s) known to strip it.
    pub stripped_by: &'static str,
}

/// A mode's prefilter triggers: a candidate needs one of `tokens` in the
/// text, or the text to begin (after whitespace) with `leading`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triggers {
    /// Tokens, any of which may be where a candidate is.
    pub tokens: &'static [&'static str],
    /// A byte a candidate may begin with at the very start of the text.
    pub leading: Option<u8>,
}

/// One wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// The mode name.
    pub name: &'static str,
    /// The model families that emit it.
    pub families: &'static str,
    /// The engine that reads it.
    pub engine: Engine,
    /// The token(s) that open a call or a call section.
    pub opener: &'static str,
    /// The separator between name and arguments, or between calls, if any.
    pub separator: Option<&'static str>,
    /// The closing markup that ends the mode's example, innermost first
    /// (e.g. `<|tool_call_end|>` then `<|tool_calls_section_end|>`); empty
    /// when the format has no closer (the JSON value's own end ends it).
    /// A missing closer is `truncation` (SPEC §9).
    pub closers: &'static [&'static str],
    /// The (opener, closer) pairs of a call and of the section holding the
    /// calls: when the last opener of a pair in the output has no closer
    /// after it, the output ended inside that block and the call in it is
    /// `truncated` (the missing-closer rule, applied to every row by
    /// [`crate::rules`]). An opener may be a prefix (`<tool name=`).
    pub blocks: &'static [(&'static str, &'static str)],
    /// Tagged parameters: the markup before a value and the value's closer,
    /// with `KEY` standing for the parameter name. A value never contains
    /// the format's own parameter markup (a value that runs into the next
    /// parameter because its closer is missing is `malformed`).
    pub parameter: Option<(&'static str, &'static str)>,
    /// The literal tokens that can begin a candidate, for streaming
    /// hold-back ([`crate::openers`]); `None` when a candidate can begin
    /// without a fixed token (hold the whole output), `Some(&[])` when the
    /// mode never finds a candidate in the text (`native`).
    pub openers: Option<&'static [&'static str]>,
    /// What the batch prefilter ([`crate::prefilter`]) looks for instead of
    /// `openers`, when an opener is too common to tell anything (`llama3`'s
    /// `{`): no candidate unless the text holds one of these. `None`: the
    /// openers.
    pub triggers: Option<Triggers>,
    /// The closer a serving stack may strip, excused when missing (never
    /// under `finish_reason: "length"`).
    pub stop_token: Option<StopToken>,
    /// What the payload is.
    pub payload: PayloadKind,
    /// How the tool name and the arguments are spelled.
    pub conventions: &'static str,
}

const CALL_KEYS: &str =
    "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9)";

/// Every built-in mode, in replay order.
pub const FORMATS: &[Format] = &[
    Format {
        name: "tag",
        families: "seed (toolgate's own prompt format)",
        engine: Engine::JsonBlock,
        opener: "<tool name=\"NAME\">",
        separator: None,
        closers: &["</tool>"],
        blocks: &[("<tool name=", "</tool>")],
        parameter: None,
        openers: Some(&["<tool"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "name in the name attribute; body is the JSON arguments object",
    },
    Format {
        name: "json",
        families: "any model prompted for bare JSON",
        engine: Engine::Scanner,
        opener: "{ or [ at the start of the output",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["{", "[", "```"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "bracket",
        families: "Llama 3.2 pythonic prompts, seed",
        engine: Engine::Pythonic,
        opener: "[",
        separator: Some(","),
        closers: &["]"],
        blocks: &[],
        parameter: None,
        openers: Some(&["["]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "name(arg=value, …); arguments must be named",
    },
    Format {
        name: "marker",
        families: "seed (TOOL_CALL prompts)",
        engine: Engine::JsonBlock,
        opener: "TOOL_CALL",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["TOOL_CALL"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "fence",
        families: "any model asked for a fenced JSON block",
        engine: Engine::Scanner,
        opener: "```json / ```tool_call / ```",
        separator: None,
        closers: &["```"],
        blocks: &[],
        parameter: None,
        openers: Some(&["```"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "hermes",
        families: "Hermes 2/3, Qwen 2.5/3, many fine-tunes",
        engine: Engine::JsonBlock,
        opener: "<tool_call>",
        separator: None,
        closers: &["</tool_call>"],
        blocks: &[("<tool_call>", "</tool_call>")],
        parameter: None,
        openers: Some(&["<tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "qwen_xml",
        families: "Qwen3-Coder",
        engine: Engine::TaggedParameters,
        opener: "<tool_call><function=NAME>",
        separator: Some("<parameter=KEY>"),
        closers: &["</parameter>", "</function>", "</tool_call>"],
        blocks: &[
            ("<tool_call>", "</tool_call>"),
            ("<function=", "</function>"),
        ],
        parameter: Some(("<parameter=KEY>", "</parameter>")),
        openers: Some(&["<tool_call>", "<seed:tool_call>", "<function="]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name after <function=; one <parameter=k>v</parameter> per argument; a bare <function=…> block is a call only in an output without <tool_call> markup (vLLM's qwen3_coder reads bare blocks only then), else malformed; values are raw text, so a </function> or </tool_call> inside a value ends the call there (as vLLM cuts) and the cut value is malformed",
    },
    Format {
        name: "glm",
        families: "GLM-4.5 / 4.6 / 4.7",
        engine: Engine::TaggedParameters,
        opener: "<tool_call>",
        separator: Some("<arg_key>"),
        closers: &["</arg_value>", "</tool_call>"],
        blocks: &[("<tool_call>", "</tool_call>")],
        parameter: Some(("<arg_key>KEY</arg_key><arg_value>", "</arg_value>")),
        openers: Some(&["<tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <tool_call>; <arg_key>k</arg_key><arg_value>v</arg_value> pairs; values are raw text (the template does not escape them), so a </tool_call> inside <arg_value> ends the call there, as vLLM's glm45/glm47 parsers cut at the first </tool_call>, and the cut value is malformed",
    },
    Format {
        name: "kimi",
        families: "Kimi K2",
        engine: Engine::NameThenJson,
        opener: "<|tool_calls_section_begin|><|tool_call_begin|>",
        separator: Some("<|tool_call_argument_begin|>"),
        closers: &["<|tool_call_end|>", "<|tool_calls_section_end|>"],
        blocks: &[
            ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
            ("<|tool_call_begin|>", "<|tool_call_end|>"),
        ],
        parameter: None,
        openers: Some(&["<|tool_calls_section_begin|>", "<|tool_call_begin|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "functions.NAME:INDEX, then the JSON arguments object",
    },
    Format {
        name: "deepseek",
        families: "DeepSeek V3 / R1 / V3.1",
        engine: Engine::NameThenJson,
        opener: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>",
        separator: Some("<｜tool▁sep｜>"),
        closers: &["```", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"],
        blocks: &[
            ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"),
            ("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"),
        ],
        parameter: None,
        openers: Some(&["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "V3: function<｜tool▁sep｜>NAME + fenced JSON; V3.1: NAME<｜tool▁sep｜>JSON",
    },
    Format {
        name: "harmony",
        families: "gpt-oss",
        engine: Engine::Scanner,
        opener: "<|channel|>commentary to=functions.NAME",
        separator: Some("<|message|>"),
        closers: &["<|call|>"],
        blocks: &[],
        parameter: None,
        // A call's span starts at its header's first token or at its
        // `to=functions.` recipient.
        openers: Some(&["<|start|>", "<|channel|>", "<|constrain|>", "to=functions."]),
        triggers: None,
        stop_token: Some(StopToken {
            token: "<|call|>",
            stripped_by: "vLLM and the OpenAI harmony renderer: a stop token of gpt-oss",
        }),
        payload: PayloadKind::JsonArguments,
        conventions: "recipient to=functions.NAME in the role header or after the channel",
    },
    Format {
        name: "deepseek_dsml",
        families: "DeepSeek V3.2 / V4",
        engine: Engine::TaggedParameters,
        opener: "<｜DSML｜function_calls><｜DSML｜invoke name=\"NAME\">",
        separator: Some("<｜DSML｜parameter name=\"KEY\" string=\"true|false\">"),
        closers: &[
            "</｜DSML｜parameter>",
            "</｜DSML｜invoke>",
            "</｜DSML｜function_calls>",
        ],
        blocks: &[("<｜DSML｜function_calls>", "</｜DSML｜function_calls>")],
        parameter: Some((
            "<｜DSML｜parameter name=\"KEY\" string=\"true\">",
            "</｜DSML｜parameter>",
        )),
        openers: Some(&["<｜DSML｜"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "string=\"false\" values are JSON",
    },
    Format {
        name: "minimax_m2",
        families: "MiniMax-M2",
        engine: Engine::TaggedParameters,
        opener: "<minimax:tool_call><invoke name=\"NAME\">",
        separator: Some("<parameter name=\"KEY\">"),
        closers: &["</parameter>", "</invoke>", "</minimax:tool_call>"],
        blocks: &[("<minimax:tool_call>", "</minimax:tool_call>")],
        parameter: Some(("<parameter name=\"KEY\">", "</parameter>")),
        openers: Some(&["<minimax:tool_call>", "<invoke "]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; values typed by the tool schema",
    },
    Format {
        name: "hunyuan",
        families: "Hunyuan / HY v3",
        engine: Engine::TaggedParameters,
        opener: "<tool_calls><tool_call>",
        separator: Some("<tool_sep>"),
        closers: &["</arg_value>", "</tool_call>", "</tool_calls>"],
        blocks: &[
            ("<tool_calls>", "</tool_calls>"),
            ("<tool_call>", "</tool_call>"),
        ],
        parameter: Some(("<arg_key>KEY</arg_key><arg_value>", "</arg_value>")),
        openers: Some(&["<tool_calls>", "<tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "NAME<tool_sep> then <arg_key>k</arg_key><arg_value>v</arg_value> pairs",
    },
    Format {
        name: "step3",
        families: "Step-3",
        engine: Engine::TaggedParameters,
        opener: "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"NAME\">",
        separator: Some("<steptml:parameter name=\"KEY\">"),
        closers: &[
            "</steptml:parameter>",
            "</steptml:invoke>",
            "<｜tool_call_end｜>",
            "<｜tool_calls_end｜>",
        ],
        blocks: &[
            ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
            ("<｜tool_call_begin｜>", "<｜tool_call_end｜>"),
        ],
        parameter: Some(("<steptml:parameter name=\"KEY\">", "</steptml:parameter>")),
        // The section tokens are held too: they are call markup, never
        // content to forward, though a candidate starts at `<steptml:`.
        openers: Some(&[
            "<steptml:",
            "<｜tool_calls_begin｜>",
            "<｜tool_call_begin｜>",
        ]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <steptml:invoke>; values typed by the tool schema",
    },
    Format {
        name: "minicpm5",
        families: "MiniCPM5",
        engine: Engine::TaggedParameters,
        opener: "<function name=\"NAME\">",
        separator: Some("<param name=\"KEY\">"),
        closers: &["</param>", "</function>"],
        blocks: &[("<function name=", "</function>")],
        parameter: Some(("<param name=\"KEY\">", "</param>")),
        openers: Some(&["<function"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "XML text (CDATA, entities); values typed by the tool schema",
    },
    Format {
        name: "xml_call",
        families: "XML-prompted models",
        engine: Engine::Scanner,
        opener: "<tool_call name=\"NAME\"><args> (or <tool:call …><tool:args>)",
        separator: None,
        closers: &["</city>", "</args>", "</tool_call>"],
        blocks: &[
            ("<tool_call name=", "</tool_call>"),
            ("<tool:call", "</tool:call>"),
        ],
        parameter: Some(("<KEY>", "</KEY>")),
        openers: Some(&["<tool_call", "<tool:call"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "one element per argument inside <args>",
    },
    Format {
        name: "atem",
        families: "Muse Glimmer (Muse Spark)",
        engine: Engine::TaggedParameters,
        opener: "<atem:function_calls><atem:invoke name=\"NAME\">",
        separator: Some("<atem:parameter name=\"KEY\">"),
        closers: &[
            "</atem:parameter>",
            "</atem:invoke>",
            "</atem:function_calls>",
        ],
        blocks: &[("<atem:function_calls>", "</atem:function_calls>")],
        parameter: Some(("<atem:parameter name=\"KEY\">", "</atem:parameter>")),
        openers: Some(&["<atem:function_calls>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <atem:invoke> (may be namespaced); strings as is, lists and objects as JSON, typed by the tool schema",
    },
    Format {
        name: "longcat_xml",
        families: "LongCat Flash Lite and later (XML arguments)",
        engine: Engine::TaggedParameters,
        opener: "<longcat_tool_call>",
        separator: Some("<longcat_arg_key>"),
        closers: &["</longcat_arg_value>", "</longcat_tool_call>"],
        blocks: &[("<longcat_tool_call>", "</longcat_tool_call>")],
        parameter: Some((
            "<longcat_arg_key>KEY</longcat_arg_key><longcat_arg_value>",
            "</longcat_arg_value>",
        )),
        openers: Some(&["<longcat_tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <longcat_tool_call>; <longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value> pairs",
    },
    Format {
        name: "mistral",
        families: "Mistral / Mixtral / Magistral / Devstral",
        engine: Engine::NameThenJson,
        opener: "[TOOL_CALLS]",
        separator: Some("[ARGS] / [CALL_ID]"),
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["[TOOL_CALLS]"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "NAME[ARGS]{…}, NAME[CALL_ID]id[ARGS]{…}, NAME{…}, or a JSON call list",
    },
    Format {
        name: "llama3",
        families: "Llama 3.1 / 3.2 / 3.3",
        engine: Engine::Scanner,
        opener: "<|python_tag|> (or a bare object)",
        separator: Some(";"),
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<|python_tag|>", "{"]),
        // A call starts after the tag, at a `{` whose first key is `"name"`,
        // or at a `{` that begins the text (the extractor's `Starts`).
        triggers: Some(Triggers {
            tokens: &["<|python_tag|>", "\"name\""],
            leading: Some(b'{'),
        }),
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9); prose before, between (after `;`) and after the calls is content, as vLLM's llama3_json and SGLang's llama3 detector read it (they take the JSON objects and ignore the text around them)",
    },
    Format {
        name: "granite",
        families: "Granite 3.x",
        engine: Engine::JsonBlock,
        opener: "<|tool_call|>",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<|tool_call|>", "<tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "granite_fc",
        families: "Granite-20B-FC",
        engine: Engine::JsonBlock,
        opener: "<function_call>",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<function_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "functools",
        families: "Phi-4-mini, FireFunction v2",
        engine: Engine::JsonBlock,
        opener: "functools",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["functools"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "internlm",
        families: "InternLM2 / 2.5",
        engine: Engine::JsonBlock,
        opener: "<|action_start|><|plugin|>",
        separator: None,
        closers: &["<|action_end|>"],
        blocks: &[("<|action_start|>", "<|action_end|>")],
        parameter: None,
        openers: Some(&["<|action_start|>"]),
        triggers: None,
        stop_token: Some(StopToken {
            token: "<|action_end|>",
            stripped_by: "lmdeploy: a stop word of the InternLM2 chat template",
        }),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "tool_calls_tag",
        families: "Jamba, Hunyuan-A13B, MiniMax-Text-01, Apriel",
        engine: Engine::JsonBlock,
        opener: "<tool_calls>",
        separator: None,
        closers: &["</tool_calls>"],
        blocks: &[("<tool_calls>", "</tool_calls>")],
        parameter: None,
        openers: Some(&["<tool_calls>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "nemotron",
        families: "Nemotron Nano v2",
        engine: Engine::JsonBlock,
        opener: "<TOOLCALL>",
        separator: None,
        closers: &["</TOOLCALL>"],
        blocks: &[("<TOOLCALL>", "</TOOLCALL>")],
        parameter: None,
        openers: Some(&["<TOOLCALL>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "longcat",
        families: "Meituan LongCat",
        engine: Engine::JsonBlock,
        opener: "<longcat_tool_call>",
        separator: None,
        closers: &["</longcat_tool_call>"],
        blocks: &[("<longcat_tool_call>", "</longcat_tool_call>")],
        parameter: None,
        openers: Some(&["<longcat_tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "gigachat",
        families: "GigaChat 3 / 3.1",
        engine: Engine::JsonBlock,
        opener: "function call<|role_sep|> / <|function_call|>",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        // `<|message_sep|>` opens the function-call message: held as markup.
        openers: Some(&["<|function_call|>", "function call", "<|message_sep|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "apertus",
        families: "Swiss AI Apertus",
        engine: Engine::JsonBlock,
        opener: "<|tools_prefix|>",
        separator: None,
        closers: &["<|tools_suffix|>"],
        blocks: &[("<|tools_prefix|>", "<|tools_suffix|>")],
        parameter: None,
        openers: Some(&["<|tools_prefix|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "[{\"NAME\": {arguments}}, …]: the tool name is the key",
    },
    Format {
        name: "command_r",
        families: "Command R7B, Command R+, Command A",
        engine: Engine::JsonBlock,
        opener: "<|START_ACTION|> (R+: Action: + ```json)",
        separator: None,
        closers: &["<|END_ACTION|>"],
        blocks: &[("<|START_ACTION|>", "<|END_ACTION|>")],
        parameter: None,
        openers: Some(&["<|START_ACTION|>", "Action:"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
    Format {
        name: "functionary",
        families: "Functionary v3.1 / v3.2",
        engine: Engine::NameThenJson,
        opener: "<function=NAME> (v3.2: >>>NAME)",
        separator: None,
        closers: &["</function>"],
        blocks: &[("<function=", "</function>")],
        parameter: None,
        // Plus v3.2's first segment at the start of the output, which has no
        // token: see `openers::StartRule`.
        openers: Some(&["<function=", ">>>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "name in the tag; body is the JSON arguments object",
    },
    Format {
        name: "gemma",
        families: "Gemma 4, FunctionGemma",
        engine: Engine::Scanner,
        opener: "<|tool_call>call:NAME",
        separator: None,
        closers: &["<tool_call|>"],
        blocks: &[("<|tool_call>", "<tool_call|>")],
        parameter: None,
        openers: Some(&["<|tool_call>", "<start_function_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::OwnLiterals,
        conventions: "{key:<|\"|>text<|\"|>, n:1}; FunctionGemma quotes with <escape>",
    },
    Format {
        name: "llama4_pythonic",
        families: "Llama 4",
        engine: Engine::Pythonic,
        opener: "<|python_start|>",
        separator: Some(","),
        closers: &["<|python_end|>"],
        blocks: &[("<|python_start|>", "<|python_end|>")],
        parameter: None,
        openers: Some(&["<|python_start|>", "["]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1), g(b='x')]",
    },
    Format {
        name: "lfm2",
        families: "Liquid LFM2",
        engine: Engine::Pythonic,
        opener: "<|tool_call_start|>",
        separator: Some(","),
        closers: &["<|tool_call_end|>"],
        blocks: &[("<|tool_call_start|>", "<|tool_call_end|>")],
        parameter: None,
        openers: Some(&["<|tool_call_start|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1)] or a JSON call list",
    },
    Format {
        name: "olmo",
        families: "OLMo 3",
        engine: Engine::Pythonic,
        opener: "<function_calls>",
        separator: Some("a line break"),
        closers: &["</function_calls>"],
        blocks: &[("<function_calls>", "</function_calls>")],
        parameter: None,
        openers: Some(&["<function_calls>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "one f(a=1) per line",
    },
    // Issue 27 item 6 (formats-b): families added as engine configurations.
    Format {
        name: "xlam",
        families: "Salesforce xLAM (Llama-xLAM-2, Qwen-xLAM, xLAM-1B/3B)",
        engine: Engine::JsonBlock,
        opener: "[ at the start of the output (or [TOOL_CALLS], <tool_call>, ```json)",
        separator: None,
        closers: &[],
        blocks: &[("<tool_call>", "</tool_call>"), ("```json", "```")],
        parameter: None,
        openers: Some(&["[", "<tool_call>", "```json"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: "name from name/tool/tool_name, arguments from arguments/parameters/params (SPEC §9); a bare list counts only at the start of the output or of a reasoning span, and only as [{…; `[]` is no call",
    },
    Format {
        name: "sarashina",
        families: "SB Intuitions Sarashina",
        engine: Engine::JsonBlock,
        opener: "<|tool_calls|> (often stripped: then [ at the start of the output)",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<|tool_calls|>", "["]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[{'name': NAME, 'arguments': {…}}, …] as Python literals (SPEC §9 keys); without the marker only a [ followed by { at the start of the output or of a reasoning span",
    },
    Format {
        name: "inkling",
        families: "Inkling",
        engine: Engine::JsonBlock,
        opener: "<|message_model|>NAME<|content_invoke_tool_json|>",
        separator: None,
        closers: &["<|end_message|>"],
        blocks: &[("<|content_invoke_tool_json|>", "<|end_message|>")],
        parameter: None,
        // The header names the tool: held as call markup.
        openers: Some(&["<|content_invoke_tool_json|>", "<|message_model|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: "{\"name\": NAME, \"args\": {…}}: args is the arguments key (or the SPEC §9 keys); a <|message_model|> header naming another tool than the payload is malformed",
    },
    Format {
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
    Format {
        name: "native",
        families: "any OpenAI-compatible server's tool_calls",
        engine: Engine::Scanner,
        opener: "tool_calls",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&[]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "function.name; function.arguments a JSON string (or object)",
    },
];

/// A row of the table as owned data: a built-in row ([`Format::to_row`]) or
/// a user-declared format's ([`crate::declared`]). What `toolgate formats`
/// and the cross-format test read, whichever kind of mode it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The mode name.
    pub name: String,
    /// The model families that emit it.
    pub families: String,
    /// The engine that reads it.
    pub engine: Engine,
    /// The token(s) that open a call or a call section.
    pub opener: String,
    /// The separator between name and arguments (or after the name), if any.
    pub separator: Option<String>,
    /// The closing markup that ends the example, innermost first.
    pub closers: Vec<String>,
    /// The (opener, closer) pairs the missing-closer rule checks.
    pub blocks: Vec<(String, String)>,
    /// Tagged parameters: the markup before a value and the value's closer
    /// (`KEY` stands for the parameter name).
    pub parameter: Option<(String, String)>,
    /// The closer a serving stack may strip: (token, the stack(s) that strip it).
    pub stop_token: Option<(String, String)>,
    /// What the payload is.
    pub payload: PayloadKind,
    /// How the tool name and the arguments are spelled.
    pub conventions: String,
}

impl Format {
    /// This row as owned data.
    pub fn to_row(&self) -> Row {
        let own = |s: &&str| s.to_string();
        Row {
            name: self.name.into(),
            families: self.families.into(),
            engine: self.engine,
            opener: self.opener.into(),
            separator: self.separator.map(str::to_string),
            closers: self.closers.iter().map(own).collect(),
            blocks: self
                .blocks
                .iter()
                .map(|(o, c)| (o.to_string(), c.to_string()))
                .collect(),
            parameter: self.parameter.map(|(o, c)| (o.into(), c.into())),
            stop_token: self
                .stop_token
                .map(|t| (t.token.into(), t.stripped_by.into())),
            payload: self.payload,
            conventions: self.conventions.into(),
        }
    }
}

/// Where each of `closers` (innermost first) starts in `example`: the
/// closers must be the example's trailing run of closing markup, separated
/// by whitespace only. Fewer positions than closers means they are not.
pub fn closer_cuts_of(example: &str, closers: &[impl AsRef<str>]) -> Vec<usize> {
    let mut end = example.trim_end().len();
    let mut cuts = Vec::new();
    for c in closers.iter().rev() {
        match example[..end].strip_suffix(c.as_ref()) {
            Some(rest) => {
                cuts.push(rest.len());
                end = rest.trim_end().len();
            }
            None => break,
        }
    }
    cuts.reverse();
    cuts
}

/// Where each closer of `format` starts in `example`, innermost first: the
/// closers must be the example's trailing run of closing markup, separated
/// by whitespace only. Fewer positions than closers means they are not.
/// Cutting `example` at position `k` leaves closers `k..` missing.
pub fn closer_cuts(example: &str, format: &Format) -> Vec<usize> {
    closer_cuts_of(example, format.closers)
}

/// The row of mode `name`.
pub fn row(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_mode_has_one_row_in_replay_order() {
        let modes: Vec<String> = crate::builtin()
            .iter()
            .map(|e| e.name().to_string())
            .collect();
        let rows: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        assert_eq!(modes, rows);
    }

    #[test]
    fn every_closer_run_ends_its_example_and_stop_tokens_are_last() {
        for f in FORMATS {
            let Some(e) = crate::by_name(f.name) else {
                panic!("no extractor for row {}", f.name);
            };
            let cuts = closer_cuts(e.example(), f);
            assert_eq!(cuts.len(), f.closers.len(), "{}: closers not found", f.name);
            if let Some(s) = f.stop_token {
                assert_eq!(f.closers.last(), Some(&s.token), "{}", f.name);
            }
        }
    }

    #[test]
    fn raw_text_stays_within_each_candidates_span_in_every_row() {
        // Issue 9 item 7: a failed candidate's raw text is its own span, so
        // N cut-off calls cost O(N) bytes, not O(N²). Each row's example cut
        // before its first closer (or its last byte), repeated.
        for f in FORMATS {
            let e = crate::by_name(f.name).unwrap_or_else(|| panic!("{}", f.name));
            let ex = e.example();
            let cut = closer_cuts(ex, f).first().copied().unwrap_or(ex.len() - 1);
            let mut half = ex.len() / 2;
            while !ex.is_char_boundary(half) {
                half += 1;
            }
            for unit in [&ex[..cut], &ex[..half]] {
                let out = unit.repeat(500);
                for s in [crate::Strictness::Strict, crate::Strictness::Lenient] {
                    let found = e.extract(&crate::Input::new(&out), s);
                    let raw: usize = found.iter().map(|c| c.raw.len()).sum();
                    assert!(
                        raw <= 2 * out.len(),
                        "{}: {raw} raw bytes for a {}-byte output ({} candidates)",
                        f.name,
                        out.len(),
                        found.len()
                    );
                }
            }
        }
    }
}
