//! What a SQL node tells of the cluster's placement: regions with their peers and leaders,
//! and stores with their regions and leaders, read from the placement driver (`SHOW TABLE …
//! REGIONS`, information_schema's TIKV_REGION_STATUS and TIKV_STORE_STATUS).

use std::time::Duration;

use strata_kvapi::{KvError, RegionInfo, StoreInfo};
use strata_pd_client::PdClient;

/// Regions asked of the placement driver at once.
const PAGE: u32 = 256;
/// A store heard from within this is up (the placement driver's own rule).
const UP_WITHIN: Duration = Duration::from_secs(5);

fn unavailable(e: impl std::fmt::Display) -> KvError {
    KvError::Unavailable(format!("placement driver: {e}"))
}

/// The regions overlapping `[start, end)` (`end` empty: to the end), in key order.
pub(crate) fn regions(pd: &PdClient, start: &[u8], end: &[u8]) -> Result<Vec<RegionInfo>, KvError> {
    let mut out = Vec::new();
    let mut from = start.to_vec();
    loop {
        let page = pd.scan_regions(&from, end, PAGE).map_err(unavailable)?;
        let full = page.len() == PAGE as usize;
        let mut last_end = None;
        for answer in page {
            let Some(region) = answer.region else {
                continue;
            };
            let epoch = region.epoch.unwrap_or_default();
            last_end = Some(region.end_key.clone());
            out.push(RegionInfo {
                id: region.id,
                start_key: region.start_key,
                end_key: region.end_key,
                leader: answer.leader.map(|l| (l.id, l.store_id)),
                peers: region.peers.iter().map(|p| (p.id, p.store_id)).collect(),
                conf_ver: epoch.conf_ver,
                version: epoch.version,
            });
        }
        match last_end {
            Some(next) if full && !next.is_empty() && (end.is_empty() || next.as_slice() < end) => {
                from = next;
            }
            _ => return Ok(out),
        }
    }
}

/// Every store the placement driver knows, with the regions it holds (as its heartbeats
/// report) and the region leaders on it.
pub(crate) fn stores(pd: &PdClient) -> Result<Vec<StoreInfo>, KvError> {
    let all = pd.all_stores().map_err(unavailable)?;
    let regions = regions(pd, b"", b"")?;
    let mut stores: Vec<StoreInfo> = all
        .into_iter()
        .filter_map(|state| {
            let store = state.store?;
            let leaders = regions
                .iter()
                .filter(|r| r.leader.is_some_and(|(_, s)| s == store.id))
                .count() as u64;
            Some(StoreInfo {
                id: store.id,
                address: store.address,
                up: Duration::from_millis(state.since_heartbeat_ms) < UP_WITHIN,
                regions: state.region_count,
                leaders,
            })
        })
        .collect();
    stores.sort_by_key(|s| s.id);
    Ok(stores)
}
