//! Embeds the git commit in `toolgate --version` (`0.1.0 (abc1234)`), or
//! `unknown commit` outside a git checkout (a source tarball, a vendored copy).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    println!(
        "cargo:rustc-env=TOOLGATE_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown commit")
    );
    // Rebuild when HEAD moves: HEAD itself (a checkout) and the branch it
    // names (a commit). Worktrees keep both under their own git paths.
    // A path that does not exist would make cargo rerun this every build.
    let watch = |p: String| {
        if std::path::Path::new(&p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    };
    for path in ["HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            watch(p);
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(p) = git(&["rev-parse", "--git-path", &branch])
    {
        watch(p);
    }
    println!("cargo:rerun-if-changed=build.rs");
}
