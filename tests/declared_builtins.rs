//! Declared formats are the built-in engines (issue 27 item 3): the
//! built-in formats written again as `[[format]]` tables
//! (`tests/fixtures/declared/builtins.toml`, each `NAME` as `NAME_decl`),
//! loaded as `--formats FILE` loads them, label every bundled transcript
//! byte for byte as the built-in modes do, strict and lenient, candidates
//! included.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use toolgate_core::load::load_paths;
use toolgate_formats::Catalog;
use toolgate_validator::{Engine, ModeResult, Profile};

const FILE: &str = "tests/fixtures/declared/builtins.toml";

/// A catalog holding the declared formats of `FILE`.
fn declared() -> Catalog {
    let text = std::fs::read_to_string(FILE).unwrap();
    let mut catalog = Catalog::new();
    catalog
        .add_formats(&text)
        .unwrap_or_else(|e| panic!("{FILE}: {e}"));
    catalog
}

/// A mode result as text, under the built-in mode's name.
fn shown(r: &ModeResult, declared: &str, builtin: &str) -> String {
    let mut candidates = r.candidates.clone();
    for c in &mut candidates {
        assert_eq!(c.mode, declared);
        c.mode = builtin.to_string().into();
    }
    format!(
        "{}\n{:?}\n{}\n{}\n{:?}",
        serde_json::to_string(&candidates).unwrap(),
        r.label,
        r.reason.replace(declared, builtin),
        serde_json::to_string(&r.calls).unwrap(),
        r.strictness,
    )
}

#[test]
fn declared_builtins_label_the_corpus_as_the_builtins_do() {
    let pairs: Vec<(String, String)> = declared()
        .into_custom()
        .iter()
        .map(|d| {
            let name = d.name().to_string();
            let builtin = name.strip_suffix("_decl").unwrap().to_string();
            assert!(toolgate_formats::by_name(&builtin).is_some(), "{builtin}");
            (name, builtin)
        })
        .collect();
    assert!(pairs.len() >= 12, "only {} built-ins declared", pairs.len());
    let modes = declared().modes(&Profile::builtin_names()).unwrap();
    let engine = Engine::with_extractors(modes, Profile::default()).unwrap();
    let transcripts = load_paths(&[PathBuf::from("transcripts")]);
    assert!(transcripts.len() > 300, "{} transcripts", transcripts.len());
    let mut compared = 0;
    let mut differ = Vec::new();
    for t in transcripts {
        let t = t.unwrap();
        let replay = engine.replay(&t);
        for (decl, builtin) in &pairs {
            for (results, side) in [(&replay.strict, "strict"), (&replay.lenient, "lenient")] {
                let of = |m: &str| results.iter().find(|r| r.mode == m).unwrap();
                let (d, b) = (of(decl), of(builtin));
                let (d, b) = (shown(d, decl, builtin), shown(b, builtin, builtin));
                compared += 1;
                if d != b {
                    differ.push(format!(
                        "{} {side} {decl}:\n  built-in: {b}\n  declared: {d}",
                        t.id
                    ));
                }
            }
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {compared} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    // Every transcript, strict and lenient, every pair.
    assert!(compared >= 2 * pairs.len() * 300, "{compared}");
}

#[test]
fn declared_rows_are_the_builtin_rows() {
    // What the shared rules and the stream read from a row: the engine and
    // payload, the missing-closer pairs, the stop token, the stream openers.
    let mut differ = Vec::new();
    for d in declared().into_custom() {
        let builtin = toolgate_formats::by_name(d.name().strip_suffix("_decl").unwrap()).unwrap();
        let (row, want) = (d.row().unwrap(), builtin.row().unwrap());
        assert_eq!(row.name, d.name());
        let got = (
            row.engine,
            row.payload,
            row.blocks,
            row.stop_token,
            d.openers(),
        );
        let want = (
            want.engine,
            want.payload,
            want.blocks,
            want.stop_token,
            builtin.openers(),
        );
        assert!(got.4.is_some(), "{}", d.name());
        if got != want {
            differ.push(format!("{}:\n  {got:?}\n  {want:?}", d.name()));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
