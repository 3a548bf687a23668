//! The split checker: splits the regions this node leads once they grow past a size or a
//! key count.
//!
//! A region is looked at when this node starts leading it, again after it took
//! 1/[`SPLIT_CHECK_WRITTEN_PART`] of the size or key limit in writes, and again after it split.
//! Looking at it means walking its committed versions (the write column family): if the region
//! holds more user keys or bytes than allowed (not counting the versions below the GC safe
//! point that compactions will drop: a burst of updates would otherwise split a region for
//! good, as Strata does not merge regions, over garbage that lives seconds), it is cut into pieces of half the limit each (at
//! most [`SPLIT_KEYS_PER_CHECK_MAX`] cuts a look), so that a region far past the limit, after a
//! burst of inserts, reaches its final shape in one look rather than one split a second. The
//! cuts are made from the last to the first: each splits the tail off the same region, which
//! this node keeps leading, so no cut waits for a new region to elect its leader. The
//! placement driver hands out each new region's ids, each split goes through the region's Raft
//! log, and the placement driver learns the result at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata_engine::{Cf, Engine, EngineError, RocksEngine};
use strata_kv::mvcc;
use strata_pd_client::PdClient;
use strata_raftstore::{RegionMeta, Router};
use strata_types::Timestamp;
use tracing::{info, warn};

/// How often the split checker looks for regions to check.
pub const SPLIT_CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// A region is checked again after taking 1/this of the size or key limit in writes.
pub const SPLIT_CHECK_WRITTEN_PART: u64 = 16;
/// The most cuts one look at a region makes; a region past even that is looked at again on
/// the next pass.
pub const SPLIT_KEYS_PER_CHECK_MAX: usize = 64;

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
    safe_point: &dyn Fn() -> Timestamp,
    stop: &AtomicBool,
) {
    let min_bytes = (config.region_max_bytes / SPLIT_CHECK_WRITTEN_PART).max(1);
    let min_keys = (config.region_max_keys / SPLIT_CHECK_WRITTEN_PART).max(1);
    while !stop.load(Ordering::SeqCst) {
        for region in router.split_candidates(min_bytes, min_keys) {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            let cuts = match split_keys(engine, &region, config, safe_point()) {
                Ok(cuts) => cuts,
                Err(e) => {
                    warn!(region = region.id, %e, "checking a region's size failed");
                    continue;
                }
            };
            let mut left = region;
            for key in cuts.into_iter().rev() {
                match split(pd, router, &left, key) {
                    Ok(rest) => left = rest,
                    Err(e) => {
                        warn!(region = left.id, %e, "splitting a region failed");
                        break;
                    }
                }
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

/// The user keys to cut `region` at when it is past a limit, in order: each piece but the
/// last holds half the key limit or just over half the size limit, whichever it reaches first
/// (at most [`SPLIT_KEYS_PER_CHECK_MAX`] cuts). Empty when the region is within both limits.
/// Versions older than the newest of their key at or below `safe_point` are garbage and add
/// nothing to the size.
pub fn split_keys(
    engine: &dyn Engine,
    region: &RegionMeta,
    config: SplitConfig,
    safe_point: Timestamp,
) -> Result<Vec<Vec<u8>>, EngineError> {
    let lower = mvcc::encode_user_key(&region.start_key);
    let upper = (!region.end_key.is_empty()).then(|| mvcc::encode_user_key(&region.end_key));
    let mut iter = engine.iterator(Cf::Write, &lower, upper.as_deref());
    iter.seek(&lower);
    let (mut keys, mut bytes) = (0u64, 0u64);
    // Keys and bytes since the last cut.
    let (mut piece_keys, mut piece_bytes) = (0u64, 0u64);
    let mut last: Vec<u8> = Vec::new();
    // Whether a version of `last` at or below the safe point was seen.
    let mut below = false;
    let mut cuts = Vec::new();
    while iter.valid()? {
        let (encoded, commit_ts) = mvcc::split_versioned_key(iter.key())
            .map_err(|e| EngineError::Storage(e.to_string()))?;
        if encoded != last.as_slice() {
            last = encoded.to_vec();
            below = false;
            // A cut falls between user keys, and never before the region's first key.
            let full = piece_keys >= config.region_max_keys / 2
                || piece_bytes > config.region_max_bytes / 2;
            if keys > 0 && full {
                if cuts.len() == SPLIT_KEYS_PER_CHECK_MAX {
                    break;
                }
                cuts.push(last.clone());
                (piece_keys, piece_bytes) = (0, 0);
            }
            keys += 1;
            piece_keys += 1;
        }
        let garbage = commit_ts <= safe_point && std::mem::replace(&mut below, true);
        if !garbage {
            let size = (iter.key().len() + iter.value().len()) as u64;
            bytes += size;
            piece_bytes += size;
        }
        iter.next();
    }
    let past_limit = cuts.len() == SPLIT_KEYS_PER_CHECK_MAX
        || keys > config.region_max_keys
        || bytes > config.region_max_bytes;
    if !past_limit {
        return Ok(Vec::new());
    }
    cuts.into_iter()
        .map(|encoded| {
            mvcc::decode_user_key(&encoded).map_err(|e| EngineError::Storage(e.to_string()))
        })
        .collect()
}

/// Splits `region` at `key` through Raft and tells the placement driver; returns the part
/// before `key`, which keeps the region's id.
fn split(
    pd: &PdClient,
    router: &Router,
    region: &RegionMeta,
    key: Vec<u8>,
) -> Result<RegionMeta, String> {
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
        .map_err(|e| e.to_string())?;
    Ok(left.clone())
}

/// Starts the split checker thread.
pub fn start(
    pd: PdClient,
    router: Router,
    engine: Arc<RocksEngine>,
    config: SplitConfig,
    safe_point: impl Fn() -> Timestamp + Send + 'static,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("split-check".into())
        .spawn(move || split_loop(&pd, &router, &engine, config, &safe_point, &stop))
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
    fn cuts_pieces_of_half_the_key_limit_once_past_it() {
        let keys: Vec<Vec<u8>> = (0..10u8).map(|i| vec![b'k', i]).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let engine = engine_with(&refs, 3);
        let config = SplitConfig {
            region_max_bytes: u64::MAX,
            region_max_keys: 8,
        };
        // Pieces of 4, 4 and 2 user keys (versions of one key stay together).
        let cuts = split_keys(&engine, &region(b"", b""), config, Timestamp::ZERO).unwrap();
        assert_eq!(cuts, [vec![b'k', 4], vec![b'k', 8]]);
        // Within the limit: no split. Only the region's own keys count.
        assert!(
            split_keys(&engine, &region(b"", &[b'k', 8]), config, Timestamp::ZERO)
                .unwrap()
                .is_empty()
        );
        let loose = SplitConfig {
            region_max_bytes: u64::MAX,
            region_max_keys: 10,
        };
        assert!(
            split_keys(&engine, &region(b"", b""), loose, Timestamp::ZERO)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_region_far_past_the_limit_is_cut_at_most_so_often_in_one_look() {
        let keys: Vec<Vec<u8>> = (0..1000u16).map(|i| i.to_be_bytes().to_vec()).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let engine = engine_with(&refs, 1);
        let config = |max_keys| SplitConfig {
            region_max_bytes: u64::MAX,
            region_max_keys: max_keys,
        };
        // 1,000 keys, limit 40: a cut every 20 keys, 49 in all.
        let cuts = split_keys(&engine, &region(b"", b""), config(40), Timestamp::ZERO).unwrap();
        let expected: Vec<Vec<u8>> = (1..50u16)
            .map(|i| (i * 20).to_be_bytes().to_vec())
            .collect();
        assert_eq!(cuts, expected);
        // Limit 10: a cut every 5 keys would make 199; one look makes the first 64.
        let cuts = split_keys(&engine, &region(b"", b""), config(10), Timestamp::ZERO).unwrap();
        assert_eq!(cuts.len(), SPLIT_KEYS_PER_CHECK_MAX);
        assert_eq!(cuts[0], 5u16.to_be_bytes());
        assert_eq!(cuts[63], 320u16.to_be_bytes());
    }

    #[test]
    fn garbage_below_the_safe_point_does_not_count_toward_the_size() {
        // Four keys of five versions (timestamps 1 to 5), each version under 30 bytes.
        let engine = engine_with(&[b"a", b"b", b"c", b"d"], 5);
        let config = SplitConfig {
            region_max_bytes: 200,
            region_max_keys: u64::MAX,
        };
        let whole = region(b"", b"");
        assert!(!split_keys(&engine, &whole, config, Timestamp(2))
            .unwrap()
            .is_empty());
        assert!(
            split_keys(&engine, &whole, config, Timestamp(5))
                .unwrap()
                .is_empty(),
            "one version of each key is left once the safe point passes them all"
        );
    }

    #[test]
    fn cuts_by_bytes_between_user_keys() {
        let engine = engine_with(&[b"a", b"b", b"c", b"d"], 5);
        let config = SplitConfig {
            region_max_bytes: 200,
            region_max_keys: u64::MAX,
        };
        let cuts = split_keys(&engine, &region(b"", b""), config, Timestamp::ZERO).unwrap();
        assert!(!cuts.is_empty(), "past the size limit");
        assert!(cuts.windows(2).all(|w| w[0] < w[1]), "{cuts:?}");
        assert!(cuts
            .iter()
            .all(|key| key.as_slice() > b"a".as_slice() && key.as_slice() <= b"d".as_slice()));
    }
}
