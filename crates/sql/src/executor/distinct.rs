//! DISTINCT: the first row of each set of equal projected values.
//!
//! Rows pass on as they come, the keys of those passed kept to drop their repeats. When
//! keeping one more key would pass `tidb_mem_quota_query` (8175) and the keys hold at least
//! 1 MiB, DISTINCT spills: a row whose key it holds is still dropped, and any other row is
//! written to one of the partition files by a hash of its key ([`super::spill`]); once the
//! input ends, the keys held are given back and each file is made distinct alone (every
//! repeat of a key is in the same file, and none of its keys went out before). The rows then
//! leave in another order than first met, so a DISTINCT whose order the plan relies on (an
//! ORDER BY its access path satisfies, with no sort after it) does not spill.

use std::collections::{HashSet, VecDeque};

use crate::error::Result;
use crate::exec::group_key;
use crate::expr::EvalEnv;

use super::spill::{self, partition, SpillReader, SpillWriter, SPILL_MIN_BYTES};
use super::{Batch, Exec, Held, Node, Operator};

/// Rows a partition hands its parent at once.
const PARTITION_BATCH_ROWS: usize = 1024;

pub struct Distinct<'p> {
    input: Box<dyn Operator + 'p>,
    /// The projected columns compared; ORDER BY values may follow them.
    width: usize,
    may_spill: bool,
    seen: HashSet<Vec<u8>>,
    /// The bytes of the keys in `seen`, as charged.
    charged: u64,
    /// Partition files being written (empty until it spills).
    partitions: Vec<SpillWriter>,
    /// Once the input has ended: the partitions left, and the one being read with its keys.
    spilled: Option<(VecDeque<SpillReader>, Option<SpillReader>)>,
    held: Held,
}

impl<'p> Distinct<'p> {
    /// `may_spill`: whether its rows may leave in another order than they came.
    pub fn new(input: Box<dyn Operator + 'p>, width: usize, may_spill: bool) -> Distinct<'p> {
        Distinct {
            input,
            width,
            may_spill,
            seen: HashSet::new(),
            charged: 0,
            partitions: Vec::new(),
            spilled: None,
            held: Held::default(),
        }
    }

    /// Keeps `key` as passed on; false when it was already (the row is a repeat).
    fn keep(&mut self, key: Vec<u8>, exec: &Exec) -> Result<bool> {
        if self.seen.contains(&key) {
            return Ok(false);
        }
        exec.ctx.consume_memory(key.len())?;
        self.kept(key);
        Ok(true)
    }

    /// Notes `key`, whose bytes were charged, as passed on.
    fn kept(&mut self, key: Vec<u8>) {
        self.charged += key.len() as u64;
        self.held.memory = self.held.memory.max(self.charged);
        self.seen.insert(key);
    }

    /// The rows of a batch of the input that pass on now.
    fn filter(&mut self, batch: Batch, exec: &Exec) -> Result<Batch> {
        let mut out = Vec::with_capacity(batch.len());
        for row in batch {
            let key = group_key(&row[..self.width]);
            if self.seen.contains(&key) {
                continue;
            }
            if !self.partitions.is_empty() {
                self.partitions[partition(&key)].write(&row)?;
                continue;
            }
            match exec.ctx.consume_memory(key.len()) {
                Ok(()) => {
                    self.kept(key);
                    out.push(row);
                }
                Err(e) if self.may_spill && e.code() == 8175 && self.charged >= SPILL_MIN_BYTES => {
                    // The failed key's charge is given back; its row goes to disk.
                    exec.ctx.session.release_memory(key.len());
                    self.partitions = spill::partitions()?;
                    self.partitions[partition(&key)].write(&row)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The next rows of the spilled partitions, each made distinct alone.
    fn next_spilled(&mut self, exec: &Exec) -> Result<Option<Batch>> {
        loop {
            let Some((waiting, current)) = self.spilled.as_mut() else {
                return Ok(None);
            };
            let Some(reader) = current.as_mut() else {
                let Some(next) = waiting.pop_front() else {
                    return Ok(None);
                };
                // A new partition: the keys of the one before are given back.
                exec.ctx.session.release_memory(self.charged as usize);
                self.charged = 0;
                self.seen.clear();
                *current = Some(next);
                continue;
            };
            let mut out = Vec::new();
            while out.len() < PARTITION_BATCH_ROWS {
                let Some(row) = reader.next_row()? else {
                    break;
                };
                out.push(row);
            }
            if out.is_empty() {
                *current = None;
                continue;
            }
            let mut kept = Vec::with_capacity(out.len());
            for row in out {
                if self.keep(group_key(&row[..self.width]), exec)? {
                    kept.push(row);
                }
            }
            if !kept.is_empty() {
                return Ok(Some(kept));
            }
        }
    }
}

impl Operator for Distinct<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        if self.spilled.is_none() {
            while let Some(batch) = self.input.next(exec)? {
                let batch = self.filter(batch, exec)?;
                if !batch.is_empty() {
                    return Ok(Some(batch));
                }
            }
            let mut readers = VecDeque::with_capacity(self.partitions.len());
            for writer in std::mem::take(&mut self.partitions) {
                self.held.disk += writer.bytes();
                readers.push_back(writer.finish()?);
            }
            self.spilled = Some((readers, None));
        }
        self.next_spilled(exec)
    }

    fn explain(&self) -> Node {
        Node::root("HashAgg", "distinct", vec![self.input.explain()])
    }

    fn held(&self) -> Option<Held> {
        Some(self.held)
    }
}
