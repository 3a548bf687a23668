//! The command line of `strata bench`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::client::Target;
use crate::result::BenchResult;
use crate::server::{External, Playground, Server};
use crate::sysbench::{self, SysbenchConfig};
use crate::tpcc;

/// `strata bench …`.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Drives the real sysbench 1.0.20 over a matrix of workloads and thread counts.
    #[command(subcommand)]
    Sysbench(Box<SysbenchCommand>),
    /// TPC-C as go-tpc (`tiup bench tpcc`) runs it: prepare, run, check, cleanup.
    #[command(subcommand)]
    Tpcc(Box<TpccCommand>),
    /// Renders result files as Markdown and one HTML page with charts.
    Report(ReportArgs),
}

/// `strata bench sysbench …`.
#[derive(Subcommand, Debug)]
pub enum SysbenchCommand {
    /// Creates the database, loads the sbtest tables (oltp_common prepare) and runs ANALYZE TABLE.
    Prepare(PrepareArgs),
    /// Runs every workload at every thread count and writes one JSON result file.
    Run(RunArgs),
}

/// Where the server is and how to log in (the flags of go-tpc); shared by every command.
#[derive(Args, Debug, Clone)]
pub struct LoginArgs {
    /// Server host (an IP address, so that clients use TCP).
    #[arg(short = 'H', long, default_value = "127.0.0.1")]
    pub host: String,
    /// Server port.
    #[arg(short = 'P', long, default_value_t = 4000)]
    pub port: u16,
    /// User name.
    #[arg(short = 'U', long, default_value = "root")]
    pub user: String,
    /// Password.
    #[arg(short = 'p', long, default_value = "")]
    pub password: String,
}

impl LoginArgs {
    fn target(&self, db: &str) -> Target {
        Target {
            host: self.host.clone(),
            port: self.port,
            user: self.user.clone(),
            password: self.password.clone(),
            db: db.to_string(),
        }
    }
}

/// The server and database of a sysbench run.
#[derive(Args, Debug, Clone)]
pub struct ConnectionArgs {
    #[command(flatten)]
    pub login: LoginArgs,
    /// Database (created if missing).
    #[arg(short = 'D', long, default_value = "sbtest")]
    pub db: String,
}

impl ConnectionArgs {
    pub(crate) fn target(&self) -> Target {
        self.login.target(&self.db)
    }
}

/// Which server is measured and how the tool may control it.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Start a Strata playground in this folder (data in DIR/data) on --host/--port and stop it
    /// at the end; its process is sampled and its data can be restored between runs.
    #[arg(long, value_name = "DIR")]
    pub playground: Option<PathBuf>,
    /// The `strata` binary for --playground (default: this binary).
    #[arg(long, value_name = "PATH")]
    pub strata_binary: Option<PathBuf>,
    /// Process id of the server to sample (repeatable).
    #[arg(long = "server-pid", value_name = "PID")]
    pub server_pids: Vec<u32>,
    /// Sample every process with this name, looked up before each run (e.g. mariadbd).
    #[arg(long, value_name = "NAME")]
    pub server_process: Option<String>,
    /// The server's data folder: its size is recorded, and --restore copies it.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Shell command that stops the outside server (for --restore).
    #[arg(long, value_name = "CMD")]
    pub stop_command: Option<String>,
    /// Shell command that starts the outside server (for --restore).
    #[arg(long, value_name = "CMD")]
    pub start_command: Option<String>,
    /// The outside Strata server's status port (`host:port`): its /metrics is read before and
    /// after each run, for server-side latency and cache figures.
    #[arg(long, value_name = "HOST:PORT")]
    pub server_status: Option<String>,
}

impl ServerArgs {
    fn server(&self, target: &Target) -> Result<Server, String> {
        if let Some(dir) = &self.playground {
            let binary = match &self.strata_binary {
                Some(b) => b.clone(),
                None => std::env::current_exe().map_err(|e| format!("this binary: {e}"))?,
            };
            return Ok(Server::Playground(Playground::new(
                binary,
                absolute(dir),
                target.clone(),
            )));
        }
        Ok(Server::External(External {
            pids: self.server_pids.clone(),
            process_name: self.server_process.clone(),
            data_dir: self.data_dir.as_deref().map(absolute),
            stop_command: self.stop_command.clone(),
            start_command: self.start_command.clone(),
            snapshot_dir: None,
            status_address: self.server_status.clone(),
            target: target.clone(),
        }))
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The data set.
#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    /// Number of sbtest tables.
    #[arg(long, default_value_t = 4)]
    pub tables: u32,
    /// Rows per table.
    #[arg(long, default_value_t = 100_000)]
    pub table_size: u64,
    /// Threads that load the tables.
    #[arg(long, default_value_t = 4)]
    pub prepare_threads: u32,
    /// The sysbench binary.
    #[arg(long, default_value = "sysbench")]
    pub sysbench: String,
}

/// `strata bench sysbench prepare`.
#[derive(Args, Debug)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Where sysbench's own output goes.
    #[arg(long, default_value = "bench-raw")]
    pub raw_dir: PathBuf,
}

/// `strata bench sysbench run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Prepare the data set first (as `strata bench sysbench prepare` does).
    #[arg(long)]
    pub prepare: bool,
    /// Comma list of workloads (default: the eight oltp_* workloads).
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Comma list of thread counts.
    #[arg(short = 'T', long, value_delimiter = ',', default_values_t = vec![1, 8, 32, 128])]
    pub threads: Vec<u32>,
    /// Seconds of each measured run.
    #[arg(long, default_value_t = 60)]
    pub time: u32,
    /// Seconds of discarded warm-up before each measured run (sysbench 1.0 has no
    /// --warmup-time, so this is a separate run).
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,
    /// sysbench --report-interval.
    #[arg(long, default_value_t = 1)]
    pub report_interval: u32,
    /// sysbench --rand-type.
    #[arg(long, default_value = "uniform")]
    pub rand_type: String,
    /// sysbench --percentile.
    #[arg(long, default_value_t = 95)]
    pub percentile: u32,
    /// sysbench --mysql-ignore-errors (default: sysbench's own, 1213,1020,1205).
    #[arg(long, default_value = "")]
    pub mysql_ignore_errors: String,
    /// Further sysbench argument for every run (repeatable), e.g. --extra=--auto-inc=off.
    #[arg(long = "extra", allow_hyphen_values = true)]
    pub extra: Vec<String>,
    /// Restore the prepared data before every run of a write workload, as published reports do.
    #[arg(long)]
    pub restore: bool,
    /// Name of the system under test in reports (default: the server's VERSION()).
    #[arg(long, default_value = "")]
    pub label: String,
    /// The JSON result file.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Where sysbench's own output goes (default: next to --out, `<name>-raw/`).
    #[arg(long)]
    pub raw_dir: Option<PathBuf>,
}

/// `strata bench report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result files; the first is the baseline the others are compared with.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Output folder for report.md and report.html.
    #[arg(long, default_value = "bench-report")]
    pub out: PathBuf,
}

/// `strata bench tpcc …`.
#[derive(Subcommand, Debug)]
pub enum TpccCommand {
    /// Creates the database (if missing) and the nine tables, and loads them with text
    /// multi-row INSERTs over -T connections.
    Prepare(TpccPrepareArgs),
    /// Runs the five TPC-C transactions with server-side prepared statements and prints
    /// tpmC, tpmTotal and efficiency as go-tpc does.
    Run(TpccRunArgs),
    /// Checks the consistency conditions of TPC-C 3.3.2.1-12 in one snapshot; exits non-zero
    /// when one fails.
    Check(TpccCheckArgs),
    /// Drops the nine tables.
    Cleanup(TpccConnectionArgs),
}

/// The server and database of a TPC-C run.
#[derive(Args, Debug, Clone)]
pub struct TpccConnectionArgs {
    #[command(flatten)]
    pub login: LoginArgs,
    /// Database (created by prepare if missing).
    #[arg(short = 'D', long, default_value = "tpcc")]
    pub db: String,
}

impl TpccConnectionArgs {
    fn target(&self) -> Target {
        self.login.target(&self.db)
    }
}

/// `strata bench tpcc prepare`.
#[derive(Args, Debug)]
pub struct TpccPrepareArgs {
    #[command(flatten)]
    pub connection: TpccConnectionArgs,
    /// Number of warehouses.
    #[arg(long, default_value_t = 10)]
    pub warehouses: u32,
    /// Connections that load in parallel.
    #[arg(short = 'T', long, default_value_t = 1)]
    pub threads: u32,
    /// Seed of the generated data (default: from the clock; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run all twelve consistency checks after loading (as go-tpc does unless --no-check).
    #[arg(long)]
    pub check: bool,
}

/// `strata bench tpcc run`.
#[derive(Args, Debug)]
#[command(
    after_help = "Errors: lock conflicts (1213 deadlock, 1205 lock wait timeout, \
    8002, 9007 write conflict) are rolled back, not retried, and counted under <NAME>_ERR; \
    the worker goes on. Any other error stops the run unless --ignore-error is given, in which \
    case it is counted the same way and the worker goes on (reconnecting if needed). The \
    intentional 1% New-Order rollback counts as a success, as in go-tpc."
)]
pub struct TpccRunArgs {
    #[command(flatten)]
    pub connection: TpccConnectionArgs,
    /// Number of warehouses (as loaded by prepare).
    #[arg(long, default_value_t = 10)]
    pub warehouses: u32,
    /// Worker connections.
    #[arg(short = 'T', long, default_value_t = 1)]
    pub threads: u32,
    /// How long to run: seconds, or with a unit (90s, 10m, 1h).
    #[arg(long, default_value = "1m", value_parser = tpcc::run::parse_duration)]
    pub time: std::time::Duration,
    /// Time between `[Current]` progress lines: seconds, or with a unit (30s, 1m).
    #[arg(long, default_value = "10s", value_parser = tpcc::run::parse_duration)]
    pub interval: std::time::Duration,
    /// Cards per 100 of New-Order, Payment, Order-Status, Delivery, Stock-Level.
    #[arg(long, default_value = "45,43,4,4,4", value_parser = tpcc::run::parse_weights)]
    pub weight: [u32; 5],
    /// Count errors other than lock conflicts and go on, instead of stopping the run.
    #[arg(long)]
    pub ignore_error: bool,
    /// Seed of the workers' random inputs (default: from the clock; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Name of the system under test in reports (default: the server's VERSION()).
    #[arg(long, default_value = "")]
    pub label: String,
    /// Write the result as JSON to this file (the format `strata bench report` reads).
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// `json` also prints the result as JSON on stdout at the end (go-tpc's --output); the
    /// default `plain` prints only the progress and summary lines.
    #[arg(long, value_name = "FORMAT", default_value = "plain", value_parser = ["plain", "json"])]
    pub output: String,
    /// Process id of the server to sample for CPU, memory and IO (repeatable).
    #[arg(long = "server-pid", value_name = "PID")]
    pub server_pids: Vec<u32>,
    /// Sample every process with this name (e.g. mariadbd).
    #[arg(long, value_name = "NAME")]
    pub server_process: Option<String>,
}

/// `strata bench tpcc check`.
#[derive(Args, Debug)]
pub struct TpccCheckArgs {
    #[command(flatten)]
    pub connection: TpccConnectionArgs,
    /// Number of warehouses (as loaded by prepare).
    #[arg(long, default_value_t = 10)]
    pub warehouses: u32,
    /// Also check 3.3.2.11, which holds only until the first Delivery (right after prepare).
    #[arg(long)]
    pub check_all: bool,
}

fn run_tpcc(command: TpccCommand) -> Result<(), String> {
    match command {
        TpccCommand::Prepare(args) => {
            let seed = args.seed.unwrap_or_else(clock_seed);
            let config = tpcc::load::LoadConfig {
                target: args.connection.target(),
                warehouses: args.warehouses,
                threads: args.threads,
                seed,
            };
            eprintln!(
                "strata bench tpcc: loading {} warehouses into {} on {} with {} threads (seed {seed})",
                config.warehouses,
                config.target.db,
                config.target.address(),
                config.threads
            );
            let loaded = tpcc::load::prepare(&config).map_err(|e| e.0)?;
            println!(
                "prepared {} warehouses: {} rows in {:.1} s",
                config.warehouses, loaded.rows, loaded.seconds
            );
            // Statistics for the planner, as the sysbench prepare collects them.
            let analyze: Vec<String> = tpcc::TABLES
                .iter()
                .map(|t| {
                    format!(
                        "ANALYZE TABLE {}.{}",
                        crate::client::quote_ident(&config.target.db),
                        crate::client::quote_ident(t)
                    )
                })
                .collect();
            crate::client::execute(&config.target, &analyze).map_err(|e| e.0)?;
            eprintln!("strata bench tpcc: ran ANALYZE TABLE on the nine tables");
            if args.check {
                check_tpcc(config.target, config.warehouses, true)?;
            }
            Ok(())
        }
        TpccCommand::Run(args) => {
            let config = tpcc::run::RunConfig {
                target: args.connection.target(),
                warehouses: args.warehouses,
                threads: args.threads,
                duration: args.time,
                interval: args.interval,
                weights: args.weight,
                ignore_error: args.ignore_error,
                seed: args.seed.unwrap_or_else(clock_seed),
                label: args.label.clone(),
                out: args.out.clone(),
                server_pids: args.server_pids.clone(),
                server_process: args.server_process.clone(),
                command: command_line(),
            };
            let result = tpcc::run::run(&config).map_err(|e| e.0)?;
            if args.output == "json" {
                let json = serde_json::to_string_pretty(&BenchResult::Tpcc(result))
                    .map_err(|e| format!("encoding the result: {e}"))?;
                println!("{json}");
            }
            Ok(())
        }
        TpccCommand::Check(args) => {
            check_tpcc(args.connection.target(), args.warehouses, args.check_all)
        }
        TpccCommand::Cleanup(connection) => {
            let target = connection.target();
            tpcc::cleanup(&target).map_err(|e| e.0)?;
            println!("dropped the TPC-C tables of {}", target.db);
            Ok(())
        }
    }
}

fn check_tpcc(target: Target, warehouses: u32, all: bool) -> Result<(), String> {
    let config = tpcc::check::CheckConfig {
        target,
        warehouses,
        all,
    };
    let reports = tpcc::check::check(&config).map_err(|e| e.0)?;
    let failed = reports.iter().filter(|r| !r.passed()).count();
    if failed > 0 {
        return Err(format!("{failed} of {} checks failed", reports.len()));
    }
    println!(
        "all {} checks passed (the population and {} conditions)",
        reports.len(),
        reports.len() - 1
    );
    Ok(())
}

/// A seed from the clock, for runs that do not ask for one.
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// This process's command line with the password hidden.
fn command_line() -> String {
    let mut hide_next = false;
    let mut words = Vec::new();
    for arg in std::env::args() {
        let word = if hide_next {
            hide_next = false;
            "***".to_string()
        } else if arg == "-p" || arg == "--password" {
            hide_next = true;
            arg
        } else if let Some(rest) = arg.strip_prefix("--password=") {
            format!("--password={}", if rest.is_empty() { "" } else { "***" })
        } else if arg.starts_with("-p") && arg.len() > 2 && !arg.starts_with("--") {
            "-p***".to_string()
        } else {
            arg
        };
        words.push(word);
    }
    words.join(" ")
}

/// Runs a `strata bench` command.
pub fn run(command: BenchCommand) -> Result<(), String> {
    match command {
        BenchCommand::Sysbench(command) => match *command {
            SysbenchCommand::Prepare(args) => prepare(args),
            SysbenchCommand::Run(args) => run_matrix(args),
        },
        BenchCommand::Tpcc(command) => run_tpcc(*command),
        BenchCommand::Report(args) => report(args),
    }
}

fn config(connection: &ConnectionArgs, data: &DataArgs, raw_dir: PathBuf) -> SysbenchConfig {
    SysbenchConfig {
        sysbench: data.sysbench.clone(),
        target: connection.target(),
        tables: data.tables,
        table_size: data.table_size,
        prepare_threads: data.prepare_threads,
        workloads: sysbench::ALL_WORKLOADS
            .iter()
            .map(|w| w.to_string())
            .collect(),
        threads: vec![1],
        time_seconds: 0,
        warmup_seconds: 0,
        report_interval_seconds: 1,
        rand_type: "uniform".into(),
        percentile: 95,
        mysql_ignore_errors: String::new(),
        extra_args: Vec::new(),
        restore: false,
        label: String::new(),
        raw_dir,
    }
}

fn prepare(args: PrepareArgs) -> Result<(), String> {
    sysbench::check_installed(&args.data.sysbench).map_err(|e| e.0)?;
    let config = config(&args.connection, &args.data, args.raw_dir.clone());
    let mut server = args.server.server(&config.target)?;
    if matches!(server, Server::Playground(_)) {
        server.start().map_err(|e| e.0)?;
    }
    let (_, prepared) = sysbench::prepare(&config, &server).map_err(|e| e.0)?;
    println!(
        "prepared {} tables × {} rows in {:.1} s; data {} on disk, {} logical",
        config.tables,
        config.table_size,
        prepared.seconds,
        sysbench::human_bytes(prepared.size.disk_bytes),
        sysbench::human_bytes(prepared.size.logical_bytes)
    );
    server.stop().ok();
    Ok(())
}

fn run_matrix(args: RunArgs) -> Result<(), String> {
    if args.threads.is_empty() || args.threads.contains(&0) {
        return Err("--threads needs positive thread counts".into());
    }
    if args.time == 0 {
        return Err("--time must be at least 1 second".into());
    }
    let raw_dir = args.raw_dir.clone().unwrap_or_else(|| {
        let stem = args
            .out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "result".into());
        args.out.with_file_name(format!("{stem}-raw"))
    });
    let mut config = config(&args.connection, &args.data, raw_dir);
    if !args.workloads.is_empty() {
        config.workloads = args.workloads.clone();
    }
    config.threads = args.threads.clone();
    config.time_seconds = args.time;
    config.warmup_seconds = args.warmup;
    config.report_interval_seconds = args.report_interval;
    config.rand_type = args.rand_type.clone();
    config.percentile = args.percentile;
    config.mysql_ignore_errors = args.mysql_ignore_errors.clone();
    config.extra_args = args.extra.clone();
    config.restore = args.restore;
    config.label = args.label.clone();
    sysbench::check_installed(&config.sysbench).map_err(|e| e.0)?;
    let mut server = args.server.server(&config.target)?;
    if matches!(server, Server::Playground(_)) {
        server.start().map_err(|e| e.0)?;
    }
    let result = sysbench::run_matrix(&config, &mut server, args.prepare, &args.out);
    let stopped = match server {
        Server::Playground(_) => server.stop().map_err(|e| e.0),
        Server::External(_) => Ok(()),
    };
    let matrix = result.map_err(|e| e.0)?;
    stopped?;
    let failed = matrix.runs.iter().filter(|r| r.summary.is_none()).count();
    println!(
        "wrote {} ({} runs, {failed} failed)",
        args.out.display(),
        matrix.runs.len()
    );
    Ok(())
}

fn report(args: ReportArgs) -> Result<(), String> {
    let mut results = Vec::new();
    for path in &args.results {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let result: BenchResult = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a strata bench result: {e}", path.display()))?;
        results.push(result);
    }
    let files = crate::report::render(&results, &args.out)
        .map_err(|e| format!("writing the report to {}: {e}", args.out.display()))?;
    println!(
        "wrote {} and {}",
        files.markdown.display(),
        files.html.display()
    );
    Ok(())
}
