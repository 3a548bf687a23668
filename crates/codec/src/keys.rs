//! The layout of row and index keys, TiDB's scheme.
//!
//! ```text
//! row key    t {table_id:8} _r {handle datums}
//! index key  t {table_id:8} _i {index_id:8} {value datums} [{handle datums}]
//! ```
//!
//! `table_id` and `index_id` are 8 bytes big-endian with the sign bit flipped, so ids order like
//! integers. The handle identifies a row: one [`Datum::Int`] for an integer primary key or a
//! hidden row id, the primary key's datums in order for a clustered composite key. Datums use
//! the [memcomparable](crate::memcomparable) encoding, so the rows of a table are a contiguous
//! key range ordered by primary key, and the entries of an index are a contiguous range ordered
//! by the indexed values. A unique index leaves the handle out of the key (it goes in the value);
//! a non-unique index appends it so that equal values still give distinct keys.

use strata_types::{IndexId, TableId};

use crate::error::{CodecError, Result};
use crate::memcomparable::{
    decode_comparable_i64, decode_key_datums, encode_comparable_i64, encode_key_datums, INT_FLAG,
};
use crate::Datum;

/// The first byte of every table key.
pub const TABLE_PREFIX: u8 = b't';
/// Separates the table id from the handle in a row key.
pub const RECORD_SEPARATOR: &[u8; 2] = b"_r";
/// Separates the table id from the index id in an index key.
pub const INDEX_SEPARATOR: &[u8; 2] = b"_i";

/// Length of [`table_prefix`]: `t` and the table id.
pub const TABLE_PREFIX_LEN: usize = 1 + 8;
/// Length of [`record_prefix`]: the table prefix and `_r`.
pub const RECORD_PREFIX_LEN: usize = TABLE_PREFIX_LEN + 2;
/// Length of [`index_prefix`]: the table prefix, `_i` and the index id.
pub const INDEX_PREFIX_LEN: usize = TABLE_PREFIX_LEN + 2 + 8;
/// Length of a row key whose handle is one integer: the record prefix, a flag and 8 bytes.
pub const ROW_KEY_INT_LEN: usize = RECORD_PREFIX_LEN + 1 + 8;

/// A half-open range of keys, `start <= key < end`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// The first key in the range.
    pub start: Vec<u8>,
    /// The first key after the range. Empty means the range has no upper bound.
    pub end: Vec<u8>,
}

impl KeyRange {
    /// Returns the range of every key that starts with `prefix`.
    pub fn prefix(prefix: Vec<u8>) -> KeyRange {
        let end = prefix_next(&prefix);
        KeyRange { start: prefix, end }
    }

    /// Returns whether `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.start.as_slice() <= key && (self.end.is_empty() || key < self.end.as_slice())
    }
}

/// Returns `t{table_id}`, the prefix of every key of the table.
pub fn table_prefix(table_id: TableId) -> Vec<u8> {
    let mut key = Vec::with_capacity(TABLE_PREFIX_LEN);
    push_table_prefix(&mut key, table_id);
    key
}

/// Returns `t{table_id}_r`, the prefix of every row key of the table.
pub fn record_prefix(table_id: TableId) -> Vec<u8> {
    let mut key = Vec::with_capacity(RECORD_PREFIX_LEN);
    push_record_prefix(&mut key, table_id);
    key
}

/// Returns the key of the row identified by `handle`.
pub fn row_key(table_id: TableId, handle: &[Datum]) -> Vec<u8> {
    let mut key = Vec::with_capacity(RECORD_PREFIX_LEN + 9 * handle.len());
    push_record_prefix(&mut key, table_id);
    encode_key_datums(&mut key, handle);
    key
}

/// Returns the key of the row whose handle is the integer `handle`; the same bytes as
/// `row_key(table_id, &[Datum::Int(handle)])` with one allocation of the exact size.
#[inline]
pub fn row_key_int(table_id: TableId, handle: i64) -> Vec<u8> {
    let mut key = Vec::with_capacity(ROW_KEY_INT_LEN);
    push_record_prefix(&mut key, table_id);
    key.push(INT_FLAG);
    encode_comparable_i64(&mut key, handle);
    key
}

/// Returns `t{table_id}_i{index_id}`, the prefix of every entry of the index.
pub fn index_prefix(table_id: TableId, index_id: IndexId) -> Vec<u8> {
    let mut key = Vec::with_capacity(INDEX_PREFIX_LEN);
    push_index_prefix(&mut key, table_id, index_id);
    key
}

/// Returns the key of an index entry: the index prefix, the encoded `values` and, for a
/// non-unique index, the encoded `handle` of the row.
pub fn index_key(
    table_id: TableId,
    index_id: IndexId,
    values: &[Datum],
    handle: Option<&[Datum]>,
) -> Vec<u8> {
    let datum_count = values.len() + handle.map_or(0, <[Datum]>::len);
    let mut key = Vec::with_capacity(INDEX_PREFIX_LEN + 9 * datum_count);
    push_index_prefix(&mut key, table_id, index_id);
    encode_key_datums(&mut key, values);
    if let Some(handle) = handle {
        encode_key_datums(&mut key, handle);
    }
    key
}

/// Returns the table id of any table key (row or index).
pub fn decode_table_id(key: &[u8]) -> Result<TableId> {
    let mut input = key;
    if input.first() != Some(&TABLE_PREFIX) {
        return Err(CodecError::WrongKeyKind { expected: "table" });
    }
    input = &input[1..];
    Ok(TableId(decode_comparable_i64(&mut input)?))
}

/// Returns whether `key` has the shape of a row key (`t{table_id}_r…`).
pub fn is_record_key(key: &[u8]) -> bool {
    key.len() >= RECORD_PREFIX_LEN
        && key[0] == TABLE_PREFIX
        && &key[TABLE_PREFIX_LEN..RECORD_PREFIX_LEN] == RECORD_SEPARATOR
}

/// Returns whether `key` has the shape of an index key (`t{table_id}_i{index_id}…`).
pub fn is_index_key(key: &[u8]) -> bool {
    key.len() >= INDEX_PREFIX_LEN
        && key[0] == TABLE_PREFIX
        && &key[TABLE_PREFIX_LEN..TABLE_PREFIX_LEN + 2] == INDEX_SEPARATOR
}

/// Decodes the handle of a row key, which must consist of exactly `handle_len` datums.
pub fn decode_row_key_handle(key: &[u8], handle_len: usize) -> Result<Vec<Datum>> {
    let mut input = record_key_rest(key)?;
    let handle = decode_key_datums(&mut input, handle_len)?;
    expect_end(input, "row key")?;
    Ok(handle)
}

/// Decodes the integer handle of a row key written by [`row_key_int`].
#[inline]
pub fn decode_row_key_int(key: &[u8]) -> Result<i64> {
    let rest = record_key_rest(key)?;
    let Some((&INT_FLAG, mut body)) = rest.split_first() else {
        return Err(CodecError::Invalid {
            what: "integer row handle",
        });
    };
    let handle = decode_comparable_i64(&mut body)?;
    expect_end(body, "row key")?;
    Ok(handle)
}

/// Returns the table and index ids of an index key.
pub fn decode_index_ids(key: &[u8]) -> Result<(TableId, IndexId)> {
    if !is_index_key(key) {
        return Err(CodecError::WrongKeyKind { expected: "index" });
    }
    let table_id = decode_table_id(key)?;
    let mut input = &key[TABLE_PREFIX_LEN + 2..];
    Ok((table_id, IndexId(decode_comparable_i64(&mut input)?)))
}

/// Decodes an index key into its `value_count` values and `handle_len` handle datums (zero for
/// a unique index, whose key holds no handle). The key must hold exactly that many datums.
pub fn decode_index_key(
    key: &[u8],
    value_count: usize,
    handle_len: usize,
) -> Result<(Vec<Datum>, Vec<Datum>)> {
    if !is_index_key(key) {
        return Err(CodecError::WrongKeyKind { expected: "index" });
    }
    let mut input = &key[INDEX_PREFIX_LEN..];
    let values = decode_key_datums(&mut input, value_count)?;
    let handle = decode_key_datums(&mut input, handle_len)?;
    expect_end(input, "index key")?;
    Ok((values, handle))
}

/// Returns the smallest key greater than every key that starts with `prefix`.
///
/// Trailing `0xff` bytes are dropped and the last remaining byte is incremented. If nothing
/// remains (`prefix` is empty or all `0xff`) no such key exists, and the result is empty, which
/// [`KeyRange`] reads as "no upper bound". Table keys start with `t`, so that never happens for
/// the keys of this module.
pub fn prefix_next(prefix: &[u8]) -> Vec<u8> {
    let Some(last) = prefix.iter().rposition(|&byte| byte != 0xff) else {
        return Vec::new();
    };
    let mut next = prefix[..=last].to_vec();
    next[last] += 1;
    next
}

/// Returns the range of every row key of the table.
pub fn record_range(table_id: TableId) -> KeyRange {
    KeyRange::prefix(record_prefix(table_id))
}

/// Returns the range of the row keys whose handle starts with `handle_prefix` (for a clustered
/// composite primary key, e.g. `WHERE pk1 = 1` on a key `(pk1, pk2)`).
pub fn row_prefix_range(table_id: TableId, handle_prefix: &[Datum]) -> KeyRange {
    KeyRange::prefix(row_key(table_id, handle_prefix))
}

/// Returns the range of every entry of the index.
pub fn index_range(table_id: TableId, index_id: IndexId) -> KeyRange {
    KeyRange::prefix(index_prefix(table_id, index_id))
}

/// Returns the range of the index entries whose values start with `values_prefix`, e.g.
/// `WHERE a = 1` on an index `(a, b)`. Because encoded datums are prefix-free, the range holds
/// exactly those entries, whatever follows the prefix.
pub fn index_prefix_range(
    table_id: TableId,
    index_id: IndexId,
    values_prefix: &[Datum],
) -> KeyRange {
    KeyRange::prefix(index_key(table_id, index_id, values_prefix, None))
}

/// Returns the exclusive end of [`index_prefix_range`]: the first key after every index entry
/// whose values start with `values_prefix`.
pub fn index_prefix_end(table_id: TableId, index_id: IndexId, values_prefix: &[Datum]) -> Vec<u8> {
    prefix_next(&index_key(table_id, index_id, values_prefix, None))
}

fn push_table_prefix(key: &mut Vec<u8>, table_id: TableId) {
    key.push(TABLE_PREFIX);
    encode_comparable_i64(key, table_id.0);
}

fn push_record_prefix(key: &mut Vec<u8>, table_id: TableId) {
    push_table_prefix(key, table_id);
    key.extend_from_slice(RECORD_SEPARATOR);
}

fn push_index_prefix(key: &mut Vec<u8>, table_id: TableId, index_id: IndexId) {
    push_table_prefix(key, table_id);
    key.extend_from_slice(INDEX_SEPARATOR);
    encode_comparable_i64(key, index_id.0);
}

/// Returns the part of a row key after `t{table_id}_r`.
fn record_key_rest(key: &[u8]) -> Result<&[u8]> {
    if !is_record_key(key) {
        return Err(CodecError::WrongKeyKind { expected: "row" });
    }
    Ok(&key[RECORD_PREFIX_LEN..])
}

fn expect_end(rest: &[u8], what: &'static str) -> Result<()> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(CodecError::TrailingBytes {
            what,
            count: rest.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;
    use crate::test_support::{
        random_any_datum, random_datum_or_null, seeded_rng, sql_cmp, Kind, KINDS,
    };

    const T1: TableId = TableId(1);
    const I2: IndexId = IndexId(2);

    #[test]
    fn row_key_int_golden() {
        let expected = [
            b't', 0x80, 0, 0, 0, 0, 0, 0, 1, b'_', b'r', 0x03, 0x80, 0, 0, 0, 0, 0, 0, 5,
        ];
        let key = row_key_int(T1, 5);
        assert_eq!(key, expected);
        assert_eq!(key.len(), ROW_KEY_INT_LEN);
        assert_eq!(key.capacity(), ROW_KEY_INT_LEN);
        assert_eq!(row_key(T1, &[Datum::Int(5)]), expected);
        assert_eq!(
            row_key_int(TableId(-1), -1),
            [
                b't', 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, b'_', b'r', 0x03, 0x7f, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff
            ]
        );
    }

    #[test]
    fn prefixes_golden() {
        assert_eq!(table_prefix(T1), [b't', 0x80, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(
            record_prefix(T1),
            [b't', 0x80, 0, 0, 0, 0, 0, 0, 1, b'_', b'r']
        );
        assert_eq!(
            index_prefix(T1, I2),
            [b't', 0x80, 0, 0, 0, 0, 0, 0, 1, b'_', b'i', 0x80, 0, 0, 0, 0, 0, 0, 2]
        );
        assert_eq!(
            record_range(T1),
            KeyRange {
                start: b"t\x80\0\0\0\0\0\0\x01_r".to_vec(),
                end: b"t\x80\0\0\0\0\0\0\x01_s".to_vec()
            }
        );
    }

    #[test]
    fn index_key_golden() {
        let key = index_key(
            T1,
            I2,
            &[Datum::Bytes(b"ab".to_vec()), Datum::Null],
            Some(&[Datum::Int(7)]),
        );
        let mut expected = index_prefix(T1, I2);
        expected.extend_from_slice(&[0x01, b'a', b'b', 0, 0, 0, 0, 0, 0, 0xf9]);
        expected.push(0x00);
        expected.extend_from_slice(&[0x03, 0x80, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(key, expected);
        let unique = index_key(T1, I2, &[Datum::Int(7)], None);
        assert_eq!(
            unique[INDEX_PREFIX_LEN..],
            [0x03, 0x80, 0, 0, 0, 0, 0, 0, 7]
        );
    }

    #[test]
    fn prefix_next_golden() {
        assert_eq!(prefix_next(b"ab"), b"ac");
        assert_eq!(prefix_next(&[0x01, 0xff, 0xff]), [0x02]);
        assert_eq!(prefix_next(&[0xff, 0xfe, 0xff]), [0xff, 0xff]);
        assert!(prefix_next(&[0xff, 0xff]).is_empty());
        assert!(prefix_next(b"").is_empty());
    }

    #[test]
    fn row_keys_round_trip() {
        let mut rng = seeded_rng("row_keys_round_trip");
        for _ in 0..5_000 {
            let handle = rng.gen::<i64>();
            let table_id = TableId(rng.gen_range(-5..5));
            let key = row_key_int(table_id, handle);
            assert_eq!(decode_row_key_int(&key), Ok(handle));
            assert_eq!(decode_row_key_handle(&key, 1), Ok(vec![Datum::Int(handle)]));
            assert_eq!(decode_table_id(&key), Ok(table_id));
            assert!(is_record_key(&key) && !is_index_key(&key));

            let composite = [
                random_datum_or_null(&mut rng, Kind::Bytes),
                random_datum_or_null(&mut rng, Kind::Int),
            ];
            let key = row_key(table_id, &composite);
            assert_eq!(decode_row_key_handle(&key, 2).expect("decode"), composite);
            assert!(decode_row_key_int(&key).is_err());
        }
    }

    #[test]
    fn index_keys_round_trip() {
        let mut rng = seeded_rng("index_keys_round_trip");
        for _ in 0..5_000 {
            let value_count = rng.gen_range(0..4);
            let handle_len = rng.gen_range(0..3);
            let values: Vec<Datum> = (0..value_count)
                .map(|_| random_any_datum(&mut rng))
                .collect();
            let handle: Vec<Datum> = (0..handle_len).map(|_| Datum::Int(rng.gen())).collect();
            let handle_arg = (handle_len > 0).then_some(handle.as_slice());
            let table_id = TableId(rng.gen());
            let index_id = IndexId(rng.gen());
            let key = index_key(table_id, index_id, &values, handle_arg);
            let (got_values, got_handle) =
                decode_index_key(&key, value_count, handle_len).expect("decode");
            assert_eq!(got_values.len(), value_count);
            for (got, want) in got_values.iter().zip(&values) {
                assert_eq!(
                    sql_cmp(got, want),
                    std::cmp::Ordering::Equal,
                    "{got:?} vs {want:?}"
                );
            }
            assert_eq!(got_handle, handle);
            assert_eq!(decode_index_ids(&key), Ok((table_id, index_id)));
            assert!(is_index_key(&key) && !is_record_key(&key));
            // Asking for more datums than the key holds, or fewer, is an error.
            assert!(decode_index_key(&key, value_count, handle_len + 1).is_err());
            if value_count + handle_len > 0 {
                let fewer = decode_index_key(&key, value_count + handle_len - 1, 0);
                assert!(matches!(fewer, Err(CodecError::TrailingBytes { .. })));
            }
        }
    }

    #[test]
    fn row_keys_of_a_table_sort_inside_its_record_range() {
        let mut rng = seeded_rng("row_keys_of_a_table_sort_inside_its_record_range");
        let table_ids = [i64::MIN, -1, 0, 1, 2, 0xff, 0x100, i64::MAX];
        for table_id in table_ids.map(TableId) {
            let range = record_range(table_id);
            assert_eq!(range.end, prefix_next(&record_prefix(table_id)));
            for _ in 0..2_000 {
                let handle_len = rng.gen_range(1..4);
                let handle: Vec<Datum> = (0..handle_len)
                    .map(|_| random_any_datum(&mut rng))
                    .collect();
                assert!(range.contains(&row_key(table_id, &handle)), "{handle:?}");
                assert!(range.contains(&row_key_int(table_id, rng.gen())));
                let index_key = index_key(table_id, IndexId(rng.gen()), &handle, None);
                assert!(!range.contains(&index_key));
                assert!(KeyRange::prefix(table_prefix(table_id)).contains(&index_key));
            }
            for other in table_ids
                .map(TableId)
                .into_iter()
                .filter(|&other| other != table_id)
            {
                assert!(!range.contains(&row_key_int(other, 0)));
                assert!(!range.contains(&row_key_int(other, i64::MAX)));
            }
        }
    }

    #[test]
    fn index_prefix_range_holds_exactly_the_matching_entries() {
        let mut rng = seeded_rng("index_prefix_range_holds_exactly_the_matching_entries");
        for first in KINDS {
            for _ in 0..2_000 {
                let a = random_datum_or_null(&mut rng, first);
                let range = index_prefix_range(T1, I2, std::slice::from_ref(&a));
                assert_eq!(
                    range.end,
                    index_prefix_end(T1, I2, std::slice::from_ref(&a))
                );
                let other_a = random_datum_or_null(&mut rng, first);
                let b = random_any_datum(&mut rng);
                let handle = [Datum::Int(rng.gen())];
                let key = index_key(T1, I2, &[other_a.clone(), b], Some(&handle));
                let matches = sql_cmp(&a, &other_a) == std::cmp::Ordering::Equal;
                assert_eq!(
                    range.contains(&key),
                    matches,
                    "a = {a:?}, entry a = {other_a:?}"
                );
                assert!(index_range(T1, I2).contains(&key));
            }
        }
    }

    #[test]
    fn handles_order_row_keys() {
        let mut rng = seeded_rng("handles_order_row_keys");
        for _ in 0..10_000 {
            let (left, right) = (
                rng.gen::<i64>() >> rng.gen_range(0..63),
                rng.gen::<i64>() >> rng.gen_range(0..63),
            );
            assert_eq!(
                row_key_int(T1, left).cmp(&row_key_int(T1, right)),
                left.cmp(&right)
            );
        }
    }

    #[test]
    fn corrupt_keys_return_errors() {
        let good = row_key_int(T1, 5);
        assert!(decode_row_key_int(&good[..good.len() - 1]).is_err());
        assert!(decode_row_key_int(&good[..RECORD_PREFIX_LEN]).is_err());
        let mut long = good.clone();
        long.push(0);
        assert!(matches!(
            decode_row_key_int(&long),
            Err(CodecError::TrailingBytes { .. })
        ));
        assert!(matches!(
            decode_row_key_handle(&long, 1),
            Err(CodecError::TrailingBytes { .. })
        ));
        let index = index_key(T1, I2, &[Datum::Int(1)], None);
        assert!(matches!(
            decode_row_key_handle(&index, 1),
            Err(CodecError::WrongKeyKind { .. })
        ));
        assert!(matches!(
            decode_index_key(&good, 1, 0),
            Err(CodecError::WrongKeyKind { .. })
        ));
        assert!(decode_table_id(b"x").is_err());
        assert!(decode_table_id(b"t\x80").is_err());
        for len in 0..index.len() {
            assert!(
                decode_index_key(&index[..len], 1, 0).is_err(),
                "cut at {len}"
            );
        }
        let mut rng = seeded_rng("corrupt_keys_return_errors");
        for _ in 0..50_000 {
            let mut key = index_prefix(T1, I2);
            key.extend((0..rng.gen_range(0..30)).map(|_| rng.gen::<u8>()));
            let _ = decode_index_key(&key, rng.gen_range(0..4), rng.gen_range(0..2));
            let mut key = record_prefix(T1);
            key.extend((0..rng.gen_range(0..30)).map(|_| rng.gen::<u8>()));
            let _ = decode_row_key_handle(&key, rng.gen_range(0..4));
            let _ = decode_row_key_int(&key);
        }
    }
}
