//! The split checker: splits the regions this node leads once they grow past a size or a
//! key count.
//!
//! A region is looked at when this node starts leading it and again after it took
//! 1/[`SPLIT_CHECK_WRITTEN_PART`] of the size or key limit in writes. Looking at it means walking its
//! committed versions (the write column family): if the region holds more user keys or bytes
//! than allowed, the user key at the middle becomes the split key. The placement driver hands
//! out the new region's ids, the split goes through the region's Raft log, and the placement
//! driver learns the result at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata_engine::{Cf, Engine, EngineError, RocksEngine};
use strata_kv::mvcc;
use strata_pd::PdClient;
use strata_raftstore::{RegionMeta, Router};
use tracing::{info, warn};

/// How often the split checker looks for regions to check.
pub const SPLIT_CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// A region is checked again after taking 1/this of the size or key limit in writes.
pub const SPLIT_CHECK_WRITTEN_PART: u64 = 16;

/// When a region splits.
#[derive(Clone, Copy, Debug)]
pub struct SplitConfig {
    /// A region holding more bytes of committed versions than this splits in two.
    pub region_max_bytes: u64,
    /// A region holding more user keys than this splits in two.
    pub region_max_keys: u64,
}

impl Default for SplitConfig {
    /// TiKV's split thresholds: 96 MiB or 960,000 keys.
    fn default() -> SplitConfig {
        SplitConfig {
            region_max_bytes: 96 << 20,
            region_max_keys: 960_000,
        }
    }
}

/// Runs the split checker until `stop` is set.
pub fn split_loop(
    pd: &PdClient,
    router: &Router,
    engine: &RocksEngine,
    config: SplitConfig,
    stop: &AtomicBool,
) {
    let min_bytes = (config.region_max_bytes / SPLIT_CHECK_WRITTEN_PART).max(1);
    let min_keys = (config.region_max_keys / SPLIT_CHECK_WRITTEN_PART).max(1);
    while !stop.load(Ordering::SeqCst) {
        for region in router.split_candidates(min_bytes, min_keys) {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            match split_key(engine, &region, config) {
                Ok(Some(key)) => {
                    if let Err(e) = split(pd, router, &region, key) {
                        warn!(region = region.id, %e, "splitting a region failed");
                    }
                }
                Ok(None) => {}
                Err(e) => warn!(region = region.id, %e, "checking a region's size failed"),
            }
        }
        for _ in 0..10 {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(SPLIT_CHECK_INTERVAL / 10);
        }
    }
}

/// The user key to split `region` at, if it is past the limits: the key at the middle of
/// the region's user keys or bytes, whichever limit it passed.
pub fn split_key(
    engine: &dyn Engine,
    region: &RegionMeta,
    config: SplitConfig,
) -> Result<Option<Vec<u8>>, EngineError> {
    let lower = mvcc::encode_user_key(&region.start_key);
    let upper = (!region.end_key.is_empty()).then(|| mvcc::encode_user_key(&region.end_key));
    let mut iter = engine.iterator(Cf::Write, &lower, upper.as_deref());
    iter.seek(&lower);
    let (mut keys, mut bytes) = (0u64, 0u64);
    let mut last: Vec<u8> = Vec::new();
    let (mut at_half_keys, mut at_half_bytes) = (None, None);
    while iter.valid()? {
        let (encoded, _) = mvcc::split_versioned_key(iter.key())
            .map_err(|e| EngineError::Storage(e.to_string()))?;
        if encoded != last.as_slice() {
            last = encoded.to_vec();
            keys += 1;
            // The first key of a region cannot start the split-off part.
            if keys > 1 {
                if at_half_keys.is_none() && keys > config.region_max_keys / 2 {
                    at_half_keys = Some(last.clone());
                }
                if at_half_bytes.is_none() && bytes > config.region_max_bytes / 2 {
                    at_half_bytes = Some(last.clone());
                }
            }
        }
        bytes += (iter.key().len() + iter.value().len()) as u64;
        if keys > config.region_max_keys && at_half_keys.is_some() {
            return decode(at_half_keys);
        }
        if bytes > config.region_max_bytes && at_half_bytes.is_some() {
            return decode(at_half_bytes);
        }
        iter.next();
    }
    Ok(None)
}

fn decode(encoded: Option<Vec<u8>>) -> Result<Option<Vec<u8>>, EngineError> {
    encoded
        .map(|e| mvcc::decode_user_key(&e).map_err(|e| EngineError::Storage(e.to_string())))
        .transpose()
}

/// Splits `region` at `key` through Raft and tells the placement driver.
fn split(pd: &PdClient, router: &Router, region: &RegionMeta, key: Vec<u8>) -> Result<(), String> {
    let (new_id, new_peers) = pd.ask_split(region.id).map_err(|e| e.to_string())?;
    if new_peers.len() != region.peers.len() {
        return Err(format!(
            "asked for {} peer ids, got {}",
            region.peers.len(),
            new_peers.len()
        ));
    }
    router
        .propose_split(region.id, region.version, key, new_id, new_peers)
        .map_err(|e| e.to_string())?;
    let regions = router.regions();
    let find = |id| regions.iter().find(|r| r.id == id);
    let (Some(left), Some(right)) = (find(region.id), find(new_id)) else {
        return Err("the split applied, but its regions are gone".into());
    };
    info!(
        region = left.id,
        new_region = right.id,
        split_key = ?right.start_key,
        "region split; reporting to the placement driver"
    );
    pd.report_split(crate::region_to_pb(left), crate::region_to_pb(right))
        .map_err(|e| e.to_string())
}

/// Starts the split checker thread.
pub fn start(
    pd: PdClient,
    router: Router,
    engine: Arc<RocksEngine>,
    config: SplitConfig,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("split-check".into())
        .spawn(move || split_loop(&pd, &router, &engine, config, &stop))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_engine::{MemoryEngine, WriteBatch};
    use strata_raftstore::PeerMeta;
    use strata_types::Timestamp;

    fn region(start: &[u8], end: &[u8]) -> RegionMeta {
        RegionMeta {
            id: 1,
            start_key: start.to_vec(),
            end_key: end.to_vec(),
            conf_ver: 1,
            version: 1,
            peers: vec![PeerMeta { id: 2, store_id: 3 }],
        }
    }

    fn engine_with(keys: &[&[u8]], versions: u64) -> MemoryEngine {
        let engine = MemoryEngine::new();
        let mut batch = WriteBatch::new();
        for key in keys {
            for ts in 1..=versions {
                let versioned = mvcc::append_ts(mvcc::encode_user_key(key), Timestamp(ts));
                batch.put(Cf::Write, versioned, vec![0; 10]);
            }
        }
        engine.write(&batch, false).unwrap();
        engine
    }

    #[test]
    fn splits_at_the_middle_key_once_past_the_key_limit() {
        let keys: Vec<Vec<u8>> = (0..10u8).map(|i| vec![b'k', i]).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let engine = engine_with(&refs, 3);
        let config = SplitConfig {
            region_max_bytes: u64::MAX,
            region_max_keys: 8,
        };
        let key = split_key(&engine, &region(b"", b""), config).unwrap();
        assert_eq!(key, Some(vec![b'k', 4]));
        // Within the limit: no split. Only the region's own keys count.
        assert_eq!(
            split_key(&engine, &region(b"", &[b'k', 8]), config).unwrap(),
            None
        );
        let loose = SplitConfig {
            region_max_bytes: u64::MAX,
            region_max_keys: 10,
        };
        assert_eq!(split_key(&engine, &region(b"", b""), loose).unwrap(), None);
    }

    #[test]
    fn splits_by_bytes_between_user_keys() {
        let engine = engine_with(&[b"a", b"b", b"c", b"d"], 5);
        let config = SplitConfig {
            region_max_bytes: 200,
            region_max_keys: u64::MAX,
        };
        let key = split_key(&engine, &region(b"", b""), config)
            .unwrap()
            .expect("past the size limit");
        assert!(key.as_slice() > b"a".as_slice() && key.as_slice() <= b"d".as_slice());
    }
}
