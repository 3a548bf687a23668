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
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// The working memory it charged, in bytes.
    pub memory: u64,
}

/// Counters of one group, kept in [`STRIPES`] cache lines that sessions on different
/// threads write apart, so that a statement run by every session at once (sysbench's point
/// select) is counted without a lock and without bouncing one line between the cores.
const STRIPES: usize = 8;

#[derive(Default)]
#[repr(align(64))]
struct Stripe {
    count: AtomicU64,
    errors: AtomicU64,
    latency_sum_ns: AtomicU64,
    latency_max_ns: AtomicU64,
    /// `u64::MAX` - the minimum, so that zero means none yet.
    latency_min_complement_ns: AtomicU64,
    rows_sent_sum: AtomicU64,
    rows_sent_max: AtomicU64,
    affected_sum: AtomicU64,
    memory_sum: AtomicU64,
    memory_max: AtomicU64,
    last_seen_ms: AtomicU64,
}

thread_local! {
    /// The stripe this thread counts in.
    static STRIPE: usize = {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        (NEXT.fetch_add(1, Ordering::Relaxed) as usize) % STRIPES
    };
}

/// One group: the statements of one digest, schema and user in one window.
struct Group {
    hash: u64,
    kind: StatementKind,
    schema: Option<Box<str>>,
    user: Box<str>,
    digest_text: Arc<str>,
    digest: Arc<str>,
    sample: Box<str>,
    first_seen: SystemTime,
    stripes: [Stripe; STRIPES],
    /// Set when the group leaves its window's table: sessions that hold it look it up again.
    evicted: AtomicBool,
}

/// A group's counters summed over its stripes.
struct Totals {
    count: u64,
    errors: u64,
    latency_sum: Duration,
    latency_max: Duration,
    latency_min: Duration,
    rows_sent_sum: u64,
    rows_sent_max: u64,
    affected_sum: u64,
    memory_sum: u64,
    memory_max: u64,
    last_seen: SystemTime,
}

impl Group {
    fn is(&self, execution: &Execution) -> bool {
        (Arc::ptr_eq(&self.digest_text, &execution.normalized.text)
            || self.digest_text == execution.normalized.text)
            && *self.user == *execution.user
            && self.schema.as_deref() == execution.schema
    }

    // Hot path: every statement. Sums are atomic adds; a maximum is written only when it
    // grows, which is rare, so a statement costs two or three uncontended adds.
    fn add(&self, execution: &Execution, now_ms: u64) {
        let stripe = &self.stripes[STRIPE.with(|s| *s)];
        let took = u64::try_from(execution.took.as_nanos()).unwrap_or(u64::MAX);
        stripe.count.fetch_add(1, Ordering::Relaxed);
        if execution.failed {
            stripe.errors.fetch_add(1, Ordering::Relaxed);
        }
        stripe.latency_sum_ns.fetch_add(took, Ordering::Relaxed);
        raise(&stripe.latency_max_ns, took);
        raise(&stripe.latency_min_complement_ns, u64::MAX - took);
        if execution.rows_sent > 0 {
            stripe
                .rows_sent_sum
                .fetch_add(execution.rows_sent, Ordering::Relaxed);
            raise(&stripe.rows_sent_max, execution.rows_sent);
        }
        if execution.rows_affected > 0 {
            stripe
                .affected_sum
                .fetch_add(execution.rows_affected, Ordering::Relaxed);
        }
        if execution.memory > 0 {
            stripe
                .memory_sum
                .fetch_add(execution.memory, Ordering::Relaxed);
            raise(&stripe.memory_max, execution.memory);
        }
        raise(&stripe.last_seen_ms, now_ms);
    }

    fn totals(&self) -> Totals {
        let mut t = Totals {
            count: 0,
            errors: 0,
            latency_sum: Duration::ZERO,
            latency_max: Duration::ZERO,
            latency_min: Duration::ZERO,
            rows_sent_sum: 0,
            rows_sent_max: 0,
            affected_sum: 0,
            memory_sum: 0,
            memory_max: 0,
            last_seen: self.first_seen,
        };
        let (mut sum_ns, mut max_ns, mut min_complement, mut last_ms) = (0u64, 0u64, 0u64, 0u64);
        for stripe in &self.stripes {
            t.count += stripe.count.load(Ordering::Relaxed);
            t.errors += stripe.errors.load(Ordering::Relaxed);
            sum_ns = sum_ns.saturating_add(stripe.latency_sum_ns.load(Ordering::Relaxed));
            max_ns = max_ns.max(stripe.latency_max_ns.load(Ordering::Relaxed));
            min_complement =
                min_complement.max(stripe.latency_min_complement_ns.load(Ordering::Relaxed));
            t.rows_sent_sum += stripe.rows_sent_sum.load(Ordering::Relaxed);
            t.rows_sent_max = t
                .rows_sent_max
                .max(stripe.rows_sent_max.load(Ordering::Relaxed));
            t.affected_sum += stripe.affected_sum.load(Ordering::Relaxed);
            t.memory_sum += stripe.memory_sum.load(Ordering::Relaxed);
            t.memory_max = t.memory_max.max(stripe.memory_max.load(Ordering::Relaxed));
            last_ms = last_ms.max(stripe.last_seen_ms.load(Ordering::Relaxed));
        }
        t.latency_sum = Duration::from_nanos(sum_ns);
        t.latency_max = Duration::from_nanos(max_ns);
        if min_complement > 0 {
            t.latency_min = Duration::from_nanos(u64::MAX - min_complement);
        }
        t.last_seen = (UNIX_EPOCH + Duration::from_millis(last_ms)).max(self.first_seen);
        t
    }

    fn last_seen_ms(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.last_seen_ms.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0)
    }
}

/// Makes `value` at least `to`, writing only when it grows.
fn raise(value: &AtomicU64, to: u64) {
    if value.load(Ordering::Relaxed) < to {
        value.fetch_max(to, Ordering::Relaxed);
    }
}

#[derive(Default)]
struct Shard {
    groups: HashMap<u64, Vec<Arc<Group>>>,
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
                    .map(move |(i, g)| (g.last_seen_ms(), *hash, i))
            })
            .min_by_key(|(seen, _, _)| *seen);
        if let Some((_, hash, i)) = oldest {
            let groups = self.groups.get_mut(&hash).expect("just found");
            groups.swap_remove(i).evicted.store(true, Ordering::Relaxed);
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

    fn groups(&self) -> Vec<Arc<Group>> {
        self.shards
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
            .collect()
    }
}

/// A closed window.
struct Closed {
    begin: SystemTime,
    end: SystemTime,
    groups: Vec<Arc<Group>>,
}

/// The groups a session counted in lately, so that it counts again without a lookup or a
/// lock: by digest hash, with the window generation they belong to.
#[derive(Default)]
pub struct SessionCache {
    groups: HashMap<u64, (u64, Arc<Group>), BuildHasherDefault<HashIsKey>>,
}

/// The hasher of maps keyed by a digest hash: the key is a hash already.
#[derive(Default)]
struct HashIsKey(u64);

impl Hasher for HashIsKey {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl std::fmt::Debug for SessionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionCache({} groups)", self.groups.len())
    }
}

/// Groups a session keeps at most (it forgets them all when it has more).
const SESSION_CACHE_MAX: usize = 256;

/// The server's statement summary.
pub struct StatementSummary {
    current: RwLock<Window>,
    /// The current window's begin, in seconds since the epoch (read without the lock).
    begin_secs: AtomicU64,
    /// Bumped when a window closes: groups of older generations are history.
    generation: AtomicU64,
    history: Mutex<VecDeque<Closed>>,
    evicted: AtomicU64,
}

impl Default for StatementSummary {
    fn default() -> StatementSummary {
        let now = SystemTime::now();
        StatementSummary {
            current: RwLock::new(Window::new(now, Settings::default().refresh)),
            begin_secs: AtomicU64::new(epoch_secs(now)),
            generation: AtomicU64::new(0),
            history: Mutex::new(VecDeque::new()),
            evicted: AtomicU64::new(0),
        }
    }
}

fn epoch_secs(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl StatementSummary {
    /// Counts one execution, through the session's `cache` of groups.
    // Hot path: every statement.
    pub fn record(&self, settings: &Settings, execution: &Execution, cache: &mut SessionCache) {
        if !settings.enabled {
            return;
        }
        let now = SystemTime::now();
        let now_ms = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        if now_ms / 1000 >= self.begin_secs.load(Ordering::Relaxed) + settings.refresh.as_secs() {
            self.rotate(settings, now);
        }
        let generation = self.generation.load(Ordering::Acquire);
        let hash = execution.normalized.hash;
        if let Some((cached_generation, group)) = cache.groups.get(&hash) {
            if *cached_generation == generation
                && group.is(execution)
                && !group.evicted.load(Ordering::Relaxed)
            {
                group.add(execution, now_ms);
                return;
            }
        }
        let group = self.find_or_add(settings, execution, now);
        group.add(execution, now_ms);
        if cache.groups.len() >= SESSION_CACHE_MAX {
            cache.groups.clear();
        }
        cache.groups.insert(hash, (generation, group));
    }

    /// The group of `execution` in the current window, made when there is none.
    fn find_or_add(
        &self,
        settings: &Settings,
        execution: &Execution,
        now: SystemTime,
    ) -> Arc<Group> {
        let window = self.current.read();
        let hash = execution.normalized.hash;
        let mut shard = window.shards[(hash as usize) % SHARDS].lock();
        if let Some(group) = shard
            .groups
            .get(&hash)
            .and_then(|groups| groups.iter().find(|g| g.is(execution)))
        {
            return group.clone();
        }
        let per_shard = settings.max_count.div_ceil(SHARDS).max(1);
        while shard.len >= per_shard {
            shard.evict_oldest();
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
        let text = execution.normalized.text.clone();
        let group = Arc::new(Group {
            hash,
            kind: execution.kind,
            schema: execution.schema.map(Box::from),
            user: Box::from(execution.user),
            digest: Arc::from(digest::digest_hex(&text)),
            digest_text: text,
            sample: Box::from(digest::truncated(execution.text, settings.max_sql_length)),
            first_seen: now,
            stripes: Default::default(),
            evicted: AtomicBool::new(false),
        });
        shard.groups.entry(hash).or_default().push(group.clone());
        shard.len += 1;
        group
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
        self.generation.fetch_add(1, Ordering::Release);
        drop(window);
        let groups = old.groups();
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
        let keep = |g: &Arc<Group>| user.is_none_or(|u| *g.user == *u);
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
        let (begin, end, groups) = {
            let window = self.current.read();
            (window.begin, window.end, window.groups())
        };
        rows.extend(
            groups
                .iter()
                .filter(|g| keep(g))
                .map(|g| row(begin, end, g)),
        );
        rows
    }

    /// The current window's groups with the most total latency, most first (the dashboard's
    /// top statements).
    pub fn top(&self, n: usize) -> Vec<TopStatement> {
        let groups = self.current.read().groups();
        let mut top: Vec<(u64, TopStatement)> = groups
            .iter()
            .map(|g| {
                let t = g.totals();
                (
                    g.hash,
                    TopStatement {
                        digest_text: g.digest_text.to_string(),
                        schema: g.schema.as_deref().map(String::from),
                        count: t.count,
                        errors: t.errors,
                        latency_sum: t.latency_sum,
                        latency_max: t.latency_max,
                        rows_sent_sum: t.rows_sent_sum,
                    },
                )
            })
            .collect();
        top.sort_by(|(ha, a), (hb, b)| b.latency_sum.cmp(&a.latency_sum).then(ha.cmp(hb)));
        top.into_iter().take(n).map(|(_, t)| t).collect()
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
        ("AVG_MEM", Int),
        ("MAX_MEM", Int),
        ("FIRST_SEEN", Text),
        ("LAST_SEEN", Text),
        ("QUERY_SAMPLE_TEXT", Text),
    ]
};

fn row(begin: SystemTime, end: SystemTime, g: &Group) -> Vec<Datum> {
    let text = |s: &str| Datum::Bytes(s.as_bytes().to_vec());
    let nanos = |d: Duration| Datum::UInt(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let t = g.totals();
    let count = t.count.max(1);
    vec![
        text(&time_text(begin)),
        text(&time_text(end)),
        text(g.kind.summary_type()),
        g.schema.as_deref().map_or(Datum::Null, text),
        text(&g.digest),
        text(&g.digest_text),
        text(&g.user),
        Datum::UInt(t.count),
        Datum::UInt(t.errors),
        nanos(t.latency_sum),
        nanos(t.latency_max),
        nanos(t.latency_min),
        nanos(t.latency_sum / u32::try_from(count).unwrap_or(u32::MAX)),
        Datum::UInt(t.rows_sent_sum),
        Datum::UInt(t.rows_sent_max),
        Datum::UInt(t.rows_sent_sum / count),
        Datum::UInt(t.affected_sum / count),
        Datum::UInt(t.memory_sum / count),
        Datum::UInt(t.memory_max),
        text(&time_text(g.first_seen)),
        text(&time_text(t.last_seen)),
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
                memory: 0,
            },
            &mut SessionCache::default(),
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
            root[21],
            Datum::Bytes(b"SELECT c FROM t WHERE id = 1".to_vec())
        );
        let bob = summary.rows(false, Some("bob"));
        assert_eq!(bob.len(), 1);
        assert_eq!(bob[0][8], Datum::UInt(1));
        assert_eq!(summary.top(1)[0].count, 2);
    }

    #[test]
    fn a_session_counts_through_its_cache_until_the_group_leaves() {
        let summary = StatementSummary::default();
        let settings = Settings {
            max_count: 1,
            ..Settings::default()
        };
        let mut buffer = String::new();
        let mut cache = SessionCache::default();
        let mut count = |sql: &str, cache: &mut SessionCache| {
            let normalized = Normalized::of(sql, &mut buffer, 100);
            summary.record(
                &settings,
                &Execution {
                    kind: StatementKind::Select,
                    schema: None,
                    user: "root",
                    normalized: &normalized,
                    text: sql,
                    took: Duration::from_micros(10),
                    failed: false,
                    rows_sent: 0,
                    rows_affected: 0,
                    memory: 0,
                },
                cache,
            );
        };
        for _ in 0..3 {
            count("SELECT 1", &mut cache);
        }
        assert_eq!(cache.groups.len(), 1);
        assert_eq!(summary.top(5)[0].count, 3);
        // Another statement in the same shard evicts the group (one per shard here)...
        let other = (0..10_000)
            .map(|n| format!("SELECT c{n}"))
            .find(|sql| {
                let mut b = String::new();
                let n = Normalized::of(sql, &mut b, 100);
                n.hash as usize % SHARDS
                    == Normalized::of("SELECT 1", &mut b, 100).hash as usize % SHARDS
            })
            .unwrap();
        count(&other, &mut SessionCache::default());
        // ...and the session's next run makes it again instead of counting into the evicted one.
        count("SELECT 1", &mut cache);
        let top = summary.top(5);
        let group = top.iter().find(|t| t.digest_text == "select ?").unwrap();
        assert_eq!(group.count, 1);
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
