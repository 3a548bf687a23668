//! `strata bench` end to end: a two-workload, one-thread-count sysbench matrix against a
//! playground the tool starts itself (prepared, restored before the write workload, sampled),
//! then `strata bench report` renders it with its charts.

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::{free_port, sysbench_binary};

/// Bound on each `strata bench` invocation; the matrix itself needs about 15 s.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

fn strata(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run strata");
    let deadline = std::time::Instant::now() + COMMAND_TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("strata {args:?} did not finish within {COMMAND_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "strata {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn sysbench_matrix_against_a_playground_and_its_report() {
    sysbench_binary();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The playground's status port is its port + 6080: both free, so the bench reads it.
    let port = (0..100)
        .map(|_| free_port())
        .find(|p| {
            p.checked_add(6080)
                .is_some_and(|s| std::net::TcpListener::bind(("127.0.0.1", s)).is_ok())
        })
        .expect("a free port with a free status port")
        .to_string();
    let result = root.join("strata.json");
    let out = strata(&[
        "bench",
        "sysbench",
        "run",
        "--playground",
        root.join("playground").to_str().unwrap(),
        "-P",
        &port,
        "--prepare",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--workloads",
        "oltp_read_only,oltp_update_index",
        "--threads",
        "2",
        "--time",
        "3",
        "--warmup",
        "1",
        "--restore",
        "--label",
        "Strata under test",
        "--out",
        result.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[2/2] oltp_update_index at 2 threads"),
        "{stderr}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(json["kind"], "sysbench");
    assert_eq!(json["label"], "Strata under test");
    assert!(json["environment"]["server_version"]
        .as_str()
        .unwrap()
        .contains("Strata"));
    assert_eq!(json["environment"]["sysbench_version"], "sysbench 1.0.20");
    // Prepare measured the data folder and the size the server reports.
    let prepare = &json["prepare"]["size"];
    assert!(prepare["disk_bytes"].as_u64().unwrap() > 0, "{prepare}");
    // 2 × 2000 rows of about 190 bytes each, plus the k index.
    assert!(
        prepare["logical_bytes"].as_u64().unwrap() > 700_000,
        "{prepare}"
    );
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (run, workload, restored) in [
        (&runs[0], "oltp_read_only", false),
        (&runs[1], "oltp_update_index", true),
    ] {
        assert_eq!(run["workload"], workload);
        assert_eq!(run["threads"], 2);
        assert_eq!(run["restored"], restored);
        assert_eq!(run["exit_code"], 0);
        assert!(run["failure"].is_null(), "{run}");
        let summary = &run["summary"];
        assert!(summary["tps"].as_f64().unwrap() > 0.0, "{summary}");
        assert!(summary["latency_percentile_ms"].as_f64().unwrap() > 0.0);
        assert_eq!(summary["latency_percentile"], 95);
        assert!(!run["intervals"].as_array().unwrap().is_empty());
        // The playground's process was sampled while sysbench ran.
        let resources = &run["resources"];
        assert!(
            resources["cpu_seconds"].as_f64().unwrap() > 0.0,
            "{resources}"
        );
        assert!(resources["rss_max_bytes"].as_u64().unwrap() > 0);
        // The server's own metrics, read around the run: every read and write sysbench
        // counted, timed by the server, and the block cache's hits.
        let server = &run["server"];
        let counted = summary["reads"].as_u64().unwrap() + summary["writes"].as_u64().unwrap();
        let statements = server["statements"].as_u64().unwrap();
        let all = counted + summary["other"].as_u64().unwrap();
        assert!(
            (counted..=all + 10).contains(&statements),
            "{statements} statements for sysbench's {counted} reads and writes: {server}"
        );
        assert!(server["p95_ms"].as_f64().unwrap() > 0.0, "{server}");
        assert!(
            server["p99_ms"].as_f64().unwrap() >= server["p95_ms"].as_f64().unwrap(),
            "{server}"
        );
        let hit = server["block_cache_hit_ratio"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&hit), "{server}");
    }
    // Writes were synced to disk by the server.
    assert!(runs[1]["resources"]["disk_write_bytes"].as_u64().unwrap() > 0);
    assert!(json["commands"].as_array().unwrap().iter().any(|c| c
        .as_str()
        .unwrap()
        .starts_with("sysbench oltp_update_index")));

    let report_dir = root.join("report");
    strata(&[
        "bench",
        "report",
        result.to_str().unwrap(),
        "--out",
        report_dir.to_str().unwrap(),
    ]);
    let markdown = std::fs::read_to_string(report_dir.join("report.md")).unwrap();
    assert!(markdown.contains("oltp_read_only"), "{markdown}");
    assert!(markdown.contains("oltp_update_index"), "{markdown}");
    assert!(markdown.contains("Strata under test"), "{markdown}");
    assert!(
        markdown.contains("The server's view: oltp_read_only"),
        "{markdown}"
    );
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    let charts = html.matches("<svg").count();
    assert!(charts >= 4, "{charts} charts in the HTML report");
    assert_eq!(charts, html.matches("</svg>").count());
}
