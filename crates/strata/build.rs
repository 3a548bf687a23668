//! Puts the commit the binary is built from into `STRATA_GIT_HASH` (`/status`), or
//! "unknown" outside a git checkout.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let hash = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=STRATA_GIT_HASH={hash}");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        // A new commit moves HEAD or the branch it names.
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            if std::path::Path::new(&format!("{dir}/{branch}")).exists() {
                println!("cargo:rerun-if-changed={dir}/{branch}");
            }
        }
        // Naming a file that does not exist would run this script on every build.
        if std::path::Path::new(&format!("{dir}/packed-refs")).exists() {
            println!("cargo:rerun-if-changed={dir}/packed-refs");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
