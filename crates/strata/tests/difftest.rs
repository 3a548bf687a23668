//! The differential tester's seeded run: a real `strata playground` and the MariaDB peer
//! (started by `/work/shared/bench/mariadb-peer.sh`, which installs it when missing and needs
//! root) answer the same generated queries over six-table worlds, and every answer must match
//! (see crates/difftest). `STRATA_TEST_SEED` replays another seed; `scripts/difftest.sh` runs
//! longer.

mod common;

use common::Playground;

/// The run's seed unless `STRATA_TEST_SEED` says otherwise: a fixed one, so that the test
/// command is a regression test; new seeds are explored with `scripts/difftest.sh`.
const SEED: u64 = 20261203;
/// Queries of the run (the bar is 2,000 over at least six tables; they take seconds).
const QUERIES: usize = 10_000;

#[test]
fn strata_answers_as_mariadb_does() {
    let _peer = common::MariadbPeer::start();
    let playground = Playground::start();
    let seed = match std::env::var("STRATA_TEST_SEED") {
        Ok(text) => text.trim().parse().expect("STRATA_TEST_SEED: an integer"),
        Err(_) => SEED,
    };
    let config = strata_difftest::Config {
        seed,
        first: 0,
        queries: QUERIES,
        queries_per_world: 300,
        strata: strata_difftest::cli::strata_endpoint("127.0.0.1", playground.port, "root", ""),
        peer: strata_difftest::cli::peer_endpoint("127.0.0.1", 3306, "sbtest", "password"),
        database: format!("difftest_{}", std::process::id()),
        binary_every: 4,
        shrink: true,
    };
    let started = std::time::Instant::now();
    let report = strata_difftest::run(&config, &mut |line| println!("{line}"))
        .unwrap_or_else(|e| panic!("difftest run (seed {seed}): {e}"));
    println!(
        "difftest: seed {seed}: {} in {:.0?}",
        report.summary(),
        started.elapsed()
    );
    assert_eq!(report.queries, QUERIES);
    // The generator writes SQL that MySQL accepts: a run where most queries fail on both sides
    // compares nothing.
    assert!(
        report.both_failed * 20 < report.queries,
        "{} of {} queries failed on both servers",
        report.both_failed,
        report.queries
    );
    assert!(report.rows_matched > QUERIES, "too few rows compared");
    assert!(
        report.mismatches.is_empty(),
        "{} answers differ from MariaDB's (reproducers above; replay with STRATA_TEST_SEED={seed})",
        report.mismatches.len()
    );
}
