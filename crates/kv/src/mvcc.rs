//! MVCC records and their keys, laid out as Percolator in TiKV.
//!
//! ```text
//!  CF lock:    key                      -> Lock  { kind, primary, start_ts, for_update_ts, ttl, short value }
//!  CF write:   enc(key) ++ !commit_ts   -> Write { kind, start_ts, overlapped rollback, short value }
//!  CF default: enc(key) ++ !start_ts    -> value (only values longer than SHORT_VALUE_MAX_BYTES)
//! ```
//!
//! `enc` is the memcomparable group encoding of the user key, so no encoded key is a prefix of
//! another and all versions of one key are adjacent; `!ts` (bitwise not, big-endian) puts the
//! newest version first, so a read at `ts` is one seek to `enc(key) ++ !ts`.

use strata_codec::memcomparable;
use strata_types::Timestamp;

use strata_kvapi::KvError;

/// Values up to this size live inside the write record; longer ones in the default CF.
pub const SHORT_VALUE_MAX_BYTES: usize = 1024;

/// Encodes a user key for the write and default CFs, without a timestamp.
pub fn encode_user_key(key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + key.len() / 8 + 9 + 8);
    memcomparable::encode_bytes(&mut out, key);
    out
}

/// Appends `!ts` to an encoded user key.
pub fn append_ts(mut encoded_key: Vec<u8>, ts: Timestamp) -> Vec<u8> {
    encoded_key.extend_from_slice(&(!ts.0).to_be_bytes());
    encoded_key
}

/// Splits a versioned key into its encoded user key and timestamp.
pub fn split_versioned_key(key: &[u8]) -> Result<(&[u8], Timestamp), KvError> {
    if key.len() < 8 {
        return Err(corrupt("versioned key shorter than a timestamp"));
    }
    let (user, ts) = key.split_at(key.len() - 8);
    let ts = u64::from_be_bytes(ts.try_into().expect("8 bytes"));
    Ok((user, Timestamp(!ts)))
}

/// Decodes an encoded user key back to the raw key.
pub fn decode_user_key(encoded: &[u8]) -> Result<Vec<u8>, KvError> {
    let mut input = encoded;
    memcomparable::decode_bytes(&mut input).map_err(|e| corrupt(&e.to_string()))
}

pub fn corrupt(what: &str) -> KvError {
    KvError::Storage(format!("corrupt MVCC data: {what}"))
}

/// The kind of a commit record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    Put,
    Delete,
    /// A key that was only locked; readers skip it.
    Lock,
    /// A rollback marker at `start_ts`; readers skip it, prewrites of that transaction fail.
    Rollback,
}

impl WriteKind {
    fn tag(self) -> u8 {
        match self {
            WriteKind::Put => b'P',
            WriteKind::Delete => b'D',
            WriteKind::Lock => b'L',
            WriteKind::Rollback => b'R',
        }
    }

    fn from_tag(tag: u8) -> Result<WriteKind, KvError> {
        Ok(match tag {
            b'P' => WriteKind::Put,
            b'D' => WriteKind::Delete,
            b'L' => WriteKind::Lock,
            b'R' => WriteKind::Rollback,
            _ => return Err(corrupt("unknown write kind")),
        })
    }
}

/// A commit record in the write CF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write<'a> {
    pub kind: WriteKind,
    pub start_ts: Timestamp,
    /// Also the rollback record of the transaction whose start_ts is this record's commit_ts
    /// (TiKV's overlapped rollback): a one-phase or async commit may pick a commit_ts equal to
    /// another transaction's start_ts, and the rollback of that one on this key, which would
    /// sit at the same place, is kept as this mark so that its late prewrite still fails.
    pub overlapped_rollback: bool,
    pub short_value: Option<&'a [u8]>,
}

impl<'a> Write<'a> {
    /// A record without the overlapped-rollback mark.
    pub fn new(kind: WriteKind, start_ts: Timestamp, short_value: Option<&'a [u8]>) -> Write<'a> {
        Write {
            kind,
            start_ts,
            overlapped_rollback: false,
            short_value,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(11 + self.short_value.map_or(0, |v| v.len()));
        out.push(self.kind.tag());
        out.extend_from_slice(&self.start_ts.0.to_be_bytes());
        if self.overlapped_rollback {
            out.push(b'o');
        }
        if let Some(value) = self.short_value {
            out.push(b'v');
            out.extend_from_slice(value);
        }
        out
    }

    pub fn decode(bytes: &'a [u8]) -> Result<Write<'a>, KvError> {
        if bytes.len() < 9 {
            return Err(corrupt("short write record"));
        }
        let kind = WriteKind::from_tag(bytes[0])?;
        let start_ts = Timestamp(u64::from_be_bytes(bytes[1..9].try_into().expect("8 bytes")));
        let overlapped_rollback = bytes.get(9) == Some(&b'o');
        let at = if overlapped_rollback { 10 } else { 9 };
        let short_value = match bytes.get(at) {
            None => None,
            Some(b'v') => Some(&bytes[at + 1..]),
            Some(_) => return Err(corrupt("write record trailer")),
        };
        Ok(Write {
            kind,
            start_ts,
            overlapped_rollback,
            short_value,
        })
    }
}

/// The kind of a persisted lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    Put,
    Delete,
    Lock,
}

/// A prewrite lock in the lock CF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    pub kind: LockKind,
    pub primary: Vec<u8>,
    pub start_ts: Timestamp,
    pub for_update_ts: Timestamp,
    pub ttl_ms: u64,
    pub short_value: Option<Vec<u8>>,
    /// Set on the locks of an async-commit transaction.
    pub async_commit: Option<AsyncCommit>,
}

/// What an async-commit lock carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncCommit {
    /// The transaction commits at or above this (the largest over its locks): reads below it
    /// may pass the lock.
    pub min_commit_ts: Timestamp,
    /// On the primary's lock: every other key of the transaction.
    pub secondaries: Vec<Vec<u8>>,
}

impl Lock {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.primary.len());
        out.push(match self.kind {
            LockKind::Put => b'P',
            LockKind::Delete => b'D',
            LockKind::Lock => b'L',
        });
        out.extend_from_slice(&self.start_ts.0.to_be_bytes());
        out.extend_from_slice(&self.for_update_ts.0.to_be_bytes());
        out.extend_from_slice(&self.ttl_ms.to_be_bytes());
        out.extend_from_slice(&(self.primary.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.primary);
        if let Some(async_commit) = &self.async_commit {
            out.push(b'a');
            out.extend_from_slice(&async_commit.min_commit_ts.0.to_be_bytes());
            out.extend_from_slice(&(async_commit.secondaries.len() as u32).to_be_bytes());
            for key in &async_commit.secondaries {
                out.extend_from_slice(&(key.len() as u32).to_be_bytes());
                out.extend_from_slice(key);
            }
        }
        if let Some(value) = &self.short_value {
            out.push(b'v');
            out.extend_from_slice(value);
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Lock, KvError> {
        let fixed = 1 + 8 + 8 + 8 + 4;
        if bytes.len() < fixed {
            return Err(corrupt("short lock record"));
        }
        let kind = match bytes[0] {
            b'P' => LockKind::Put,
            b'D' => LockKind::Delete,
            b'L' => LockKind::Lock,
            _ => return Err(corrupt("unknown lock kind")),
        };
        let u64_at = |at: usize| u64::from_be_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let primary_len = u32::from_be_bytes(bytes[25..29].try_into().expect("4 bytes")) as usize;
        let rest = &bytes[fixed..];
        if rest.len() < primary_len {
            return Err(corrupt("lock primary"));
        }
        let (primary, mut trailer) = rest.split_at(primary_len);
        let async_commit = match trailer.first() {
            Some(b'a') => {
                let (async_commit, after) = decode_async_commit(&trailer[1..])
                    .ok_or_else(|| corrupt("async-commit lock fields"))?;
                trailer = after;
                Some(async_commit)
            }
            _ => None,
        };
        let short_value = match trailer.first() {
            None => None,
            Some(b'v') => Some(trailer[1..].to_vec()),
            Some(_) => return Err(corrupt("lock trailer")),
        };
        Ok(Lock {
            kind,
            primary: primary.to_vec(),
            start_ts: Timestamp(u64_at(1)),
            for_update_ts: Timestamp(u64_at(9)),
            ttl_ms: u64_at(17),
            short_value,
            async_commit,
        })
    }
}

/// Reads the async-commit fields of a lock; returns them and what follows.
fn decode_async_commit(mut input: &[u8]) -> Option<(AsyncCommit, &[u8])> {
    fn take<'a>(input: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (input.get(..n)?, input.get(n..)?);
        *input = rest;
        Some(head)
    }
    let min_commit_ts = u64::from_be_bytes(take(&mut input, 8)?.try_into().ok()?);
    let count = u32::from_be_bytes(take(&mut input, 4)?.try_into().ok()?);
    let mut secondaries = Vec::new();
    for _ in 0..count {
        let len = u32::from_be_bytes(take(&mut input, 4)?.try_into().ok()?) as usize;
        secondaries.push(take(&mut input, len)?.to_vec());
    }
    Some((
        AsyncCommit {
            min_commit_ts: Timestamp(min_commit_ts),
            secondaries,
        },
        input,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_of_a_key_sort_newest_first_and_apart_from_longer_keys() {
        let v10 = append_ts(encode_user_key(b"k"), Timestamp(10));
        let v20 = append_ts(encode_user_key(b"k"), Timestamp(20));
        let longer = append_ts(encode_user_key(b"k\x00"), Timestamp(5));
        assert!(v20 < v10, "newer versions first");
        assert!(
            v10 < longer,
            "all versions of k precede any version of a longer key"
        );
        let (user, ts) = split_versioned_key(&v10).unwrap();
        assert_eq!(ts, Timestamp(10));
        assert_eq!(decode_user_key(user).unwrap(), b"k");
    }

    #[test]
    fn records_round_trip() {
        let mut w = Write::new(WriteKind::Put, Timestamp(7), Some(b"abc"));
        assert_eq!(Write::decode(&w.encode()).unwrap(), w);
        w.overlapped_rollback = true;
        assert_eq!(Write::decode(&w.encode()).unwrap(), w);
        w.short_value = Some(b"v");
        assert_eq!(Write::decode(&w.encode()).unwrap(), w);
        w.short_value = None;
        assert_eq!(Write::decode(&w.encode()).unwrap(), w);
        let w = Write::new(WriteKind::Rollback, Timestamp(9), None);
        assert_eq!(Write::decode(&w.encode()).unwrap(), w);
        let l = Lock {
            kind: LockKind::Put,
            primary: b"p".to_vec(),
            start_ts: Timestamp(3),
            for_update_ts: Timestamp(4),
            ttl_ms: 3000,
            short_value: Some(b"v".to_vec()),
            async_commit: None,
        };
        assert_eq!(Lock::decode(&l.encode()).unwrap(), l);
        let mut a = l.clone();
        a.async_commit = Some(AsyncCommit {
            min_commit_ts: Timestamp(8),
            secondaries: vec![b"s1".to_vec(), Vec::new(), b"s3".to_vec()],
        });
        assert_eq!(Lock::decode(&a.encode()).unwrap(), a);
        a.short_value = None;
        assert_eq!(Lock::decode(&a.encode()).unwrap(), a);
        let bytes = a.encode();
        assert!(Lock::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(Lock::decode(b"P").is_err());
        assert!(Write::decode(b"Q12345678").is_err());
    }
}
