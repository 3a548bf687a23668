//! The server's processes: every open session, what it runs, and the switches that stop it.
//!
//! A session registers a [`Process`] when it opens and leaves the [`ProcessList`] when it is
//! dropped. `KILL QUERY` raises the process's interrupt; the running statement sees it at its
//! next check ([`Process::check`]: each page of a scan, each batch of a join step, each slice of
//! `SLEEP`) and fails with 1317, and the session goes on. `KILL [CONNECTION]` raises it for good
//! and calls the hook the protocol layer gave at connect time, which closes the socket: an idle
//! client sees its connection end at once, and the session (with its transaction and its
//! locks) is dropped when the connection's thread returns. `max_execution_time` is a deadline
//! checked at the same places (3024).
//!
//! Connection ids come from here, for protocol connections and embedded sessions alike, so
//! `CONNECTION_ID()`, `SHOW PROCESSLIST` and `KILL` all speak of the same numbers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::memory::{self, MemoryPool, StatementMemory};
use crate::peers;

/// The most characters of a statement a process keeps to show (MySQL keeps them all; a
/// multi-megabyte statement would be copied on every execution).
const INFO_CHARS_MAX: usize = 65_536;

/// What a [`Process::kill`] stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillScope {
    /// The running statement (`KILL QUERY`).
    Query,
    /// The statement and the connection (`KILL [CONNECTION]`, COM_PROCESS_KILL).
    Connection,
}

/// Interrupt states.
const RUNNING: u8 = 0;
const QUERY_KILLED: u8 = 1;
const CONNECTION_KILLED: u8 = 2;

/// Ends a connection from outside its thread (closes its socket).
pub type KillHook = Box<dyn Fn() + Send + Sync>;

/// Who a session serves, as the protocol layer knows it.
#[derive(Default)]
pub struct Client {
    /// The connection id announced in the handshake (from [`ProcessList::next_id`]).
    pub connection_id: u32,
    /// The user name the client gave.
    pub user: String,
    /// The client's address (`localhost` for an embedded session).
    pub host: String,
    /// The account the client logged in as, whose privileges every statement is checked
    /// against; None for a session of the embedded API, which may do anything.
    pub account: Option<crate::account::Identity>,
    /// The account's password expired: until it is changed, statements other than ALTER
    /// USER and SET PASSWORD get 1820.
    pub password_expired: bool,
    /// The TLS protocol version and cipher of the connection; None for a plain one.
    pub tls: Option<(String, String)>,
    /// The client asked for CLIENT_FOUND_ROWS: an UPDATE's affected rows are the rows it
    /// matched, not those it changed (Django counts on it).
    pub found_rows: bool,
    /// Ends the connection when it is killed.
    pub on_kill: Option<KillHook>,
}

/// What a process is doing, for SHOW PROCESSLIST.
struct Activity {
    database: Option<String>,
    /// The running statement's text; `None` between statements.
    info: Option<Arc<str>>,
    /// When the current statement (or the idle time) began.
    since: Instant,
    /// The statement waits in SLEEP() (state `User sleep`).
    user_sleep: bool,
}

/// One open session.
pub struct Process {
    id: u32,
    user: String,
    host: String,
    activity: Mutex<Activity>,
    interrupt: AtomicU8,
    /// The running statement's deadline in milliseconds after `epoch`; 0 for none.
    deadline_ms: AtomicU64,
    epoch: Instant,
    on_kill: Option<KillHook>,
    memory: StatementMemory,
}

impl Process {
    pub fn id(&self) -> u32 {
        self.id
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// Marks the start of a statement: forgets a `KILL QUERY` aimed at an earlier one, as
    /// MySQL does, sets the deadline `max_execution_ms` from now (0 for none) and the memory
    /// quota (0 for none); then admits it (see [`Process::admit`]) unless it is `control`
    /// (KILL, SHOW PROCESSLIST: what stops the statements holding the memory).
    // Hot path: every statement.
    pub fn begin_statement(
        &self,
        info: &Arc<str>,
        max_execution_ms: u64,
        memory_quota: u64,
        control: bool,
    ) -> Result<()> {
        self.memory.begin(memory_quota);
        let _ = self.interrupt.compare_exchange(
            QUERY_KILLED,
            RUNNING,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        self.set_deadline(max_execution_ms);
        {
            let mut activity = self.activity.lock();
            activity.info = Some(Arc::clone(info));
            activity.since = Instant::now();
            activity.user_sleep = false;
            activity.user_sleep = false;
        }
        if control {
            return Ok(());
        }
        self.admit()
    }

    /// Lets the statement start at once, unless the server's running statements hold nearly
    /// all of its memory pool: it then waits for them to give memory back, up to
    /// [`memory::ADMISSION_WAIT`] (1041 after that), and can be killed or time out meanwhile.
    fn admit(&self) -> Result<()> {
        let pool = self.memory.pool();
        if !pool.under_pressure() {
            return Ok(());
        }
        const STEP: std::time::Duration = std::time::Duration::from_millis(5);
        let started = Instant::now();
        loop {
            self.check()?;
            if !pool.under_pressure() {
                crate::metrics::admitted(true);
                return Ok(());
            }
            if started.elapsed() >= memory::ADMISSION_WAIT {
                crate::metrics::admitted(false);
                return Err(memory::admission_refused(self.id));
            }
            strata_fiber::sleep(STEP);
        }
    }

    /// Sets the running statement's deadline `max_execution_ms` from now (0 for none).
    pub fn set_deadline(&self, max_execution_ms: u64) {
        let deadline = match max_execution_ms {
            0 => 0,
            ms => (self.epoch.elapsed().as_millis() as u64)
                .saturating_add(ms)
                .max(1),
        };
        self.deadline_ms.store(deadline, Ordering::Relaxed);
    }

    /// Marks the end of a statement: what it held goes back to the server's pool.
    pub fn end_statement(&self) {
        self.memory.end();
        self.deadline_ms.store(0, Ordering::Relaxed);
        let mut activity = self.activity.lock();
        activity.info = None;
        activity.since = Instant::now();
    }

    /// Records the session's current database.
    pub fn set_database(&self, database: Option<&str>) {
        self.activity.lock().database = database.map(str::to_string);
    }

    /// Whether the running statement must stop: 1317 once killed, 3024 past its deadline.
    // Hot path: called per page of a scan and per batch of a join.
    pub fn check(&self) -> Result<()> {
        if self.interrupt.load(Ordering::Relaxed) != RUNNING {
            return Err(interrupted());
        }
        let deadline = self.deadline_ms.load(Ordering::Relaxed);
        if deadline != 0 && self.epoch.elapsed().as_millis() as u64 >= deadline {
            return Err(Error::new(
                3024,
                "HY000",
                "Query execution was interrupted, maximum statement execution time exceeded",
            ));
        }
        Ok(())
    }

    /// The working memory the running statement charged so far (its peak), in bytes.
    pub fn memory_used(&self) -> u64 {
        self.memory.used()
    }

    /// Charges `bytes` to the running statement (8175 past its quota, 8176 past the
    /// server's limit; see crate::memory).
    pub fn consume_memory(&self, bytes: usize) -> Result<()> {
        self.memory.consume(bytes, self.id)
    }

    /// Gives back `bytes` the running statement no longer holds.
    pub fn release_memory(&self, bytes: usize) {
        self.memory.release(bytes);
    }

    /// Whether the running statement holds most of its quota (see crate::memory).
    pub fn memory_pressed(&self) -> bool {
        self.memory.pressed()
    }

    /// Notes that the running statement waits in SLEEP() or no longer does.
    pub fn set_user_sleep(&self, on: bool) {
        self.activity.lock().user_sleep = on;
    }

    /// Whether the connection was killed.
    pub fn connection_killed(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) == CONNECTION_KILLED
    }

    /// Stops the running statement, and with [`KillScope::Connection`] the connection too.
    pub fn kill(&self, scope: KillScope) {
        match scope {
            KillScope::Query => {
                let _ = self.interrupt.compare_exchange(
                    RUNNING,
                    QUERY_KILLED,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            KillScope::Connection => {
                self.interrupt.store(CONNECTION_KILLED, Ordering::Relaxed);
                if let Some(hook) = &self.on_kill {
                    hook();
                }
            }
        }
    }
}

/// A transaction of the session stops waiting for other transactions' locks once its
/// statement is killed or out of time.
impl strata_txn::Interrupt for Process {
    fn interrupted(&self) -> bool {
        self.check().is_err()
    }
}

/// A statement's text as a process shows it (its first [`INFO_CHARS_MAX`] characters).
pub fn info_text(text: &str) -> Arc<str> {
    match text.char_indices().nth(INFO_CHARS_MAX) {
        Some((end, _)) => Arc::from(&text[..end]),
        None => Arc::from(text),
    }
}

/// 1317, the error of a killed statement.
pub fn interrupted() -> Error {
    Error::new(1317, "70100", "Query execution was interrupted")
}

/// One row of SHOW PROCESSLIST.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessRow {
    pub id: u32,
    pub user: String,
    pub host: String,
    pub database: Option<String>,
    /// The running statement, or `None` when the session sleeps between statements.
    pub info: Option<Arc<str>>,
    pub seconds: u64,
    /// Working memory the running statement holds, in bytes (TiDB's MEM).
    pub memory: u64,
    /// The statement waits in SLEEP().
    pub user_sleep: bool,
}

impl ProcessRow {
    /// MySQL's Command column: `Query` while a statement runs, else `Sleep`.
    pub fn command(&self) -> &'static str {
        if self.info.is_some() {
            "Query"
        } else {
            "Sleep"
        }
    }

    /// MySQL's State column.
    pub fn state(&self) -> &'static str {
        match (&self.info, self.user_sleep) {
            (None, _) => "",
            (Some(_), true) => "User sleep",
            (Some(_), false) => "executing",
        }
    }
}

/// Every open session of the server.
pub struct ProcessList {
    processes: Mutex<HashMap<u32, Arc<Process>>>,
    next_id: AtomicU32,
    /// This node's slot of connection ids in a cluster (0: alone), in the high bits of every id
    /// (see peers.rs).
    slot: AtomicU32,
    memory: Arc<MemoryPool>,
}

impl Default for ProcessList {
    fn default() -> ProcessList {
        ProcessList {
            processes: Mutex::new(HashMap::new()),
            next_id: AtomicU32::new(1),
            slot: AtomicU32::new(0),
            memory: Arc::new(MemoryPool::default()),
        }
    }
}

impl ProcessList {
    /// The working memory the statements of every process share.
    pub fn memory(&self) -> &MemoryPool {
        &self.memory
    }

    /// A fresh connection id; 0 is skipped when the counter wraps.
    pub fn next_id(&self) -> u32 {
        let slot = self.slot.load(Ordering::Relaxed) << peers::LOCAL_BITS;
        loop {
            let n = self.next_id.fetch_add(1, Ordering::Relaxed) & ((1 << peers::LOCAL_BITS) - 1);
            let id = slot | n;
            if n != 0 && !self.processes.lock().contains_key(&id) {
                return id;
            }
        }
    }

    /// Numbers the connections opened from now on in `slot` (a cluster's SQL node).
    pub fn set_slot(&self, slot: u32) {
        self.slot.store(slot, Ordering::Relaxed);
    }

    /// This node's slot of connection ids, when it is part of a cluster.
    pub fn slot(&self) -> Option<u32> {
        Some(self.slot.load(Ordering::Relaxed)).filter(|&slot| slot != 0)
    }

    /// Registers the process of a session opened for `client` in `database`.
    pub fn register(&self, client: Client, database: Option<&str>) -> Arc<Process> {
        let process = Arc::new(Process {
            id: client.connection_id,
            user: client.user,
            host: client.host,
            activity: Mutex::new(Activity {
                database: database.map(str::to_string),
                info: None,
                since: Instant::now(),
                user_sleep: false,
            }),
            interrupt: AtomicU8::new(RUNNING),
            deadline_ms: AtomicU64::new(0),
            epoch: Instant::now(),
            on_kill: client.on_kill,
            memory: StatementMemory::new(Arc::clone(&self.memory)),
        });
        let replaced = self
            .processes
            .lock()
            .insert(process.id, Arc::clone(&process));
        // A connection that changed its user (COM_CHANGE_USER) opens its new session before
        // the old one closes: the old one is gone from the list from here on.
        if replaced.is_some() {
            crate::metrics::session_closed();
        }
        crate::metrics::session_opened();
        process
    }

    /// Removes `process` (its session closed), unless a newer session of its connection took
    /// its place.
    pub fn deregister(&self, process: &Arc<Process>) {
        let mut processes = self.processes.lock();
        if processes
            .get(&process.id)
            .is_some_and(|listed| Arc::ptr_eq(listed, process))
        {
            processes.remove(&process.id);
            drop(processes);
            crate::metrics::session_closed();
        }
    }

    /// The process `id`, if its session is open.
    pub fn get(&self, id: u32) -> Option<Arc<Process>> {
        self.processes.lock().get(&id).cloned()
    }

    /// What every session is doing, by id.
    pub fn rows(&self) -> Vec<ProcessRow> {
        let processes: Vec<Arc<Process>> = self.processes.lock().values().cloned().collect();
        let mut rows: Vec<ProcessRow> = processes
            .iter()
            .map(|p| {
                let activity = p.activity.lock();
                ProcessRow {
                    id: p.id,
                    user: p.user.clone(),
                    host: p.host.clone(),
                    database: activity.database.clone(),
                    info: activity.info.clone(),
                    seconds: activity.since.elapsed().as_secs(),
                    memory: if activity.info.is_some() {
                        p.memory.used()
                    } else {
                        0
                    },
                    user_sleep: activity.user_sleep,
                }
            })
            .collect();
        rows.sort_by_key(|r| r.id);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(id: u32) -> Client {
        Client {
            connection_id: id,
            user: "root".into(),
            host: "localhost".into(),
            on_kill: None,
            ..Client::default()
        }
    }

    #[test]
    fn kill_query_stops_the_running_statement_only() {
        let list = ProcessList::default();
        let p = list.register(client(7), None);
        p.begin_statement(&info_text("SELECT 1"), 0, 0, false)
            .unwrap();
        assert!(p.check().is_ok());
        p.kill(KillScope::Query);
        assert_eq!(p.check().unwrap_err().code(), 1317);
        p.end_statement();
        p.begin_statement(&info_text("SELECT 2"), 0, 0, false)
            .unwrap();
        assert!(p.check().is_ok(), "the next statement runs");
        assert!(!p.connection_killed());
        p.kill(KillScope::Connection);
        p.begin_statement(&info_text("SELECT 3"), 0, 0, false)
            .unwrap();
        assert_eq!(
            p.check().unwrap_err().code(),
            1317,
            "a killed connection stays killed"
        );
        assert!(p.connection_killed());
    }

    #[test]
    fn a_deadline_gives_3024() {
        let list = ProcessList::default();
        let p = list.register(client(1), Some("d"));
        p.begin_statement(&info_text("SELECT SLEEP(1)"), 1, 0, false)
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(p.check().unwrap_err().code(), 3024);
        p.end_statement();
        assert!(p.check().is_ok());
        let rows = list.rows();
        assert_eq!((rows[0].id, rows[0].database.as_deref()), (1, Some("d")));
        list.deregister(&p);
        assert!(list.get(1).is_none());
    }

    #[test]
    fn a_session_that_took_the_place_of_another_stays_listed() {
        let list = ProcessList::default();
        let old = list.register(client(1), None);
        let new = list.register(client(1), Some("d"));
        list.deregister(&old);
        assert!(list.get(1).is_some_and(|p| Arc::ptr_eq(&p, &new)));
        list.deregister(&new);
        assert!(list.get(1).is_none());
    }
}
