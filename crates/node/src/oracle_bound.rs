//! The timestamps a KV node accepts: none far beyond what the timestamp oracle has issued.
//!
//! A read at a timestamp raises the node's `max_read_ts`, and later commits are placed above
//! it; a commit timestamp is where a write becomes visible. One request with a timestamp
//! from the far future (a bug, or a forged request from a certified caller) would push every
//! later async or one-phase commit past it, or hide a write from every reader until the
//! oracle got there. So the node keeps the newest timestamp it has had from the oracle and
//! when, and refuses a timestamp whose physical part is past that one plus the time since
//! plus [`ORACLE_SLACK_MS`], which covers what the oracle may legitimately jump by (a new
//! placement-driver leader starts at the end of its predecessor's saved window).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use strata_kvapi::KvError;
use strata_pd_client::TSO_SAVE_INTERVAL_MS;
use strata_types::Timestamp;

/// How far past the oracle's progress, in milliseconds, a timestamp may be: its saved window
/// (a new leader's first timestamps may be that far ahead), with room for clocks that step.
pub const ORACLE_SLACK_MS: u64 = TSO_SAVE_INTERVAL_MS + 7_000;

/// The newest timestamp known to be issued by the oracle, and when it was learnt.
pub struct OracleBound {
    started: Instant,
    known: AtomicU64,
    /// Milliseconds from `started` to when `known` was learnt.
    known_at_ms: AtomicU64,
}

impl OracleBound {
    /// A bound from `issued`, a timestamp just had from the oracle.
    pub fn new(issued: Timestamp) -> OracleBound {
        OracleBound {
            started: Instant::now(),
            known: AtomicU64::new(issued.0),
            known_at_ms: AtomicU64::new(0),
        }
    }

    /// Notes `issued`, a timestamp just had from the oracle.
    pub fn learn(&self, issued: Timestamp) {
        if self.known.load(Ordering::Acquire) < issued.0 {
            self.known_at_ms.store(self.elapsed_ms(), Ordering::Release);
            self.known.fetch_max(issued.0, Ordering::AcqRel);
        }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Refuses `ts` if it is beyond what the oracle can have issued by now.
    // Hot path: every request of a cluster.
    pub fn admit(&self, ts: u64) -> Result<(), KvError> {
        let known = self.known.load(Ordering::Acquire);
        if ts <= known {
            return Ok(());
        }
        let since = self
            .elapsed_ms()
            .saturating_sub(self.known_at_ms.load(Ordering::Acquire));
        let limit_ms = Timestamp(known)
            .physical_ms()
            .saturating_add(since)
            .saturating_add(ORACLE_SLACK_MS);
        if Timestamp(ts).physical_ms() <= limit_ms {
            return Ok(());
        }
        Err(KvError::Storage(format!(
            "timestamp {ts} is beyond what the timestamp oracle has issued \
             (about {known} {since} ms ago)"
        )))
    }

    /// Refuses the timestamps of a read (`Timestamp::MAX` reads the newest data and is
    /// always fine) and of a write (never `Timestamp::MAX`).
    pub fn admit_all(&self, reads: &[u64], writes: &[u64]) -> Result<(), KvError> {
        for &ts in reads {
            if ts != Timestamp::MAX.0 {
                self.admit(ts)?;
            }
        }
        for &ts in writes {
            self.admit(ts)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> Timestamp {
        Timestamp::compose(ms, 0)
    }

    #[test]
    fn timestamps_up_to_the_oracles_progress_and_slack_are_admitted_and_none_beyond() {
        let bound = OracleBound::new(at_ms(1_000_000));
        assert!(bound.admit(at_ms(999_000).0).is_ok(), "an older timestamp");
        assert!(bound.admit(at_ms(1_000_000 + ORACLE_SLACK_MS).0).is_ok());
        let far = at_ms(1_000_000 + ORACLE_SLACK_MS + 2_000).0;
        assert!(bound.admit(far).is_err(), "beyond the slack");
        assert!(bound.admit(u64::MAX).is_err());
        assert!(
            bound.admit_all(&[u64::MAX], &[]).is_ok(),
            "a read of the newest data"
        );
        assert!(
            bound.admit_all(&[], &[u64::MAX]).is_err(),
            "a commit at the end of time"
        );

        // Once the oracle is seen to have got there, it is fine.
        bound.learn(at_ms(1_000_000 + 2_000));
        assert!(bound.admit(far).is_ok());
        // An older timestamp learnt late changes nothing.
        bound.learn(at_ms(5));
        assert!(bound.admit(far).is_ok());
    }

    #[test]
    fn the_limit_moves_with_the_time_since_the_oracle_was_heard() {
        let bound = OracleBound::new(at_ms(1_000_000));
        let just_past = at_ms(1_000_000 + ORACLE_SLACK_MS + 150).0;
        assert!(bound.admit(just_past).is_err());
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(bound.admit(just_past).is_ok());
    }
}
