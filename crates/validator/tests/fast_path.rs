//! The batch fast path ([`Engine::outcome_as`]: prefilter, shared empty
//! results, no per-mode gates) changes no label, decision or finding: over
//! the bundled corpus, the peer corpora (when present) and every mode's
//! example whole and cut in half, it equals the outcome derived from the
//! full replay ([`Engine::outcome_plain`]) under several profiles; and the
//! profile row alone ([`Row`]) equals the full replay's profile row.
//!
//! It also pins the rule that lets the fast path skip lenient extraction:
//! for every mode, a strict extraction that never read its strictness finds
//! exactly what the lenient one finds.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use toolgate_core::{Transcript, load_paths};
use toolgate_formats::{Input, ParamTypes, Strictness, reads_strictness};
use toolgate_validator::{Engine, Profile, Row};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every readable bundled transcript, and the peer corpora's when present.
fn corpus() -> Vec<Transcript> {
    let mut paths = vec![root().join("transcripts")];
    let peers = root().join("../shared/corpora/peers");
    if peers.is_dir() {
        paths.push(peers);
    } else {
        eprintln!("peer corpora absent: bundled corpus only");
    }
    load_paths(&paths)
        .into_iter()
        .filter_map(Result::ok)
        .collect()
}

/// Every mode's example, whole and cut in half, as a transcript of its own.
fn examples(engine: &Engine) -> Vec<Transcript> {
    let base = corpus().into_iter().next().unwrap();
    let mut out = Vec::new();
    for e in &engine.extractors {
        let ex = e.example();
        let half = ex.floor_char_boundary(ex.len() / 2);
        for (i, text) in [ex, &ex[..half], &format!("Sure. {ex}")]
            .into_iter()
            .enumerate()
        {
            let mut t = base.clone();
            t.output = text.to_string();
            t.tool_calls = None;
            t.chunks = None;
            t.reasoning = None;
            t.id = format!("{}-{i}", e.name());
            out.push(t);
        }
    }
    out
}

fn profiles() -> Vec<Profile> {
    let mut list = vec![Profile::default()];
    for name in [
        "hermes",
        "kimi",
        "json",
        "harmony",
        "functionary",
        "glm",
        "mistral",
    ] {
        list.push(Profile::reading(name));
    }
    let mut lenient = Profile::reading("hermes");
    lenient.allow_repairs = true;
    list.push(lenient);
    // A mode named twice is asked for twice (the fast path clones it then).
    let mut repeated = Profile::reading("hermes");
    repeated.fallbacks = vec!["hermes".into(), "json".into(), "json".into()];
    repeated.fallbacks_enabled = true;
    list.push(repeated);
    list
}

fn check(engine: &Engine, transcripts: &[Transcript]) -> usize {
    let mut compared = 0;
    for profile in profiles() {
        for t in transcripts {
            let fast = engine.outcome_as(t, &profile);
            let plain = engine.outcome_plain(t, &profile);
            assert_eq!(
                fast,
                plain,
                "fast and plain paths differ for {} ({}) under {}",
                t.location(),
                t.id,
                profile.name
            );
            // The profile row alone is the full replay's profile row.
            let row = engine.judge(t, &profile, Row);
            assert_eq!(
                row,
                plain.profile,
                "the profile row differs from the full replay's for {} ({}) under {}",
                t.location(),
                t.id,
                profile.name
            );
            compared += 1;
        }
    }
    compared
}

#[test]
fn the_fast_path_equals_the_full_replay() {
    let engine = Engine::new(Profile::default());
    let mut transcripts = corpus();
    assert!(
        transcripts.len() > 250,
        "corpus found: {}",
        transcripts.len()
    );
    transcripts.extend(examples(&engine));
    let n = check(&engine, &transcripts);
    assert!(n > 2_000, "{n} comparisons");
}

#[test]
fn selected_modes_report_only_those_and_keep_the_profile() {
    let mut engine = Engine::new(Profile::default());
    engine
        .select_modes(&["hermes".to_string(), "kimi".to_string()])
        .unwrap();
    let transcripts = examples(&engine);
    check(&engine, &transcripts);
    let t = transcripts.iter().find(|t| t.id == "hermes-0").unwrap();
    let fast = engine.outcome_as(t, &Profile::reading("hermes"));
    let modes: Vec<&str> = fast.strict.iter().map(|m| m.mode).collect();
    assert_eq!(modes, ["hermes", "kimi"]);
    assert!(fast.strict[0].found && fast.strict[0].parsed);
    assert!(!fast.strict[1].found);
    // The profile's pipeline still runs its own mode, reported or not.
    let glm = engine.outcome_as(t, &Profile::reading("glm"));
    assert_eq!(fast.profile.parse_mode.as_deref(), Some("hermes"));
    assert_eq!(glm.profile.parse_mode.as_deref(), None);
    let t = transcripts.iter().find(|t| t.id == "glm-0").unwrap();
    let glm = engine.outcome_as(t, &Profile::reading("glm"));
    assert_eq!(glm.profile.parse_mode.as_deref(), Some("glm"));
    assert_eq!(glm.strict.len(), 2);
    let err = engine.select_modes(&["nonsense".to_string()]).unwrap_err();
    assert!(err.contains("unknown mode \"nonsense\""), "{err}");
}

/// Each mode's example spoiled the ways the lenient replay repairs: single
/// quotes, a trailing comma, a Python literal, a raw newline in a string,
/// an invalid escape.
fn spoiled(engine: &Engine) -> Vec<Transcript> {
    let mut out = Vec::new();
    for t in examples(engine) {
        let ex = &t.output;
        let spoils = [
            ex.replace('"', "'"),
            ex.replacen('}', ",}", 1),
            ex.replacen("true", "True", 1).replacen(": 1", ": None", 1),
            ex.replacen("\"", "\"line\nbreak ", 1),
            ex.replacen("\"", "\"\\q", 1),
        ];
        for (i, spoilt) in spoils.into_iter().enumerate() {
            if spoilt != *ex {
                let mut s = t.clone();
                s.output = spoilt;
                s.id = format!("{}-spoilt-{i}", t.id);
                out.push(s);
            }
        }
    }
    out
}

#[test]
fn a_strict_extraction_that_never_read_its_strictness_is_the_lenient_one() {
    let engine = Engine::new(Profile::default());
    let mut transcripts = corpus();
    transcripts.extend(examples(&engine));
    transcripts.extend(spoiled(&engine));
    let (mut skipped, mut differ) = (0, 0);
    for t in &transcripts {
        let types = ParamTypes::from_transcript(t);
        let input = Input::from_transcript(t, &types);
        for e in &engine.extractors {
            let (strict, read) = reads_strictness(|| e.extract(&input, Strictness::Strict));
            let lenient = e.extract(&input, Strictness::Lenient);
            if !read {
                assert_eq!(
                    strict,
                    lenient,
                    "{} never read its strictness on {} ({}) yet lenient differs",
                    e.name(),
                    t.location(),
                    t.id
                );
                skipped += 1;
            } else if strict != lenient {
                differ += 1;
            }
        }
    }
    // Both sides are exercised: most extractions skip, and repairs happen.
    assert!(skipped > 10_000, "{skipped} extractions never read it");
    assert!(differ > 50, "{differ} extractions where lenient differs");
}

#[test]
fn reads_of_the_strictness_are_noted_and_nest() {
    let ((), outer) = reads_strictness(|| {
        let ((), inner) = reads_strictness(|| {});
        assert!(!inner);
        let (lenient, inner) = reads_strictness(|| Strictness::Lenient.is_lenient());
        assert!(lenient && inner);
    });
    assert!(outer, "an inner read is also the outer one's");
    let (equal, read) = reads_strictness(|| Strictness::Strict == Strictness::Strict);
    assert!(equal && read, "equality is a read");
    let (text, read) = reads_strictness(|| format!("{:?}", Strictness::Strict));
    assert!(text == "Strict" && read, "Debug is a read");
}
