//! Berkeley Function Calling Leaderboard (BFCL) result and score files.
//!
//! # Wire format
//!
//! BFCL writes JSON lines (whatever the file's extension):
//!
//! - result files, one line per test: `{"id": "simple_0", "result": …}`.
//!   A prompt-mode `result` is the model's raw text (a string): it is the
//!   transcript's `output`, parsed by every mode. An FC-mode `result` is the
//!   server's parsed calls, `[{"func": "{\"a\": 1}"}]` or `[{"func": {"a":
//!   1}}]`: they become native calls (`native` only; the raw text is gone).
//!   When the calls show that the FC handler sent dotted function names
//!   with `_` for `.` (as BFCL's handlers do for APIs that refuse a `.`),
//!   the tools and the expectation use those names too, as BFCL's checker
//!   does (`import.underscore_to_dot`, [`underscore_to_dot`]).
//!   Tools and the expectation come from the question file (`{"id",
//!   "question", "function"}`) and the possible-answer file (`{"id",
//!   "ground_truth"}`) given alongside or found beside it.
//! - score files: a summary line (`accuracy`, `correct_count`,
//!   `total_count`, skipped), then one line per failed test with `prompt`
//!   (`function`), `model_result_raw` and `possible_answer`.
//!
//! BFCL's parameter types (`dict`, `float`, `tuple`, `any`, Java/JavaScript
//! names) are normalized to JSON Schema. `possible_answer`/`ground_truth`
//! (`[{"func": {"param": [accepted values…]}}]`, `""` among the values
//! meaning optional) becomes `expect`: each parameter constrained to the
//! values BFCL's checker accepts, compared as it compares them — strings
//! after its standardization (case, spaces and `,./-_*^` ignored), a dict
//! key by key against each key's own accepted values (a key it does not
//! name is not allowed, as BFCL fails an unexpected parameter or dict key;
//! one accepted only as `""` must be absent or standardize to `""`, which
//! an optional one accepts too), a list item by item; where
//! that cannot be expressed, no constraint rather than a false blame.
//! BFCL's type checks that JSON Schema cannot tell apart (`5.0` for an
//! integer, `[1, 2]` for a list of floats: JSON numbers compare by value)
//! are not made.
//! An `irrelevance` test expects no call.
//! Multi-turn results (a list of turns) are not supported and are reported,
//! and so is a `result` that is BFCL's marker of a failed request (`"Error
//! during inference: …"`): a run error is never the model's answer.

use super::{Companions, Converted, Kind, import_info, native_call, str_of, tool_def};
use serde_json::{Map, Value, json};

const MAX_DEPTH: usize = 32;

/// How BFCL's generation writes a request that failed, as the `result`.
const INFERENCE_ERROR: &str = "Error during inference:";

/// BFCL's type names as JSON Schema types (`None`: no constraint).
fn json_type(t: &str) -> Option<&'static str> {
    Some(match t.to_ascii_lowercase().as_str() {
        "dict" | "object" | "hashmap" | "hashtable" | "map" => "object",
        "float" | "double" | "number" => "number",
        "integer" | "int" | "long" | "short" | "byte" => "integer",
        "array" | "tuple" | "list" | "arraylist" | "queue" | "stack" | "set" => "array",
        "string" | "str" | "char" | "character" => "string",
        "boolean" | "bool" => "boolean",
        _ => return None,
    })
}

/// A BFCL parameter schema made JSON Schema.
pub(crate) fn normalize(schema: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return json!({});
    }
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in obj {
        match k.as_str() {
            "type" => {
                if let Some(t) = v.as_str().and_then(json_type) {
                    out.insert(k.clone(), json!(t));
                }
            }
            "properties" => {
                let props: Map<String, Value> = v
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, s)| (name.clone(), normalize(s, depth + 1)))
                    .collect();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" => {
                out.insert(k.clone(), normalize(v, depth + 1));
            }
            // BFCL descriptions of defaults are prose; `optional` is not JSON Schema.
            "optional" => {}
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// The function definitions of a question's `function` (a list, or one).
fn functions_of(functions: &Value) -> Vec<&Value> {
    match functions {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => vec![functions],
        _ => Vec::new(),
    }
}

/// A function name as the model was given it: with every `.` as `_` when
/// the FC handler sent the names so ([`underscore_to_dot`]).
fn given_name(name: &str, underscored: bool) -> String {
    if underscored {
        name.replace('.', "_")
    } else {
        name.to_string()
    }
}

fn tools_of(functions: &Value, underscored: bool) -> Vec<Value> {
    functions_of(functions)
        .into_iter()
        .filter_map(|f| {
            let name = given_name(str_of(f, "name")?, underscored);
            let params = f.get("parameters").map(|p| normalize(p, 0));
            Some(tool_def(&name, f.get("description"), params.as_ref()))
        })
        .collect()
}

/// Whether an FC-mode result's functions were given to the model with `.`
/// sent as `_`, as its calls show.
///
/// Function-calling APIs (OpenAI, Anthropic, Mistral, Gemini, …) refuse a
/// `.` in a function name, so BFCL's FC handlers for them send
/// `math.factorial` as `math_factorial`, and its AST checker compares the
/// model's call with the expected name after the same rewrite (every `.`
/// → `_`, `convert_func_name`). It decides by each model's configuration
/// (`underscore_to_dot`), which the result file does not record, and which
/// "FC" in the model name does not tell: FC models served locally
/// (`Qwen/Qwen3-4B-FC`, `meta-llama/Llama-3.1-8B-Instruct-FC`) are given the
/// dotted names. So the calls decide: the names were underscored when a
/// call names a dotted function in its underscored spelling (one that is
/// not itself a function of the question) and no call names a dotted
/// function as written. Every other answer reads the same either way,
/// except a call to the right function in the other handler's spelling,
/// which BFCL fails and this reads as right.
fn underscore_to_dot(functions: Option<&Value>, result: &[Value]) -> bool {
    let names: Vec<&str> = functions
        .map(functions_of)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| str_of(f, "name"))
        .collect();
    let called = || {
        result
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|m| m.keys())
            .map(String::as_str)
    };
    let dotted = || names.iter().filter(|n| n.contains('.'));
    let as_written = called().any(|c| c.contains('.') && names.contains(&c));
    let underscored =
        called().any(|c| !names.contains(&c) && dotted().any(|n| given_name(n, true) == c));
    underscored && !as_written
}

/// `possible_answer` → `expect`: per call, each parameter constrained to
/// what BFCL's AST checker accepts for it ([`accepted_any`]), required
/// unless `""` is among its accepted values.
fn expect_of(answer: &Value, underscored: bool) -> Option<Value> {
    let calls = answer.as_array()?;
    let mut out = Vec::new();
    for call in calls {
        let (name, params) = call.as_object()?.iter().next()?;
        let name = given_name(name, underscored);
        out.push(json!({"name": name, "arguments": accepted_dict(params.as_object()?, 0)}));
    }
    Some(json!({"calls": out}))
}

/// A dict of accepted values (`{"key": [accepted…]}`, `""` among them
/// meaning optional) as an object schema: each key constrained by its own
/// accepted values, as BFCL's checker compares a dict key by key.
///
/// A key the accepted dict does not name is not allowed, even when the
/// tool's schema declares it: BFCL's checker fails an argument absent from
/// the possible answer ("Unexpected parameter") and a dict key absent from
/// the accepted dict (`value_error:dict_key`). A key whose only accepted
/// value is `""` (optional, no value given) must be absent, or a string
/// that BFCL standardizes to `""` (`""`, `" "`): any other value is not
/// among the accepted ones. Where `""` is among other accepted values, such
/// a string is accepted too, as BFCL standardizes every accepted value,
/// `""` included.
fn accepted_dict(params: &Map<String, Value>, depth: usize) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (param, accepted) in params {
        let values: Vec<Value> = match accepted {
            Value::Array(a) => a.iter().filter(|v| *v != &json!("")).cloned().collect(),
            other => vec![other.clone()],
        };
        let optional = accepted.as_array().is_some_and(|a| a.contains(&json!("")));
        if !optional {
            required.push(json!(param));
        }
        // `true`: named, so allowed, but its values not expressible.
        let schema = match (optional, accepted_any(&values, depth)) {
            (true, _) if values.is_empty() => standardized_empty(),
            (true, Some(schema)) => json!({"anyOf": [schema, standardized_empty()]}),
            (_, schema) => schema.unwrap_or(json!(true)),
        };
        properties.insert(param.clone(), schema);
    }
    json!({"properties": Value::Object(properties), "required": required,
        "additionalProperties": false})
}

/// The schema of one of several accepted values, or `None` (no constraint)
/// when one of them cannot be expressed: a constraint stricter than BFCL's
/// checker would blame an answer BFCL accepts. Numbers, booleans and null
/// stay an `enum` of the values.
fn accepted_any(values: &[Value], depth: usize) -> Option<Value> {
    if values.is_empty() {
        return None;
    }
    if values
        .iter()
        .all(|v| !(v.is_string() || v.is_array() || v.is_object()))
    {
        return Some(json!({"enum": values}));
    }
    let mut alternatives = values
        .iter()
        .map(|v| accepted_one(v, depth))
        .collect::<Option<Vec<Value>>>()?;
    if alternatives.len() == 1 {
        alternatives.pop()
    } else {
        Some(json!({"anyOf": alternatives}))
    }
}

/// The schema of one accepted value, as BFCL's checker compares it: a
/// string after its `standardize_string` ([`standardized_pattern`]), a
/// dict key by key ([`accepted_dict`]), a list item by item in order, any
/// other value as itself.
fn accepted_one(value: &Value, depth: usize) -> Option<Value> {
    if depth >= MAX_DEPTH {
        return None;
    }
    match value {
        Value::String(s) => {
            standardized_pattern(s).map(|p| json!({"type": "string", "pattern": p}))
        }
        Value::Object(m) => {
            let mut schema = accepted_dict(m, depth + 1);
            if let Value::Object(o) = &mut schema {
                o.insert("type".into(), json!("object"));
            }
            Some(schema)
        }
        Value::Array(items) => {
            let prefix = items
                .iter()
                .map(|i| accepted_one(i, depth + 1))
                .collect::<Option<Vec<Value>>>()?;
            Some(json!({"type": "array", "prefixItems": prefix,
                "minItems": items.len(), "maxItems": items.len()}))
        }
        other => Some(json!({"const": other})),
    }
}

/// Characters BFCL's `standardize_string` removes before comparing.
const STANDARDIZE_REMOVES: &str = " ,./-_*^";
/// Any run of [`STANDARDIZE_REMOVES`], as a pattern.
const STANDARDIZE_GAP: &str = r"[ ,./\-_*^]*";

/// The strings BFCL's checker takes for the accepted `""`: those its
/// `standardize_string` empties (`""`, `" "`, `"-"`).
fn standardized_empty() -> Value {
    json!({"type": "string", "pattern": format!("^{STANDARDIZE_GAP}$")})
}

/// An anchored pattern matching exactly the strings that BFCL's checker
/// takes for `accepted`: its `standardize_string` removes ` ,./-_*^`,
/// lowercases, and reads `'` as `"`; equal standardized strings match. So
/// `new york` matches `New York`, as BFCL scores it. `None` when a
/// character's case does not map one to one (`ß`, `İ`): that comparison is
/// not emulated, and no constraint is better than a false blame.
fn standardized_pattern(accepted: &str) -> Option<String> {
    let gap = STANDARDIZE_GAP;
    let mut p = String::from("^");
    p.push_str(gap);
    for c in accepted.chars() {
        if STANDARDIZE_REMOVES.contains(c) {
            continue;
        }
        if c == '\'' || c == '"' {
            p.push_str("[\"']");
        } else if c.is_alphabetic() {
            let mut lower = c.to_lowercase();
            let l = lower.next()?;
            let mut upper = l.to_uppercase();
            let u = upper.next()?;
            if lower.next().is_some() || upper.next().is_some() || u.to_lowercase().ne([l]) {
                return None;
            }
            p.push('[');
            p.push(l);
            if u != l {
                p.push(u);
            }
            p.push(']');
        } else {
            if "\\^$.|?*+()[]{}/-".contains(c) {
                p.push('\\');
            }
            p.push(c);
        }
        p.push_str(gap);
    }
    p.push('$');
    Some(p)
}

/// FC-mode results: `[{"func": "{…}"}]` or `[{"func": {…}}]` as native calls.
fn native_calls(result: &[Value]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for (i, item) in result.iter().enumerate() {
        match item {
            Value::Object(m) if m.len() == 1 => {
                for (name, args) in m {
                    out.push(native_call(None, name, args));
                }
            }
            Value::Array(_) => {
                return Err("multi-turn BFCL results (a list of turns) are not supported".into());
            }
            _ => {
                return Err(format!(
                    "`result[{i}]` is not a `{{function: arguments}}` object"
                ));
            }
        }
    }
    Ok(out)
}

/// One line of a result or score file.
pub(crate) fn document(obj: &Map<String, Value>, companions: &Companions) -> Converted {
    if obj.contains_key("accuracy") && !obj.contains_key("id") {
        return Ok(Vec::new()); // the score file's summary line
    }
    let id = obj
        .get("id")
        .and_then(Value::as_str)
        .ok_or("BFCL line has no `id`")?;
    if companions.bfcl_ambiguous.contains(id) {
        return Err(format!(
            "BFCL id `{id}` names different questions or answers in the data files given: which one this line answers is a guess; import it with one version of the data"
        ));
    }
    let score = obj.contains_key("model_result_raw") || obj.contains_key("prompt");
    let result = obj
        .get("model_result_raw")
        .or_else(|| obj.get("result"))
        .or_else(|| obj.get("model_result"))
        .ok_or_else(|| format!("BFCL line `{id}` has no `result`"))?;
    let functions = obj
        .get("prompt")
        .and_then(|p| p.get("function"))
        .or_else(|| {
            companions
                .bfcl_questions
                .get(id)
                .and_then(|q| q.get("function"))
        });
    let answer = obj.get("possible_answer").or_else(|| {
        companions
            .bfcl_answers
            .get(id)
            .and_then(|a| a.get("ground_truth"))
    });
    let mut import = import_info(Kind::Bfcl);
    let mut rec = Map::new();
    rec.insert("id".into(), json!(id));
    if let Some(m) = obj.get("model_name").and_then(Value::as_str) {
        rec.insert("model".into(), json!(m));
    }
    let category = obj
        .get("test_category")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            id.rsplit_once('_')
                .map(|(c, _)| c)
                .unwrap_or(id)
                .to_string()
        });
    rec.insert("task".into(), json!(id));
    import.insert("category".into(), json!(category));
    let underscored = match result {
        Value::Array(items) => underscore_to_dot(functions, items),
        _ => false,
    };
    if underscored {
        import.insert("underscore_to_dot".into(), json!(true));
    }
    match functions {
        Some(f) => {
            rec.insert("tools".into(), Value::Array(tools_of(f, underscored)));
        }
        // No `tools` key: the tool list is unknown (SPEC §4).
        None => {
            import.insert(
                "note".into(),
                json!(
                    "no question file with this id: tools unknown (pass the BFCL question file too)"
                ),
            );
        }
    }
    match result {
        // BFCL writes a failed request (timeout, API error) as this text in
        // place of the answer: the run's error, never the model's output.
        Value::String(text) if text.starts_with(INFERENCE_ERROR) => {
            let text: String = text.chars().take(500).collect();
            return Err(format!(
                "BFCL line `{id}`: the result is BFCL's inference error, not the model's answer: {text}"
            ));
        }
        Value::String(text) => {
            rec.insert("output".into(), json!(text));
            import.insert("mode".into(), json!("prompt"));
        }
        Value::Array(items) => {
            let calls = native_calls(items)?;
            rec.insert("output".into(), json!(""));
            rec.insert("tool_calls".into(), Value::Array(calls));
            import.insert("mode".into(), json!("fc"));
            import.insert("raw_text".into(), json!(false));
            import.insert(
                "note".into(),
                json!(
                    "an FC-mode result is the server's parsed calls: only the native mode judges it"
                ),
            );
        }
        _ => {
            return Err(format!(
                "BFCL line `{id}`: `result` is neither text nor a list of calls"
            ));
        }
    }
    if category.contains("irrelevance") {
        rec.insert("expect".into(), json!({"calls": []}));
    } else if let Some(e) = answer.and_then(|a| expect_of(a, underscored)) {
        rec.insert("expect".into(), e);
    }
    if score {
        for key in ["valid", "error_type"] {
            if let Some(v) = obj.get(key) {
                import.insert(format!("bfcl_{key}"), v.clone());
            }
        }
    }
    rec.insert(super::IMPORT_MEMBER.into(), Value::Object(import));
    Ok(vec![(id.to_string(), rec)])
}
