//! Range reads across regions: a scan region by region, and the scans of a join step sent
//! together, one request per region.

use std::time::Duration;

use strata_kvapi::{KvError, ScanRequest, Scanned};
use strata_proto::kv as pb;

use super::{entries, Backoff, RemoteKv};

impl RemoteKv {
    /// Reads a range region by region, each part from its region's leader, until the limit.
    pub(super) fn scan_regions(&self, request: &ScanRequest) -> Result<Scanned, KvError> {
        let mut out = Scanned::default();
        let mut backoff = Backoff::new();
        // The part of the range still to read: [start, end).
        let (mut start, mut end) = (request.start.clone(), request.end.clone());
        while out.pairs.len() < request.limit && (end.is_empty() || start < end) {
            let region = if request.reverse {
                self.locate_before(&end, &mut backoff)?
            } else {
                self.locate(&start, &mut backoff)?
            };
            let (part_start, part_end) = region.part_of(&start, &end);
            let scan = pb::ScanRequest {
                context: region.context(),
                start: part_start.clone(),
                end: part_end,
                limit: (request.limit - out.pairs.len()) as u64,
                ts: request.ts.0,
                reverse: request.reverse,
                keys_only: request.keys_only,
            };
            match self.send(&region, Duration::ZERO, |mut c| async move {
                c.scan(scan).await
            }) {
                Ok(Ok(response)) => {
                    out.extend(Scanned {
                        pairs: entries(response.pairs),
                        versions: response.versions,
                    });
                }
                Ok(Err(e)) => return Err(e),
                Err(why) => {
                    self.retry_after(&region, &why, &mut backoff)?;
                    continue;
                }
            }
            if request.reverse {
                if region.start_key.is_empty() || region.start_key <= start {
                    break;
                }
                end = region.start_key;
            } else {
                if region.end_key.is_empty() {
                    break;
                }
                start = region.end_key;
            }
        }
        Ok(out)
    }

    /// Runs several scans, sending the bounded forward ones of one region together.
    pub(super) fn scan_together(&self, requests: &[ScanRequest]) -> Result<Vec<Scanned>, KvError> {
        let mut results: Vec<Option<Scanned>> = vec![None; requests.len()];
        // Forward scans of bounded ranges (a join's lookups) go together, one request per
        // region; the others run alone.
        let mut together = Vec::new();
        for (i, request) in requests.iter().enumerate() {
            if request.reverse || request.end.is_empty() || request.start >= request.end {
                results[i] = Some(self.scan_regions(request)?);
            } else {
                together.push(i);
            }
        }
        let starts: Vec<&[u8]> = together.iter().map(|&i| &requests[i].start[..]).collect();
        let parts = self.on_regions_of(&starts, |region, part| {
            let scans = part
                .iter()
                .map(|&j| {
                    let r = &requests[together[j]];
                    // A range that runs past the region is read up to its end here, and on
                    // from there afterwards.
                    let end = if region.end_key.is_empty() {
                        r.end.clone()
                    } else {
                        r.end.clone().min(region.end_key.clone())
                    };
                    pb::ScanRequest {
                        context: None,
                        start: r.start.clone(),
                        end,
                        limit: r.limit as u64,
                        ts: r.ts.0,
                        reverse: false,
                        keys_only: r.keys_only,
                    }
                })
                .collect::<Vec<_>>();
            let expected = scans.len();
            let request = pb::BatchScanRequest {
                context: region.context(),
                scans,
            };
            let region_end = region.end_key.clone();
            let call = self.request(region, Duration::ZERO, |mut c| async move {
                c.batch_scan(request).await
            })?;
            Ok(async move {
                Ok(call.await?.and_then(|response| {
                    // The store answers a first part of the scans (at least one) when the
                    // answer would grow too large; the rest are read afterwards.
                    let answered = response.results.len();
                    if answered <= expected && (answered > 0 || expected == 0) {
                        Ok((region_end, response.results))
                    } else {
                        Err(KvError::Storage(format!(
                            "batch scan of {expected} ranges returned {answered} results"
                        )))
                    }
                }))
            })
        })?;
        let mut unanswered = Vec::new();
        for (part, (region_end, found)) in parts {
            unanswered.extend(part[found.len()..].iter().map(|&j| together[j]));
            for (&j, found) in part.iter().zip(found) {
                let i = together[j];
                let request = &requests[i];
                let mut scanned = Scanned {
                    pairs: entries(found.pairs),
                    versions: found.versions,
                };
                if scanned.pairs.len() < request.limit
                    && !region_end.is_empty()
                    && region_end < request.end
                {
                    scanned.extend(self.scan_regions(&ScanRequest {
                        start: region_end.clone(),
                        limit: request.limit - scanned.pairs.len(),
                        ..request.clone()
                    })?);
                }
                results[i] = Some(scanned);
            }
        }
        // Each region answered at least one of its scans, so every round leaves fewer.
        if !unanswered.is_empty() {
            let rest: Vec<ScanRequest> = unanswered.iter().map(|&i| requests[i].clone()).collect();
            for (i, scanned) in unanswered.into_iter().zip(self.scan_together(&rest)?) {
                results[i] = Some(scanned);
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every scan has a result"))
            .collect())
    }
}
