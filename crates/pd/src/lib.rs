//! strata-pd: the placement driver. For now, its timestamp oracle.
//!
//! The oracle hands out [`Timestamp`](strata_types::Timestamp)s that only grow, across restarts too: before issuing a
//! timestamp whose physical part passes the persisted limit, it persists a new limit
//! [`TSO_SAVE_INTERVAL_MS`] ahead, and on open it starts above the old limit. A restart can
//! therefore never reissue a timestamp, even if the wall clock went backwards.

mod tso;

pub use tso::{Clock, LocalTso, SystemClock, TimestampOracle, TSO_SAVE_INTERVAL_MS};

/// Errors of the placement driver.
#[derive(Debug, thiserror::Error)]
pub enum PdError {
    #[error("timestamp oracle storage: {0}")]
    Storage(#[from] std::io::Error),
}
