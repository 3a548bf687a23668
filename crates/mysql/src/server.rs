//! The driver: a listener, an accept loop, and one OS thread or one fiber per connection.
//!
//! Each connection runs the handshake, opens a backend session, then loops: read one command
//! payload, let `Connection::handle` build the reply, flush it. Reads and writes block (the
//! thread, or only the fiber) with timeouts: [`WAIT_TIMEOUT`] between commands (MySQL's
//! `wait_timeout`), [`WRITE_TIMEOUT`] for replies. A panic in a connection is caught, logged
//! and ends that connection only.
//!
//! A connection is admitted in two steps, so that clients who never log in cannot keep out
//! those who do. Until it has authenticated it counts against [`ServerConfig::max_handshakes`]
//! only: when that budget is full, the oldest handshake is closed to make room, and a handshake
//! still unfinished `connect_timeout` after its connection was accepted is closed whatever the
//! client sends meanwhile. Once authenticated it takes one of `max_connections` slots (the
//! backend's live `@@global.max_connections`) or is refused with 1040.
//!
//! Threads are the default. A server whose backend waits for the network (the SQL node of a
//! cluster) runs its connections as fibers on the thread that carries their RPCs
//! ([`MysqlServer::on_fibers`]), so that a read costs no hand-off between threads.
//!
//! Besides TCP, the server may listen on a Unix socket ([`ServerConfig::socket`], MySQL's
//! `--socket`): its clients are `localhost` to the accounts, and each runs on a thread.
//!
//! [`ServerState`] is what connection threads share: the registry of open connections (used for
//! `max_connections`, COM_PROCESS_KILL, COM_STATISTICS and shutdown) and the shutdown flag.

use std::collections::HashMap;
use std::io::{self, BufReader};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use strata_fiber::FiberPool;
use strata_sql::{Blocked, Client, Login, MAX_CONNECTIONS_DEFAULT};
use tracing::{debug, error, warn};

use crate::backend::{Backend, BackendSession};
use crate::conn::{Connection, Flow};
use crate::error::{codes, ConnectionError};
use crate::handshake::{
    authenticate_client, authenticate_response, capabilities, greet, is_ssl_request,
    parse_change_user, Authenticated, Greeting, Logins, Transport, HANDSHAKE_MAX_PAYLOAD_BYTES,
};
use crate::packet::{PacketReader, PacketWriter};
use crate::reply::{encode_err, encode_ok, OkPacket};
use crate::sha2_auth::RsaKeyPair;
use crate::socket::{FiberSocket, Socket};
use crate::tls::{TlsConfig, TlsSocket};

/// Default [`ServerConfig::connect_timeout`].
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How often handshakes are checked against their deadline.
const HANDSHAKE_SWEEP_INTERVAL: Duration = Duration::from_millis(100);

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

/// Default [`ServerConfig::max_handshakes`]: a handshake takes one round trip, so even a busy
/// server has few at a time.
pub const MAX_HANDSHAKES_DEFAULT: usize = 256;

/// How the server listens and whom it lets in.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// Authenticated connections beyond this many are refused with 1040: the starting value of
    /// the backend's `@@global.max_connections`, which `SET GLOBAL` changes.
    pub max_connections: usize,
    /// Connections still in the handshake; one more closes the oldest of them.
    pub max_handshakes: usize,
    /// How long the whole handshake may take (MySQL's `connect_timeout`).
    pub connect_timeout: Duration,
    /// The largest command payload accepted; larger ones close the connection with 1153.
    pub max_allowed_packet: usize,
    /// The version announced in the greeting; clients parse its leading `8.0.11`.
    pub server_version: String,
    /// What a client that asks for TLS gets; None: TLS is not offered.
    pub tls: Option<TlsConfig>,
    /// A Unix socket to listen on as well (`@@socket`); a file left there by a server that
    /// is gone is replaced, one that answers is not.
    pub socket: Option<PathBuf>,
    /// The key pair that `caching_sha2_password` clients on plain connections encrypt their
    /// passwords for; None: such a client cannot send one (it may use TLS or the socket).
    pub rsa: Option<Arc<RsaKeyPair>>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            listen: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 3306),
            max_connections: MAX_CONNECTIONS_DEFAULT,
            max_handshakes: MAX_HANDSHAKES_DEFAULT,
            connect_timeout: CONNECT_TIMEOUT,
            max_allowed_packet: 64 << 20,
            server_version: strata_sql::SERVER_VERSION.to_string(),
            tls: None,
            socket: None,
            rsa: None,
        }
    }
}

/// A connection's socket.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }
}

/// What connection threads share.
pub struct ServerState {
    shutdown: AtomicBool,
    connections: Mutex<Registry>,
    connections_drained: Condvar,
    started: Instant,
}

/// The open connections: a clone of each one's socket, by connection id.
#[derive(Default)]
struct Registry {
    /// Not authenticated yet, with when each was accepted.
    handshaking: HashMap<u32, (Instant, Stream)>,
    /// Authenticated.
    serving: HashMap<u32, Stream>,
}

impl Registry {
    fn is_empty(&self) -> bool {
        self.handshaking.is_empty() && self.serving.is_empty()
    }
}

/// Why an authenticated connection was not given a slot.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// `max_connections` are already served.
    Full,
    /// Its handshake was closed meanwhile (too old, or the oldest when the budget was full).
    Closed,
}

impl ServerState {
    /// Creates the state of a server with no connections.
    pub fn new() -> ServerState {
        ServerState {
            shutdown: AtomicBool::new(false),
            connections: Mutex::new(Registry::default()),
            connections_drained: Condvar::new(),
            started: Instant::now(),
        }
    }

    /// Returns how long the server has been up.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Returns the number of authenticated connections.
    pub fn connection_count(&self) -> usize {
        self.connections.lock().serving.len()
    }

    /// Closes the socket of connection `connection_id` (killed): a client waiting for a reply
    /// sees the connection end, and its thread ends once its current statement returns.
    pub fn close(&self, connection_id: u32) {
        if let Some(stream) = self.connections.lock().serving.get(&connection_id) {
            stream.shutdown();
        }
    }

    /// Registers a connection that starts its handshake. When `max_handshakes` are under way,
    /// the oldest of them is closed to make room.
    fn begin_handshake(&self, connection_id: u32, stream: Stream, max_handshakes: usize) {
        let mut connections = self.connections.lock();
        while connections.handshaking.len() >= max_handshakes.max(1) {
            let oldest = connections
                .handshaking
                .iter()
                .min_by_key(|(_, (since, _))| *since)
                .map(|(id, _)| *id);
            let Some((_, stream)) = oldest.and_then(|id| connections.handshaking.remove(&id))
            else {
                break;
            };
            stream.shutdown();
        }
        connections
            .handshaking
            .insert(connection_id, (Instant::now(), stream));
    }

    /// Moves an authenticated connection from the handshakes to the served connections,
    /// unless `max_connections` are served.
    fn admit(&self, connection_id: u32, max_connections: usize) -> Result<(), Refusal> {
        let mut connections = self.connections.lock();
        if !connections.handshaking.contains_key(&connection_id) {
            return Err(Refusal::Closed);
        }
        if connections.serving.len() >= max_connections {
            return Err(Refusal::Full);
        }
        if let Some((_, stream)) = connections.handshaking.remove(&connection_id) {
            connections.serving.insert(connection_id, stream);
        }
        Ok(())
    }

    /// Closes the handshakes accepted more than `timeout` ago.
    fn close_stale_handshakes(&self, timeout: Duration) {
        let mut connections = self.connections.lock();
        connections.handshaking.retain(|id, (since, stream)| {
            let stale = since.elapsed() >= timeout;
            if stale {
                warn!(
                    connection_id = id,
                    ?timeout,
                    "closing a connection whose handshake did not finish within connect_timeout"
                );
                stream.shutdown();
            }
            !stale
        });
    }

    fn deregister(&self, connection_id: u32) {
        let mut connections = self.connections.lock();
        connections.handshaking.remove(&connection_id);
        connections.serving.remove(&connection_id);
        if connections.is_empty() {
            self.connections_drained.notify_all();
        }
    }

    fn close_all(&self) {
        let connections = self.connections.lock();
        let handshaking = connections.handshaking.values().map(|(_, stream)| stream);
        for stream in handshaking.chain(connections.serving.values()) {
            stream.shutdown();
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
    socket: Option<PathBuf>,
}

impl ShutdownHandle {
    /// Makes [`MysqlServer::run`] return, and closes every open connection.
    pub fn shutdown(&self) {
        self.state.shutdown.store(true, Ordering::SeqCst);
        // Wakes the accept call; it sees the flag and returns.
        let _ = TcpStream::connect_timeout(&self.wake_address, Duration::from_secs(1));
        if let Some(path) = &self.socket {
            let _ = UnixStream::connect(path);
        }
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
    unix: Option<UnixListener>,
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
        let unix = config.socket.as_deref().map(bind_unix).transpose()?;
        backend.set_max_connections(config.max_connections);
        if let Some(rsa) = &config.rsa {
            backend.set_rsa_public_key(&String::from_utf8_lossy(rsa.public_pem()));
        }
        if let Some(path) = &config.socket {
            backend.set_socket(&path.to_string_lossy());
        }
        let shared = Arc::new(Shared {
            config,
            backend,
            state: Arc::new(ServerState::new()),
        });
        Ok(MysqlServer {
            listener,
            unix,
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
            socket: self.shared.config.socket.clone(),
        }
    }

    /// Accepts connections, one thread each, until shut down; then closes open connections and
    /// waits up to [`SHUTDOWN_GRACE`] for their threads to end.
    pub fn run(&self) -> io::Result<()> {
        let state = &self.shared.state;
        let sweeper = {
            let state = state.clone();
            let connect_timeout = self.shared.config.connect_timeout;
            thread::Builder::new()
                .name("mysql-handshakes".to_string())
                .spawn(move || {
                    while !state.shutdown.load(Ordering::SeqCst) {
                        state.close_stale_handshakes(connect_timeout);
                        thread::sleep(HANDSHAKE_SWEEP_INTERVAL);
                    }
                })?
        };
        thread::scope(|scope| -> io::Result<()> {
            if let Some(unix) = &self.unix {
                thread::Builder::new()
                    .name("mysql-unix-accept".to_string())
                    .spawn_scoped(scope, || self.accept_unix(unix))?;
            }
            self.accept_tcp();
            Ok(())
        })?;
        if let Some(path) = &self.shared.config.socket {
            let _ = std::fs::remove_file(path);
        }
        state.close_all();
        let _ = sweeper.join();
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        let mut connections = state.connections.lock();
        while !connections.is_empty() {
            if state
                .connections_drained
                .wait_until(&mut connections, deadline)
                .timed_out()
            {
                warn!(
                    open = connections.handshaking.len() + connections.serving.len(),
                    "connections still open after shutdown grace"
                );
                break;
            }
        }
        Ok(())
    }

    /// Accepts TCP connections until shut down.
    fn accept_tcp(&self) {
        let state = &self.shared.state;
        while !state.shutdown.load(Ordering::SeqCst) {
            match self.listener.accept() {
                Ok(_) if state.shutdown.load(Ordering::SeqCst) => break,
                Ok((stream, peer)) => {
                    self.spawn_connection(Stream::Tcp(stream), peer.ip().to_string())
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    warn!(%error, "accept failed");
                    thread::sleep(ACCEPT_ERROR_PAUSE);
                }
            }
        }
    }

    /// Accepts connections on the Unix socket until shut down; their clients are `localhost`.
    fn accept_unix(&self, listener: &UnixListener) {
        let state = &self.shared.state;
        while !state.shutdown.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok(_) if state.shutdown.load(Ordering::SeqCst) => break,
                Ok((stream, _)) => self.spawn_connection(Stream::Unix(stream), "localhost".into()),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    warn!(%error, "accept on the Unix socket failed");
                    thread::sleep(ACCEPT_ERROR_PAUSE);
                }
            }
        }
    }

    /// Serves a connection from `host` (an IP address, or `localhost` for the Unix socket):
    /// as a fiber when the server runs them so (TCP), else on a thread of its own.
    fn spawn_connection(&self, stream: Stream, host: String) {
        let state = &self.shared.state;
        let connection_id = self.shared.backend.next_connection_id();
        match stream.try_clone() {
            Ok(clone) => {
                state.begin_handshake(connection_id, clone, self.shared.config.max_handshakes)
            }
            Err(error) => return warn!(%error, "cannot register connection"),
        }
        let shared = self.shared.clone();
        if let (Some(fibers), Stream::Tcp(_)) = (&self.fibers, &stream) {
            if !fibers.spawn(move || run_connection(&shared, stream, host, connection_id, true)) {
                warn!("the connections' fiber threads have stopped");
                state.deregister(connection_id);
            }
            return;
        }
        let spawned = thread::Builder::new()
            .name(format!("mysql-conn-{connection_id}"))
            .stack_size(strata_fiber::FIBER_STACK_BYTES)
            .spawn(move || run_connection(&shared, stream, host, connection_id, false));
        if let Err(error) = spawned {
            warn!(%error, "cannot spawn a connection thread");
            state.deregister(connection_id);
        }
    }
}

/// The body of a connection's thread or fiber: serve, log, deregister.
fn run_connection<B: Backend>(
    shared: &Shared<B>,
    stream: Stream,
    host: String,
    connection_id: u32,
    in_fiber: bool,
) {
    debug!(connection_id, %host, "connection opened");
    let outcome = catch_unwind(AssertUnwindSafe(|| match stream {
        Stream::Tcp(stream) if in_fiber => {
            let socket = FiberSocket::new(stream)?;
            let served = serve(shared, &socket, &host, connection_id);
            socket.shutdown();
            served
        }
        Stream::Tcp(stream) => {
            let served = serve(shared, &stream, &host, connection_id);
            Socket::shutdown(&stream);
            served
        }
        Stream::Unix(stream) => {
            let served = serve(shared, &stream, &host, connection_id);
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
    host: &str,
    connection_id: u32,
) -> Result<(), ConnectionError> {
    Socket::set_nodelay(stream, true)?;
    Socket::set_read_timeout(stream, Some(shared.config.connect_timeout))?;
    Socket::set_write_timeout(stream, Some(WRITE_TIMEOUT))?;
    let mut reader = PacketReader::new(
        BufReader::with_capacity(READ_BUFFER_BYTES, stream),
        HANDSHAKE_MAX_PAYLOAD_BYTES,
    );
    let mut writer = PacketWriter::new(stream);
    let mut greeting = Greeting::new(connection_id, &shared.config.server_version);
    if shared.config.tls.is_some() {
        greeting = greeting.offering_tls();
    }
    let first = match greet(&mut reader, &mut writer, &greeting) {
        Ok(first) => first,
        Err(error) => return report(&mut reader, &mut writer, Err(error)),
    };
    if !is_ssl_request(&first) {
        // The Unix socket is a secure transport, as MySQL's.
        let result = if shared.backend.require_secure_transport() && !Socket::is_local(stream) {
            Err(ConnectionError::Fatal(codes::insecure_transport()))
        } else {
            serve_phases(
                shared,
                &mut reader,
                &mut writer,
                &greeting,
                first,
                None,
                host,
            )
        };
        return report(&mut reader, &mut writer, result);
    }
    let Some(tls) = &shared.config.tls else {
        let refused = Err(ConnectionError::Fatal(codes::bad_handshake()));
        return report(&mut reader, &mut writer, refused);
    };
    let socket = TlsSocket::accept(tls, stream, reader.get_ref().buffer())?;
    let sequence = reader.sequence();
    let mut reader = PacketReader::new(
        BufReader::with_capacity(READ_BUFFER_BYTES, &socket),
        HANDSHAKE_MAX_PAYLOAD_BYTES,
    );
    reader.set_sequence(sequence);
    let mut writer = PacketWriter::new(&socket);
    let mut response = Vec::new();
    let result = match reader.read_payload(&mut response) {
        Ok(true) => {
            let described = socket.describe();
            let transport = Transport::Tls {
                cipher: described.1.clone(),
                client: socket.client_names(),
            };
            serve_phases(
                shared,
                &mut reader,
                &mut writer,
                &greeting,
                response,
                Some((described, transport)),
                host,
            )
        }
        Ok(false) => Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
        Err(error) => Err(error),
    };
    report(&mut reader, &mut writer, result)
}

/// Binds the Unix socket at `path`, replacing a file left there by a server that is gone;
/// every local user may connect to it, as to MySQL's (the accounts decide who logs in).
fn bind_unix(path: &Path) -> io::Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let listener = match UnixListener::bind(path) {
        Err(error) if error.kind() == io::ErrorKind::AddrInUse => {
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("the socket {} is in use by another server", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
            UnixListener::bind(path)
        }
        other => other,
    }?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777))?;
    Ok(listener)
}

/// Sends a [`ConnectionError::Fatal`] to the client before the connection ends.
fn report<R: io::Read, S: Socket>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<S>,
    result: Result<(), ConnectionError>,
) -> Result<(), ConnectionError> {
    if let Err(ConnectionError::Fatal(error)) = &result {
        writer.set_sequence(reader.sequence());
        let _ = writer.write_with(|buffer| encode_err(buffer, error));
        let _ = writer.flush();
    }
    result
}

/// The connection from the client's HandshakeResponse41 (`first`) on: authentication, a slot,
/// the session, the command loop. `secure` is the TLS protocol and cipher, and whether the
/// client showed a certificate, when the connection runs over TLS.
fn serve_phases<B: Backend, S: Socket>(
    shared: &Shared<B>,
    reader: &mut PacketReader<BufReader<S>>,
    writer: &mut PacketWriter<S>,
    greeting: &Greeting,
    first: Vec<u8>,
    secure: Option<((String, String), Transport)>,
    host: &str,
) -> Result<(), ConnectionError> {
    let (secure, transport) = match secure {
        Some((described, transport)) => (Some(described), transport),
        None if Socket::is_local(*reader.get_ref().get_ref()) => (None, Transport::Socket),
        None => (None, Transport::Plain),
    };
    let peer = Peer {
        shared,
        greeting,
        host: host.to_string(),
        transport: transport.clone(),
        secure,
    };
    let connection_id = greeting.connection_id;
    let client = authenticate_response(
        reader,
        writer,
        greeting,
        first,
        &transport,
        peer.logins(),
        &peer.host,
    )?;
    match shared
        .state
        .admit(connection_id, shared.backend.max_connections())
    {
        Ok(()) => {}
        Err(Refusal::Full) => {
            return Err(ConnectionError::Fatal(codes::too_many_connections()));
        }
        Err(Refusal::Closed) => {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "handshake closed").into());
        }
    }
    let session = peer.open_session(&client)?;
    let mut connection = Connection::new(
        session,
        client.capabilities,
        shared.config.max_allowed_packet,
        shared.state.clone(),
    );
    write_login_ok(writer, &connection)?;
    writer.flush()?;
    Socket::set_read_timeout(*reader.get_ref().get_ref(), Some(WAIT_TIMEOUT))?;
    reader.set_max_payload_bytes(shared.config.max_allowed_packet);
    command_loop(&mut connection, reader, writer, &peer)
}

/// What a connection keeps of its connection phase: enough to authenticate a client again
/// when it changes its user.
struct Peer<'a, B> {
    shared: &'a Shared<B>,
    /// The greeting, whose scramble COM_CHANGE_USER answers too.
    greeting: &'a Greeting,
    /// The client's IP address.
    host: String,
    transport: Transport,
    /// The TLS protocol and cipher, over TLS.
    secure: Option<(String, String)>,
}

impl<B: Backend> Peer<'_, B> {
    /// The backend's accounts as the connection phase asks about them.
    #[allow(clippy::type_complexity)] // three closures over `self`, spelled out once here
    fn logins(
        &self,
    ) -> Logins<
        '_,
        impl Fn(&str) -> Option<Login> + '_,
        impl Fn(&Login, bool) -> Option<Blocked> + '_,
        impl Fn(&Login, [u8; 32]) + '_,
    > {
        Logins {
            find: |user: &str| self.shared.backend.find_login(user, &self.host),
            outcome: |login: &Login, right: bool| self.shared.backend.login_outcome(login, right),
            remember: |login: &Login, hash: [u8; 32]| {
                self.shared.backend.remember_sha2(login, hash)
            },
            rsa: self.shared.config.rsa.as_deref(),
        }
    }

    /// Opens the session of `client`, who proved their identity.
    fn open_session(&self, client: &Authenticated) -> Result<B::Session, ConnectionError> {
        let connection_id = self.greeting.connection_id;
        let state = Arc::clone(&self.shared.state);
        let session = self
            .shared
            .backend
            .open_session(
                Client {
                    connection_id,
                    user: client.user.clone(),
                    host: self.host.clone(),
                    account: Some(client.account.clone()),
                    password_expired: client.password_expired,
                    tls: self.secure.clone(),
                    found_rows: client.capabilities & capabilities::FOUND_ROWS != 0,
                    on_kill: Some(Box::new(move || state.close(connection_id))),
                },
                client.database.as_deref(),
            )
            .map_err(ConnectionError::Fatal)?;
        let tls = self
            .secure
            .as_ref()
            .map_or("", |(version, _)| version.as_str());
        debug!(connection_id, user = %client.user, database = ?client.database, tls, "authenticated");
        Ok(session)
    }

    /// COM_CHANGE_USER (`body` after the command byte): authenticates the user it names, as
    /// at connection (an auth switch when the client proposed another method), then gives
    /// the connection a new session, which rolls back the old one's transaction and forgets
    /// its variables and prepared statements. As in MySQL, a client that fails to prove the
    /// new identity is disconnected (1873), and so is one whose database cannot be used.
    fn change_user<S: Socket>(
        &self,
        connection: &mut Connection<B::Session>,
        reader: &mut PacketReader<BufReader<S>>,
        writer: &mut PacketWriter<S>,
        body: &[u8],
    ) -> Result<(), ConnectionError> {
        let response = match parse_change_user(body, connection.capabilities()) {
            Ok(response) => response,
            Err(error) => {
                writer.write_with(|buffer| encode_err(buffer, &error))?;
                return Ok(());
            }
        };
        let (user, with_password) = (response.user.clone(), !response.auth_response.is_empty());
        let client = match authenticate_client(
            reader,
            writer,
            self.greeting,
            response,
            &self.transport,
            self.logins(),
            &self.host,
        ) {
            Ok(client) => client,
            Err(ConnectionError::Fatal(error)) if error.code == 1045 => {
                return Err(ConnectionError::Fatal(codes::change_user_denied(
                    &user,
                    &self.host,
                    with_password,
                )))
            }
            Err(error) => return Err(error),
        };
        let session = self.open_session(&client)?;
        connection.replace_session(session);
        write_login_ok(writer, connection)?;
        Ok(())
    }
}

/// The OK that ends a login (or a change of user), with the new session's status.
fn write_login_ok<B: BackendSession, S: Socket>(
    writer: &mut PacketWriter<S>,
    connection: &Connection<B>,
) -> io::Result<()> {
    writer.write_with(|buffer| {
        encode_ok(
            buffer,
            0x00,
            &OkPacket {
                status: connection.status(),
                ..OkPacket::default()
            },
        )
    })
}

/// Reads commands and writes replies until the client quits or the connection breaks.
fn command_loop<B: Backend, S: Socket>(
    connection: &mut Connection<B::Session>,
    reader: &mut PacketReader<BufReader<S>>,
    writer: &mut PacketWriter<S>,
    peer: &Peer<'_, B>,
) -> Result<(), ConnectionError> {
    let mut payload = Vec::new();
    loop {
        reader.set_sequence(0);
        if !reader.read_payload(&mut payload)? {
            return Ok(());
        }
        writer.set_sequence(reader.sequence());
        let flow = connection.handle(&payload, writer)?;
        if flow == Flow::ChangeUser {
            peer.change_user(connection, reader, writer, &payload[1..])?;
        }
        writer.flush()?;
        if flow == Flow::Quit {
            return Ok(());
        }
        if payload.capacity() > KEPT_PAYLOAD_CAPACITY_BYTES {
            payload = Vec::new();
        }
    }
}
