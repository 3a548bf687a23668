//! Reading a table along its access path: a [`Cursor`] that returns a page of rows at a time,
//! and the [`Scan`] operator that filters them.

use std::collections::{HashSet, VecDeque};

use strata_codec::{keys, Datum};
use strata_txn::Transaction;
use strata_types::Key;

use crate::error::{self, Result};
use crate::exec::{eval_prefix, group_key, holds, index_range, pk_range, Ctx};
use crate::expr::{EvalEnv, Expr};
use crate::planner::access::{Access, TableSource};
use crate::rows::{self, RowDecoder};

use super::describe;
use super::limit::Count;
use super::{Batch, Exec, Node, Operator};

/// Rows fetched per storage request in scans.
pub const SCAN_PAGE_ROWS: usize = 256;
/// Largest page: a table scan doubles its page after each one up to this.
const SCAN_PAGE_ROWS_MAX: usize = 4096;

/// Rows with their row keys.
pub type KeyedRows = Vec<(Key, Vec<Datum>)>;

/// Where a cursor stands.
enum Position {
    /// Nothing read yet: the access path's keys and ranges are evaluated on the first page.
    Start,
    /// Rows by key, read in one request.
    Keys(Vec<Key>),
    /// Key ranges still to read (the first one partly read), and whether they are ranges of
    /// index entries whose rows are read by handle.
    Ranges {
        ranges: VecDeque<(Key, Key)>,
        index: Option<usize>,
    },
    /// Rows computed when the statement was planned.
    Memory,
    Done,
}

/// The rows an access path finds, a page at a time, each with its row key.
pub struct Cursor<'s> {
    source: &'s TableSource,
    decoder: RowDecoder,
    page: usize,
    position: Position,
}

impl<'s> Cursor<'s> {
    /// A cursor over `source`; `page_hint` sizes the first page when the caller will stop
    /// after that many rows.
    pub fn new(source: &'s TableSource, page_hint: Option<usize>) -> Cursor<'s> {
        Cursor {
            source,
            decoder: RowDecoder::new(&source.table, source.columns.as_deref())
                .keeping_key(source.with_key),
            page: page_hint
                .map(|l| l.clamp(1, SCAN_PAGE_ROWS_MAX))
                .unwrap_or(SCAN_PAGE_ROWS),
            position: Position::Start,
        }
    }

    /// The next rows (never none), or None at the end.
    pub fn next_page(&mut self, txn: &mut Transaction, ctx: &Ctx) -> Result<Option<KeyedRows>> {
        if let Position::Start = self.position {
            self.position = self.open(txn, ctx)?;
        }
        loop {
            let page = match &mut self.position {
                Position::Start | Position::Done => return Ok(None),
                Position::Keys(keys) => {
                    let keys = std::mem::take(keys);
                    self.position = Position::Done;
                    self.read_keys(txn, keys)?
                }
                Position::Memory => {
                    self.position = Position::Done;
                    let Access::Memory(rows) = &self.source.access else {
                        unreachable!("a memory position comes from a memory access");
                    };
                    rows.rows()
                        .iter()
                        .map(|row| (Key::default(), row.clone()))
                        .collect()
                }
                Position::Ranges { ranges, index } => {
                    let Some((start, end)) = ranges.front_mut() else {
                        self.position = Position::Done;
                        return Ok(None);
                    };
                    ctx.check_interrupt()?;
                    let reverse = self.source.reverse;
                    let entries = txn.scan(start, end, self.page, reverse)?;
                    if entries.len() < self.page {
                        ranges.pop_front();
                    } else if let Some((last, _)) = entries.last() {
                        if reverse {
                            *end = last.clone();
                        } else {
                            *start = [last.as_slice(), &[0]].concat();
                        }
                    }
                    match *index {
                        Some(index) => self.read_index_entries(txn, index, entries)?,
                        None => {
                            self.page = (self.page * 2).min(SCAN_PAGE_ROWS_MAX);
                            entries
                                .into_iter()
                                .map(|(key, value)| {
                                    let row = self.decoder.decode_entry(&key, &value)?;
                                    Ok((key, row))
                                })
                                .collect::<Result<_>>()?
                        }
                    }
                }
            };
            if !page.is_empty() {
                return Ok(Some(page));
            }
        }
    }

    /// The keys or ranges the access path names for this execution.
    fn open(&self, txn: &Transaction, ctx: &Ctx) -> Result<Position> {
        let table = &*self.source.table;
        let pk = table.primary_columns();
        // An index built after this snapshot was taken lacks entries the snapshot would need.
        let access = match &self.source.access {
            Access::Index { index, .. }
                if txn.read_ts().0 < table.indexes[*index].readable_from_ts =>
            {
                &Access::FullScan
            }
            access => access,
        };
        let ranges = |ranges: Vec<(Key, Key)>, index| Position::Ranges {
            ranges: ranges.into(),
            index,
        };
        Ok(match access {
            Access::Point(exprs) => match eval_prefix(table, &pk, exprs, ctx)? {
                Some(handle) => Position::Keys(vec![rows::row_key(table, &handle)]),
                None => Position::Done,
            },
            Access::Points(list) => {
                let mut keys = Vec::with_capacity(list.len());
                let mut seen = HashSet::new();
                for exprs in list {
                    if let Some(handle) = eval_prefix(table, &pk, exprs, ctx)? {
                        let key = rows::row_key(table, &handle);
                        if seen.insert(key.clone()) {
                            keys.push(key);
                        }
                    }
                }
                Position::Keys(keys)
            }
            Access::PkRange { prefix, low, high } => ranges(
                pk_range(table, prefix, low, high, ctx)?
                    .into_iter()
                    .collect(),
                None,
            ),
            Access::PkPrefixes(list) => {
                let mut seen = HashSet::new();
                let mut out = Vec::new();
                for exprs in list {
                    let Some(prefix) = eval_prefix(table, &pk, exprs, ctx)? else {
                        continue;
                    };
                    if seen.insert(group_key(&prefix)) {
                        let start = keys::row_key(table.table_id(), &prefix);
                        let end = keys::prefix_next(&start);
                        out.push((start, end));
                    }
                }
                ranges(out, None)
            }
            Access::FullScan => {
                let range = keys::record_range(table.table_id());
                ranges(vec![(range.start, range.end)], None)
            }
            Access::Index {
                index,
                prefix,
                low,
                high,
            } => {
                let found = index_range(table, &table.indexes[*index], prefix, low, high, ctx)?;
                ranges(found.into_iter().collect(), Some(*index))
            }
            Access::Memory(_) => Position::Memory,
        })
    }

    fn read_keys(&self, txn: &mut Transaction, keys: Vec<Key>) -> Result<KeyedRows> {
        if let [key] = keys.as_slice() {
            return Ok(match txn.get(key)? {
                Some(value) => vec![(key.clone(), self.decoder.decode_entry(key, &value)?)],
                None => Vec::new(),
            });
        }
        let values = txn.batch_get(&keys)?;
        let mut out = Vec::with_capacity(keys.len());
        for (key, value) in keys.into_iter().zip(values) {
            if let Some(value) = value {
                let row = self.decoder.decode_entry(&key, &value)?;
                out.push((key, row));
            }
        }
        Ok(out)
    }

    /// The rows a page of index entries points at, in the entries' order.
    fn read_index_entries(
        &self,
        txn: &mut Transaction,
        index: usize,
        entries: Vec<(Key, Vec<u8>)>,
    ) -> Result<KeyedRows> {
        let table = &*self.source.table;
        let index = &table.indexes[index];
        let mut row_keys = Vec::with_capacity(entries.len());
        for (key, value) in &entries {
            let handle = rows::handle_from_index_entry(table, index, key, value)?;
            row_keys.push(rows::row_key(table, &handle));
        }
        let values = txn.batch_get(&row_keys)?;
        let mut out = Vec::with_capacity(row_keys.len());
        for (key, value) in row_keys.into_iter().zip(values) {
            match value {
                Some(v) => {
                    let row = self.decoder.decode_entry(&key, &v)?;
                    out.push((key, row));
                }
                None => return Err(error::internal("index entry points at a missing row")),
            }
        }
        Ok(out)
    }
}

/// The rows of a table that pass the conditions checked where they are read.
pub struct Scan<'p> {
    source: &'p TableSource,
    filter: Option<&'p Expr>,
    /// A locking read: the row keys of the rows returned are kept for locking.
    lock: bool,
    /// LIMIT and OFFSET of a block that takes the rows as they come: the scan stops after
    /// the rows they need.
    cap: Option<Count<'p>>,
    /// The cursor and the rows it may still return, once the scan has started.
    open: Option<(Cursor<'p>, Option<usize>)>,
}

impl<'p> Scan<'p> {
    pub fn new(
        source: &'p TableSource,
        filter: Option<&'p Expr>,
        lock: bool,
        cap: Option<Count<'p>>,
    ) -> Scan<'p> {
        Scan {
            source,
            filter,
            lock,
            cap,
            open: None,
        }
    }
}

impl Operator for Scan<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        let (cursor, left) = match &mut self.open {
            Some(open) => open,
            None => {
                let left = match &self.cap {
                    Some(cap) => cap.rows_needed(exec)?,
                    None => None,
                };
                self.open.insert((Cursor::new(self.source, left), left))
            }
        };
        loop {
            if *left == Some(0) {
                return Ok(None);
            }
            let Some(page) = cursor.next_page(exec.txn, exec.ctx)? else {
                return Ok(None);
            };
            let mut batch = Vec::with_capacity(page.len());
            for (key, row) in page {
                if !holds(self.filter, &row, exec.ctx)? {
                    continue;
                }
                if self.lock {
                    exec.locked.push(key);
                }
                batch.push(row);
                if let Some(left) = left {
                    *left -= 1;
                    if *left == 0 {
                        break;
                    }
                }
            }
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
    }

    fn explain(&self) -> Node {
        let mut info = Vec::new();
        if let Some(filter) = self.filter {
            info.push(table_filter(self.source, filter));
        }
        if self.source.reverse {
            info.push("desc".to_string());
        }
        if self.lock {
            info.push("for update".to_string());
        }
        source_node(self.source, info.join(", "))
    }
}

/// A condition on the rows of `source`, as EXPLAIN shows it.
pub fn table_filter(source: &TableSource, filter: &Expr) -> String {
    describe::expr(filter, &describe::Names::of_table(source))
}

/// How EXPLAIN shows reading `source` (TiDB's operator names for the access paths).
pub fn source_node(source: &TableSource, info: String) -> Node {
    let table = &source.table;
    let (name, object) = match &source.access {
        Access::Point(_) => ("Point_Get", format!("table:{}, handle", table.name)),
        Access::Points(keys) => (
            "Batch_Point_Get",
            format!("table:{}, {} keys", table.name, keys.len()),
        ),
        Access::PkRange { .. } => (
            "TableRangeScan",
            format!("table:{}, range on primary key", table.name),
        ),
        Access::Index { index, .. } => (
            "IndexLookUp",
            format!("table:{}, index:{}", table.name, table.indexes[*index].name),
        ),
        Access::FullScan => ("TableFullScan", format!("table:{}", table.name)),
        Access::PkPrefixes(list) => (
            "TableRangeScan",
            format!("table:{}, {} primary-key prefixes", table.name, list.len()),
        ),
        Access::Memory(_) => ("MemTableScan", format!("table:{}", table.name)),
    };
    let order = if source.ordered { ", keep order" } else { "" };
    Node {
        name: name.to_string(),
        est_rows: source.est_rows,
        task: "cop[tikv]",
        object: format!("{object}{order}"),
        info,
        children: Vec::new(),
        ran: None,
    }
}
