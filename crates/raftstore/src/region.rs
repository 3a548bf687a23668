//! What a region is to the store, and the commands its Raft log carries.
//!
//! A region's metadata is kept next to its data, in the engine's [`Cf::Raft`] under
//! `region/<id>`, and changes only by a committed command (a split), in the same engine batch
//! as the data that command applies: after a crash the metadata, the data and the applied
//! index agree.
//!
//! Commands are tagged bytes. Writes and splits carry the region version they were proposed
//! against; a peer applies them only if that is still the region's version, so a write
//! proposed before a split and committed after it is refused by every peer alike.

use strata_engine::{Cf, Engine, EngineError, WriteBatch};

/// One replica of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerMeta {
    pub id: u64,
    pub store_id: u64,
}

/// A region as the store knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionMeta {
    pub id: u64,
    /// Inclusive.
    pub start_key: Vec<u8>,
    /// Exclusive; empty means the end of the key space.
    pub end_key: Vec<u8>,
    pub conf_ver: u64,
    pub version: u64,
    pub peers: Vec<PeerMeta>,
}

impl RegionMeta {
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start_key.as_slice() && (self.end_key.is_empty() || key < &self.end_key[..])
    }

    /// Whether the two regions' ranges share a key.
    pub fn overlaps(&self, other: &RegionMeta) -> bool {
        (self.end_key.is_empty() || other.start_key < self.end_key)
            && (other.end_key.is_empty() || self.start_key < other.end_key)
    }

    pub(crate) fn store_of(&self, peer: u64) -> Option<u64> {
        self.peers.iter().find(|p| p.id == peer).map(|p| p.store_id)
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.start_key.len() + self.end_key.len());
        for n in [self.id, self.conf_ver, self.version] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        put_bytes(&mut out, &self.start_key);
        put_bytes(&mut out, &self.end_key);
        out.extend_from_slice(&(self.peers.len() as u32).to_be_bytes());
        for peer in &self.peers {
            out.extend_from_slice(&peer.id.to_be_bytes());
            out.extend_from_slice(&peer.store_id.to_be_bytes());
        }
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Option<RegionMeta> {
        let mut input = Reader(bytes);
        let (id, conf_ver, version) = (input.u64()?, input.u64()?, input.u64()?);
        let start_key = input.bytes()?.to_vec();
        let end_key = input.bytes()?.to_vec();
        let count = input.u32()?;
        let mut peers = Vec::with_capacity(count.min(16) as usize);
        for _ in 0..count {
            peers.push(PeerMeta {
                id: input.u64()?,
                store_id: input.u64()?,
            });
        }
        input.0.is_empty().then_some(RegionMeta {
            id,
            start_key,
            end_key,
            conf_ver,
            version,
            peers,
        })
    }
}

const REGION_PREFIX: &[u8] = b"region/";

/// The key of a region's metadata in [`Cf::Raft`].
pub(crate) fn region_key(region: u64) -> Vec<u8> {
    let mut key = REGION_PREFIX.to_vec();
    key.extend_from_slice(&region.to_be_bytes());
    key
}

/// The metadata of every region this node's engine holds.
pub(crate) fn load_regions(engine: &dyn Engine) -> Result<Vec<RegionMeta>, EngineError> {
    let mut upper = REGION_PREFIX.to_vec();
    *upper.last_mut().expect("non-empty prefix") += 1;
    let mut iter = engine.iterator(Cf::Raft, REGION_PREFIX, Some(&upper));
    iter.seek(REGION_PREFIX);
    let mut regions = Vec::new();
    while iter.valid()? {
        match RegionMeta::decode(iter.value()) {
            Some(meta) => regions.push(meta),
            None => return Err(EngineError::Storage("corrupt region metadata".into())),
        }
        iter.next();
    }
    Ok(regions)
}

const CMD_NOOP: u8 = 0;
const CMD_WRITE: u8 = 1;
const CMD_COMPACT: u8 = 2;
const CMD_SPLIT: u8 = 3;

/// A command of a region's Raft log.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// Renews the leader's lease.
    Noop,
    /// A write of the engine, proposed against region version `version`.
    Write { version: u64, batch: WriteBatch },
    /// Drops the log entries before `index` (held by every peer).
    Compact { index: u64 },
    /// Splits the region at `key`: the keys from `key` on go to region `new_id`, whose peers
    /// are `new_peers` (one per peer of the region, on the same stores, in the same order).
    Split {
        version: u64,
        key: Vec<u8>,
        new_id: u64,
        new_peers: Vec<u64>,
    },
}

impl Command {
    pub(crate) fn encode(&self) -> Vec<u8> {
        match self {
            Command::Noop => vec![CMD_NOOP],
            Command::Write { version, batch } => Command::encode_write(*version, batch),
            Command::Compact { index } => {
                let mut out = vec![CMD_COMPACT];
                out.extend_from_slice(&index.to_be_bytes());
                out
            }
            Command::Split {
                version,
                key,
                new_id,
                new_peers,
            } => {
                let mut out = vec![CMD_SPLIT];
                out.extend_from_slice(&version.to_be_bytes());
                put_bytes(&mut out, key);
                out.extend_from_slice(&new_id.to_be_bytes());
                out.extend_from_slice(&(new_peers.len() as u32).to_be_bytes());
                for peer in new_peers {
                    out.extend_from_slice(&peer.to_be_bytes());
                }
                out
            }
        }
    }

    /// The bytes of `Command::Write { version, batch }`, without taking the batch.
    pub(crate) fn encode_write(version: u64, batch: &WriteBatch) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + batch.len() * 32);
        out.push(CMD_WRITE);
        out.extend_from_slice(&version.to_be_bytes());
        out.extend_from_slice(&batch.encode());
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Command, String> {
        let corrupt = || format!("corrupt command of {} bytes", bytes.len());
        let (&tag, rest) = bytes.split_first().ok_or_else(corrupt)?;
        let mut input = Reader(rest);
        let command = match tag {
            CMD_NOOP => Command::Noop,
            CMD_WRITE => {
                let version = input.u64().ok_or_else(corrupt)?;
                let batch = WriteBatch::decode(input.0).map_err(|e| e.to_string())?;
                input.0 = &[];
                Command::Write { version, batch }
            }
            CMD_COMPACT => Command::Compact {
                index: input.u64().ok_or_else(corrupt)?,
            },
            CMD_SPLIT => {
                let version = input.u64().ok_or_else(corrupt)?;
                let key = input.bytes().ok_or_else(corrupt)?.to_vec();
                let new_id = input.u64().ok_or_else(corrupt)?;
                let count = input.u32().ok_or_else(corrupt)?;
                let mut new_peers = Vec::new();
                for _ in 0..count {
                    new_peers.push(input.u64().ok_or_else(corrupt)?);
                }
                Command::Split {
                    version,
                    key,
                    new_id,
                    new_peers,
                }
            }
            tag => return Err(format!("unknown command {tag}")),
        };
        if input.0.is_empty() {
            Ok(command)
        } else {
            Err(corrupt())
        }
    }

    /// The region version a write or split was proposed against, read without decoding the
    /// rest.
    pub(crate) fn proposed_version(bytes: &[u8]) -> Option<u64> {
        match bytes.split_first() {
            Some((&(CMD_WRITE | CMD_SPLIT), rest)) => Reader(rest).u64(),
            _ => None,
        }
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> RegionMeta {
        RegionMeta {
            id: 7,
            start_key: b"b".to_vec(),
            end_key: Vec::new(),
            conf_ver: 1,
            version: 3,
            peers: vec![
                PeerMeta { id: 8, store_id: 1 },
                PeerMeta { id: 9, store_id: 2 },
            ],
        }
    }

    #[test]
    fn region_metadata_round_trips_and_rejects_garbage() {
        let meta = meta();
        assert_eq!(RegionMeta::decode(&meta.encode()), Some(meta.clone()));
        let bytes = meta.encode();
        assert_eq!(RegionMeta::decode(&bytes[..bytes.len() - 1]), None);
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(RegionMeta::decode(&longer), None);
    }

    #[test]
    fn ranges_contain_and_overlap() {
        let right = meta();
        let mut left = meta();
        left.start_key = Vec::new();
        left.end_key = b"b".to_vec();
        assert!(!left.overlaps(&right) && !right.overlaps(&left));
        assert!(left.contains(b"a") && !left.contains(b"b") && right.contains(b"zz"));
        left.end_key = b"c".to_vec();
        assert!(left.overlaps(&right) && right.overlaps(&left));
    }

    #[test]
    fn commands_round_trip_and_carry_their_version() {
        let mut batch = WriteBatch::new();
        batch.put(Cf::Write, b"k".to_vec(), b"v".to_vec());
        let commands = [
            Command::Noop,
            Command::Write { version: 5, batch },
            Command::Compact { index: 99 },
            Command::Split {
                version: 6,
                key: b"m".to_vec(),
                new_id: 10,
                new_peers: vec![11, 12, 13],
            },
        ];
        for command in commands {
            let bytes = command.encode();
            let version = Command::proposed_version(&bytes);
            match &command {
                Command::Write { version: v, .. } | Command::Split { version: v, .. } => {
                    assert_eq!(version, Some(*v))
                }
                _ => assert_eq!(version, None),
            }
            assert_eq!(Command::decode(&bytes), Ok(command));
        }
        assert!(Command::decode(&[9]).is_err());
        assert!(Command::decode(&[CMD_COMPACT, 1]).is_err());
    }
}
