//! The order-preserving ("memcomparable") encoding of datums, used inside keys.
//!
//! Each datum is a flag byte naming its type followed by a body whose bytewise order equals the
//! SQL order of values of that type:
//!
//! ```text
//! flag  type      body
//! 0x00  NULL      (none)                          NULL sorts before every other flag
//! 0x01  Bytes     8-byte groups, each followed by a marker 0xFF - padding
//! 0x03  Int       8 bytes big-endian, sign bit flipped
//! 0x04  UInt      8 bytes big-endian
//! 0x05  Float     8 bytes big-endian: sign bit set for positives, all bits flipped for negatives
//! 0x06  Decimal   class (neg/zero/pos), exponent byte, digit pairs, terminator; negatives inverted
//! 0x0b  Date      4 bytes: days since 0001-01-01, sign bit flipped
//! 0x0c  DateTime  8 bytes: seconds since the Unix epoch, sign bit flipped; 4 bytes: nanoseconds
//! 0x0d  Time      8 bytes: microseconds, sign bit flipped
//! ```
//!
//! The flags follow TiDB's where TiDB has one. TiDB packs DATE and DATETIME into one `u64` under
//! the unsigned flag; Strata gives them flags of their own so that decoding restores the variant,
//! and a wider body so that chrono's whole range, to the nanosecond, round-trips exactly.
//!
//! Invariants:
//! - For two datums of the same variant, `encode(a).cmp(encode(b)) == a.cmp(b)` in SQL order,
//!   and NULL is smaller than everything. Datums of different variants order by flag, which
//!   means nothing: the SQL layer converts a value to its column's type before encoding it.
//! - Every encoding is prefix-free (no encoding is a proper prefix of another), so a sequence of
//!   encoded datums compares like the tuple of the datums, and a key built from a prefix of the
//!   values bounds exactly the keys that extend it.
//! - Decoding accepts only canonical encodings, so `encode(decode(bytes)) == bytes`.
//! - Values equal in SQL encode equally: `-0.0` as `0.0`, and a decimal as its normalized form
//!   (`1.50` as `1.5`, `-0` as `0`). Decoding returns that normal form.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;

use crate::error::{CodecError, Result};
use crate::Datum;

/// Flag of SQL NULL; the smallest flag, so NULL sorts first.
pub const NULL_FLAG: u8 = 0x00;
/// Flag of a byte string in group encoding.
pub const BYTES_FLAG: u8 = 0x01;
/// Flag of a signed 64-bit integer.
pub const INT_FLAG: u8 = 0x03;
/// Flag of an unsigned 64-bit integer.
pub const UINT_FLAG: u8 = 0x04;
/// Flag of a 64-bit float.
pub const FLOAT_FLAG: u8 = 0x05;
/// Flag of an exact decimal.
pub const DECIMAL_FLAG: u8 = 0x06;
/// Flag of a calendar date.
pub const DATE_FLAG: u8 = 0x0b;
/// Flag of a date and time of day.
pub const DATETIME_FLAG: u8 = 0x0c;
/// Flag of a TIME.
pub const TIME_FLAG: u8 = 0x0d;

/// Bytes of data in one group of the bytes encoding.
pub const BYTES_GROUP_SIZE: usize = 8;
/// Marker after a full group that more groups follow; the last group's marker is
/// `BYTES_GROUP_MARKER - padding`.
pub const BYTES_GROUP_MARKER: u8 = 0xff;

const SIGN_BIT_64: u64 = 1 << 63;
const SIGN_BIT_32: u32 = 1 << 31;

/// Class byte of a negative decimal: sorts before zero and positives.
const DECIMAL_NEGATIVE: u8 = 0x00;
/// Class byte of the decimal zero; nothing follows it.
const DECIMAL_ZERO: u8 = 0x01;
/// Class byte of a positive decimal.
const DECIMAL_POSITIVE: u8 = 0x02;
/// Added to the decimal exponent so that it is stored as one unsigned byte in order.
const DECIMAL_EXPONENT_BIAS: i32 = 128;
/// Ends the digit pairs of a positive decimal (pairs are stored as 1..=100, so 0 sorts first).
const DECIMAL_DIGITS_END: u8 = 0x00;
/// Most decimal digits a mantissa of rust_decimal can hold (2^96 has 29 digits).
const DECIMAL_DIGITS_MAX: usize = 29;

/// Appends the memcomparable encoding of `datum` to `buf`.
pub fn encode_key_datum(buf: &mut Vec<u8>, datum: &Datum) {
    match datum {
        Datum::Null => buf.push(NULL_FLAG),
        Datum::Int(value) => {
            buf.push(INT_FLAG);
            encode_comparable_i64(buf, *value);
        }
        Datum::UInt(value) => {
            buf.push(UINT_FLAG);
            encode_comparable_u64(buf, *value);
        }
        Datum::Float(value) => {
            buf.push(FLOAT_FLAG);
            encode_comparable_u64(buf, float_to_ordered(*value));
        }
        Datum::Decimal(value) => {
            buf.push(DECIMAL_FLAG);
            encode_decimal(buf, value);
        }
        Datum::Bytes(value) => {
            buf.push(BYTES_FLAG);
            encode_bytes(buf, value);
        }
        Datum::Date(value) => {
            buf.push(DATE_FLAG);
            let days = value.num_days_from_ce() as u32 ^ SIGN_BIT_32;
            buf.extend_from_slice(&days.to_be_bytes());
        }
        Datum::DateTime(value) => {
            buf.push(DATETIME_FLAG);
            let utc = value.and_utc();
            encode_comparable_i64(buf, utc.timestamp());
            buf.extend_from_slice(&utc.timestamp_subsec_nanos().to_be_bytes());
        }
        Datum::Time(micros) => {
            buf.push(TIME_FLAG);
            encode_comparable_i64(buf, *micros);
        }
    }
}

/// Appends the encodings of `datums`, in order, to `buf`.
pub fn encode_key_datums(buf: &mut Vec<u8>, datums: &[Datum]) {
    for datum in datums {
        encode_key_datum(buf, datum);
    }
}

/// Decodes one datum from the front of `input` and advances `input` past it.
pub fn decode_key_datum(input: &mut &[u8]) -> Result<Datum> {
    let flag = take_byte(input, "datum flag")?;
    let datum = match flag {
        NULL_FLAG => Datum::Null,
        INT_FLAG => Datum::Int(decode_comparable_i64(input)?),
        UINT_FLAG => Datum::UInt(decode_comparable_u64(input)?),
        FLOAT_FLAG => Datum::Float(decode_float(input)?),
        DECIMAL_FLAG => Datum::Decimal(decode_decimal(input)?),
        BYTES_FLAG => Datum::Bytes(decode_bytes(input)?),
        DATE_FLAG => Datum::Date(decode_date(input)?),
        DATETIME_FLAG => Datum::DateTime(decode_datetime(input)?),
        TIME_FLAG => Datum::Time(decode_comparable_i64(input)?),
        tag => {
            return Err(CodecError::UnknownTag {
                what: "key datum",
                tag,
            })
        }
    };
    Ok(datum)
}

/// Decodes `count` datums from the front of `input` and advances `input` past them.
pub fn decode_key_datums(input: &mut &[u8], count: usize) -> Result<Vec<Datum>> {
    // Every encoded datum takes at least one byte; a corrupt count must not allocate.
    let mut datums = Vec::with_capacity(count.min(input.len()));
    for _ in 0..count {
        datums.push(decode_key_datum(input)?);
    }
    Ok(datums)
}

/// Advances `input` past one encoded datum without building it.
pub fn skip_key_datum(input: &mut &[u8]) -> Result<()> {
    let flag = take_byte(input, "datum flag")?;
    match flag {
        NULL_FLAG => Ok(()),
        INT_FLAG | UINT_FLAG | FLOAT_FLAG => take(input, 8, "number").map(drop),
        DATE_FLAG => take(input, 4, "date").map(drop),
        DATETIME_FLAG => take(input, 12, "datetime").map(drop),
        TIME_FLAG => take(input, 8, "time").map(drop),
        // Variable-length bodies are validated while skipping; they are rare in handles.
        DECIMAL_FLAG => decode_decimal(input).map(drop),
        BYTES_FLAG => skip_bytes(input),
        tag => Err(CodecError::UnknownTag {
            what: "key datum",
            tag,
        }),
    }
}

/// Appends the group encoding of `data` (without a flag) to `buf`.
///
/// The data is cut into groups of [`BYTES_GROUP_SIZE`] bytes; the last group is padded with
/// zeros and every group is followed by a marker: [`BYTES_GROUP_MARKER`] after a full group that
/// is not last, `BYTES_GROUP_MARKER - padding` after the last one (which may be all padding).
/// A shorter string therefore never encodes as a prefix of a longer one, and `"ab"` sorts before
/// `"ab\0"` because its marker is smaller.
pub fn encode_bytes(buf: &mut Vec<u8>, data: &[u8]) {
    buf.reserve(encoded_bytes_len(data.len()));
    let mut groups = data.chunks_exact(BYTES_GROUP_SIZE);
    for group in &mut groups {
        buf.extend_from_slice(group);
        buf.push(BYTES_GROUP_MARKER);
    }
    let last = groups.remainder();
    let padding = BYTES_GROUP_SIZE - last.len();
    buf.extend_from_slice(last);
    buf.extend(std::iter::repeat_n(0, padding));
    buf.push(BYTES_GROUP_MARKER - padding as u8);
}

/// Returns how many bytes [`encode_bytes`] writes for `data_len` bytes of data.
pub fn encoded_bytes_len(data_len: usize) -> usize {
    (data_len / BYTES_GROUP_SIZE + 1) * (BYTES_GROUP_SIZE + 1)
}

/// Decodes a group-encoded byte string from the front of `input` and advances past it.
pub fn decode_bytes(input: &mut &[u8]) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    decode_bytes_into(input, &mut data)?;
    Ok(data)
}

/// Like [`decode_bytes`], but appends the data to `out` so that a caller can reuse a buffer.
pub fn decode_bytes_into(input: &mut &[u8], out: &mut Vec<u8>) -> Result<()> {
    walk_bytes(input, |data| out.extend_from_slice(data))
}

/// Advances `input` past a group-encoded byte string, checking it, without copying it.
pub fn skip_bytes(input: &mut &[u8]) -> Result<()> {
    walk_bytes(input, |_| {})
}

/// Walks the groups at the front of `input`, handing each group's data to `sink`.
fn walk_bytes(input: &mut &[u8], mut sink: impl FnMut(&[u8])) -> Result<()> {
    let mut rest = *input;
    loop {
        let group = take(&mut rest, BYTES_GROUP_SIZE + 1, "bytes group")?;
        let (data, marker) = group.split_at(BYTES_GROUP_SIZE);
        let marker = marker[0];
        if marker == BYTES_GROUP_MARKER {
            sink(data);
            continue;
        }
        let padding = usize::from(BYTES_GROUP_MARKER - marker);
        if padding > BYTES_GROUP_SIZE {
            return Err(CodecError::Invalid {
                what: "bytes group marker",
            });
        }
        let (data, pad) = data.split_at(BYTES_GROUP_SIZE - padding);
        if pad.iter().any(|&byte| byte != 0) {
            return Err(CodecError::Invalid {
                what: "bytes group padding",
            });
        }
        sink(data);
        *input = rest;
        return Ok(());
    }
}

/// Appends `value` as 8 big-endian bytes with the sign bit flipped, so negatives sort first.
pub fn encode_comparable_i64(buf: &mut Vec<u8>, value: i64) {
    encode_comparable_u64(buf, value as u64 ^ SIGN_BIT_64);
}

/// Decodes what [`encode_comparable_i64`] wrote and advances `input` past it.
pub fn decode_comparable_i64(input: &mut &[u8]) -> Result<i64> {
    Ok((decode_comparable_u64(input)? ^ SIGN_BIT_64) as i64)
}

/// Appends `value` as 8 big-endian bytes.
pub fn encode_comparable_u64(buf: &mut Vec<u8>, value: u64) {
    buf.extend_from_slice(&value.to_be_bytes());
}

/// Decodes what [`encode_comparable_u64`] wrote and advances `input` past it.
pub fn decode_comparable_u64(input: &mut &[u8]) -> Result<u64> {
    let bytes = take(input, 8, "64-bit number")?;
    let mut array = [0; 8];
    array.copy_from_slice(bytes);
    Ok(u64::from_be_bytes(array))
}

/// Maps a float to a `u64` whose order is the float's: positives get the sign bit set, negatives
/// have every bit flipped (so a larger magnitude sorts lower). `-0.0` maps like `0.0`.
fn float_to_ordered(value: f64) -> u64 {
    let value = if value == 0.0 { 0.0 } else { value };
    let bits = value.to_bits();
    if bits & SIGN_BIT_64 == 0 {
        bits | SIGN_BIT_64
    } else {
        !bits
    }
}

fn decode_float(input: &mut &[u8]) -> Result<f64> {
    let ordered = decode_comparable_u64(input)?;
    let bits = if ordered & SIGN_BIT_64 != 0 {
        ordered & !SIGN_BIT_64
    } else {
        !ordered
    };
    if bits == SIGN_BIT_64 {
        // Only `-0.0` has these bits, and it is always encoded as `0.0`.
        return Err(CodecError::Invalid { what: "float" });
    }
    Ok(f64::from_bits(bits))
}

/// Appends the body of a decimal.
///
/// A non-zero decimal is `±0.d1d2d3… × 10^exponent` with `d1 != 0` and no trailing zero digit.
/// After the class byte come the exponent (biased into one byte), the digits two per byte as
/// `10 * hi + lo + 1` (so 1..=100; an odd last digit is paired with 0) and a terminator 0 that
/// sorts below every pair: `0.12` before `0.123`. For negatives every byte after the class is
/// inverted, which reverses the order of magnitudes. The exponent lies in -27..=29 for
/// rust_decimal (29 digits, scale up to 28).
fn encode_decimal(buf: &mut Vec<u8>, value: &Decimal) {
    if value.is_zero() {
        buf.push(DECIMAL_ZERO);
        return;
    }
    let (class, invert) = if value.is_sign_negative() {
        (DECIMAL_NEGATIVE, 0xff)
    } else {
        (DECIMAL_POSITIVE, 0x00)
    };
    let mut magnitude = value.mantissa().unsigned_abs();
    let mut trailing_zeros = 0;
    while magnitude.is_multiple_of(10) {
        magnitude /= 10;
        trailing_zeros += 1;
    }
    // Digits of the magnitude without its trailing zeros, least significant first.
    let mut digits = [0u8; DECIMAL_DIGITS_MAX];
    let mut digit_count = 0;
    while magnitude > 0 {
        digits[digit_count] = (magnitude % 10) as u8;
        magnitude /= 10;
        digit_count += 1;
    }
    let exponent = (digit_count + trailing_zeros) as i32 - value.scale() as i32;
    buf.push(class);
    buf.push((exponent + DECIMAL_EXPONENT_BIAS) as u8 ^ invert);
    let mut remaining = digit_count;
    while remaining > 0 {
        let high = digits[remaining - 1];
        let low = if remaining >= 2 {
            digits[remaining - 2]
        } else {
            0
        };
        buf.push((10 * high + low + 1) ^ invert);
        remaining = remaining.saturating_sub(2);
    }
    buf.push(DECIMAL_DIGITS_END ^ invert);
}

fn decode_decimal(input: &mut &[u8]) -> Result<Decimal> {
    const INVALID: CodecError = CodecError::Invalid { what: "decimal" };
    let invert = match take_byte(input, "decimal")? {
        DECIMAL_ZERO => return Ok(Decimal::ZERO),
        DECIMAL_NEGATIVE => 0xff,
        DECIMAL_POSITIVE => 0x00,
        tag => {
            return Err(CodecError::UnknownTag {
                what: "decimal class",
                tag,
            })
        }
    };
    let exponent = i32::from(take_byte(input, "decimal")? ^ invert) - DECIMAL_EXPONENT_BIAS;
    let mut mantissa: u128 = 0;
    let mut digit_count: i32 = 0;
    let mut last_pair = None;
    loop {
        let pair = take_byte(input, "decimal digits")? ^ invert;
        if pair == DECIMAL_DIGITS_END {
            break;
        }
        let pair = pair - 1;
        // 29 digits fill 15 pairs; a 16th pair means more digits than a mantissa holds.
        if pair >= 100 || digit_count as usize > DECIMAL_DIGITS_MAX {
            return Err(INVALID);
        }
        if digit_count == 0 && pair < 10 {
            // The first digit is the most significant one and must not be zero.
            return Err(INVALID);
        }
        mantissa = mantissa * 100 + u128::from(pair);
        digit_count += 2;
        last_pair = Some(pair);
    }
    match last_pair {
        None | Some(0) => return Err(INVALID),
        Some(pair) if pair % 10 == 0 => {
            // An odd number of digits: the last pair was padded with a zero digit.
            mantissa /= 10;
            digit_count -= 1;
        }
        Some(_) => {}
    }
    // The value is mantissa × 10^(exponent - digit_count).
    let shift = exponent - digit_count;
    let (mantissa, scale) = if shift >= 0 {
        let factor = 10u128.checked_pow(shift as u32).ok_or(INVALID)?;
        (mantissa.checked_mul(factor).ok_or(INVALID)?, 0)
    } else {
        (mantissa, (-shift) as u32)
    };
    let signed = i128::try_from(mantissa).map_err(|_| INVALID)?;
    let signed = if invert == 0 { signed } else { -signed };
    Decimal::try_from_i128_with_scale(signed, scale).map_err(|_| INVALID)
}

fn decode_date(input: &mut &[u8]) -> Result<NaiveDate> {
    let bytes = take(input, 4, "date")?;
    let days = (u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) ^ SIGN_BIT_32) as i32;
    NaiveDate::from_num_days_from_ce_opt(days).ok_or(CodecError::Invalid { what: "date" })
}

fn decode_datetime(input: &mut &[u8]) -> Result<NaiveDateTime> {
    let seconds = decode_comparable_i64(input)?;
    let bytes = take(input, 4, "datetime")?;
    let nanos = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let value = DateTime::from_timestamp(seconds, nanos)
        .ok_or(CodecError::Invalid { what: "datetime" })?
        .naive_utc();
    // Only canonical bytes are accepted: the value must re-encode to exactly what was read.
    let utc = value.and_utc();
    if utc.timestamp() != seconds || utc.timestamp_subsec_nanos() != nanos {
        return Err(CodecError::Invalid { what: "datetime" });
    }
    Ok(value)
}

/// Splits `len` bytes off the front of `input`.
pub(crate) fn take<'a>(input: &mut &'a [u8], len: usize, what: &'static str) -> Result<&'a [u8]> {
    if input.len() < len {
        return Err(CodecError::Truncated { what });
    }
    let (head, rest) = input.split_at(len);
    *input = rest;
    Ok(head)
}

/// Splits one byte off the front of `input`.
pub(crate) fn take_byte(input: &mut &[u8], what: &'static str) -> Result<u8> {
    let (&byte, rest) = input.split_first().ok_or(CodecError::Truncated { what })?;
    *input = rest;
    Ok(byte)
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::*;
    use crate::test_support::{random_any_datum, random_datum_or_null, seeded_rng, sql_cmp, KINDS};

    fn encode(datum: &Datum) -> Vec<u8> {
        let mut buf = Vec::new();
        encode_key_datum(&mut buf, datum);
        buf
    }

    fn decode_all(bytes: &[u8]) -> Result<Datum> {
        let mut input = bytes;
        let datum = decode_key_datum(&mut input)?;
        assert!(
            input.is_empty(),
            "{} bytes left after {datum:?}",
            input.len()
        );
        Ok(datum)
    }

    /// The value a key decodes to: equal in SQL, normalized.
    fn key_normal_form(datum: &Datum) -> Datum {
        match datum {
            Datum::Float(value) if *value == 0.0 => Datum::Float(0.0),
            Datum::Decimal(value) => Datum::Decimal(value.normalize()),
            other => other.clone(),
        }
    }

    fn decimal(text: &str) -> Datum {
        Datum::Decimal(text.parse().expect("decimal literal"))
    }

    #[test]
    fn every_variant_round_trips() {
        let mut rng = seeded_rng("every_variant_round_trips");
        for _ in 0..20_000 {
            let datum = random_any_datum(&mut rng);
            let bytes = encode(&datum);
            let decoded = decode_all(&bytes).unwrap_or_else(|error| panic!("{datum:?}: {error}"));
            let expected = key_normal_form(&datum);
            assert_eq!(decoded, expected);
            if let (Datum::Decimal(got), Datum::Decimal(want)) = (&decoded, &expected) {
                assert_eq!(got.scale(), want.scale(), "{datum:?}");
            }
            if let (Datum::Float(got), Datum::Float(want)) = (&decoded, &expected) {
                assert_eq!(got.to_bits(), want.to_bits(), "{datum:?}");
            }
            assert_eq!(encode(&decoded), bytes, "re-encoding {datum:?}");
            let mut skipped = bytes.as_slice();
            skip_key_datum(&mut skipped).expect("skip");
            assert!(skipped.is_empty());
        }
    }

    #[test]
    fn encoded_order_is_sql_order_for_every_type() {
        let mut rng = seeded_rng("encoded_order_is_sql_order_for_every_type");
        for kind in KINDS {
            for _ in 0..20_000 {
                let left = random_datum_or_null(&mut rng, kind);
                let right = random_datum_or_null(&mut rng, kind);
                assert_eq!(
                    encode(&left).cmp(&encode(&right)),
                    sql_cmp(&left, &right),
                    "{left:?} vs {right:?}"
                );
            }
        }
    }

    #[test]
    fn encoded_tuples_compare_like_tuples() {
        // Prefix-freeness: (a1, b1) < (a2, b2) exactly when the concatenations compare so,
        // even when a1 is a prefix of a2 as a byte string.
        let mut rng = seeded_rng("encoded_tuples_compare_like_tuples");
        for first in KINDS {
            for second in KINDS {
                for _ in 0..1_000 {
                    let left = [
                        random_datum_or_null(&mut rng, first),
                        random_datum_or_null(&mut rng, second),
                    ];
                    let right = [
                        random_datum_or_null(&mut rng, first),
                        random_datum_or_null(&mut rng, second),
                    ];
                    let expected = sql_cmp(&left[0], &right[0]).then(sql_cmp(&left[1], &right[1]));
                    let (mut left_bytes, mut right_bytes) = (Vec::new(), Vec::new());
                    encode_key_datums(&mut left_bytes, &left);
                    encode_key_datums(&mut right_bytes, &right);
                    assert_eq!(
                        left_bytes.cmp(&right_bytes),
                        expected,
                        "{left:?} vs {right:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn null_sorts_before_every_value() {
        let mut rng = seeded_rng("null_sorts_before_every_value");
        let null = encode(&Datum::Null);
        assert_eq!(null, [NULL_FLAG]);
        for _ in 0..1_000 {
            let datum = random_any_datum(&mut rng);
            if datum != Datum::Null {
                assert!(null < encode(&datum), "{datum:?}");
            }
        }
    }

    #[test]
    fn integers_golden() {
        assert_eq!(
            encode(&Datum::Int(0)),
            [INT_FLAG, 0x80, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            encode(&Datum::Int(-1)),
            [INT_FLAG, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            encode(&Datum::Int(5)),
            [INT_FLAG, 0x80, 0, 0, 0, 0, 0, 0, 5]
        );
        assert_eq!(
            encode(&Datum::UInt(u64::MAX)),
            [UINT_FLAG, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        let ints = [i64::MIN, -70_000, -1, 0, 1, 255, 256, i64::MAX];
        for pair in ints.windows(2) {
            assert!(encode(&Datum::Int(pair[0])) < encode(&Datum::Int(pair[1])));
        }
    }

    #[test]
    fn bytes_golden() {
        let mut buf = Vec::new();
        encode_bytes(&mut buf, b"");
        assert_eq!(buf, [0, 0, 0, 0, 0, 0, 0, 0, 0xf7]);
        buf.clear();
        encode_bytes(&mut buf, b"abc");
        assert_eq!(buf, [b'a', b'b', b'c', 0, 0, 0, 0, 0, 0xfa]);
        buf.clear();
        encode_bytes(&mut buf, b"12345678");
        assert_eq!(
            buf,
            [b'1', b'2', b'3', b'4', b'5', b'6', b'7', b'8', 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xf7]
        );
        assert_eq!(buf.len(), encoded_bytes_len(8));
        let mut input = buf.as_slice();
        assert_eq!(decode_bytes(&mut input).expect("decode"), b"12345678");
        assert!(input.is_empty());
    }

    #[test]
    fn byte_strings_with_prefixes_and_extreme_bytes_order() {
        let strings: [&[u8]; 12] = [
            b"",
            b"\x00",
            b"\x00\x00",
            b"\x00\x00\x00\x00\x00\x00\x00\x00",
            b"\x00\x00\x00\x00\x00\x00\x00\x00\x00",
            b"\x00\x01",
            b"a",
            b"a\x00",
            b"abcdefgh",
            b"abcdefgh\x00",
            b"\xff",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        ];
        for pair in strings.windows(2) {
            let left = encode(&Datum::Bytes(pair[0].to_vec()));
            let right = encode(&Datum::Bytes(pair[1].to_vec()));
            assert!(left < right, "{:?} vs {:?}", pair[0], pair[1]);
            assert!(!right.starts_with(&left), "{:?} is a prefix", pair[0]);
        }
    }

    #[test]
    fn decimals_equal_in_sql_encode_equally() {
        let groups: [&[&str]; 4] = [
            &["0", "0.000", "-0", "-0.00"],
            &["1", "1.0", "1.00", "1.0000000000000000000000000000"],
            &["-12.5", "-12.50", "-12.500000"],
            &["100", "100.00"],
        ];
        for group in groups {
            let first = encode(&decimal(group[0]));
            for text in &group[1..] {
                assert_eq!(encode(&decimal(text)), first, "{text} vs {}", group[0]);
            }
        }
        assert_eq!(encode(&Datum::Float(-0.0)), encode(&Datum::Float(0.0)));
    }

    #[test]
    fn decimals_order_across_scales_and_signs() {
        let ordered = [
            "-79228162514264337593543950335",
            "-1000",
            "-999.99",
            "-100",
            "-12.5",
            "-1.23",
            "-1.2",
            "-1",
            "-0.123",
            "-0.12",
            "-0.0000000000000000000000000001",
            "0",
            "0.0000000000000000000000000001",
            "0.1",
            "0.1001",
            "0.12",
            "0.1203",
            "0.123",
            "1",
            "1.2",
            "1.23",
            "10",
            "12.5",
            "100",
            "1000.5",
            "79228162514264337593543950335",
        ];
        for pair in ordered.windows(2) {
            let left = encode(&decimal(pair[0]));
            let right = encode(&decimal(pair[1]));
            assert_eq!(
                left.cmp(&right),
                Ordering::Less,
                "{} vs {}",
                pair[0],
                pair[1]
            );
        }
    }

    #[test]
    fn floats_order_including_infinities() {
        let ordered = [
            f64::NEG_INFINITY,
            f64::MIN,
            -1.5,
            -f64::MIN_POSITIVE,
            0.0,
            5e-324,
            1.0,
            f64::MAX,
            f64::INFINITY,
        ];
        for pair in ordered.windows(2) {
            assert!(
                encode(&Datum::Float(pair[0])) < encode(&Datum::Float(pair[1])),
                "{pair:?}"
            );
        }
    }

    #[test]
    fn truncated_input_is_an_error_at_every_length() {
        let mut rng = seeded_rng("truncated_input_is_an_error_at_every_length");
        for _ in 0..2_000 {
            let datum = random_any_datum(&mut rng);
            let bytes = encode(&datum);
            for len in 0..bytes.len() {
                let mut input = &bytes[..len];
                assert!(
                    decode_key_datum(&mut input).is_err(),
                    "{datum:?} cut at {len}"
                );
                let mut input = &bytes[..len];
                assert!(
                    skip_key_datum(&mut input).is_err(),
                    "{datum:?} cut at {len}"
                );
            }
        }
    }

    #[test]
    fn corrupt_input_returns_errors() {
        let cases: [&[u8]; 12] = [
            &[0x02],
            &[0xfa],
            &[BYTES_FLAG, b'a', 0, 0, 0, 0, 0, 0, 0, 0xf6],
            &[BYTES_FLAG, b'a', 1, 0, 0, 0, 0, 0, 0, 0xf8],
            &[BYTES_FLAG, b'a', 0, 0, 0, 0, 0, 0, 0, 0x00],
            &[DECIMAL_FLAG, 0x07],
            &[DECIMAL_FLAG, DECIMAL_POSITIVE, 129, 0],
            &[DECIMAL_FLAG, DECIMAL_POSITIVE, 129, 101, 0],
            &[DECIMAL_FLAG, DECIMAL_POSITIVE, 129, 1, 0],
            &[DECIMAL_FLAG, DECIMAL_POSITIVE, 129, 11, 1, 0],
            &[DECIMAL_FLAG, DECIMAL_POSITIVE, 255, 11, 0],
            &[DATE_FLAG, 0xff, 0xff, 0xff, 0xff],
        ];
        for bytes in cases {
            let mut input = bytes;
            assert!(decode_key_datum(&mut input).is_err(), "{bytes:?} decoded");
        }
        let mut negative_zero_float = vec![FLOAT_FLAG];
        negative_zero_float.extend_from_slice(&(!SIGN_BIT_64).to_be_bytes());
        assert!(decode_all(&negative_zero_float).is_err());
        let mut bad_nanos = vec![DATETIME_FLAG];
        encode_comparable_i64(&mut bad_nanos, 0);
        bad_nanos.extend_from_slice(&u32::MAX.to_be_bytes());
        assert!(decode_all(&bad_nanos).is_err());
    }

    #[test]
    fn random_garbage_never_panics() {
        use rand::Rng;
        let mut rng = seeded_rng("random_garbage_never_panics");
        for _ in 0..100_000 {
            let len = rng.gen_range(0..40);
            let flag = [
                NULL_FLAG,
                BYTES_FLAG,
                INT_FLAG,
                DECIMAL_FLAG,
                DATE_FLAG,
                DATETIME_FLAG,
            ][rng.gen_range(0..6)];
            let mut bytes = vec![flag];
            bytes.extend((0..len).map(|_| rng.gen::<u8>()));
            let mut input = bytes.as_slice();
            if let Ok(datum) = decode_key_datum(&mut input) {
                // Whatever decodes must be canonical.
                let consumed = bytes.len() - input.len();
                assert_eq!(encode(&datum), bytes[..consumed], "{datum:?}");
            }
        }
    }
}
