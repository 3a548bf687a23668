//! `strata`: the one binary of Strata.
//!
//! `strata playground` runs every role in one process: the MySQL protocol server, the SQL
//! layer, the transaction client, one KV store on RocksDB and a local timestamp oracle, all
//! wired in-process through the same KV API a cluster wires over the network.
//!
//! A cluster runs the roles as processes: `strata pd` (placement driver and timestamp
//! oracle), `strata kv` (KV nodes) and `strata server` (stateless SQL nodes), talking gRPC.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, Subcommand};

mod ctl;
mod dashboard;
mod local_cluster;
mod playground;
mod ports;
mod roles;
mod signals;
mod status;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "strata",
    version,
    about = "Strata: a MySQL-compatible distributed SQL database"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Starts every role in one process: the embedded single-node database.
    Playground(playground::PlaygroundArgs),
    /// Runs a placement driver: timestamps, ids, stores and the region table of a cluster.
    Pd(roles::PdArgs),
    /// Runs a KV node of a cluster: transactional storage served over gRPC.
    Kv(roles::KvArgs),
    /// Runs a stateless SQL node of a cluster: the MySQL protocol over the cluster's KV nodes.
    Server(roles::ServerArgs),
    /// Benchmarks Strata or any MySQL-protocol server: sysbench matrices and reports.
    #[command(subcommand)]
    Bench(strata_bench::cli::BenchCommand),
    /// Runs seeded queries on Strata and on MariaDB and compares the answers.
    Difftest(strata_difftest::cli::DifftestArgs),
    /// Looks at a running cluster through its placement drivers, and moves region leaders.
    Ctl(ctl::CtlArgs),
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("STRATA_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Pd(_) | Command::Kv(_) | Command::Server(_)
    ) {
        if let Err(e) = signals::stop_with_playground() {
            eprintln!("strata: {e}");
            std::process::exit(1);
        }
    }
    let result = match cli.command {
        Command::Playground(args) => playground::run(args),
        Command::Pd(args) => roles::run_pd(args),
        Command::Kv(args) => roles::run_kv(args),
        Command::Server(args) => roles::run_server(args),
        Command::Bench(command) => strata_bench::cli::run(command).map_err(Into::into),
        Command::Ctl(args) => ctl::run(args).map_err(Into::into),
        Command::Difftest(args) => match strata_difftest::cli::main(args) {
            Ok(true) => Ok(()),
            Ok(false) => std::process::exit(1),
            Err(e) => Err(e.into()),
        },
    };
    if let Err(e) = result {
        eprintln!("strata: {e}");
        std::process::exit(1);
    }
}

/// The default data folder of the playground.
pub fn default_data_dir() -> PathBuf {
    PathBuf::from("strata-data")
}

#[allow(dead_code)]
fn _assert_send_sync<T: Send + Sync>(_: &Arc<T>) {}
