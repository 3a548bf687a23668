//! strata-kv: the KV node's transactional storage — MVCC and the Percolator commands over an
//! [`Engine`](strata_engine::Engine), served through the [`KvApi`](strata_kvapi::KvApi).
//!
//! ```text
//!   KvApi ──▶ Storage ──┬─▶ ConcurrencyManager  (latches, max read ts, pessimistic locks,
//!                       │                        commits in flight, wait-for graph)
//!                       ├─▶ MvccReader          (visible versions at a timestamp)
//!                       └─▶ Engine              (lock / write / default column families)
//! ```
//!
//! Invariants:
//! - A version committed at `commit_ts` is visible to every read at `ts >= commit_ts` that
//!   starts after the commit was acknowledged, and to none at `ts < commit_ts`.
//! - A one-phase commit chooses `commit_ts` above every read timestamp served so far, so a
//!   snapshot never changes under a reader (see [`concurrency`]).
//! - Two writers of one key are serialized by latches between their check and their write.
//!
//! - A pessimistic lock granted by a leader is held by the next leader too when leadership is
//!   transferred (see [`handover`]).
//!
//! Not here: regions and Raft (the raftstore puts them under this layer in a cluster), and
//! timestamps (the transaction client brings them).

pub mod concurrency;
pub mod gc;
pub mod gc_filter;
pub mod handover;
pub mod mvcc;
pub mod reader;
mod storage;

pub use storage::{DeadlockDetector, LeaderLocks, Storage, LOCK_WAIT_RECHECK};

#[cfg(test)]
mod tests;
