//! Encoders for the generic reply packets: OK, EOF, ERR, column definitions, and the framing of
//! a result set (count, definitions, rows, terminator) shared by the text and binary protocols.
//!
//! With CLIENT_DEPRECATE_EOF the EOF after the column definitions disappears and the final EOF
//! becomes an OK packet with the 0xFE header; without it, classic 5-byte EOF packets are sent.

use std::io::{self, Write};

use strata_sql::{ColumnInfo, Datum, SqlError};

use crate::packet::{put_lenenc_bytes, put_lenenc_int, PacketWriter};

/// Server status flags sent in OK and EOF packets (`SERVER_STATUS_*`).
pub mod status {
    pub const IN_TRANS: u16 = 0x0001;
    pub const AUTOCOMMIT: u16 = 0x0002;
    pub const MORE_RESULTS_EXISTS: u16 = 0x0008;
}

/// The longest error message sent (MySQL's `MYSQL_ERRMSG_SIZE`).
const MAX_ERROR_MESSAGE_BYTES: usize = 512;

/// The body of an OK packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OkPacket<'a> {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub status: u16,
    pub warnings: u16,
    pub info: &'a str,
}

/// Appends an OK packet with `header` 0x00, or 0xFE where it ends a result set.
pub fn encode_ok(buffer: &mut Vec<u8>, header: u8, ok: &OkPacket<'_>) {
    buffer.push(header);
    put_lenenc_int(buffer, ok.affected_rows);
    put_lenenc_int(buffer, ok.last_insert_id);
    buffer.extend_from_slice(&ok.status.to_le_bytes());
    buffer.extend_from_slice(&ok.warnings.to_le_bytes());
    // MySQL and MariaDB servers send the message as a length-encoded string (what clients
    // parse), although the protocol documentation calls it string<EOF>.
    if !ok.info.is_empty() {
        put_lenenc_int(buffer, ok.info.len() as u64);
        buffer.extend_from_slice(ok.info.as_bytes());
    }
}

/// Appends a classic EOF packet.
pub fn encode_eof(buffer: &mut Vec<u8>, warnings: u16, status: u16) {
    buffer.push(0xFE);
    buffer.extend_from_slice(&warnings.to_le_bytes());
    buffer.extend_from_slice(&status.to_le_bytes());
}

/// Appends an ERR packet; a SQLSTATE that is not 5 bytes is replaced by `HY000`.
pub fn encode_err(buffer: &mut Vec<u8>, error: &SqlError) {
    buffer.push(0xFF);
    buffer.extend_from_slice(&error.code.to_le_bytes());
    buffer.push(b'#');
    let state = if error.state.len() == 5 {
        error.state
    } else {
        "HY000"
    };
    buffer.extend_from_slice(state.as_bytes());
    let mut end = error.message.len().min(MAX_ERROR_MESSAGE_BYTES);
    while !error.message.is_char_boundary(end) {
        end -= 1;
    }
    buffer.extend_from_slice(&error.message.as_bytes()[..end]);
}

/// Appends a Protocol::ColumnDefinition41. COM_FIELD_LIST replies carry one more field, the
/// default value, sent as NULL.
pub fn encode_column_definition(buffer: &mut Vec<u8>, column: &ColumnInfo, for_field_list: bool) {
    put_lenenc_bytes(buffer, b"def");
    put_lenenc_bytes(buffer, column.schema.as_bytes());
    put_lenenc_bytes(buffer, column.table.as_bytes());
    put_lenenc_bytes(buffer, column.org_table.as_bytes());
    put_lenenc_bytes(buffer, column.name.as_bytes());
    put_lenenc_bytes(buffer, column.org_name.as_bytes());
    buffer.push(0x0C);
    buffer.extend_from_slice(&column.charset.to_le_bytes());
    buffer.extend_from_slice(&column.column_length.to_le_bytes());
    buffer.push(column.column_type.code());
    buffer.extend_from_slice(&column.flags.to_le_bytes());
    buffer.push(column.decimals);
    buffer.extend_from_slice(&[0, 0]);
    if for_field_list {
        buffer.push(0xFB);
    }
}

/// Writes packets for one connection, knowing whether the client deprecated EOF.
pub struct Replies<'w, W: Write> {
    pub writer: &'w mut PacketWriter<W>,
    pub deprecate_eof: bool,
}

impl<W: Write> Replies<'_, W> {
    pub fn ok(&mut self, ok: &OkPacket<'_>) -> io::Result<()> {
        self.writer.write_with(|buffer| encode_ok(buffer, 0x00, ok))
    }

    pub fn err(&mut self, error: &SqlError) -> io::Result<()> {
        self.writer.write_with(|buffer| encode_err(buffer, error))
    }

    /// Writes the EOF that follows column or parameter definitions, unless deprecated.
    pub fn eof_after_definitions(&mut self, status: u16) -> io::Result<()> {
        if self.deprecate_eof {
            return Ok(());
        }
        self.writer
            .write_with(|buffer| encode_eof(buffer, 0, status))
    }

    /// Writes the packet that ends a result set (or a column list): EOF, or OK with 0xFE.
    pub fn end_of_rows(&mut self, status: u16) -> io::Result<()> {
        if self.deprecate_eof {
            let ok = OkPacket {
                status,
                ..OkPacket::default()
            };
            self.writer
                .write_with(|buffer| encode_ok(buffer, 0xFE, &ok))
        } else {
            self.writer
                .write_with(|buffer| encode_eof(buffer, 0, status))
        }
    }

    /// Writes column definitions, each in its own packet, then the EOF unless deprecated.
    pub fn definitions(&mut self, columns: &[ColumnInfo], status: u16) -> io::Result<()> {
        for column in columns {
            self.writer
                .write_with(|buffer| encode_column_definition(buffer, column, false))?;
        }
        self.eof_after_definitions(status)
    }

    /// Writes what comes before a result set's rows: the column count and definitions.
    pub fn begin_result_set(&mut self, columns: &[ColumnInfo], status: u16) -> io::Result<()> {
        self.writer
            .write_with(|buffer| put_lenenc_int(buffer, columns.len() as u64))?;
        self.definitions(columns, status)
    }

    /// Writes a whole result set; `encode_row` appends one row's payload.
    pub fn result_set(
        &mut self,
        columns: &[ColumnInfo],
        rows: &[Vec<Datum>],
        status: u16,
        encode_row: fn(&mut Vec<u8>, &[ColumnInfo], &[Datum]),
    ) -> io::Result<()> {
        self.begin_result_set(columns, status)?;
        for row in rows {
            self.writer
                .write_with(|buffer| encode_row(buffer, columns, row))?;
        }
        self.end_of_rows(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_sql::ColumnType;

    #[test]
    fn ok_eof_and_err_layouts() {
        let mut buffer = Vec::new();
        let ok = OkPacket {
            affected_rows: 300,
            last_insert_id: 5,
            status: status::AUTOCOMMIT,
            warnings: 1,
            info: "hi",
        };
        encode_ok(&mut buffer, 0x00, &ok);
        assert_eq!(
            buffer,
            [0x00, 0xFC, 0x2C, 0x01, 5, 2, 0, 1, 0, 2, b'h', b'i']
        );

        buffer.clear();
        encode_eof(
            &mut buffer,
            0,
            status::IN_TRANS | status::MORE_RESULTS_EXISTS,
        );
        assert_eq!(buffer, [0xFE, 0, 0, 9, 0]);

        buffer.clear();
        encode_err(&mut buffer, &SqlError::new(1064, "42000", "bad"));
        assert_eq!(
            buffer,
            [0xFF, 0x28, 0x04, b'#', b'4', b'2', b'0', b'0', b'0', b'b', b'a', b'd']
        );

        buffer.clear();
        encode_err(&mut buffer, &SqlError::new(1, "X", "é".repeat(300)));
        assert_eq!(&buffer[3..9], b"#HY000");
        assert_eq!(buffer.len(), 9 + 512);
    }

    #[test]
    fn column_definition_layout() {
        let column = ColumnInfo {
            schema: "db".into(),
            table: "t".into(),
            org_table: "t".into(),
            name: "c".into(),
            org_name: "c".into(),
            charset: 63,
            column_length: 11,
            column_type: ColumnType::Long,
            flags: 1,
            decimals: 0,
        };
        let mut buffer = Vec::new();
        encode_column_definition(&mut buffer, &column, false);
        let expected: &[u8] = &[
            3, b'd', b'e', b'f', 2, b'd', b'b', 1, b't', 1, b't', 1, b'c', 1, b'c', 0x0C, 63, 0,
            11, 0, 0, 0, 3, 1, 0, 0, 0, 0,
        ];
        assert_eq!(buffer, expected);
        buffer.clear();
        encode_column_definition(&mut buffer, &column, true);
        assert_eq!(buffer.last(), Some(&0xFB));
    }
}
