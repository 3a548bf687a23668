//! Reads of committed data at a snapshot timestamp: point gets and range scans over the
//! write CF. Locks are checked by the caller ([`crate::Storage`]) before a read.

use strata_engine::{Cf, Engine, EngineIterator};
use strata_kvapi::KvError;
use strata_types::{Key, Timestamp, Value};

use crate::mvcc::{self, Write, WriteKind};

/// Steps taken with `next` before a scan seeks past old versions of one key.
const SCAN_NEXT_BEFORE_SEEK: usize = 4;

fn storage(e: strata_engine::EngineError) -> KvError {
    KvError::Storage(e.to_string())
}

/// Reads committed versions.
pub struct MvccReader<'a> {
    engine: &'a dyn Engine,
}

impl<'a> MvccReader<'a> {
    pub fn new(engine: &'a dyn Engine) -> MvccReader<'a> {
        MvccReader { engine }
    }

    /// Returns the newest value of `key` committed at or before `ts`.
    // Hot path: point select.
    pub fn get(&self, key: &[u8], ts: Timestamp) -> Result<Option<Value>, KvError> {
        let encoded = mvcc::encode_user_key(key);
        let seek_key = mvcc::append_ts(encoded.clone(), ts);
        let mut upper = encoded.clone();
        upper.extend_from_slice(&[0xFF; 9]);
        // No lower bound: the cursor only moves forward from the seek.
        let mut it = self.engine.iterator(Cf::Write, b"", Some(&upper));
        it.seek(&seek_key);
        self.visible_value(&mut *it, &encoded)
    }

    /// From the cursor's position within the versions of `encoded`, returns the first Put's
    /// value (None on a Delete or when the versions run out).
    fn visible_value(
        &self,
        it: &mut dyn EngineIterator,
        encoded: &[u8],
    ) -> Result<Option<Value>, KvError> {
        while it.valid().map_err(storage)? {
            let (user, _commit_ts) = mvcc::split_versioned_key(it.key())?;
            if user != encoded {
                return Ok(None);
            }
            let write = Write::decode(it.value())?;
            match write.kind {
                WriteKind::Put => return self.load_value(encoded, &write).map(Some),
                WriteKind::Delete => return Ok(None),
                WriteKind::Lock | WriteKind::Rollback => it.next(),
            }
        }
        Ok(None)
    }

    fn load_value(&self, encoded: &[u8], write: &Write<'_>) -> Result<Value, KvError> {
        if let Some(value) = write.short_value {
            return Ok(value.to_vec());
        }
        let data_key = mvcc::append_ts(encoded.to_vec(), write.start_ts);
        self.engine
            .get(Cf::Default, &data_key)
            .map_err(storage)?
            .ok_or_else(|| mvcc::corrupt("write record points at a missing value"))
    }

    /// Returns the newest commit record of `key` that is not a rollback, with its commit_ts.
    pub fn newest_write(
        &self,
        key: &[u8],
    ) -> Result<Option<(Timestamp, WriteKind, Timestamp)>, KvError> {
        let encoded = mvcc::encode_user_key(key);
        let upper = versions_upper_bound(&encoded);
        let mut it = self.engine.iterator(Cf::Write, &encoded, Some(&upper));
        it.seek(&encoded);
        while it.valid().map_err(storage)? {
            let (_, commit_ts) = mvcc::split_versioned_key(it.key())?;
            let write = Write::decode(it.value())?;
            if write.kind != WriteKind::Rollback {
                return Ok(Some((commit_ts, write.kind, write.start_ts)));
            }
            it.next();
        }
        Ok(None)
    }

    /// In one pass over the versions of `key`: the commit_ts of its newest record that is not a
    /// rollback, and the kind of the record transaction `start_ts` left (if any, among the
    /// records committed at or after `start_ts`).
    // Hot path: every write's conflict check.
    pub fn newest_write_and_own(
        &self,
        key: &[u8],
        start_ts: Timestamp,
    ) -> Result<(Option<Timestamp>, Option<WriteKind>), KvError> {
        let encoded = mvcc::encode_user_key(key);
        let upper = versions_upper_bound(&encoded);
        let mut it = self.engine.iterator(Cf::Write, &encoded, Some(&upper));
        it.seek(&encoded);
        let mut newest = None;
        while it.valid().map_err(storage)? {
            let (_, commit_ts) = mvcc::split_versioned_key(it.key())?;
            let write = Write::decode(it.value())?;
            if write.start_ts == start_ts {
                return Ok((
                    newest.or((write.kind != WriteKind::Rollback).then_some(commit_ts)),
                    Some(write.kind),
                ));
            }
            if write.kind != WriteKind::Rollback && newest.is_none() {
                newest = Some(commit_ts);
            }
            if commit_ts < start_ts && newest.is_some() {
                break;
            }
            it.next();
        }
        Ok((newest, None))
    }

    /// Finds the record that transaction `start_ts` left on `key`: a commit (with its
    /// commit_ts) or a rollback.
    pub fn txn_record(
        &self,
        key: &[u8],
        start_ts: Timestamp,
    ) -> Result<Option<(Timestamp, WriteKind)>, KvError> {
        let encoded = mvcc::encode_user_key(key);
        let upper = versions_upper_bound(&encoded);
        let mut it = self.engine.iterator(Cf::Write, &encoded, Some(&upper));
        it.seek(&encoded);
        while it.valid().map_err(storage)? {
            let (_, commit_ts) = mvcc::split_versioned_key(it.key())?;
            if commit_ts < start_ts {
                break;
            }
            let write = Write::decode(it.value())?;
            if write.start_ts == start_ts {
                return Ok(Some((commit_ts, write.kind)));
            }
            it.next();
        }
        Ok(None)
    }

    /// Returns up to `limit` visible entries with keys in `[start, end)`, ascending or
    /// descending.
    pub fn scan(
        &self,
        start: &[u8],
        end: &[u8],
        ts: Timestamp,
        limit: usize,
        reverse: bool,
        keys_only: bool,
    ) -> Result<Vec<(Key, Value)>, KvError> {
        let lower = mvcc::encode_user_key(start);
        let upper = if end.is_empty() {
            vec![0xFF; 16]
        } else {
            mvcc::encode_user_key(end)
        };
        let mut it = self.engine.iterator(Cf::Write, &lower, Some(&upper));
        let mut out = Vec::new();
        if reverse {
            it.seek_for_prev(&upper);
        } else {
            it.seek(&lower);
        }
        let mut encoded = Vec::new();
        while out.len() < limit && it.valid().map_err(storage)? {
            let (user, _) = mvcc::split_versioned_key(it.key())?;
            encoded.clear();
            encoded.extend_from_slice(user);

            if reverse {
                // Versions are met oldest first going backwards: look the key up forwards, then
                // step before its first version.
                it.seek(&mvcc::append_ts(encoded.clone(), ts));
                if let Some(value) = self.visible_value(&mut *it, &encoded)? {
                    out.push((
                        mvcc::decode_user_key(&encoded)?,
                        if keys_only { Vec::new() } else { value },
                    ));
                }
                it.seek_for_prev(&encoded);
                continue;
            }
            let (_, commit_ts) = mvcc::split_versioned_key(it.key())?;
            if commit_ts > ts {
                it.seek(&mvcc::append_ts(encoded.clone(), ts));
            }
            if let Some(value) = self.visible_value(&mut *it, &encoded)? {
                out.push((
                    mvcc::decode_user_key(&encoded)?,
                    if keys_only { Vec::new() } else { value },
                ));
            }
            self.skip_versions(&mut *it, &encoded)?;
        }
        Ok(out)
    }

    /// Moves the cursor past every version of `encoded`.
    fn skip_versions(&self, it: &mut dyn EngineIterator, encoded: &[u8]) -> Result<(), KvError> {
        for _ in 0..SCAN_NEXT_BEFORE_SEEK {
            if !it.valid().map_err(storage)? {
                return Ok(());
            }
            let (user, _) = mvcc::split_versioned_key(it.key())?;
            if user != encoded {
                return Ok(());
            }
            it.next();
        }
        if it.valid().map_err(storage)? {
            it.seek(&versions_upper_bound(encoded));
        }
        Ok(())
    }
}

/// The smallest key above every version of an encoded user key.
pub fn versions_upper_bound(encoded: &[u8]) -> Vec<u8> {
    let mut upper = Vec::with_capacity(encoded.len() + 9);
    upper.extend_from_slice(encoded);
    upper.extend_from_slice(&[0xFF; 9]);
    upper
}
