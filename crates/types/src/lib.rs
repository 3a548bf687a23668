//! The shared vocabulary of Strata's layers: timestamps, keys and the small value types that
//! every crate names.
//!
//! Nothing here knows about SQL, RocksDB or the network. A [`Timestamp`] is a hybrid logical
//! clock value handed out by the timestamp oracle: the physical milliseconds since the Unix epoch
//! in the high bits and an 18-bit logical counter in the low bits, as TiDB's TSO does, so that
//! timestamps compare in the order they were issued.

use std::fmt;

pub mod deadlock;

/// Bits of a [`Timestamp`] that hold the logical counter.
pub const TIMESTAMP_LOGICAL_BITS: u32 = 18;

/// A point in the transaction order, issued by the timestamp oracle.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// The smallest timestamp; no committed version is older.
    pub const ZERO: Timestamp = Timestamp(0);
    /// The largest timestamp; a read at `MAX` sees every committed version.
    pub const MAX: Timestamp = Timestamp(u64::MAX);

    /// Builds a timestamp from physical milliseconds and a logical counter.
    pub fn compose(physical_ms: u64, logical: u64) -> Timestamp {
        Timestamp((physical_ms << TIMESTAMP_LOGICAL_BITS) | logical)
    }

    /// Returns the physical part, in milliseconds since the Unix epoch.
    pub fn physical_ms(self) -> u64 {
        self.0 >> TIMESTAMP_LOGICAL_BITS
    }

    /// Returns the next timestamp in the order.
    pub fn next(self) -> Timestamp {
        Timestamp(self.0 + 1)
    }

    /// Returns the raw 64-bit value.
    pub fn into_inner(self) -> u64 {
        self.0
    }

    /// Milliseconds of this machine's wall clock since the timestamp was issued (zero when
    /// the clock is behind it).
    pub fn elapsed_ms(self) -> u64 {
        wall_clock_ms().saturating_sub(self.physical_ms())
    }
}

/// Milliseconds since the Unix epoch on this machine's wall clock: the scale of
/// [`Timestamp::physical_ms`], against which locks' times to live are measured.
pub fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ts{}", self.0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A user key as the transaction layer sees it: raw bytes, ordered bytewise.
pub type Key = Vec<u8>;

/// A value stored under a [`Key`].
pub type Value = Vec<u8>;

/// Identifies a table in the catalog; part of every row and index key.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct TableId(pub i64);

/// Identifies an index within its table.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct IndexId(pub i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_orders_by_physical_then_logical() {
        let a = Timestamp::compose(1_000, 5);
        let b = Timestamp::compose(1_000, 6);
        let c = Timestamp::compose(1_001, 0);
        assert!(a < b && b < c);
        assert_eq!(c.physical_ms(), 1_001);
        assert_eq!(a.next(), b);
    }
}
