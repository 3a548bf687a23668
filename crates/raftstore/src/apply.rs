//! How a region's committed log applies to the engine: the [`Applier`] gathers the writes of
//! one round into a batch the poll loop writes, with the region's metadata when a split or a
//! membership change altered it, and records what the poll loop must do afterwards (open the
//! regions split off, drop the log a compaction covers, replace the data with a snapshot's).
//!
//! Next to the data, in [`Cf::Raft`], each region keeps its applied index and the term of that
//! entry (`applied/<id>`) and its metadata (`region/<id>`), always in the same batch as the
//! data they describe.

use raft::eraftpb::{ConfChange, ConfChangeType, Snapshot};
use strata_engine::{BatchOp, Cf, Engine, EngineError, WriteBatch};

use crate::peer::StateMachine;
use crate::region::{region_key, Command, PeerMeta, RegionMeta};

/// The key of a region's applied index and term in [`Cf::Raft`].
pub(crate) fn applied_key(region: u64) -> Vec<u8> {
    let mut key = b"applied/".to_vec();
    key.extend_from_slice(&region.to_be_bytes());
    key
}

pub(crate) fn applied_value(index: u64, term: u64) -> Vec<u8> {
    let mut value = index.to_be_bytes().to_vec();
    value.extend_from_slice(&term.to_be_bytes());
    value
}

/// The index (and its term) a region's data is applied to, as the engine holds it.
pub(crate) fn read_applied(
    engine: &dyn Engine,
    region: u64,
) -> Result<Option<(u64, u64)>, EngineError> {
    match engine.get(Cf::Raft, &applied_key(region))? {
        None => Ok(None),
        Some(bytes) if bytes.len() == 16 => Ok(Some((
            u64::from_be_bytes(bytes[..8].try_into().expect("8 bytes")),
            u64::from_be_bytes(bytes[8..].try_into().expect("8 bytes")),
        ))),
        Some(_) => Err(EngineError::Storage(format!(
            "region {region}: corrupt applied index"
        ))),
    }
}

/// An account of applied writes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Written {
    pub bytes: u64,
    /// Keys put into the write column family: new versions.
    pub keys: u64,
}

impl Written {
    pub fn add(&mut self, other: Written) {
        self.bytes += other.bytes;
        self.keys += other.keys;
    }
}

/// Applies one region's committed commands into a batch the poll loop writes.
pub(crate) struct Applier {
    /// The region as its applied commands left it.
    pub meta: RegionMeta,
    pub batch: WriteBatch,
    pub compact_to: Option<u64>,
    /// Regions split off since the poll loop last looked.
    pub splits: Vec<RegionMeta>,
    /// Writes applied since the poll loop last looked.
    pub written: Written,
    /// Whether the metadata changed since the poll loop last looked.
    pub meta_changed: bool,
    /// A snapshot that replaces the region's data, not yet written.
    pub restore: Option<Snapshot>,
}

impl Applier {
    pub fn new(meta: RegionMeta) -> Applier {
        Applier {
            meta,
            batch: WriteBatch::new(),
            compact_to: None,
            splits: Vec::new(),
            written: Written::default(),
            meta_changed: false,
            restore: None,
        }
    }

    fn split(&mut self, version: u64, key: Vec<u8>, new_id: u64, new_peers: Vec<u64>) -> bool {
        let meta = &mut self.meta;
        let valid = version == meta.version
            && meta.contains(&key)
            && key > meta.start_key
            && new_peers.len() == meta.peers.len();
        if !valid {
            return false;
        }
        meta.version += 1;
        let right = RegionMeta {
            id: new_id,
            start_key: key.clone(),
            end_key: std::mem::replace(&mut meta.end_key, key),
            conf_ver: meta.conf_ver,
            version: meta.version,
            peers: meta
                .peers
                .iter()
                .zip(new_peers)
                .map(|(p, id)| PeerMeta {
                    id,
                    store_id: p.store_id,
                })
                .collect(),
        };
        self.batch.put(Cf::Raft, region_key(meta.id), meta.encode());
        self.batch
            .put(Cf::Raft, region_key(right.id), right.encode());
        self.splits.push(right);
        self.meta_changed = true;
        true
    }
}

/// The store of a peer a membership change adds, carried in the change's context.
pub(crate) fn change_context(store_id: u64) -> Vec<u8> {
    store_id.to_be_bytes().to_vec()
}

impl StateMachine for Applier {
    fn apply(&mut self, _index: u64, command: &[u8]) -> bool {
        let command = Command::decode(command).unwrap_or_else(|e| {
            panic!(
                "region {}: a committed command is corrupt: {e}",
                self.meta.id
            )
        });
        match command {
            Command::Write { version, batch } => {
                if version != self.meta.version {
                    return false;
                }
                for op in batch.ops() {
                    match op {
                        BatchOp::Put { cf, key, value } => {
                            self.written.bytes += (key.len() + value.len()) as u64;
                            self.written.keys += u64::from(*cf == Cf::Write);
                        }
                        BatchOp::Delete { key, .. } => self.written.bytes += key.len() as u64,
                    }
                }
                self.batch.append(batch);
            }
            Command::Compact { index } => {
                self.compact_to = Some(self.compact_to.map_or(index, |i| i.max(index)));
            }
            Command::Split {
                version,
                key,
                new_id,
                new_peers,
            } => return self.split(version, key, new_id, new_peers),
            Command::Noop => {}
        }
        true
    }

    fn apply_conf_change(&mut self, _index: u64, change: &ConfChange) {
        let meta = &mut self.meta;
        let peer = change.node_id;
        match change.get_change_type() {
            ConfChangeType::AddNode => {
                let Ok(store) = <[u8; 8]>::try_from(&change.context[..]) else {
                    panic!("region {}: a membership change without its store", meta.id);
                };
                if meta.peers.iter().any(|p| p.id == peer) {
                    return;
                }
                meta.peers.push(PeerMeta {
                    id: peer,
                    store_id: u64::from_be_bytes(store),
                });
            }
            ConfChangeType::RemoveNode => {
                if !meta.peers.iter().any(|p| p.id == peer) {
                    return;
                }
                meta.peers.retain(|p| p.id != peer);
            }
            // Learners are not used.
            ConfChangeType::AddLearnerNode => return,
        }
        meta.conf_ver += 1;
        self.batch.put(Cf::Raft, region_key(meta.id), meta.encode());
        self.meta_changed = true;
    }

    fn restore(&mut self, snapshot: &Snapshot) {
        // Whatever this round applied before is covered by the snapshot.
        self.batch = WriteBatch::new();
        self.splits.clear();
        self.compact_to = None;
        self.restore = Some(snapshot.clone());
    }
}
