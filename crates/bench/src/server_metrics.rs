//! What a Strata server says of a run: its `/metrics` read before and after, giving the
//! statements it served, their mean and 95th/99th-percentile time as the server measured them
//! (from parse to answer, without the network and the client), commits, and the block cache's
//! hit ratio. Set beside sysbench's figures, they tell server time from client time.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long a scrape may take.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest page read.
const PAGE_BYTES_MAX: u64 = 32 << 20;

const STATEMENTS: &str = "strata_sql_statement_duration_seconds";
const COMMITS: &str = "strata_txn_commit_duration_seconds_count";
const ROCKSDB_EVENTS: &str = "strata_rocksdb_events_total";

/// The server's figures over one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerMetrics {
    /// Statements the server answered during the run.
    pub statements: u64,
    pub mean_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub commits: u64,
    /// Block cache hits over hits and misses; None without a read of the cache.
    pub block_cache_hit_ratio: Option<f64>,
}

/// The counters of one page of `/metrics`, summed over label sets.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    statements: f64,
    statement_seconds: f64,
    /// Cumulative statement counts by bucket bound (seconds).
    buckets: BTreeMap<u64, f64>,
    commits: f64,
    cache_hits: f64,
    cache_misses: f64,
}

/// Reads `/metrics` at `address` (`host:port` of a status port).
pub fn scrape(address: &str) -> Result<Snapshot, String> {
    let socket = address
        .to_socket_addrs()
        .map_err(|e| format!("{address}: {e}"))?
        .next()
        .ok_or_else(|| format!("{address}: no address"))?;
    let mut stream =
        TcpStream::connect_timeout(&socket, TIMEOUT).map_err(|e| format!("{address}: {e}"))?;
    stream.set_read_timeout(Some(TIMEOUT)).ok();
    stream.set_write_timeout(Some(TIMEOUT)).ok();
    write!(
        stream,
        "GET /metrics HTTP/1.0\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("{address}: {e}"))?;
    let mut answer = String::new();
    stream
        .take(PAGE_BYTES_MAX)
        .read_to_string(&mut answer)
        .map_err(|e| format!("{address}: {e}"))?;
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{address}: no HTTP answer"))?;
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        return Err(format!(
            "{address}: {}",
            head.lines().next().unwrap_or_default()
        ));
    }
    Ok(parse(body))
}

/// The counters of a Prometheus text page.
pub fn parse(page: &str) -> Snapshot {
    let mut snapshot = Snapshot::default();
    for line in page.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let (name, labels) = match series.split_once('{') {
            Some((name, labels)) => (name, labels.trim_end_matches('}')),
            None => (series, ""),
        };
        let label = |key: &str| {
            labels.split(',').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                (k.trim() == key).then(|| v.trim().trim_matches('"'))
            })
        };
        match name.strip_prefix(STATEMENTS) {
            Some("_count") => snapshot.statements += value,
            Some("_sum") => snapshot.statement_seconds += value,
            Some("_bucket") => {
                let bound = match label("le") {
                    Some("+Inf") => f64::INFINITY,
                    Some(b) => b.parse().unwrap_or(f64::INFINITY),
                    None => continue,
                };
                *snapshot.buckets.entry(bound.to_bits()).or_default() += value;
            }
            _ => {}
        }
        if name == COMMITS {
            snapshot.commits += value;
        }
        if name == ROCKSDB_EVENTS {
            match label("counter") {
                Some("block_cache_hit") => snapshot.cache_hits += value,
                Some("block_cache_miss") => snapshot.cache_misses += value,
                _ => {}
            }
        }
    }
    snapshot
}

/// The server's figures between two scrapes.
pub fn between(before: &Snapshot, after: &Snapshot) -> ServerMetrics {
    let statements = (after.statements - before.statements).max(0.0);
    let mean_ms = if statements > 0.0 {
        (after.statement_seconds - before.statement_seconds) / statements * 1000.0
    } else {
        0.0
    };
    let hits = after.cache_hits - before.cache_hits;
    let misses = after.cache_misses - before.cache_misses;
    ServerMetrics {
        statements: statements as u64,
        mean_ms,
        p95_ms: quantile(before, after, 0.95) * 1000.0,
        p99_ms: quantile(before, after, 0.99) * 1000.0,
        commits: (after.commits - before.commits).max(0.0) as u64,
        block_cache_hit_ratio: (hits + misses > 0.0).then(|| hits / (hits + misses)),
    }
}

/// The `q` quantile in seconds of the statements between two scrapes.
fn quantile(before: &Snapshot, after: &Snapshot, q: f64) -> f64 {
    let mut bounds: Vec<(f64, f64)> = after
        .buckets
        .iter()
        .map(|(bits, count)| {
            let earlier = before.buckets.get(bits).copied().unwrap_or(0.0);
            (f64::from_bits(*bits), (count - earlier).max(0.0))
        })
        .collect();
    bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    histogram_quantile(&bounds, q)
}

/// The `q` quantile of a histogram given as cumulative counts by upper bound, in bound order
/// with +Inf last, interpolated within the bucket it falls in (as Prometheus's
/// histogram_quantile); 0 for an empty histogram.
pub fn histogram_quantile(cumulative: &[(f64, f64)], q: f64) -> f64 {
    let Some(&(_, total)) = cumulative.last() else {
        return 0.0;
    };
    if total <= 0.0 {
        return 0.0;
    }
    let rank = q * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for &(bound, count) in cumulative {
        if count >= rank {
            if bound.is_infinite() {
                return lower;
            }
            let within = (rank - below) / (count - below).max(f64::MIN_POSITIVE);
            return lower + (bound - lower) * within.clamp(0.0, 1.0);
        }
        lower = bound;
        below = count;
    }
    lower
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(count: f64, sum: f64, fast: f64, hits: f64, misses: f64) -> String {
        format!(
            "# TYPE strata_sql_statement_duration_seconds histogram\n\
             strata_sql_statement_duration_seconds_bucket{{type=\"select\",le=\"0.001\"}} {fast}\n\
             strata_sql_statement_duration_seconds_bucket{{type=\"select\",le=\"0.01\"}} {count}\n\
             strata_sql_statement_duration_seconds_bucket{{type=\"select\",le=\"+Inf\"}} {count}\n\
             strata_sql_statement_duration_seconds_sum{{type=\"select\"}} {sum}\n\
             strata_sql_statement_duration_seconds_count{{type=\"select\"}} {count}\n\
             strata_txn_commit_duration_seconds_count{{kind=\"one_pc\"}} {count}\n\
             strata_rocksdb_events_total{{counter=\"block_cache_hit\"}} {hits}\n\
             strata_rocksdb_events_total{{counter=\"block_cache_miss\"}} {misses}\n"
        )
    }

    #[test]
    fn a_run_is_the_difference_of_two_pages() {
        let before = parse(&page(100.0, 1.0, 50.0, 10.0, 10.0));
        // 200 more: 100 under 1 ms, 100 between 1 and 10 ms; 90 hits, 10 misses.
        let after = parse(&page(300.0, 1.4, 150.0, 100.0, 20.0));
        let run = between(&before, &after);
        assert_eq!(run.statements, 200);
        assert_eq!(run.commits, 200);
        assert!((run.mean_ms - 2.0).abs() < 1e-9);
        assert!((run.p95_ms - 9.1).abs() < 1e-9, "{run:?}");
        assert!((run.p99_ms - 9.82).abs() < 1e-9, "{run:?}");
        assert_eq!(run.block_cache_hit_ratio, Some(0.9));
        let idle = between(&after, &after);
        assert_eq!((idle.statements, idle.p95_ms), (0, 0.0));
        assert_eq!(idle.block_cache_hit_ratio, None);
    }
}
