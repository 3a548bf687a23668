//! Keeps the locks of a client's live transactions from being taken for abandoned ones.
//!
//! A lock lives for its time to live after its transaction's `start_ts`. Past it, a
//! transaction that meets the lock (waiting for it, reading or prewriting) checks the lock's
//! primary, and rolls the owner back when the primary's lock has expired too: that is how the
//! locks of a SQL node that died are cleared. An owner that lives longer keeps its primary's
//! lock alive, as TiDB's TTL manager does: a thread of the client sends a heartbeat for each
//! registered transaction whose primary lock has less than half of [`MANAGED_LOCK_TTL_MS`]
//! to live, extending it to that much past now.
//!
//! ```text
//!   lock_keys / commit ── register(start_ts, primary) ──▶ registry
//!   heartbeat thread, every HEARTBEAT_INTERVAL:
//!       each entry older than HEARTBEAT_INTERVAL and due ── txn_heart_beat(primary) ──▶ KV
//!   transaction ends ── guard dropped ──▶ unregistered
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam::channel::{self, RecvTimeoutError, Sender};
use parking_lot::Mutex;
use strata_kvapi::KvApi;
use strata_types::{Key, Timestamp};
use tracing::debug;

/// How long a pessimistic lock lives past the moment it was taken, or a heartbeat renewed it:
/// the longest the rows a dead SQL node locked stay locked.
pub const MANAGED_LOCK_TTL_MS: u64 = 10_000;
/// How often the heartbeat thread looks for locks to renew. A transaction younger than this
/// sends none (its locks were given their time to live within it).
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Registry {
    next_id: u64,
    /// Per registered transaction: its start_ts, its primary and when (wall-clock ms) the
    /// primary's lock expires as last set.
    live: HashMap<u64, (Timestamp, Key, u64)>,
}

/// The registry of live transactions and the thread that renews their locks; the thread stops
/// when this goes.
pub(crate) struct Heartbeats {
    registry: Arc<Mutex<Registry>>,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeats {
    pub(crate) fn start(kv: Arc<dyn KvApi>) -> Heartbeats {
        let registry: Arc<Mutex<Registry>> = Arc::default();
        let (stop, stopped) = channel::bounded::<()>(0);
        let thread = std::thread::Builder::new()
            .name("txn-heartbeat".into())
            .spawn({
                let registry = registry.clone();
                move || {
                    while let Err(RecvTimeoutError::Timeout) =
                        stopped.recv_timeout(HEARTBEAT_INTERVAL)
                    {
                        beat(&*kv, &registry);
                    }
                }
            });
        let thread = match thread {
            Ok(thread) => Some(thread),
            Err(e) => {
                tracing::error!(%e, "cannot start the transaction heartbeat thread");
                None
            }
        };
        Heartbeats {
            registry,
            stop: Some(stop),
            thread,
        }
    }

    /// Registers a transaction whose lock on `primary` lives `ttl_ms` past `start_ts`, until
    /// the guard drops.
    pub(crate) fn register(&self, start_ts: Timestamp, primary: Key, ttl_ms: u64) -> Heartbeat {
        let mut registry = self.registry.lock();
        registry.next_id += 1;
        let id = registry.next_id;
        let expires = start_ts.physical_ms().saturating_add(ttl_ms);
        registry.live.insert(id, (start_ts, primary, expires));
        Heartbeat {
            registry: self.registry.clone(),
            id,
        }
    }
}

impl Drop for Heartbeats {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One round: a heartbeat for each transaction whose primary lock is due.
fn beat(kv: &dyn KvApi, registry: &Mutex<Registry>) {
    let now = strata_types::wall_clock_ms();
    let interval_ms = HEARTBEAT_INTERVAL.as_millis() as u64;
    let due: Vec<(u64, Timestamp, Key)> = registry
        .lock()
        .live
        .iter()
        .filter(|(_, (start_ts, _, expires))| {
            start_ts.elapsed_ms() >= interval_ms
                && expires.saturating_sub(now) < MANAGED_LOCK_TTL_MS / 2
        })
        .map(|(id, (start_ts, primary, _))| (*id, *start_ts, primary.clone()))
        .collect();
    for (id, start_ts, primary) in due {
        let advised = start_ts.elapsed_ms() + MANAGED_LOCK_TTL_MS;
        match kv.txn_heart_beat(&primary, start_ts, advised) {
            Ok(ttl_ms) => {
                if let Some(entry) = registry.lock().live.get_mut(&id) {
                    if entry.1 == primary {
                        entry.2 = start_ts.physical_ms().saturating_add(ttl_ms);
                    }
                }
            }
            // The transaction finished meanwhile, or lost its lock (it then fails at commit).
            Err(e) => debug!(%e, start_ts = start_ts.0, "transaction heartbeat failed"),
        }
    }
}

/// Keeps one transaction registered for heartbeats.
pub(crate) struct Heartbeat {
    registry: Arc<Mutex<Registry>>,
    id: u64,
}

impl Heartbeat {
    /// The transaction's primary changed (a statement that chose it was undone), or its lock
    /// now lives `ttl_ms` past `start_ts` (its prewrite replaced it).
    pub(crate) fn update(&self, primary: &[u8], ttl_ms: u64) {
        if let Some(entry) = self.registry.lock().live.get_mut(&self.id) {
            if entry.1 != primary {
                entry.1 = primary.to_vec();
            }
            entry.2 = entry.0.physical_ms().saturating_add(ttl_ms);
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.registry.lock().live.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use strata_engine::MemoryEngine;
    use strata_kv::Storage;
    use strata_kvapi::{KvApi, PessimisticLockRequest};
    use strata_types::Timestamp;

    use super::*;

    #[test]
    fn a_due_lock_is_renewed_and_a_finished_transaction_is_not() {
        let storage = Arc::new(Storage::new(Arc::new(MemoryEngine::new())).unwrap());
        // Started 5 s ago, locked with a time to live of 6 s: 1 s left, so due.
        let start_ts = Timestamp::compose(strata_types::wall_clock_ms() - 5_000, 0);
        storage
            .pessimistic_lock(&PessimisticLockRequest {
                keys: vec![b"p".to_vec()],
                primary: b"p".to_vec(),
                start_ts,
                for_update_ts: start_ts,
                wait_timeout_ms: 0,
                lock_ttl_ms: 6_000,
            })
            .unwrap();
        let registry = Mutex::new(Registry::default());
        registry
            .lock()
            .live
            .insert(1, (start_ts, b"p".to_vec(), start_ts.physical_ms() + 6_000));
        beat(&*storage, &registry);
        let renewed = registry.lock().live[&1].2 - start_ts.physical_ms();
        assert!(renewed >= 5_000 + MANAGED_LOCK_TTL_MS, "{renewed}");
        // The KV node holds the same time to live.
        assert_eq!(storage.txn_heart_beat(b"p", start_ts, 0).unwrap(), renewed);
        // Released: the heartbeat fails and changes nothing.
        storage
            .pessimistic_rollback(&[b"p".to_vec()], start_ts)
            .unwrap();
        registry.lock().live.get_mut(&1).unwrap().2 = 0;
        beat(&*storage, &registry);
        assert_eq!(registry.lock().live[&1].2, 0);
    }
}
