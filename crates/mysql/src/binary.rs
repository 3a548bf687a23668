//! The binary protocol of prepared statements: COM_STMT_EXECUTE parameters in, result rows out.
//!
//! A binary row is a 0x00 header, a NULL bitmap whose bits start at offset 2, then each non-NULL
//! value in the fixed layout of its column's type. The SQL layer may produce a datum of another
//! kind than the column's type (an `Int` in a DOUBLE column, a `Bytes` in a DATE column): the
//! value is converted to the column's type, because the client decodes by the column definition.
//!
//! COM_STMT_EXECUTE sends parameter types only when `new_params_bound_flag` is 1, which
//! libmysqlclient and MariaDB Connector/C do on the first execute only; later executes reuse the
//! types remembered in [`ParamState`].

use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use rust_decimal::prelude::ToPrimitive;
use strata_sql::{ColumnInfo, ColumnType, Datum, SqlError};

use crate::error::codes;
use crate::packet::{put_lenenc_bytes, Cursor, Truncated};
use crate::text::{put_lenenc_with, write_text_value};

/// `MYSQL_TYPE_*` codes of parameters, as the client sends them.
mod types {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEWDATE: u8 = 14;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const JSON: u8 = 245;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const GEOMETRY: u8 = 255;
}

/// The flag byte of a parameter type that marks an unsigned integer.
const UNSIGNED_FLAG: u8 = 0x80;

/// What one connection remembers about the parameters of one prepared statement.
#[derive(Clone, Debug, Default)]
pub struct ParamState {
    /// The types sent by the last execute that bound them: (type code, unsigned).
    pub types: Option<Vec<(u8, bool)>>,
    /// Bytes sent with COM_STMT_SEND_LONG_DATA, per parameter, since the last execute or reset.
    pub long_data: Vec<Option<Vec<u8>>>,
    /// Total long-data bytes held, bounded by `max_allowed_packet`.
    pub long_data_bytes: usize,
    /// Whether long data past the bound was dropped; the next execute then fails.
    pub long_data_overflowed: bool,
}

impl ParamState {
    /// Creates the state of a statement with `param_count` parameters.
    pub fn new(param_count: usize) -> ParamState {
        ParamState {
            types: None,
            long_data: vec![None; param_count],
            long_data_bytes: 0,
            long_data_overflowed: false,
        }
    }

    /// Appends COM_STMT_SEND_LONG_DATA bytes to parameter `index`, keeping the total under
    /// `max_bytes`. A parameter index out of range is ignored, as MySQL does.
    pub fn append_long_data(&mut self, index: usize, bytes: &[u8], max_bytes: usize) {
        let Some(slot) = self.long_data.get_mut(index) else {
            return;
        };
        if self.long_data_bytes + bytes.len() > max_bytes {
            self.long_data_overflowed = true;
            return;
        }
        self.long_data_bytes += bytes.len();
        slot.get_or_insert_with(Vec::new).extend_from_slice(bytes);
    }

    /// Forgets the long data (after an execute, and on COM_STMT_RESET).
    pub fn clear_long_data(&mut self) {
        self.long_data.iter_mut().for_each(|slot| *slot = None);
        self.long_data_bytes = 0;
        self.long_data_overflowed = false;
    }
}

/// Decodes the parameters of a COM_STMT_EXECUTE. `cursor` is positioned after the statement id.
pub fn decode_params(
    cursor: &mut Cursor<'_>,
    state: &mut ParamState,
) -> Result<Vec<Datum>, SqlError> {
    let wrong = |Truncated| codes::wrong_arguments("mysqld_stmt_execute");
    let param_count = state.long_data.len();
    let _flags = cursor.u8().map_err(wrong)?;
    let _iterations = cursor.u32().map_err(wrong)?;
    if param_count == 0 {
        return Ok(Vec::new());
    }
    let null_bitmap = cursor.take(param_count.div_ceil(8)).map_err(wrong)?;
    if cursor.u8().map_err(wrong)? == 1 {
        let mut types = Vec::with_capacity(param_count);
        for _ in 0..param_count {
            let [code, flags] = cursor.array().map_err(wrong)?;
            types.push((code, flags & UNSIGNED_FLAG != 0));
        }
        state.types = Some(types);
    }
    let Some(types) = &state.types else {
        return Err(codes::wrong_arguments("mysqld_stmt_execute"));
    };
    let mut params = Vec::with_capacity(param_count);
    for (index, &(code, unsigned)) in types.iter().enumerate() {
        let param = if let Some(bytes) = state.long_data[index].take() {
            Datum::Bytes(bytes)
        } else if null_bitmap[index / 8] & (1 << (index % 8)) != 0 {
            Datum::Null
        } else {
            decode_value(cursor, code, unsigned).map_err(wrong)?
        };
        params.push(param);
    }
    Ok(params)
}

/// Decodes one binary parameter value of type `code`.
fn decode_value(cursor: &mut Cursor<'_>, code: u8, unsigned: bool) -> Result<Datum, Truncated> {
    use types::*;
    let datum = match code {
        TINY if unsigned => Datum::UInt(u64::from(cursor.u8()?)),
        TINY => Datum::Int(i64::from(cursor.u8()? as i8)),
        SHORT | YEAR if unsigned => Datum::UInt(u64::from(cursor.u16()?)),
        SHORT | YEAR => Datum::Int(i64::from(cursor.u16()? as i16)),
        LONG | INT24 if unsigned => Datum::UInt(u64::from(cursor.u32()?)),
        LONG | INT24 => Datum::Int(i64::from(cursor.u32()? as i32)),
        LONGLONG if unsigned => Datum::UInt(cursor.u64()?),
        LONGLONG => Datum::Int(cursor.u64()? as i64),
        FLOAT => Datum::Float(f64::from(f32::from_le_bytes(cursor.array()?))),
        DOUBLE => Datum::Float(f64::from_le_bytes(cursor.array()?)),
        NULL => Datum::Null,
        DECIMAL | NEWDECIMAL => {
            let bytes = cursor.lenenc_bytes()?;
            match std::str::from_utf8(bytes)
                .ok()
                .and_then(|text| text.parse().ok())
            {
                Some(decimal) => Datum::Decimal(decimal),
                None => Datum::Bytes(bytes.to_vec()),
            }
        }
        DATE | NEWDATE | DATETIME | TIMESTAMP => decode_datetime(cursor, code)?,
        TIME => decode_time(cursor)?,
        VARCHAR | BIT | JSON | ENUM..=GEOMETRY => Datum::Bytes(cursor.lenenc_bytes()?.to_vec()),
        _ => return Err(Truncated),
    };
    Ok(datum)
}

/// Decodes a binary DATE/DATETIME/TIMESTAMP (length 0, 4, 7 or 11). A value chrono cannot
/// represent (the zero date, February 30th) is passed on as its text.
fn decode_datetime(cursor: &mut Cursor<'_>, code: u8) -> Result<Datum, Truncated> {
    let length = cursor.u8()?;
    let mut body = Cursor::new(cursor.take(usize::from(length))?);
    let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut micros) =
        (0, 0, 0, 0, 0, 0, 0);
    if !matches!(length, 0 | 4 | 7 | 11) {
        return Err(Truncated);
    }
    if length >= 4 {
        (year, month, day) = (body.u16()?, body.u8()?, body.u8()?);
    }
    if length >= 7 {
        (hour, minute, second) = (body.u8()?, body.u8()?, body.u8()?);
    }
    if length == 11 {
        micros = body.u32()?;
    }
    let date = NaiveDate::from_ymd_opt(i32::from(year), u32::from(month), u32::from(day));
    let time = date.and_then(|date| {
        date.and_hms_micro_opt(
            u32::from(hour),
            u32::from(minute),
            u32::from(second),
            micros,
        )
    });
    let datum = match (date, time) {
        (Some(date), Some(_)) if code == types::DATE || code == types::NEWDATE => Datum::Date(date),
        (_, Some(datetime)) => Datum::DateTime(datetime),
        _ => {
            let mut text = format!("{year:04}-{month:02}-{day:02}");
            if code != types::DATE && code != types::NEWDATE {
                text += &format!(" {hour:02}:{minute:02}:{second:02}");
                if micros != 0 {
                    text += &format!(".{micros:06}");
                }
            }
            Datum::Bytes(text.into_bytes())
        }
    };
    Ok(datum)
}

/// Decodes a binary TIME (length 0, 8 or 12) into its text form `[-]HHH:MM:SS[.ffffff]`.
fn decode_time(cursor: &mut Cursor<'_>) -> Result<Datum, Truncated> {
    let length = cursor.u8()?;
    let mut body = Cursor::new(cursor.take(usize::from(length))?);
    if length == 0 {
        return Ok(Datum::Bytes(b"00:00:00".to_vec()));
    }
    if length != 8 && length != 12 {
        return Err(Truncated);
    }
    let negative = body.u8()? != 0;
    let days = u64::from(body.u32()?);
    let (hour, minute, second) = (body.u8()?, body.u8()?, body.u8()?);
    let micros = if length == 12 { body.u32()? } else { 0 };
    let sign = if negative { "-" } else { "" };
    let hours = days * 24 + u64::from(hour);
    let mut text = format!("{sign}{hours:02}:{minute:02}:{second:02}");
    if micros != 0 {
        text += &format!(".{micros:06}");
    }
    Ok(Datum::Bytes(text.into_bytes()))
}

/// Appends one binary-protocol row.
pub fn encode_binary_row(buffer: &mut Vec<u8>, columns: &[ColumnInfo], row: &[Datum]) {
    buffer.push(0x00);
    let bitmap_start = buffer.len();
    buffer.resize(bitmap_start + (columns.len() + 2).div_ceil(8), 0);
    for (index, column) in columns.iter().enumerate() {
        let datum = row.get(index).unwrap_or(&Datum::Null);
        if matches!(datum, Datum::Null) || column.column_type == ColumnType::Null {
            let bit = index + 2;
            buffer[bitmap_start + bit / 8] |= 1 << (bit % 8);
        } else {
            encode_binary_value(buffer, column, datum);
        }
    }
}

/// Appends a non-NULL value in the binary layout of `column`'s type.
fn encode_binary_value(buffer: &mut Vec<u8>, column: &ColumnInfo, datum: &Datum) {
    match column.column_type {
        ColumnType::Tiny => buffer.push(to_i64(datum) as u8),
        ColumnType::Short | ColumnType::Year => {
            buffer.extend_from_slice(&(to_i64(datum) as u16).to_le_bytes())
        }
        ColumnType::Long | ColumnType::Int24 => {
            buffer.extend_from_slice(&(to_i64(datum) as u32).to_le_bytes())
        }
        ColumnType::LongLong => match datum {
            Datum::UInt(value) => buffer.extend_from_slice(&value.to_le_bytes()),
            _ => buffer.extend_from_slice(&to_i64(datum).to_le_bytes()),
        },
        ColumnType::Float => buffer.extend_from_slice(&(to_f64(datum) as f32).to_le_bytes()),
        ColumnType::Double => buffer.extend_from_slice(&to_f64(datum).to_le_bytes()),
        ColumnType::Date | ColumnType::DateTime | ColumnType::Timestamp => put_binary_datetime(
            buffer,
            to_datetime(datum),
            column.column_type == ColumnType::Date,
        ),
        ColumnType::Time => put_binary_time(buffer, datum),
        ColumnType::NewDecimal
        | ColumnType::Bit
        | ColumnType::VarString
        | ColumnType::String
        | ColumnType::Blob
        | ColumnType::Json => match datum {
            Datum::Bytes(bytes) => put_lenenc_bytes(buffer, bytes),
            _ => put_lenenc_with(buffer, |buffer| {
                write_text_value(buffer, Some(column), datum)
            }),
        },
        // NULL columns are marked in the bitmap by the caller and have no value bytes.
        ColumnType::Null => {}
    }
}

/// Appends the binary DATE/DATETIME layout, as short as the value allows; `None` (a value that
/// is not a date) is the zero date.
fn put_binary_datetime(buffer: &mut Vec<u8>, datetime: Option<NaiveDateTime>, date_only: bool) {
    let Some(datetime) = datetime else {
        buffer.push(0);
        return;
    };
    let (date, time) = (datetime.date(), datetime.time());
    let micros = time.nanosecond() / 1000 % 1_000_000;
    let length = match (date_only, time.num_seconds_from_midnight(), micros) {
        (true, _, _) | (false, 0, 0) => 4,
        (false, _, 0) => 7,
        _ => 11,
    };
    buffer.push(length);
    buffer.extend_from_slice(&(date.year().clamp(0, 9999) as u16).to_le_bytes());
    buffer.extend_from_slice(&[date.month() as u8, date.day() as u8]);
    if length >= 7 {
        buffer.extend_from_slice(&[time.hour() as u8, time.minute() as u8, time.second() as u8]);
    }
    if length == 11 {
        buffer.extend_from_slice(&micros.to_le_bytes());
    }
}

/// Appends the binary TIME layout (sign, days, hours, minutes, seconds, microseconds), as
/// short as the value allows; a value that is not a TIME is zero.
fn put_binary_time(buffer: &mut Vec<u8>, datum: &Datum) {
    let micros = match datum {
        Datum::Time(micros) => *micros,
        _ => 0,
    };
    let magnitude = micros.unsigned_abs();
    let (seconds, fraction) = (magnitude / 1_000_000, (magnitude % 1_000_000) as u32);
    if magnitude == 0 {
        buffer.push(0);
        return;
    }
    buffer.push(if fraction == 0 { 8 } else { 12 });
    buffer.push(u8::from(micros < 0));
    buffer.extend_from_slice(&((seconds / 86_400) as u32).to_le_bytes());
    buffer.extend_from_slice(&[
        (seconds / 3600 % 24) as u8,
        (seconds / 60 % 60) as u8,
        (seconds % 60) as u8,
    ]);
    if fraction != 0 {
        buffer.extend_from_slice(&fraction.to_le_bytes());
    }
}

/// Converts a datum to an integer the way a MySQL numeric column would hold it (rounding,
/// wrapping unsigned values that do not fit, 0 for text that is not a number).
fn to_i64(datum: &Datum) -> i64 {
    match datum {
        Datum::Null => 0,
        Datum::Int(value) => *value,
        Datum::UInt(value) => *value as i64,
        Datum::Float(value) => value.round() as i64,
        Datum::Decimal(value) => value.round().to_i64().unwrap_or(0),
        Datum::Bytes(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            let text = text.trim();
            text.parse()
                .unwrap_or_else(|_| text.parse::<f64>().map_or(0, |value| value.round() as i64))
        }
        Datum::Date(date) => date_number(date),
        Datum::DateTime(datetime) => {
            let time = datetime.time();
            date_number(&datetime.date()) * 1_000_000
                + i64::from(time.hour() * 10_000 + time.minute() * 100 + time.second())
        }
        // HHMMSS.
        Datum::Time(micros) => {
            let seconds = micros.abs() / 1_000_000;
            let number = seconds / 3600 * 10_000 + seconds / 60 % 60 * 100 + seconds % 60;
            number * micros.signum()
        }
    }
}

/// Converts a datum to a double (0 for text that is not a number).
fn to_f64(datum: &Datum) -> f64 {
    match datum {
        Datum::Float(value) => *value,
        Datum::UInt(value) => *value as f64,
        Datum::Decimal(value) => value.to_f64().unwrap_or(0.0),
        Datum::Bytes(bytes) => String::from_utf8_lossy(bytes).trim().parse().unwrap_or(0.0),
        other => to_i64(other) as f64,
    }
}

/// Converts a datum to a date and time; text is parsed as `YYYY-MM-DD[ HH:MM:SS[.f]]`.
fn to_datetime(datum: &Datum) -> Option<NaiveDateTime> {
    match datum {
        Datum::Date(date) => date.and_hms_opt(0, 0, 0),
        Datum::DateTime(datetime) => Some(*datetime),
        Datum::Bytes(bytes) => {
            let text = std::str::from_utf8(bytes).ok()?.trim();
            NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
                .ok()
                .or_else(|| {
                    NaiveDate::parse_from_str(text, "%Y-%m-%d")
                        .ok()?
                        .and_hms_opt(0, 0, 0)
                })
        }
        _ => None,
    }
}

/// The integer MySQL gives a DATE in numeric context: YYYYMMDD.
fn date_number(date: &NaiveDate) -> i64 {
    i64::from(date.year()) * 10_000 + i64::from(date.month() * 100 + date.day())
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_sql::charsets;

    fn column(column_type: ColumnType) -> ColumnInfo {
        ColumnInfo {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            name: "c".into(),
            org_name: "c".into(),
            charset: charsets::BINARY,
            column_length: 0,
            column_type,
            flags: 0,
            decimals: 31,
        }
    }

    /// An execute payload after the statement id: flags, iterations, bitmap, bound flag, types,
    /// values.
    fn execute_body(null_bitmap: &[u8], types: Option<&[u8]>, values: &[u8]) -> Vec<u8> {
        let mut body = vec![0, 1, 0, 0, 0];
        body.extend_from_slice(null_bitmap);
        match types {
            Some(types) => {
                body.push(1);
                body.extend_from_slice(types);
            }
            None => body.push(0),
        }
        body.extend_from_slice(values);
        body
    }

    #[test]
    fn integer_and_string_params_with_remembered_types() {
        let mut state = ParamState::new(3);
        // LONG, STRING, LONGLONG unsigned; the second parameter is NULL.
        let types = [3, 0, 254, 0, 8, 0x80];
        let mut values = (-5i32).to_le_bytes().to_vec();
        values.extend_from_slice(&u64::MAX.to_le_bytes());
        let first = execute_body(&[0b010], Some(&types), &values);
        let params = decode_params(&mut Cursor::new(&first), &mut state).unwrap();
        assert_eq!(
            params,
            vec![Datum::Int(-5), Datum::Null, Datum::UInt(u64::MAX)]
        );

        // The second execute sends no types: the remembered ones decode it.
        let mut values = 7i32.to_le_bytes().to_vec();
        values.extend_from_slice(&[3, b'a', b'b', b'c']);
        values.extend_from_slice(&9u64.to_le_bytes());
        let second = execute_body(&[0], None, &values);
        let params = decode_params(&mut Cursor::new(&second), &mut state).unwrap();
        assert_eq!(
            params,
            vec![Datum::Int(7), Datum::Bytes(b"abc".to_vec()), Datum::UInt(9)]
        );
    }

    #[test]
    fn unbound_types_and_truncated_values_are_errors() {
        let mut state = ParamState::new(1);
        let body = execute_body(&[0], None, &[1, 2, 3, 4]);
        assert_eq!(
            decode_params(&mut Cursor::new(&body), &mut state)
                .unwrap_err()
                .code,
            1210
        );
        let body = execute_body(&[0], Some(&[3, 0]), &[1, 2]);
        assert_eq!(
            decode_params(&mut Cursor::new(&body), &mut state)
                .unwrap_err()
                .code,
            1210
        );
        let body = execute_body(&[0], Some(&[200, 0]), &[1, 2]);
        assert_eq!(
            decode_params(&mut Cursor::new(&body), &mut state)
                .unwrap_err()
                .code,
            1210
        );
    }

    #[test]
    fn every_truncation_of_an_execute_is_an_error_not_a_panic() {
        let types = [1, 0, 2, 0, 5, 0, 246, 0, 12, 0, 11, 0, 253, 0];
        let mut values = vec![0xFF, 0x34, 0x12];
        values.extend_from_slice(&1.5f64.to_le_bytes());
        values.extend_from_slice(&[4, b'1', b'.', b'2', b'5']);
        values.extend_from_slice(&[11, 0xE8, 0x07, 2, 29, 23, 59, 58, 0x40, 0xE2, 0x01, 0x00]);
        values.extend_from_slice(&[8, 1, 1, 0, 0, 0, 2, 3, 4]);
        values.extend_from_slice(&[2, b'h', b'i']);
        let body = execute_body(&[0], Some(&types), &values);
        let params = decode_params(&mut Cursor::new(&body), &mut ParamState::new(7)).unwrap();
        let datetime = NaiveDate::from_ymd_opt(2024, 2, 29)
            .unwrap()
            .and_hms_micro_opt(23, 59, 58, 123_456)
            .unwrap();
        assert_eq!(
            params,
            vec![
                Datum::Int(-1),
                Datum::Int(0x1234),
                Datum::Float(1.5),
                Datum::Decimal("1.25".parse().unwrap()),
                Datum::DateTime(datetime),
                Datum::Bytes(b"-26:03:04".to_vec()),
                Datum::Bytes(b"hi".to_vec()),
            ]
        );
        for end in 0..body.len() {
            assert!(
                decode_params(&mut Cursor::new(&body[..end]), &mut ParamState::new(7)).is_err()
            );
        }
    }

    #[test]
    fn dates_and_odd_decimals() {
        let types = [10, 0, 12, 0, 246, 0];
        let mut values = vec![4, 0xE8, 0x07, 1, 2];
        values.extend_from_slice(&[0]);
        values.extend_from_slice(&[3, b'a', b'b', b'c']);
        let body = execute_body(&[0], Some(&types), &values);
        let params = decode_params(&mut Cursor::new(&body), &mut ParamState::new(3)).unwrap();
        assert_eq!(
            params,
            vec![
                Datum::Date(NaiveDate::from_ymd_opt(2024, 1, 2).unwrap()),
                Datum::Bytes(b"0000-00-00 00:00:00".to_vec()),
                Datum::Bytes(b"abc".to_vec()),
            ]
        );
    }

    #[test]
    fn long_data_replaces_the_value_and_is_consumed() {
        let mut state = ParamState::new(2);
        state.long_data[0] = Some(b"big".to_vec());
        let body = execute_body(&[0], Some(&[252, 0, 3, 0]), &5i32.to_le_bytes());
        let params = decode_params(&mut Cursor::new(&body), &mut state).unwrap();
        assert_eq!(params, vec![Datum::Bytes(b"big".to_vec()), Datum::Int(5)]);
        assert!(state.long_data[0].is_none());
    }

    #[test]
    fn binary_row_layout_and_conversions() {
        let columns: Vec<ColumnInfo> = [
            ColumnType::Tiny,
            ColumnType::Long,
            ColumnType::LongLong,
            ColumnType::Double,
            ColumnType::VarString,
            ColumnType::Date,
            ColumnType::DateTime,
            ColumnType::NewDecimal,
            ColumnType::Float,
            ColumnType::Json,
        ]
        .into_iter()
        .map(column)
        .collect();
        let datetime = NaiveDate::from_ymd_opt(2024, 1, 2)
            .unwrap()
            .and_hms_opt(3, 4, 5)
            .unwrap();
        let row = vec![
            Datum::Int(-1),
            Datum::Null,
            Datum::UInt(u64::MAX),
            Datum::Int(2),
            Datum::Int(42),
            Datum::Bytes(b"2024-01-02".to_vec()),
            Datum::DateTime(datetime),
            Datum::Decimal("3.50".parse().unwrap()),
            Datum::Float(0.5),
            Datum::Bytes(b"[1]".to_vec()),
        ];
        let mut buffer = Vec::new();
        encode_binary_row(&mut buffer, &columns, &row);
        let mut expected = vec![0x00, 0b0000_1000, 0];
        expected.push(0xFF);
        expected.extend_from_slice(&u64::MAX.to_le_bytes());
        expected.extend_from_slice(&2.0f64.to_le_bytes());
        expected.extend_from_slice(&[2, b'4', b'2']);
        expected.extend_from_slice(&[4, 0xE8, 0x07, 1, 2]);
        expected.extend_from_slice(&[7, 0xE8, 0x07, 1, 2, 3, 4, 5]);
        expected.extend_from_slice(&[4, b'3', b'.', b'5', b'0']);
        expected.extend_from_slice(&0.5f32.to_le_bytes());
        expected.extend_from_slice(&[3, b'[', b'1', b']']);
        assert_eq!(buffer, expected);
    }

    #[test]
    fn time_layout() {
        let columns = vec![column(ColumnType::Time); 3];
        // -(1 day 02:03:04.000005), 00:00:00, 10:11:12.
        let long = -((26 * 3600 + 3 * 60 + 4) * 1_000_000 + 5);
        let row = vec![
            Datum::Time(long),
            Datum::Time(0),
            Datum::Time((10 * 3600 + 11 * 60 + 12) * 1_000_000),
        ];
        let mut buffer = Vec::new();
        encode_binary_row(&mut buffer, &columns, &row);
        let mut expected = vec![0x00, 0];
        expected.extend_from_slice(&[12, 1, 1, 0, 0, 0, 2, 3, 4, 5, 0, 0, 0]);
        expected.push(0);
        expected.extend_from_slice(&[8, 0, 0, 0, 0, 0, 10, 11, 12]);
        assert_eq!(buffer, expected);
    }

    #[test]
    fn null_bitmap_spans_bytes() {
        let columns: Vec<ColumnInfo> = (0..7).map(|_| column(ColumnType::LongLong)).collect();
        let mut row = vec![Datum::Int(1); 7];
        row[6] = Datum::Null;
        let mut buffer = Vec::new();
        encode_binary_row(&mut buffer, &columns, &row);
        assert_eq!(&buffer[..3], &[0x00, 0, 0b0000_0001]);
        assert_eq!(buffer.len(), 3 + 6 * 8);
    }
}
