//! `strata bench tpcc` as a bounded child process, and the JSON result it writes.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use strata_bench::result::{BenchResult, TpccResult};

pub use super::run_bounded;

/// Bound on each `strata bench tpcc` command; a 1-warehouse load takes about 10 s on MariaDB.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

/// `strata bench tpcc <args>`; returns (success, stdout, stderr).
pub fn tpcc(args: &[String]) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_strata"));
    command.args(["bench", "tpcc"]).args(args);
    let started = Instant::now();
    let out = run_bounded(&mut command, COMMAND_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!(
        "strata bench tpcc {} ({:.1} s, {}):\n{stdout}{stderr}",
        args.join(" "),
        started.elapsed().as_secs_f64(),
        out.status
    );
    (out.status.success(), stdout, stderr)
}

pub fn read_result(path: &Path) -> TpccResult {
    let text = std::fs::read_to_string(path).expect("the result file");
    match serde_json::from_str::<BenchResult>(&text).expect("a strata bench result") {
        BenchResult::Tpcc(result) => result,
        other => panic!("not a TPC-C result: {other:?}"),
    }
}
