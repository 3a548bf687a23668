//! The slow query log: statements that ran at least `long_query_time` seconds, appended to
//! `slow_query_log_file` in MySQL's slow-log format (what `pt-query-digest` and
//! `mysqldumpslow` read), and read back as `information_schema.SLOW_QUERY`.
//!
//! As TiDB's, it is on by default with a 300 ms threshold (MySQL's is off, 10 s). The file is
//! the process's: the role that starts the SQL layer names it (the playground in its data
//! folder, a SQL node `strata-slow.log` or `--slow-query-log-file`); without one, nothing is
//! logged. One entry:
//!
//! ```text
//! # Time: 2026-12-05T15:04:05.123456Z
//! # Txn_start_ts: 464571349032779777
//! # User@Host: root[root] @  [127.0.0.1]  Id: 8
//! # Query_time: 0.301234  Rows_sent: 1  Rows_affected: 0
//! # Mem_max: 1048576
//! # Request_count: 2  Total_keys: 3  Process_keys: 1  KV_total: 0.000183
//! # Succ: Yes
//! use shop;
//! SET timestamp=1796481845;
//! SELECT SLEEP(0.3);
//! ```

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use strata_codec::Datum;

/// The most of the file's end that `information_schema.SLOW_QUERY` reads.
const READ_BYTES_MAX: u64 = 16 << 20;

/// The file entries go to, opened on first use.
struct Sink {
    path: Option<PathBuf>,
    file: Option<File>,
}

static SINK: LazyLock<Mutex<Sink>> = LazyLock::new(|| {
    Mutex::new(Sink {
        path: None,
        file: None,
    })
});

/// Makes `path` the slow log file of this process (it is created on the first entry).
pub fn set_file(path: &Path) {
    let mut sink = SINK.lock();
    sink.path = Some(path.to_path_buf());
    sink.file = None;
}

/// The slow log file, if this process has one.
pub fn file() -> Option<PathBuf> {
    SINK.lock().path.clone()
}

/// One slow statement.
pub struct Entry<'a> {
    pub user: &'a str,
    pub host: &'a str,
    pub connection_id: u32,
    pub database: Option<&'a str>,
    pub took: Duration,
    pub rows_sent: u64,
    pub rows_affected: u64,
    /// The working memory the statement charged, in bytes (TiDB's Mem_max).
    pub memory: u64,
    /// The start timestamp of the transaction it ran in (0 for none, or a read of the
    /// newest data without one).
    pub txn_start_ts: u64,
    /// What its reads asked of storage: TiDB's Request_count, Total_keys, Process_keys and
    /// KV_total.
    pub reads: strata_txn::ReadStats,
    pub succeeded: bool,
    pub query: &'a str,
}

/// Appends `entry` to the slow log file; a failure to write is logged, not returned (the
/// statement has run).
pub fn write(entry: &Entry) {
    let now = SystemTime::now();
    let text = format_entry(entry, now);
    let mut sink = SINK.lock();
    let Some(path) = sink.path.clone() else {
        return;
    };
    if sink.file.is_none() {
        match OpenOptions::new().create(true).append(true).open(&path) {
            Ok(file) => sink.file = Some(file),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot open the slow log");
                return;
            }
        }
    }
    if let Some(file) = &mut sink.file {
        if let Err(e) = file.write_all(text.as_bytes()) {
            tracing::warn!(path = %path.display(), error = %e, "cannot write the slow log");
            sink.file = None;
        }
    }
}

fn format_entry(entry: &Entry, now: SystemTime) -> String {
    let since_epoch = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let time =
        chrono::DateTime::from_timestamp(since_epoch.as_secs() as i64, since_epoch.subsec_nanos())
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%S%.6fZ");
    let mut query = entry.query.trim_end().trim_end_matches(';').to_string();
    query.push(';');
    let database = entry
        .database
        .map(|db| format!("use {db};\n"))
        .unwrap_or_default();
    format!(
        "# Time: {time}\n# Txn_start_ts: {start_ts}\n\
         # User@Host: {user}[{user}] @  [{host}]  Id: {id}\n\
         # Query_time: {took:.6}  Rows_sent: {sent}  Rows_affected: {affected}\n\
         # Mem_max: {memory}\n\
         # Request_count: {requests}  Total_keys: {total_keys}  Process_keys: {process_keys}  \
         KV_total: {kv_total:.6}\n\
         # Succ: {succ}\n\
         {database}SET timestamp={secs};\n{query}\n",
        start_ts = entry.txn_start_ts,
        requests = entry.reads.requests,
        total_keys = entry.reads.versions,
        process_keys = entry.reads.keys,
        kv_total = entry.reads.time.as_secs_f64(),
        user = entry.user,
        host = entry.host,
        id = entry.connection_id,
        took = entry.took.as_secs_f64(),
        sent = entry.rows_sent,
        affected = entry.rows_affected,
        memory = entry.memory,
        succ = if entry.succeeded { "Yes" } else { "No" },
        secs = since_epoch.as_secs(),
    )
}

/// The columns of `information_schema.SLOW_QUERY` (TiDB's names, the fields Strata logs).
pub const COLUMNS: &[&str] = &[
    "Time",
    "Txn_start_ts",
    "User",
    "Host",
    "Conn_ID",
    "Query_time",
    "Rows_sent",
    "Rows_affected",
    "Mem_max",
    "Request_count",
    "Total_keys",
    "Process_keys",
    "KV_total",
    "DB",
    "Succ",
    "Query",
];

/// The entries of the slow log file (of its last [`READ_BYTES_MAX`] bytes), as rows of
/// [`COLUMNS`]: Time as `YYYY-MM-DD HH:MM:SS.ffffff` text, Query_time in seconds.
pub fn rows() -> Vec<Vec<Datum>> {
    let Some(path) = file() else {
        return Vec::new();
    };
    let Ok(mut file) = File::open(&path) else {
        return Vec::new();
    };
    let length = file.metadata().map_or(0, |m| m.len());
    let start = length.saturating_sub(READ_BYTES_MAX);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(READ_BYTES_MAX).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    parse(&String::from_utf8_lossy(&bytes))
}

/// Parses slow-log text into rows of [`COLUMNS`]; text before the first `# Time:` (a cut
/// entry) is skipped.
fn parse(text: &str) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    let mut current: Option<ParsedEntry> = None;
    for line in text.lines() {
        if let Some(time) = line.strip_prefix("# Time: ") {
            rows.extend(current.take().map(ParsedEntry::into_row));
            current = Some(ParsedEntry {
                time: time.trim().trim_end_matches('Z').replacen('T', " ", 1),
                ..ParsedEntry::default()
            });
            continue;
        }
        let Some(entry) = current.as_mut() else {
            continue;
        };
        if let Some(ts) = line.strip_prefix("# Txn_start_ts: ") {
            entry.txn_start_ts = ts.trim().parse().unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("# Request_count: ") {
            let rest = format!("Request_count: {rest}");
            entry.requests = field(&rest, "Request_count:").unwrap_or(0.0) as u64;
            entry.total_keys = field(&rest, "Total_keys:").unwrap_or(0.0) as u64;
            entry.process_keys = field(&rest, "Process_keys:").unwrap_or(0.0) as u64;
            entry.kv_total = field(&rest, "KV_total:").unwrap_or(0.0);
        } else if let Some(rest) = line.strip_prefix("# User@Host: ") {
            entry.user = rest.split('[').next().unwrap_or("").to_string();
            entry.host = rest
                .split('[')
                .nth(2)
                .and_then(|h| h.split(']').next())
                .unwrap_or("")
                .to_string();
            entry.connection_id = field(rest, "Id:").unwrap_or(0.0) as u64;
        } else if let Some(rest) = line.strip_prefix("# Query_time: ") {
            let rest = format!("Query_time: {rest}");
            entry.query_time = field(&rest, "Query_time:").unwrap_or(0.0);
            entry.rows_sent = field(&rest, "Rows_sent:").unwrap_or(0.0) as u64;
            entry.rows_affected = field(&rest, "Rows_affected:").unwrap_or(0.0) as u64;
        } else if let Some(memory) = line.strip_prefix("# Mem_max: ") {
            entry.memory = memory.trim().parse().unwrap_or(0);
        } else if let Some(succ) = line.strip_prefix("# Succ: ") {
            entry.succeeded = succ.trim() == "Yes";
        } else if line.starts_with("# ") {
        } else if let Some(db) = line
            .strip_prefix("use ")
            .filter(|_| entry.query.is_empty() && entry.database.is_none())
        {
            entry.database = Some(db.trim_end_matches(';').to_string());
        } else if line.starts_with("SET timestamp=") && entry.query.is_empty() {
        } else {
            if !entry.query.is_empty() {
                entry.query.push('\n');
            }
            entry.query.push_str(line);
        }
    }
    rows.extend(current.map(ParsedEntry::into_row));
    rows
}

/// The number after `name` in `text`.
fn field(text: &str, name: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    words.find(|w| *w == name)?;
    words.next()?.parse().ok()
}

#[derive(Default)]
struct ParsedEntry {
    time: String,
    user: String,
    host: String,
    connection_id: u64,
    query_time: f64,
    rows_sent: u64,
    rows_affected: u64,
    memory: u64,
    txn_start_ts: u64,
    requests: u64,
    total_keys: u64,
    process_keys: u64,
    kv_total: f64,
    database: Option<String>,
    succeeded: bool,
    query: String,
}

impl ParsedEntry {
    fn into_row(self) -> Vec<Datum> {
        let text = |s: String| Datum::Bytes(s.into_bytes());
        vec![
            text(self.time),
            Datum::UInt(self.txn_start_ts),
            text(self.user),
            text(self.host),
            Datum::UInt(self.connection_id),
            Datum::Float(self.query_time),
            Datum::UInt(self.rows_sent),
            Datum::UInt(self.rows_affected),
            Datum::UInt(self.memory),
            Datum::UInt(self.requests),
            Datum::UInt(self.total_keys),
            Datum::UInt(self.process_keys),
            Datum::Float(self.kv_total),
            self.database.map_or(Datum::Null, text),
            Datum::UInt(u64::from(self.succeeded)),
            text(self.query),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_as_it_was_written() {
        let entry = Entry {
            user: "app",
            host: "10.0.0.7",
            connection_id: 42,
            database: Some("shop"),
            took: Duration::from_micros(1_234_567),
            rows_sent: 3,
            rows_affected: 0,
            memory: 4096,
            txn_start_ts: 464_571_349_032_779_777,
            reads: strata_txn::ReadStats {
                requests: 5,
                time: Duration::from_micros(2_500),
                keys: 7,
                versions: 12,
            },
            succeeded: true,
            query: "SELECT *\nFROM t WHERE a = 1;",
        };
        let time = UNIX_EPOCH + Duration::from_micros(1_796_481_845_123_456);
        let text = format_entry(&entry, time);
        assert_eq!(
            text,
            "# Time: 2026-12-05T14:44:05.123456Z\n# Txn_start_ts: 464571349032779777\n\
             # User@Host: app[app] @  [10.0.0.7]  Id: 42\n\
             # Query_time: 1.234567  Rows_sent: 3  Rows_affected: 0\n# Mem_max: 4096\n\
             # Request_count: 5  Total_keys: 12  Process_keys: 7  KV_total: 0.002500\n\
             # Succ: Yes\nuse shop;\n\
             SET timestamp=1796481845;\nSELECT *\nFROM t WHERE a = 1;\n"
        );
        let failed = Entry {
            database: None,
            succeeded: false,
            txn_start_ts: 0,
            query: "DELETE FROM t",
            ..entry
        };
        // A cut entry at the start of what is read is skipped.
        let text = format!(
            "SET timestamp=1;\nSELECT 1;\n{text}{}",
            format_entry(&failed, time)
        );
        let rows = parse(&text);
        assert_eq!(rows.len(), 2);
        let column = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
        let text_of = |d: &Datum| String::from_utf8(crate::types::datum_to_text(d)).unwrap();
        let (first, second) = (&rows[0], &rows[1]);
        assert_eq!(first.len(), COLUMNS.len());
        assert_eq!(
            text_of(&first[column("Time")]),
            "2026-12-05 14:44:05.123456"
        );
        assert_eq!(
            first[column("Txn_start_ts")],
            Datum::UInt(464_571_349_032_779_777)
        );
        assert_eq!(text_of(&first[column("User")]), "app");
        assert_eq!(text_of(&first[column("Host")]), "10.0.0.7");
        assert_eq!(first[column("Conn_ID")], Datum::UInt(42));
        assert_eq!(first[column("Query_time")], Datum::Float(1.234567));
        assert_eq!(first[column("Rows_sent")], Datum::UInt(3));
        assert_eq!(first[column("Mem_max")], Datum::UInt(4096));
        assert_eq!(first[column("Request_count")], Datum::UInt(5));
        assert_eq!(first[column("Total_keys")], Datum::UInt(12));
        assert_eq!(first[column("Process_keys")], Datum::UInt(7));
        assert_eq!(first[column("KV_total")], Datum::Float(0.0025));
        assert_eq!(text_of(&first[column("DB")]), "shop");
        assert_eq!(first[column("Succ")], Datum::UInt(1));
        assert_eq!(
            text_of(&first[column("Query")]),
            "SELECT *\nFROM t WHERE a = 1;"
        );
        assert_eq!(second[column("Txn_start_ts")], Datum::UInt(0));
        assert_eq!(second[column("DB")], Datum::Null);
        assert_eq!(second[column("Succ")], Datum::UInt(0));
        assert_eq!(text_of(&second[column("Query")]), "DELETE FROM t;");
    }
}
