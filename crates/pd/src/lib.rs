//! strata-pd: the placement driver. It issues timestamps, hands out ids, registers stores and
//! keeps the region table (which store leads which key range).
//!
//! ```text
//!   PdService (server.rs)             PdClient (client.rs)
//!     ├── Group (group.rs): Raft        ├── every member's address, follows the leader
//!     │     over PdState: ClusterMeta   ├── batched timestamps (TimestampOracle)
//!     │     (meta.rs) + TSO limit       └── ids, stores, regions
//!     ├── TsoWindow (tso.rs)
//!     ├── LeaderBalancer, ReplicaChecker (schedule.rs)
//!     └── the GC safe point, held back for open transactions (gc.rs)
//! ```
//!
//! A cluster runs one placement driver or a Raft group of several (three survive the loss of
//! one); only the group's leader serves, and the others point clients to it (see `group.rs`
//! for the replication and the timestamp lease).
//!
//! Regions split on their leader's KV node (it watches their size); the placement driver
//! hands out the new region's ids ([`PdClient::ask_split`]) and records the result
//! ([`PdClient::report_split`]), and balances leaders over the stores through its answers to
//! region heartbeats.
//!
//! The oracle hands out [`Timestamp`](strata_types::Timestamp)s that only grow, across restarts
//! and leader changes too: before issuing a timestamp whose physical part passes the durable
//! limit, it makes a new limit [`TSO_SAVE_INTERVAL_MS`] ahead durable (a file for the
//! playground's [`LocalTso`], a replicated log entry for the placement drivers), and a new
//! oracle starts above the old limit. A restart or a new leader can therefore never reissue a
//! timestamp, even if the wall clock went backwards. The playground uses a [`LocalTso`] in its
//! own process; a cluster asks the placement driver's service.

mod client;
mod gc;
mod group;
mod meta;
mod schedule;
mod server;
mod tso;

pub use client::{channel, PdClient, PD_REQUEST_TIMEOUT, RPC_RUNTIME_THREADS};
pub use gc::{gc_safe_point, SNAPSHOT_REPORT_GRACE, SNAPSHOT_REPORT_INTERVAL, SNAPSHOT_REPORT_TTL};
pub use group::{PD_LOG_COMPACT_ENTRIES, PD_PROPOSE_TIMEOUT};
pub use meta::{ClusterMeta, PeerRecord, RegionRecord, StoreRecord};
pub use server::{PdConfig, PdService, PD_LEADER_HEADER};
pub use tso::{Clock, LocalTso, SystemClock, TimestampOracle, TSO_SAVE_INTERVAL_MS};

/// Errors of the placement driver and its client.
#[derive(Clone, Debug, thiserror::Error)]
pub enum PdError {
    #[error("placement driver storage: {0}")]
    Storage(String),
    #[error("placement driver metadata is corrupt: {0}")]
    Corrupt(String),
    #[error("placement driver unreachable: {0}")]
    Rpc(String),
}

impl From<std::io::Error> for PdError {
    fn from(error: std::io::Error) -> PdError {
        PdError::Storage(error.to_string())
    }
}
