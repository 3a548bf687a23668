//! The sections around the measurements: title and summary, the environment of every result,
//! and the commands that reproduce them.

use super::format::{self, MISSING};
use super::{sysbench_sections, tpcc_sections, Block, Context, Table};
use crate::result::{BenchResult, Environment, SysbenchOptions};

/// Returns the title, the paragraph saying what was compared, and one line per workload with
/// the ratio of each result to the baseline.
pub(super) fn title_and_summary(context: &Context<'_>) -> Vec<Block> {
    let systems = &context.systems;
    let title = if systems.is_empty() {
        "Benchmark report".to_string()
    } else {
        format!("Benchmark report: {}", systems.join(" vs "))
    };
    let mut blocks = vec![Block::Heading {
        level: 1,
        text: title,
    }];
    if systems.is_empty() {
        blocks.push(Block::Paragraph("No results were given.".to_string()));
        return blocks;
    }
    let mut paragraph = match systems.len() {
        1 => format!("This report shows the results of {}.", systems[0]),
        _ => format!(
            "This report compares {}. {}",
            enumeration(systems),
            baseline_sentence(context)
        ),
    };
    if let Some(scope) = sysbench_sections::scope(context) {
        paragraph.push(' ');
        paragraph.push_str(&scope);
    }
    blocks.push(Block::Paragraph(paragraph));
    let mut items = sysbench_sections::summary_items(context);
    items.extend(tpcc_sections::summary_item(context));
    if !items.is_empty() {
        blocks.push(Block::List(items));
    }
    blocks
}

/// Says which result the others are compared with and how to read a change.
fn baseline_sentence(context: &Context<'_>) -> String {
    let sysbench = context
        .sysbench()
        .first()
        .map(|(index, _)| context.label(*index));
    let tpcc = context
        .tpcc()
        .first()
        .map(|(index, _)| context.label(*index));
    let baseline = match (sysbench, tpcc) {
        (Some(sysbench), Some(tpcc)) if sysbench != tpcc => format!(
            "The first result of each kind is the baseline ({sysbench} for sysbench, {tpcc} \
             for TPC-C)"
        ),
        (Some(label), _) | (None, Some(label)) => format!("{label} is the baseline"),
        (None, None) => "The first result is the baseline".to_string(),
    };
    format!(
        "{baseline}: a change is another result's value relative to it, so +25.0% QPS is a \
         quarter more throughput and +25.0% latency a quarter slower."
    )
}

/// Joins names as "A", "A and B" or "A, B and C".
fn enumeration(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A row of the environment table: its name and how to write the field of one result.
type Row<T> = (&'static str, fn(&T) -> String);

/// Returns the environment table: one column per result, one row per field.
pub(super) fn environment(context: &Context<'_>) -> Vec<Block> {
    let results = context.results;
    let mut header = vec![String::new()];
    header.extend((0..results.len()).map(|index| context.label_with_kind(index)));
    let mut rows = vec![row("Kind", results, |result| {
        match result {
            BenchResult::Sysbench(_) => "sysbench",
            BenchResult::Tpcc(_) => "TPC-C",
        }
        .to_string()
    })];
    let environment_rows: [Row<Environment>; 11] = [
        ("Target", |env| format::text(&env.target)),
        ("Server version", |env| format::text(&env.server_version)),
        ("sysbench version", |env| {
            format::text(&env.sysbench_version)
        }),
        ("Tool version", |env| format::text(&env.tool_version)),
        ("Host", |env| format::text(&env.hostname)),
        ("Kernel", |env| format::text(&env.kernel)),
        ("CPU model", |env| format::text(&env.cpu_model)),
        ("CPUs", |env| {
            positive(u64::from(env.cpus), |cpus| cpus.to_string())
        }),
        ("Memory", |env| positive(env.memory_bytes, format::bytes)),
        ("Started", |env| format::text(&env.started_at)),
        ("Finished", |env| format::text(&env.finished_at)),
    ];
    for (name, value) in &environment_rows {
        rows.push(row(name, results, |result| value(result.environment())));
    }
    if !context.sysbench().is_empty() {
        rows.extend(option_rows(results));
    }
    vec![
        Block::Heading {
            level: 2,
            text: "Environment".to_string(),
        },
        Block::Table(Table {
            left_columns: header.len(),
            header,
            rows,
        }),
    ]
}

/// Returns one code block per result with the commands that reproduce it.
pub(super) fn commands(context: &Context<'_>) -> Vec<Block> {
    let mut blocks = vec![
        Block::Heading {
            level: 2,
            text: "Commands".to_string(),
        },
        Block::Paragraph("The commands each result ran, in order, to rerun it by hand.".into()),
    ];
    for (index, result) in context.results.iter().enumerate() {
        blocks.push(Block::Heading {
            level: 3,
            text: format!("Commands: {}", context.label_with_kind(index)),
        });
        let commands = match result {
            BenchResult::Sysbench(matrix) => matrix.commands.join("\n"),
            BenchResult::Tpcc(tpcc) => tpcc.command.clone(),
        };
        if commands.trim().is_empty() {
            blocks.push(Block::Paragraph("No command was recorded.".to_string()));
        } else {
            blocks.push(Block::Code(commands));
        }
    }
    blocks
}

/// The sysbench options as rows; TPC-C results show `—`.
fn option_rows(results: &[BenchResult]) -> Vec<Vec<String>> {
    let option_rows: [Row<SysbenchOptions>; 10] = [
        ("Tables", |options| options.tables.to_string()),
        ("Table size", |options| options.table_size.to_string()),
        ("Rand type", |options| format::text(&options.rand_type)),
        ("Warm-up (s)", |options| options.warmup_seconds.to_string()),
        ("Time per run (s)", |options| {
            options.time_seconds.to_string()
        }),
        ("Report interval (s)", |options| {
            options.report_interval_seconds.to_string()
        }),
        ("Percentile", |options| options.percentile.to_string()),
        ("mysql-ignore-errors", |options| {
            format::text(&options.mysql_ignore_errors)
        }),
        ("Restore", |options| format::text(&options.restore)),
        ("Extra args", |options| {
            format::text(&options.extra_args.join(" "))
        }),
    ];
    option_rows
        .iter()
        .map(|(name, value)| {
            row(name, results, |result| match result {
                BenchResult::Sysbench(matrix) => value(&matrix.options),
                BenchResult::Tpcc(_) => MISSING.to_string(),
            })
        })
        .collect()
}

fn row(name: &str, results: &[BenchResult], value: impl Fn(&BenchResult) -> String) -> Vec<String> {
    let mut row = vec![name.to_string()];
    row.extend(results.iter().map(value));
    row
}

/// Writes a count that is zero when unknown.
fn positive(value: u64, write: fn(u64) -> String) -> String {
    if value == 0 {
        MISSING.to_string()
    } else {
        write(value)
    }
}
