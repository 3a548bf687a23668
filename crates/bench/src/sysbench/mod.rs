//! Driving the real sysbench 1.0.x: prepare, then a matrix of workloads × thread counts, each
//! run warmed up, measured, parsed and recorded with the server's resource use.

pub mod parse;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::client::{self, Target};
use crate::environment;
use crate::resources::{self, Sampler};
use crate::result::{
    BenchResult, DataSize, PrepareResult, SysbenchMatrix, SysbenchOptions, SysbenchRun,
};
use crate::server::Server;
use crate::server_metrics;

/// The eight OLTP workloads of sysbench, in the order reports list them.
pub const ALL_WORKLOADS: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
];

/// Workloads that only read: the data need not be restored before them.
const READ_ONLY_WORKLOADS: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "select_random_points",
    "select_random_ranges",
];

/// Time a sysbench process may take beyond its `--time` before it is killed (connecting,
/// a slow last transaction, printing).
const RUN_GRACE: Duration = Duration::from_secs(120);

/// A failure of the benchmark driver itself (not of a single run, which is recorded).
#[derive(Debug)]
pub struct BenchError(pub String);

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

impl From<crate::server::ServerError> for BenchError {
    fn from(e: crate::server::ServerError) -> Self {
        BenchError(e.0)
    }
}

impl From<client::ClientError> for BenchError {
    fn from(e: client::ClientError) -> Self {
        BenchError(e.0)
    }
}

/// Everything a matrix needs to know.
#[derive(Clone, Debug)]
pub struct SysbenchConfig {
    /// The sysbench binary.
    pub sysbench: String,
    pub target: Target,
    pub tables: u32,
    pub table_size: u64,
    /// Threads of `oltp_common prepare`.
    pub prepare_threads: u32,
    pub workloads: Vec<String>,
    pub threads: Vec<u32>,
    pub time_seconds: u32,
    pub warmup_seconds: u32,
    pub report_interval_seconds: u32,
    pub rand_type: String,
    pub percentile: u32,
    pub mysql_ignore_errors: String,
    pub extra_args: Vec<String>,
    /// Restore the prepared data before every run of a write workload.
    pub restore: bool,
    /// Name of the system under test in reports; `SELECT VERSION()` when empty.
    pub label: String,
    /// Where raw sysbench output goes.
    pub raw_dir: PathBuf,
}

impl SysbenchConfig {
    /// The sysbench argument list for `command` ("prepare", "cleanup" or "run").
    pub fn args(&self, workload: &str, threads: u32, seconds: u32, command: &str) -> Vec<String> {
        let t = &self.target;
        let mut args = vec![
            workload.to_string(),
            "--db-driver=mysql".to_string(),
            format!("--mysql-host={}", t.host),
            format!("--mysql-port={}", t.port),
            format!("--mysql-user={}", t.user),
            format!("--mysql-password={}", t.password),
            format!("--mysql-db={}", t.db),
            format!("--tables={}", self.tables),
            format!("--table-size={}", self.table_size),
            format!("--threads={threads}"),
        ];
        if command == "run" {
            args.push(format!("--time={seconds}"));
            args.push(format!(
                "--report-interval={}",
                self.report_interval_seconds
            ));
            args.push(format!("--rand-type={}", self.rand_type));
            args.push(format!("--percentile={}", self.percentile));
            if !self.mysql_ignore_errors.is_empty() {
                args.push(format!(
                    "--mysql-ignore-errors={}",
                    self.mysql_ignore_errors
                ));
            }
        }
        args.extend(self.extra_args.iter().cloned());
        args.push(command.to_string());
        args
    }

    /// The command line as a user would type it, password hidden.
    pub fn display(&self, args: &[String]) -> String {
        let mut line = self.sysbench.clone();
        for arg in args {
            line.push(' ');
            if arg.starts_with("--mysql-password=") && !self.target.password.is_empty() {
                line.push_str("--mysql-password=***");
            } else {
                line.push_str(&shell_quote(arg));
            }
        }
        line
    }

    fn options(&self, restore_mode: &str) -> SysbenchOptions {
        SysbenchOptions {
            tables: self.tables,
            table_size: self.table_size,
            rand_type: self.rand_type.clone(),
            warmup_seconds: self.warmup_seconds,
            time_seconds: self.time_seconds,
            report_interval_seconds: self.report_interval_seconds,
            percentile: self.percentile,
            mysql_ignore_errors: self.mysql_ignore_errors.clone(),
            restore: if self.restore {
                restore_mode.to_string()
            } else {
                "none".to_string()
            },
            extra_args: self.extra_args.clone(),
        }
    }
}

fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.,/:@+%".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// `sysbench --version`, or an error that says how to install it.
pub fn check_installed(sysbench: &str) -> Result<String, BenchError> {
    let missing = || {
        BenchError(format!(
            "`{sysbench}` not found: install sysbench 1.0.20 (Debian/Ubuntu: `apt-get install sysbench`) \
             or point --sysbench at it"
        ))
    };
    let out = Command::new(sysbench)
        .arg("--version")
        .output()
        .map_err(|_| missing())?;
    if !out.status.success() {
        return Err(missing());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The outcome of one sysbench process.
struct Outcome {
    exit_code: Option<i32>,
    output: String,
    timed_out: bool,
}

/// Runs sysbench with `args`, its output teed into `log`, killed after `limit`.
fn run_sysbench(
    sysbench: &str,
    args: &[String],
    log: &Path,
    limit: Duration,
) -> Result<Outcome, BenchError> {
    let file = File::create(log).map_err(|e| BenchError(format!("{}: {e}", log.display())))?;
    let err = file
        .try_clone()
        .map_err(|e| BenchError(format!("{}: {e}", log.display())))?;
    let mut child = Command::new(sysbench)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| BenchError(format!("starting {sysbench}: {e}")))?;
    let deadline = Instant::now() + limit;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Ok(None) => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Err(e) => return Err(BenchError(format!("waiting for sysbench: {e}"))),
        }
    };
    let output = fs::read_to_string(log).unwrap_or_default();
    Ok(Outcome {
        exit_code: status.and_then(|s| s.code()),
        output,
        timed_out,
    })
}

/// The last `n` non-empty lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Size of the data on disk and as the server reports it, now.
pub fn data_size(server: &Server, target: &Target) -> DataSize {
    DataSize {
        disk_bytes: server
            .data_dir()
            .and_then(|dir| resources::disk_usage(&dir).ok()),
        logical_bytes: client::logical_bytes(target),
    }
}

/// Creates the database if missing, drops old sbtest tables, runs `oltp_common prepare` and
/// `ANALYZE TABLE` on every table. Returns the commands run and the result.
pub fn prepare(
    config: &SysbenchConfig,
    server: &Server,
) -> Result<(Vec<String>, PrepareResult), BenchError> {
    fs::create_dir_all(&config.raw_dir)
        .map_err(|e| BenchError(format!("{}: {e}", config.raw_dir.display())))?;
    let started = Instant::now();
    let mut commands = Vec::new();
    let create = format!(
        "CREATE DATABASE IF NOT EXISTS {}",
        client::quote_ident(&config.target.db)
    );
    client::execute(&config.target, std::slice::from_ref(&create))?;
    commands.push(format!("-- {create}"));
    for step in ["cleanup", "prepare"] {
        let args = config.args("oltp_common", config.prepare_threads, 0, step);
        commands.push(config.display(&args));
        eprintln!("strata bench: {}", config.display(&args));
        let log = config.raw_dir.join(format!("{step}.log"));
        let limit = Duration::from_secs(6 * 3600);
        let outcome = run_sysbench(&config.sysbench, &args, &log, limit)?;
        if outcome.exit_code != Some(0) {
            return Err(BenchError(format!(
                "sysbench {step} failed ({}):\n{}",
                outcome
                    .exit_code
                    .map_or("killed".to_string(), |c| format!("exit {c}")),
                tail(&outcome.output, 10)
            )));
        }
    }
    let analyze = analyze_statements(config);
    eprintln!("strata bench: ANALYZE TABLE on {} tables", config.tables);
    client::execute(&config.target, &analyze)?;
    commands.extend(analyze.iter().map(|s| format!("-- {s}")));
    let seconds = started.elapsed().as_secs_f64();
    let size = data_size(server, &config.target);
    Ok((commands, PrepareResult { seconds, size }))
}

fn analyze_statements(config: &SysbenchConfig) -> Vec<String> {
    (1..=config.tables)
        .map(|i| {
            format!(
                "ANALYZE TABLE {}.{}",
                client::quote_ident(&config.target.db),
                client::quote_ident(&format!("sbtest{i}"))
            )
        })
        .collect()
}

/// Runs the matrix (after a prepare when `do_prepare`), writing the result file `out` after
/// every run so that an interrupted matrix keeps what it measured.
pub fn run_matrix(
    config: &SysbenchConfig,
    server: &mut Server,
    do_prepare: bool,
    out: &Path,
) -> Result<SysbenchMatrix, BenchError> {
    let sysbench_version = check_installed(&config.sysbench)?;
    if config.restore && !server.can_restore() {
        return Err(BenchError(
            "--restore needs a playground started by this tool (--playground DIR) or \
             --data-dir with --stop-command and --start-command"
                .into(),
        ));
    }
    fs::create_dir_all(&config.raw_dir)
        .map_err(|e| BenchError(format!("{}: {e}", config.raw_dir.display())))?;
    let server_version = client::server_version(&config.target)?;
    let mut environment = environment::machine();
    environment.target = config.target.address();
    environment.server_version = server_version.clone();
    environment.sysbench_version = sysbench_version;
    environment.started_at = environment::now_rfc3339();
    let label = if config.label.is_empty() {
        server_version
    } else {
        config.label.clone()
    };
    let mut matrix = SysbenchMatrix {
        label,
        environment,
        options: config.options(server.restore_mode()),
        commands: Vec::new(),
        prepare: None,
        runs: Vec::new(),
        after: None,
    };
    if do_prepare {
        let (commands, prepared) = prepare(config, server)?;
        matrix.commands.extend(commands);
        eprintln!(
            "strata bench: prepared in {:.1} s; data {} on disk, {} logical",
            prepared.seconds,
            human_bytes(prepared.size.disk_bytes),
            human_bytes(prepared.size.logical_bytes)
        );
        matrix.prepare = Some(prepared);
    }
    if config.restore {
        eprintln!("strata bench: copying the prepared data aside for restores");
        server.snapshot()?;
    }
    write_result(out, &matrix)?;

    let cells: Vec<(String, u32)> = config
        .workloads
        .iter()
        .flat_map(|w| config.threads.iter().map(move |&t| (w.clone(), t)))
        .collect();
    let started = Instant::now();
    for (index, (workload, threads)) in cells.iter().enumerate() {
        let done = index as f64;
        let estimate = if index == 0 {
            f64::from(config.time_seconds + config.warmup_seconds) * cells.len() as f64
        } else {
            started.elapsed().as_secs_f64() / done * (cells.len() as f64 - done)
        };
        eprintln!(
            "strata bench: [{}/{}] {workload} at {threads} threads: {} s warm-up + {} s measured; about {} left",
            index + 1,
            cells.len(),
            config.warmup_seconds,
            config.time_seconds,
            human_duration(estimate)
        );
        let run = run_cell(config, server, workload, *threads, &mut matrix.commands)?;
        match &run.summary {
            Some(s) => eprintln!(
                "strata bench:   tps {:.1}  qps {:.1}  p{} {:.2} ms  errors/s {:.2}  reconnects {}",
                s.tps,
                s.qps,
                s.latency_percentile,
                s.latency_percentile_ms,
                s.ignored_errors_per_second,
                s.reconnects
            ),
            None => eprintln!(
                "strata bench:   failed: {}",
                run.failure.as_deref().unwrap_or("no summary")
            ),
        }
        matrix.runs.push(run);
        write_result(out, &matrix)?;
    }
    // Statistics-based sizes (information_schema) are refreshed before they are read.
    if let Err(e) = client::execute(&config.target, &analyze_statements(config)) {
        eprintln!("strata bench: ANALYZE after the runs failed: {e}");
    }
    matrix.after = Some(data_size(server, &config.target));
    matrix.environment.finished_at = environment::now_rfc3339();
    write_result(out, &matrix)?;
    Ok(matrix)
}

fn run_cell(
    config: &SysbenchConfig,
    server: &mut Server,
    workload: &str,
    threads: u32,
    commands: &mut Vec<String>,
) -> Result<SysbenchRun, BenchError> {
    let restored = config.restore && !READ_ONLY_WORKLOADS.contains(&workload);
    if restored {
        server.restore()?;
        commands.push("-- restore the prepared data folder and restart the server".into());
    }
    if config.warmup_seconds > 0 {
        let args = config.args(workload, threads, config.warmup_seconds, "run");
        commands.push(format!("{}  # warm-up, discarded", config.display(&args)));
        let log = config
            .raw_dir
            .join(format!("{workload}-{threads}-warmup.log"));
        let limit = Duration::from_secs(u64::from(config.warmup_seconds)) + RUN_GRACE;
        run_sysbench(&config.sysbench, &args, &log, limit)?;
    }
    let args = config.args(workload, threads, config.time_seconds, "run");
    let command = config.display(&args);
    commands.push(command.clone());
    let log = config.raw_dir.join(format!("{workload}-{threads}.log"));
    let limit = Duration::from_secs(u64::from(config.time_seconds)) + RUN_GRACE;
    let status = server.status_address();
    let scrape = || {
        status
            .as_deref()
            .and_then(|a| server_metrics::scrape(a).ok())
    };
    let before = scrape();
    let sampler = Sampler::start(server.pids());
    let outcome = run_sysbench(&config.sysbench, &args, &log, limit)?;
    let usage = sampler.finish();
    let after = scrape();
    let server_side = before
        .zip(after)
        .map(|(before, after)| server_metrics::between(&before, &after));
    let parsed = parse::parse_output(&outcome.output);
    let failure = if outcome.timed_out {
        Some(format!(
            "killed after {limit:?}\n{}",
            tail(&outcome.output, 5)
        ))
    } else if outcome.exit_code != Some(0) || parsed.summary.is_none() {
        let code = outcome
            .exit_code
            .map_or("killed by a signal".to_string(), |c| format!("exit {c}"));
        let detail = if parsed.fatal.is_empty() {
            tail(&outcome.output, 5)
        } else {
            parsed
                .fatal
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        };
        Some(format!("sysbench {code}: {detail}"))
    } else {
        None
    };
    Ok(SysbenchRun {
        workload: workload.to_string(),
        threads,
        command,
        summary: parsed.summary,
        intervals: parsed.intervals,
        resources: (!usage.pids.is_empty()).then_some(usage),
        server: server_side,
        restored,
        exit_code: outcome.exit_code,
        failure,
    })
}

fn write_result(out: &Path, matrix: &SysbenchMatrix) -> Result<(), BenchError> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| BenchError(format!("{}: {e}", parent.display())))?;
    }
    let json = serde_json::to_string_pretty(&BenchResult::Sysbench(matrix.clone()))
        .map_err(|e| BenchError(format!("encoding the result: {e}")))?;
    // Write then rename, so that a reader never sees half a file.
    let tmp = out.with_extension("json.tmp");
    fs::write(&tmp, json).map_err(|e| BenchError(format!("{}: {e}", tmp.display())))?;
    fs::rename(&tmp, out).map_err(|e| BenchError(format!("{}: {e}", out.display())))
}

/// `12.3 MiB`, or `unknown`.
pub fn human_bytes(bytes: Option<u64>) -> String {
    let Some(bytes) = bytes else {
        return "unknown".into();
    };
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

fn human_duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SysbenchConfig {
        SysbenchConfig {
            sysbench: "sysbench".into(),
            target: Target {
                host: "127.0.0.1".into(),
                port: 4000,
                user: "root".into(),
                password: "secret".into(),
                db: "sbtest".into(),
            },
            tables: 4,
            table_size: 100_000,
            prepare_threads: 4,
            workloads: vec!["oltp_insert".into()],
            threads: vec![8],
            time_seconds: 60,
            warmup_seconds: 10,
            report_interval_seconds: 1,
            rand_type: "uniform".into(),
            percentile: 95,
            mysql_ignore_errors: "1213,1205".into(),
            extra_args: vec!["--auto-inc=off".into()],
            restore: false,
            label: String::new(),
            raw_dir: PathBuf::from("raw"),
        }
    }

    #[test]
    fn run_command_line() {
        let c = config();
        let args = c.args("oltp_insert", 8, 60, "run");
        assert_eq!(
            c.display(&args),
            "sysbench oltp_insert --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=4000 \
             --mysql-user=root --mysql-password=*** --mysql-db=sbtest --tables=4 --table-size=100000 \
             --threads=8 --time=60 --report-interval=1 --rand-type=uniform --percentile=95 \
             --mysql-ignore-errors=1213,1205 --auto-inc=off run"
        );
        assert!(args.contains(&"--mysql-password=secret".to_string()));
    }

    #[test]
    fn prepare_command_has_no_run_options() {
        let c = config();
        let args = c.args("oltp_common", 4, 0, "prepare");
        assert!(!args.iter().any(|a| a.starts_with("--time")));
        assert_eq!(args.last().unwrap(), "prepare");
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--x=a b"), "'--x=a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("--rand-type=uniform"), "--rand-type=uniform");
    }

    #[test]
    fn sizes_and_durations_read_well() {
        assert_eq!(human_bytes(Some(3 * 1024 * 1024)), "3.0 MiB");
        assert_eq!(human_bytes(None), "unknown");
        assert_eq!(human_duration(3725.0), "1h02m");
        assert_eq!(human_duration(61.0), "1m01s");
    }
}
