//! How a table's rows and index entries are laid out as keys and values.
//!
//! A row is stored under its row key (from its handle) with every column in the value. An index
//! entry of a unique index with no NULL in its values is stored at `index_key(values)` with the
//! encoded handle as its value; any other entry (non-unique index, or NULL values) appends the
//! handle to the key and stores an empty value.

use strata_codec::{keys, memcomparable, row, Datum};
use strata_types::{IndexId, Key};

use crate::catalog::{IndexDef, PrimaryKey, TableDef};
use crate::error::Result;

/// The handle datums of a row.
pub fn handle_of(table: &TableDef, row: &[Datum], row_id: Option<i64>) -> Vec<Datum> {
    match &table.primary_key {
        PrimaryKey::IntHandle(c) => vec![int_datum(&row[*c])],
        PrimaryKey::Clustered(cs) => cs.iter().map(|c| row[*c].clone()).collect(),
        PrimaryKey::RowId => vec![Datum::Int(
            row_id.expect("row id allocated for a table without primary key"),
        )],
    }
}

fn int_datum(d: &Datum) -> Datum {
    match d {
        Datum::UInt(u) => Datum::Int(*u as i64),
        other => other.clone(),
    }
}

/// The row key of a handle.
// Hot path: point get.
pub fn row_key(table: &TableDef, handle: &[Datum]) -> Key {
    match (&table.primary_key, handle) {
        (PrimaryKey::IntHandle(_) | PrimaryKey::RowId, [Datum::Int(i)]) => {
            keys::row_key_int(table.table_id(), *i)
        }
        _ => keys::row_key(table.table_id(), handle),
    }
}

/// Number of datums in a handle.
pub fn handle_len(table: &TableDef) -> usize {
    match &table.primary_key {
        PrimaryKey::Clustered(cs) => cs.len(),
        _ => 1,
    }
}

/// The handle stored in a row key.
pub fn handle_from_row_key(table: &TableDef, key: &[u8]) -> Result<Vec<Datum>> {
    Ok(keys::decode_row_key_handle(key, handle_len(table))?)
}

/// Encodes a row's value: every column by id.
pub fn encode_row(table: &TableDef, row: &[Datum]) -> Vec<u8> {
    let columns: Vec<(i64, &Datum)> = table
        .columns
        .iter()
        .zip(row)
        .map(|(c, d)| (c.id, d))
        .collect();
    let mut buf = Vec::with_capacity(64 + row.len() * 8);
    row::encode_row(&mut buf, &columns);
    buf
}

/// Decodes row values into datums in column order, reading only some columns if asked.
pub struct RowDecoder {
    ids: Vec<i64>,
    /// What each decoded column reads as where a row has no value for it (it was stored
    /// before `ALTER TABLE … ADD` made the column); None when every such column reads NULL.
    missing: Option<Vec<Datum>>,
    /// Where each decoded id goes; None when every column is decoded in order.
    positions: Option<Vec<usize>>,
    width: usize,
    /// The row key follows the columns (a multi-table UPDATE or DELETE writes back by it).
    with_key: bool,
}

impl RowDecoder {
    pub fn new(table: &TableDef, columns: Option<&[usize]>) -> RowDecoder {
        let positions: Vec<usize> = match columns {
            None => (0..table.columns.len()).collect(),
            Some(positions) => positions.to_vec(),
        };
        let missing = positions
            .iter()
            .any(|p| table.columns[*p].origin_default.is_some())
            .then(|| {
                positions
                    .iter()
                    .map(|p| table.columns[*p].origin_datum())
                    .collect()
            });
        RowDecoder {
            ids: positions.iter().map(|p| table.columns[*p].id).collect(),
            missing,
            positions: columns.map(|_| positions),
            width: table.columns.len(),
            with_key: false,
        }
    }

    /// A decoder whose rows end with their row key (as bytes) when `with_key`.
    pub fn keeping_key(self, with_key: bool) -> RowDecoder {
        RowDecoder { with_key, ..self }
    }

    /// Decodes a stored row, followed by its key if the decoder keeps keys.
    pub fn decode_entry(&self, key: &[u8], value: &[u8]) -> Result<Vec<Datum>> {
        let mut row = self.decode(value)?;
        if self.with_key {
            row.push(Datum::Bytes(key.to_vec()));
        }
        Ok(row)
    }

    // Hot path: every row read.
    pub fn decode(&self, value: &[u8]) -> Result<Vec<Datum>> {
        let decoded = match &self.missing {
            None => row::decode_row(value, &self.ids)?,
            Some(missing) => row::decode_row_or(value, &self.ids, missing)?,
        };
        let Some(positions) = &self.positions else {
            return Ok(decoded);
        };
        let mut out = vec![Datum::Null; self.width];
        for (position, datum) in positions.iter().zip(decoded) {
            out[*position] = datum;
        }
        Ok(out)
    }
}

/// Decodes every column of a row's value, in column order.
pub fn decode_row(table: &TableDef, value: &[u8]) -> Result<Vec<Datum>> {
    RowDecoder::new(table, None).decode(value)
}

/// The index key and value of one row's entry in `index`.
pub fn index_entry(
    table: &TableDef,
    index: &IndexDef,
    row: &[Datum],
    handle: &[Datum],
) -> (Key, Vec<u8>) {
    let values: Vec<Datum> = index.columns.iter().map(|c| row[*c].clone()).collect();
    let distinct_form = index.unique && !values.contains(&Datum::Null);
    if distinct_form {
        let key = keys::index_key(table.table_id(), IndexId(index.id), &values, None);
        let mut value = Vec::new();
        memcomparable::encode_key_datums(&mut value, handle);
        (key, value)
    } else {
        (
            keys::index_key(table.table_id(), IndexId(index.id), &values, Some(handle)),
            Vec::new(),
        )
    }
}

/// The handle an index entry points at.
pub fn handle_from_index_entry(
    table: &TableDef,
    index: &IndexDef,
    key: &[u8],
    value: &[u8],
) -> Result<Vec<Datum>> {
    if value.is_empty() {
        let (_, handle) = keys::decode_index_key(key, index.columns.len(), handle_len(table))?;
        Ok(handle)
    } else {
        let mut input = value;
        Ok(memcomparable::decode_key_datums(
            &mut input,
            handle_len(table),
        )?)
    }
}

/// The key prefix of index entries whose leading values are `values`.
pub fn index_values_key(table: &TableDef, index: &IndexDef, values: &[Datum]) -> Key {
    keys::index_key(table.table_id(), IndexId(index.id), values, None)
}
