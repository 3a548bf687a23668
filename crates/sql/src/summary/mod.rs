//! The statement summary: every statement the server ran, grouped by digest (its text with
//! the literals taken out, [`digest`]), schema and user, with its count, errors, latencies and
//! rows, over a window of `tidb_stmt_summary_refresh_interval` seconds (30 minutes by
//! default); closed windows are kept, up to `tidb_stmt_summary_history_size` of them.
//! `information_schema.STATEMENTS_SUMMARY` shows the current window and
//! `STATEMENTS_SUMMARY_HISTORY` every kept one, with TiDB's column names; the status port's
//! dashboard lists the top statements from it.
//!
//! At most `tidb_stmt_summary_max_stmt_count` groups are kept per window: a new one then
//! evicts the group seen least recently (the evictions are counted). The groups are spread
//! over shards so that sessions recording at once rarely wait for each other.

pub mod digest;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::{Mutex, RwLock};
use strata_codec::Datum;

use crate::metrics::StatementKind;
pub use digest::Normalized;

/// Shards of one window's groups.
const SHARDS: usize = 16;

/// What the summary keeps, from the global variables (TiDB's names and defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// `tidb_enable_stmt_summary`.
    pub enabled: bool,
    /// `tidb_stmt_summary_refresh_interval`.
    pub refresh: Duration,
    /// `tidb_stmt_summary_history_size`: closed windows kept.
    pub history: usize,
    /// `tidb_stmt_summary_max_stmt_count`: groups per window.
    pub max_count: usize,
    /// `tidb_stmt_summary_max_sql_length`: bytes of digest and sample text kept.
    pub max_sql_length: usize,
}

pub const REFRESH_S_DEFAULT: i64 = 1800;
pub const HISTORY_DEFAULT: i64 = 24;
pub const MAX_COUNT_DEFAULT: i64 = 3000;
pub const MAX_SQL_LENGTH_DEFAULT: i64 = 4096;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            enabled: true,
            refresh: Duration::from_secs(REFRESH_S_DEFAULT as u64),
            history: HISTORY_DEFAULT as usize,
            max_count: MAX_COUNT_DEFAULT as usize,
            max_sql_length: MAX_SQL_LENGTH_DEFAULT as usize,
        }
    }
}

/// One statement that ran.
pub struct Execution<'a> {
    pub kind: StatementKind,
    pub schema: Option<&'a str>,
    pub user: &'a str,
    pub normalized: &'a Normalized,
    /// Its text (kept as the sample when the group is new).
    pub text: &'a str,
    pub took: Duration,
    pub failed: bool,
    pub rows_sent: u64,
    pub rows_affected: u64,
}

/// One group: the statements of one digest, schema and user in one window.
#[derive(Clone)]
struct Group {
    hash: u64,
    kind: StatementKind,
    schema: Option<Box<str>>,
    user: Box<str>,
    digest_text: Arc<str>,
    digest: Arc<str>,
    sample: Box<str>,
    count: u64,
    errors: u64,
    latency_sum: Duration,
    latency_max: Duration,
    latency_min: Duration,
    rows_sent_sum: u64,
    rows_sent_max: u64,
    affected_sum: u64,
    first_seen: SystemTime,
    last_seen: SystemTime,
}

impl Group {
    fn is(&self, execution: &Execution) -> bool {
        self.digest_text == execution.normalized.text
            && *self.user == *execution.user
            && self.schema.as_deref() == execution.schema
    }

    fn add(&mut self, execution: &Execution, now: SystemTime) {
        self.count += 1;
        self.errors += u64::from(execution.failed);
        self.latency_sum += execution.took;
        self.latency_max = self.latency_max.max(execution.took);
        self.latency_min = self.latency_min.min(execution.took);
        self.rows_sent_sum += execution.rows_sent;
        self.rows_sent_max = self.rows_sent_max.max(execution.rows_sent);
        self.affected_sum += execution.rows_affected;
        self.last_seen = now;
    }
}

#[derive(Default)]
struct Shard {
    groups: HashMap<u64, Vec<Group>>,
    len: usize,
}

impl Shard {
    /// Drops the group seen least recently.
    fn evict_oldest(&mut self) {
        let oldest = self
            .groups
            .iter()
            .flat_map(|(hash, groups)| {
                groups
                    .iter()
                    .enumerate()
                    .map(move |(i, g)| (g.last_seen, *hash, i))
            })
            .min_by_key(|(seen, _, _)| *seen);
        if let Some((_, hash, i)) = oldest {
            let groups = self.groups.get_mut(&hash).expect("just found");
            groups.swap_remove(i);
            if groups.is_empty() {
                self.groups.remove(&hash);
            }
            self.len -= 1;
        }
    }
}

/// The current window.
struct Window {
    begin: SystemTime,
    /// Its planned end (begin + the refresh interval when it opened).
    end: SystemTime,
    shards: Vec<Mutex<Shard>>,
}

impl Window {
    fn new(begin: SystemTime, refresh: Duration) -> Window {
        Window {
            begin,
            end: begin + refresh,
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
        }
    }
}

/// A closed window.
struct Closed {
    begin: SystemTime,
    end: SystemTime,
    groups: Vec<Group>,
}

/// The server's statement summary.
pub struct StatementSummary {
    current: RwLock<Window>,
    /// The current window's begin, in seconds since the epoch (read without the lock).
    begin_secs: AtomicU64,
    history: Mutex<VecDeque<Closed>>,
    evicted: AtomicU64,
}

impl Default for StatementSummary {
    fn default() -> StatementSummary {
        let now = SystemTime::now();
        StatementSummary {
            current: RwLock::new(Window::new(now, Settings::default().refresh)),
            begin_secs: AtomicU64::new(epoch_secs(now)),
            history: Mutex::new(VecDeque::new()),
            evicted: AtomicU64::new(0),
        }
    }
}

fn epoch_secs(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl StatementSummary {
    /// Counts one execution.
    // Hot path: every statement.
    pub fn record(&self, settings: &Settings, execution: &Execution) {
        if !settings.enabled {
            return;
        }
        let now = SystemTime::now();
        if epoch_secs(now) >= self.begin_secs.load(Ordering::Relaxed) + settings.refresh.as_secs() {
            self.rotate(settings, now);
        }
        let window = self.current.read();
        let hash = execution.normalized.hash;
        let mut shard = window.shards[(hash as usize) % SHARDS].lock();
        if let Some(group) = shard
            .groups
            .get_mut(&hash)
            .and_then(|groups| groups.iter_mut().find(|g| g.is(execution)))
        {
            group.add(execution, now);
            return;
        }
        let per_shard = settings.max_count.div_ceil(SHARDS).max(1);
        while shard.len >= per_shard {
            shard.evict_oldest();
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
        let text = execution.normalized.text.clone();
        let mut group = Group {
            hash,
            kind: execution.kind,
            schema: execution.schema.map(Box::from),
            user: Box::from(execution.user),
            digest: Arc::from(digest::digest_hex(&text)),
            digest_text: text,
            sample: Box::from(digest::truncated(execution.text, settings.max_sql_length)),
            count: 0,
            errors: 0,
            latency_sum: Duration::ZERO,
            latency_max: Duration::ZERO,
            latency_min: Duration::MAX,
            rows_sent_sum: 0,
            rows_sent_max: 0,
            affected_sum: 0,
            first_seen: now,
            last_seen: now,
        };
        group.add(execution, now);
        shard.groups.entry(hash).or_default().push(group);
        shard.len += 1;
    }

    /// Closes the current window (if another session has not just done so) and opens the
    /// next one at `now`.
    fn rotate(&self, settings: &Settings, now: SystemTime) {
        let mut window = self.current.write();
        if epoch_secs(now) < epoch_secs(window.begin) + settings.refresh.as_secs() {
            return;
        }
        let old = std::mem::replace(&mut *window, Window::new(now, settings.refresh));
        self.begin_secs.store(epoch_secs(now), Ordering::Relaxed);
        drop(window);
        let groups = old
            .shards
            .into_iter()
            .flat_map(|shard| shard.into_inner().groups.into_values().flatten())
            .collect();
        let mut history = self.history.lock();
        history.push_back(Closed {
            begin: old.begin,
            end: now,
            groups,
        });
        while history.len() > settings.history {
            history.pop_front();
        }
    }

    /// Groups evicted to keep within `tidb_stmt_summary_max_stmt_count`.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// The rows of STATEMENTS_SUMMARY ([`COLUMNS`]): the current window; with `history`, the
    /// kept closed windows too (STATEMENTS_SUMMARY_HISTORY). `user` keeps only that user's.
    pub fn rows(&self, history: bool, user: Option<&str>) -> Vec<Vec<Datum>> {
        let mut rows = Vec::new();
        let keep = |g: &Group| user.is_none_or(|u| *g.user == *u);
        if history {
            for closed in self.history.lock().iter() {
                rows.extend(
                    closed
                        .groups
                        .iter()
                        .filter(|g| keep(g))
                        .map(|g| row(closed.begin, closed.end, g)),
                );
            }
        }
        let window = self.current.read();
        for shard in &window.shards {
            let shard = shard.lock();
            rows.extend(
                shard
                    .groups
                    .values()
                    .flatten()
                    .filter(|g| keep(g))
                    .map(|g| row(window.begin, window.end, g)),
            );
        }
        rows
    }

    /// The current window's groups with the most total latency, most first (the dashboard's
    /// top statements).
    pub fn top(&self, n: usize) -> Vec<TopStatement> {
        let window = self.current.read();
        let mut groups: Vec<Group> = window
            .shards
            .iter()
            .flat_map(|shard| {
                shard
                    .lock()
                    .groups
                    .values()
                    .flatten()
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        groups.sort_by(|a, b| b.latency_sum.cmp(&a.latency_sum).then(a.hash.cmp(&b.hash)));
        groups
            .into_iter()
            .take(n)
            .map(|g| TopStatement {
                digest_text: g.digest_text.to_string(),
                schema: g.schema.map(String::from),
                count: g.count,
                errors: g.errors,
                latency_sum: g.latency_sum,
                latency_max: g.latency_max,
                rows_sent_sum: g.rows_sent_sum,
            })
            .collect()
    }
}

/// One statement group as the dashboard lists it.
#[derive(Clone, Debug)]
pub struct TopStatement {
    pub digest_text: String,
    pub schema: Option<String>,
    pub count: u64,
    pub errors: u64,
    pub latency_sum: Duration,
    pub latency_max: Duration,
    pub rows_sent_sum: u64,
}

/// The columns of STATEMENTS_SUMMARY and STATEMENTS_SUMMARY_HISTORY (TiDB's names; latencies
/// in nanoseconds, times as `YYYY-MM-DD HH:MM:SS` in UTC).
pub(crate) const COLUMNS: &[(&str, crate::infoschema::Kind)] = {
    use crate::infoschema::Kind::{Int, Text};
    &[
        ("SUMMARY_BEGIN_TIME", Text),
        ("SUMMARY_END_TIME", Text),
        ("STMT_TYPE", Text),
        ("SCHEMA_NAME", Text),
        ("DIGEST", Text),
        ("DIGEST_TEXT", Text),
        ("SAMPLE_USER", Text),
        ("EXEC_COUNT", Int),
        ("SUM_ERRORS", Int),
        ("SUM_LATENCY", Int),
        ("MAX_LATENCY", Int),
        ("MIN_LATENCY", Int),
        ("AVG_LATENCY", Int),
        ("SUM_RESULT_ROWS", Int),
        ("MAX_RESULT_ROWS", Int),
        ("AVG_RESULT_ROWS", Int),
        ("AVG_AFFECTED_ROWS", Int),
        ("FIRST_SEEN", Text),
        ("LAST_SEEN", Text),
        ("QUERY_SAMPLE_TEXT", Text),
    ]
};

fn row(begin: SystemTime, end: SystemTime, g: &Group) -> Vec<Datum> {
    let text = |s: &str| Datum::Bytes(s.as_bytes().to_vec());
    let nanos = |d: Duration| Datum::UInt(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let count = g.count.max(1);
    vec![
        text(&time_text(begin)),
        text(&time_text(end)),
        text(g.kind.summary_type()),
        g.schema.as_deref().map_or(Datum::Null, text),
        text(&g.digest),
        text(&g.digest_text),
        text(&g.user),
        Datum::UInt(g.count),
        Datum::UInt(g.errors),
        nanos(g.latency_sum),
        nanos(g.latency_max),
        nanos(g.latency_min),
        nanos(g.latency_sum / u32::try_from(count).unwrap_or(u32::MAX)),
        Datum::UInt(g.rows_sent_sum),
        Datum::UInt(g.rows_sent_max),
        Datum::UInt(g.rows_sent_sum / count),
        Datum::UInt(g.affected_sum / count),
        text(&time_text(g.first_seen)),
        text(&time_text(g.last_seen)),
        text(&g.sample),
    ]
}

fn time_text(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    chrono::DateTime::from_timestamp(since.as_secs() as i64, 0)
        .unwrap_or_default()
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(summary: &StatementSummary, settings: &Settings, sql: &str, user: &str, ms: u64) {
        let mut buffer = String::new();
        let normalized = Normalized::of(sql, &mut buffer, settings.max_sql_length);
        summary.record(
            settings,
            &Execution {
                kind: StatementKind::Select,
                schema: Some("shop"),
                user,
                normalized: &normalized,
                text: sql,
                took: Duration::from_millis(ms),
                failed: ms == 0,
                rows_sent: 1,
                rows_affected: 0,
            },
        );
    }

    #[test]
    fn statements_of_one_digest_and_user_are_one_group() {
        let summary = StatementSummary::default();
        let settings = Settings::default();
        run(
            &summary,
            &settings,
            "SELECT c FROM t WHERE id = 1",
            "root",
            4,
        );
        run(&summary, &settings, "select c from t where id=2", "root", 2);
        run(
            &summary,
            &settings,
            "SELECT c FROM t WHERE id = 3",
            "bob",
            0,
        );
        let rows = summary.rows(false, None);
        assert_eq!(rows.len(), 2);
        let root = rows
            .iter()
            .find(|r| r[6] == Datum::Bytes(b"root".to_vec()))
            .unwrap();
        assert_eq!(root[7], Datum::UInt(2));
        assert_eq!(root[8], Datum::UInt(0));
        assert_eq!(root[9], Datum::UInt(6_000_000));
        assert_eq!(root[10], Datum::UInt(4_000_000));
        assert_eq!(root[11], Datum::UInt(2_000_000));
        assert_eq!(
            root[5],
            Datum::Bytes(b"select c from t where id = ?".to_vec())
        );
        assert_eq!(
            root[19],
            Datum::Bytes(b"SELECT c FROM t WHERE id = 1".to_vec())
        );
        let bob = summary.rows(false, Some("bob"));
        assert_eq!(bob.len(), 1);
        assert_eq!(bob[0][8], Datum::UInt(1));
        assert_eq!(summary.top(1)[0].count, 2);
    }

    #[test]
    fn groups_beyond_the_limit_evict_the_oldest_and_windows_close() {
        let summary = StatementSummary::default();
        let settings = Settings {
            max_count: SHARDS,
            ..Settings::default()
        };
        for n in 0..200 {
            run(
                &summary,
                &settings,
                &format!("SELECT c{n} FROM t"),
                "root",
                1,
            );
        }
        let kept = summary.rows(false, None).len();
        assert!(kept <= SHARDS, "{kept} groups kept");
        assert_eq!(summary.evicted(), 200 - kept as u64);

        let closing = Settings {
            refresh: Duration::ZERO,
            history: 1,
            ..Settings::default()
        };
        run(&summary, &closing, "SELECT 1", "root", 1);
        // The old window is history; the new one holds the one statement.
        assert_eq!(summary.rows(false, None).len(), 1);
        assert_eq!(summary.rows(true, None).len(), kept + 1);
    }
}
