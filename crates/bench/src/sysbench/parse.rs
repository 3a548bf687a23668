//! Parsing what sysbench 1.0.x prints: the `--report-interval` lines and the final summary.
//!
//! An interval line looks like
//! `[ 2s ] thds: 2 tps: 1028.14 qps: 20579.72 (r/w/o: 14407.90/4114.54/2057.27) lat (ms,95%): 3.19 err/s: 1.00 reconn/s: 0.00`
//! and the summary is the "SQL statistics", "General statistics" and "Latency (ms)" blocks.
//! Lines that are neither (FATAL messages, the banner) are skipped; a run that died before its
//! summary yields the intervals it printed and no summary.

use crate::result::{SysbenchInterval, SysbenchSummary};

/// What one sysbench run printed, parsed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedOutput {
    pub intervals: Vec<SysbenchInterval>,
    pub summary: Option<SysbenchSummary>,
    /// Lines starting with `FATAL:`, in order (the first few explain a failure).
    pub fatal: Vec<String>,
}

/// Parses the whole stdout (and stderr, if merged) of `sysbench … run`.
pub fn parse_output(text: &str) -> ParsedOutput {
    let mut out = ParsedOutput::default();
    let mut summary = SysbenchSummary::default();
    // Counts which summary fields were seen; a summary needs at least the transactions line
    // and the total time.
    let mut seen_transactions = false;
    let mut seen_total_time = false;
    let mut section = Section::None;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(interval) = parse_interval_line(line) {
            out.intervals.push(interval);
            continue;
        }
        if line.starts_with("FATAL:") {
            out.fatal.push(line.to_string());
            continue;
        }
        match line {
            "SQL statistics:" => section = Section::Sql,
            "General statistics:" => section = Section::General,
            "Latency (ms):" => section = Section::Latency,
            "Threads fairness:" => section = Section::None,
            _ => {}
        }
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        let rest = rest.trim();
        match section {
            Section::Sql => match name {
                "read" => summary.reads = first_u64(rest),
                "write" => summary.writes = first_u64(rest),
                "other" => summary.other = first_u64(rest),
                "total" => summary.total_queries = first_u64(rest),
                "transactions" => {
                    seen_transactions = true;
                    summary.transactions = first_u64(rest);
                    summary.tps = per_second(rest);
                }
                "queries" => {
                    summary.queries = first_u64(rest);
                    summary.qps = per_second(rest);
                }
                "ignored errors" => {
                    summary.ignored_errors = first_u64(rest);
                    summary.ignored_errors_per_second = per_second(rest);
                }
                "reconnects" => {
                    summary.reconnects = first_u64(rest);
                    summary.reconnects_per_second = per_second(rest);
                }
                _ => {}
            },
            Section::General => match name {
                "total time" => {
                    seen_total_time = true;
                    summary.total_time_seconds = number(rest.trim_end_matches('s'));
                }
                "total number of events" => summary.total_events = first_u64(rest),
                _ => {}
            },
            Section::Latency => match name {
                "min" => summary.latency_min_ms = number(rest),
                "avg" => summary.latency_avg_ms = number(rest),
                "max" => summary.latency_max_ms = number(rest),
                "sum" => summary.latency_sum_ms = number(rest),
                _ => {
                    // "95th percentile", "99th percentile", "1st percentile", …
                    if let Some(p) = name.strip_suffix(" percentile") {
                        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
                        summary.latency_percentile = digits.parse().unwrap_or(0);
                        summary.latency_percentile_ms = number(rest);
                    }
                }
            },
            Section::None => {}
        }
    }
    if seen_transactions && seen_total_time {
        out.summary = Some(summary);
    }
    out
}

#[derive(Clone, Copy)]
enum Section {
    None,
    Sql,
    General,
    Latency,
}

/// Parses one `--report-interval` line, or returns `None` if the line is something else.
pub fn parse_interval_line(line: &str) -> Option<SysbenchInterval> {
    let rest = line.strip_prefix('[')?;
    let (time, rest) = rest.split_once(']')?;
    let second = number_opt(time.trim().strip_suffix('s')?)?;
    let mut interval = SysbenchInterval {
        second,
        ..Default::default()
    };
    // Tokens come as `name: value` pairs, except the `(r/w/o: a/b/c)` group and the latency
    // label `lat (ms,95%):`.
    let mut tokens = rest.split_whitespace().peekable();
    let mut seen_tps = false;
    while let Some(token) = tokens.next() {
        match token {
            "thds:" => interval.threads = number_opt(tokens.next()?)? as u32,
            "tps:" => {
                interval.tps = number_opt(tokens.next()?)?;
                seen_tps = true;
            }
            "qps:" => interval.qps = number_opt(tokens.next()?)?,
            "(r/w/o:" => {
                let group = tokens.next()?.trim_end_matches(')');
                let mut parts = group.split('/');
                interval.reads_per_second = number_opt(parts.next()?)?;
                interval.writes_per_second = number_opt(parts.next()?)?;
                interval.other_per_second = number_opt(parts.next()?)?;
            }
            "lat" => {
                // `(ms,95%):` then the value.
                tokens.next()?;
                interval.latency_ms = number_opt(tokens.next()?)?;
            }
            "err/s:" => interval.errors_per_second = number_opt(tokens.next()?)?,
            "reconn/s:" => interval.reconnects_per_second = number_opt(tokens.next()?)?,
            _ => {}
        }
    }
    seen_tps.then_some(interval)
}

fn number_opt(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

fn number(s: &str) -> f64 {
    number_opt(s.split_whitespace().next().unwrap_or("")).unwrap_or(0.0)
}

fn first_u64(s: &str) -> u64 {
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The rate in `1234   (56.78 per sec.)`.
fn per_second(s: &str) -> f64 {
    s.split_once('(').map(|(_, r)| number(r)).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_line_with_all_fields() {
        let line = "[ 12s ] thds: 32 tps: 1028.14 qps: 20579.72 (r/w/o: 14407.90/4114.54/2057.27) lat (ms,95%): 3.19 err/s: 1.50 reconn/s: 0.25";
        let i = parse_interval_line(line).unwrap();
        assert_eq!(i.second, 12.0);
        assert_eq!(i.threads, 32);
        assert_eq!(i.tps, 1028.14);
        assert_eq!(i.qps, 20579.72);
        assert_eq!(i.reads_per_second, 14407.90);
        assert_eq!(i.writes_per_second, 4114.54);
        assert_eq!(i.other_per_second, 2057.27);
        assert_eq!(i.latency_ms, 3.19);
        assert_eq!(i.errors_per_second, 1.5);
        assert_eq!(i.reconnects_per_second, 0.25);
    }

    #[test]
    fn other_lines_are_not_intervals() {
        assert!(parse_interval_line("Threads started!").is_none());
        assert!(parse_interval_line("[ garbage ]").is_none());
        assert!(parse_interval_line("").is_none());
        assert!(parse_interval_line("[ 1s ] thds: x").is_none());
    }
}
