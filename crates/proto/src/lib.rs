//! strata-proto: the gRPC messages and services between Strata's roles, compiled from
//! `proto/*.proto`, and the conversions between the KV service's messages and the KV API's
//! types ([`strata_kvapi`]), which the KV node's server and the transaction client's remote
//! KV share.
//!
//! ```text
//!   SQL node (txn client) ──kv.Kv──▶ KV node ◀──raft.Raft──▶ KV node
//!        │                              │
//!        └────────pd.Pd──▶ PD ◀──pd.Pd──┘   (timestamps, ids, stores, regions, leaders)
//! ```

mod convert;
pub mod frame;
pub mod security;

pub use convert::{
    key_error_from_pb, key_error_to_pb, lock_info_from_pb, lock_info_to_pb, mutation_from_pb,
    mutation_to_pb, secondary_locks_from_pb, secondary_locks_to_pb, txn_status_from_pb,
    txn_status_to_pb,
};

/// Messages and the service of the KV API (`proto/kv.proto`).
pub mod kv {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("strata.kv");
}

/// Messages and the service of the placement driver (`proto/pd.proto`).
pub mod pd {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("strata.pd");
}

/// Raft messages between KV nodes (`proto/raft.proto`).
pub mod raft {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("strata.raft");
}

/// The largest gRPC message a Strata process sends or accepts: a scan page or a prewrite of
/// a large transaction stays well under it.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
