//! A connection's socket as the driver uses it: blocking reads and writes with timeouts, on an
//! OS thread ([`TcpStream`], [`UnixStream`]) or in a fiber ([`FiberSocket`]).
//!
//! A fiber's socket is non-blocking and registered with the fiber thread's runtime: a read
//! that finds no bytes suspends the fiber until the socket is readable (or the timeout runs
//! out), so the thread serves other connections meanwhile.

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use tokio::io::Interest;
use tokio::runtime::Handle;

/// What the connection driver needs of a socket. Implemented by shared references, which the
/// driver copies into its packet reader and writer.
pub(crate) trait Socket: Copy + Read + Write {
    fn set_read_timeout(self, timeout: Option<Duration>) -> io::Result<()>;
    fn set_write_timeout(self, timeout: Option<Duration>) -> io::Result<()>;
    fn set_nodelay(self, nodelay: bool) -> io::Result<()>;
    fn shutdown(self);

    /// Whether the peer is on this machine through the Unix socket.
    fn is_local(self) -> bool {
        false
    }
}

impl Socket for &TcpStream {
    fn set_read_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }

    fn set_write_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_write_timeout(self, timeout)
    }

    fn set_nodelay(self, nodelay: bool) -> io::Result<()> {
        TcpStream::set_nodelay(self, nodelay)
    }

    fn shutdown(self) {
        let _ = TcpStream::shutdown(self, Shutdown::Both);
    }
}

impl Socket for &UnixStream {
    fn is_local(self) -> bool {
        true
    }

    fn set_read_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        UnixStream::set_read_timeout(self, timeout)
    }

    fn set_write_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        UnixStream::set_write_timeout(self, timeout)
    }

    /// A local socket has no Nagle delay to turn off.
    fn set_nodelay(self, _nodelay: bool) -> io::Result<()> {
        Ok(())
    }

    fn shutdown(self) {
        let _ = UnixStream::shutdown(self, Shutdown::Both);
    }
}

/// A socket read and written from a fiber.
pub(crate) struct FiberSocket {
    stream: tokio::net::TcpStream,
    /// The same socket, for a shutdown (the runtime's stream has no blocking one).
    std_stream: TcpStream,
    runtime: Handle,
    read_timeout: Cell<Option<Duration>>,
    write_timeout: Cell<Option<Duration>>,
}

impl FiberSocket {
    /// Registers `stream` with the runtime of the calling fiber's thread.
    pub(crate) fn new(stream: TcpStream) -> io::Result<FiberSocket> {
        stream.set_nonblocking(true)?;
        let std_stream = stream.try_clone()?;
        Ok(FiberSocket {
            stream: tokio::net::TcpStream::from_std(stream)?,
            std_stream,
            runtime: Handle::current(),
            read_timeout: Cell::new(None),
            write_timeout: Cell::new(None),
        })
    }

    /// Suspends the fiber until the socket is ready for `interest`; a timeout is reported as
    /// a blocking socket reports it (`WouldBlock`).
    fn wait(&self, interest: Interest, timeout: Option<Duration>) -> io::Result<()> {
        let ready = self.stream.ready(interest);
        let ready = match timeout {
            None => strata_fiber::block_on(&self.runtime, ready),
            Some(timeout) => {
                strata_fiber::block_on(&self.runtime, tokio::time::timeout(timeout, ready))
                    .map_err(|_| io::Error::new(io::ErrorKind::WouldBlock, "socket timed out"))?
            }
        };
        ready.map(drop)
    }
}

impl Read for &FiberSocket {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.stream.try_read(buffer) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait(Interest::READABLE, self.read_timeout.get())?
                }
                result => return result,
            }
        }
    }
}

impl Write for &FiberSocket {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        loop {
            match self.stream.try_write(bytes) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait(Interest::WRITABLE, self.write_timeout.get())?
                }
                result => return result,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Socket for &FiberSocket {
    fn set_read_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        self.read_timeout.set(timeout);
        Ok(())
    }

    fn set_write_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        self.write_timeout.set(timeout);
        Ok(())
    }

    fn set_nodelay(self, nodelay: bool) -> io::Result<()> {
        self.stream.set_nodelay(nodelay)
    }

    fn shutdown(self) {
        let _ = self.std_stream.shutdown(Shutdown::Both);
    }
}
