//! Pessimistic locks handed from a region's leader to the next one when leadership is
//! transferred (TiKV does the same for its in-memory pessimistic locks).
//!
//! Pessimistic locks live in the leader's memory only. Before a leader transfers a region it
//! stops granting locks on the region's keys, and proposes one write through the region's Raft
//! log, ahead of the transfer: a record in [`Cf::Raft`] under `handover/<region start key>`
//! holding its term and every lock it holds in the region. Raft hands leadership only to a
//! peer whose log holds that entry, and a leader applies all earlier entries before it serves,
//! so when the new leader starts serving the record is applied on it. A leader of the term
//! right after the record's takes the locks that are still pending (their transaction has
//! neither prewritten nor finished the key since: prewrites proposed before the record may
//! have applied after the old leader read its table).
//!
//! A record stays until the region's next handover overwrites it (replicated state cannot be
//! deleted by one replica), and one of an older term is ignored. When the old leader failed
//! instead of handing over, its successor of the next term takes the record's locks: those
//! taken since are lost as before, and one whose transaction released it in memory only (a
//! pessimistic rollback) is resolved as any expired lock, from its transaction's primary.

use strata_engine::{Cf, Engine, WriteBatch};
use strata_kvapi::KvError;
use strata_types::{Key, Timestamp};

use crate::concurrency::{ConcurrencyManager, PessimisticLock};
use crate::mvcc::Lock;
use crate::reader::{storage, MvccReader};

const PREFIX: &[u8] = b"handover/";

fn record_key(region_start: &[u8]) -> Vec<u8> {
    let mut key = PREFIX.to_vec();
    key.extend_from_slice(region_start);
    key
}

/// Stops granting locks in `[start, end)` and returns the write that carries the locks held
/// there to the region's next leader; `term` is this leader's.
pub(crate) fn hand_over(
    cm: &ConcurrencyManager,
    start: &[u8],
    end: &[u8],
    term: u64,
) -> WriteBatch {
    let locks = cm.hand_over(start, end);
    tracing::debug!(
        locks = locks.len(),
        term,
        "handing pessimistic locks to the next leader"
    );
    let mut batch = WriteBatch::new();
    batch.put(Cf::Raft, record_key(start), encode(term, &locks));
    batch
}

/// The locks that the leader of the term before `term` handed over in records of regions
/// starting in `[start, end)`, on keys of that range whose transactions still wait to
/// prewrite them.
pub(crate) fn take(
    engine: &dyn Engine,
    start: &[u8],
    end: &[u8],
    term: u64,
) -> Result<Vec<(Key, PessimisticLock)>, KvError> {
    let lower = record_key(start);
    let upper = if end.is_empty() {
        let mut upper = PREFIX.to_vec();
        *upper.last_mut().expect("non-empty prefix") += 1;
        upper
    } else {
        record_key(end)
    };
    let mut pending = Vec::new();
    let mut it = engine.iterator(Cf::Raft, &lower, Some(&upper));
    it.seek(&lower);
    while it.valid().map_err(storage)? {
        let (record_term, locks) = decode(it.value())?;
        if record_term.checked_add(1) == Some(term) {
            for (key, lock) in locks {
                let in_range = key.as_slice() >= start && (end.is_empty() || key.as_slice() < end);
                if in_range && still_pending(engine, &key, lock.start_ts)? {
                    pending.push((key, lock));
                }
            }
        }
        it.next();
    }
    if !pending.is_empty() {
        tracing::debug!(
            locks = pending.len(),
            term,
            "took the pessimistic locks the former leader handed over"
        );
    }
    Ok(pending)
}

/// Whether transaction `start_ts` has neither a prewrite lock nor a commit or rollback record
/// on `key`.
fn still_pending(engine: &dyn Engine, key: &[u8], start_ts: Timestamp) -> Result<bool, KvError> {
    if let Some(bytes) = engine.get(Cf::Lock, key).map_err(storage)? {
        if Lock::decode(&bytes)?.start_ts == start_ts {
            return Ok(false);
        }
    }
    Ok(MvccReader::new(engine).txn_record(key, start_ts)?.is_none())
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn encode(term: u64, locks: &[(Key, PessimisticLock)]) -> Vec<u8> {
    let mut out = term.to_be_bytes().to_vec();
    out.extend_from_slice(&(locks.len() as u32).to_be_bytes());
    for (key, lock) in locks {
        put_bytes(&mut out, key);
        put_bytes(&mut out, &lock.primary);
        for n in [lock.start_ts.0, lock.for_update_ts.0, lock.ttl_ms] {
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
    out
}

type Record = (u64, Vec<(Key, PessimisticLock)>);

fn decode(mut bytes: &[u8]) -> Result<Record, KvError> {
    let corrupt = || crate::mvcc::corrupt("handed-over locks");
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (bytes.get(..n)?, bytes.get(n..)?);
        *bytes = rest;
        Some(head)
    }
    fn u32_at(bytes: &mut &[u8]) -> Option<u32> {
        Some(u32::from_be_bytes(take(bytes, 4)?.try_into().ok()?))
    }
    fn u64_at(bytes: &mut &[u8]) -> Option<u64> {
        Some(u64::from_be_bytes(take(bytes, 8)?.try_into().ok()?))
    }
    fn bytes_at(bytes: &mut &[u8]) -> Option<Vec<u8>> {
        let n = u32_at(bytes)? as usize;
        Some(take(bytes, n)?.to_vec())
    }
    let term = u64_at(&mut bytes).ok_or_else(corrupt)?;
    let count = u32_at(&mut bytes).ok_or_else(corrupt)?;
    let mut locks = Vec::new();
    for _ in 0..count {
        let mut one = || {
            let key = bytes_at(&mut bytes)?;
            let primary = bytes_at(&mut bytes)?;
            let start_ts = Timestamp(u64_at(&mut bytes)?);
            let for_update_ts = Timestamp(u64_at(&mut bytes)?);
            let ttl_ms = u64_at(&mut bytes)?;
            Some((
                key,
                PessimisticLock {
                    start_ts,
                    for_update_ts,
                    primary,
                    ttl_ms,
                },
            ))
        };
        locks.push(one().ok_or_else(corrupt)?);
    }
    if !bytes.is_empty() {
        return Err(corrupt());
    }
    Ok((term, locks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(start: u64) -> PessimisticLock {
        PessimisticLock {
            start_ts: Timestamp(start),
            for_update_ts: Timestamp(start + 1),
            primary: b"p".to_vec(),
            ttl_ms: 10_000,
        }
    }

    #[test]
    fn records_round_trip_and_refuse_damage() {
        let locks = vec![(b"a".to_vec(), lock(10)), (Vec::new(), lock(20))];
        let bytes = encode(7, &locks);
        assert_eq!(decode(&bytes).unwrap(), (7, locks));
        assert_eq!(decode(&encode(8, &[])).unwrap(), (8, Vec::new()));
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
    }
}
