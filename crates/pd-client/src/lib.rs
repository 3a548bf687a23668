//! strata-pd-client: what the other roles link of the placement driver — its client and the
//! timestamp oracles — without the placement driver itself (its Raft group, metadata and
//! schedulers live in strata-pd). A SQL node reaches storage through strata-txn, which needs
//! only this crate, so it links neither Raft nor RocksDB.
//!
//! ```text
//!   PdClient (client.rs)                 TimestampOracle (tso.rs)
//!     ├── every member's address,          ├── PdClient: batched over gRPC
//!     │   follows the leader               └── LocalTso: the playground's, in process
//!     ├── batched timestamps
//!     └── ids, stores, regions, GC safe point
//! ```
//!
//! The oracle hands out [`Timestamp`](strata_types::Timestamp)s that only grow, across restarts
//! and leader changes too: before issuing a timestamp whose physical part passes the durable
//! limit, it makes a new limit [`TSO_SAVE_INTERVAL_MS`] ahead durable (a file for the
//! playground's [`LocalTso`], a replicated log entry for the placement drivers), and a new
//! oracle starts above the old limit. A restart or a new leader can therefore never reissue a
//! timestamp, even if the wall clock went backwards.

mod client;
mod tso;

pub use client::{channel, PdClient, Security, PD_REQUEST_TIMEOUT, RPC_RUNTIME_THREADS};
pub use tso::TSO_SAVE_INTERVAL_MS;
pub use tso::{replace_file, Clock, LocalTso, SystemClock, TimestampOracle, TsoWindow};

/// The metadata entry in which a placement driver that does not lead names the one that does.
pub const PD_LEADER_HEADER: &str = "pd-leader";

/// Errors of the placement driver and its client.
#[derive(Clone, Debug, thiserror::Error)]
pub enum PdError {
    #[error("placement driver storage: {0}")]
    Storage(String),
    #[error("placement driver metadata is corrupt: {0}")]
    Corrupt(String),
    #[error("placement driver unreachable: {0}")]
    Rpc(String),
    /// The placement driver answered and said no; asking again gets the same answer.
    #[error("placement driver refused: {0}")]
    Refused(String),
}

impl From<std::io::Error> for PdError {
    fn from(error: std::io::Error) -> PdError {
        PdError::Storage(error.to_string())
    }
}
