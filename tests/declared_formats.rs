//! Declared formats end to end (issue 8 item 4): `[[format]]` tables in
//! `toolgate.toml` and `--formats FILE` become modes that `formats`,
//! `profiles`, `label`, `matrix` and `parse` treat like built-in ones, and a
//! bad declaration is exit 2 naming the file, the format and the field.
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use support::{stderr, stdout, toolgate_stdin as toolgate};

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                 "required": ["city"], "additionalProperties": false}}}]"#;

const ANGLE: &str = r#"
[[format]]
name = "angle_call"
engine = "json_block"
opener = "<<call>>"
closer = "<</call>>"
example = '<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}<</call>>'
"#;

const BRACKET: &str = r#"
[[format]]
name = "bracket_args"
engine = "name_then_json"
opener = "[CALL]"
separator = "[ARGS]"
closer = "[/CALL]"
example = '[CALL]get_weather[ARGS]{"city": "Antwerp"}[/CALL]'
"#;

fn transcript(dir: &Path, id: &str, output: &str, finish_reason: &str) {
    let t = json!({
        "id": id,
        "model": "acme-7b",
        "task": "weather",
        "tools": serde_json::from_str::<Value>(TOOLS).unwrap(),
        "output": output,
        "finish_reason": finish_reason,
    });
    fs::create_dir_all(dir.join("t")).unwrap();
    fs::write(dir.join("t").join(format!("{id}.json")), t.to_string()).unwrap();
}

fn parse(dir: &Path, args: &[&str], output: &str) -> Value {
    let mut all = vec!["parse", "--tools", "tools.json"];
    all.extend_from_slice(args);
    all.push("-");
    let out = toolgate(dir, &all, Some(output));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn declared_formats_are_modes_and_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("tools.json"), TOOLS).unwrap();
    // toolgate.toml: other settings beside the declaration are left alone.
    fs::write(
        d.join("toolgate.toml"),
        format!("[inspector]\ntheme = \"dark\"\n{ANGLE}"),
    )
    .unwrap();
    fs::write(d.join("f.toml"), BRACKET).unwrap();
    let call = r#"<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}"#;
    transcript(d, "whole", &format!("{call}<</call>>"), "stop");
    transcript(d, "cut", call, "stop");
    transcript(
        d,
        "encoded",
        r#"[CALL]get_weather[ARGS]"{\"city\": \"Antwerp\"}"[/CALL]"#,
        "stop",
    );

    // `formats` lists both with their rows.
    let out = toolgate(
        d,
        &["formats", "--format", "json", "--formats", "f.toml"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let modes: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let modes = modes.as_array().unwrap();
    let row = |name: &str| modes.iter().find(|m| m["mode"] == name).unwrap().clone();
    assert_eq!(row("angle_call")["engine"], "json_block");
    assert_eq!(row("angle_call")["closers"], json!(["<</call>>"]));
    assert_eq!(row("bracket_args")["engine"], "name_then_json");
    assert_eq!(row("bracket_args")["payload"], "json_arguments");
    // … and `profiles` lists them as one-mode profiles.
    let out = toolgate(d, &["profiles", "--formats", "f.toml"], None);
    assert!(stdout(&out).lines().any(|l| l.starts_with("bracket_args ")));

    // `label` replays them like every mode.
    let out = toolgate(
        d,
        &["label", "--format", "jsonl", "--formats", "f.toml", "t"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let labels: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |id: &str, mode: &str| {
        labels.iter().find(|r| r["id"] == id).unwrap()["labels"][mode].clone()
    };
    assert_eq!(of("whole", "angle_call"), "pass");
    assert_eq!(of("cut", "angle_call"), "truncation");
    assert_eq!(of("encoded", "bracket_args"), "escaping_error");

    // A declared format can be a profile's primary mode.
    let v = parse(d, &["--profile", "angle_call"], &format!("{call}<</call>>"));
    assert_eq!(
        (v["decision"].clone(), v["label"].clone()),
        (json!("execute"), json!("pass"))
    );
    let v = parse(d, &["--profile", "angle_call"], call);
    assert_eq!(
        (v["decision"].clone(), v["label"].clone()),
        (json!("reject"), json!("truncation"))
    );
    let v = parse(
        d,
        &["--formats", "f.toml", "--profile", "bracket_args"],
        r#"[CALL]get_weather[ARGS]"{\"city\": \"Antwerp\"}"[/CALL]"#,
    );
    assert_eq!(v["label"], "escaping_error");
    fs::write(
        d.join("p.toml"),
        "name = \"acme\"\nprimary = \"bracket_args\"\nfallbacks = [\"angle_call\"]\n",
    )
    .unwrap();
    // As a fallback it obeys the fallback gates (explicit intent) like any mode.
    let args = ["--formats", "f.toml", "--profile", "p.toml"];
    let v = parse(d, &args, &format!("{call}<</call>>"));
    assert_eq!(
        (v["decision"].clone(), v["gate"].clone()),
        (json!("reject"), json!("intent"))
    );
    let v = parse(d, &args, &format!("CALL_TOOL\n{call}<</call>>"));
    assert_eq!(v["decision"], "execute", "{v}");
    assert_eq!(v["telemetry"]["fallback_used"], true);

    // `matrix --by mode` counts them too.
    let out = toolgate(
        d,
        &[
            "matrix",
            "--by",
            "mode",
            "--format",
            "json",
            "--formats",
            "f.toml",
            "t",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\"bracket_args\""),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_bad_declaration_is_exit_2_naming_the_file_the_format_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            ANGLE.replace("json_block", "regex"),
            "formats file bad.toml: format `angle_call`: field `engine`: unknown engine `regex`",
        ),
        (
            ANGLE.replace("opener = \"<<call>>\"", "opener = \"\""),
            "formats file bad.toml: format `angle_call`: field `opener`: must not be empty",
        ),
        (
            ANGLE.replace("angle_call", "kimi"),
            "formats file bad.toml: format `kimi`: field `name`: `kimi` is a built-in mode's name",
        ),
        (
            ANGLE.replace("<</call>>'", "'"),
            "formats file bad.toml: format `angle_call`: field `example`: the declared format does not read its own example as a call (`pass`): it reads it as `truncated`",
        ),
        (
            // Probe 44b: `--stream` forwarded the call as text.
            ANGLE.replace("closer =", "openers = [\"ZZZ\"]\ncloser ="),
            "formats file bad.toml: format `angle_call`: field `openers`: a call can begin at `<<call>>`, which no opener in the list begins",
        ),
    ];
    for (file, want) in cases {
        fs::write(d.join("bad.toml"), file).unwrap();
        for cmd in ["formats", "label"] {
            let out = toolgate(d, &[cmd, "--formats", "bad.toml"], None);
            assert_eq!(out.status.code(), Some(2), "{cmd}: {}", stderr(&out));
            assert!(stderr(&out).contains(want), "{cmd}: {}", stderr(&out));
        }
    }
    // A declared format may not take a custom pattern's name either.
    fs::write(
        d.join("toolgate.toml"),
        "[[pattern]]\nname = \"angle_call\"\ntype = \"xml\"\nregex = 'x(y)'\ntool_name = \"f\"\n",
    )
    .unwrap();
    fs::write(d.join("f.toml"), ANGLE).unwrap();
    let out = toolgate(d, &["formats", "--formats", "f.toml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("format `angle_call` has the name of another mode"),
        "{}",
        stderr(&out)
    );
    // Nor a built-in profile's: `--profile NAME` must choose the format.
    fs::remove_file(d.join("toolgate.toml")).unwrap();
    // `auto` detects the mode and never chose a format of that name.
    fs::write(d.join("f.toml"), ANGLE.replace("angle_call", "auto")).unwrap();
    let out = toolgate(d, &["formats", "--formats", "f.toml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("format `auto` has the name of a built-in profile"),
        "{}",
        stderr(&out)
    );
    fs::write(d.join("f.toml"), ANGLE.replace("angle_call", "gpt-oss")).unwrap();
    let out = toolgate(d, &["formats", "--formats", "f.toml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("format `gpt-oss` has the name of a built-in profile"),
        "{}",
        stderr(&out)
    );
    // A file that is missing names itself.
    let out = toolgate(d, &["formats", "--formats", "none.toml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read formats file none.toml"));
}

const PYTHON_TAGS: &str = r#"
[[format]]
name = "python_tags"
engine = "pythonic"
opener = "<|python_start|>"
closer = "<|python_end|>"
example = "<|python_start|>[get_weather(city='Antwerp')]<|python_end|>"
"#;

/// The JSON events of `parse --stream` for `input` (written in 7-byte
/// pieces).
fn parse_stream(dir: &Path, args: &[&str], input: &str) -> Vec<Value> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut all = vec!["parse", "--stream", "--tools", "tools.json"];
    all.extend_from_slice(args);
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(&all)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for piece in input.as_bytes().chunks(7) {
        stdin.write_all(piece).unwrap();
        stdin.flush().unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_declared_pythonic_format_reads_calls_cut_calls_and_streams() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("tools.json"), TOOLS).unwrap();
    fs::write(d.join("py.toml"), PYTHON_TAGS).unwrap();
    let args = ["--formats", "py.toml", "--profile", "python_tags"];
    let call = "<|python_start|>[get_weather(city='Antwerp')]<|python_end|>";

    // A call: the pythonic engine reads it, the call executes.
    let v = parse(d, &args, call);
    assert_eq!(
        (v["decision"].clone(), v["label"].clone()),
        (json!("execute"), json!("pass"))
    );
    assert_eq!(
        v["calls"],
        json!([{"name": "get_weather", "arguments": {"city": "Antwerp"}}])
    );
    // Cut off inside the list, and cut off before the closer: truncation
    // (the engine's own and the shared missing-closer rule).
    for cut in [
        "<|python_start|>[get_weather(city='Ant",
        "<|python_start|>[get_weather(city='Antwerp')]",
    ] {
        let v = parse(d, &args, cut);
        assert_eq!(
            (v["decision"].clone(), v["label"].clone()),
            (json!("reject"), json!("truncation")),
            "{cut}"
        );
    }

    // Streamed: the prose is forwarded, the call markup held from the
    // declared opener on, and the end is what `parse` says of the whole.
    let prose = "Let me check the weather. ";
    let events = parse_stream(d, &args, &format!("{prose}{call}"));
    let forwarded: String = events
        .iter()
        .filter(|e| e["event"] == "text")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(forwarded, prose);
    let opens: Vec<&Value> = events.iter().filter(|e| e["event"] == "open").collect();
    assert_eq!(opens.len(), 1, "{events:?}");
    assert_eq!(opens[0]["token"], "<|python_start|>");
    assert_eq!(opens[0]["modes"], json!(["python_tags"]));
    assert_eq!(
        events.iter().filter(|e| e["event"] == "call").count(),
        1,
        "{events:?}"
    );
    let mut end = events.last().unwrap().clone();
    assert_eq!(end["event"], "end");
    end.as_object_mut().unwrap().remove("event");
    assert_eq!(end, parse(d, &args, &format!("{prose}{call}")));
}

/// Probe 44b: a declared `openers` list is where `--stream` starts holding
/// text; one that begins the call opener holds the whole call.
#[test]
fn declared_openers_hold_the_call_when_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("tools.json"), TOOLS).unwrap();
    fs::write(
        d.join("a.toml"),
        ANGLE.replace("closer =", "openers = [\"<<\"]\ncloser ="),
    )
    .unwrap();
    let args = ["--formats", "a.toml", "--profile", "angle_call"];
    let prose = "Hello ";
    let call = r#"<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}<</call>>"#;
    let events = parse_stream(d, &args, &format!("{prose}{call}"));
    let forwarded: String = events
        .iter()
        .filter(|e| e["event"] == "text")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(forwarded, prose, "{events:?}");
    assert_eq!(events.last().unwrap()["decision"], "execute", "{events:?}");
}
