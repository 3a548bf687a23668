//! `strata difftest`: a run from the command line, and the two endpoints with the session
//! settings that make MariaDB answer as MySQL 8 would over Strata's collation.

use clap::Args;

use crate::server::Endpoint;
use crate::{run, Config};

/// Session settings on the peer: strings compare by their bytes, trailing spaces included
/// (Strata's comparison), and the SQL mode is MySQL 8's default.
const PEER_SESSION_SETUP: &[&str] = &[
    "SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin",
    "SET SESSION sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
    "SET SESSION max_statement_time = 30",
];

/// The MariaDB peer.
pub fn peer_endpoint(host: &str, port: u16, user: &str, password: &str) -> Endpoint {
    Endpoint {
        label: "mariadb".into(),
        host: host.into(),
        port,
        user: user.into(),
        password: password.into(),
        session_setup: PEER_SESSION_SETUP.iter().map(|s| s.to_string()).collect(),
    }
}

/// A Strata SQL node (or playground).
pub fn strata_endpoint(host: &str, port: u16, user: &str, password: &str) -> Endpoint {
    Endpoint {
        label: "strata".into(),
        host: host.into(),
        port,
        user: user.into(),
        password: password.into(),
        session_setup: Vec::new(),
    }
}

/// Runs seeded queries on Strata and on MariaDB and compares the answers; exits with 1 when
/// any differ, after printing a minimal reproducer for each.
#[derive(Args, Debug)]
pub struct DifftestArgs {
    /// The run's seed (default: drawn from the clock, and printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The number of the first query: with the seed of an earlier run, replays from there.
    #[arg(long, default_value_t = 0)]
    pub first: usize,
    /// Queries to run.
    #[arg(long, default_value_t = 2000)]
    pub queries: usize,
    /// Queries over each drawn world of tables before the next.
    #[arg(long, default_value_t = 250)]
    pub queries_per_world: usize,
    #[arg(long, default_value = "127.0.0.1")]
    pub strata_host: String,
    #[arg(long, default_value_t = 4000)]
    pub strata_port: u16,
    #[arg(long, default_value = "root")]
    pub strata_user: String,
    #[arg(long, default_value = "")]
    pub strata_password: String,
    #[arg(long, default_value = "127.0.0.1")]
    pub peer_host: String,
    #[arg(long, default_value_t = 3306)]
    pub peer_port: u16,
    #[arg(long, default_value = "sbtest")]
    pub peer_user: String,
    #[arg(long, default_value = "password")]
    pub peer_password: String,
    /// The database created and dropped on both servers.
    #[arg(long, default_value = "difftest")]
    pub database: String,
    /// Every n-th query also runs as a prepared statement on Strata (0: never).
    #[arg(long, default_value_t = 4)]
    pub binary_every: usize,
    /// Report mismatches as found, without shrinking them.
    #[arg(long)]
    pub no_shrink: bool,
}

/// Runs `strata difftest`; Ok(false) when answers differed.
pub fn main(args: DifftestArgs) -> Result<bool, String> {
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let config = Config {
        seed,
        first: args.first,
        queries: args.queries,
        queries_per_world: args.queries_per_world,
        strata: strata_endpoint(
            &args.strata_host,
            args.strata_port,
            &args.strata_user,
            &args.strata_password,
        ),
        peer: peer_endpoint(
            &args.peer_host,
            args.peer_port,
            &args.peer_user,
            &args.peer_password,
        ),
        database: args.database,
        binary_every: args.binary_every,
        shrink: !args.no_shrink,
    };
    println!("difftest: seed {seed}, {} queries", config.queries);
    let report = run(&config, &mut |line| println!("{line}"))?;
    println!("difftest: seed {seed}: {}", report.summary());
    Ok(report.mismatches.is_empty())
}
