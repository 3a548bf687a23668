//! strata-raftstore: regions replicated by Raft.
//!
//! Each region is a Raft group (raft-rs, the Raft TiKV runs); a KV node holds one [`Peer`] of
//! each of its regions. A peer is I/O free: the caller feeds it ticks and messages, proposes
//! commands, and calls [`Peer::handle_ready`], which persists what Raft asks to persist, applies
//! committed commands to the peer's [`StateMachine`] and returns the messages to send and the
//! outcomes of proposals. The same code therefore runs under a real poll loop with gRPC between
//! nodes and under the seeded simulated network of `tests/simulation.rs`, which partitions,
//! drops, delays, reorders and restarts.
//!
//! ```text
//!   tick / step(msg) / propose(cmd)
//!            │
//!        RawNode ──ready──▶ persist entries + hard state (before any message that needs them)
//!                          ├─▶ send messages
//!                          └─▶ apply committed entries ──▶ StateMachine, proposal outcomes
//! ```
//!
//! Invariants (checked by the simulation): every peer applies the same commands in the same
//! order; a command is reported applied only after a majority persisted it, so it survives any
//! minority of crashed peers; a peer cut off from the majority commits nothing.
//!
//! [`RaftStore`] runs the peers of one node under one poll loop, with their logs in
//! raft-engine ([`RaftLog`]) and their applied data in the node's engine; the node reaches it
//! through a [`Router`] and carries messages between nodes with a [`Transport`].
//!
//! Regions split (see [`Router::propose_split`]); the new region's peers start on the same
//! stores over the data already there. Membership changes add and remove one voter at a time
//! ([`Router::change_peer`]); a peer added to a region, or one left behind a log compacted past
//! it ([`StoreConfig::raft_log_max_entries`]), receives the data as a snapshot.

mod apply;
mod log;
pub mod metrics;
mod peer;
mod poll;
mod region;
mod snapshot;
mod store;

pub use log::{
    decode_message, encode_message, LogError, LogWriteBatch, RaftLog, INIT_INDEX, INIT_TERM,
};
pub use peer::{
    LogWrite, Peer, PeerConfig, PeerStorage, ProposalOutcome, ProposeError, Ready, SnapshotSource,
    StateMachine, TRANSFER_LAG_MAX,
};
pub use raft::eraftpb::Message;
pub use raft::storage::MemStorage;
pub use region::{PeerMeta, RegionMeta};
pub use snapshot::{KeySpace, DATA_CFS};
pub use store::{
    LeaderHook, LeaderStart, NotServing, PeerChange, ProposeFailure, RaftStore, Router,
    StoreConfig, StoreIo, Transport, COMPACT_LOG_GAP, ELECTION_TICKS, LEASE, SNAPSHOT_MAX_BYTES,
    TICK_INTERVAL,
};
