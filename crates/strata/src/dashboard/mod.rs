//! The built-in dashboard of a SQL node or playground, served by its status port: one
//! self-contained page (`/dashboard`, no script or style from elsewhere, nothing to build)
//! that reads `/dashboard/data` every few seconds and draws the cluster's members and health,
//! QPS and latency over the last 30 minutes, the top statements of the statement summary,
//! the slow log's latest entries and regions and leaders per store.
//!
//! The charts' history is kept here: a thread samples the process's statement metrics every
//! [`SAMPLE_INTERVAL`] and keeps [`HISTORY`] of them.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde_json::{json, Value};
use strata_codec::Datum;
use strata_pd_client::PdClient;
use strata_sql::SqlServer;

/// How often the statement metrics are sampled.
const SAMPLE_INTERVAL: Duration = Duration::from_secs(5);
/// How far back the charts go.
const HISTORY: Duration = Duration::from_secs(30 * 60);
/// Statements and slow queries listed.
const TOP_STATEMENTS: usize = 10;
const SLOW_QUERIES: usize = 10;
/// The statement duration histogram the charts are drawn from.
const STATEMENT_HISTOGRAM: &str = "strata_sql_statement_duration_seconds";

/// The page, served as it is.
pub const PAGE: &str = include_str!("page.html");

/// What the cluster around this SQL layer is.
pub enum Cluster {
    /// The playground: every role in this process.
    Playground,
    /// A SQL node of a cluster, with its placement drivers.
    Nodes(PdClient),
}

/// The dashboard's state: the server it shows and its sampled history.
pub struct Dashboard {
    sql: Arc<SqlServer>,
    cluster: Cluster,
    /// This SQL node's MySQL address.
    listen: SocketAddr,
    started: Instant,
    samples: Mutex<VecDeque<Sample>>,
}

/// The statement histogram summed over statement types at one moment.
#[derive(Clone, Debug)]
struct Sample {
    /// Milliseconds since the Unix epoch.
    at_ms: u64,
    count: f64,
    sum_seconds: f64,
    /// Cumulative counts by upper bound (seconds).
    buckets: Vec<(f64, f64)>,
}

impl Dashboard {
    /// The dashboard of `sql`, with its sampling thread started.
    pub fn start(
        sql: Arc<SqlServer>,
        cluster: Cluster,
        listen: SocketAddr,
    ) -> std::io::Result<Arc<Dashboard>> {
        let dashboard = Arc::new(Dashboard {
            sql,
            cluster,
            listen,
            started: Instant::now(),
            samples: Mutex::new(VecDeque::new()),
        });
        let weak = Arc::downgrade(&dashboard);
        std::thread::Builder::new()
            .name("dashboard-sampler".into())
            .spawn(move || {
                while let Some(dashboard) = weak.upgrade() {
                    dashboard.sample();
                    drop(dashboard);
                    std::thread::sleep(SAMPLE_INTERVAL);
                }
            })?;
        Ok(dashboard)
    }

    fn sample(&self) {
        let sample = sample_now();
        let mut samples = self.samples.lock();
        samples.push_back(sample);
        let kept = (HISTORY.as_secs() / SAMPLE_INTERVAL.as_secs()) as usize + 1;
        while samples.len() > kept {
            samples.pop_front();
        }
    }

    /// The page's data as JSON.
    pub fn data(&self) -> String {
        let mut samples: Vec<Sample> = self.samples.lock().iter().cloned().collect();
        // The last point runs to now.
        let now = sample_now();
        if samples.last().is_none_or(|s| now.at_ms >= s.at_ms + 1000) {
            samples.push(now);
        }
        let series: Vec<Value> = samples.windows(2).map(|w| point(&w[0], &w[1])).collect();
        let (members, stores, regions) = self.members_and_stores();
        let top: Vec<Value> = self
            .sql
            .statement_summary()
            .top(TOP_STATEMENTS)
            .into_iter()
            .map(|s| {
                json!({
                    "digest_text": s.digest_text,
                    "schema": s.schema,
                    "count": s.count,
                    "errors": s.errors,
                    "avg_ms": millis(s.latency_sum) / s.count.max(1) as f64,
                    "max_ms": millis(s.latency_max),
                    "total_ms": millis(s.latency_sum),
                    "rows": s.rows_sent_sum,
                })
            })
            .collect();
        json!({
            "role": match self.cluster {
                Cluster::Playground => "playground",
                Cluster::Nodes(_) => "SQL node",
            },
            "version": env!("CARGO_PKG_VERSION"),
            "uptime_seconds": self.started.elapsed().as_secs(),
            "sample_seconds": SAMPLE_INTERVAL.as_secs(),
            "members": members,
            "stores": stores,
            "regions": regions,
            "series": series,
            "top": top,
            "slow": slow_queries(),
        })
        .to_string()
    }

    /// The cluster's members, each store's regions and leaders, and the regions.
    fn members_and_stores(&self) -> (Vec<Value>, Vec<Value>, usize) {
        let sql_member = json!({
            "role": "SQL",
            "address": self.listen.to_string(),
            "state": "up",
        });
        match &self.cluster {
            Cluster::Playground => (
                vec![json!({
                    "role": "playground (SQL, KV and PD in one process)",
                    "address": self.listen.to_string(),
                    "state": "up",
                })],
                // One store holds the whole key space and leads it.
                vec![json!({
                    "id": 1,
                    "address": "embedded",
                    "state": "up",
                    "regions": 1,
                    "leaders": 1,
                })],
                1,
            ),
            Cluster::Nodes(pd) => {
                let mut members = Vec::new();
                match pd.members() {
                    Ok(answer) => members.extend(answer.members.iter().map(|m| {
                        json!({
                            "role": "PD",
                            "address": m.address,
                            "state": if m.id == answer.leader_id { "leader" } else { "up" },
                        })
                    })),
                    Err(e) => members.push(json!({
                        "role": "PD",
                        "address": "",
                        "state": format!("unreachable: {e}"),
                    })),
                }
                let (stores, regions) = stores(pd);
                members.extend(stores.iter().map(|s| {
                    json!({
                        "role": "KV",
                        "address": s["address"],
                        "state": s["state"],
                    })
                }));
                members.push(sql_member);
                (members, stores, regions)
            }
        }
    }
}

/// The KV stores PD knows, with their regions (as their heartbeats report them) and the
/// leaders among them; and the cluster's regions.
fn stores(pd: &PdClient) -> (Vec<Value>, usize) {
    let Ok(all) = pd.all_stores() else {
        return (Vec::new(), 0);
    };
    let regions = pd.scan_regions(b"", b"", u32::MAX).unwrap_or_default();
    let stores = all
        .iter()
        .filter_map(|state| {
            let store = state.store.as_ref()?;
            let leaders = regions
                .iter()
                .filter(|r| r.leader.as_ref().is_some_and(|l| l.store_id == store.id))
                .count();
            let up = Duration::from_millis(state.since_heartbeat_ms) < strata_pd::STORE_UP_WITHIN;
            Some(json!({
                "id": store.id,
                "address": store.address,
                "state": if up { "up" } else { "down" },
                "regions": state.region_count,
                "leaders": leaders,
            }))
        })
        .collect();
    (stores, regions.len())
}

/// The slow log's latest entries, newest first.
fn slow_queries() -> Vec<Value> {
    let rows = strata_sql::slowlog::rows();
    let field = |row: &[Datum], name: &str| -> Value {
        let at = strata_sql::slowlog::COLUMNS
            .iter()
            .position(|c| *c == name)
            .and_then(|i| row.get(i));
        match at {
            Some(Datum::Bytes(b)) => Value::String(String::from_utf8_lossy(b).into_owned()),
            Some(Datum::Float(f)) => json!(f),
            Some(Datum::Int(i)) => json!(i),
            Some(Datum::UInt(u)) => json!(u),
            _ => Value::Null,
        }
    };
    rows.iter()
        .rev()
        .take(SLOW_QUERIES)
        .map(|row| {
            json!({
                "time": field(row, "Time"),
                "user": field(row, "User"),
                "db": field(row, "DB"),
                "query_time": field(row, "Query_time"),
                "rows_sent": field(row, "Rows_sent"),
                "query": field(row, "Query"),
            })
        })
        .collect()
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The statement histogram, summed over statement types, now.
fn sample_now() -> Sample {
    let at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut sample = Sample {
        at_ms,
        count: 0.0,
        sum_seconds: 0.0,
        buckets: Vec::new(),
    };
    for family in prometheus::gather() {
        if family.get_name() != STATEMENT_HISTOGRAM {
            continue;
        }
        for metric in family.get_metric() {
            let histogram = metric.get_histogram();
            sample.count += histogram.get_sample_count() as f64;
            sample.sum_seconds += histogram.get_sample_sum();
            for (i, bucket) in histogram.get_bucket().iter().enumerate() {
                let bound = bucket.get_upper_bound();
                let count = bucket.get_cumulative_count() as f64;
                match sample.buckets.get_mut(i) {
                    Some(existing) if existing.0 == bound => existing.1 += count,
                    _ => sample.buckets.push((bound, count)),
                }
            }
        }
    }
    // The exposition leaves out the +Inf bucket: it holds every statement.
    sample.buckets.push((f64::INFINITY, sample.count));
    sample
}

/// One chart point: QPS, mean and 95th-percentile latency between two samples.
fn point(before: &Sample, after: &Sample) -> Value {
    let seconds = (after.at_ms.saturating_sub(before.at_ms) as f64 / 1000.0).max(0.001);
    let count = (after.count - before.count).max(0.0);
    let mean_ms = if count > 0.0 {
        (after.sum_seconds - before.sum_seconds) / count * 1000.0
    } else {
        0.0
    };
    json!({
        "t": after.at_ms,
        "qps": count / seconds,
        "avg_ms": mean_ms,
        "p95_ms": quantile(before, after, 0.95) * 1000.0,
    })
}

/// The `q` quantile (in seconds) of the statements between two samples.
fn quantile(before: &Sample, after: &Sample, q: f64) -> f64 {
    let deltas: Vec<(f64, f64)> = after
        .buckets
        .iter()
        .enumerate()
        .map(|(i, (bound, count))| {
            let earlier = before.buckets.get(i).map_or(0.0, |b| b.1);
            (*bound, (count - earlier).max(0.0))
        })
        .collect();
    strata_bench::server_metrics::histogram_quantile(&deltas, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_ms: u64, count: f64, sum_seconds: f64, buckets: &[(f64, f64)]) -> Sample {
        Sample {
            at_ms,
            count,
            sum_seconds,
            buckets: buckets.to_vec(),
        }
    }

    #[test]
    fn a_point_is_rate_mean_and_interpolated_p95_between_samples() {
        let before = sample(
            1_000,
            100.0,
            1.0,
            &[(0.001, 50.0), (0.01, 100.0), (f64::INFINITY, 100.0)],
        );
        // 200 more statements in 2 s: 100 under 1 ms, 100 between 1 and 10 ms.
        let after = sample(
            3_000,
            300.0,
            1.4,
            &[(0.001, 150.0), (0.01, 300.0), (f64::INFINITY, 300.0)],
        );
        let p = point(&before, &after);
        assert_eq!(p["qps"], 100.0);
        assert!((p["avg_ms"].as_f64().unwrap() - 2.0).abs() < 1e-9);
        // Rank 190 of 200: 90 of the second bucket's 100, 90 % of the way from 1 to 10 ms.
        assert!((p["p95_ms"].as_f64().unwrap() - 9.1).abs() < 1e-9, "{p}");
        let idle = point(&after, &sample(4_000, 300.0, 1.4, &after.buckets));
        assert_eq!(idle["qps"], 0.0);
        assert_eq!(idle["p95_ms"], 0.0);
    }
}
