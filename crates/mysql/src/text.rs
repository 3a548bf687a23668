//! The text protocol: every value of a COM_QUERY result row as a length-encoded string, NULL as
//! 0xFB.
//!
//! Values are rendered the way MySQL renders them: integers in decimal; DOUBLE with the
//! column's `decimals` when fixed (< 31), otherwise in the shortest form that reads back exactly,
//! switching to `1.5e20` style below 1e-4 and from 1e15 on (`%g`-like); FLOAT with single
//! precision digits; DECIMAL with its scale; DATE as `YYYY-MM-DD`; DATETIME as
//! `YYYY-MM-DD HH:MM:SS`, with as many fractional digits as the column declares, or six when it
//! declares none and the value has microseconds.

use std::io::Write;

use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use strata_sql::{ColumnInfo, ColumnType, Datum};

use crate::packet::put_lenenc_bytes;

/// `decimals` values from this one up mean "not fixed" (MySQL's `DECIMAL_NOT_SPECIFIED`).
const DECIMALS_NOT_FIXED: u8 = 31;

/// The lenenc prefix of a string shorter than this is one byte.
const ONE_BYTE_LENGTH_LIMIT: usize = 251;

/// Appends one text-protocol row.
pub fn encode_text_row(buffer: &mut Vec<u8>, columns: &[ColumnInfo], row: &[Datum]) {
    for (index, datum) in row.iter().enumerate() {
        match datum {
            Datum::Null => buffer.push(0xFB),
            Datum::Bytes(bytes) => put_lenenc_bytes(buffer, bytes),
            _ => put_lenenc_with(buffer, |buffer| {
                write_text_value(buffer, columns.get(index), datum)
            }),
        }
    }
}

/// Appends a length-encoded string whose contents `write` appends; the one-byte length is
/// reserved first and the text moved only in the rare case it is 251 bytes or longer.
pub fn put_lenenc_with(buffer: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let start = buffer.len();
    buffer.push(0);
    write(buffer);
    let length = buffer.len() - start - 1;
    if length < ONE_BYTE_LENGTH_LIMIT {
        buffer[start] = length as u8;
    } else {
        let text = buffer.split_off(start + 1);
        buffer.truncate(start);
        put_lenenc_bytes(buffer, &text);
    }
}

/// Appends the text form of a non-NULL datum (NULL appends nothing). `column` decides the
/// precision of floating-point and temporal values; without it they use their natural form.
pub fn write_text_value(buffer: &mut Vec<u8>, column: Option<&ColumnInfo>, datum: &Datum) {
    let decimals = column.map_or(DECIMALS_NOT_FIXED, |column| column.decimals);
    // Writing to a Vec<u8> cannot fail.
    let _ = match datum {
        Datum::Null => Ok(()),
        // A YEAR shows four digits (the zero year as 0000).
        Datum::Int(value) if column.is_some_and(|c| c.column_type == ColumnType::Year) => {
            write!(buffer, "{value:04}")
        }
        Datum::Int(value) => write!(buffer, "{value}"),
        // A BIT(M) is its M bits, big-endian, in whole bytes.
        Datum::UInt(value) if column.is_some_and(|c| c.column_type == ColumnType::Bit) => {
            let bytes = column.map_or(8, |c| c.column_length.div_ceil(8).clamp(1, 8)) as usize;
            buffer.write_all(&value.to_be_bytes()[8 - bytes..])
        }
        Datum::UInt(value) => write!(buffer, "{value}"),
        Datum::Float(value) => {
            let single = column.is_some_and(|column| column.column_type == ColumnType::Float);
            write_double(buffer, *value, decimals, single);
            Ok(())
        }
        Datum::Decimal(value) => write!(buffer, "{value}"),
        Datum::Bytes(bytes) => buffer.write_all(bytes),
        Datum::Date(date) => write_date(buffer, date),
        Datum::DateTime(datetime) => write_datetime(buffer, datetime, decimals),
        Datum::Time(micros) => write_time(buffer, *micros, decimals),
    };
}

/// Appends a TIME as `[-]HH:MM:SS`, with the column's digits of fraction (six, when the
/// column fixes none and there is a fraction).
fn write_time(buffer: &mut Vec<u8>, micros: i64, decimals: u8) -> std::io::Result<()> {
    let sign = if micros < 0 { "-" } else { "" };
    let magnitude = micros.unsigned_abs();
    let (seconds, fraction) = (magnitude / 1_000_000, magnitude % 1_000_000);
    write!(
        buffer,
        "{sign}{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )?;
    let digits = match decimals {
        1..=6 => usize::from(decimals),
        _ if fraction != 0 => 6,
        _ => return Ok(()),
    };
    write!(buffer, ".{}", &format!("{fraction:06}")[..digits])
}

/// Appends a DOUBLE (or, with `single`, a FLOAT) as MySQL prints it.
pub fn write_double(buffer: &mut Vec<u8>, value: f64, decimals: u8, single: bool) {
    let _ = if decimals < DECIMALS_NOT_FIXED {
        write!(buffer, "{:.*}", usize::from(decimals), value)
    } else {
        let scientific = if single {
            format!("{:e}", value as f32)
        } else {
            format!("{value:e}")
        };
        let exponent: i32 = scientific
            .rsplit('e')
            .next()
            .and_then(|e| e.parse().ok())
            .unwrap_or(0);
        if value.is_finite() && value != 0.0 && !(-4..15).contains(&exponent) {
            buffer.write_all(scientific.as_bytes())
        } else if single {
            write!(buffer, "{}", value as f32)
        } else {
            write!(buffer, "{value}")
        }
    };
}

fn write_date(buffer: &mut Vec<u8>, date: &NaiveDate) -> std::io::Result<()> {
    write!(
        buffer,
        "{:04}-{:02}-{:02}",
        date.year(),
        date.month(),
        date.day()
    )
}

fn write_datetime(
    buffer: &mut Vec<u8>,
    datetime: &NaiveDateTime,
    decimals: u8,
) -> std::io::Result<()> {
    write_date(buffer, &datetime.date())?;
    let time = datetime.time();
    write!(
        buffer,
        " {:02}:{:02}:{:02}",
        time.hour(),
        time.minute(),
        time.second()
    )?;
    let micros = time.nanosecond() / 1000 % 1_000_000;
    let digits = match decimals {
        1..=6 => usize::from(decimals),
        _ if micros != 0 => 6,
        _ => return Ok(()),
    };
    let fraction = format!("{micros:06}");
    write!(buffer, ".{}", &fraction[..digits])
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_sql::charsets;

    fn column(column_type: ColumnType, decimals: u8) -> ColumnInfo {
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
            decimals,
        }
    }

    fn text(column_type: ColumnType, decimals: u8, datum: Datum) -> String {
        let mut buffer = Vec::new();
        write_text_value(&mut buffer, Some(&column(column_type, decimals)), &datum);
        String::from_utf8(buffer).unwrap()
    }

    #[test]
    fn numbers() {
        assert_eq!(text(ColumnType::LongLong, 0, Datum::Int(-42)), "-42");
        assert_eq!(
            text(ColumnType::LongLong, 0, Datum::UInt(u64::MAX)),
            "18446744073709551615"
        );
        assert_eq!(
            text(
                ColumnType::NewDecimal,
                2,
                Datum::Decimal("12.50".parse().unwrap())
            ),
            "12.50"
        );
    }

    #[test]
    fn doubles_print_like_mysql() {
        let double = |value: f64| text(ColumnType::Double, 31, Datum::Float(value));
        assert_eq!(double(1.0), "1");
        assert_eq!(double(1.5), "1.5");
        assert_eq!(double(-0.1), "-0.1");
        assert_eq!(double(0.0001), "0.0001");
        assert_eq!(double(0.00001), "1e-5");
        assert_eq!(double(1e14), "100000000000000");
        assert_eq!(double(1e15), "1e15");
        assert_eq!(double(-1.5e17), "-1.5e17");
        assert_eq!(double(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(double(0.0), "0");
        assert_eq!(text(ColumnType::Double, 2, Datum::Float(1.0)), "1.00");
        assert_eq!(text(ColumnType::Double, 0, Datum::Float(2.5)), "2");
        assert_eq!(
            text(ColumnType::Float, 31, Datum::Float(f64::from(0.1f32))),
            "0.1"
        );
    }

    #[test]
    fn temporals() {
        let date = NaiveDate::from_ymd_opt(2024, 2, 9).unwrap();
        assert_eq!(text(ColumnType::Date, 0, Datum::Date(date)), "2024-02-09");
        let midnight = date.and_hms_opt(0, 0, 0).unwrap();
        assert_eq!(
            text(ColumnType::DateTime, 0, Datum::DateTime(midnight)),
            "2024-02-09 00:00:00"
        );
        let precise = date.and_hms_micro_opt(13, 4, 5, 120).unwrap();
        assert_eq!(
            text(ColumnType::DateTime, 0, Datum::DateTime(precise)),
            "2024-02-09 13:04:05.000120"
        );
        assert_eq!(
            text(ColumnType::DateTime, 3, Datum::DateTime(midnight)),
            "2024-02-09 00:00:00.000"
        );
    }

    #[test]
    fn times_and_bits() {
        let time = -((26 * 3600 + 3 * 60 + 4) * 1_000_000 + 5);
        assert_eq!(
            text(ColumnType::Time, 0, Datum::Time(time)),
            "-26:03:04.000005"
        );
        assert_eq!(
            text(ColumnType::Time, 3, Datum::Time(1_500_000)),
            "00:00:01.500"
        );
        assert_eq!(text(ColumnType::Time, 0, Datum::Time(0)), "00:00:00");
        let bits = |length: u32, value: u64| {
            let mut buffer = Vec::new();
            let info = ColumnInfo {
                column_length: length,
                ..column(ColumnType::Bit, 0)
            };
            write_text_value(&mut buffer, Some(&info), &Datum::UInt(value));
            buffer
        };
        assert_eq!(bits(1, 1), [1]);
        assert_eq!(bits(10, 0x3ff), [3, 0xff]);
        assert_eq!(bits(64, u64::MAX), [0xff; 8]);
    }

    #[test]
    fn rows_use_lenenc_strings_and_null_marker() {
        let columns = vec![
            column(ColumnType::LongLong, 0),
            column(ColumnType::VarString, 0),
            column(ColumnType::Blob, 0),
        ];
        let row = vec![Datum::Int(7), Datum::Null, Datum::Bytes(vec![b'x'; 300])];
        let mut buffer = Vec::new();
        encode_text_row(&mut buffer, &columns, &row);
        assert_eq!(&buffer[..6], &[1, b'7', 0xFB, 0xFC, 0x2C, 0x01]);
        assert_eq!(buffer.len(), 6 + 300);

        let mut long = Vec::new();
        put_lenenc_with(&mut long, |buffer| buffer.extend_from_slice(&[b'9'; 260]));
        assert_eq!(&long[..3], &[0xFC, 4, 1]);
        assert_eq!(long.len(), 263);
    }
}
