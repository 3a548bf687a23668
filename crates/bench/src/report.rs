//! Renders result files as a Markdown report and as one self-contained HTML page with SVG charts.
//!
//! The report is laid out the way published sysbench comparisons are (TiDB's "v4.0 QPS | v5.0
//! QPS | QPS improvement" tables): the first sysbench result is the baseline every other
//! sysbench result is compared with, thread count by thread count, and the first TPC-C result
//! is the TPC-C baseline. A system keeps one colour in every chart.
//!
//! ```text
//!   &[BenchResult] ──build──▶ Vec<Block> ──┬──▶ markdown::render ──▶ report.md
//!                  (sections: summary,     │     (figures left out)
//!                   environment, sysbench, └──▶ html::render ──────▶ report.html
//!                   sizes, TPC-C, commands)      (tables + inline <svg> figures)
//! ```
//!
//! Both outputs come from one list of `Block`s, so the Markdown and the HTML cannot disagree
//! on a number. Charts are drawn with plotters' SVG backend into strings; plotters measures text
//! with its built-in estimate and the browser draws the `<text>` elements, so no font library is
//! needed.
//!
//! Invariants:
//! - the output depends only on the input: no rendering time, no hash-map order;
//! - no input makes the renderer panic: NaN and infinite values are shown as `—` and left out
//!   of charts, a chart with nothing to draw is skipped, a failed run is shown as `failed`;
//! - every text that came from a result file is escaped for the format it lands in.
//!
//! Markdown escaping is limited to what would break a table (`|` and line breaks); the HTML
//! page escapes everything, including text inside the SVG (plotters escapes its own labels).
//!
//! The report does not judge results (no "better"/"worse" colouring): a higher QPS and a
//! higher latency are both shown as a positive change, and the reader knows which one is good.

mod charts;
mod format;
mod html;
mod markdown;
mod overview;
mod sysbench_sections;
mod tpcc_sections;

use std::path::{Path, PathBuf};

use crate::result::{BenchResult, SysbenchMatrix, TpccResult};

/// The file name of the Markdown report inside the output folder.
pub const MARKDOWN_FILE_NAME: &str = "report.md";
/// The file name of the HTML report inside the output folder.
pub const HTML_FILE_NAME: &str = "report.html";

/// The files [`render`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportFiles {
    pub markdown: PathBuf,
    pub html: PathBuf,
}

/// Renders the results (the first is the baseline others are compared with) into
/// `out_dir/report.md` and `out_dir/report.html`, creating `out_dir` when missing.
pub fn render(results: &[BenchResult], out_dir: &Path) -> std::io::Result<ReportFiles> {
    std::fs::create_dir_all(out_dir)?;
    let files = ReportFiles {
        markdown: out_dir.join(MARKDOWN_FILE_NAME),
        html: out_dir.join(HTML_FILE_NAME),
    };
    std::fs::write(&files.markdown, markdown(results))?;
    std::fs::write(&files.html, html(results))?;
    Ok(files)
}

/// Returns the Markdown report alone.
pub fn markdown(results: &[BenchResult]) -> String {
    markdown::render(&build(results, Charts::Omit))
}

/// Returns the HTML report alone.
pub fn html(results: &[BenchResult]) -> String {
    html::render(&build(results, Charts::Draw))
}

/// Whether the document includes SVG charts (only the HTML page shows them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Charts {
    Draw,
    Omit,
}

/// One element of the report, independent of the output format.
#[derive(Clone, Debug)]
enum Block {
    Heading {
        level: usize,
        text: String,
    },
    Paragraph(String),
    List(Vec<String>),
    Table(Table),
    /// Preformatted text: commands and failure output.
    Code(String),
    /// Charts shown side by side (HTML only).
    Figures(Vec<Figure>),
}

/// A table of text cells; the first `left_columns` columns are text, the rest numbers.
#[derive(Clone, Debug)]
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    left_columns: usize,
}

/// One chart with its caption.
#[derive(Clone, Debug)]
struct Figure {
    /// Unique within the page; tests and links find charts by it.
    id: String,
    caption: String,
    /// The `<svg>` element, or why it could not be drawn.
    svg: Result<String, String>,
}

/// Builds the whole report.
fn build(results: &[BenchResult], charts: Charts) -> Vec<Block> {
    let context = Context::new(results, charts);
    let mut blocks = overview::title_and_summary(&context);
    if results.is_empty() {
        return blocks;
    }
    blocks.extend(overview::environment(&context));
    blocks.extend(sysbench_sections::workloads(&context));
    blocks.extend(sysbench_sections::data_size(&context));
    blocks.extend(tpcc_sections::tpcc(&context));
    blocks.extend(overview::commands(&context));
    blocks
}

/// What every section needs: the results, their display labels and colours, and the chart
/// switch.
struct Context<'a> {
    results: &'a [BenchResult],
    /// One label per result, in the order of `results`: non-empty, and unique among the
    /// results of one kind, so that table columns stay unambiguous.
    labels: Vec<String>,
    /// The distinct labels in the order they first appear: the systems compared.
    systems: Vec<String>,
    charts: Charts,
    figure_ids: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

impl<'a> Context<'a> {
    fn new(results: &'a [BenchResult], charts: Charts) -> Self {
        Context {
            results,
            labels: unique_labels(results),
            systems: distinct_labels(results),
            charts,
            figure_ids: Default::default(),
        }
    }

    /// The sysbench results with their index in `results`, the first being the baseline.
    fn sysbench(&self) -> Vec<(usize, &'a SysbenchMatrix)> {
        self.results
            .iter()
            .enumerate()
            .filter_map(|(index, result)| match result {
                BenchResult::Sysbench(matrix) => Some((index, matrix)),
                BenchResult::Tpcc(_) => None,
            })
            .collect()
    }

    /// The TPC-C results with their index in `results`, the first being the baseline.
    fn tpcc(&self) -> Vec<(usize, &'a TpccResult)> {
        self.results
            .iter()
            .enumerate()
            .filter_map(|(index, result)| match result {
                BenchResult::Tpcc(tpcc) => Some((index, tpcc)),
                BenchResult::Sysbench(_) => None,
            })
            .collect()
    }

    /// The display label of the result at `index`.
    fn label(&self, index: usize) -> &str {
        &self.labels[index]
    }

    /// The label of the result at `index` with its kind when the report mixes kinds, where a
    /// sysbench and a TPC-C result of one system share a label.
    fn label_with_kind(&self, index: usize) -> String {
        let mixed = !self.sysbench().is_empty() && !self.tpcc().is_empty();
        match &self.results[index] {
            BenchResult::Sysbench(_) if mixed => format!("{} (sysbench)", self.labels[index]),
            BenchResult::Tpcc(_) if mixed => format!("{} (TPC-C)", self.labels[index]),
            _ => self.labels[index].clone(),
        }
    }

    /// The chart colour of the result at `index`: one per system, so that a system keeps its
    /// colour across sysbench and TPC-C charts.
    fn color(&self, index: usize) -> usize {
        let label = own_label(&self.results[index], index);
        self.systems
            .iter()
            .position(|system| *system == label)
            .unwrap_or(index)
    }

    /// Returns a figure id made of `parts` that no earlier figure of this report has used.
    fn figure_id(&self, parts: &[&str]) -> String {
        let base = format!("chart-{}", format::slug(&parts.join("-")));
        let mut ids = self.figure_ids.borrow_mut();
        let mut id = base.clone();
        let mut suffix = 2;
        while ids.contains(&id) {
            id = format!("{base}-{suffix}");
            suffix += 1;
        }
        ids.insert(id.clone());
        id
    }
}

/// Returns one label per result: its own label, and a `(2)`, `(3)`… suffix when an earlier
/// result of the same kind already uses it.
fn unique_labels(results: &[BenchResult]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::with_capacity(results.len());
    for (index, result) in results.iter().enumerate() {
        let base = own_label(result, index);
        let same_kind = |other: usize| {
            std::mem::discriminant(&results[other]) == std::mem::discriminant(result)
        };
        let taken =
            |label: &String| (0..index).any(|other| same_kind(other) && labels[other] == *label);
        let mut label = base.clone();
        let mut suffix = 2;
        while taken(&label) {
            label = format!("{base} ({suffix})");
            suffix += 1;
        }
        labels.push(label);
    }
    labels
}

/// Returns the distinct labels of the results in the order they first appear.
fn distinct_labels(results: &[BenchResult]) -> Vec<String> {
    let mut systems: Vec<String> = Vec::new();
    for (index, result) in results.iter().enumerate() {
        let label = own_label(result, index);
        if !systems.contains(&label) {
            systems.push(label);
        }
    }
    systems
}

/// The label a result carries, or `result N` when it has none.
fn own_label(result: &BenchResult, index: usize) -> String {
    match result.label().trim() {
        "" => format!("result {}", index + 1),
        label => label.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sysbench(label: &str) -> BenchResult {
        BenchResult::Sysbench(SysbenchMatrix {
            label: label.to_string(),
            environment: Default::default(),
            options: Default::default(),
            commands: vec![],
            prepare: None,
            runs: vec![],
            after: None,
        })
    }

    #[test]
    fn labels_are_unique_and_never_empty() {
        let results = vec![
            sysbench("A"),
            sysbench("A"),
            sysbench(""),
            BenchResult::Tpcc(TpccResult {
                label: "A".to_string(),
                ..Default::default()
            }),
        ];
        assert_eq!(unique_labels(&results), ["A", "A (2)", "result 3", "A"]);
        assert_eq!(distinct_labels(&results), ["A", "result 3"]);
        let context = Context::new(&results, Charts::Omit);
        assert_eq!(
            context.color(3),
            0,
            "a system keeps its colour across kinds"
        );
        assert_eq!(context.label_with_kind(3), "A (TPC-C)");
    }

    #[test]
    fn no_results_give_a_short_report() {
        let text = markdown(&[]);
        assert!(text.starts_with("# Benchmark report"), "{text}");
        assert!(html(&[]).contains("</html>"));
    }

    #[test]
    fn figure_ids_are_unique() {
        let context = Context::new(&[], Charts::Draw);
        assert_eq!(
            context.figure_id(&["oltp_read_write", "qps"]),
            "chart-oltp-read-write-qps"
        );
        assert_eq!(
            context.figure_id(&["oltp read/write", "qps"]),
            "chart-oltp-read-write-qps-2"
        );
    }
}
