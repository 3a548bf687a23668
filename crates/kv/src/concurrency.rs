//! In-memory coordination of one KV node: latches, the newest read timestamp, pessimistic
//! locks, commits in flight and the wait-for graph.
//!
//! One-phase commit picks its own commit_ts instead of asking the timestamp oracle, as TiKV's
//! async commit does. Correctness rests on one exchange under the `committing` mutex:
//!
//! ```text
//!  reader at ts R                         one-phase commit of keys K
//!  ──────────────                         ──────────────────────────
//!  max_read_ts = max(max_read_ts, R)      lock committing
//!  lock committing                          commit_ts = max(max_read_ts + 1, start_ts + 1, …)
//!    K committing with commit_ts <= R?      insert K -> commit_ts
//!      yes: wait until it is applied      unlock; write batch (synced); remove K; notify
//! ```
//!
//! Either the reader ran first, and the commit_ts is above R (invisible to it), or the commit
//! registered first, and the reader waits for the write when it would be visible.
//!
//! Pessimistic locks live only here, not on disk: on one node every transaction dies with its
//! process, so a lock that outlives a crash would only block. Readers ignore them. A leader
//! that hands a region to another replica first stops granting locks in its range and hands
//! over the ones it holds ([`ConcurrencyManager::hand_over`]).
//!
//! Each latch slot also keeps a *write floor*: a timestamp at or above every commit or
//! rollback record written since this node started leading to a key of the slot. Records are
//! only written under their key's latch, so a writer holding a key's latch whose floor lies at
//! or below its conflict timestamp knows that no newer commit of the key exists, without
//! reading the key's versions. Until the node starts leading, a floor is unknown.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};
use strata_types::deadlock::WaitForGraph;
use strata_types::{Key, Timestamp};

/// Number of latch slots; keys hash onto them.
pub const LATCH_SLOTS: usize = 4096;

/// A pessimistic lock held in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PessimisticLock {
    pub start_ts: Timestamp,
    pub for_update_ts: Timestamp,
    pub primary: Key,
    /// How long the lock lives after `start_ts`; the owner's heartbeats extend the primary's.
    pub ttl_ms: u64,
}

impl PessimisticLock {
    /// Whether the lock's time to live has passed at the wall-clock time `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.start_ts.physical_ms().saturating_add(self.ttl_ms)
    }
}

/// Why [`ConcurrencyManager::try_lock_all`] locked nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockRefused {
    /// Another transaction holds one of the keys.
    Held(PessimisticLock),
    /// One of the keys is being handed to a new leader: ask it.
    HandingOver,
}

/// How long a range handed to a new leader grants no locks here; past it (the transfer
/// failed, which Raft decides within an election timeout of a second, and this node still
/// leads) it grants them again.
pub const HANDOVER_FREEZE: Duration = Duration::from_secs(2);

/// Why a key cannot be locked now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// The holder released the key (or a wake-up came): try again.
    Retry,
    Deadlock,
    Timeout,
}

pub struct ConcurrencyManager {
    max_read_ts: AtomicU64,
    committing_count: AtomicU64,
    committing: Mutex<BTreeMap<Key, (Timestamp, Timestamp)>>,
    committed: Condvar,
    pessimistic: Mutex<HashMap<Key, PessimisticLock>>,
    /// Ranges `[start, end)` (`end` empty: unbounded) being handed to a new leader, until
    /// when. Taken only while holding `pessimistic`.
    handing_over: Mutex<Vec<(Key, Key, Instant)>>,
    released: Condvar,
    /// Which transaction waits for which, among the lock waits served here.
    waits_for: Mutex<WaitForGraph>,
    latches: Vec<Mutex<()>>,
    /// Per latch slot, the write floor ([`FLOOR_UNKNOWN`] before the node leads).
    write_floors: Vec<AtomicU64>,
    /// Per latch slot, the same for rollback records alone (rarely written, so mostly far
    /// below the commit timestamps being chosen).
    rollback_floors: Vec<AtomicU64>,
}

/// A write floor not known yet: every write must read the key's versions.
const FLOOR_UNKNOWN: u64 = u64::MAX;

impl Default for ConcurrencyManager {
    fn default() -> Self {
        ConcurrencyManager {
            max_read_ts: AtomicU64::new(0),
            committing_count: AtomicU64::new(0),
            committing: Mutex::new(BTreeMap::new()),
            committed: Condvar::new(),
            pessimistic: Mutex::new(HashMap::new()),
            handing_over: Mutex::new(Vec::new()),
            released: Condvar::new(),
            waits_for: Mutex::new(WaitForGraph::default()),
            latches: (0..LATCH_SLOTS).map(|_| Mutex::new(())).collect(),
            write_floors: (0..LATCH_SLOTS)
                .map(|_| AtomicU64::new(FLOOR_UNKNOWN))
                .collect(),
            rollback_floors: (0..LATCH_SLOTS)
                .map(|_| AtomicU64::new(FLOOR_UNKNOWN))
                .collect(),
        }
    }
}

/// Latches held over a write command's check-and-write.
pub struct Latches<'a> {
    _guards: Vec<MutexGuard<'a, ()>>,
}

impl ConcurrencyManager {
    /// Acquires the latches of `keys` in slot order (so two commands never deadlock).
    pub fn latch<'a, K: AsRef<[u8]>>(&'a self, keys: impl Iterator<Item = K>) -> Latches<'a> {
        let mut slots: Vec<usize> = keys.map(|k| slot_of(k.as_ref())).collect();
        slots.sort_unstable();
        slots.dedup();
        Latches {
            _guards: slots.into_iter().map(|s| self.latches[s].lock()).collect(),
        }
    }

    /// Records a read at `ts` and waits while a commit at or below `ts` is being applied to a key
    /// in `[start, end)` (`end` empty: only `start`). A read at [`Timestamp::MAX`] reads the
    /// newest data of one key and is not recorded: it is ordered by the moment it reads, not by
    /// a timestamp, so later commits need not rise above it.
    // Hot path: every read.
    pub fn read_barrier(&self, start: &[u8], end: Option<&[u8]>, ts: Timestamp) {
        self.record_read(ts);
        if self.committing_count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut committing = self.committing.lock();
        while blocks_read(&committing, start, end, ts) {
            self.committed
                .wait_for(&mut committing, Duration::from_millis(10));
        }
    }

    /// Records a read at `ts` like [`ConcurrencyManager::read_barrier`], but instead of
    /// waiting for a commit in flight returns false (the caller reads later, where it may
    /// wait).
    // Hot path: point reads served on a network thread.
    pub fn try_read_barrier(&self, start: &[u8], end: Option<&[u8]>, ts: Timestamp) -> bool {
        self.record_read(ts);
        if self.committing_count.load(Ordering::SeqCst) == 0 {
            return true;
        }
        !blocks_read(&self.committing.lock(), start, end, ts)
    }

    fn record_read(&self, ts: Timestamp) {
        if ts != Timestamp::MAX {
            self.max_read_ts.fetch_max(ts.0, Ordering::SeqCst);
        }
    }

    /// Picks the commit_ts of a one-phase commit and registers its keys as committing.
    pub fn begin_commit(&self, keys: &[Key], start_ts: Timestamp, floor: Timestamp) -> Timestamp {
        let mut committing = self.committing.lock();
        self.committing_count.fetch_add(1, Ordering::SeqCst);
        let max_read = Timestamp(self.max_read_ts.load(Ordering::SeqCst));
        let commit_ts = max_read.next().max(start_ts.next()).max(floor.next());
        for key in keys {
            committing.insert(key.clone(), (start_ts, commit_ts));
        }
        commit_ts
    }

    /// Unregisters a one-phase commit once its batch is on disk.
    pub fn end_commit(&self, keys: &[Key]) {
        let mut committing = self.committing.lock();
        for key in keys {
            committing.remove(key);
        }
        self.committing_count.fetch_sub(1, Ordering::SeqCst);
        drop(committing);
        self.committed.notify_all();
    }

    /// The highest read timestamp seen (the floor of every commit_ts chosen here).
    pub fn max_read_ts(&self) -> Timestamp {
        Timestamp(self.max_read_ts.load(Ordering::SeqCst))
    }

    /// Records that a commit or rollback record at `ts` is written to `key`. The caller holds
    /// the key's latch and calls this before the record becomes visible.
    pub fn note_write(&self, key: &[u8], ts: Timestamp) {
        self.write_floors[slot_of(key)].fetch_max(ts.0, Ordering::SeqCst);
    }

    /// Records that a rollback record at `ts` is written to `key` (besides
    /// [`ConcurrencyManager::note_write`]). The caller holds the key's latch.
    pub fn note_rollback(&self, key: &[u8], ts: Timestamp) {
        self.rollback_floors[slot_of(key)].fetch_max(ts.0, Ordering::SeqCst);
    }

    /// Whether `key` may have a rollback record at or above `ts`; false means it surely has
    /// none. The caller holds the key's latch.
    pub fn may_have_rolled_back_since(&self, key: &[u8], ts: Timestamp) -> bool {
        self.rollback_floors[slot_of(key)].load(Ordering::SeqCst) >= ts.0
    }

    /// Whether `key` may have a commit or rollback record above `ts`; false means it surely
    /// has none. The caller holds the key's latch.
    pub fn may_have_written_since(&self, key: &[u8], ts: Timestamp) -> bool {
        self.write_floors[slot_of(key)].load(Ordering::SeqCst) > ts.0
    }

    /// Makes every write floor known, at `now` or above: the node starts leading keys that
    /// others wrote until now, all at or below `now` (a timestamp taken after they stopped).
    pub fn raise_write_floors(&self, now: Timestamp) {
        for floor in self.write_floors.iter().chain(&self.rollback_floors) {
            let mut current = floor.load(Ordering::SeqCst);
            loop {
                let raised = if current == FLOOR_UNKNOWN {
                    now.0
                } else {
                    current.max(now.0)
                };
                match floor.compare_exchange(current, raised, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => break,
                    Err(seen) => current = seen,
                }
            }
        }
    }

    /// Returns the pessimistic lock on `key`, if any.
    pub fn pessimistic_lock(&self, key: &[u8]) -> Option<PessimisticLock> {
        self.pessimistic.lock().get(key).cloned()
    }

    /// Extends the pessimistic lock of `start_ts` on `key` to live at least `ttl_ms` after
    /// `start_ts`; returns its time to live, or `None` when `key` holds no lock of `start_ts`.
    pub fn renew_pessimistic_lock(
        &self,
        key: &[u8],
        start_ts: Timestamp,
        ttl_ms: u64,
    ) -> Option<u64> {
        let mut table = self.pessimistic.lock();
        let lock = table.get_mut(key).filter(|l| l.start_ts == start_ts)?;
        lock.ttl_ms = lock.ttl_ms.max(ttl_ms);
        Some(lock.ttl_ms)
    }

    /// Locks every key for one transaction, or returns the first other holder found without
    /// locking any. Callers hold the keys' latches.
    pub fn try_lock_all(&self, keys: &[Key], lock: &PessimisticLock) -> Result<(), LockRefused> {
        let mut table = self.pessimistic.lock();
        for key in keys {
            if let Some(holder) = table.get(key) {
                if holder.start_ts != lock.start_ts {
                    return Err(LockRefused::Held(holder.clone()));
                }
            }
        }
        {
            let mut frozen = self.handing_over.lock();
            if !frozen.is_empty() {
                let now = Instant::now();
                frozen.retain(|(_, _, until)| *until > now);
                if keys
                    .iter()
                    .any(|k| frozen.iter().any(|(start, end, _)| in_range(k, start, end)))
                {
                    return Err(LockRefused::HandingOver);
                }
            }
        }
        for key in keys {
            table.insert(key.clone(), lock.clone());
        }
        Ok(())
    }

    /// Drops every pessimistic lock on a key in `[start, end)` (`end` empty: no upper bound)
    /// and wakes their waiters. A replica that starts leading a region calls it: locks it
    /// remembers from an earlier term are stale, their holders talk to other leaders since.
    /// The range grants locks again if it was being handed over.
    pub fn forget_pessimistic_locks(&self, start: &[u8], end: &[u8]) {
        let mut table = self.pessimistic.lock();
        let before = table.len();
        table.retain(|key, _| !in_range(key, start, end));
        self.handing_over
            .lock()
            .retain(|(s, e, _)| !(s.as_slice() == start && e.as_slice() == end));
        let released = table.len() != before;
        drop(table);
        if released {
            self.released.notify_all();
        }
    }

    /// Stops granting locks on keys in `[start, end)` for [`HANDOVER_FREEZE`] and returns the
    /// locks held there, for a new leader of the range: from now on every lock of the range
    /// is in what this returns, and its waiters here wake to ask the new leader.
    pub fn hand_over(&self, start: &[u8], end: &[u8]) -> Vec<(Key, PessimisticLock)> {
        let table = self.pessimistic.lock();
        self.handing_over.lock().push((
            start.to_vec(),
            end.to_vec(),
            Instant::now() + HANDOVER_FREEZE,
        ));
        let locks = table
            .iter()
            .filter(|(key, _)| in_range(key, start, end))
            .map(|(key, lock)| (key.clone(), lock.clone()))
            .collect();
        drop(table);
        self.released.notify_all();
        locks
    }

    /// Takes the locks a former leader handed over, on keys no other transaction locks here.
    pub fn take_handed_over(&self, locks: impl IntoIterator<Item = (Key, PessimisticLock)>) {
        let mut table = self.pessimistic.lock();
        for (key, lock) in locks {
            table.entry(key).or_insert(lock);
        }
    }

    /// Releases the locks of `start_ts` on `keys` and wakes waiters.
    pub fn unlock(&self, keys: &[Key], start_ts: Timestamp) {
        let mut table = self.pessimistic.lock();
        let mut released = false;
        for key in keys {
            if table.get(key).is_some_and(|l| l.start_ts == start_ts) {
                table.remove(key);
                released = true;
            }
        }
        drop(table);
        if released {
            self.released.notify_all();
        }
    }

    /// Waits until `key` is no longer locked by `blocker`, the deadline passes, or waiting would
    /// close a cycle of transactions.
    pub fn wait_for_release(
        &self,
        key: &[u8],
        waiter: Timestamp,
        blocker: Timestamp,
        deadline: Instant,
    ) -> WaitOutcome {
        if !self.waits_for.lock().wait(waiter, blocker, Instant::now()) {
            return WaitOutcome::Deadlock;
        }
        let outcome = {
            let mut table = self.pessimistic.lock();
            loop {
                if table.get(key).is_none_or(|l| l.start_ts != blocker) {
                    break WaitOutcome::Retry;
                }
                if self.released.wait_until(&mut table, deadline).timed_out() {
                    break if table.get(key).is_none_or(|l| l.start_ts != blocker) {
                        WaitOutcome::Retry
                    } else {
                        WaitOutcome::Timeout
                    };
                }
            }
        };
        self.waits_for.lock().remove(waiter);
        outcome
    }
}

/// Whether `key` lies in `[start, end)` (`end` empty: no upper bound).
fn in_range(key: &[u8], start: &[u8], end: &[u8]) -> bool {
    key >= start && (end.is_empty() || key < end)
}

/// Whether a commit at or below `ts` is in flight on a key in `[start, end)` (`end` absent:
/// only `start`).
fn blocks_read(
    committing: &BTreeMap<Key, (Timestamp, Timestamp)>,
    start: &[u8],
    end: Option<&[u8]>,
    ts: Timestamp,
) -> bool {
    match end {
        None => committing
            .get(start)
            .is_some_and(|(_, commit_ts)| *commit_ts <= ts),
        Some(end) if start >= end => false,
        Some(end) => committing
            .range::<[u8], _>((
                std::ops::Bound::Included(start),
                std::ops::Bound::Excluded(end),
            ))
            .any(|(_, (_, commit_ts))| *commit_ts <= ts),
    }
}

fn slot_of(key: &[u8]) -> usize {
    // FNV-1a: cheap and spreads adjacent row keys.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash as usize) % LATCH_SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_ts_is_above_every_read_seen() {
        let cm = ConcurrencyManager::default();
        cm.read_barrier(b"a", None, Timestamp(100));
        let commit_ts = cm.begin_commit(&[b"a".to_vec()], Timestamp(50), Timestamp::ZERO);
        assert_eq!(commit_ts, Timestamp(101));
        cm.end_commit(&[b"a".to_vec()]);
        // A reader above the commit no longer waits.
        cm.read_barrier(b"a", None, Timestamp(200));
    }

    #[test]
    fn detects_a_two_transaction_cycle() {
        let cm = ConcurrencyManager::default();
        let lock = |ts| PessimisticLock {
            start_ts: Timestamp(ts),
            for_update_ts: Timestamp(ts),
            primary: b"p".to_vec(),
            ttl_ms: 3_000,
        };
        cm.try_lock_all(&[b"x".to_vec()], &lock(1)).unwrap();
        cm.try_lock_all(&[b"y".to_vec()], &lock(2)).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                cm.wait_for_release(
                    b"y",
                    Timestamp(1),
                    Timestamp(2),
                    Instant::now() + Duration::from_secs(5),
                )
            });
            // Wait until transaction 1 is registered as waiting for 2.
            while !cm.waits_for.lock().contains(Timestamp(1)) {
                std::thread::yield_now();
            }
            let outcome = cm.wait_for_release(
                b"x",
                Timestamp(2),
                Timestamp(1),
                Instant::now() + Duration::from_secs(5),
            );
            assert_eq!(outcome, WaitOutcome::Deadlock);
            cm.unlock(&[b"y".to_vec()], Timestamp(2));
            assert_eq!(waiter.join().unwrap(), WaitOutcome::Retry);
        });
    }

    #[test]
    fn lock_wait_times_out() {
        let cm = ConcurrencyManager::default();
        let lock = PessimisticLock {
            start_ts: Timestamp(1),
            for_update_ts: Timestamp(1),
            primary: b"p".to_vec(),
            ttl_ms: 3_000,
        };
        cm.try_lock_all(&[b"x".to_vec()], &lock).unwrap();
        let outcome = cm.wait_for_release(
            b"x",
            Timestamp(2),
            Timestamp(1),
            Instant::now() + Duration::from_millis(20),
        );
        assert_eq!(outcome, WaitOutcome::Timeout);
    }
}
