//! The durable Raft log of every region of a node, in raft-engine (TiKV's log store): one
//! append-only file set for all regions, so a poll loop writes the entries and hard states of
//! many regions with one sync.
//!
//! Per region it keeps the entries, and three small records: the hard state (term, vote,
//! commit), the voters (`ConfState`), and where the log was last truncated (index and term of
//! the last dropped entry), from which [`RaftLog::load`] rebuilds the in-memory log.

use std::path::Path;

use protobuf::Message as _;
use raft::eraftpb::{ConfState, Entry, HardState, Snapshot};
use raft::storage::MemStorage;
use raft_engine::{LogBatch, MessageExt};

use crate::peer::LogWrite;

const KEY_HARD_STATE: &[u8] = b"hard_state";
const KEY_CONF_STATE: &[u8] = b"conf_state";
const KEY_TRUNCATED: &[u8] = b"truncated";

/// The index and term a new region's log starts after: every peer of a new region starts with
/// the same state (the region's data up to this index is what it was created with), and a peer
/// added later, whose log is empty, is always sent a snapshot.
pub const INIT_INDEX: u64 = 5;
pub const INIT_TERM: u64 = 5;

/// The size at which the log store starts a new file.
const LOG_FILE_BYTES: u64 = 32 << 20;
/// The size of the log past which [`RaftLog::purge`] drops files. raft-engine purges nothing
/// below it, whatever the regions have compacted; its default (10 GB, TiKV's) let each KV node
/// keep every entry of a burst of writes, hundreds of megabytes, long after every peer had
/// applied them.
const LOG_PURGE_THRESHOLD_BYTES: u64 = 128 << 20;

/// A failure of the log store: the node cannot go on safely.
#[derive(Debug, thiserror::Error)]
#[error("raft log: {0}")]
pub struct LogError(String);

fn log_error(e: impl std::fmt::Display) -> LogError {
    LogError(e.to_string())
}

impl LogError {
    pub(crate) fn from_display(e: impl std::fmt::Display) -> LogError {
        log_error(e)
    }

    pub(crate) fn from_io(e: std::io::Error) -> LogError {
        log_error(e)
    }
}

struct EntryExt;

impl MessageExt for EntryExt {
    type Entry = Entry;

    fn index(entry: &Entry) -> u64 {
        entry.index
    }
}

/// The Raft logs of all regions of one node.
pub struct RaftLog {
    engine: raft_engine::Engine,
}

/// Log writes of many regions, made durable together by [`RaftLog::write`].
#[derive(Default)]
pub struct LogWriteBatch {
    batch: LogBatch,
    empty: bool,
    /// Whether what was added must be synced: entries, a snapshot, or a hard state with a new
    /// term or vote (not one that only moved its commit index).
    must_sync: bool,
}

impl LogWriteBatch {
    pub fn new() -> LogWriteBatch {
        LogWriteBatch {
            batch: LogBatch::default(),
            empty: true,
            must_sync: false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.empty
    }

    /// Whether anything added must be synced to be durable (see [`LogWrite`]); a batch that
    /// only moves commit indexes may be written without a sync.
    pub fn must_sync(&self) -> bool {
        self.must_sync
    }

    /// Adds what one ready of `region` asked to make durable.
    pub fn add(&mut self, region: u64, write: &LogWrite) -> Result<(), LogError> {
        if let Some((index, term, conf_state)) = &write.snapshot {
            // The snapshot replaces the whole log.
            self.batch.add_command(region, raft_engine::Command::Clean);
            self.batch
                .put_message(region, KEY_CONF_STATE.to_vec(), conf_state)
                .map_err(log_error)?;
            self.put_truncated(region, *index, *term)?;
            self.empty = false;
            self.must_sync = true;
        }
        if !write.entries.is_empty() {
            self.batch
                .add_entries::<EntryExt>(region, &write.entries)
                .map_err(log_error)?;
            self.empty = false;
            self.must_sync = true;
        }
        if let Some(hard_state) = &write.hard_state {
            self.batch
                .put_message(region, KEY_HARD_STATE.to_vec(), hard_state)
                .map_err(log_error)?;
            self.empty = false;
            self.must_sync |= write.hard_state_must_sync;
        }
        Ok(())
    }

    /// Records the voters of a region the node starts holding.
    pub fn set_voters(&mut self, region: u64, voters: &[u64]) -> Result<(), LogError> {
        let conf_state = ConfState::from((voters.to_vec(), vec![]));
        self.batch
            .put_message(region, KEY_CONF_STATE.to_vec(), &conf_state)
            .map_err(log_error)?;
        self.empty = false;
        Ok(())
    }

    /// Starts the log of a new region whose voters are `voters`: empty, after
    /// ([`INIT_INDEX`], [`INIT_TERM`]), committed up to there.
    pub fn bootstrap(&mut self, region: u64, voters: &[u64]) -> Result<(), LogError> {
        self.set_voters(region, voters)?;
        self.put_truncated(region, INIT_INDEX, INIT_TERM)?;
        let hard_state = HardState {
            term: INIT_TERM,
            commit: INIT_INDEX,
            ..Default::default()
        };
        self.batch
            .put_message(region, KEY_HARD_STATE.to_vec(), &hard_state)
            .map_err(log_error)?;
        Ok(())
    }

    /// Removes the log of `region` (its peer here is gone).
    pub fn clean(&mut self, region: u64) {
        self.batch.add_command(region, raft_engine::Command::Clean);
        self.empty = false;
    }

    fn put_truncated(&mut self, region: u64, index: u64, term: u64) -> Result<(), LogError> {
        let mut record = Vec::with_capacity(16);
        record.extend_from_slice(&index.to_be_bytes());
        record.extend_from_slice(&term.to_be_bytes());
        self.batch
            .put(region, KEY_TRUNCATED.to_vec(), record)
            .map_err(log_error)?;
        self.empty = false;
        Ok(())
    }

    /// Drops the entries of `region` before `index`; `prev_term` is the term of the entry at
    /// `index - 1`, kept so the log can be rebuilt.
    pub fn truncate(&mut self, region: u64, index: u64, prev_term: u64) -> Result<(), LogError> {
        self.put_truncated(region, index - 1, prev_term)?;
        self.batch
            .add_command(region, raft_engine::Command::Compact { index });
        self.empty = false;
        Ok(())
    }
}

impl RaftLog {
    /// Opens (or creates) the log store in `dir`.
    pub fn open(dir: &Path) -> Result<RaftLog, LogError> {
        let config = raft_engine::Config {
            dir: dir.to_string_lossy().into_owned(),
            target_file_size: raft_engine::ReadableSize(LOG_FILE_BYTES),
            purge_threshold: raft_engine::ReadableSize(LOG_PURGE_THRESHOLD_BYTES),
            ..raft_engine::Config::default()
        };
        Ok(RaftLog {
            engine: raft_engine::Engine::open(config).map_err(log_error)?,
        })
    }

    /// The regions that have a log here.
    pub fn regions(&self) -> Vec<u64> {
        let mut regions: Vec<u64> = self
            .engine
            .raft_groups()
            .into_iter()
            .filter(|r| self.engine.get(*r, KEY_CONF_STATE).is_some())
            .collect();
        regions.sort_unstable();
        regions
    }

    /// Writes `batch`; with `sync` it is on disk when this returns.
    pub fn write(&self, batch: &mut LogWriteBatch, sync: bool) -> Result<(), LogError> {
        if batch.empty {
            return Ok(());
        }
        self.engine
            .write(&mut batch.batch, sync)
            .map_err(log_error)?;
        batch.empty = true;
        batch.must_sync = false;
        Ok(())
    }

    /// Deletes log files that hold only compacted entries, once the log is past
    /// `LOG_PURGE_THRESHOLD_BYTES` (raft-engine rewrites what little is still live in the
    /// oldest files). Called periodically.
    pub fn purge(&self) -> Result<(), LogError> {
        self.engine.purge_expired_files().map_err(log_error)?;
        Ok(())
    }

    /// Rebuilds the in-memory log of `region` (`None`: the region has no log here).
    pub fn load(&self, region: u64) -> Result<Option<MemStorage>, LogError> {
        let Some(conf_state) = self
            .engine
            .get_message::<ConfState>(region, KEY_CONF_STATE)
            .map_err(log_error)?
        else {
            return Ok(None);
        };
        let hard_state = self
            .engine
            .get_message::<HardState>(region, KEY_HARD_STATE)
            .map_err(log_error)?
            .unwrap_or_default();
        let storage = MemStorage::new();
        {
            let mut core = storage.wl();
            match self.engine.get(region, KEY_TRUNCATED) {
                Some(record) if record.len() == 16 => {
                    let mut snapshot = Snapshot::default();
                    let meta = snapshot.mut_metadata();
                    meta.index = u64::from_be_bytes(record[..8].try_into().expect("8 bytes"));
                    meta.term = u64::from_be_bytes(record[8..].try_into().expect("8 bytes"));
                    meta.set_conf_state(conf_state.clone());
                    core.apply_snapshot(snapshot).map_err(log_error)?;
                }
                Some(_) => return Err(LogError("corrupt truncation record".into())),
                None => core.set_conf_state(conf_state),
            }
            if let (Some(first), Some(last)) = (
                self.engine.first_index(region),
                self.engine.last_index(region),
            ) {
                let mut entries = Vec::with_capacity((last + 1 - first) as usize);
                self.engine
                    .fetch_entries_to::<EntryExt>(region, first, last + 1, None, &mut entries)
                    .map_err(log_error)?;
                core.append(&entries).map_err(log_error)?;
            }
            core.set_hardstate(hard_state);
        }
        Ok(Some(storage))
    }
}

/// A raft-rs message as bytes (how it travels between nodes).
pub fn encode_message(message: &raft::eraftpb::Message) -> Vec<u8> {
    message
        .write_to_bytes()
        .expect("a Raft message always encodes")
}

/// Reads a message written by [`encode_message`].
pub fn decode_message(bytes: &[u8]) -> Result<raft::eraftpb::Message, LogError> {
    raft::eraftpb::Message::parse_from_bytes(bytes).map_err(log_error)
}

#[cfg(test)]
mod tests {
    use raft::Storage as _;

    use super::*;

    fn entry(index: u64, term: u64) -> Entry {
        Entry {
            index,
            term,
            data: format!("command {index}").into_bytes().into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_region_log_is_rebuilt_after_a_reopen_and_a_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let hard_state = HardState {
            term: 2,
            vote: 7,
            commit: 9,
            ..Default::default()
        };
        {
            let log = RaftLog::open(dir.path()).unwrap();
            assert!(
                log.load(4).unwrap().is_none(),
                "no log before the region exists"
            );
            let mut batch = LogWriteBatch::new();
            batch.set_voters(4, &[5, 6, 7]).unwrap();
            let write = LogWrite {
                snapshot: None,
                entries: (1..=10)
                    .map(|i| entry(i, if i < 6 { 1 } else { 2 }))
                    .collect(),
                hard_state: Some(hard_state.clone()),
                hard_state_must_sync: true,
            };
            batch.add(4, &write).unwrap();
            log.write(&mut batch, true).unwrap();
            let mut truncate = LogWriteBatch::new();
            truncate.truncate(4, 6, 1).unwrap();
            log.write(&mut truncate, true).unwrap();
        }
        let log = RaftLog::open(dir.path()).unwrap();
        assert_eq!(log.regions(), vec![4]);
        let storage = log.load(4).unwrap().expect("the region's log");
        assert_eq!(storage.first_index().unwrap(), 6);
        assert_eq!(storage.last_index().unwrap(), 10);
        assert_eq!(
            storage.term(5).unwrap(),
            1,
            "the term of the last dropped entry"
        );
        assert_eq!(storage.term(6).unwrap(), 2);
        let state = storage.initial_state().unwrap();
        assert_eq!(state.hard_state, hard_state);
        assert_eq!(state.conf_state.voters, vec![5, 6, 7]);
        let entries = storage
            .entries(6, 11, None, raft::GetEntriesContext::empty(false))
            .unwrap();
        assert_eq!(entries, (6..=10).map(|i| entry(i, 2)).collect::<Vec<_>>());
    }

    #[test]
    fn a_batch_that_only_moves_commit_indexes_needs_no_sync() {
        let commit_only = LogWrite {
            snapshot: None,
            entries: Vec::new(),
            hard_state: Some(HardState {
                term: 2,
                vote: 1,
                commit: 9,
                ..Default::default()
            }),
            hard_state_must_sync: false,
        };
        let mut batch = LogWriteBatch::new();
        batch.add(1, &commit_only).unwrap();
        batch.add(2, &commit_only).unwrap();
        assert!(!batch.is_empty());
        assert!(
            !batch.must_sync(),
            "commit indexes alone are written unsynced"
        );

        let new_vote = LogWrite {
            hard_state_must_sync: true,
            ..commit_only
        };
        let mut batch = LogWriteBatch::new();
        batch.add(1, &new_vote).unwrap();
        assert!(batch.must_sync(), "a new term or vote is synced");

        let entries = LogWrite {
            snapshot: None,
            entries: vec![entry(10, 2)],
            hard_state: None,
            hard_state_must_sync: false,
        };
        let dir = tempfile::tempdir().unwrap();
        let log = RaftLog::open(dir.path()).unwrap();
        let mut batch = LogWriteBatch::new();
        batch.add(1, &commit_only_of(3)).unwrap();
        batch.add(2, &entries).unwrap();
        assert!(
            batch.must_sync(),
            "entries of any region make the batch synced"
        );
        log.write(&mut batch, true).unwrap();
        assert!(
            batch.is_empty() && !batch.must_sync(),
            "a written batch starts over"
        );
    }

    fn commit_only_of(commit: u64) -> LogWrite {
        LogWrite {
            snapshot: None,
            entries: Vec::new(),
            hard_state: Some(HardState {
                commit,
                ..Default::default()
            }),
            hard_state_must_sync: false,
        }
    }

    #[test]
    fn messages_round_trip_through_bytes() {
        let message = raft::eraftpb::Message {
            from: 5,
            to: 6,
            term: 3,
            entries: vec![entry(1, 3)].into(),
            ..Default::default()
        };
        assert_eq!(decode_message(&encode_message(&message)).unwrap(), message);
        assert!(decode_message(&[0xFF, 0xFF]).is_err());
    }

    #[test]
    fn a_new_log_starts_after_the_initial_index_and_a_snapshot_replaces_a_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = RaftLog::open(dir.path()).unwrap();
        let mut batch = LogWriteBatch::new();
        batch.bootstrap(9, &[1, 2, 3]).unwrap();
        log.write(&mut batch, true).unwrap();
        let storage = log.load(9).unwrap().expect("a bootstrapped log");
        assert_eq!(storage.first_index().unwrap(), INIT_INDEX + 1);
        assert_eq!(storage.last_index().unwrap(), INIT_INDEX);
        assert_eq!(storage.term(INIT_INDEX).unwrap(), INIT_TERM);
        let state = storage.initial_state().unwrap();
        assert_eq!(state.hard_state.commit, INIT_INDEX);
        assert_eq!(state.conf_state.voters, vec![1, 2, 3]);

        // Entries 6..=20, then a snapshot at 30 (term 4) with other voters: only it remains.
        let write = LogWrite {
            snapshot: None,
            entries: (6..=20).map(|i| entry(i, 3)).collect(),
            hard_state: None,
            hard_state_must_sync: false,
        };
        batch.add(9, &write).unwrap();
        log.write(&mut batch, true).unwrap();
        let snapshot = LogWrite {
            snapshot: Some((30, 4, ConfState::from((vec![1, 2, 4], vec![])))),
            entries: Vec::new(),
            hard_state: None,
            hard_state_must_sync: false,
        };
        batch.add(9, &snapshot).unwrap();
        log.write(&mut batch, true).unwrap();
        drop(log);
        let log = RaftLog::open(dir.path()).unwrap();
        let storage = log.load(9).unwrap().expect("the log after a snapshot");
        assert_eq!(storage.first_index().unwrap(), 31);
        assert_eq!(storage.last_index().unwrap(), 30);
        assert_eq!(storage.term(30).unwrap(), 4);
        assert_eq!(
            storage.initial_state().unwrap().conf_state.voters,
            vec![1, 2, 4]
        );
    }
}
