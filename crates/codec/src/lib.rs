//! strata-codec: how SQL values become the bytes of keys and values.
//!
//! Strata stores every table in one ordered key space, as TiDB does. A range scan over a primary
//! key or an index is a scan over a range of keys, which works only if the bytes of a key sort the
//! way its SQL values do. This crate owns that encoding and the layout built on it:
//!
//! - [`memcomparable`]: the order-preserving encoding of one [`Datum`] (a flag byte naming the
//!   type, then a body whose bytewise order is the value's SQL order; NULL first). It also
//!   exposes the group encoding of byte strings, which the MVCC layer reuses for user keys.
//! - [`keys`]: where rows and index entries live.
//! - [`row`]: the compact, exact format of a row's column values.
//!
//! ```text
//!   row key     't' table_id  '_r'  handle datums ............ -> row value (row module)
//!   index key   't' table_id  '_i'  index_id  value datums [handle datums] -> handle or empty
//!
//!   t 80..01 _r 03 80..00 05          row 5 of table 1
//!   t 80..01 _r 03 80..00 06          row 6 of table 1 (sorts after row 5)
//!   t 80..01 _i 80..01 00 03 80..00 07    index 1 of table 1: (NULL) of row 7 (NULL first)
//!   t 80..01 _i 80..01 01 61 00.. f8 03 80..00 05    index 1: ('a') of row 5
//!   t 80..02 ...                      table 2 starts after all of table 1
//! ```
//!
//! Invariants the rest of Strata relies on:
//!
//! - Order: for datums of one variant, encoded bytes compare like the values; a sequence of
//!   encoded datums compares like the tuple, because no encoding is a prefix of another.
//! - Ranges: every key of table `t` lies in [`keys::record_range`] or an index's
//!   [`keys::index_range`], and the entries matching a prefix of index values lie in
//!   [`keys::index_prefix_range`].
//! - Round trips: decoding gives back what was encoded. Row values are exact for every variant;
//!   keys are exact up to SQL equality (`-0.0` becomes `0.0`, a decimal loses trailing zeros).
//! - Decoders never panic: keys and values arrive from disk and the network, so malformed input
//!   returns a [`CodecError`].
//!
//! What this crate does not do: it knows nothing of schemas, collations or type conversion. The
//! caller converts a value to its column's type before encoding it (an `Int` and a `UInt` do not
//! compare by value), and substitutes defaults for columns a row does not hold.

pub mod datum;
pub mod error;
pub mod keys;
pub mod memcomparable;
pub mod row;
mod varint;

#[cfg(test)]
mod test_support;

pub use datum::Datum;
pub use error::CodecError;
pub use keys::{
    decode_index_key, decode_row_key_handle, index_key, index_prefix, prefix_next, record_prefix,
    row_key, row_key_int, table_prefix, KeyRange,
};
pub use memcomparable::{decode_bytes, decode_key_datum, encode_bytes, encode_key_datum};
pub use row::{decode_row, decode_row_all, decode_row_or, encode_row};
