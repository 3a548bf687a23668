//! The one error type of the crate.
//!
//! Every variant means the same thing to a caller: the bytes handed to a decoder are not a valid
//! encoding of what the caller asked for. They come from disk or the network, so a decoder never
//! panics on them; it returns one of these, and the caller treats the key or value as corrupt
//! (or, for [`CodecError::WrongKeyKind`], as belonging to another kind of key).

/// Why some bytes could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The input ended before a complete `what` could be read.
    #[error("corrupt encoding: input ends inside {what}")]
    Truncated { what: &'static str },
    /// A type tag or flag byte names no known type.
    #[error("corrupt encoding: unknown {what} tag {tag:#04x}")]
    UnknownTag { what: &'static str, tag: u8 },
    /// The bytes are complete but do not form a valid (canonical) `what`.
    #[error("corrupt encoding: invalid {what}")]
    Invalid { what: &'static str },
    /// A whole `what` was decoded but `count` bytes were left over.
    #[error("corrupt encoding: {count} trailing bytes after {what}")]
    TrailingBytes { what: &'static str, count: usize },
    /// The key does not start like a key of the `expected` kind (`t{id}_r` or `t{id}_i{id}`).
    #[error("not a {expected} key")]
    WrongKeyKind { expected: &'static str },
    /// The row value was written by a format version this code does not know.
    #[error("unsupported row format version {0}")]
    UnsupportedRowVersion(u8),
}

/// The result of a decoder.
pub type Result<T, E = CodecError> = std::result::Result<T, E>;
