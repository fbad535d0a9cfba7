//! `toolgate import` and reading captures directly, end to end on the
//! shipped fixtures (`examples/captures/`), as the README shows them.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn toolgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `label --format jsonl` records of `paths`.
fn records(paths: &[&str]) -> Vec<Value> {
    let mut args = vec!["label", "--format", "jsonl"];
    args.extend(paths);
    let out = toolgate(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ids_and_native(records: &[Value]) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["labels"]["native"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

#[test]
fn post_parse_captures_with_one_function_call_label_pass_in_native() {
    for path in [
        "examples/captures/responses/function_call.json",
        "examples/captures/responses/stream.sse",
        "examples/captures/anthropic/tool_use.json",
        "examples/captures/anthropic/stream.sse",
        "examples/captures/otel/spans.json",
        "examples/captures/otel/old_attributes.jsonl",
    ] {
        let recs = records(&[path]);
        assert_eq!(recs.len(), 1, "{path}");
        let r = &recs[0];
        assert_eq!(r["labels"]["native"], "pass", "{path}: {r}");
        // The raw text is gone: the native profile judges them.
        assert_eq!(r["profile"]["name"], "native", "{path}");
        assert_eq!(r["profile"]["label"], "pass", "{path}");
        assert_eq!(r["profile"]["decision"], "execute", "{path}");
        assert_eq!(r["profile"]["calls"].as_array().unwrap().len(), 1, "{path}");
    }
}

#[test]
fn chat_pair_with_two_choices_and_content_parts() {
    let recs = records(&["examples/captures/openai-chat/pair_n2.json"]);
    assert_eq!(
        ids_and_native(&recs),
        [
            ("pair_n2#0".to_string(), "pass".to_string()),
            ("pair_n2#1".to_string(), "pass".to_string())
        ]
    );
}

#[test]
fn import_joins_batch_input_and_output_in_either_order() {
    for order in [
        ["batch_output.jsonl", "batch_input.jsonl"],
        ["batch_input.jsonl", "batch_output.jsonl"],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("out");
        // Copies elsewhere, so nothing beside them helps the join.
        let copies: Vec<String> = order
            .iter()
            .map(|name| {
                let to = dir.path().join(name);
                fs::copy(
                    root().join("examples/captures/openai-batch").join(name),
                    &to,
                )
                .unwrap();
                to.display().to_string()
            })
            .collect();
        let out_arg = out_dir.display().to_string();
        let out = toolgate(&["import", &copies[0], &copies[1], "--out", &out_arg]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let written = out_dir.join("batch_output.jsonl");
        let recs = records(&[written.to_str().unwrap()]);
        assert_eq!(
            ids_and_native(&recs),
            [
                ("smalltalk".to_string(), "pass".to_string()),
                ("time-now".to_string(), "pass".to_string()),
                ("weather-antwerp".to_string(), "pass".to_string()),
            ]
        );
        // tool_choice "none" became an expectation of no call.
        assert_eq!(recs[0]["profile"]["label"], "pass");
        assert!(!out_dir.join("batch_input.jsonl").exists());
    }
}

#[test]
fn a_batch_output_without_its_input_is_reported_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("out.jsonl");
    fs::copy(
        root().join("examples/captures/openai-batch/batch_output.jsonl"),
        &alone,
    )
    .unwrap();
    let out_arg = dir.path().join("o").display().to_string();
    let out = toolgate(&["import", alone.to_str().unwrap(), "--out", &out_arg]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for line in 1..=3 {
        assert!(
            err.contains(&format!(
                "out.jsonl:{line}: no Batch input line with custom_id"
            )),
            "{err}"
        );
    }
}

#[test]
fn import_reports_bad_lines_and_writes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("mixed.jsonl");
    let good =
        fs::read_to_string(root().join("examples/captures/responses/function_call.json")).unwrap();
    let good: Value = serde_json::from_str(&good).unwrap();
    fs::write(
        &capture,
        format!(
            "{}\n{{not json\n{{\"request\": {{}}, \"response\": {{\"object\": \"response\"}}}}\n{}\n",
            good, good
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("o");
    let out = toolgate(&[
        "import",
        capture.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--from",
        "openai-responses",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("mixed.jsonl:2: not valid JSON"), "{err}");
    assert!(
        err.contains("mixed.jsonl:3: the response has no `output` array"),
        "{err}"
    );
    assert!(err.contains("post-parse"), "{err}");
    let written = fs::read_to_string(out_dir.join("mixed.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 2);
}

#[test]
fn unknown_from_is_a_usage_error() {
    let out = toolgate(&[
        "import",
        "examples/captures",
        "--out",
        "/tmp/x",
        "--from",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown --from `nope`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_capture_imports_and_the_converted_corpus_labels_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("o");
    let out = toolgate(&[
        "import",
        "examples/captures",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let direct = records(&["examples/captures"]);
    let converted = records(&[out_dir.to_str().unwrap()]);
    let key = |r: &Value| {
        (
            r["id"].to_string(),
            r["labels"].to_string(),
            r["findings"].to_string(),
        )
    };
    let mut a: Vec<_> = direct.iter().map(key).collect();
    let mut b: Vec<_> = converted.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a.len(), 20);
    assert_eq!(a, b);
    assert!(Path::new(&out_dir).join("stream-2.jsonl").exists());
}

/// Issue 22: `label stream.sse` run from the stream's own folder ignored
/// `stream.request.json` beside it (`./stream.sse` worked): the bare name's
/// parent is `""`. Both spellings, and `import`, must find the request.
#[test]
fn a_stream_named_without_a_folder_finds_its_request() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["stream.sse", "stream.request.json"] {
        fs::copy(
            root().join("examples/captures/openai-chat").join(name),
            dir.path().join(name),
        )
        .unwrap();
    }
    let run_in = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    for spelling in ["stream.sse", "./stream.sse"] {
        let out = run_in(&["label", "--format", "jsonl", spelling]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let rec: Value = serde_json::from_slice(&out.stdout).unwrap();
        // With the request's tools, the two weather calls pass.
        assert_eq!(rec["labels"]["native"], "pass", "{spelling}: {rec}");
        let out = run_in(&["import", spelling, "--out", "o", "--force"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let written = fs::read_to_string(dir.path().join("o/stream.jsonl")).unwrap();
        let t: Value = serde_json::from_str(written.trim()).unwrap();
        assert_eq!(
            t["tools"][0]["function"]["name"], "get_weather",
            "{spelling}"
        );
    }
}

/// Runs `toolgate ARGS` in `dir`, failing the test (and killing the child)
/// when it has not returned within 30 s: a read of a FIFO never returns.
fn bounded(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args).current_dir(dir);
    bounded_run(cmd)
}

/// Runs `cmd` with the 30 s bound of [`bounded`].
fn bounded_run(mut cmd: Command) -> Output {
    use std::time::{Duration, Instant};
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{shown} did not return within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Issue 22: `import` read a FIFO forever and /dev/zero until memory ran
/// out. It refuses them as `label` does, naming the path, and goes on with
/// the other files; a FIFO named like a stream's request is not read either.
#[cfg(unix)]
#[test]
fn import_refuses_special_and_oversized_files_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = |name: &str| {
        let st = Command::new("mkfifo").arg(d.join(name)).status().unwrap();
        assert!(st.success());
    };
    fifo("pipe.sse");
    fs::create_dir(d.join("walked")).unwrap();
    let st = Command::new("mkfifo")
        .arg(d.join("walked/inner.jsonl"))
        .status()
        .unwrap();
    assert!(st.success());
    // A real stream whose `STEM.request.json` is a FIFO.
    fs::copy(
        root().join("examples/captures/openai-chat/stream.sse"),
        d.join("stream.sse"),
    )
    .unwrap();
    fifo("stream.request.json");
    let out = bounded(
        d,
        &[
            "import",
            "pipe.sse",
            "walked",
            "/dev/zero",
            "stream.sse",
            "--out",
            "o",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    for expected in [
        "pipe.sse: a FIFO: only regular files are read",
        "walked/inner.jsonl: a FIFO: only regular files are read",
        "/dev/zero: a character device: only regular files are read",
    ] {
        assert!(err.contains(expected), "{expected}\n{err}");
    }
    // The good file is still written (its request unread: tools unknown).
    let written = fs::read_to_string(d.join("o/stream.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 1);

    // Over the size limit: reported with the limit, not read.
    let out = bounded(
        d,
        &[
            "import",
            "stream.sse",
            "--max-file-size",
            "1K",
            "--out",
            "o2",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("stream.sse: ") && stderr(&out).contains("over the 1024-byte limit"),
        "{}",
        stderr(&out)
    );
    assert!(!d.join("o2/stream.jsonl").exists());
}

/// Issue 22: an SSE file with 200,000 choice indexes took 688 MB. The
/// choices are capped at 128 per stream with an error saying so, and the
/// import runs in bounded memory (under a 300 MB address-space limit,
/// which the uncapped import exceeded).
#[cfg(unix)]
#[test]
fn an_sse_file_with_200k_choice_indexes_is_capped_in_bounded_memory() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut f = std::io::BufWriter::new(fs::File::create(d.join("wide.sse")).unwrap());
    for i in 0..200_000 {
        writeln!(
            f,
            "data: {{\"choices\":[{{\"index\":{i},\"delta\":{{\"content\":\"x\"}}}}]}}"
        )
        .unwrap();
    }
    writeln!(f, "data: [DONE]").unwrap();
    f.into_inner().unwrap().sync_all().unwrap();
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let script = format!("ulimit -v 300000 && exec '{bin}' import wide.sse --out o");
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &script]).current_dir(d);
    let out = bounded_run(cmd);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("wide.sse:1: more than 128 choice indexes in one stream: choice 128 and later new ones are not read"),
        "{err}"
    );
    let written = fs::read_to_string(d.join("o/wide.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 128);
}

/// Each text delta of an Anthropic stream copied the block's text so far:
/// 200,000 deltas of one block took minutes (quadratic). Appended in place,
/// the import finishes within the bound with the whole text.
#[test]
fn a_long_anthropic_text_block_imports_in_linear_time() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut f = std::io::BufWriter::new(fs::File::create(d.join("long.sse")).unwrap());
    writeln!(f, "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"model\":\"claude\",\"content\":[]}}}}\n").unwrap();
    writeln!(f, "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n").unwrap();
    for _ in 0..200_000 {
        writeln!(f, "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"abcdefghij\"}}}}\n").unwrap();
    }
    writeln!(
        f,
        "event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n"
    )
    .unwrap();
    f.into_inner().unwrap().sync_all().unwrap();
    let started = std::time::Instant::now();
    let out = bounded(d, &["import", "long.sse", "--out", "o"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(40),
        "took {:?}",
        started.elapsed()
    );
    let written = fs::read_to_string(d.join("o/long.jsonl")).unwrap();
    let t: Value = serde_json::from_str(written.trim()).unwrap();
    assert_eq!(t["output"].as_str().unwrap().len(), 2_000_000);
}

/// Issue 22, end to end: a streamed call whose `arguments` was null in
/// every delta was labeled `truncation` by `native`; it is a complete call
/// with `{}`, which passes for a parameterless tool, and `import` keeps the
/// typed note saying how it was read.
#[test]
fn a_streamed_call_with_null_arguments_labels_pass_in_native() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("t.request.json"),
        r#"{"model": "m", "messages": [{"role": "user", "content": "time?"}],
            "tools": [{"type": "function", "function": {"name": "get_time",
              "parameters": {"type": "object", "properties": {}}}}]}"#,
    )
    .unwrap();
    fs::write(
        d.join("t.sse"),
        concat!(
            "data: {\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"get_time\",\"arguments\":null}}]}}]}\n\n",
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n",
        ),
    )
    .unwrap();
    let path = d.join("t.sse");
    let recs = records(&[path.to_str().unwrap()]);
    assert_eq!(recs[0]["labels"]["native"], "pass", "{}", recs[0]);
    let out = bounded(d, &["import", "t.sse", "--out", "o"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = fs::read_to_string(d.join("o/t.jsonl")).unwrap();
    let t: Value = serde_json::from_str(written.trim()).unwrap();
    assert_eq!(t["tool_calls"][0]["function"]["arguments"], "{}");
    assert_eq!(t["import"]["notes"][0]["kind"], "arguments_absent");
}

/// Probe (s46): a llama.cpp stream whose generation failed (an `error:`
/// field, then `data: [DONE]`) was imported whole, and the call the
/// failure cut labeled `pass` (execute). The stream is refused at the
/// field's line, as the proxy breaks it there.
#[test]
fn a_llama_cpp_stream_with_an_error_field_is_not_imported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("t.request.json"),
        r#"{"model": "m", "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}"#,
    )
    .unwrap();
    fs::write(
        d.join("t.sse"),
        concat!(
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"\"}}]}}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"}\"}}]}}]}\n\n",
            "error: {\"code\":500,\"message\":\"Input prompt is too big compared to KV size.\",\"type\":\"server_error\"}\n\n",
            "data: [DONE]\n\n",
        ),
    )
    .unwrap();
    let out = bounded(d, &["import", "t.sse", "--out", "o"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("t.sse:5: the stream reports an error: `500`: Input prompt is too big compared to KV size. (the stream from line 1 is not imported)"),
        "{}",
        stderr(&out)
    );
    assert!(!d.join("o/t.jsonl").exists());
}

/// `toolgate import` run in `dir`.
fn import_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("import")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The names of the files in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Probe bug B: `import --out X a.json a.json` wrote `a.jsonl` and
/// `a-2.jsonl` (the same transcripts twice, so `matrix` counted n=4), and
/// `--out` inside the input tree made a second run import its own output
/// as `pair-2.jsonl`.
#[test]
fn the_same_file_twice_is_imported_once_and_the_output_folder_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("in")).unwrap();
    fs::copy(
        root().join("examples/captures/openai-chat/pair_n2.json"),
        dir.path().join("in/pair.json"),
    )
    .unwrap();
    let out = import_in(
        dir.path(),
        &["in/pair.json", "./in/pair.json", "--out", "in/out"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("./in/pair.json: given more than once: imported once"),
        "{}",
        stderr(&out)
    );
    assert_eq!(names(&dir.path().join("in/out")), ["pair.jsonl"]);
    let first = fs::read(dir.path().join("in/out/pair.jsonl")).unwrap();
    // Again over the whole tree, the output folder inside it.
    let out = import_in(dir.path(), &["in", "--out", "in/out", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 file(s) under --out in/out not read"),
        "{}",
        stderr(&out)
    );
    assert_eq!(names(&dir.path().join("in/out")), ["pair.jsonl"]);
    assert_eq!(
        fs::read(dir.path().join("in/out/pair.jsonl")).unwrap(),
        first
    );
}

/// `--force` replaces what this run writes and deletes nothing: a
/// numbered output an earlier run wrote (`pair-2.jsonl`, for a second
/// input of that stem) is left, and named on stderr.
#[test]
fn force_names_a_stale_numbered_output_and_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(
        root().join("examples/captures/openai-chat/pair_n2.json"),
        dir.path().join("pair.json"),
    )
    .unwrap();
    fs::create_dir(dir.path().join("o")).unwrap();
    fs::write(dir.path().join("o/pair-2.jsonl"), "{\"output\": \"old\"}\n").unwrap();
    fs::write(
        dir.path().join("o/other-2.jsonl"),
        "{\"output\": \"old\"}\n",
    )
    .unwrap();
    let out = import_in(dir.path(), &["pair.json", "--out", "o", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("o/pair-2.jsonl: not written by this import, left as it is"),
        "{err}"
    );
    assert!(!err.contains("other-2"), "{err}");
    assert_eq!(
        names(&dir.path().join("o")),
        ["other-2.jsonl", "pair-2.jsonl", "pair.jsonl"]
    );
}

/// Probe bug B: a Batch output repeating a `custom_id` or a chat
/// completion repeating a choice `index` gave transcripts of one id,
/// silently.
#[test]
fn repeated_ids_from_a_capture_are_warned_about_with_the_id() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("batch_input.jsonl"),
        "{\"custom_id\": \"a\", \"method\": \"POST\", \"url\": \"/v1/chat/completions\", \"body\": {\"model\": \"m\"}}\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("batch_output.jsonl"),
        concat!(
            "{\"custom_id\": \"a\", \"response\": {\"status_code\": 200, \"body\": {\"choices\": [{\"message\": {\"content\": \"A\"}}]}}, \"error\": null}\n",
            "{\"custom_id\": \"a\", \"response\": {\"status_code\": 200, \"body\": {\"choices\": [{\"message\": {\"content\": \"B\"}}]}}, \"error\": null}\n",
        ),
    )
    .unwrap();
    fs::write(
        dir.path().join("pair.json"),
        r#"{"request": {"model": "m", "messages": []}, "response": {"id": "c", "choices": [
            {"index": 0, "message": {"content": "x"}, "finish_reason": "stop"},
            {"index": 0, "message": {"content": "y"}, "finish_reason": "stop"}]}}"#,
    )
    .unwrap();
    let out = import_in(
        dir.path(),
        &[
            "batch_input.jsonl",
            "batch_output.jsonl",
            "pair.json",
            "--out",
            "o",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let batch_id = serde_json::from_str::<Value>(
        fs::read_to_string(dir.path().join("o/batch_output.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        err.contains(&format!(
            "batch_output.jsonl: warning: 2 transcripts have the id `{batch_id}`"
        )),
        "{err}"
    );
    assert!(
        err.contains("pair.json: warning: 2 transcripts have the id `"),
        "{err}"
    );
    // Both are kept: nothing is dropped.
    let written = fs::read_to_string(dir.path().join("o/batch_output.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 2);
}

/// Probe C, bug 4, end to end: an Anthropic `tool_use` cut by `max_tokens`
/// was `pass`/`execute` when its `input` looked whole and
/// `missing_required` when it did not; it is `truncation` in `native`, and
/// the `native` profile executes nothing.
#[test]
fn an_anthropic_tool_use_cut_by_max_tokens_is_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, input) in [
        ("full", r#"{"location": "SF", "unit": "c"}"#),
        ("partial", r#"{"location": "SF"}"#),
    ] {
        fs::write(
            d.join(format!("{name}.json")),
            format!(
                r#"{{"request": {{"model": "claude", "max_tokens": 50, "tools": [{{"name": "get_weather",
                  "input_schema": {{"type": "object", "properties": {{"location": {{"type": "string"}},
                  "unit": {{"type": "string"}}}}, "required": ["location", "unit"]}}}}]}},
                  "response": {{"type": "message", "role": "assistant", "model": "claude",
                  "content": [{{"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {input}}}],
                  "stop_reason": "max_tokens"}}}}"#
            ),
        )
        .unwrap();
    }
    let out = toolgate(&[
        "label",
        "--format",
        "jsonl",
        "--profile",
        "native",
        d.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2);
    for r in &recs {
        assert_eq!(r["labels"]["native"], "truncation", "{r}");
        assert_eq!(r["profile"]["label"], "truncation", "{r}");
        assert_ne!(r["profile"]["decision"], "execute", "{r}");
    }
}

/// Probe 44, bug 3, end to end: a stream the file ends inside, with no stop
/// reason (no `finish_reason`/`[DONE]`, no `message_stop`, no terminal
/// Responses event), whose last call's arguments parse, was `pass`/
/// `execute`. Its stop reason is unknown: the last call is cut,
/// `truncation` in `native`, and the `native` profile executes nothing.
#[test]
fn a_stream_cut_off_without_a_stop_reason_is_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema =
        r#"{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}"#;
    let chat = concat!(
        "data: {\"id\": \"c\", \"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0, \"delta\": {\"role\": \"assistant\", \"tool_calls\": [{\"index\": 0, \"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": \"\"}}]}, \"finish_reason\": null}]}\n\n",
        "data: {\"id\": \"c\", \"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0, \"delta\": {\"tool_calls\": [{\"index\": 0, \"function\": {\"arguments\": \"{\\\"city\\\": \\\"Ghent\\\"}\"}}]}, \"finish_reason\": null}]}\n\n",
    );
    let anthropic = concat!(
        "event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\"id\": \"m\", \"type\": \"message\", \"role\": \"assistant\", \"model\": \"claude\", \"content\": []}}\n\n",
        "event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"tool_use\", \"id\": \"t\", \"name\": \"get_weather\", \"input\": {}}}\n\n",
        "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"input_json_delta\", \"partial_json\": \"{\\\"city\\\": \\\"Ghent\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\": \"content_block_stop\", \"index\": 0}\n\n",
    );
    let responses = concat!(
        "event: response.created\ndata: {\"type\": \"response.created\", \"response\": {\"id\": \"r\", \"object\": \"response\", \"status\": \"in_progress\", \"model\": \"gpt-5\", \"output\": []}}\n\n",
        "event: response.output_item.done\ndata: {\"type\": \"response.output_item.done\", \"output_index\": 0, \"item\": {\"id\": \"fc\", \"type\": \"function_call\", \"status\": \"completed\", \"arguments\": \"{\\\"city\\\": \\\"Ghent\\\"}\", \"call_id\": \"c1\", \"name\": \"get_weather\"}}\n\n",
    );
    // Real requests (with their `messages`): a request file without them
    // was not read, the tools left unknown (s48-files names it now).
    let requests = [
        (
            "chat",
            chat,
            format!(
                r#"{{"model": "m", "messages": [{{"role": "user", "content": "hi"}}], "tools": [{{"type": "function", "function": {{"name": "get_weather", "parameters": {schema}}}}}]}}"#
            ),
        ),
        (
            "anthropic",
            anthropic,
            format!(
                r#"{{"model": "claude", "max_tokens": 100, "messages": [{{"role": "user", "content": "hi"}}], "tools": [{{"name": "get_weather", "input_schema": {schema}}}]}}"#
            ),
        ),
        (
            "responses",
            responses,
            format!(
                r#"{{"model": "gpt-5", "input": "hi", "tools": [{{"type": "function", "name": "get_weather", "parameters": {schema}}}]}}"#
            ),
        ),
    ];
    for (stem, stream, request) in &requests {
        fs::write(d.join(format!("{stem}.sse")), stream).unwrap();
        fs::write(d.join(format!("{stem}.request.json")), request).unwrap();
    }
    let streams: Vec<String> = requests
        .iter()
        .map(|(stem, _, _)| d.join(format!("{stem}.sse")).display().to_string())
        .collect();
    let mut args = vec!["label", "--format", "jsonl", "--profile", "native"];
    args.extend(streams.iter().map(String::as_str));
    let out = toolgate(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut got: Vec<(String, String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            (
                r["id"].as_str().unwrap().to_string(),
                r["labels"]["native"].as_str().unwrap().to_string(),
                r["profile"]["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want = |id: &str| {
        (
            id.to_string(),
            "truncation".to_string(),
            "reject".to_string(),
        )
    };
    assert_eq!(got, [want("anthropic"), want("chat"), want("responses")]);
}

/// Issue 41, end to end: a Responses `function_call` item whose own
/// `status` is `incomplete` (the output token limit cut it) was
/// `pass`/`execute` when its arguments parsed; it is `truncation` in
/// `native`, and nothing executes — in a bare response and in a
/// `/v1/responses` Batch output line (`r2`) beside a whole call (`r1`).
#[test]
fn a_responses_function_call_cut_by_the_limit_is_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tools = r#"[{"type": "function", "name": "get_weather", "parameters": {"type": "object",
        "properties": {"city": {"type": "string"}}, "required": ["city"]}}]"#;
    let body = |id: &str, status: &str| {
        format!(
            r#"{{"id": "{id}", "object": "response", "status": "{status}", "model": "gpt-5",
              "incomplete_details": {details}, "output": [{{"type": "function_call", "id": "fc",
              "call_id": "c", "name": "get_weather", "arguments": "{{\"city\":\"A\"}}",
              "status": "{status}"}}]}}"#,
            details = if status == "incomplete" {
                r#"{"reason": "max_output_tokens"}"#
            } else {
                "null"
            }
        )
    };
    fs::write(
        d.join("resp.json"),
        format!(
            r#"{{"request": {{"model": "gpt-5", "tools": {tools}}}, "response": {}}}"#,
            body("resp_0", "incomplete")
        ),
    )
    .unwrap();
    let mut input = String::new();
    let mut output = String::new();
    for (id, status) in [("r1", "completed"), ("r2", "incomplete")] {
        input.push_str(&format!(
            r#"{{"custom_id": "{id}", "method": "POST", "url": "/v1/responses", "body": {{"model": "gpt-5", "tools": {}}}}}"#,
            tools.replace('\n', " ")
        ));
        input.push('\n');
        output.push_str(&format!(
            r#"{{"id": "b", "custom_id": "{id}", "response": {{"status_code": 200, "body": {}}}, "error": null}}"#,
            body(id, status).replace('\n', " ")
        ));
        output.push('\n');
    }
    fs::write(d.join("batch_input.jsonl"), input).unwrap();
    fs::write(d.join("batch_output.jsonl"), output).unwrap();
    let out = toolgate(&[
        "label",
        "--format",
        "jsonl",
        "--profile",
        "native",
        d.join("resp.json").to_str().unwrap(),
        d.join("batch_output.jsonl").to_str().unwrap(),
        d.join("batch_input.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcome = |r: &Value| {
        (
            r["id"].as_str().unwrap().to_string(),
            r["labels"]["native"].as_str().unwrap().to_string(),
            r["profile"]["decision"].as_str().unwrap().to_string(),
        )
    };
    let mut got: Vec<_> = recs.iter().map(outcome).collect();
    got.sort();
    let want = |id: &str, label: &str, decision: &str| {
        (id.to_string(), label.to_string(), decision.to_string())
    };
    assert_eq!(
        got,
        [
            want("r1", "pass", "execute"),
            want("r2", "truncation", "reject"),
            want("resp", "truncation", "reject"),
        ]
    );
}

/// Probe C, bug 8: BFCL expectations were stricter than BFCL's checker: a
/// dict ground truth became an `enum` of dicts of lists, which no answer
/// matches, and `'new york'` for the accepted `"New York"` was
/// `schema_violation` although BFCL standardizes strings (case, spaces and
/// `,./-_*^` ignored). Answers BFCL accepts pass; others are still blamed.
#[test]
fn bfcl_answers_that_bfcl_accepts_pass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("BFCL_v3_mix.json"),
        concat!(
            r#"{"id": "s_dict", "question": [[{"role": "user", "content": "x"}]], "function": [{"name": "book", "parameters": {"type": "dict", "properties": {"opts": {"type": "dict", "properties": {"seat": {"type": "string"}, "meal": {"type": "string"}}}}, "required": ["opts"]}}]}"#,
            "\n",
            r#"{"id": "s_str", "question": [[{"role": "user", "content": "x"}]], "function": [{"name": "get_weather", "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}"#,
            "\n",
        ),
    )
    .unwrap();
    fs::write(
        d.join("BFCL_v3_mix_possible_answer.json"),
        concat!(
            r#"{"id": "s_dict", "ground_truth": [{"book": {"opts": [{"seat": ["window", "aisle"], "meal": ["veg", ""]}]}}]}"#,
            "\n",
            r#"{"id": "s_str", "ground_truth": [{"get_weather": {"city": ["New York, NY", "New York"]}}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let label = |dict: &str, city: &str| -> Vec<String> {
        bfcl_bracket_labels(
            &d.join("BFCL_v3_mix_result.json"),
            &format!(
                "{{\"id\": \"s_dict\", \"result\": \"[book(opts={dict})]\"}}\n{{\"id\": \"s_str\", \"result\": \"[get_weather(city={city})]\"}}\n"
            ),
        )
    };
    assert_eq!(label("{'seat': 'window'}", "'new york'"), ["pass", "pass"]);
    assert_eq!(
        label("{'seat': 'Aisle', 'meal': 'veg'}", "'NEW-YORK, ny'"),
        ["pass", "pass"]
    );
    assert_eq!(
        label("{'seat': 'middle'}", "'Boston'"),
        ["schema_violation", "schema_violation"]
    );
    assert_eq!(
        label("{'meal': 'veg'}", "'new york'"),
        ["missing_required", "pass"]
    );
}

/// Probe I, 2: a string accepted as `["units", ""]` blamed `unit=""`,
/// which BFCL accepts: its checker standardizes every accepted value, `""`
/// included, and a string that standardizes to `""` (`" "`) is among them.
/// The same for a parameter accepted only as `""`. Other values are still
/// blamed.
#[test]
fn bfcl_a_string_bfcl_standardizes_to_an_accepted_empty_string_passes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let function = r#""function": [{"name": "area", "parameters": {"type": "dict", "properties": {"base": {"type": "integer"}, "unit": {"type": "string"}}, "required": ["base"]}}]"#;
    fs::write(
        d.join("BFCL_v3_e.json"),
        format!(
            "{{\"id\": \"e_among\", \"question\": [[{{\"role\": \"user\", \"content\": \"x\"}}]], {function}}}\n{{\"id\": \"e_only\", \"question\": [[{{\"role\": \"user\", \"content\": \"x\"}}]], {function}}}\n"
        ),
    )
    .unwrap();
    fs::write(
        d.join("BFCL_v3_e_possible_answer.json"),
        concat!(
            r#"{"id": "e_among", "ground_truth": [{"area": {"base": [10], "unit": ["units", ""]}}]}"#,
            "\n",
            r#"{"id": "e_only", "ground_truth": [{"area": {"base": [10], "unit": [""]}}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let label = |among: &str, only: &str| -> Vec<String> {
        bfcl_bracket_labels(
            &d.join("BFCL_v3_e_result.json"),
            &format!(
                "{{\"id\": \"e_among\", \"result\": \"[area(base=10{among})]\"}}\n{{\"id\": \"e_only\", \"result\": \"[area(base=10{only})]\"}}\n"
            ),
        )
    };
    assert_eq!(label(", unit=''", ", unit=' '"), ["pass", "pass"]);
    assert_eq!(label(", unit=' '", ", unit=''"), ["pass", "pass"]);
    assert_eq!(label(", unit='Units'", ""), ["pass", "pass"]);
    assert_eq!(label("", ", unit='-'"), ["pass", "pass"]);
    assert_eq!(
        label(", unit='cm'", ", unit='cm'"),
        ["schema_violation", "schema_violation"]
    );
}

/// Probe F, bf2: answers BFCL's AST checker rejects passed: an argument the
/// tool declares but the possible answer does not name ("Unexpected
/// parameter"), a value for a parameter accepted only as `""` (optional,
/// no value), a dict key the accepted dict does not name
/// (`value_error:dict_key`). They are blamed; the answers BFCL accepts
/// still pass.
#[test]
fn bfcl_answers_that_bfcl_rejects_are_blamed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("BFCL_v3_x.json"),
        concat!(
            r#"{"id": "s_extra", "question": [[{"role": "user", "content": "x"}]], "function": [{"name": "k", "parameters": {"type": "dict", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}}]}"#,
            "
",
            r#"{"id": "s_empty", "question": [[{"role": "user", "content": "x"}]], "function": [{"name": "k", "parameters": {"type": "dict", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}}]}"#,
            "
",
            r#"{"id": "s_key", "question": [[{"role": "user", "content": "x"}]], "function": [{"name": "book", "parameters": {"type": "dict", "properties": {"opts": {"type": "dict"}}, "required": ["opts"]}}]}"#,
            "
",
        ),
    )
    .unwrap();
    fs::write(
        d.join("BFCL_v3_x_possible_answer.json"),
        concat!(
            r#"{"id": "s_extra", "ground_truth": [{"k": {"a": ["x"]}}]}"#,
            "
",
            r#"{"id": "s_empty", "ground_truth": [{"k": {"a": ["x"], "b": [""]}}]}"#,
            "
",
            r#"{"id": "s_key", "ground_truth": [{"book": {"opts": [{"seat": ["window"]}]}}]}"#,
            "
",
        ),
    )
    .unwrap();
    let label = |extra: &str, empty: &str, key: &str| -> Vec<String> {
        // By id: s_empty, s_extra, s_key.
        bfcl_bracket_labels(
            &d.join("BFCL_v3_x_result.json"),
            &format!(
                "{{\"id\": \"s_extra\", \"result\": \"[k({extra})]\"}}\n{{\"id\": \"s_empty\", \"result\": \"[k({empty})]\"}}\n{{\"id\": \"s_key\", \"result\": \"[book(opts={key})]\"}}\n"
            ),
        )
    };
    assert_eq!(
        label("a='x'", "a='x'", "{'seat': 'window'}"),
        ["pass", "pass", "pass"]
    );
    let blamed = label("a='x', b=1", "a='x', b=3", "{'seat': 'window', 'extra': 1}");
    assert!(blamed.iter().all(|l| l != "pass"), "{blamed:?}");
}

/// Writes a BFCL result file at `path` and labels it: each record's
/// `bracket` label, in the order of the records' ids.
fn bfcl_bracket_labels(path: &std::path::Path, results: &str) -> Vec<String> {
    fs::write(path, results).unwrap();
    let mut recs = records(&[path.to_str().unwrap()]);
    recs.sort_by_key(|r| r["id"].as_str().unwrap().to_string());
    recs.iter()
        .map(|r| r["labels"]["bracket"].as_str().unwrap().to_string())
        .collect()
}

/// Probe 4, bugs 1 and 2: a pair's top-level `tool_calls` beside a
/// response that made no call was judged as the model's call and executed;
/// its request headers and API keys were written to the imported file.
#[test]
fn a_wrapper_cannot_invent_a_call_and_its_credentials_are_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let invented = dir.path().join("carry_override.json");
    fs::write(
        &invented,
        r#"{"request": {"model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]},
        "response": {"model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": "I won't call anything.", "tool_calls": []}, "finish_reason": "stop"}]},
        "tool_calls": [{"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Evil\"}"}}]}"#,
    )
    .unwrap();
    let recs = records(&[invented.to_str().unwrap()]);
    assert_eq!(recs[0]["labels"]["native"], "no_call");
    assert_eq!(recs[0]["profile"]["decision"], "no_call");
    let secret = dir.path().join("carry_secret.json");
    fs::write(
        &secret,
        r#"{"request": {"model": "gpt-4o"},
        "response": {"choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}]},
        "request_headers": {"Authorization": "Bearer sk-proj-abcdefSECRET123456789"},
        "api_key": "sk-ant-api03-SECRETSECRET",
        "metadata": {"user_api_key": "sk-1234", "litellm_params": {"api_key": "sk-live-xyz"}}}"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = toolgate(&[
        "import",
        secret.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let written = fs::read_to_string(out.join("carry_secret.jsonl")).unwrap();
    assert!(!written.contains("sk-"), "{written}");
    assert!(written.contains(r#""api_key":"[redacted]""#), "{written}");
}

/// Probe 4, bug 4: `"request": null` was a known, empty allowlist, and the
/// model's call of a tool it was given was labelled `wrong_tool`.
#[test]
fn a_null_request_labels_tools_unknown_not_wrong_tool() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("req_null.json");
    fs::write(
        &path,
        r#"{"request": null, "response": {"model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}, "finish_reason": "tool_calls"}]}}"#,
    )
    .unwrap();
    let recs = records(&[path.to_str().unwrap()]);
    assert_eq!(recs[0]["labels"]["native"], "pass");
    let findings: Vec<&str> = recs[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str().or(f.as_str()))
        .collect();
    assert!(findings.contains(&"tools_unknown"), "{findings:?}");
}

/// Probe 4, bug 3: the model's call of Anthropic's `bash` tool, which the
/// request declared as `{"type": "bash_20250124", "name": "bash"}`, was
/// labelled `wrong_tool` (the tool was dropped from the allowlist).
#[test]
fn a_call_of_anthropic_s_bash_tool_is_not_wrong_tool() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a_bash.json");
    fs::write(
        &path,
        r#"{"request": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "tools": [{"type": "bash_20250124", "name": "bash"},
          {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]},
        "response": {"type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
          "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls -la"}}],
          "stop_reason": "tool_use"}}"#,
    )
    .unwrap();
    let recs = records(&[path.to_str().unwrap()]);
    assert_eq!(recs[0]["labels"]["native"], "pass");
}

/// Probe 4, bug 5: a Responses `shell_call` after the text "I'll list the
/// files." was labelled the model's `no_call`; it is refused, and `label`
/// says why.
#[test]
fn a_client_run_call_after_a_preamble_is_refused_not_no_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r_shell_msg.json");
    fs::write(
        &path,
        r#"{"request": {"model": "gpt-5.1", "tools": [{"type": "shell"}]},
        "response": {"object": "response", "status": "completed", "model": "gpt-5.1", "output": [
          {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "I'll list the files."}]},
          {"id": "sh_1", "type": "shell_call", "call_id": "call_s", "action": {"commands": ["ls -la"]}, "status": "completed"}]}}"#,
    )
    .unwrap();
    let out = toolgate(&["label", path.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("`output[1]` is a `shell_call` (`call_s`): a call of a built-in tool the client runs (not the provider)"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("no_call"));
}

/// Found by the import probe: an OTel `tool_call` part without `arguments`
/// (optional in the GenAI output-message schema), or with null, was
/// `truncation` although the message finished cleanly. After a clean
/// finish it is a call without arguments (`{}`, noted `arguments_absent`),
/// as the streamed chat importer reads a call that carried no argument
/// text; after `length` it stays `truncation`.
#[test]
fn an_otel_tool_call_without_arguments_after_a_clean_finish_labels_pass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let span = |part_args: &str, finish: &str| {
        let messages = format!(
            r#"[{{"role": "assistant", "parts": [{{"type": "tool_call", "id": "call_1", "name": "get_time"{part_args}}}], "finish_reason": "{finish}"}}]"#
        );
        let defs = r#"[{"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {}}}]"#;
        serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s1", "name": "chat",
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.output.messages", "value": {"stringValue": messages}},
                {"key": "gen_ai.tool.definitions", "value": {"stringValue": defs}}]}]}]}]})
        .to_string()
    };
    let cases = [
        ("absent.json", "", "tool_call", "pass"),
        ("null.json", r#", "arguments": null"#, "tool_call", "pass"),
        ("stop.json", "", "stop", "pass"),
        ("cut.json", "", "length", "truncation"),
        (
            "cut_null.json",
            r#", "arguments": null"#,
            "length",
            "truncation",
        ),
    ];
    for (name, part_args, finish, label) in cases {
        let path = d.join(name);
        fs::write(&path, span(part_args, finish)).unwrap();
        let recs = records(&[path.to_str().unwrap()]);
        assert_eq!(recs[0]["labels"]["native"], label, "{name}: {}", recs[0]);
    }
    let out = bounded(d, &["import", "absent.json", "--out", "o"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = fs::read_to_string(d.join("o/absent.jsonl")).unwrap();
    let t: Value = serde_json::from_str(written.trim()).unwrap();
    assert_eq!(t["tool_calls"][0]["function"]["arguments"], "{}");
    assert_eq!(t["import"]["notes"][0]["kind"], "arguments_absent");
}

/// Found by the import probe: `import` of a document whose second chat
/// span carries its completion in span events said "1 transcript(s)" and
/// exited 0. The span is named with why, and the exit code is 2.
#[test]
fn an_otel_chat_span_with_its_completion_in_events_is_named_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let chat =
        serde_json::json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}});
    let doc = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"spanId": "s1", "name": "chat", "attributes": [chat,
            {"key": "gen_ai.output.messages", "value": {"stringValue":
                "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"hi\"}], \"finish_reason\": \"stop\"}]"}}]},
        {"spanId": "s2", "name": "chat", "attributes": [chat],
            "events": [{"name": "gen_ai.content.completion", "attributes": []}]}
    ]}]}]});
    fs::write(d.join("o.json"), doc.to_string()).unwrap();
    let out = bounded(d, &["import", "o.json", "--out", "o"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "o.json: span `s2`: its completion is in span events (`gen_ai.content.completion`)"
        ),
        "{}",
        stderr(&out)
    );
    let written = fs::read_to_string(d.join("o/o.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 1);
}

/// Found by the import probe: BFCL's FC handlers send `math.factorial` as
/// `math_factorial` (function-calling APIs refuse a `.`), and its checker
/// compares the call with the expected name rewritten the same way; the
/// importer kept the dotted names, so every such call was `wrong_tool`.
/// When the calls show the underscored names, the tools and the
/// expectation use them; a handler that kept the dots (FC models served
/// locally) is judged by the dotted names; a wrong function is still
/// `wrong_tool`, and a wrong argument still blamed.
#[test]
fn bfcl_fc_results_are_judged_by_the_names_the_handler_sent() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let question = |id: &str| {
        format!(
            r#"{{"id": "{id}", "question": [[{{"role": "user", "content": "5!"}}]], "function": [{{"name": "math.factorial", "parameters": {{"type": "dict", "properties": {{"number": {{"type": "integer"}}}}, "required": ["number"]}}}}, {{"name": "math.hypot", "parameters": {{"type": "dict", "properties": {{"x": {{"type": "integer"}}}}, "required": ["x"]}}}}]}}"#
        )
    };
    let ids = ["multiple_0", "multiple_1", "multiple_2", "multiple_3"];
    fs::write(
        d.join("BFCL_v3_multiple.json"),
        ids.map(question).join("\n") + "\n",
    )
    .unwrap();
    fs::write(
        d.join("BFCL_v3_multiple_possible_answer.json"),
        ids.map(|id| {
            format!(
                r#"{{"id": "{id}", "ground_truth": [{{"math.factorial": {{"number": [5]}}}}]}}"#
            )
        })
        .join("\n")
            + "\n",
    )
    .unwrap();
    let result = [
        r#"{"id": "multiple_0", "result": [{"math_factorial": "{\"number\": 5}"}]}"#,
        r#"{"id": "multiple_1", "result": [{"math.factorial": "{\"number\": 5}"}]}"#,
        r#"{"id": "multiple_2", "result": [{"math_hypot": "{\"x\": 5}"}]}"#,
        r#"{"id": "multiple_3", "result": [{"math_factorial": "{\"number\": 6}"}]}"#,
    ]
    .join("\n");
    let path = d.join("BFCL_v3_multiple_result.json");
    fs::write(&path, result + "\n").unwrap();
    let mut recs = records(&[path.to_str().unwrap()]);
    recs.sort_by_key(|r| r["id"].as_str().unwrap().to_string());
    assert_eq!(
        ids_and_native(&recs),
        [
            ("multiple_0", "pass"),
            ("multiple_1", "pass"),
            ("multiple_2", "wrong_tool"),
            ("multiple_3", "schema_violation"),
        ]
        .map(|(id, label)| (id.to_string(), label.to_string()))
    );
    let out = bounded(d, &["import", "BFCL_v3_multiple_result.json", "--out", "o"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = fs::read_to_string(d.join("o/BFCL_v3_multiple_result.jsonl")).unwrap();
    let ts: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let t0 = ts.iter().find(|t| t["id"] == "multiple_0").unwrap();
    assert_eq!(t0["tools"][0]["function"]["name"], "math_factorial");
    assert_eq!(t0["expect"]["calls"][0]["name"], "math_factorial");
    assert_eq!(t0["import"]["underscore_to_dot"], true);
    let t1 = ts.iter().find(|t| t["id"] == "multiple_1").unwrap();
    assert_eq!(t1["tools"][0]["function"]["name"], "math.factorial");
    assert!(t1["import"].get("underscore_to_dot").is_none(), "{t1}");
}

/// Probe 6, bug 6: an OTel export of more than ten million JSON values is
/// not built to detect its format, and `import` then said "no transcript
/// (toolgate)", claiming a format nobody recognized. The reason is the
/// document's value count, said with its path; the summary line claims no
/// format.
#[test]
fn a_capture_too_big_to_detect_is_not_called_toolgate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut zeros = "0,".repeat(toolgate_core::nodes::MAX_DOCUMENT_VALUES);
    zeros.push('0');
    fs::write(
        d.join("spans.json"),
        format!(r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{zeros}]}}]}}]}}"#),
    )
    .unwrap();
    let out = bounded(d, &["import", "spans.json", "--out", "o"]);
    let err = stderr(&out);
    assert!(
        err.contains("spans.json: the document holds more than 10000000 JSON values"),
        "{err}"
    );
    assert!(
        err.contains("spans.json: no transcript (no format detected)"),
        "{err}"
    );
    assert!(!err.contains("(toolgate)"), "{err}");
}

/// Probe 44, bug 1: the OpenAI SDK's `model_dump()` of a legacy function
/// call (`tool_calls: null` beside `function_call`) labelled `no_call`
/// (a bad call: the label it has in `tool_calls`; an unlisted tool),
/// and a message with both fields executed its native call while its
/// legacy call of an unlisted tool was dropped. The legacy call is judged
/// with the native calls, as one set, streamed or not.
#[test]
fn a_legacy_function_call_beside_tool_calls_is_judged_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let request = r#"{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}],
        "functions": [{"name": "get_weather", "parameters": {"type": "object",
          "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}"#;
    let pair = |function_call: &str, tool_calls: &str| {
        format!(
            r#"{{"request": {request}, "response": {{"object": "chat.completion", "model": "gpt-4o", "choices": [{{"index": 0,
                "finish_reason": "function_call", "message": {{"role": "assistant", "content": null, "refusal": null, "audio": null,
                "function_call": {function_call}, "tool_calls": {tool_calls}}}}}]}}}}"#
        )
    };
    let native = r#"[{"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"A\"}"}}]"#;
    let cases = [
        (
            "y3.json",
            // 42 for a string: SPEC's taxonomy, row 11, as the same call in
            // `tool_calls` is labelled (the probe said `schema_violation`).
            pair(
                r#"{"name": "get_weather", "arguments": "{\"city\": 42}"}"#,
                "null",
            ),
            "type_coercion",
        ),
        (
            "y3b.json",
            pair(r#"{"name": "delete_all", "arguments": "{}"}"#, "null"),
            "wrong_tool",
        ),
        (
            "y2.json",
            pair(
                r#"{"name": "delete_everything", "arguments": "{}"}"#,
                native,
            ),
            "wrong_tool",
        ),
    ];
    for (name, text, _) in &cases {
        fs::write(d.join(name), text).unwrap();
    }
    fs::write(d.join("y2s.request.json"), request).unwrap();
    fs::write(
        d.join("y2s.sse"),
        concat!(
            "data: {\"id\":\"c1\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"function_call\":{\"name\":\"delete_everything\",\"arguments\":\"{}\"},\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"A\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"function_call\"}]}\n\n",
            "data: [DONE]\n",
        ),
    )
    .unwrap();
    let expected = cases
        .iter()
        .map(|(name, _, label)| (*name, *label))
        .chain([("y2s.sse", "wrong_tool")]);
    for (name, label) in expected {
        let path = d.join(name);
        let recs = records(&[path.to_str().unwrap()]);
        let r = &recs[0];
        assert_eq!(r["labels"]["native"], label, "{name}: {r}");
        assert_eq!(r["profile"]["decision"], "reject", "{name}: {r}");
    }
}

/// Stop 49: a legacy `delta.function_call` repeating its name in every
/// fragment (as MiniMax through NVIDIA NIM does for `tool_calls`) is one
/// call `get_weather`, labelled as its batch answer is, as the proxy and
/// the LiteLLM guardrail read it (`delta::Fragment::legacy`). An `id` on a
/// legacy delta (not in that API) is not read: two whole pieces under two
/// ids were two legacy calls here, one malformed call in the proxy.
#[test]
fn a_legacy_function_call_repeating_its_name_labels_as_its_batch_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let request = r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}],
        "functions": [{"name": "get_weather", "parameters": {"type": "object",
          "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}"#;
    fs::write(
        d.join("batch.json"),
        format!(
            r#"{{"request": {request}, "response": {{"object": "chat.completion", "model": "m", "choices": [{{"index": 0,
                "finish_reason": "function_call", "message": {{"role": "assistant", "content": null,
                "function_call": {{"name": "get_weather", "arguments": "{{\"city\": \"Paris\"}}"}}}}}}]}}}}"#
        ),
    )
    .unwrap();
    let chunk = |function_call: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c1\",\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"function_call\":{function_call}}},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let stream = |pieces: &[&str]| {
        let mut text: String = pieces.iter().map(|p| chunk(p, "null")).collect();
        text.push_str(&chunk("null", "\"function_call\""));
        text.push_str("data: [DONE]\n");
        text
    };
    let repeated = stream(&[
        r#"{"name":"get_weather","arguments":""}"#,
        r#"{"name":"get_weather","arguments":"{\"city\": "}"#,
        r#"{"name":"get_weather","arguments":"\"Paris\"}"}"#,
    ]);
    let with_ids = stream(&[
        r#"{"id":"a","name":"get_weather","arguments":"{\"city\": \"Paris\"}"}"#,
        r#"{"id":"b","name":"get_weather","arguments":"{\"city\": \"Rome\"}"}"#,
    ]);
    for (name, text) in [("repeated", &repeated), ("with_ids", &with_ids)] {
        fs::write(d.join(format!("{name}.sse")), text).unwrap();
        fs::write(d.join(format!("{name}.request.json")), request).unwrap();
    }
    for (name, label, decision, args) in [
        ("batch.json", "pass", "execute", r#"{"city": "Paris"}"#),
        ("repeated.sse", "pass", "execute", r#"{"city": "Paris"}"#),
        (
            "with_ids.sse",
            "malformed_json",
            "reject",
            r#"{"city": "Paris"}{"city": "Rome"}"#,
        ),
    ] {
        let out = bounded(d, &["import", name, "--out", "o", "--force"]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let stem = name.split('.').next().unwrap();
        let written = fs::read_to_string(d.join(format!("o/{stem}.jsonl"))).unwrap();
        let t: Value = serde_json::from_str(written.trim()).unwrap();
        let calls: Vec<(&str, &str)> = t["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["function"]["name"].as_str().unwrap(),
                    c["function"]["arguments"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(calls, [("get_weather", args)], "{name}: {t}");
        let recs = records(&[d.join(name).to_str().unwrap()]);
        let r = &recs[0];
        assert_eq!(r["labels"]["native"], label, "{name}: {r}");
        assert_eq!(r["profile"]["decision"], decision, "{name}: {r}");
    }
}

/// Probe 44: `import same/m5.json --out same` skipped the named file (it
/// lies under `--out`), wrote nothing and exited 0. A file the user named
/// is reported as not imported, exit 2; one a walk finds there is still
/// passed over, exit 0 (an import's own output).
#[test]
fn a_file_named_under_out_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("same")).unwrap();
    fs::copy(
        root().join("examples/captures/openai-chat/pair_n2.json"),
        dir.path().join("same/m5.json"),
    )
    .unwrap();
    let out = import_in(dir.path(), &["same/m5.json", "--out", "same"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "same/m5.json: not imported: it is under --out same (the output directory is never an input"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(names(&dir.path().join("same")), ["m5.json"]);
    let out = import_in(dir.path(), &["same", "--out", "same"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 file(s) under --out same not read"),
        "{}",
        stderr(&out)
    );
}

/// Probe 44 (the content-filter class), end to end, with the probe's
/// captures: a stop by the provider before the model ended its answer —
/// Anthropic's `refusal` (`m1`, and streamed `a6`), OpenAI's
/// `content_filter` (`m4`), a Responses `incomplete` for `content_filter`
/// (`r4`, whose call item says `completed`) — left a whole last call that
/// was `pass`/`execute`. It is cut: `truncation` in `native`, and the
/// `native` profile executes nothing.
#[test]
fn a_call_the_provider_stopped_early_is_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = [
        (
            "m1.json",
            r#"{"request": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": true, "tools": [{"name": "get_weather", "description": "Get the current weather in a given location", "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}], "messages": [{"role": "user", "content": "What's the weather like in San Francisco?"}]}, "response": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-opus-4-1", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "SF"}}], "stop_reason": "refusal", "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 2}}}"#,
        ),
        (
            "m4.json",
            r#"{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}, "response": {"id": "c1", "object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"X\"}"}}]}, "finish_reason": "content_filter"}]}}"#,
        ),
        (
            "r4.json",
            r#"{"request": {"model": "gpt-5-mini", "input": [{"role": "user", "content": "What is the weather like in Antwerp today?"}], "tools": [{"type": "function", "name": "get_weather", "description": "Get the current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"], "additionalProperties": false}, "strict": true}, {"type": "web_search"}], "tool_choice": "auto", "parallel_tool_calls": true, "max_output_tokens": 1024}, "response": {"id": "resp_68af0c2b9e5c8190", "object": "response", "created_at": 1763800200, "status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "model": "gpt-5-mini-2025-08-07", "output": [{"id": "rs_68af0c2c1a3c8190", "type": "reasoning", "summary": [{"type": "summary_text", "text": "The user asks for Antwerp's weather; call get_weather."}]}, {"id": "fc_68af0c2d4b708190", "type": "function_call", "status": "completed", "arguments": "{\"city\":\"Antwerp\",\"unit\":\"celsius\"}", "call_id": "call_Qk2v9", "name": "get_weather"}], "parallel_tool_calls": true, "tool_choice": "auto", "usage": {"input_tokens": 96, "output_tokens": 58, "total_tokens": 154}}}"#,
        ),
        (
            "a6.sse",
            concat!(
                "event: message_start\n",
                "data: {\"message\": {\"id\": \"msg_1\", \"type\": \"message\", \"role\": \"assistant\", \"model\": \"claude-sonnet-4-5\", \"content\": [], \"stop_reason\": null, \"stop_sequence\": null, \"usage\": {\"input_tokens\": 10, \"cache_creation_input_tokens\": 0, \"cache_read_input_tokens\": 5, \"output_tokens\": 1}}, \"type\": \"message_start\"}\n",
                "\n",
                "event: ping\n",
                "data: {\"type\": \"ping\"}\n",
                "\n",
                "event: content_block_start\n",
                "data: {\"index\": 0, \"content_block\": {\"type\": \"tool_use\", \"id\": \"toolu_0\", \"name\": \"get_weather\", \"input\": {}}, \"type\": \"content_block_start\"}\n",
                "\n",
                "event: content_block_delta\n",
                "data: {\"index\": 0, \"delta\": {\"type\": \"input_json_delta\", \"partial_json\": \"{\\\"location\\\": \\\"SF\\\"}\"}, \"type\": \"content_block_delta\"}\n",
                "\n",
                "event: content_block_stop\n",
                "data: {\"index\": 0, \"type\": \"content_block_stop\"}\n",
                "\n",
                "event: message_delta\n",
                "data: {\"delta\": {\"stop_reason\": \"refusal\", \"stop_sequence\": null}, \"usage\": {\"output_tokens\": 50}, \"type\": \"message_delta\"}\n",
                "\n",
                "event: message_stop\n",
                "data: {\"type\": \"message_stop\"}\n",
            ),
        ),
        (
            "a6.request.json",
            r#"{"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": true, "tools": [{"name": "get_weather", "description": "Get the current weather in a given location", "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}], "messages": [{"role": "user", "content": "What's the weather like in San Francisco?"}]}"#,
        ),
    ];
    for (name, text) in files {
        fs::write(d.join(name), text).unwrap();
    }
    let out = toolgate(&[
        "label",
        "--format",
        "jsonl",
        "--profile",
        "native",
        d.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut got: Vec<(String, String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            (
                r["id"].as_str().unwrap().to_string(),
                r["labels"]["native"].as_str().unwrap().to_string(),
                r["profile"]["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want = |id: &str| {
        (
            id.to_string(),
            "truncation".to_string(),
            "reject".to_string(),
        )
    };
    assert_eq!(got, [want("a6"), want("m1"), want("m4"), want("r4")]);
}

/// Probe s46, bug 1: a call of a tool that the request's `allowed_tools`
/// choice left out passed and executed; it is `wrong_tool`, rejected at
/// the allowlist, in Chat Completions and Responses captures alike.
#[test]
fn a_call_of_a_tool_allowed_tools_left_out_is_wrong_tool() {
    let dir = tempfile::tempdir().unwrap();
    let chat = dir.path().join("chat.json");
    fs::write(
        &chat,
        r#"{"request": {"model": "gpt-5", "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "delete_db", "parameters": {"type": "object"}}}],
          "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required",
            "tools": [{"type": "function", "function": {"name": "get_weather"}}]}}},
        "response": {"object": "chat.completion", "model": "gpt-5", "choices": [{"index": 0,
          "message": {"role": "assistant", "content": null, "refusal": null, "annotations": [],
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "delete_db", "arguments": "{}"}}]},
          "logprobs": null, "finish_reason": "tool_calls"}], "service_tier": "default"}}"#,
    )
    .unwrap();
    let responses = dir.path().join("responses.json");
    fs::write(
        &responses,
        r#"{"request": {"model": "gpt-5", "tools": [
            {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
            {"type": "function", "name": "delete_db", "parameters": {"type": "object"}}],
          "tool_choice": {"type": "allowed_tools", "mode": "required",
            "tools": [{"type": "function", "name": "get_weather"}]}},
        "response": {"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5",
          "output": [{"type": "function_call", "status": "completed", "call_id": "c1", "name": "delete_db", "arguments": "{}"}]}}"#,
    )
    .unwrap();
    for path in [&chat, &responses] {
        let recs = records(&[path.to_str().unwrap()]);
        assert_eq!(recs[0]["labels"]["native"], "wrong_tool", "{path:?}");
        assert_eq!(recs[0]["profile"]["decision"], "reject", "{path:?}");
        assert_eq!(recs[0]["profile"]["gate"], "allowlist", "{path:?}");
    }
}

/// Probe s46, bug 2: the `tool_use` that ends an Anthropic message without
/// a `stop_reason` (a snapshot of a stream cut off) passed and executed;
/// it is `truncation`, and nothing executes.
#[test]
fn an_anthropic_message_without_a_stop_reason_is_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snapshot.json");
    fs::write(
        &path,
        r#"{"request": {"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "tools": [{"name": "run", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]},
          "response": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Cleaning up."},
              {"type": "tool_use", "id": "toolu_1", "name": "run", "input": {"command": "rm -rf /tmp/x"}}],
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}"#,
    )
    .unwrap();
    let recs = records(&[path.to_str().unwrap()]);
    assert_eq!(recs[0]["labels"]["native"], "truncation");
    assert_eq!(recs[0]["profile"]["label"], "truncation");
    assert_eq!(recs[0]["profile"]["decision"], "reject");
}

/// Regression (s47-files): `import` stopped at the first output file it
/// could not write (`cannot write o/a.jsonl: …`, exit 1), so the inputs
/// after it were never imported. Each failure is named now with its input
/// and output, the rest are written, and the run ends with a count and
/// exit 2. The failing output here is a directory in the place of
/// `a.jsonl` (a rename over it fails even as root).
#[test]
fn an_output_that_cannot_be_written_loses_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let pair = root().join("examples/captures/openai-chat/pair_n2.json");
    for name in ["a.json", "b.json", "c.json"] {
        fs::copy(&pair, dir.path().join(name)).unwrap();
    }
    fs::create_dir_all(dir.path().join("o/a.jsonl/inside")).unwrap();
    let out = import_in(
        dir.path(),
        &["a.json", "b.json", "c.json", "--out", "o", "--force"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("toolgate: a.json: not imported: cannot write o/a.jsonl: "),
        "{err}"
    );
    assert!(
        err.contains("toolgate: error: 1 output file(s) could not be written (each named above)"),
        "{err}"
    );
    assert!(err.contains("b.json: 2 transcript(s)"), "{err}");
    assert!(err.contains("c.json: 2 transcript(s)"), "{err}");
    assert_eq!(
        names(&dir.path().join("o")),
        ["a.jsonl", "b.jsonl", "c.jsonl"]
    );
    assert!(dir.path().join("o/a.jsonl/inside").is_dir());
    for name in ["b.jsonl", "c.jsonl"] {
        let text = fs::read_to_string(dir.path().join("o").join(name)).unwrap();
        assert_eq!(text.lines().count(), 2, "{name}: {text}");
    }
    // No temporary file of the failed write is left.
    let leftovers: Vec<_> = fs::read_dir(dir.path().join("o"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Probe s47: an OpenAI chat log whose request set `parallel_tool_calls:
/// false` and whose answer made two calls was decided `execute` by `import`
/// and `label`, where the proxy rejected it at the `single` gate. The
/// written transcript carries `parallel_tool_calls: false`; it and the log
/// read directly are rejected at `single` (label `pass`: the model did
/// nothing wrong); the same exchange without the flag executes both calls.
/// A `parallel_tool_calls` that is not a boolean is a load error naming
/// it, the other lines written.
#[test]
fn a_chat_log_under_parallel_tool_calls_false_is_rejected_at_single() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("chat_log.jsonl");
    let line = |id: &str, flag: &str| {
        format!(
            r#"{{"id": "{id}", "request": {{"model": "gpt-4o", "messages": [{{"role": "user", "content": "Weather in Paris and Rome?"}}],
            "tools": [{{"type": "function", "function": {{"name": "get_weather", "parameters": {{"type": "object",
              "properties": {{"city": {{"type": "string"}}}}, "required": ["city"]}}}}}}]{flag}}},
            "response": {{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o", "choices": [{{"index": 0,
              "message": {{"role": "assistant", "content": null, "tool_calls": [
                {{"id": "a", "type": "function", "function": {{"name": "get_weather", "arguments": "{{\"city\": \"Paris\"}}"}}}},
                {{"id": "b", "type": "function", "function": {{"name": "get_weather", "arguments": "{{\"city\": \"Rome\"}}"}}}}]}},
              "finish_reason": "tool_calls"}}]}}}}"#
        )
        .replace('\n', " ")
    };
    fs::write(
        &log,
        [
            line("one", r#", "parallel_tool_calls": false"#),
            line("any", ""),
            line("odd", r#", "parallel_tool_calls": "false""#),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let out_dir = dir.path().join("o");
    let out = toolgate(&[
        "import",
        log.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "chat_log.jsonl:3: the request's `parallel_tool_calls` must be true or false, not \"false\""
        ),
        "{err}"
    );
    let written_path = out_dir.join("chat_log.jsonl");
    let written = fs::read_to_string(&written_path).unwrap();
    let objects: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), 2);
    assert_eq!(objects[0]["parallel_tool_calls"], false);
    assert!(objects[1].get("parallel_tool_calls").is_none());
    // The written transcripts, and the log itself, replayed by the profile
    // that reads native calls.
    for path in [&written_path, &log] {
        let out = toolgate(&[
            "label",
            "--format",
            "jsonl",
            "--profile",
            "native",
            path.to_str().unwrap(),
        ]);
        let recs: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|r: &Value| r.get("error").is_none())
            .collect();
        let got: Vec<(&str, &str, &Value, &str)> = recs
            .iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap(),
                    r["profile"]["decision"].as_str().unwrap(),
                    &r["profile"]["gate"],
                    r["labels"]["native"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("one", "reject", &Value::from("single"), "pass"),
                ("any", "execute", &Value::Null, "pass"),
            ],
            "{path:?}"
        );
    }
}

/// Regression (s48-files): a stream's `STEM.request.json` that could not
/// be read (here UTF-16, as PowerShell's `>` writes it) was passed over:
/// `label` and `import` judged the stream with the tools unknown, exit 0.
/// Both name the request file and why (exit 2); the stream is still read.
#[test]
fn a_streams_unreadable_request_file_is_named_by_label_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let captures = root().join("examples/captures/openai-chat");
    fs::copy(captures.join("stream.sse"), dir.path().join("s.sse")).unwrap();
    let request = fs::read_to_string(captures.join("stream.request.json")).unwrap();
    let utf16: Vec<u8> = format!("\u{feff}{request}")
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    fs::write(dir.path().join("s.request.json"), utf16).unwrap();
    let sse = dir.path().join("s.sse");
    let out_dir = dir.path().join("out");
    let why = "s.request.json: the request of s.sse is not read: UTF-16LE text (byte-order mark FF FE), not UTF-8";
    for args in [
        vec!["label", "--format", "jsonl", sse.to_str().unwrap()],
        vec![
            "import",
            sse.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    ] {
        let out = toolgate(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    }
    // The stream itself was imported.
    assert!(
        fs::read_to_string(out_dir.join("s.jsonl"))
            .unwrap()
            .contains("get_weather")
    );
}
