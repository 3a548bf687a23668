//! Snapshots: a region's data as applied up to some index, for a peer whose log cannot catch
//! it up (a peer just added to the region, whose log is empty).
//!
//! The leader makes one on its poll loop from what the engine holds at that moment (the poll
//! loop is the engine's only writer for replicated data, so the data, the applied index and the
//! region's metadata agree): the metadata, then every key of the region in the data column
//! families. The follower writes it in one synced batch that first deletes whatever it held in
//! the range, before its log records the snapshot.
//!
//! A snapshot travels as one Raft message, so a region must fit in one message
//! ([`SNAPSHOT_MAX_BYTES`](crate::SNAPSHOT_MAX_BYTES) bounds it); regions split well below
//! that.

use std::sync::Arc;

use raft::eraftpb::{ConfState, Snapshot};
use strata_engine::{Cf, Engine, EngineError, WriteBatch};

use crate::apply::{applied_key, applied_value, read_applied};
use crate::peer::SnapshotSource;
use crate::region::{region_key, RegionMeta};

/// The column families that hold a region's data.
pub const DATA_CFS: [Cf; 3] = [Cf::Lock, Cf::Default, Cf::Write];

/// Where the keys of a user-key range lie in each column family of the engine.
pub trait KeySpace: Send + Sync + 'static {
    /// The engine keys of `cf` that hold the user keys in `[start, end)` (an empty `end`: to
    /// the end of the key space), as (inclusive lower bound, exclusive upper bound or none).
    fn engine_range(&self, cf: Cf, start: &[u8], end: &[u8]) -> (Vec<u8>, Option<Vec<u8>>);
}

/// Makes snapshots of one region from the engine.
pub(crate) struct RegionSnapshots {
    pub engine: Arc<dyn Engine>,
    pub keys: Arc<dyn KeySpace>,
    pub region: u64,
}

fn storage(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl SnapshotSource for RegionSnapshots {
    fn snapshot(&self) -> Result<Snapshot, String> {
        let engine = &*self.engine;
        let (index, term) = read_applied(engine, self.region)
            .map_err(storage)?
            .ok_or("no applied index")?;
        let meta_bytes = engine
            .get(Cf::Raft, &region_key(self.region))
            .map_err(storage)?
            .ok_or("no region metadata")?;
        let meta = RegionMeta::decode(&meta_bytes).ok_or("corrupt region metadata")?;
        let mut data = WriteBatch::new();
        for cf in DATA_CFS {
            let (lower, upper) = self.keys.engine_range(cf, &meta.start_key, &meta.end_key);
            let mut iter = engine.iterator(cf, &lower, upper.as_deref());
            iter.seek(&lower);
            while iter.valid().map_err(storage)? {
                data.put(cf, iter.key().to_vec(), iter.value().to_vec());
                iter.next();
            }
        }
        let mut bytes = (meta_bytes.len() as u32).to_be_bytes().to_vec();
        bytes.extend_from_slice(&meta_bytes);
        bytes.extend_from_slice(&data.encode());
        if bytes.len() > crate::store::SNAPSHOT_MAX_BYTES {
            return Err(format!(
                "region {} holds {} bytes, more than a snapshot carries",
                self.region,
                bytes.len()
            ));
        }
        let mut snapshot = Snapshot {
            data: bytes.into(),
            ..Default::default()
        };
        let metadata = snapshot.mut_metadata();
        metadata.index = index;
        metadata.term = term;
        let voters: Vec<u64> = meta.peers.iter().map(|p| p.id).collect();
        metadata.set_conf_state(ConfState::from((voters, vec![])));
        Ok(snapshot)
    }
}

/// The engine batch that makes `snapshot` a region's state here: what the engine holds in
/// the region's range goes, the snapshot's keys come in, with the region's metadata and
/// applied index. Returns the region's metadata too.
pub(crate) fn restore_batch(
    engine: &dyn Engine,
    keys: &dyn KeySpace,
    snapshot: &Snapshot,
) -> Result<(RegionMeta, WriteBatch), EngineError> {
    let corrupt = || EngineError::Storage("corrupt snapshot".into());
    let bytes: &[u8] = &snapshot.data;
    let meta_len = bytes
        .get(..4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
        .ok_or_else(corrupt)?;
    let meta_bytes = bytes.get(4..4 + meta_len).ok_or_else(corrupt)?;
    let meta = RegionMeta::decode(meta_bytes).ok_or_else(corrupt)?;
    let data = WriteBatch::decode(&bytes[4 + meta_len..])?;
    let mut batch = WriteBatch::new();
    for cf in DATA_CFS {
        let (lower, upper) = keys.engine_range(cf, &meta.start_key, &meta.end_key);
        let mut iter = engine.iterator(cf, &lower, upper.as_deref());
        iter.seek(&lower);
        while iter.valid()? {
            batch.delete(cf, iter.key().to_vec());
            iter.next();
        }
    }
    batch.append(data);
    batch.put(Cf::Raft, region_key(meta.id), meta_bytes.to_vec());
    let metadata = snapshot.get_metadata();
    batch.put(
        Cf::Raft,
        applied_key(meta.id),
        applied_value(metadata.index, metadata.term),
    );
    Ok((meta, batch))
}
