//! Length-prefixed frames of protobuf messages, for the point-read connection between a SQL
//! node and a KV node (see `GetBatch` in `proto/kv.proto`). That connection carries the
//! hottest request of the cluster, one small message each way per read, and gRPC's HTTP/2
//! framing and its tasks cost more CPU per message there than the read itself.
//!
//! ```text
//!   client: READ_STREAM_PREFACE, then GetBatch frames; server: GetAnswers frames
//!   frame:  u32 length, little-endian | the message's protobuf bytes
//! ```
//!
//! The connection goes to the KV node's gRPC port: the server tells it from an HTTP/2 one by
//! its first bytes ([`READ_STREAM_PREFACE`]; HTTP/2 starts with `PRI * HTTP/2.0`).

use prost::Message;

/// The first bytes a client sends on a point-read connection.
pub const READ_STREAM_PREFACE: &[u8; 16] = b"STRATA-READS/1\r\n";

/// The bytes of a frame's length prefix.
pub const FRAME_HEADER_BYTES: usize = 4;

/// The largest frame either side sends or accepts: a batch of the most point reads one
/// message carries, with their keys, or their answers with the values, stays well under it.
pub const FRAME_MAX_BYTES: usize = crate::MAX_MESSAGE_BYTES;

/// Why a frame could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The length prefix is over [`FRAME_MAX_BYTES`].
    TooLarge(usize),
    /// The bytes are not the message.
    Malformed(String),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::TooLarge(n) => write!(f, "a frame of {n} bytes is over {FRAME_MAX_BYTES}"),
            FrameError::Malformed(why) => write!(f, "a malformed frame: {why}"),
        }
    }
}

/// Appends `message` to `out` as one frame.
pub fn encode_frame(message: &impl Message, out: &mut Vec<u8>) {
    let len = message.encoded_len();
    out.reserve(FRAME_HEADER_BYTES + len);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    message
        .encode(out)
        .expect("a Vec grows to take any message");
}

/// The first whole frame at the start of `buffer`, decoded, and how many bytes it took; `None`
/// while the frame is not all there yet.
pub fn decode_frame<M: Message + Default>(buffer: &[u8]) -> Result<Option<(M, usize)>, FrameError> {
    let Some(header) = buffer.get(..FRAME_HEADER_BYTES) else {
        return Ok(None);
    };
    let len = u32::from_le_bytes(header.try_into().expect("four bytes")) as usize;
    if len > FRAME_MAX_BYTES {
        return Err(FrameError::TooLarge(len));
    }
    let Some(body) = buffer.get(FRAME_HEADER_BYTES..FRAME_HEADER_BYTES + len) else {
        return Ok(None);
    };
    let message = M::decode(body).map_err(|e| FrameError::Malformed(e.to_string()))?;
    Ok(Some((message, FRAME_HEADER_BYTES + len)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv as pb;

    fn batch(keys: &[&[u8]]) -> pb::GetBatch {
        pb::GetBatch {
            gets: keys
                .iter()
                .enumerate()
                .map(|(i, key)| pb::TaggedGet {
                    id: i as u64 + 1,
                    request: Some(pb::GetRequest {
                        key: key.to_vec(),
                        ts: 7,
                        ..Default::default()
                    }),
                })
                .collect(),
        }
    }

    #[test]
    fn frames_decode_back_one_after_another_and_not_before_they_are_whole() {
        let (first, second) = (batch(&[b"a", b"bb"]), batch(&[]));
        let mut bytes = Vec::new();
        encode_frame(&first, &mut bytes);
        let first_len = bytes.len();
        encode_frame(&second, &mut bytes);
        for cut in 0..first_len {
            assert_eq!(
                decode_frame::<pb::GetBatch>(&bytes[..cut]),
                Ok(None),
                "cut {cut}"
            );
        }
        let (decoded, used) = decode_frame::<pb::GetBatch>(&bytes).unwrap().unwrap();
        assert_eq!((decoded, used), (first, first_len));
        let (decoded, used) = decode_frame::<pb::GetBatch>(&bytes[used..])
            .unwrap()
            .unwrap();
        assert_eq!((decoded, used), (second, FRAME_HEADER_BYTES));
    }

    #[test]
    fn an_oversized_or_malformed_frame_is_an_error() {
        let mut bytes = ((FRAME_MAX_BYTES + 1) as u32).to_le_bytes().to_vec();
        assert_eq!(
            decode_frame::<pb::GetBatch>(&bytes),
            Err(FrameError::TooLarge(FRAME_MAX_BYTES + 1))
        );
        bytes = vec![2, 0, 0, 0, 0xff, 0xff];
        assert!(matches!(
            decode_frame::<pb::GetBatch>(&bytes),
            Err(FrameError::Malformed(_))
        ));
    }
}
