//! The sysbench sections: one per workload (throughput and latency against the baseline,
//! transactions and errors, failures, server resources, charts) and the data size table.
//!
//! A workload's rows are the union of the thread counts any result ran it at; a result that
//! did not run a cell shows `—`, one whose sysbench failed before its summary shows `failed`
//! and the failure text below the table.

use super::charts::{self, LineChart, Series, XAxis};
use super::format::{self, FAILED, MISSING};
use super::{Block, Charts, Context, Figure, Table};
use crate::result::{SysbenchInterval, SysbenchMatrix, SysbenchRun, SysbenchSummary};

/// The percentile sysbench reports unless `--percentile` says otherwise.
const DEFAULT_PERCENTILE: u32 = 95;

/// One sysbench result, a column group of every workload table.
struct Column<'a> {
    /// Index in the report's results: picks the label and the chart colour.
    index: usize,
    label: &'a str,
    matrix: &'a SysbenchMatrix,
}

/// A workload and the thread counts any result ran it at, ascending.
struct Workload<'a> {
    name: &'a str,
    threads: Vec<u32>,
}

impl Column<'_> {
    fn run(&self, workload: &str, threads: u32) -> Option<&SysbenchRun> {
        self.matrix.run(workload, threads)
    }

    fn summary(&self, workload: &str, threads: u32) -> Option<&SysbenchSummary> {
        self.run(workload, threads)?.summary.as_ref()
    }

    /// The latency percentile this result reports for `workload`.
    fn percentile(&self, workload: &str) -> u32 {
        self.matrix
            .runs
            .iter()
            .filter(|run| run.workload == workload)
            .find_map(|run| {
                run.summary
                    .as_ref()
                    .map(|summary| summary.latency_percentile)
            })
            .into_iter()
            .chain([self.matrix.options.percentile])
            .find(|percentile| *percentile > 0)
            .unwrap_or(DEFAULT_PERCENTILE)
    }

    /// Averages `bytes` moved during `run` over its duration, in MiB/s: the duration sysbench
    /// measured, else the configured run time.
    fn mib_per_second(&self, run: &SysbenchRun, bytes: u64) -> Option<f64> {
        let from_summary = run
            .summary
            .as_ref()
            .map(|summary| summary.total_time_seconds);
        let seconds = from_summary
            .into_iter()
            .chain([f64::from(self.matrix.options.time_seconds)])
            .find(|seconds| seconds.is_finite() && *seconds > 0.0)?;
        Some(format::mib(bytes as f64) / seconds)
    }
}

/// Returns the sections of every workload, in the order workloads first appear.
pub(super) fn workloads(context: &Context<'_>) -> Vec<Block> {
    let columns = columns(context);
    let mut blocks = Vec::new();
    for workload in workloads_of(&columns) {
        blocks.push(heading(2, format!("Sysbench: {}", workload.name)));
        blocks.push(Block::Table(throughput_table(&columns, &workload)));
        blocks.push(Block::Table(transactions_table(&columns, &workload)));
        blocks.extend(failure_notes(&columns, &workload));
        blocks.extend(throughput_figures(context, &columns, &workload));
        blocks.extend(interval_figures(context, &columns, &workload));
        blocks.push(heading(3, format!("Server resources: {}", workload.name)));
        blocks.push(Block::Table(resources_table(&columns, &workload)));
        blocks.extend(resource_figures(context, &columns, &workload));
        if let Some(table) = server_table(&columns, &workload) {
            blocks.push(heading(3, format!("The server's view: {}", workload.name)));
            blocks.push(Block::Paragraph(
                "From the server's own /metrics, read before and after each run: statements \
                 it answered per second and the time each took from parse to answer (without \
                 the network and the client), commits per second and the block cache's hit \
                 ratio."
                    .to_string(),
            ));
            blocks.push(Block::Table(table));
        }
    }
    blocks
}

/// One row per thread count and result whose run has the server's own figures; None when no
/// run has them.
fn server_table(columns: &[Column<'_>], workload: &Workload<'_>) -> Option<Table> {
    let name = workload.name;
    let header = [
        "Threads",
        "Result",
        "Statements/s",
        "Mean ms",
        "p95 ms",
        "p99 ms",
        "Commits/s",
        "Cache hit %",
    ]
    .iter()
    .map(|cell| cell.to_string())
    .collect();
    let mut rows = Vec::new();
    for &threads in &workload.threads {
        for column in columns {
            let Some(run) = column.run(name, threads) else {
                continue;
            };
            let (Some(server), Some(summary)) = (&run.server, &run.summary) else {
                continue;
            };
            let seconds = summary.total_time_seconds.max(f64::MIN_POSITIVE);
            rows.push(vec![
                threads.to_string(),
                column.label.to_string(),
                format::number(server.statements as f64 / seconds, 1),
                format::number(server.mean_ms, 3),
                format::number(server.p95_ms, 3),
                format::number(server.p99_ms, 3),
                format::number(server.commits as f64 / seconds, 1),
                format::optional_number(server.block_cache_hit_ratio.map(|r| r * 100.0), 2),
            ]);
        }
    }
    (!rows.is_empty()).then_some(Table {
        header,
        rows,
        left_columns: 2,
    })
}

/// Returns one line per workload comparing each result with the baseline at the highest
/// thread count both completed.
pub(super) fn summary_items(context: &Context<'_>) -> Vec<String> {
    let columns = columns(context);
    let Some((baseline, others)) = columns.split_first() else {
        return Vec::new();
    };
    let mut items = Vec::new();
    for workload in workloads_of(&columns) {
        let name = workload.name;
        if others.is_empty() {
            let best = workload
                .threads
                .iter()
                .rev()
                .find_map(|threads| Some((threads, baseline.summary(name, *threads)?)));
            items.push(match best {
                Some((threads, summary)) => format!(
                    "{name} at {}: {} reaches {} QPS, p{} latency {} ms.",
                    threads_text(*threads),
                    baseline.label,
                    format::number(summary.qps, 2),
                    summary.latency_percentile,
                    format::number(summary.latency_percentile_ms, 2),
                ),
                None => format!("{name}: every run of {} failed.", baseline.label),
            });
            continue;
        }
        let comparisons: Vec<String> = others
            .iter()
            .map(|other| compare_at_top(baseline, other, &workload))
            .collect();
        items.push(format!("{name}: {}.", comparisons.join("; ")));
    }
    items
}

/// Returns the sentence that says what the sysbench results ran, from the baseline's options.
pub(super) fn scope(context: &Context<'_>) -> Option<String> {
    let columns = columns(context);
    let baseline = columns.first()?;
    let workloads = workloads_of(&columns);
    let names: Vec<&str> = workloads.iter().map(|workload| workload.name).collect();
    let mut threads: Vec<u32> = workloads
        .iter()
        .flat_map(|workload| workload.threads.iter().copied())
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let threads = match threads.as_slice() {
        [only] => threads_text(*only),
        _ => {
            let counts: Vec<String> = threads.iter().map(u32::to_string).collect();
            format!("{} threads", counts.join(", "))
        }
    };
    let options = &baseline.matrix.options;
    Some(format!(
        "Sysbench ran {} ({}) at {}, {} s per run after {} s of warm-up, on {} tables \
         of {} rows ({} distribution).",
        plural(names.len(), "workload"),
        names.join(", "),
        threads,
        options.time_seconds,
        options.warmup_seconds,
        options.tables,
        options.table_size,
        format::text(&options.rand_type),
    ))
}

/// Returns the data size section: prepare time, on-disk and logical sizes of every result.
pub(super) fn data_size(context: &Context<'_>) -> Vec<Block> {
    let columns = columns(context);
    if columns.is_empty() {
        return Vec::new();
    }
    let header = [
        "Result",
        "Prepare (s)",
        "Disk after prepare",
        "Logical after prepare",
        "Logical/disk after prepare",
        "Disk after runs",
        "Logical after runs",
        "Logical/disk after runs",
    ];
    let rows = columns
        .iter()
        .map(|column| {
            let prepare = column.matrix.prepare.as_ref();
            let prepared = prepare.map(|prepare| &prepare.size);
            let after = column.matrix.after.as_ref();
            vec![
                column.label.to_string(),
                format::optional_number(prepare.map(|prepare| prepare.seconds), 1),
                format::optional_bytes(prepared.and_then(|size| size.disk_bytes)),
                format::optional_bytes(prepared.and_then(|size| size.logical_bytes)),
                ratio(prepared.and_then(|size| size.compression_ratio())),
                format::optional_bytes(after.and_then(|size| size.disk_bytes)),
                format::optional_bytes(after.and_then(|size| size.logical_bytes)),
                ratio(after.and_then(|size| size.compression_ratio())),
            ]
        })
        .collect();
    vec![
        heading(2, "Data size".to_string()),
        Block::Paragraph(
            "Disk is the size of the server's data folder (du); logical is what the server \
             reports as SUM(DATA_LENGTH + INDEX_LENGTH) of the tables; logical/disk is the \
             compression ratio."
                .to_string(),
        ),
        Block::Table(Table {
            header: header.iter().map(|cell| cell.to_string()).collect(),
            rows,
            left_columns: 1,
        }),
    ]
}

fn columns<'a>(context: &'a Context<'_>) -> Vec<Column<'a>> {
    context
        .sysbench()
        .into_iter()
        .map(|(index, matrix)| Column {
            index,
            label: context.label(index),
            matrix,
        })
        .collect()
}

fn workloads_of<'a>(columns: &[Column<'a>]) -> Vec<Workload<'a>> {
    let mut workloads: Vec<Workload<'a>> = Vec::new();
    for run in columns.iter().flat_map(|column| &column.matrix.runs) {
        let known = workloads
            .iter()
            .position(|workload| workload.name == run.workload);
        let position = known.unwrap_or_else(|| {
            workloads.push(Workload {
                name: &run.workload,
                threads: Vec::new(),
            });
            workloads.len() - 1
        });
        let threads = &mut workloads[position].threads;
        if !threads.contains(&run.threads) {
            threads.push(run.threads);
        }
    }
    for workload in &mut workloads {
        workload.threads.sort_unstable();
    }
    workloads
}

/// Compares `other` with `baseline` at the highest thread count both completed.
fn compare_at_top(baseline: &Column<'_>, other: &Column<'_>, workload: &Workload<'_>) -> String {
    let name = workload.name;
    let top = workload.threads.iter().rev().find_map(|threads| {
        Some((
            *threads,
            baseline.summary(name, *threads)?,
            other.summary(name, *threads)?,
        ))
    });
    let Some((threads, base, compared)) = top else {
        return format!(
            "no thread count where both {} and {} completed",
            baseline.label, other.label
        );
    };
    if format::change_percent(base.qps, compared.qps).is_none() {
        return format!(
            "at {}, {} and {} cannot be compared ({} and {} QPS)",
            threads_text(threads),
            other.label,
            baseline.label,
            format::number(compared.qps, 2),
            format::number(base.qps, 2),
        );
    }
    let most = if workload.threads.last() == Some(&threads) {
        ""
    } else {
        " (the most at which both completed)"
    };
    let latency = if base.latency_percentile == compared.latency_percentile {
        format!(
            ", p{} latency {}",
            base.latency_percentile,
            format::change(base.latency_percentile_ms, compared.latency_percentile_ms)
        )
    } else {
        String::new()
    };
    format!(
        "at {}{most}, {} reaches {} the QPS of {} ({}{latency})",
        threads_text(threads),
        other.label,
        format::ratio(base.qps, compared.qps),
        baseline.label,
        format::change(base.qps, compared.qps),
    )
}

/// Writes "1 thread" or "8 threads".
fn threads_text(threads: u32) -> String {
    if threads == 1 {
        "1 thread".to_string()
    } else {
        format!("{threads} threads")
    }
}

/// QPS and latency of every result, and their change against the baseline.
fn throughput_table(columns: &[Column<'_>], workload: &Workload<'_>) -> Table {
    let name = workload.name;
    let baseline_percentile = columns
        .first()
        .map_or(DEFAULT_PERCENTILE, |c| c.percentile(name));
    let mut header = vec!["Threads".to_string()];
    for column in columns {
        header.push(format!("{} QPS", column.label));
        header.push(format!(
            "{} p{} (ms)",
            column.label,
            column.percentile(name)
        ));
    }
    for other in columns.iter().skip(1) {
        let prefix = change_prefix(columns, other);
        header.push(format!("{prefix}QPS change"));
        header.push(format!("{prefix}p{baseline_percentile} change"));
    }
    let rows = workload
        .threads
        .iter()
        .map(|&threads| {
            let mut row = vec![threads.to_string()];
            for column in columns {
                row.extend(run_cells(column.run(name, threads), |summary| {
                    vec![
                        format::number(summary.qps, 2),
                        format::number(summary.latency_percentile_ms, 2),
                    ]
                }));
            }
            for other in columns.iter().skip(1) {
                let pair = columns[0]
                    .summary(name, threads)
                    .zip(other.summary(name, threads));
                row.push(pair.map_or(MISSING.to_string(), |(base, compared)| {
                    format::change(base.qps, compared.qps)
                }));
                row.push(match pair {
                    Some((base, compared))
                        if base.latency_percentile == compared.latency_percentile =>
                    {
                        format::change(base.latency_percentile_ms, compared.latency_percentile_ms)
                    }
                    _ => MISSING.to_string(),
                });
            }
            row
        })
        .collect();
    Table {
        header,
        rows,
        left_columns: 0,
    }
}

/// TPS, ignored errors and reconnects of every result, and the change of TPS.
fn transactions_table(columns: &[Column<'_>], workload: &Workload<'_>) -> Table {
    let name = workload.name;
    let mut header = vec!["Threads".to_string()];
    for column in columns {
        header.push(format!("{} TPS", column.label));
        header.push(format!("{} errors/s", column.label));
        header.push(format!("{} reconnects", column.label));
    }
    for other in columns.iter().skip(1) {
        header.push(format!("{}TPS change", change_prefix(columns, other)));
    }
    let rows = workload
        .threads
        .iter()
        .map(|&threads| {
            let mut row = vec![threads.to_string()];
            for column in columns {
                row.extend(run_cells(column.run(name, threads), |summary| {
                    vec![
                        format::number(summary.tps, 2),
                        format::number(summary.ignored_errors_per_second, 2),
                        summary.reconnects.to_string(),
                    ]
                }));
            }
            for other in columns.iter().skip(1) {
                let pair = columns[0]
                    .summary(name, threads)
                    .zip(other.summary(name, threads));
                row.push(pair.map_or(MISSING.to_string(), |(base, compared)| {
                    format::change(base.tps, compared.tps)
                }));
            }
            row
        })
        .collect();
    Table {
        header,
        rows,
        left_columns: 0,
    }
}

/// The cells of one run: `cells(summary)` when it completed, `failed` then `—` when it failed,
/// `—` when it did not run; always as many cells as `cells` returns.
fn run_cells(
    run: Option<&SysbenchRun>,
    cells: impl Fn(&SysbenchSummary) -> Vec<String>,
) -> Vec<String> {
    let width = cells(&SysbenchSummary::default()).len();
    match run {
        None => vec![MISSING.to_string(); width],
        Some(SysbenchRun {
            summary: Some(summary),
            ..
        }) => cells(summary),
        Some(_) => {
            let mut failed = vec![MISSING.to_string(); width];
            failed[0] = FAILED.to_string();
            failed
        }
    }
}

/// With two results the change columns need no name; with more, each names its result.
fn change_prefix(columns: &[Column<'_>], other: &Column<'_>) -> String {
    if columns.len() > 2 {
        format!("{} ", other.label)
    } else {
        String::new()
    }
}

/// A note and the output of every run of the workload that failed or reported a failure.
fn failure_notes(columns: &[Column<'_>], workload: &Workload<'_>) -> Vec<Block> {
    let mut blocks = Vec::new();
    for column in columns {
        for &threads in &workload.threads {
            let Some(run) = column.run(workload.name, threads) else {
                continue;
            };
            if run.summary.is_some() && run.failure.is_none() {
                continue;
            }
            let what = if run.summary.is_none() {
                "failed"
            } else {
                "completed but reported a failure"
            };
            let exit = run.exit_code.map_or("no exit code".to_string(), |code| {
                format!("exit code {code}")
            });
            let failure = run.failure.as_deref().unwrap_or("").trim_end();
            let colon = if failure.is_empty() { "." } else { ":" };
            blocks.push(Block::Paragraph(format!(
                "Note: {} at {} {what} ({exit}){colon}",
                column.label,
                threads_text(threads)
            )));
            if !failure.is_empty() {
                blocks.push(Block::Code(failure.to_string()));
            }
        }
    }
    blocks
}

/// One row per thread count and result: the server's CPU, memory and disk use.
fn resources_table(columns: &[Column<'_>], workload: &Workload<'_>) -> Table {
    let name = workload.name;
    let compare = columns.len() > 1;
    let mut header: Vec<String> = ["Threads", "Result", "CPU cores", "CPU ms/txn"]
        .iter()
        .map(|cell| cell.to_string())
        .collect();
    if compare {
        header.push("CPU ms/txn change".to_string());
    }
    for cell in ["Max RSS (MiB)", "Disk read (MiB/s)", "Disk write (MiB/s)"] {
        header.push(cell.to_string());
    }
    let mut rows = Vec::new();
    for &threads in &workload.threads {
        let baseline_cost = columns
            .first()
            .and_then(|column| column.run(name, threads))
            .and_then(SysbenchRun::cpu_ms_per_transaction);
        for (position, column) in columns.iter().enumerate() {
            let Some(run) = column.run(name, threads) else {
                continue;
            };
            let resources = run.resources.as_ref();
            let cost = run.cpu_ms_per_transaction();
            let mut row = vec![
                threads.to_string(),
                column.label.to_string(),
                format::optional_number(resources.map(|usage| usage.cpu_cores), 2),
                format::optional_number(cost, 3),
            ];
            if compare {
                row.push(match (position, baseline_cost, cost) {
                    (1.., Some(base), Some(cost)) => format::change(base, cost),
                    _ => MISSING.to_string(),
                });
            }
            row.push(format::optional_number(
                resources.map(|usage| format::mib(usage.rss_max_bytes as f64)),
                1,
            ));
            row.push(format::optional_number(
                resources.and_then(|usage| column.mib_per_second(run, usage.disk_read_bytes)),
                2,
            ));
            row.push(format::optional_number(
                resources.and_then(|usage| column.mib_per_second(run, usage.disk_write_bytes)),
                2,
            ));
            rows.push(row);
        }
    }
    Table {
        header,
        rows,
        left_columns: 2,
    }
}

/// QPS and latency against threads.
fn throughput_figures(
    context: &Context<'_>,
    columns: &[Column<'_>],
    workload: &Workload<'_>,
) -> Option<Block> {
    let name = workload.name;
    let percentile = columns.first()?.percentile(name);
    let figures = [
        threads_figure(context, columns, workload, "qps", "QPS", |_, run| {
            run.summary.as_ref().map(|summary| summary.qps)
        }),
        threads_figure(
            context,
            columns,
            workload,
            "latency",
            &format!("p{percentile} latency (ms)"),
            |_, run| {
                run.summary
                    .as_ref()
                    .map(|summary| summary.latency_percentile_ms)
            },
        ),
    ];
    figures_block(figures)
}

/// Server CPU, CPU per transaction, memory and disk writes against threads.
fn resource_figures(
    context: &Context<'_>,
    columns: &[Column<'_>],
    workload: &Workload<'_>,
) -> Option<Block> {
    let figures = [
        threads_figure(
            context,
            columns,
            workload,
            "cpu-cores",
            "CPU cores busy",
            |_, run| run.resources.as_ref().map(|usage| usage.cpu_cores),
        ),
        threads_figure(
            context,
            columns,
            workload,
            "cpu-per-transaction",
            "CPU ms per transaction",
            |_, run| run.cpu_ms_per_transaction(),
        ),
        threads_figure(
            context,
            columns,
            workload,
            "rss",
            "Max RSS (MiB)",
            |_, run| {
                run.resources
                    .as_ref()
                    .map(|usage| format::mib(usage.rss_max_bytes as f64))
            },
        ),
        threads_figure(
            context,
            columns,
            workload,
            "disk-write",
            "Disk write (MiB/s)",
            |column, run| column.mib_per_second(run, run.resources.as_ref()?.disk_write_bytes),
        ),
    ];
    figures_block(figures)
}

/// A chart of one figure of every result against the workload's thread counts.
fn threads_figure(
    context: &Context<'_>,
    columns: &[Column<'_>],
    workload: &Workload<'_>,
    id: &str,
    measure: &str,
    value: impl Fn(&Column<'_>, &SysbenchRun) -> Option<f64>,
) -> Option<Figure> {
    if context.charts == Charts::Omit {
        return None;
    }
    let series = columns
        .iter()
        .map(|column| Series {
            label: column.label.to_string(),
            color: context.color(column.index),
            points: workload
                .threads
                .iter()
                .enumerate()
                .map(|(position, &threads)| {
                    let value = value(column, column.run(workload.name, threads)?)?;
                    Some((position as f64, value))
                })
                .collect(),
        })
        .collect();
    let chart = LineChart {
        x_axis: XAxis::Categories(workload.threads.iter().map(u32::to_string).collect()),
        x_description: "threads".to_string(),
        y_description: measure.to_string(),
        series,
        markers: true,
        size: charts::LARGE,
    };
    let svg = charts::line_chart(&chart)?;
    Some(Figure {
        id: context.figure_id(&[workload.name, id]),
        caption: format!("{}: {measure} by threads", workload.name),
        svg,
    })
}

/// A per-interval chart: its id, the measure's name and how to read it from an interval.
type IntervalMeasure = (&'static str, String, fn(&SysbenchInterval) -> f64);

/// Per-interval TPS and latency of every result, one pair of charts per thread count.
fn interval_figures(
    context: &Context<'_>,
    columns: &[Column<'_>],
    workload: &Workload<'_>,
) -> Vec<Block> {
    if context.charts == Charts::Omit {
        return Vec::new();
    }
    let percentile = columns
        .first()
        .map_or(DEFAULT_PERCENTILE, |c| c.percentile(workload.name));
    let mut figures = Vec::new();
    for &threads in &workload.threads {
        let measures: [IntervalMeasure; 2] = [
            ("tps", "TPS".to_string(), |interval| interval.tps),
            (
                "latency",
                format!("p{percentile} latency (ms)"),
                |interval| interval.latency_ms,
            ),
        ];
        for (id, measure, value) in measures {
            let series = columns
                .iter()
                .map(|column| Series {
                    label: column.label.to_string(),
                    color: context.color(column.index),
                    points: column
                        .run(workload.name, threads)
                        .map(|run| {
                            run.intervals
                                .iter()
                                .map(|interval| Some((interval.second, value(interval))))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect();
            let chart = LineChart {
                x_axis: XAxis::Linear,
                x_description: "seconds".to_string(),
                y_description: measure.clone(),
                series,
                markers: false,
                size: charts::SMALL,
            };
            if let Some(svg) = charts::line_chart(&chart) {
                let threads_id = threads.to_string();
                figures.push(Figure {
                    id: context.figure_id(&[workload.name, &threads_id, "threads", id]),
                    caption: format!(
                        "{} at {}: {measure} per interval",
                        workload.name,
                        threads_text(threads)
                    ),
                    svg,
                });
            }
        }
    }
    if figures.is_empty() {
        return Vec::new();
    }
    vec![
        heading(3, format!("Time series: {}", workload.name)),
        Block::Figures(figures),
    ]
}

fn figures_block<const N: usize>(figures: [Option<Figure>; N]) -> Option<Block> {
    let figures: Vec<Figure> = figures.into_iter().flatten().collect();
    (!figures.is_empty()).then_some(Block::Figures(figures))
}

fn ratio(value: Option<f64>) -> String {
    value.map_or(MISSING.to_string(), |value| format::ratio(1.0, value))
}

fn heading(level: usize, text: String) -> Block {
    Block::Heading { level, text }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
