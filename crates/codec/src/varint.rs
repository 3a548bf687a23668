//! LEB128 variable-length integers for the row format: seven bits per byte, least significant
//! group first, the high bit set on every byte but the last. Signed values are zigzag-mapped first
//! so that small negative numbers stay short.

use crate::error::{CodecError, Result};
use crate::memcomparable::take_byte;

/// Longest LEB128 encoding of a `u128`; the row format uses it for decimal mantissas.
const U128_LEN_MAX: u32 = 19;

/// Appends `value` as LEB128.
pub(crate) fn write_u64(buf: &mut Vec<u8>, value: u64) {
    write_u128(buf, u128::from(value));
}

/// Appends `value` zigzag-mapped, as LEB128.
pub(crate) fn write_i64(buf: &mut Vec<u8>, value: i64) {
    write_u64(buf, ((value << 1) ^ (value >> 63)) as u64);
}

/// Appends `value` as LEB128.
pub(crate) fn write_u128(buf: &mut Vec<u8>, mut value: u128) {
    while value >= 0x80 {
        buf.push(value as u8 | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

/// Reads a LEB128 `u64` from the front of `input`.
pub(crate) fn read_u64(input: &mut &[u8]) -> Result<u64> {
    // A one-byte fast path: column ids, tags' small payloads and short lengths.
    if let Some((&byte, rest)) = input.split_first() {
        if byte < 0x80 {
            *input = rest;
            return Ok(u64::from(byte));
        }
    }
    u64::try_from(read_u128(input)?).map_err(|_| CodecError::Invalid { what: "varint" })
}

/// Reads a zigzag-mapped LEB128 `i64` from the front of `input`.
pub(crate) fn read_i64(input: &mut &[u8]) -> Result<i64> {
    let zigzag = read_u64(input)?;
    Ok((zigzag >> 1) as i64 ^ -((zigzag & 1) as i64))
}

/// Reads a LEB128 `u128` from the front of `input`.
pub(crate) fn read_u128(input: &mut &[u8]) -> Result<u128> {
    let mut value: u128 = 0;
    for index in 0..U128_LEN_MAX {
        let byte = take_byte(input, "varint")?;
        let bits = u128::from(byte & 0x7f);
        let shift = 7 * index;
        if shift == 126 && bits > 0b11 {
            return Err(CodecError::Invalid { what: "varint" });
        }
        value |= bits << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(CodecError::Invalid { what: "varint" })
}
