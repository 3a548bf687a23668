//! The driver: a listener, an accept loop, and one OS thread or one fiber per connection.
//!
//! Each connection runs the handshake, opens a backend session, then loops: read one command
//! payload, let `Connection::handle` build the reply, flush it. Reads and writes block (the
//! thread, or only the fiber) with timeouts: [`CONNECT_TIMEOUT`] until the client is
//! authenticated, [`WAIT_TIMEOUT`] between commands (MySQL's `wait_timeout`), [`WRITE_TIMEOUT`]
//! for replies. A panic in a connection is caught, logged and ends that connection only.
//!
//! Threads are the default. A server whose backend waits for the network (the SQL node of a
//! cluster) runs its connections as fibers on the thread that carries their RPCs
//! ([`MysqlServer::on_fibers`]), so that a read costs no hand-off between threads.
//!
//! [`ServerState`] is what connection threads share: the registry of open connections (used for
//! `max_connections`, COM_PROCESS_KILL, COM_STATISTICS and shutdown) and the shutdown flag.

use std::collections::HashMap;
use std::io::{self, BufReader};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use strata_fiber::FiberPool;
use strata_sql::Client;
use tracing::{debug, error, warn};

use crate::backend::{Backend, BackendSession};
use crate::conn::{Connection, Flow};
use crate::error::{codes, ConnectionError};
use crate::handshake::{authenticate, Greeting, HANDSHAKE_MAX_PAYLOAD_BYTES};
use crate::packet::{PacketReader, PacketWriter};
use crate::reply::{encode_err, encode_ok, OkPacket};
use crate::socket::{FiberSocket, Socket};

/// How long a client may take to complete the handshake (MySQL's `connect_timeout`).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an authenticated connection may stay idle or stall mid-packet (MySQL's
/// `wait_timeout`).
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(8 * 3600);

/// How long a reply may wait for the client to read (MySQL's `net_write_timeout`).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long [`MysqlServer::run`] waits for connection threads to end after a shutdown.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The read buffer of one connection.
const READ_BUFFER_BYTES: usize = 16 << 10;

/// A received payload buffer above this size is released after its command.
const KEPT_PAYLOAD_CAPACITY_BYTES: usize = 1 << 20;

/// How long the accept loop pauses after an error such as running out of file descriptors.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// How the server listens and whom it lets in.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// Connections beyond this many are refused with 1040.
    pub max_connections: usize,
    /// Accepted users and their plain-text passwords.
    pub users: Vec<(String, String)>,
    /// The largest command payload accepted; larger ones close the connection with 1153.
    pub max_allowed_packet: usize,
    /// The version announced in the greeting; clients parse its leading `8.0.11`.
    pub server_version: String,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            listen: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 3306),
            max_connections: 1024,
            users: vec![("root".to_string(), String::new())],
            max_allowed_packet: 64 << 20,
            server_version: "8.0.11-Strata-0.1.0".to_string(),
        }
    }
}

/// What connection threads share.
pub struct ServerState {
    shutdown: AtomicBool,
    /// A clone of each open connection's socket, by connection id.
    connections: Mutex<HashMap<u32, TcpStream>>,
    connections_drained: Condvar,
    started: Instant,
}

impl ServerState {
    /// Creates the state of a server with no connections.
    pub fn new() -> ServerState {
        ServerState {
            shutdown: AtomicBool::new(false),
            connections: Mutex::new(HashMap::new()),
            connections_drained: Condvar::new(),
            started: Instant::now(),
        }
    }

    /// Returns how long the server has been up.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Returns the number of open connections.
    pub fn connection_count(&self) -> usize {
        self.connections.lock().len()
    }

    /// Closes the socket of connection `connection_id` (killed): a client waiting for a reply
    /// sees the connection end, and its thread ends once its current statement returns.
    pub fn close(&self, connection_id: u32) {
        if let Some(stream) = self.connections.lock().get(&connection_id) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Registers a connection unless `max_connections` are open.
    fn register(&self, connection_id: u32, stream: TcpStream, max_connections: usize) -> bool {
        let mut connections = self.connections.lock();
        if connections.len() >= max_connections {
            return false;
        }
        connections.insert(connection_id, stream);
        true
    }

    fn deregister(&self, connection_id: u32) {
        let mut connections = self.connections.lock();
        connections.remove(&connection_id);
        if connections.is_empty() {
            self.connections_drained.notify_all();
        }
    }

    fn close_all(&self) {
        for stream in self.connections.lock().values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Default for ServerState {
    fn default() -> ServerState {
        ServerState::new()
    }
}

/// Stops a running [`MysqlServer`] from another thread.
#[derive(Clone)]
pub struct ShutdownHandle {
    state: Arc<ServerState>,
    wake_address: SocketAddr,
}

impl ShutdownHandle {
    /// Makes [`MysqlServer::run`] return, and closes every open connection.
    pub fn shutdown(&self) {
        self.state.shutdown.store(true, Ordering::SeqCst);
        // Wakes the accept call; it sees the flag and returns.
        let _ = TcpStream::connect_timeout(&self.wake_address, Duration::from_secs(1));
        self.state.close_all();
    }
}

/// What every connection thread of a server holds.
struct Shared<B> {
    config: ServerConfig,
    backend: B,
    state: Arc<ServerState>,
}

/// A MySQL protocol server over a [`Backend`].
pub struct MysqlServer<B: Backend = Arc<strata_sql::SqlServer>> {
    listener: TcpListener,
    local_addr: SocketAddr,
    shared: Arc<Shared<B>>,
    /// Where connections run when not on threads of their own.
    fibers: Option<FiberPool>,
}

impl<B: Backend> MysqlServer<B> {
    /// Binds the listener; connections are accepted by [`MysqlServer::run`].
    pub fn bind(config: ServerConfig, backend: B) -> io::Result<MysqlServer<B>> {
        let listener = TcpListener::bind(config.listen)?;
        let local_addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            backend,
            state: Arc::new(ServerState::new()),
        });
        Ok(MysqlServer {
            listener,
            local_addr,
            shared,
            fibers: None,
        })
    }

    /// Runs each connection as a fiber on a thread of `pool` (in turn) instead of a thread of
    /// its own. The backend must then wait only through `strata_fiber`.
    pub fn on_fibers(mut self, pool: FiberPool) -> MysqlServer<B> {
        self.fibers = Some(pool);
        self
    }

    /// Returns the bound address (with the actual port when the config asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Returns a handle that stops [`MysqlServer::run`].
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        let ip = match self.local_addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        ShutdownHandle {
            state: self.shared.state.clone(),
            wake_address: SocketAddr::new(ip, self.local_addr.port()),
        }
    }

    /// Accepts connections, one thread each, until shut down; then closes open connections and
    /// waits up to [`SHUTDOWN_GRACE`] for their threads to end.
    pub fn run(&self) -> io::Result<()> {
        let state = &self.shared.state;
        while !state.shutdown.load(Ordering::SeqCst) {
            match self.listener.accept() {
                Ok(_) if state.shutdown.load(Ordering::SeqCst) => break,
                Ok((stream, peer)) => self.spawn_connection(stream, peer),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    warn!(%error, "accept failed");
                    thread::sleep(ACCEPT_ERROR_PAUSE);
                }
            }
        }
        state.close_all();
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        let mut connections = state.connections.lock();
        while !connections.is_empty() {
            if state
                .connections_drained
                .wait_until(&mut connections, deadline)
                .timed_out()
            {
                warn!(
                    open = connections.len(),
                    "connections still open after shutdown grace"
                );
                break;
            }
        }
        Ok(())
    }

    fn spawn_connection(&self, stream: TcpStream, peer: SocketAddr) {
        let state = &self.shared.state;
        let connection_id = self.shared.backend.next_connection_id();
        let registered = stream
            .try_clone()
            .map(|clone| state.register(connection_id, clone, self.shared.config.max_connections));
        match registered {
            Ok(true) => {}
            Ok(false) => return refuse(stream, &codes::too_many_connections()),
            Err(error) => return warn!(%error, "cannot register connection"),
        }
        let shared = self.shared.clone();
        if let Some(fibers) = &self.fibers {
            if !fibers.spawn(move || run_connection(&shared, stream, peer, connection_id, true)) {
                warn!("the connections' fiber threads have stopped");
                state.deregister(connection_id);
            }
            return;
        }
        let spawned = thread::Builder::new()
            .name(format!("mysql-conn-{connection_id}"))
            .stack_size(strata_fiber::FIBER_STACK_BYTES)
            .spawn(move || run_connection(&shared, stream, peer, connection_id, false));
        if let Err(error) = spawned {
            warn!(%error, "cannot spawn a connection thread");
            state.deregister(connection_id);
        }
    }
}

/// Sends an error as the first packet (in place of the greeting) and drops the socket.
fn refuse(stream: TcpStream, error: &strata_sql::SqlError) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut writer = PacketWriter::new(&stream);
    let _ = writer.write_with(|buffer| encode_err(buffer, error));
    let _ = writer.flush();
}

/// The body of a connection's thread or fiber: serve, log, deregister.
fn run_connection<B: Backend>(
    shared: &Shared<B>,
    stream: TcpStream,
    peer: SocketAddr,
    connection_id: u32,
    in_fiber: bool,
) {
    debug!(connection_id, %peer, "connection opened");
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if in_fiber {
            let socket = FiberSocket::new(stream)?;
            let served = serve(shared, &socket, peer, connection_id);
            socket.shutdown();
            served
        } else {
            let served = serve(shared, &stream, peer, connection_id);
            Socket::shutdown(&stream);
            served
        }
    }));
    match outcome {
        Ok(Ok(())) => debug!(connection_id, "connection closed"),
        Ok(Err(error)) => debug!(connection_id, %error, "connection closed"),
        Err(_) => error!(connection_id, "connection panicked; connection closed"),
    }
    shared.state.deregister(connection_id);
}

/// Runs one connection to its end. A [`ConnectionError::Fatal`] is sent to the client first.
fn serve<B: Backend, S: Socket>(
    shared: &Shared<B>,
    stream: S,
    peer: SocketAddr,
    connection_id: u32,
) -> Result<(), ConnectionError> {
    Socket::set_nodelay(stream, true)?;
    Socket::set_read_timeout(stream, Some(CONNECT_TIMEOUT))?;
    Socket::set_write_timeout(stream, Some(WRITE_TIMEOUT))?;
    let mut reader = PacketReader::new(
        BufReader::with_capacity(READ_BUFFER_BYTES, stream),
        HANDSHAKE_MAX_PAYLOAD_BYTES,
    );
    let mut writer = PacketWriter::new(stream);
    let result = serve_phases(shared, &mut reader, &mut writer, peer, connection_id);
    if let Err(ConnectionError::Fatal(error)) = &result {
        writer.set_sequence(reader.sequence());
        let _ = writer.write_with(|buffer| encode_err(buffer, error));
        let _ = writer.flush();
    }
    result
}

fn serve_phases<B: Backend, S: Socket>(
    shared: &Shared<B>,
    reader: &mut PacketReader<BufReader<S>>,
    writer: &mut PacketWriter<S>,
    peer: SocketAddr,
    connection_id: u32,
) -> Result<(), ConnectionError> {
    let config = &shared.config;
    let greeting = Greeting::new(connection_id, &config.server_version);
    let client = authenticate(
        reader,
        writer,
        &greeting,
        &config.users,
        &peer.ip().to_string(),
    )?;
    let state = Arc::clone(&shared.state);
    let session = shared
        .backend
        .open_session(
            Client {
                connection_id,
                user: client.user.clone(),
                host: peer.ip().to_string(),
                on_kill: Some(Box::new(move || state.close(connection_id))),
            },
            client.database.as_deref(),
        )
        .map_err(ConnectionError::Fatal)?;
    debug!(connection_id, user = %client.user, database = ?client.database, "authenticated");
    let mut connection = Connection::new(
        session,
        client.capabilities,
        config.max_allowed_packet,
        shared.state.clone(),
    );
    writer.write_with(|buffer| {
        encode_ok(
            buffer,
            0x00,
            &OkPacket {
                status: connection.status(),
                ..OkPacket::default()
            },
        )
    })?;
    writer.flush()?;
    Socket::set_read_timeout(*reader.get_ref().get_ref(), Some(WAIT_TIMEOUT))?;
    reader.set_max_payload_bytes(config.max_allowed_packet);
    command_loop(&mut connection, reader, writer)
}

/// Reads commands and writes replies until the client quits or the connection breaks.
fn command_loop<B: BackendSession, S: Socket>(
    connection: &mut Connection<B>,
    reader: &mut PacketReader<BufReader<S>>,
    writer: &mut PacketWriter<S>,
) -> Result<(), ConnectionError> {
    let mut payload = Vec::new();
    loop {
        reader.set_sequence(0);
        if !reader.read_payload(&mut payload)? {
            return Ok(());
        }
        writer.set_sequence(reader.sequence());
        let flow = connection.handle(&payload, writer)?;
        writer.flush()?;
        if flow == Flow::Quit {
            return Ok(());
        }
        if payload.capacity() > KEPT_PAYLOAD_CAPACITY_BYTES {
            payload = Vec::new();
        }
    }
}
