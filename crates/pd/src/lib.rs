//! strata-pd: the placement driver. It issues timestamps, hands out ids, registers stores and
//! keeps the region table (which store leads which key range).
//!
//! ```text
//!   Handler (handler.rs): the gRPC calls, answered by
//!   PdService (server.rs)
//!     ├── Group (group.rs): Raft over PdState: ClusterMeta (meta.rs) + TSO limit
//!     ├── TsoWindow (strata-pd-client's tso.rs)
//!     ├── LeaderBalancer, ReplicaChecker (schedule.rs)
//!     └── the GC safe point, held back for open transactions (gc.rs)
//! ```
//!
//! Its client and the timestamp oracles are the crate strata-pd-client, which the other roles
//! link without this one.
//!
//! A cluster runs one placement driver or a Raft group of several (three survive the loss of
//! one); only the group's leader serves, and the others point clients to it (see `group.rs`
//! for the replication and the timestamp lease).
//!
//! Regions split on their leader's KV node (it watches their size); the placement driver
//! hands out the new region's ids (`PdClient::ask_split`) and records the result
//! (`PdClient::report_split`), and balances leaders over the stores through its answers to
//! region heartbeats.
//!
//! The oracle's timestamps only grow, across restarts and leader changes too: the limit it
//! issues below is replicated through the group before it is passed (see strata-pd-client).

mod gc;
mod group;
mod handler;
mod meta;
pub mod metrics;
mod schedule;
mod server;

pub use gc::{gc_safe_point, SNAPSHOT_REPORT_GRACE, SNAPSHOT_REPORT_INTERVAL, SNAPSHOT_REPORT_TTL};
pub use group::{PD_LOG_COMPACT_ENTRIES, PD_PROPOSE_TIMEOUT};
pub use meta::{ClusterMeta, PeerRecord, RegionRecord, StoreRecord};
pub use server::{PdConfig, PdService, STORE_UP_WITHIN};
pub use strata_pd_client::PdError;
