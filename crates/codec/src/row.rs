//! The row value format: the non-key columns of one row, stored under its row key.
//!
//! ```text
//! row    := version:u8  column_count:varint  column*        (columns in ascending id order)
//! column := column_id:varint  tag:u8  payload
//!
//! tag  datum     payload
//! 0    Null      (none)
//! 1    Int       zigzag varint
//! 2    UInt      varint
//! 3    Float     8 bytes, little-endian IEEE-754 bits (exact, including -0.0 and NaN payloads)
//! 4    Decimal   one byte: scale (0..=28) | 0x80 if negative; varint of the mantissa's magnitude
//! 5    Bytes     varint length, then the bytes
//! 6    Date      zigzag varint of days since 0001-01-01
//! 7    DateTime  zigzag varint of seconds since the Unix epoch, varint of nanoseconds
//! 8    Time      zigzag varint of microseconds
//! ```
//!
//! Unlike keys, a row value keeps every datum exactly: `1.50` stays `1.50`, `-0.0` stays `-0.0`.
//!
//! Columns are self-delimiting, so a reader skips a column it does not want by parsing its
//! payload's length without building it. The encoder sorts columns by id, which lets a reader of
//! many columns look ids up by binary search and lets a reader stop once it has every column it
//! asked for. A column missing from the row (added by a later `ALTER TABLE`) reads as
//! [`Datum::Null`], or as the datum the caller gives for it ([`decode_row_or`]).
//!
//! The version byte means an encoded row is never empty, even with no columns, so an empty
//! value can never be mistaken for a row.

use chrono::{DateTime, Datelike, NaiveDate};
use rust_decimal::Decimal;

use crate::error::{CodecError, Result};
use crate::memcomparable::{take, take_byte};
use crate::varint;
use crate::Datum;

/// The version byte that starts every row written by this code.
pub const ROW_FORMAT_VERSION: u8 = 1;

const TAG_NULL: u8 = 0;
const TAG_INT: u8 = 1;
const TAG_UINT: u8 = 2;
const TAG_FLOAT: u8 = 3;
const TAG_DECIMAL: u8 = 4;
const TAG_BYTES: u8 = 5;
const TAG_DATE: u8 = 6;
const TAG_DATETIME: u8 = 7;
const TAG_TIME: u8 = 8;

/// Bit of the decimal header byte that marks a negative value; the low bits hold the scale.
const DECIMAL_NEGATIVE_BIT: u8 = 0x80;

/// Up to this many wanted columns, [`decode_row`] compares ids linearly; above it, it sorts the
/// wanted ids once and binary-searches them.
const LINEAR_LOOKUP_COLUMNS_MAX: usize = 16;

/// Appends the row value of `columns` to `buf`.
///
/// Columns may come in any order; they are written sorted by id.
///
/// # Panics
///
/// Panics if two columns share an id, which is a bug in the caller.
pub fn encode_row(buf: &mut Vec<u8>, columns: &[(i64, &Datum)]) {
    buf.push(ROW_FORMAT_VERSION);
    varint::write_u64(buf, columns.len() as u64);
    if columns.windows(2).all(|pair| pair[0].0 < pair[1].0) {
        for (column_id, datum) in columns {
            encode_column(buf, *column_id, datum);
        }
        return;
    }
    let mut order: Vec<usize> = (0..columns.len()).collect();
    order.sort_unstable_by_key(|&index| columns[index].0);
    for pair in order.windows(2) {
        let column_id = columns[pair[0]].0;
        assert_ne!(
            column_id, columns[pair[1]].0,
            "duplicate column id {column_id} in a row"
        );
    }
    for index in order {
        let (column_id, datum) = columns[index];
        encode_column(buf, column_id, datum);
    }
}

/// Decodes the columns `column_ids` of a row value, one datum per id, in the order asked.
///
/// An id the row does not hold decodes as [`Datum::Null`]. Columns after the last wanted one are
/// not read, so corruption there goes unnoticed; [`decode_row_all`] checks the whole value.
#[inline]
pub fn decode_row(bytes: &[u8], column_ids: &[i64]) -> Result<Vec<Datum>> {
    let mut datums = Vec::new();
    decode_row_into(bytes, column_ids, &mut datums)?;
    Ok(datums)
}

/// Like [`decode_row`], but writes into `out` (cleared first) so that a scan can reuse it.
pub fn decode_row_into(bytes: &[u8], column_ids: &[i64], out: &mut Vec<Datum>) -> Result<()> {
    out.clear();
    out.resize(column_ids.len(), Datum::Null);
    decode_prefilled(bytes, column_ids, out)
}

/// Like [`decode_row`], but a column the row does not hold decodes as its datum in `missing`
/// (one per id) instead of [`Datum::Null`].
pub fn decode_row_or(bytes: &[u8], column_ids: &[i64], missing: &[Datum]) -> Result<Vec<Datum>> {
    debug_assert_eq!(column_ids.len(), missing.len());
    let mut out = missing.to_vec();
    decode_prefilled(bytes, column_ids, &mut out)?;
    Ok(out)
}

/// Overwrites `out[slot]` with the row's datum for `column_ids[slot]` wherever the row has one.
fn decode_prefilled(bytes: &[u8], column_ids: &[i64], out: &mut [Datum]) -> Result<()> {
    if column_ids.is_empty() {
        return RowReader::new(bytes).map(drop);
    }
    if column_ids.len() <= LINEAR_LOOKUP_COLUMNS_MAX {
        decode_wanted(bytes, out, |column_id| {
            let slots = column_ids.iter().enumerate();
            slots
                .filter(move |&(_, &wanted)| wanted == column_id)
                .map(|(slot, _)| slot)
        })
    } else {
        let mut sorted: Vec<(i64, usize)> = column_ids.iter().copied().zip(0..).collect();
        sorted.sort_unstable();
        let sorted = sorted.as_slice();
        decode_wanted(bytes, out, |column_id| {
            let start = sorted.partition_point(|&(wanted, _)| wanted < column_id);
            let slots = sorted[start..].iter();
            slots
                .take_while(move |&&(wanted, _)| wanted == column_id)
                .map(|&(_, slot)| slot)
        })
    }
}

/// Decodes every column of a row value, in ascending id order, checking the whole value.
pub fn decode_row_all(bytes: &[u8]) -> Result<Vec<(i64, Datum)>> {
    let mut reader = RowReader::new(bytes)?;
    let mut columns = Vec::with_capacity(reader.columns_remaining);
    while let Some((column_id, tag)) = reader.next_column()? {
        columns.push((column_id, read_payload(&mut reader.input, tag)?));
    }
    Ok(columns)
}

/// Walks the row and fills `out[slot]` for every slot that `slots_of(column_id)` yields,
/// stopping once every slot is filled. Unwanted columns are skipped without being built.
#[inline]
fn decode_wanted<Slots: Iterator<Item = usize>>(
    bytes: &[u8],
    out: &mut [Datum],
    slots_of: impl Fn(i64) -> Slots,
) -> Result<()> {
    let mut reader = RowReader::new(bytes)?;
    let mut slots_unfilled = out.len();
    while let Some((column_id, tag)) = reader.next_column()? {
        let mut slots = slots_of(column_id);
        let Some(first_slot) = slots.next() else {
            skip_payload(&mut reader.input, tag)?;
            continue;
        };
        let datum = read_payload(&mut reader.input, tag)?;
        for slot in slots {
            out[slot] = datum.clone();
            slots_unfilled -= 1;
        }
        out[first_slot] = datum;
        slots_unfilled -= 1;
        if slots_unfilled == 0 {
            break;
        }
    }
    Ok(())
}

/// Reads the header and then the column headers of a row value, checking id order and count.
struct RowReader<'a> {
    input: &'a [u8],
    columns_remaining: usize,
    previous_column_id: Option<i64>,
}

impl<'a> RowReader<'a> {
    fn new(bytes: &'a [u8]) -> Result<Self> {
        let mut input = bytes;
        let version = take_byte(&mut input, "row version")?;
        if version != ROW_FORMAT_VERSION {
            return Err(CodecError::UnsupportedRowVersion(version));
        }
        let column_count = varint::read_u64(&mut input)?;
        // Each column takes at least two bytes (id and tag); a larger count is corrupt and must
        // not size an allocation.
        if column_count > (input.len() / 2) as u64 {
            return Err(CodecError::Invalid {
                what: "row column count",
            });
        }
        Ok(RowReader {
            input,
            columns_remaining: column_count as usize,
            previous_column_id: None,
        })
    }

    /// Returns the id and tag of the next column, leaving the input at its payload, or `None`
    /// after the last column (when the input must be exhausted).
    #[inline]
    fn next_column(&mut self) -> Result<Option<(i64, u8)>> {
        if self.columns_remaining == 0 {
            if !self.input.is_empty() {
                return Err(CodecError::TrailingBytes {
                    what: "row",
                    count: self.input.len(),
                });
            }
            return Ok(None);
        }
        self.columns_remaining -= 1;
        let column_id = varint::read_u64(&mut self.input)? as i64;
        if self
            .previous_column_id
            .is_some_and(|previous| previous >= column_id)
        {
            return Err(CodecError::Invalid {
                what: "row column order",
            });
        }
        self.previous_column_id = Some(column_id);
        let tag = take_byte(&mut self.input, "row column tag")?;
        Ok(Some((column_id, tag)))
    }
}

fn encode_column(buf: &mut Vec<u8>, column_id: i64, datum: &Datum) {
    varint::write_u64(buf, column_id as u64);
    match datum {
        Datum::Null => buf.push(TAG_NULL),
        Datum::Int(value) => {
            buf.push(TAG_INT);
            varint::write_i64(buf, *value);
        }
        Datum::UInt(value) => {
            buf.push(TAG_UINT);
            varint::write_u64(buf, *value);
        }
        Datum::Float(value) => {
            buf.push(TAG_FLOAT);
            buf.extend_from_slice(&value.to_bits().to_le_bytes());
        }
        Datum::Decimal(value) => {
            buf.push(TAG_DECIMAL);
            let sign = if value.is_sign_negative() {
                DECIMAL_NEGATIVE_BIT
            } else {
                0
            };
            buf.push(value.scale() as u8 | sign);
            varint::write_u128(buf, value.mantissa().unsigned_abs());
        }
        Datum::Bytes(value) => {
            buf.push(TAG_BYTES);
            varint::write_u64(buf, value.len() as u64);
            buf.extend_from_slice(value);
        }
        Datum::Date(value) => {
            buf.push(TAG_DATE);
            varint::write_i64(buf, i64::from(value.num_days_from_ce()));
        }
        Datum::DateTime(value) => {
            buf.push(TAG_DATETIME);
            let utc = value.and_utc();
            varint::write_i64(buf, utc.timestamp());
            varint::write_u64(buf, u64::from(utc.timestamp_subsec_nanos()));
        }
        Datum::Time(micros) => {
            buf.push(TAG_TIME);
            varint::write_i64(buf, *micros);
        }
    }
}

fn read_payload(input: &mut &[u8], tag: u8) -> Result<Datum> {
    let datum = match tag {
        TAG_NULL => Datum::Null,
        TAG_INT => Datum::Int(varint::read_i64(input)?),
        TAG_UINT => Datum::UInt(varint::read_u64(input)?),
        TAG_FLOAT => {
            let bytes = take(input, 8, "row float")?;
            let mut array = [0; 8];
            array.copy_from_slice(bytes);
            Datum::Float(f64::from_bits(u64::from_le_bytes(array)))
        }
        TAG_DECIMAL => Datum::Decimal(read_decimal(input)?),
        TAG_BYTES => Datum::Bytes(read_bytes(input)?.to_vec()),
        TAG_DATE => {
            let days = i32::try_from(varint::read_i64(input)?);
            let date = days.ok().and_then(NaiveDate::from_num_days_from_ce_opt);
            Datum::Date(date.ok_or(CodecError::Invalid { what: "row date" })?)
        }
        TAG_DATETIME => {
            let seconds = varint::read_i64(input)?;
            let nanos =
                u32::try_from(varint::read_u64(input)?).map_err(|_| CodecError::Invalid {
                    what: "row datetime",
                })?;
            let value = DateTime::from_timestamp(seconds, nanos).ok_or(CodecError::Invalid {
                what: "row datetime",
            })?;
            Datum::DateTime(value.naive_utc())
        }
        TAG_TIME => Datum::Time(varint::read_i64(input)?),
        tag => {
            return Err(CodecError::UnknownTag {
                what: "row column",
                tag,
            })
        }
    };
    Ok(datum)
}

fn skip_payload(input: &mut &[u8], tag: u8) -> Result<()> {
    match tag {
        TAG_NULL => {}
        TAG_INT | TAG_UINT | TAG_DATE | TAG_TIME => {
            varint::read_u64(input)?;
        }
        TAG_FLOAT => {
            take(input, 8, "row float")?;
        }
        TAG_DECIMAL => {
            take_byte(input, "row decimal")?;
            varint::read_u128(input)?;
        }
        TAG_BYTES => {
            read_bytes(input)?;
        }
        TAG_DATETIME => {
            varint::read_u64(input)?;
            varint::read_u64(input)?;
        }
        tag => {
            return Err(CodecError::UnknownTag {
                what: "row column",
                tag,
            })
        }
    }
    Ok(())
}

fn read_decimal(input: &mut &[u8]) -> Result<Decimal> {
    let header = take_byte(input, "row decimal")?;
    let magnitude = varint::read_u128(input)?;
    let invalid = || CodecError::Invalid {
        what: "row decimal",
    };
    let magnitude = i128::try_from(magnitude).map_err(|_| invalid())?;
    let mantissa = if header & DECIMAL_NEGATIVE_BIT != 0 {
        -magnitude
    } else {
        magnitude
    };
    let scale = u32::from(header & !DECIMAL_NEGATIVE_BIT);
    Decimal::try_from_i128_with_scale(mantissa, scale).map_err(|_| invalid())
}

/// Reads a varint length and that many bytes, borrowed from the input.
fn read_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8]> {
    let len = varint::read_u64(input)?;
    let len = usize::try_from(len).map_err(|_| CodecError::Truncated { what: "row bytes" })?;
    take(input, len, "row bytes")
}

#[cfg(test)]
mod tests {
    use rand::seq::SliceRandom;
    use rand::Rng;

    use super::*;

    #[test]
    fn a_missing_column_reads_as_the_datum_given_for_it() {
        let mut buf = Vec::new();
        encode_row(&mut buf, &[(1, &Datum::Int(7)), (3, &Datum::Null)]);
        let missing = [Datum::Int(-1), Datum::Int(5), Datum::Int(-3)];
        assert_eq!(
            decode_row_or(&buf, &[1, 2, 3], &missing),
            Ok(vec![Datum::Int(7), Datum::Int(5), Datum::Null]),
            "a stored NULL stays NULL; only an absent column takes its default"
        );
        assert_eq!(
            decode_row(&buf, &[1, 2, 3]),
            Ok(vec![Datum::Int(7), Datum::Null, Datum::Null])
        );
    }
    use crate::test_support::{random_any_datum, seeded_rng};

    fn encode(columns: &[(i64, Datum)]) -> Vec<u8> {
        let refs: Vec<(i64, &Datum)> = columns.iter().map(|(id, datum)| (*id, datum)).collect();
        let mut buf = Vec::new();
        encode_row(&mut buf, &refs);
        buf
    }

    /// Compares exactly: the same variant and bits, a decimal's scale included.
    fn assert_identical(got: &Datum, want: &Datum) {
        match (got, want) {
            (Datum::Float(a), Datum::Float(b)) => assert_eq!(a.to_bits(), b.to_bits()),
            (Datum::Decimal(a), Datum::Decimal(b)) => {
                assert_eq!(
                    (a.mantissa(), a.scale()),
                    (b.mantissa(), b.scale()),
                    "{a} vs {b}"
                )
            }
            _ => assert_eq!(got, want),
        }
    }

    fn random_row(rng: &mut rand::rngs::StdRng) -> Vec<(i64, Datum)> {
        let mut ids: Vec<i64> = (1..60).collect();
        ids.shuffle(rng);
        ids.truncate(rng.gen_range(0..30));
        if rng.gen_ratio(1, 10) {
            ids.push([0, -1, i64::MIN, i64::MAX][rng.gen_range(0..4)]);
        }
        ids.into_iter()
            .map(|id| (id, random_any_datum(rng)))
            .collect()
    }

    #[test]
    fn golden_bytes() {
        let name = Datum::Bytes(b"ab".to_vec());
        let price = Datum::Decimal("-1.50".parse().expect("decimal"));
        let bytes = encode(&[(3, name), (1, Datum::Int(-2)), (2, Datum::Null), (4, price)]);
        assert_eq!(
            bytes,
            [
                ROW_FORMAT_VERSION,
                4,
                1,
                TAG_INT,
                3,
                2,
                TAG_NULL,
                3,
                TAG_BYTES,
                2,
                b'a',
                b'b',
                4,
                TAG_DECIMAL,
                0x82,
                150,
                1
            ]
        );
        let mut empty = Vec::new();
        encode_row(&mut empty, &[]);
        assert_eq!(empty, [ROW_FORMAT_VERSION, 0]);
        assert_eq!(decode_row_all(&empty), Ok(vec![]));
        assert_eq!(
            decode_row(&empty, &[1, 2]),
            Ok(vec![Datum::Null, Datum::Null])
        );
    }

    #[test]
    fn every_variant_round_trips_exactly() {
        let mut rng = seeded_rng("every_variant_round_trips_exactly");
        let specials = [
            Datum::Float(-0.0),
            Datum::Float(f64::NAN),
            Datum::Decimal("1.50".parse().expect("decimal")),
            Datum::Decimal("-0.0000000000000000000000000001".parse().expect("decimal")),
            Datum::Decimal(Decimal::MAX),
            Datum::Decimal(Decimal::MIN),
            Datum::Int(i64::MIN),
            Datum::UInt(u64::MAX),
            Datum::Bytes(vec![]),
        ];
        for (index, datum) in specials.iter().enumerate() {
            let decoded =
                decode_row_all(&encode(&[(index as i64, datum.clone())])).expect("decode");
            assert_identical(&decoded[0].1, datum);
        }
        for _ in 0..5_000 {
            let row = random_row(&mut rng);
            let bytes = encode(&row);
            let mut sorted = row.clone();
            sorted.sort_by_key(|(id, _)| *id);
            let decoded = decode_row_all(&bytes).expect("decode");
            assert_eq!(decoded.len(), sorted.len());
            for ((got_id, got), (want_id, want)) in decoded.iter().zip(&sorted) {
                assert_eq!(got_id, want_id);
                assert_identical(got, want);
            }
        }
    }

    #[test]
    fn decode_row_returns_wanted_columns_in_asked_order() {
        let mut rng = seeded_rng("decode_row_returns_wanted_columns_in_asked_order");
        for _ in 0..5_000 {
            let row = random_row(&mut rng);
            let bytes = encode(&row);
            // Wanted ids: some present, some absent (columns added later), some repeated; few
            // enough for the linear lookup or many enough for the sorted one.
            let wanted_len = if rng.gen() {
                rng.gen_range(0..6)
            } else {
                rng.gen_range(17..40)
            };
            let wanted: Vec<i64> = (0..wanted_len).map(|_| rng.gen_range(-2..70)).collect();
            let decoded = decode_row(&bytes, &wanted).expect("decode");
            assert_eq!(decoded.len(), wanted.len());
            for (id, got) in wanted.iter().zip(&decoded) {
                match row.iter().find(|(column_id, _)| column_id == id) {
                    Some((_, want)) => assert_identical(got, want),
                    None => assert_eq!(got, &Datum::Null, "absent column {id}"),
                }
            }
        }
    }

    #[test]
    fn decode_row_into_reuses_the_buffer() {
        let bytes = encode(&[(1, Datum::Int(1)), (2, Datum::Bytes(b"x".to_vec()))]);
        let mut out = vec![Datum::Int(9); 5];
        decode_row_into(&bytes, &[2, 7], &mut out).expect("decode");
        assert_eq!(out, [Datum::Bytes(b"x".to_vec()), Datum::Null]);
    }

    #[test]
    #[should_panic(expected = "duplicate column id")]
    fn duplicate_column_ids_are_a_bug() {
        encode(&[(2, Datum::Null), (1, Datum::Null), (2, Datum::Int(1))]);
    }

    #[test]
    fn corrupt_rows_return_errors() {
        let cases: [&[u8]; 9] = [
            &[],
            &[2, 0],
            &[ROW_FORMAT_VERSION],
            &[ROW_FORMAT_VERSION, 1, 1],
            &[ROW_FORMAT_VERSION, 1, 1, 99],
            &[ROW_FORMAT_VERSION, 2, 2, TAG_NULL, 1, TAG_NULL],
            &[ROW_FORMAT_VERSION, 0, 0],
            &[ROW_FORMAT_VERSION, 1, 1, TAG_DECIMAL, 29, 1],
            &[
                ROW_FORMAT_VERSION,
                1,
                1,
                TAG_BYTES,
                0xff,
                0xff,
                0xff,
                0xff,
                0x0f,
            ],
        ];
        for bytes in cases {
            assert!(decode_row_all(bytes).is_err(), "{bytes:?} decoded");
        }
        assert_eq!(
            decode_row_all(&[7, 0]),
            Err(CodecError::UnsupportedRowVersion(7))
        );
        let count_too_large = [
            ROW_FORMAT_VERSION,
            0xff,
            0xff,
            0xff,
            0xff,
            0x0f,
            1,
            TAG_NULL,
        ];
        assert!(decode_row(&count_too_large, &[1]).is_err());

        let mut rng = seeded_rng("corrupt_rows_return_errors");
        for _ in 0..2_000 {
            let bytes = encode(&random_row(&mut rng));
            for len in 0..bytes.len() {
                assert!(decode_row_all(&bytes[..len]).is_err(), "cut at {len}");
            }
        }
        for _ in 0..50_000 {
            let mut bytes = encode(&random_row(&mut rng));
            let position = rng.gen_range(0..bytes.len());
            bytes[position] = rng.gen();
            let _ = decode_row_all(&bytes);
            let _ = decode_row(&bytes, &[1, 2, 3]);
            bytes.truncate(rng.gen_range(0..=bytes.len()));
            let _ = decode_row(&bytes, &[5]);
        }
    }
}
