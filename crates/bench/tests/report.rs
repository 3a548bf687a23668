//! The report rendered from hand-written result files: exact Markdown rows with changes
//! computed by hand, the number of charts in the HTML, odd inputs that must not panic, and the
//! page loaded by a real headless Chromium.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use strata_bench::report;
use strata_bench::result::{
    BenchResult, ResourceUsage, SysbenchInterval, SysbenchMatrix, SysbenchRun, SysbenchSummary,
    TpccResult,
};

/// How long one Chromium run may take before the test kills it.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(60);

/// Charts of the two sysbench fixtures: for each of the 2 workloads, QPS and latency by threads
/// (2), CPU cores, CPU per transaction, RSS and disk writes by threads (4), and TPS and latency
/// per interval at each of the 2 thread counts, since at least one result has intervals there
/// (2 × 2).
const SYSBENCH_CHARTS: usize = 2 * (2 + 4 + 2 * 2);
/// Charts of the two TPC-C fixtures: tpmC per interval and p95 per transaction type.
const TPCC_CHARTS: usize = 2;

fn fixture(name: &str) -> BenchResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Strata (baseline) and MariaDB, sysbench only.
fn sysbench_pair() -> Vec<BenchResult> {
    vec![fixture("strata.json"), fixture("mariadb.json")]
}

/// Every fixture: two sysbench matrices and two TPC-C runs.
fn all_fixtures() -> Vec<BenchResult> {
    vec![
        fixture("strata.json"),
        fixture("mariadb.json"),
        fixture("tpcc_a.json"),
        fixture("tpcc_b.json"),
    ]
}

fn assert_contains(text: &str, expected: &str) {
    assert!(text.contains(expected), "expected\n{expected}\nin\n{text}");
}

fn count(text: &str, pattern: &str) -> usize {
    text.matches(pattern).count()
}

#[test]
fn fixtures_deserialize_and_round_trip() {
    let results = all_fixtures();
    let BenchResult::Sysbench(strata) = &results[0] else {
        panic!("strata.json is a sysbench matrix");
    };
    assert_eq!(strata.label, "Strata 0.1.0");
    assert_eq!(strata.runs.len(), 4);
    let BenchResult::Sysbench(mariadb) = &results[1] else {
        panic!("mariadb.json is a sysbench matrix");
    };
    let failed = mariadb.run("oltp_read_write", 8).expect("the failed run");
    assert!(failed.summary.is_none());
    assert_eq!(failed.exit_code, Some(1));
    assert!(matches!(&results[2], BenchResult::Tpcc(t) if t.transactions.len() == 5));
    assert!(matches!(&results[3], BenchResult::Tpcc(t) if t.resources.is_none()));
    for result in &results {
        let json = serde_json::to_string(result).expect("serialize");
        let again: BenchResult = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(&again, result);
    }
}

#[test]
fn markdown_compares_qps_and_latency_with_the_baseline() {
    let text = report::markdown(&sysbench_pair());
    // oltp_point_select: 1000 → 1250 QPS is +25.0%, 2.0 → 1.5 ms is -25.0%;
    // 4000 → 3000 QPS is -25.0%, 4.0 → 5.0 ms is +25.0%.
    assert_contains(
        &text,
        "## Sysbench: oltp_point_select\n\n\
         | Threads | Strata 0.1.0 QPS | Strata 0.1.0 p95 (ms) | MariaDB 10.11 QPS | \
         MariaDB 10.11 p95 (ms) | QPS change | p95 change |\n\
         |---:|---:|---:|---:|---:|---:|---:|\n\
         | 1 | 1000.00 | 2.00 | 1250.00 | 1.50 | +25.0% | -25.0% |\n\
         | 8 | 4000.00 | 4.00 | 3000.00 | 5.00 | -25.0% | +25.0% |\n",
    );
    // oltp_read_write: 2000 → 2200 QPS is +10.0%, 20 → 18 ms is -10.0%; MariaDB failed at 8.
    assert_contains(
        &text,
        "| 1 | 2000.00 | 20.00 | 2200.00 | 18.00 | +10.0% | -10.0% |\n",
    );
    assert_contains(&text, "| 8 | 6000.00 | 50.00 | failed | — | — | — |\n");
    // TPS, errors per second and reconnects: 1000 → 1250 TPS is +25.0%.
    assert_contains(
        &text,
        "| Threads | Strata 0.1.0 TPS | Strata 0.1.0 errors/s | Strata 0.1.0 reconnects | \
         MariaDB 10.11 TPS | MariaDB 10.11 errors/s | MariaDB 10.11 reconnects | TPS change |\n",
    );
    assert_contains(
        &text,
        "| 8 | 4000.00 | 0.00 | 0 | 3000.00 | 0.00 | 2 | -25.0% |\n",
    );
    assert_contains(&text, "| 8 | 300.00 | 0.50 | 0 | failed | — | — | — |\n");
}

#[test]
fn markdown_summary_gives_the_ratio_at_the_highest_thread_count() {
    let text = report::markdown(&all_fixtures());
    assert!(
        text.starts_with("# Benchmark report: Strata 0.1.0 vs MariaDB 10.11\n"),
        "{text}"
    );
    // 3000 / 4000 = 0.75×; on oltp_read_write MariaDB failed at 8 threads, so 1 thread counts:
    // 2200 / 2000 = 1.10×. TPC-C: 1500 / 1000 tpmC = 1.50×.
    assert_contains(
        &text,
        "- oltp_point_select: at 8 threads, MariaDB 10.11 reaches 0.75× the QPS of \
         Strata 0.1.0 (-25.0%, p95 latency +25.0%).\n",
    );
    assert_contains(
        &text,
        "- oltp_read_write: at 1 thread (the most at which both completed), MariaDB 10.11 \
         reaches 1.10× the QPS of Strata 0.1.0 (+10.0%, p95 latency -10.0%).\n",
    );
    assert_contains(
        &text,
        "- TPC-C: MariaDB 10.11 reaches 1.50× the tpmC of Strata 0.1.0 (+50.0%).\n",
    );
}

#[test]
fn markdown_shows_failures_below_the_table() {
    let text = report::markdown(&sysbench_pair());
    assert_contains(
        &text,
        "Note: MariaDB 10.11 at 8 threads failed (exit code 1):\n\n```\nFATAL: \
         mysql_drv_query() returned error 1205",
    );
    // The failure text holds a backtick; the fence is still three backticks long because no
    // run of three appears inside.
    assert_contains(&text, "FATAL: `thread_run' function failed");
}

#[test]
fn markdown_resources_give_cpu_per_transaction() {
    let text = report::markdown(&sysbench_pair());
    // Strata, oltp_point_select at 1 thread: 5 CPU s × 1000 / 10000 transactions = 0.5 ms,
    // 100 MiB RSS, 10 MiB written in 10 s = 1 MiB/s. MariaDB: 2.5 s × 1000 / 12500 = 0.2 ms,
    // -60.0% against 0.5 ms.
    assert_contains(
        &text,
        "### Server resources: oltp_point_select\n\n\
         | Threads | Result | CPU cores | CPU ms/txn | CPU ms/txn change | Max RSS (MiB) | \
         Disk read (MiB/s) | Disk write (MiB/s) |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n\
         | 1 | Strata 0.1.0 | 0.50 | 0.500 | — | 100.0 | 0.00 | 1.00 |\n\
         | 1 | MariaDB 10.11 | 0.25 | 0.200 | -60.0% | 300.0 | 0.00 | 0.00 |\n",
    );
    // oltp_read_write at 1 thread: MariaDB 5.5 s × 1000 / 1100 = 5.0 ms against 4.0 ms is
    // +25.0%; at 8 threads its failed run has resources but no transactions to divide by.
    assert_contains(
        &text,
        "| 1 | MariaDB 10.11 | 0.55 | 5.000 | +25.0% | 330.0 | 0.00 | 5.00 |\n",
    );
    assert_contains(
        &text,
        "| 8 | MariaDB 10.11 | 1.00 | — | — | 340.0 | 0.00 | 2.00 |\n",
    );
}

#[test]
fn markdown_data_size_is_human_readable() {
    let text = report::markdown(&sysbench_pair());
    // Strata: 100 MiB logical in 50 MiB on disk is 2.00×, then 110 MiB in 60 MiB is 1.83×.
    // MariaDB did not record its disk size after the runs.
    assert_contains(
        &text,
        "| Strata 0.1.0 | 12.5 | 50.0 MiB | 100.0 MiB | 2.00× | 60.0 MiB | 110.0 MiB | 1.83× |\n",
    );
    assert_contains(
        &text,
        "| MariaDB 10.11 | 8.0 | 120.0 MiB | 100.0 MiB | 0.83× | — | 105.0 MiB | — |\n",
    );
}

#[test]
fn markdown_environment_has_a_column_per_result() {
    let text = report::markdown(&all_fixtures());
    assert_contains(
        &text,
        "|  | Strata 0.1.0 (sysbench) | MariaDB 10.11 (sysbench) | Strata 0.1.0 (TPC-C) | \
         MariaDB 10.11 (TPC-C) |\n",
    );
    assert_contains(
        &text,
        "| Memory | 8.00 GiB | 8.00 GiB | 8.00 GiB | 8.00 GiB |\n",
    );
    assert_contains(&text, "| mysql-ignore-errors | — | 1213,1020 | — | — |\n");
    assert_contains(&text, "| Extra args | — | --db-ps-mode=disable | — | — |\n");
}

#[test]
fn markdown_tpcc_compares_tpmc() {
    let text = report::markdown(&all_fixtures());
    assert_contains(
        &text,
        "| Strata 0.1.0 | 4 | 8 | 60 | 1000.0 | 2222.2 | 19.4% | — | 1.50 | 500.0 |\n\
         | MariaDB 10.11 | 4 | 8 | 60 | 1500.0 | 3333.3 | 29.2% | +50.0% | — | — |\n",
    );
    assert_contains(
        &text,
        "### TPC-C transactions: Strata 0.1.0\n\n\
         | Transaction | Count | Errors | TPM | avg (ms) | p50 (ms) | p90 (ms) | p95 (ms) | \
         p99 (ms) | max (ms) |\n",
    );
    assert_contains(
        &text,
        "| new_order | 1000 | 10 | 1000.0 | 20.00 | 18.00 | 30.00 | 40.00 | 80.00 | 150.00 |\n",
    );
}

#[test]
fn markdown_lists_the_commands_to_rerun() {
    let text = report::markdown(&all_fixtures());
    assert_contains(
        &text,
        "### Commands: Strata 0.1.0 (sysbench)\n\n```\nsysbench oltp_common \
         --mysql-host=127.0.0.1 --mysql-port=4000 --tables=4 --table-size=10000 prepare\n",
    );
    assert_contains(
        &text,
        "### Commands: MariaDB 10.11 (TPC-C)\n\n```\nstrata bench tpcc run --target \
         127.0.0.1:3306 --warehouses 4 --threads 8 --time 60\n```",
    );
}

#[test]
fn three_results_name_their_change_columns() {
    let mut newer = fixture("strata.json");
    if let BenchResult::Sysbench(matrix) = &mut newer {
        matrix.label = "Strata 0.2.0".to_string();
    }
    let mut results = sysbench_pair();
    results.push(newer);
    let text = report::markdown(&results);
    assert_contains(
        &text,
        "| Threads | Strata 0.1.0 QPS | Strata 0.1.0 p95 (ms) | MariaDB 10.11 QPS | \
         MariaDB 10.11 p95 (ms) | Strata 0.2.0 QPS | Strata 0.2.0 p95 (ms) | \
         MariaDB 10.11 QPS change | MariaDB 10.11 p95 change | Strata 0.2.0 QPS change | \
         Strata 0.2.0 p95 change |\n",
    );
    assert_contains(
        &text,
        "| 1 | 1000.00 | 2.00 | 1250.00 | 1.50 | 1000.00 | 2.00 | +25.0% | -25.0% | +0.0% | \
         +0.0% |\n",
    );
}

#[test]
fn one_result_has_no_change_columns() {
    let text = report::markdown(&[fixture("strata.json")]);
    assert!(text.starts_with(
        "# Benchmark report: Strata 0.1.0\n\nThis report shows the results of Strata 0.1.0."
    ));
    assert_contains(
        &text,
        "- oltp_point_select at 8 threads: Strata 0.1.0 reaches 4000.00 QPS, p95 latency 4.00 ms.\n",
    );
    assert_contains(
        &text,
        "| Threads | Strata 0.1.0 QPS | Strata 0.1.0 p95 (ms) |\n|---:|---:|---:|\n\
         | 1 | 1000.00 | 2.00 |\n",
    );
    assert!(!text.contains("change"), "{text}");
}

#[test]
fn p99_runs_name_their_percentile() {
    let mut results = sysbench_pair();
    for result in &mut results {
        let BenchResult::Sysbench(matrix) = result else {
            continue;
        };
        matrix.options.percentile = 99;
        for summary in matrix
            .runs
            .iter_mut()
            .filter_map(|run| run.summary.as_mut())
        {
            summary.latency_percentile = 99;
        }
    }
    let text = report::markdown(&results);
    assert_contains(
        &text,
        "| Strata 0.1.0 p99 (ms) | MariaDB 10.11 QPS | MariaDB 10.11 p99 (ms) | QPS change | \
         p99 change |\n",
    );
}

#[test]
fn html_has_every_chart_as_balanced_svg() {
    let html = report::html(&all_fixtures());
    let charts = SYSBENCH_CHARTS + TPCC_CHARTS;
    assert_eq!(count(&html, "<svg"), charts);
    assert_eq!(count(&html, "</svg>"), charts);
    assert_eq!(count(&html, "<figure id=\"chart-"), charts);
    assert_eq!(count(&html, "<figcaption>"), charts);
    assert!(!html.contains("could not be drawn"), "no chart failed");
    for id in [
        "chart-oltp-point-select-qps",
        "chart-oltp-read-write-8-threads-tps",
        "chart-oltp-read-write-cpu-per-transaction",
        "chart-tpcc-tpmc",
        "chart-tpcc-p95",
    ] {
        assert_contains(&html, &format!("<figure id=\"{id}\">"));
    }
    // Every table of the Markdown is a table of the page.
    let markdown = report::markdown(&all_fixtures());
    assert_eq!(count(&html, "<table>"), count(&markdown, "\n|---"));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.ends_with("</html>\n"));
    // Self-contained: no script, and nothing that loads another resource.
    for loader in ["<script", "<link", " src=", " href=", "url("] {
        assert!(!html.contains(loader), "the page contains {loader}");
    }
}

#[test]
fn sysbench_alone_has_no_tpcc_section() {
    let html = report::html(&sysbench_pair());
    assert_eq!(count(&html, "<svg"), SYSBENCH_CHARTS);
    assert!(!report::markdown(&sysbench_pair()).contains("## TPC-C"));
    let tpcc_only = vec![fixture("tpcc_a.json"), fixture("tpcc_b.json")];
    assert_eq!(count(&report::html(&tpcc_only), "<svg"), TPCC_CHARTS);
    assert!(!report::markdown(&tpcc_only).contains("## Sysbench"));
}

#[test]
fn text_from_result_files_is_escaped_in_html() {
    let mut results = sysbench_pair();
    if let BenchResult::Sysbench(matrix) = &mut results[1] {
        matrix.label = "<b>Maria & \"DB\"</b>".to_string();
        matrix.commands = vec!["echo '</pre><script>alert(1)</script>'".to_string()];
    }
    let html = report::html(&results);
    assert!(
        !html.contains("<b>") && !html.contains("<script>"),
        "{html}"
    );
    assert_contains(&html, "&lt;b&gt;Maria &amp; &quot;DB&quot;&lt;/b&gt; QPS");
    assert_contains(&html, "&lt;/pre&gt;&lt;script&gt;");
    assert_eq!(count(&html, "<svg"), count(&html, "</svg>"));
    let markdown = report::markdown(&results);
    assert_contains(&markdown, "| <b>Maria & \"DB\"</b> QPS |");
}

#[test]
fn output_is_deterministic() {
    let results = all_fixtures();
    assert_eq!(report::markdown(&results), report::markdown(&results));
    assert_eq!(report::html(&results), report::html(&results));
    let first = tempfile::tempdir().expect("temporary folder");
    let second = tempfile::tempdir().expect("temporary folder");
    let a = report::render(&results, first.path()).expect("render");
    let b = report::render(&results, second.path()).expect("render");
    assert_eq!(read(&a.markdown), read(&b.markdown));
    assert_eq!(read(&a.html), read(&b.html));
    assert_eq!(read(&a.markdown), report::markdown(&results));
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A run of `workload` at `threads` whose summary has `qps` and `latency_ms`.
fn run(workload: &str, threads: u32, qps: f64, latency_ms: f64) -> SysbenchRun {
    SysbenchRun {
        workload: workload.to_string(),
        threads,
        summary: Some(SysbenchSummary {
            qps,
            tps: qps,
            latency_percentile: 95,
            latency_percentile_ms: latency_ms,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn matrix(label: &str, runs: Vec<SysbenchRun>) -> BenchResult {
    BenchResult::Sysbench(SysbenchMatrix {
        label: label.to_string(),
        environment: Default::default(),
        options: Default::default(),
        commands: vec![],
        prepare: None,
        runs,
        after: None,
    })
}

#[test]
fn odd_inputs_render_without_panicking() {
    let mut broken = run("oltp_insert", 1, f64::NAN, f64::INFINITY);
    broken.intervals = vec![SysbenchInterval {
        second: f64::NAN,
        tps: f64::INFINITY,
        latency_ms: f64::NAN,
        ..Default::default()
    }];
    broken.resources = Some(ResourceUsage {
        cpu_seconds: f64::NAN,
        cpu_cores: f64::NEG_INFINITY,
        ..Default::default()
    });
    let results = vec![
        // One thread count, zero throughput, no intervals, no resources.
        matrix("zero", vec![run("oltp_insert", 1, 0.0, 0.0)]),
        matrix("broken", vec![broken]),
        matrix("", vec![]),
        BenchResult::Tpcc(TpccResult {
            tpmc: f64::NAN,
            ..Default::default()
        }),
    ];
    let text = report::markdown(&results);
    // A zero baseline gives no percentage; NaN and infinities show as blanks, and so does the
    // run the third result does not have.
    assert_contains(
        &text,
        "| 1 | 0.00 | 0.00 | — | — | — | — | — | — | — | — |\n",
    );
    assert_contains(&text, "at 1 thread, broken and zero cannot be compared");
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    let html = report::html(&results);
    assert!(!html.contains("NaN") && !html.contains("inf"), "{html}");
    // What can be drawn: QPS and latency of the zero result, and the RSS of the broken one,
    // whose zero bytes are a value like any other.
    assert_eq!(count(&html, "<svg"), 3, "{html}");
    assert_eq!(count(&html, "</svg>"), 3);
    assert_eq!(count(&html, "<figure"), 3);
    assert_contains(&html, "<figure id=\"chart-oltp-insert-rss\">");
    // Nothing at all still makes a page.
    assert_contains(&report::markdown(&[]), "No results were given.");
    assert_eq!(count(&report::html(&[]), "<svg"), 0);
}

/// Runs Chromium with `args`, killing it after [`CHROMIUM_TIMEOUT`]; returns its status,
/// stdout and stderr.
fn chromium(args: &[String], scratch: &Path, name: &str) -> (ExitStatus, String, String) {
    let stdout_path = scratch.join(format!("{name}.stdout"));
    let stderr_path = scratch.join(format!("{name}.stderr"));
    let mut child = Command::new("chromium")
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).expect("stdout file"))
        .stderr(File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run chromium ({e}): it is not installed; scripts/test.sh installs it \
                 (apt-get install chromium)"
            )
        });
    let deadline = Instant::now() + CHROMIUM_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} did not finish in {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (status, read(&stdout_path), read(&stderr_path))
}

fn chromium_args(scratch: &Path, profile: &str, extra: &[String], page: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect();
    args.push(format!(
        "--user-data-dir={}",
        scratch.join(profile).display()
    ));
    args.extend(extra.iter().cloned());
    args.push(format!("file://{}", page.display()));
    args
}

/// Errors Chromium prints when the page itself is broken, as opposed to its usual complaints
/// about D-Bus or GPU access in a container.
fn assert_no_page_errors(stderr: &str) {
    for sign in ["net::ERR_", "Uncaught", "Not allowed to load"] {
        assert!(
            !stderr.contains(sign),
            "chromium reported {sign}:\n{stderr}"
        );
    }
}

#[test]
fn chromium_loads_the_page_and_draws_the_charts() {
    let scratch = tempfile::tempdir().expect("temporary folder");
    let files = report::render(&all_fixtures(), &scratch.path().join("out")).expect("render");
    let page: PathBuf = files.html.canonicalize().expect("report.html exists");
    let charts = SYSBENCH_CHARTS + TPCC_CHARTS;

    let args = chromium_args(
        scratch.path(),
        "profile-dom",
        &["--dump-dom".to_string()],
        &page,
    );
    let (status, dom, stderr) = chromium(&args, scratch.path(), "dom");
    assert!(
        status.success(),
        "chromium --dump-dom failed ({status}):\n{stderr}"
    );
    assert_no_page_errors(&stderr);
    assert_eq!(count(&dom, "<svg"), charts, "charts in the DOM:\n{dom}");
    assert_eq!(count(&dom, "</svg>"), charts);
    assert_eq!(count(&dom, "<figure id=\"chart-"), charts);
    // The parser kept every table and reached the end of the page: nothing was swallowed by
    // an unclosed element.
    assert_eq!(count(&dom, "<table>"), count(&read(&page), "<table>"));
    assert_contains(&dom, "Commands: MariaDB 10.11 (TPC-C)</h3>");

    let screenshot = scratch.path().join("report.png");
    let extra = [
        format!("--screenshot={}", screenshot.display()),
        "--window-size=1280,4000".to_string(),
        "--hide-scrollbars".to_string(),
    ];
    let args = chromium_args(scratch.path(), "profile-screenshot", &extra, &page);
    let (status, _, stderr) = chromium(&args, scratch.path(), "screenshot");
    assert!(
        status.success(),
        "chromium --screenshot failed ({status}):\n{stderr}"
    );
    assert_no_page_errors(&stderr);
    let png = std::fs::read(&screenshot).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {} ({e}); chromium said:\n{stderr}",
            screenshot.display()
        )
    });
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "the screenshot is a PNG"
    );
    assert!(
        png.len() > 20_000,
        "a 1280×4000 page of tables and charts is more than {} bytes",
        png.len()
    );
}
