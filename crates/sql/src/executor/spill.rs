//! Rows written to disk by an operator that holds more than its statement's memory allows
//! (a sort's runs, an aggregation's partitions, a join's build side), and read back in order,
//! once or (a nested-loop build side) once per block of rows joined with it.
//!
//! A file holds each row in the row value format (`strata_codec::row`, which keeps every value
//! exactly), after its length. The files are anonymous temporary files, unlinked from the
//! start, so nothing is left behind however the statement or the process ends.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;

use strata_codec::Datum;

use crate::error::{Error, Result};

/// Buffer of each writer and reader.
const BUFFER_BYTES: usize = 64 << 10;

/// Files an operator that spills by key (aggregation, DISTINCT) spreads its rows over.
pub const PARTITIONS: usize = 16;

/// Below this many bytes held, an operator past its quota fails (8175) rather than spill: the
/// memory is held elsewhere in the statement, and spilling so little would only multiply
/// files.
pub const SPILL_MIN_BYTES: u64 = 1 << 20;

/// The partition of a key.
pub fn partition(key: &[u8]) -> usize {
    crc32fast::hash(key) as usize % PARTITIONS
}

/// A writer per partition.
pub fn partitions() -> Result<Vec<SpillWriter>> {
    (0..PARTITIONS).map(|_| SpillWriter::new()).collect()
}

fn write_error(e: io::Error) -> Error {
    Error::new(
        1026,
        "HY000",
        format!("Error writing file 'spilled rows' (Errcode: {e})"),
    )
}

fn read_error(e: io::Error) -> Error {
    Error::new(
        1024,
        "HY000",
        format!("Error reading file 'spilled rows' (Errcode: {e})"),
    )
}

/// Rows being written to a temporary file.
pub struct SpillWriter {
    out: BufWriter<File>,
    rows: usize,
    bytes: u64,
    encoded: Vec<u8>,
}

impl SpillWriter {
    pub fn new() -> Result<SpillWriter> {
        let file = tempfile::tempfile().map_err(write_error)?;
        Ok(SpillWriter {
            out: BufWriter::with_capacity(BUFFER_BYTES, file),
            rows: 0,
            bytes: 0,
            encoded: Vec::new(),
        })
    }

    pub fn write(&mut self, row: &[Datum]) -> Result<()> {
        let columns: Vec<(i64, &Datum)> =
            row.iter().enumerate().map(|(i, d)| (i as i64, d)).collect();
        self.encoded.clear();
        strata_codec::encode_row(&mut self.encoded, &columns);
        let length = (self.encoded.len() as u32).to_le_bytes();
        self.out.write_all(&length).map_err(write_error)?;
        self.out.write_all(&self.encoded).map_err(write_error)?;
        self.rows += 1;
        self.bytes += (length.len() + self.encoded.len()) as u64;
        Ok(())
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Ends the writing; the rows are read back from the start.
    pub fn finish(self) -> Result<SpillReader> {
        self.finish_file()?.read()
    }

    /// Ends the writing; the rows may be read back any number of times.
    pub fn finish_file(self) -> Result<SpillFile> {
        let file = self
            .out
            .into_inner()
            .map_err(|e| write_error(e.into_error()))?;
        Ok(SpillFile {
            file,
            rows: self.rows,
        })
    }
}

/// Spilled rows, written.
pub struct SpillFile {
    file: File,
    rows: usize,
}

impl SpillFile {
    /// A reader of the rows from the first, with its own position.
    pub fn read(&self) -> Result<SpillReader> {
        let file = self.file.try_clone().map_err(read_error)?;
        Ok(SpillReader {
            reader: BufReader::with_capacity(BUFFER_BYTES, At { file, offset: 0 }),
            left: self.rows,
        })
    }
}

/// A file read from its own offset (positional reads), so readers of one file do not move
/// each other.
struct At {
    file: File,
    offset: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// Spilled rows, read back in the order they were written.
pub struct SpillReader {
    reader: BufReader<At>,
    left: usize,
}

impl SpillReader {
    /// The rows not read yet.
    pub fn rows_left(&self) -> usize {
        self.left
    }

    pub fn next_row(&mut self) -> Result<Option<Vec<Datum>>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut length = [0; 4];
        self.reader.read_exact(&mut length).map_err(read_error)?;
        let mut encoded = vec![0; u32::from_le_bytes(length) as usize];
        self.reader.read_exact(&mut encoded).map_err(read_error)?;
        let columns = strata_codec::decode_row_all(&encoded)?;
        Ok(Some(columns.into_iter().map(|(_, datum)| datum).collect()))
    }
}
