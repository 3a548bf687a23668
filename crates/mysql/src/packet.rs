//! Packet framing, and the small encoders and the checked decoder every message is built from.
//!
//! A MySQL packet is a 3-byte little-endian payload length, a 1-byte sequence id and the
//! payload. A payload of 0xFFFFFF bytes or more travels as several packets of exactly 0xFFFFFF
//! bytes followed by a shorter one (possibly empty); the sequence id increases by one per packet
//! and wraps at 256. It restarts at 0 with every command.
//!
//! [`PacketReader`] joins split payloads and refuses one larger than its limit before reading
//! it. [`PacketWriter`] builds packets directly in one output buffer (the payload is written
//! after a reserved header which is patched afterwards) so that a whole command reply goes to
//! the socket in one `write` call; it flushes early only when the buffer passes
//! [`FLUSH_THRESHOLD_BYTES`], which bounds its memory for huge result sets.
//!
//! [`Cursor`] reads fields out of a received payload; every read is bounds-checked and returns
//! [`Truncated`] instead of panicking, because payloads come from untrusted clients.

use std::io::{self, Read, Write};

use crate::error::{codes, ConnectionError};

/// The largest payload one physical packet carries; a payload this long or longer is split.
pub const MAX_CHUNK_BYTES: usize = 0xFF_FFFF;

/// The output buffer size at which [`PacketWriter`] writes to the socket before the reply ends.
pub const FLUSH_THRESHOLD_BYTES: usize = 1 << 20;

/// How much of a claimed payload length is reserved up front; the rest grows as bytes arrive,
/// so a client that claims a large packet and sends nothing does not make the server allocate.
const RESERVE_AHEAD_BYTES: usize = 64 << 10;

/// Reads packets from a byte stream, joining split payloads.
pub struct PacketReader<R> {
    inner: R,
    max_payload_bytes: usize,
    sequence: u8,
}

impl<R: Read> PacketReader<R> {
    /// Creates a reader that refuses payloads longer than `max_payload_bytes`.
    pub fn new(inner: R, max_payload_bytes: usize) -> PacketReader<R> {
        PacketReader {
            inner,
            max_payload_bytes,
            sequence: 0,
        }
    }

    /// Changes the payload limit (the handshake uses a small one, commands the configured one).
    pub fn set_max_payload_bytes(&mut self, max_payload_bytes: usize) {
        self.max_payload_bytes = max_payload_bytes;
    }

    /// Returns the sequence id the next packet must carry.
    pub fn sequence(&self) -> u8 {
        self.sequence
    }

    /// Sets the sequence id the next packet must carry (0 before a command).
    pub fn set_sequence(&mut self, sequence: u8) {
        self.sequence = sequence;
    }

    /// Returns the underlying stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Replaces the contents of `payload` with the next payload. Returns `Ok(false)` when the
    /// peer closed the stream cleanly between packets.
    pub fn read_payload(&mut self, payload: &mut Vec<u8>) -> Result<bool, ConnectionError> {
        payload.clear();
        loop {
            let mut header = [0u8; 4];
            if !read_header(&mut self.inner, &mut header, payload.is_empty())? {
                return Ok(false);
            }
            let chunk_bytes = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            if header[3] != self.sequence {
                return Err(ConnectionError::Fatal(codes::packets_out_of_order()));
            }
            self.sequence = self.sequence.wrapping_add(1);
            if payload.len() + chunk_bytes > self.max_payload_bytes {
                return Err(ConnectionError::Fatal(codes::packet_too_large()));
            }
            payload.reserve(chunk_bytes.min(RESERVE_AHEAD_BYTES));
            let read = (&mut self.inner)
                .take(chunk_bytes as u64)
                .read_to_end(payload)?;
            if read != chunk_bytes {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
            if chunk_bytes < MAX_CHUNK_BYTES {
                return Ok(true);
            }
        }
    }
}

/// Fills `header`; returns `Ok(false)` on a clean end of stream before its first byte when
/// `at_packet_start` (a split payload must not end there).
fn read_header(
    inner: &mut impl Read,
    header: &mut [u8; 4],
    at_packet_start: bool,
) -> io::Result<bool> {
    let mut filled = 0;
    while filled < header.len() {
        match inner.read(&mut header[filled..]) {
            Ok(0) if filled == 0 && at_packet_start => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Writes packets into one buffer and sends it to the stream on [`PacketWriter::flush`].
pub struct PacketWriter<W: Write> {
    inner: W,
    buffer: Vec<u8>,
    sequence: u8,
}

impl<W: Write> PacketWriter<W> {
    /// Creates a writer whose first packet carries sequence id 0.
    pub fn new(inner: W) -> PacketWriter<W> {
        PacketWriter {
            inner,
            buffer: Vec::with_capacity(16 << 10),
            sequence: 0,
        }
    }

    /// Returns the sequence id the next packet will carry.
    pub fn sequence(&self) -> u8 {
        self.sequence
    }

    /// Sets the sequence id of the next packet.
    pub fn set_sequence(&mut self, sequence: u8) {
        self.sequence = sequence;
    }

    /// Returns the underlying stream.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Returns the underlying stream, mutably (tests read what was written).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Appends one packet whose payload `build` writes into the buffer it is given.
    pub fn write_with(&mut self, build: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let start = self.buffer.len();
        self.buffer.extend_from_slice(&[0; 4]);
        build(&mut self.buffer);
        let payload_bytes = self.buffer.len() - start - 4;
        if payload_bytes < MAX_CHUNK_BYTES {
            self.patch_header(start, payload_bytes);
        } else {
            let payload = self.buffer.split_off(start + 4);
            self.buffer.truncate(start);
            self.write_split(&payload);
        }
        if self.buffer.len() >= FLUSH_THRESHOLD_BYTES {
            self.inner.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Appends one packet with the given payload.
    pub fn write_packet(&mut self, payload: &[u8]) -> io::Result<()> {
        self.write_with(|buffer| buffer.extend_from_slice(payload))
    }

    /// Sends everything buffered to the stream.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buffer.is_empty() {
            self.inner.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        if self.buffer.capacity() > FLUSH_THRESHOLD_BYTES * 2 {
            self.buffer.shrink_to(16 << 10);
        }
        self.inner.flush()
    }

    fn patch_header(&mut self, start: usize, payload_bytes: usize) {
        let length = (payload_bytes as u32).to_le_bytes();
        self.buffer[start..start + 3].copy_from_slice(&length[..3]);
        self.buffer[start + 3] = self.sequence;
        self.sequence = self.sequence.wrapping_add(1);
    }

    /// Writes a payload of at least [`MAX_CHUNK_BYTES`] as full chunks plus a shorter last one.
    fn write_split(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let chunk = &rest[..rest.len().min(MAX_CHUNK_BYTES)];
            let start = self.buffer.len();
            self.buffer.extend_from_slice(&[0; 4]);
            self.buffer.extend_from_slice(chunk);
            self.patch_header(start, chunk.len());
            rest = &rest[chunk.len()..];
            if chunk.len() < MAX_CHUNK_BYTES {
                return;
            }
        }
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc_int(buffer: &mut Vec<u8>, value: u64) {
    match value {
        0..=0xFA => buffer.push(value as u8),
        0xFB..=0xFFFF => {
            buffer.push(0xFC);
            buffer.extend_from_slice(&(value as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            buffer.push(0xFD);
            buffer.extend_from_slice(&(value as u32).to_le_bytes()[..3]);
        }
        _ => {
            buffer.push(0xFE);
            buffer.extend_from_slice(&value.to_le_bytes());
        }
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(buffer: &mut Vec<u8>, bytes: &[u8]) {
    put_lenenc_int(buffer, bytes.len() as u64);
    buffer.extend_from_slice(bytes);
}

/// Appends a NUL-terminated string.
pub fn put_nul_bytes(buffer: &mut Vec<u8>, bytes: &[u8]) {
    buffer.extend_from_slice(bytes);
    buffer.push(0);
}

/// A payload ended before a field it should contain, or a field was invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truncated;

/// Reads fields from a payload front to back, checking every length.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// Creates a cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data }
    }

    /// Returns the number of unread bytes.
    pub fn remaining(&self) -> usize {
        self.data.len()
    }

    /// Returns whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Reads the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Truncated> {
        if n > self.data.len() {
            return Err(Truncated);
        }
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        Ok(head)
    }

    /// Reads a fixed-size array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], Truncated> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    /// Reads everything that is left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }

    pub fn u8(&mut self) -> Result<u8, Truncated> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16, Truncated> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub fn u24(&mut self) -> Result<u32, Truncated> {
        let [a, b, c] = self.array()?;
        Ok(u32::from_le_bytes([a, b, c, 0]))
    }

    pub fn u32(&mut self) -> Result<u32, Truncated> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64, Truncated> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Reads a length-encoded integer; the NULL marker (0xFB) and 0xFF are invalid here.
    pub fn lenenc_int(&mut self) -> Result<u64, Truncated> {
        match self.u8()? {
            first @ 0..=0xFA => Ok(u64::from(first)),
            0xFC => Ok(u64::from(self.u16()?)),
            0xFD => Ok(u64::from(self.u24()?)),
            0xFE => self.u64(),
            _ => Err(Truncated),
        }
    }

    /// Reads a length-encoded string.
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], Truncated> {
        let length = self.lenenc_int()?;
        let length = usize::try_from(length).map_err(|_| Truncated)?;
        self.take(length)
    }

    /// Reads a NUL-terminated string (without the NUL); the terminator must be present.
    pub fn nul_bytes(&mut self) -> Result<&'a [u8], Truncated> {
        let end = self.data.iter().position(|&b| b == 0).ok_or(Truncated)?;
        let bytes = self.take(end)?;
        self.take(1)?;
        Ok(bytes)
    }

    /// Reads a NUL-terminated string, or the rest of the payload if the terminator is missing
    /// (some clients omit the last one).
    pub fn nul_bytes_or_rest(&mut self) -> &'a [u8] {
        match self.nul_bytes() {
            Ok(bytes) => bytes,
            Err(Truncated) => self.rest(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(payload: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut writer = PacketWriter::new(Vec::new());
        writer.write_packet(payload).unwrap();
        writer.write_packet(b"next").unwrap();
        writer.flush().unwrap();
        let wire = writer.get_ref().clone();
        let mut reader = PacketReader::new(&wire[..], 64 << 20);
        let mut first = Vec::new();
        assert!(reader.read_payload(&mut first).unwrap());
        let mut second = Vec::new();
        assert!(reader.read_payload(&mut second).unwrap());
        assert_eq!(second, b"next");
        assert!(
            !reader.read_payload(&mut second).unwrap(),
            "clean end of stream"
        );
        (wire, first)
    }

    #[test]
    fn small_packet_round_trip() {
        let (wire, payload) = round_trip(b"\x03select 1");
        assert_eq!(&wire[..4], &[9, 0, 0, 0]);
        assert_eq!(&wire[13..17], &[4, 0, 0, 1]);
        assert_eq!(payload, b"\x03select 1");
    }

    #[test]
    fn empty_packet_round_trip() {
        let (wire, payload) = round_trip(b"");
        assert_eq!(&wire[..4], &[0, 0, 0, 0]);
        assert!(payload.is_empty());
    }

    #[test]
    fn payload_over_16_mib_is_split_and_joined() {
        let payload: Vec<u8> = (0..MAX_CHUNK_BYTES + 1000)
            .map(|i| (i % 251) as u8)
            .collect();
        let (wire, joined) = round_trip(&payload);
        assert_eq!(&wire[..4], &[0xFF, 0xFF, 0xFF, 0]);
        let second = 4 + MAX_CHUNK_BYTES;
        assert_eq!(&wire[second..second + 4], &[0xE8, 0x03, 0, 1]);
        assert_eq!(joined, payload);
    }

    #[test]
    fn payload_of_exactly_one_chunk_ends_with_an_empty_packet() {
        let payload = vec![7u8; MAX_CHUNK_BYTES];
        let (wire, joined) = round_trip(&payload);
        let second = 4 + MAX_CHUNK_BYTES;
        assert_eq!(&wire[second..second + 4], &[0, 0, 0, 1]);
        assert_eq!(
            &wire[second + 4..second + 8],
            &[4, 0, 0, 2],
            "the next packet follows"
        );
        assert_eq!(joined, payload);
    }

    #[test]
    fn oversized_packet_is_refused_before_reading_it() {
        let wire = [0xFF, 0xFF, 0x00, 0];
        let mut reader = PacketReader::new(&wire[..], 1024);
        let error = reader.read_payload(&mut Vec::new()).unwrap_err();
        assert!(matches!(error, ConnectionError::Fatal(e) if e.code == 1153));
    }

    #[test]
    fn out_of_order_and_truncated_packets_are_errors() {
        let wire = [1, 0, 0, 5, 0x0e];
        let mut reader = PacketReader::new(&wire[..], 1024);
        let error = reader.read_payload(&mut Vec::new()).unwrap_err();
        assert!(matches!(error, ConnectionError::Fatal(e) if e.code == 1156));

        let wire = [9, 0, 0, 0, 0x03, b's'];
        let mut reader = PacketReader::new(&wire[..], 1024);
        assert!(matches!(
            reader.read_payload(&mut Vec::new()),
            Err(ConnectionError::Io(_))
        ));

        let wire = [9, 0];
        let mut reader = PacketReader::new(&wire[..], 1024);
        assert!(matches!(
            reader.read_payload(&mut Vec::new()),
            Err(ConnectionError::Io(_))
        ));
    }

    #[test]
    fn sequence_ids_continue_and_wrap() {
        let mut writer = PacketWriter::new(Vec::new());
        writer.set_sequence(255);
        writer.write_packet(b"a").unwrap();
        writer.write_packet(b"b").unwrap();
        writer.flush().unwrap();
        assert_eq!(writer.get_ref()[3], 255);
        assert_eq!(writer.get_ref()[8], 0);
    }

    #[test]
    fn lenenc_integers_round_trip() {
        for value in [
            0,
            0xFA,
            0xFB,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut buffer = Vec::new();
            put_lenenc_int(&mut buffer, value);
            let mut cursor = Cursor::new(&buffer);
            assert_eq!(cursor.lenenc_int(), Ok(value));
            assert!(cursor.is_empty());
        }
    }

    #[test]
    fn cursor_never_reads_past_the_end() {
        let mut cursor = Cursor::new(&[0xFE, 1, 2]);
        assert_eq!(cursor.lenenc_int(), Err(Truncated));
        let mut cursor = Cursor::new(&[0xFC, 0xFF, 0xFF, b'a']);
        assert_eq!(cursor.lenenc_bytes(), Err(Truncated));
        let mut cursor = Cursor::new(b"abc");
        assert_eq!(cursor.nul_bytes(), Err(Truncated));
        assert_eq!(cursor.nul_bytes_or_rest(), b"abc");
        let mut cursor = Cursor::new(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(cursor.lenenc_bytes(), Err(Truncated));
    }
}
