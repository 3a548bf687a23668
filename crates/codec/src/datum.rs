//! The runtime value of one SQL cell.

use chrono::{NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;

/// One SQL value. Strings are bytes (binary collation, as TiDB's default); the column type
/// decides how a value is shown to a client.
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    Null,
    Int(i64),
    UInt(u64),
    Float(f64),
    Decimal(Decimal),
    Bytes(Vec<u8>),
    Date(NaiveDate),
    DateTime(NaiveDateTime),
    /// A TIME: a signed duration in microseconds (MySQL's range is ±838:59:59).
    Time(i64),
}
