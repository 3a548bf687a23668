//! The status port of every role (TiDB's 10080, TiKV's 20180): a small HTTP/1.1 server with
//! `/metrics` (every metric of the process, in the Prometheus text format) and `/status`
//! (role, version, git hash, uptime, as JSON), and `/debug/pprof/profile?seconds=N`, a CPU
//! profile of the process over N seconds drawn as a flame graph (SVG); a SQL node's and the
//! playground's also serve the dashboard (`/dashboard`, see dashboard.rs).
//!
//! It serves a handful of requests at once on threads of its own, each bounded in time and
//! size, so a slow or hostile client of the status port cannot hold the role's own work.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use prometheus::{Encoder, TextEncoder};

use crate::dashboard::Dashboard;

/// Requests served at once; one more is answered 503 at once.
const REQUESTS_MAX: usize = 8;
/// How long a client may take to send its request.
const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// The longest request head read.
const REQUEST_BYTES_MAX: usize = 8 * 1024;

/// A function run before each scrape to bring gauges up to date (regions held, engine sizes).
pub type Refresh = Box<dyn Fn() + Send + Sync>;

/// Where a role's status port listens, from its `--status-port` and its main port.
#[derive(Clone, Copy, Debug)]
pub enum StatusPort {
    /// Given on the command line: a taken port stops the role.
    Given(u16),
    /// The role's default: a taken port is reported and the role runs without one.
    Default(u16),
    /// `--status-port 0`, or no default fits.
    Off,
}

impl StatusPort {
    /// The port `flag` asks for, else `main_port + offset` (TiDB's 4000 → 10080 is +6080,
    /// TiKV's 20160 → 20180 is +20).
    pub fn resolve(flag: Option<u16>, main_port: u16, offset: u16) -> StatusPort {
        match flag {
            Some(0) => StatusPort::Off,
            Some(port) => StatusPort::Given(port),
            None => main_port
                .checked_add(offset)
                .map_or(StatusPort::Off, StatusPort::Default),
        }
    }

    /// Fails at once when a port given on the command line is taken.
    pub fn ensure_free(self, host: IpAddr) -> Result<(), String> {
        match self {
            StatusPort::Given(port) => {
                crate::ports::ensure_free(SocketAddr::new(host, port), "--status-port")
            }
            _ => Ok(()),
        }
    }
}

/// Offsets of each role's default status port from its main port.
pub const SQL_OFFSET: u16 = 6080;
pub const KV_OFFSET: u16 = 20;
pub const PD_OFFSET: u16 = 100;

/// Starts the status server of `role` on `host` as `port` says, printing its address; returns
/// the address, or None when there is none. `refresh` runs before each scrape.
pub fn start(
    role: &'static str,
    host: IpAddr,
    port: StatusPort,
    refresh: Vec<Refresh>,
    dashboard: Option<Arc<Dashboard>>,
) -> Result<Option<SocketAddr>, Box<dyn std::error::Error>> {
    let (port, given) = match port {
        StatusPort::Off => return Ok(None),
        StatusPort::Given(port) => (port, true),
        StatusPort::Default(port) => (port, false),
    };
    let address = SocketAddr::new(host, port);
    let listener = match TcpListener::bind(address) {
        Ok(listener) => listener,
        Err(e) if !given => {
            eprintln!("no status port: {address} is not free ({e}); choose one with --status-port");
            return Ok(None);
        }
        Err(e) => return Err(format!("status port {address}: {e}").into()),
    };
    let address = listener.local_addr()?;
    let shared = Arc::new(Shared {
        role,
        started: Instant::now(),
        started_at: SystemTime::now(),
        refresh,
        busy: AtomicUsize::new(0),
        dashboard,
    });
    let dashboard_note = if shared.dashboard.is_some() {
        format!(", dashboard at http://{address}/dashboard")
    } else {
        String::new()
    };
    std::thread::Builder::new()
        .name("status".into())
        .spawn(move || accept(listener, shared))?;
    println!(
        "Strata {role} status at http://{address}/status and http://{address}/metrics\
         {dashboard_note}"
    );
    Ok(Some(address))
}

struct Shared {
    role: &'static str,
    started: Instant,
    started_at: SystemTime,
    refresh: Vec<Refresh>,
    busy: AtomicUsize,
    dashboard: Option<Arc<Dashboard>>,
}

fn accept(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            // Out of descriptors, or the like: wait instead of spinning.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if shared.busy.fetch_add(1, Ordering::SeqCst) >= REQUESTS_MAX {
            shared.busy.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.set_write_timeout(Some(REQUEST_DEADLINE));
            let _ = respond(&mut stream, 503, "text/plain", b"busy\n");
            continue;
        }
        let serving = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("status-request".into())
            .spawn(move || {
                serve(stream, &serving);
                serving.busy.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            shared.busy.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Reads the request line (and the rest of the head, which is ignored) within
/// [`REQUEST_DEADLINE`] and [`REQUEST_BYTES_MAX`]; None when the client sent no full head.
fn read_request_line(stream: &mut TcpStream) -> Option<String> {
    let deadline = Instant::now() + REQUEST_DEADLINE;
    let mut head = Vec::with_capacity(512);
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let left = deadline.checked_duration_since(Instant::now())?;
        stream.set_read_timeout(Some(left)).ok()?;
        let read = stream.read(&mut buffer).ok()?;
        if read == 0 || head.len() + read > REQUEST_BYTES_MAX {
            return None;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = head.split(|b| *b == b'\n').next()?;
    Some(String::from_utf8_lossy(line).trim_end().to_string())
}

fn serve(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_write_timeout(Some(REQUEST_DEADLINE));
    let Some(line) = read_request_line(&mut stream) else {
        let _ = respond(&mut stream, 400, "text/plain", b"bad request\n");
        linger(stream);
        return;
    };
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if method != "GET" && method != "HEAD" {
        let _ = respond(&mut stream, 405, "text/plain", b"only GET\n");
        return;
    }
    let (status, content_type, body) = match path {
        "/metrics" => (200, "text/plain; version=0.0.4", metrics(shared)),
        "/status" => (200, "application/json", status_json(shared).into_bytes()),
        "/debug/pprof/profile" => profile::flame_graph(query),
        "/dashboard" | "/dashboard/" if shared.dashboard.is_some() => (
            200,
            "text/html; charset=utf-8",
            crate::dashboard::PAGE.as_bytes().to_vec(),
        ),
        "/dashboard/data" => match &shared.dashboard {
            Some(dashboard) => (200, "application/json", dashboard.data().into_bytes()),
            None => (404, "text/plain", b"not found\n".to_vec()),
        },
        "/" => (
            200,
            "text/plain",
            format!(
                "Strata {}: /status, /metrics, /debug/pprof/profile?seconds=N{}\n",
                shared.role,
                if shared.dashboard.is_some() {
                    ", /dashboard"
                } else {
                    ""
                }
            )
            .into_bytes(),
        ),
        _ => (404, "text/plain", b"not found\n".to_vec()),
    };
    let body = if method == "HEAD" { &[][..] } else { &body[..] };
    let _ = respond(&mut stream, status, content_type, body);
}

/// Closes a connection whose client may still be sending: unread bytes at close would reset
/// the connection and could destroy the answer before the client reads it.
fn linger(mut stream: TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 4096];
    for _ in 0..64 {
        if !matches!(stream.read(&mut sink), Ok(n) if n > 0) {
            break;
        }
    }
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        500 => "Internal Server Error",
        _ => "Service Unavailable",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// Every metric of the process in the Prometheus text format.
fn metrics(shared: &Shared) -> Vec<u8> {
    for refresh in &shared.refresh {
        refresh();
    }
    process_metrics::refresh();
    let mut out = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&prometheus::gather(), &mut out) {
        out = format!("# encoding failed: {e}\n").into_bytes();
    }
    out
}

fn status_json(shared: &Shared) -> String {
    let started = shared
        .started_at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!(
        "{{\"role\":\"{}\",\"version\":\"{}\",\"git_hash\":\"{}\",\"uptime_seconds\":{},\
         \"start_time\":{started},\"pid\":{}}}\n",
        shared.role,
        env!("CARGO_PKG_VERSION"),
        env!("STRATA_GIT_HASH"),
        shared.started.elapsed().as_secs(),
        std::process::id()
    )
}

/// CPU profiles: the process's stacks sampled 99 times a second for the seconds asked, drawn
/// as a flame graph (what TiDB's and TiKV's `/debug/pprof/profile` give, as an SVG to open
/// in a browser).
mod profile {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    /// Sampling frequency, in Hz (not a multiple of common timer periods).
    const FREQUENCY: i32 = 99;
    const SECONDS_DEFAULT: u64 = 10;
    const SECONDS_MAX: u64 = 120;

    /// Set while a profile runs: the sampler is one per process.
    static RUNNING: AtomicBool = AtomicBool::new(false);

    /// Profiles for `?seconds=N` (10 by default, at most 120); 409 while another runs.
    pub fn flame_graph(query: &str) -> (u16, &'static str, Vec<u8>) {
        let seconds = query
            .split('&')
            .find_map(|pair| pair.strip_prefix("seconds="))
            .map_or(Ok(SECONDS_DEFAULT), str::parse::<u64>);
        let seconds = match seconds {
            Ok(s) if (1..=SECONDS_MAX).contains(&s) => s,
            _ => {
                return (
                    400,
                    "text/plain",
                    format!("seconds must be a whole number from 1 to {SECONDS_MAX}\n")
                        .into_bytes(),
                )
            }
        };
        if RUNNING.swap(true, Ordering::SeqCst) {
            return (
                409,
                "text/plain",
                b"a CPU profile is running; try again when it ends\n".to_vec(),
            );
        }
        let result = sample(Duration::from_secs(seconds));
        RUNNING.store(false, Ordering::SeqCst);
        match result {
            Ok(svg) => (200, "image/svg+xml", svg),
            Err(e) => (
                500,
                "text/plain",
                format!("profiling failed: {e}\n").into_bytes(),
            ),
        }
    }

    fn sample(duration: Duration) -> Result<Vec<u8>, pprof::Error> {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(FREQUENCY)
            // Unwinding through these from a signal handler can deadlock (TiKV's list).
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()?;
        std::thread::sleep(duration);
        let report = guard.report().build()?;
        drop(guard);
        let mut svg = Vec::new();
        report.flamegraph(&mut svg)?;
        Ok(svg)
    }
}

/// The process's CPU time, memory, threads and open files (Prometheus's `process_…`
/// names), read from /proc at each scrape.
mod process_metrics {
    use std::sync::LazyLock;

    use prometheus::{register_gauge, register_int_gauge, Gauge, IntGauge};

    struct Process {
        cpu_seconds: Gauge,
        resident_bytes: IntGauge,
        virtual_bytes: IntGauge,
        threads: IntGauge,
        open_fds: IntGauge,
    }

    static PROCESS: LazyLock<Process> = LazyLock::new(|| Process {
        cpu_seconds: register_gauge!(
            "process_cpu_seconds_total",
            "CPU time of the process (user and system), in seconds"
        )
        .expect("registered once"),
        resident_bytes: register_int_gauge!(
            "process_resident_memory_bytes",
            "Resident memory of the process"
        )
        .expect("registered once"),
        virtual_bytes: register_int_gauge!(
            "process_virtual_memory_bytes",
            "Virtual memory of the process"
        )
        .expect("registered once"),
        threads: register_int_gauge!("process_threads", "Threads of the process")
            .expect("registered once"),
        open_fds: register_int_gauge!("process_open_fds", "Open file descriptors")
            .expect("registered once"),
    });

    /// Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux).
    const TICKS_PER_SECOND: f64 = 100.0;
    const PAGE_BYTES: i64 = 4096;

    pub fn refresh() {
        let process = &*PROCESS;
        if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
            // The command name is in parentheses and may hold spaces: fields follow the last ')'.
            if let Some((_, rest)) = stat.rsplit_once(')') {
                let fields: Vec<&str> = rest.split_whitespace().collect();
                // After the name: state is field 3, utime 14, stime 15, threads 20, vsize 23,
                // rss 24 (1-based over the whole line).
                let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<i64>().ok());
                if let (Some(user), Some(system)) = (field(14), field(15)) {
                    process
                        .cpu_seconds
                        .set((user + system) as f64 / TICKS_PER_SECOND);
                }
                if let Some(threads) = field(20) {
                    process.threads.set(threads);
                }
                if let Some(vsize) = field(23) {
                    process.virtual_bytes.set(vsize);
                }
                if let Some(rss) = field(24) {
                    process.resident_bytes.set(rss * PAGE_BYTES);
                }
            }
        }
        if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
            process.open_fds.set(fds.count() as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(address: SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn serves_metrics_and_status_and_refuses_the_rest() {
        let refreshed = Arc::new(AtomicUsize::new(0));
        let counter = refreshed.clone();
        let refresh: Refresh = Box::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let address = start(
            "test role",
            "127.0.0.1".parse().unwrap(),
            StatusPort::Given(0),
            vec![refresh],
            None,
        )
        .unwrap()
        .expect("listening");

        let metrics = get(address, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(metrics.starts_with("HTTP/1.1 200 OK\r\n"), "{metrics}");
        assert!(
            metrics.contains("\nprocess_resident_memory_bytes "),
            "{metrics}"
        );
        assert_eq!(refreshed.load(Ordering::SeqCst), 1);

        let status = get(address, "GET /status HTTP/1.0\r\n\r\n");
        let body = status.split("\r\n\r\n").nth(1).unwrap();
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["role"], "test role");
        assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));

        assert!(get(address, "GET /nothing HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(address, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        let endless = format!("GET /{} HTTP/1.1\r\n", "a".repeat(REQUEST_BYTES_MAX));
        assert!(get(address, &endless).starts_with("HTTP/1.1 400"));
    }

    /// Work for the profiler to find.
    #[inline(never)]
    fn spin_for_the_profiler(until: Instant) -> u64 {
        let mut x = 1u64;
        while Instant::now() < until {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        x
    }

    #[test]
    fn a_cpu_profile_is_a_flame_graph_of_what_ran() {
        let address = start(
            "profiled role",
            "127.0.0.1".parse().unwrap(),
            StatusPort::Given(0),
            Vec::new(),
            None,
        )
        .unwrap()
        .expect("listening");
        let until = Instant::now() + Duration::from_secs(3);
        let spinner = std::thread::spawn(move || spin_for_the_profiler(until));
        let profiling = std::thread::spawn(move || {
            get(
                address,
                "GET /debug/pprof/profile?seconds=2 HTTP/1.1\r\n\r\n",
            )
        });
        std::thread::sleep(Duration::from_millis(500));
        // One profile at a time.
        let second = get(
            address,
            "GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\n\r\n",
        );
        assert!(second.starts_with("HTTP/1.1 409"), "{second}");
        let answer = profiling.join().unwrap();
        spinner.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.contains("Content-Type: image/svg+xml"), "{answer}");
        let body = answer.split("\r\n\r\n").nth(1).unwrap();
        assert!(body.contains("<svg"), "{body}");
        // Two seconds of one spinning thread: most of 200 samples at 99 Hz.
        let samples: u64 = body
            .split("<title>all (")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.replace(',', "").parse().ok())
            .unwrap_or_else(|| panic!("no sample count in {body}"));
        assert!(samples >= 50, "{samples} samples");
        assert!(
            body.contains("spin_for_the_profiler"),
            "the spinning function is missing"
        );

        let bad = get(
            address,
            "GET /debug/pprof/profile?seconds=0 HTTP/1.1\r\n\r\n",
        );
        assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    }

    #[test]
    fn the_default_port_is_relative_to_the_main_port() {
        assert!(matches!(
            StatusPort::resolve(None, 4000, SQL_OFFSET),
            StatusPort::Default(10080)
        ));
        assert!(matches!(
            StatusPort::resolve(None, 65000, SQL_OFFSET),
            StatusPort::Off
        ));
        assert!(matches!(
            StatusPort::resolve(Some(0), 4000, SQL_OFFSET),
            StatusPort::Off
        ));
        assert!(matches!(
            StatusPort::resolve(Some(9000), 4000, SQL_OFFSET),
            StatusPort::Given(9000)
        ));
    }
}
