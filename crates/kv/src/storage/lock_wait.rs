//! Pessimistic lock requests: taking the locks, or waiting for their holders while the node
//! still leads the keys, with the cluster's deadlock detector told of every wait.

use std::sync::Arc;
use std::time::{Duration, Instant};

use strata_kvapi::{KvError, PessimisticLockRequest};
use strata_types::Timestamp;

use super::{pessimistic_locked, DeadlockDetector, Storage};
use crate::concurrency::{LockRefused, PessimisticLock, WaitOutcome};

/// How often a waiter for a pessimistic lock checks that its node still leads the keys.
pub const LOCK_WAIT_RECHECK: Duration = Duration::from_millis(100);
/// How often a lock wait that goes on is reported to the deadlock detector again (within the
/// detector's time to live for a wait, `DEADLOCK_WAIT_TTL`, 3 s).
pub const DEADLOCK_REPORT_INTERVAL: Duration = Duration::from_secs(1);

impl Storage {
    /// Takes the pessimistic locks of `request`, waiting for other holders while `serving`
    /// says this node still leads the keys. A replica that stopped leading keeps the locks it
    /// held (their transactions release them at the new leader), so a waiter checks at least
    /// every [`LOCK_WAIT_RECHECK`] and then fails as [`KvError::Unavailable`]: the client
    /// retries at the new leader instead of waiting out its lock wait timeout here.
    pub fn pessimistic_lock_while(
        &self,
        request: &PessimisticLockRequest,
        serving: &dyn Fn() -> bool,
    ) -> Result<(), KvError> {
        let deadline = Instant::now() + Duration::from_millis(request.wait_timeout_ms);
        let lock = PessimisticLock {
            start_ts: request.start_ts,
            for_update_ts: request.for_update_ts,
            primary: request.primary.clone(),
            ttl_ms: request.lock_ttl_ms,
        };
        // Set once the detector was told of a wait (most lock requests never wait).
        let mut record = WaitRecord {
            detector: None,
            waiter: request.start_ts,
        };
        // The blocker last reported to the detector, and when.
        let mut reported: Option<(Timestamp, Instant)> = None;
        loop {
            let blocker = {
                let _latches = self.cm.latch(request.keys.iter());
                for key in &request.keys {
                    self.check_write(key, request.start_ts, request.for_update_ts, false, true)?;
                }
                match self.cm.try_lock_all(&request.keys, &lock) {
                    Ok(()) => return Ok(()),
                    Err(LockRefused::Held(holder)) => holder,
                    Err(LockRefused::HandingOver) => {
                        return Err(KvError::Unavailable(
                            "the keys' locks are being handed to a new leader".into(),
                        ))
                    }
                }
            };
            let key = request
                .keys
                .iter()
                .find(|k| {
                    self.cm
                        .pessimistic_lock(k)
                        .is_some_and(|l| l.start_ts == blocker.start_ts)
                })
                .cloned()
                .unwrap_or_else(|| request.keys[0].clone());
            // The detector hears of a wait when it starts, when the blocker changes, and every
            // DEADLOCK_REPORT_INTERVAL, each time for no longer than the wait has left: a slow
            // detector must not keep a waiter past its lock wait timeout.
            let now = Instant::now();
            let report_due = reported.is_none_or(|(ts, at): (Timestamp, Instant)| {
                ts != blocker.start_ts || now.duration_since(at) >= DEADLOCK_REPORT_INTERVAL
            });
            let left = deadline.saturating_duration_since(now);
            if let Some(detector) = self
                .detector
                .get()
                .filter(|_| report_due && !left.is_zero())
            {
                record.detector = Some(detector);
                reported = Some((blocker.start_ts, now));
                match detector.wait(request.start_ts, blocker.start_ts, left) {
                    Ok(true) => {}
                    Ok(false) => {
                        return Err(KvError::Deadlock {
                            key,
                            blocker_start_ts: blocker.start_ts,
                        })
                    }
                    // Without the detector only cycles within this node are found; the others
                    // end with the lock wait timeout.
                    Err(e) => tracing::debug!(%e, "the deadlock detector is unreachable"),
                }
            }
            let now = Instant::now();
            let outcome = self.cm.wait_for_release(
                &key,
                request.start_ts,
                blocker.start_ts,
                deadline.min(now + LOCK_WAIT_RECHECK),
            );
            match outcome {
                WaitOutcome::Deadlock => {
                    return Err(KvError::Deadlock {
                        key,
                        blocker_start_ts: blocker.start_ts,
                    })
                }
                WaitOutcome::Timeout if Instant::now() >= deadline => {
                    // A holder whose lock outlived its time to live may be gone (its SQL node
                    // died): the waiter checks its primary (and may roll it back) before it
                    // waits again.
                    return Err(match self.cm.pessimistic_lock(&key) {
                        Some(lock) if lock.start_ts == blocker.start_ts => {
                            match pessimistic_locked(&key, lock) {
                                KvError::KeyIsLocked(info) if info.ttl_ms > 0 => {
                                    KvError::KeyIsLocked(info)
                                }
                                _ => KvError::LockWaitTimeout { key },
                            }
                        }
                        _ => KvError::LockWaitTimeout { key },
                    });
                }
                WaitOutcome::Retry | WaitOutcome::Timeout => {
                    if !serving() {
                        return Err(KvError::Unavailable(
                            "stopped leading the keys while waiting for a lock".into(),
                        ));
                    }
                }
            }
        }
    }
}

/// Tells the cluster's deadlock detector, when a lock request that waited ends, that its
/// transaction no longer waits.
struct WaitRecord<'a> {
    detector: Option<&'a Arc<dyn DeadlockDetector>>,
    waiter: Timestamp,
}

impl Drop for WaitRecord<'_> {
    fn drop(&mut self) {
        if let Some(detector) = self.detector {
            detector.wait_ended(self.waiter);
        }
    }
}
