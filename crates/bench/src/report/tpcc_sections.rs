//! The TPC-C section: tpmC of every TPC-C result against the first one, the statistics of
//! each transaction type, and charts of tpmC over time and of p95 latency per type.

use std::collections::BTreeSet;

use super::charts::{self, BarChart, BarSeries, LineChart, Series, XAxis};
use super::format::{self, MISSING};
use super::{Block, Charts, Context, Figure, Table};
use crate::result::TpccResult;

/// Returns the TPC-C section, empty when no result is a TPC-C run.
pub(super) fn tpcc(context: &Context<'_>) -> Vec<Block> {
    let results = context.tpcc();
    if results.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![
        Block::Heading {
            level: 2,
            text: "TPC-C".to_string(),
        },
        Block::Table(overview_table(context, &results)),
    ];
    blocks.extend(figures(context, &results));
    for (index, result) in &results {
        blocks.push(Block::Heading {
            level: 3,
            text: format!("TPC-C transactions: {}", context.label(*index)),
        });
        if result.transactions.is_empty() {
            blocks.push(Block::Paragraph(
                "No transaction statistics were recorded.".to_string(),
            ));
        } else {
            blocks.push(Block::Table(transactions_table(result)));
        }
    }
    blocks
}

/// Returns the summary line comparing each TPC-C result's tpmC with the first one's.
pub(super) fn summary_item(context: &Context<'_>) -> Option<String> {
    let results = context.tpcc();
    let ((baseline_index, baseline), others) = results.split_first()?;
    let baseline_label = context.label(*baseline_index);
    if others.is_empty() {
        return Some(format!(
            "TPC-C: {baseline_label} reaches {} tpmC with {} warehouses and {} threads ({}% \
             efficiency).",
            format::number(baseline.tpmc, 1),
            baseline.warehouses,
            baseline.threads,
            format::number(baseline.efficiency, 1),
        ));
    }
    let comparisons: Vec<String> = others
        .iter()
        .map(|(index, other)| {
            format!(
                "{} reaches {} the tpmC of {baseline_label} ({})",
                context.label(*index),
                format::ratio(baseline.tpmc, other.tpmc),
                format::change(baseline.tpmc, other.tpmc),
            )
        })
        .collect();
    Some(format!("TPC-C: {}.", comparisons.join("; ")))
}

fn overview_table(context: &Context<'_>, results: &[(usize, &TpccResult)]) -> Table {
    let compare = results.len() > 1;
    let mut header: Vec<String> = [
        "Result",
        "Warehouses",
        "Threads",
        "Time (s)",
        "tpmC",
        "tpmTotal",
        "Efficiency",
    ]
    .iter()
    .map(|cell| cell.to_string())
    .collect();
    if compare {
        header.push("tpmC change".to_string());
    }
    header.push("CPU cores".to_string());
    header.push("Max RSS (MiB)".to_string());
    let baseline_tpmc = results.first().map_or(f64::NAN, |(_, result)| result.tpmc);
    let rows = results
        .iter()
        .enumerate()
        .map(|(position, (index, result))| {
            let resources = result.resources.as_ref();
            let mut row = vec![
                context.label(*index).to_string(),
                result.warehouses.to_string(),
                result.threads.to_string(),
                format::number(result.time_seconds, 0),
                format::number(result.tpmc, 1),
                format::number(result.tpm_total, 1),
                format!("{}%", format::number(result.efficiency, 1)),
            ];
            if compare {
                row.push(if position == 0 {
                    MISSING.to_string()
                } else {
                    format::change(baseline_tpmc, result.tpmc)
                });
            }
            row.push(format::optional_number(
                resources.map(|usage| usage.cpu_cores),
                2,
            ));
            row.push(format::optional_number(
                resources.map(|usage| format::mib(usage.rss_max_bytes as f64)),
                1,
            ));
            row
        })
        .collect();
    Table {
        header,
        rows,
        left_columns: 1,
    }
}

fn transactions_table(result: &TpccResult) -> Table {
    let header = [
        "Transaction",
        "Count",
        "Errors",
        "TPM",
        "avg (ms)",
        "p50 (ms)",
        "p90 (ms)",
        "p95 (ms)",
        "p99 (ms)",
        "max (ms)",
    ];
    let rows = result
        .transactions
        .iter()
        .map(|(name, stats)| {
            vec![
                name.clone(),
                stats.count.to_string(),
                stats.errors.to_string(),
                format::number(stats.tpm, 1),
                format::number(stats.avg_ms, 2),
                format::number(stats.p50_ms, 2),
                format::number(stats.p90_ms, 2),
                format::number(stats.p95_ms, 2),
                format::number(stats.p99_ms, 2),
                format::number(stats.max_ms, 2),
            ]
        })
        .collect();
    Table {
        header: header.iter().map(|cell| cell.to_string()).collect(),
        rows,
        left_columns: 1,
    }
}

/// tpmC per interval of every result, and p95 latency per transaction type.
fn figures(context: &Context<'_>, results: &[(usize, &TpccResult)]) -> Option<Block> {
    if context.charts == Charts::Omit {
        return None;
    }
    let mut figures = Vec::new();
    let over_time = LineChart {
        x_axis: XAxis::Linear,
        x_description: "seconds".to_string(),
        y_description: "tpmC".to_string(),
        series: results
            .iter()
            .map(|(index, result)| Series {
                label: context.label(*index).to_string(),
                color: context.color(*index),
                points: result
                    .intervals
                    .iter()
                    .map(|interval| Some((interval.second, interval.tpmc)))
                    .collect(),
            })
            .collect(),
        markers: false,
        size: charts::LARGE,
    };
    if let Some(svg) = charts::line_chart(&over_time) {
        figures.push(Figure {
            id: context.figure_id(&["tpcc", "tpmc"]),
            caption: "TPC-C: tpmC per interval".to_string(),
            svg,
        });
    }
    let names: BTreeSet<&String> = results
        .iter()
        .flat_map(|(_, result)| result.transactions.keys())
        .collect();
    let latency = BarChart {
        categories: names.iter().map(|name| name.to_string()).collect(),
        y_description: "p95 latency (ms)".to_string(),
        series: results
            .iter()
            .map(|(index, result)| BarSeries {
                label: context.label(*index).to_string(),
                color: context.color(*index),
                values: names
                    .iter()
                    .map(|name| result.transactions.get(*name).map(|stats| stats.p95_ms))
                    .collect(),
            })
            .collect(),
        size: charts::LARGE,
    };
    if let Some(svg) = charts::bar_chart(&latency) {
        figures.push(Figure {
            id: context.figure_id(&["tpcc", "p95"]),
            caption: "TPC-C: p95 latency per transaction type".to_string(),
            svg,
        });
    }
    (!figures.is_empty()).then_some(Block::Figures(figures))
}
