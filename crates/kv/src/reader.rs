//! Reads of committed data at a snapshot timestamp: point gets and range scans over the
//! write CF. Locks are checked by the caller ([`crate::Storage`]) before a read.

use strata_engine::{Cf, Engine, EngineIterator};
use strata_kvapi::{KvError, Scanned};
use strata_types::{Timestamp, Value};

use crate::mvcc::{self, Write, WriteKind};

/// Steps taken with `next` before a scan seeks past old versions of one key.
const SCAN_NEXT_BEFORE_SEEK: usize = 4;

/// The KV API's error for an engine failure.
pub(crate) fn storage(e: strata_engine::EngineError) -> KvError {
    match e {
        strata_engine::EngineError::Unavailable(why) => KvError::Unavailable(why),
        strata_engine::EngineError::OutcomeUnknown(why) => KvError::Undetermined(why),
        e => KvError::Storage(e.to_string()),
    }
}

/// What [`MvccReader::key_history`] finds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyHistory {
    pub newest_commit_ts: Option<Timestamp>,
    pub exists: bool,
    pub own: Option<WriteKind>,
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
        let mut it = self.engine.versions_iterator();
        it.seek(&seek_key);
        self.visible_value(&mut *it, &encoded, &mut 0)
    }

    /// From the cursor's position within the versions of `encoded`, returns the first Put's
    /// value (None on a Delete or when the versions run out); counts the versions it reads in
    /// `versions`.
    fn visible_value(
        &self,
        it: &mut dyn EngineIterator,
        encoded: &[u8],
        versions: &mut u64,
    ) -> Result<Option<Value>, KvError> {
        while it.valid().map_err(storage)? {
            let (user, _commit_ts) = mvcc::split_versioned_key(it.key())?;
            if user != encoded {
                return Ok(None);
            }
            *versions += 1;
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

    /// In one pass over the versions of `key`, what a write of it by `start_ts` must check: the
    /// newest commit that is not a rollback, whether the key exists now, and the record that
    /// transaction `start_ts` itself left (among those committed at or after `start_ts`).
    // Hot path: every write's conflict check.
    pub fn key_history(&self, key: &[u8], start_ts: Timestamp) -> Result<KeyHistory, KvError> {
        let encoded = mvcc::encode_user_key(key);
        let mut it = self.engine.versions_iterator();
        // The newest version sorts first: its key carries !MAX = 0.
        it.seek(&mvcc::append_ts(encoded.clone(), Timestamp::MAX));
        let mut history = KeyHistory::default();
        let mut data_seen = false;
        while it.valid().map_err(storage)? {
            let (_, commit_ts) = mvcc::split_versioned_key(it.key())?;
            let write = Write::decode(it.value())?;
            if write.kind != WriteKind::Rollback && history.newest_commit_ts.is_none() {
                history.newest_commit_ts = Some(commit_ts);
            }
            if !data_seen && matches!(write.kind, WriteKind::Put | WriteKind::Delete) {
                data_seen = true;
                history.exists = write.kind == WriteKind::Put;
            }
            if write.start_ts == start_ts {
                history.own = Some(write.kind);
            } else if commit_ts == start_ts && write.overlapped_rollback {
                history.own = Some(WriteKind::Rollback);
            }
            if commit_ts < start_ts && data_seen {
                break;
            }
            it.next();
        }
        Ok(history)
    }

    /// Finds the record that transaction `start_ts` left on `key`: a commit (with its
    /// commit_ts) or a rollback.
    pub fn txn_record(
        &self,
        key: &[u8],
        start_ts: Timestamp,
    ) -> Result<Option<(Timestamp, WriteKind)>, KvError> {
        let encoded = mvcc::encode_user_key(key);
        let mut it = self.engine.versions_iterator();
        // The newest version sorts first: its key carries !MAX = 0.
        it.seek(&mvcc::append_ts(encoded.clone(), Timestamp::MAX));
        while it.valid().map_err(storage)? {
            let (_, commit_ts) = mvcc::split_versioned_key(it.key())?;
            if commit_ts < start_ts {
                break;
            }
            let write = Write::decode(it.value())?;
            if write.start_ts == start_ts {
                return Ok(Some((commit_ts, write.kind)));
            }
            if commit_ts == start_ts && write.overlapped_rollback {
                return Ok(Some((commit_ts, WriteKind::Rollback)));
            }
            it.next();
        }
        Ok(None)
    }

    /// Returns up to `limit` visible entries with keys in `[start, end)`, ascending or
    /// descending, with the number of versions read to find them.
    pub fn scan(
        &self,
        start: &[u8],
        end: &[u8],
        ts: Timestamp,
        limit: usize,
        reverse: bool,
        keys_only: bool,
    ) -> Result<Scanned, KvError> {
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
        let mut versions = 0;
        while out.len() < limit && it.valid().map_err(storage)? {
            let (user, _) = mvcc::split_versioned_key(it.key())?;
            encoded.clear();
            encoded.extend_from_slice(user);

            if reverse {
                // Versions are met oldest first going backwards: look the key up forwards, then
                // step before its first version.
                it.seek(&mvcc::append_ts(encoded.clone(), ts));
                if let Some(value) = self.visible_value(&mut *it, &encoded, &mut versions)? {
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
                // A version newer than the snapshot, read and passed.
                versions += 1;
                it.seek(&mvcc::append_ts(encoded.clone(), ts));
            }
            if let Some(value) = self.visible_value(&mut *it, &encoded, &mut versions)? {
                out.push((
                    mvcc::decode_user_key(&encoded)?,
                    if keys_only { Vec::new() } else { value },
                ));
            }
            self.skip_versions(&mut *it, &encoded, &mut versions)?;
        }
        Ok(Scanned {
            pairs: out,
            versions,
        })
    }

    /// Moves the cursor past every version of `encoded`, from the version it stands on (read
    /// already), counting the further versions it steps on in `versions`.
    fn skip_versions(
        &self,
        it: &mut dyn EngineIterator,
        encoded: &[u8],
        versions: &mut u64,
    ) -> Result<(), KvError> {
        for step in 0..SCAN_NEXT_BEFORE_SEEK {
            if !it.valid().map_err(storage)? {
                return Ok(());
            }
            let (user, _) = mvcc::split_versioned_key(it.key())?;
            if user != encoded {
                return Ok(());
            }
            if step > 0 {
                *versions += 1;
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
