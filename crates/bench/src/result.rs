//! The JSON result files that `strata bench` writes and `strata bench report` reads.
//!
//! One file holds one matrix: the environment it ran in, the options and exact commands, the
//! prepare step, and one [`SysbenchRun`] per (workload, threads) cell with its per-interval time
//! series and the server's resource use. TPC-C results share the [`Environment`] and carry a
//! [`TpccResult`] instead of runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The top level of a result file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BenchResult {
    /// A sysbench matrix.
    Sysbench(SysbenchMatrix),
    /// A TPC-C run.
    Tpcc(TpccResult),
}

impl BenchResult {
    /// The name this result goes by in a report (the database and version under test).
    pub fn label(&self) -> &str {
        match self {
            BenchResult::Sysbench(m) => &m.label,
            BenchResult::Tpcc(t) => &t.label,
        }
    }

    /// The environment the result was measured in.
    pub fn environment(&self) -> &Environment {
        match self {
            BenchResult::Sysbench(m) => &m.environment,
            BenchResult::Tpcc(t) => &t.environment,
        }
    }
}

/// Where and against what a benchmark ran.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    /// `host:port` of the MySQL-protocol server.
    pub target: String,
    /// `SELECT VERSION()` of the server.
    pub server_version: String,
    /// `sysbench --version` (empty for TPC-C).
    pub sysbench_version: String,
    /// Version of the `strata` binary that drove the benchmark.
    pub tool_version: String,
    /// Host name of the machine the driver ran on.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpus: u32,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
    /// Wall-clock start, RFC 3339 (UTC).
    pub started_at: String,
    /// Wall-clock end, RFC 3339 (UTC).
    pub finished_at: String,
}

/// A sysbench matrix: workloads × thread counts after one prepare.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SysbenchMatrix {
    /// Name of the system under test in reports, e.g. "Strata 0.1.0" or "MariaDB 10.11".
    pub label: String,
    pub environment: Environment,
    pub options: SysbenchOptions,
    /// Every command the tool ran, in order, so anyone can rerun the matrix by hand.
    pub commands: Vec<String>,
    pub prepare: Option<PrepareResult>,
    /// One entry per measured run, in the order they ran.
    pub runs: Vec<SysbenchRun>,
    /// Sizes after the last run.
    pub after: Option<DataSize>,
}

impl SysbenchMatrix {
    /// Returns the first run of `workload` at `threads`, if the matrix has one.
    pub fn run(&self, workload: &str, threads: u32) -> Option<&SysbenchRun> {
        self.runs
            .iter()
            .find(|run| run.workload == workload && run.threads == threads)
    }
}

/// The options a matrix ran with.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SysbenchOptions {
    pub tables: u32,
    pub table_size: u64,
    /// sysbench `--rand-type`.
    pub rand_type: String,
    /// Seconds of discarded warm-up before each measured run.
    pub warmup_seconds: u32,
    /// Seconds of each measured run.
    pub time_seconds: u32,
    /// sysbench `--report-interval`.
    pub report_interval_seconds: u32,
    /// sysbench `--percentile` (95 by default).
    pub percentile: u32,
    /// sysbench `--mysql-ignore-errors`, empty for sysbench's default.
    pub mysql_ignore_errors: String,
    /// How data was restored before each write workload: "none", "playground" or "data-dir".
    pub restore: String,
    /// Any further sysbench arguments passed to every run.
    pub extra_args: Vec<String>,
}

/// Data size as seen on disk and as reported by the server.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DataSize {
    /// Bytes of the data folder on disk (du), when the folder is known.
    pub disk_bytes: Option<u64>,
    /// Logical bytes the server reports: SUM(DATA_LENGTH + INDEX_LENGTH) of the database's
    /// tables in information_schema.TABLES.
    pub logical_bytes: Option<u64>,
}

impl DataSize {
    /// Logical size over on-disk size, when both are known.
    pub fn compression_ratio(&self) -> Option<f64> {
        match (self.logical_bytes, self.disk_bytes) {
            (Some(l), Some(d)) if d > 0 => Some(l as f64 / d as f64),
            _ => None,
        }
    }
}

/// The prepare step.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PrepareResult {
    /// Wall-clock seconds of `oltp_common prepare` plus ANALYZE.
    pub seconds: f64,
    pub size: DataSize,
}

/// One measured sysbench run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SysbenchRun {
    /// e.g. "oltp_read_write".
    pub workload: String,
    pub threads: u32,
    /// The exact sysbench command line of the measured run.
    pub command: String,
    /// The parsed final summary; `None` when sysbench failed before printing one.
    pub summary: Option<SysbenchSummary>,
    /// One entry per `--report-interval` line.
    pub intervals: Vec<SysbenchInterval>,
    /// Resource use of the server process(es) during the measured run.
    pub resources: Option<ResourceUsage>,
    /// Whether the data was restored from the prepared copy before this run.
    pub restored: bool,
    /// What the server's own metrics say of the run (a Strata server with a status port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server_metrics::ServerMetrics>,
    /// sysbench's exit status.
    pub exit_code: Option<i32>,
    /// The last lines of sysbench's stderr/stdout when it failed.
    pub failure: Option<String>,
}

impl SysbenchRun {
    /// Server CPU milliseconds spent per transaction: the cost of one transaction however many
    /// cores served it. `None` when the run failed, did no transaction or was not sampled.
    pub fn cpu_ms_per_transaction(&self) -> Option<f64> {
        let transactions = self.summary.as_ref()?.transactions;
        let cpu_seconds = self.resources.as_ref()?.cpu_seconds;
        (transactions > 0).then(|| cpu_seconds * 1000.0 / transactions as f64)
    }
}

/// sysbench's final statistics.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SysbenchSummary {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub total_queries: u64,
    pub transactions: u64,
    pub tps: f64,
    pub queries: u64,
    pub qps: f64,
    pub ignored_errors: u64,
    pub ignored_errors_per_second: f64,
    pub reconnects: u64,
    pub reconnects_per_second: f64,
    pub total_time_seconds: f64,
    pub total_events: u64,
    pub latency_min_ms: f64,
    pub latency_avg_ms: f64,
    pub latency_max_ms: f64,
    /// The percentile sysbench reported (95 unless `--percentile` changed it).
    pub latency_percentile: u32,
    /// Latency at that percentile, in ms.
    pub latency_percentile_ms: f64,
    pub latency_sum_ms: f64,
}

/// One sysbench `--report-interval` line.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SysbenchInterval {
    /// Seconds since the run started (end of the interval).
    pub second: f64,
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    pub reads_per_second: f64,
    pub writes_per_second: f64,
    pub other_per_second: f64,
    /// Latency at the configured percentile, ms.
    pub latency_ms: f64,
    pub errors_per_second: f64,
    pub reconnects_per_second: f64,
}

/// Resource use of the server during one run, sampled from /proc.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ResourceUsage {
    /// The process ids sampled.
    pub pids: Vec<u32>,
    /// User + system CPU seconds used during the run.
    pub cpu_seconds: f64,
    /// Average CPU cores busy (cpu_seconds / wall seconds).
    pub cpu_cores: f64,
    /// Largest resident set seen, bytes.
    pub rss_max_bytes: u64,
    /// Bytes the server read from storage during the run (/proc/PID/io read_bytes).
    pub disk_read_bytes: u64,
    /// Bytes the server wrote to storage during the run (/proc/PID/io write_bytes).
    pub disk_write_bytes: u64,
    /// One sample per second.
    pub samples: Vec<ResourceSample>,
}

/// One per-second sample of the server's resource use.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ResourceSample {
    /// Seconds since the run started.
    pub second: f64,
    /// CPU cores busy over the last interval.
    pub cpu_cores: f64,
    pub rss_bytes: u64,
    /// Bytes read per second over the last interval.
    pub read_bytes_per_second: f64,
    /// Bytes written per second over the last interval.
    pub write_bytes_per_second: f64,
}

/// A TPC-C run as `strata bench tpcc run` records it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TpccResult {
    pub label: String,
    pub environment: Environment,
    pub warehouses: u32,
    pub threads: u32,
    pub time_seconds: f64,
    /// The command line of the run.
    pub command: String,
    /// New-Order transactions per minute.
    pub tpmc: f64,
    /// All transactions per minute.
    pub tpm_total: f64,
    /// tpmC over the theoretical maximum of 12.86 × warehouses, in percent.
    pub efficiency: f64,
    /// Per transaction type ("new_order", "payment", …).
    pub transactions: BTreeMap<String, TpccTransactionStats>,
    /// Per 10-second interval, New-Order TPM.
    pub intervals: Vec<TpccInterval>,
    pub resources: Option<ResourceUsage>,
}

/// Statistics of one TPC-C transaction type.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TpccTransactionStats {
    pub count: u64,
    pub errors: u64,
    pub tpm: f64,
    pub avg_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// One TPC-C progress interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TpccInterval {
    pub second: f64,
    pub tpmc: f64,
    pub tpm_total: f64,
}
