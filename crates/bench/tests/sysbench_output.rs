//! Parsing of real sysbench 1.0.20 output, captured from runs against a Strata playground
//! (tests/fixtures/sysbench/*.txt).

use strata_bench::sysbench::parse::parse_output;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/sysbench/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn read_write_with_ignored_errors() {
    let parsed = parse_output(&fixture("read_write_ignored_errors.txt"));
    assert_eq!(parsed.intervals.len(), 3);
    let second = &parsed.intervals[1];
    assert_eq!(second.second, 2.0);
    assert_eq!(second.threads, 2);
    assert_eq!(second.tps, 1028.14);
    assert_eq!(second.qps, 20579.72);
    assert_eq!(second.reads_per_second, 14407.90);
    assert_eq!(second.writes_per_second, 4114.54);
    assert_eq!(second.other_per_second, 2057.27);
    assert_eq!(second.latency_ms, 3.19);
    assert_eq!(second.errors_per_second, 1.0);
    assert_eq!(second.reconnects_per_second, 0.0);

    let s = parsed.summary.expect("a summary");
    assert_eq!(
        (s.reads, s.writes, s.other, s.total_queries),
        (38500, 10996, 5498, 54994)
    );
    assert_eq!(s.transactions, 2748);
    assert_eq!(s.tps, 914.41);
    assert_eq!(s.queries, 54994);
    assert_eq!(s.qps, 18299.56);
    assert_eq!(s.ignored_errors, 2);
    assert_eq!(s.ignored_errors_per_second, 0.67);
    assert_eq!((s.reconnects, s.reconnects_per_second), (0, 0.0));
    assert_eq!(s.total_time_seconds, 3.0038);
    assert_eq!(s.total_events, 2748);
    assert_eq!(s.latency_min_ms, 0.81);
    assert_eq!(s.latency_avg_ms, 2.18);
    assert_eq!(s.latency_max_ms, 26.41);
    assert_eq!(s.latency_percentile, 95);
    assert_eq!(s.latency_percentile_ms, 3.62);
    assert_eq!(s.latency_sum_ms, 5997.01);
    assert!(parsed.fatal.is_empty());
}

#[test]
fn another_percentile() {
    let parsed = parse_output(&fixture("point_select_p99.txt"));
    let s = parsed.summary.expect("a summary");
    assert_eq!(s.latency_percentile, 99);
    assert_eq!(s.latency_percentile_ms, 0.05);
    assert_eq!(s.transactions, 301683);
    assert_eq!(s.tps, 100448.07);
    assert_eq!(parsed.intervals.len(), 2);
    assert_eq!(parsed.intervals[1].latency_ms, 0.04);
    assert!(parsed.intervals.iter().all(|i| i.reads_per_second == i.qps));
}

#[test]
fn lost_connection_is_fatal_and_has_no_summary() {
    // The server was killed with SIGKILL two seconds into the run; no --mysql-ignore-errors.
    let parsed = parse_output(&fixture("lost_connection_fatal.txt"));
    assert!(parsed.summary.is_none());
    assert_eq!(parsed.intervals.len(), 2);
    assert_eq!(parsed.fatal.len(), 4);
    assert!(parsed.fatal[0].contains("error 2013"), "{:?}", parsed.fatal);
}

#[test]
fn reconnect_attempt_crashes_sysbench() {
    // With --mysql-ignore-errors=2013,2002,2006 sysbench tries to reconnect when the server is
    // killed; the Debian build (libmariadb) then dies with SIGSEGV (akopytov/sysbench#527):
    // the output stops after the last interval line, with no summary and no FATAL line.
    let text = fixture("reconnect_segfault.txt");
    let parsed = parse_output(&text);
    assert!(parsed.summary.is_none());
    assert!(!parsed.intervals.is_empty());
    assert!(parsed.fatal.is_empty());
    assert!(text.trim_end().ends_with("rc=139"));
}

#[test]
fn reconnect_counters_are_read() {
    // The reconnect counters have the same shape as the error counters; a run that did
    // reconnect prints, e.g.:
    let text = "\
[ 5s ] thds: 8 tps: 10.00 qps: 200.00 (r/w/o: 140.00/40.00/20.00) lat (ms,95%): 9.91 err/s: 3.00 reconn/s: 2.00
SQL statistics:
    queries performed:
        read:                            1400
        write:                           400
        other:                           200
        total:                           2000
    transactions:                        100    (10.00 per sec.)
    queries:                             2000   (200.00 per sec.)
    ignored errors:                      30     (3.00 per sec.)
    reconnects:                          20     (2.00 per sec.)

General statistics:
    total time:                          10.0004s
    total number of events:              100
";
    let parsed = parse_output(text);
    assert_eq!(parsed.intervals[0].reconnects_per_second, 2.0);
    let s = parsed.summary.unwrap();
    assert_eq!((s.reconnects, s.reconnects_per_second), (20, 2.0));
    assert_eq!((s.ignored_errors, s.ignored_errors_per_second), (30, 3.0));
}
