//! Resource use of server processes, sampled from /proc while a benchmark runs, and the size of
//! data folders on disk.
//!
//! CPU time comes from `/proc/PID/stat` (user + system, all threads), memory from `VmRSS` in
//! `/proc/PID/status`, storage IO from `read_bytes`/`write_bytes` in `/proc/PID/io` (bytes
//! that really reached or came from the block layer, not page-cache hits). Several processes
//! (a cluster on one machine) are summed.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::result::{ResourceSample, ResourceUsage};

/// How often the sampler reads /proc.
const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// Cumulative counters of a set of processes at one instant.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    cpu_seconds: f64,
    rss_bytes: u64,
    read_bytes: u64,
    write_bytes: u64,
}

/// Samples the given processes once a second on a background thread until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<ResourceUsage>,
}

impl Sampler {
    /// Starts sampling `pids`. Processes that vanish are counted as zero from then on.
    pub fn start(pids: Vec<u32>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("bench-sampler".into())
            .spawn(move || sample_until(pids, &flag))
            .expect("spawn the resource sampler");
        Sampler { stop, handle }
    }

    /// Stops sampling and returns what was seen.
    pub fn finish(self) -> ResourceUsage {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

fn sample_until(pids: Vec<u32>, stop: &AtomicBool) -> ResourceUsage {
    let ticks = clock_ticks_per_second();
    let start = Instant::now();
    let first = read_counters(&pids, ticks);
    let mut previous = (start, first);
    let mut usage = ResourceUsage {
        pids: pids.clone(),
        rss_max_bytes: first.rss_bytes,
        ..Default::default()
    };
    let mut last = first;
    while !stop.load(Ordering::Relaxed) {
        // Sleep in small steps so that finish() returns promptly.
        let deadline = previous.0 + SAMPLE_INTERVAL;
        while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let now = Instant::now();
        let counters = read_counters(&pids, ticks);
        let dt = now.duration_since(previous.0).as_secs_f64();
        if dt > 0.0 {
            usage.samples.push(ResourceSample {
                second: now.duration_since(start).as_secs_f64(),
                cpu_cores: (counters.cpu_seconds - previous.1.cpu_seconds).max(0.0) / dt,
                rss_bytes: counters.rss_bytes,
                read_bytes_per_second: counters.read_bytes.saturating_sub(previous.1.read_bytes)
                    as f64
                    / dt,
                write_bytes_per_second: counters.write_bytes.saturating_sub(previous.1.write_bytes)
                    as f64
                    / dt,
            });
        }
        usage.rss_max_bytes = usage.rss_max_bytes.max(counters.rss_bytes);
        previous = (now, counters);
        last = counters;
    }
    let wall = start.elapsed().as_secs_f64();
    usage.cpu_seconds = (last.cpu_seconds - first.cpu_seconds).max(0.0);
    usage.cpu_cores = if wall > 0.0 {
        usage.cpu_seconds / wall
    } else {
        0.0
    };
    usage.disk_read_bytes = last.read_bytes.saturating_sub(first.read_bytes);
    usage.disk_write_bytes = last.write_bytes.saturating_sub(first.write_bytes);
    usage
}

fn read_counters(pids: &[u32], ticks: f64) -> Counters {
    let mut total = Counters::default();
    for &pid in pids {
        if let Some(c) = process_counters(pid, ticks) {
            total.cpu_seconds += c.cpu_seconds;
            total.rss_bytes += c.rss_bytes;
            total.read_bytes += c.read_bytes;
            total.write_bytes += c.write_bytes;
        }
    }
    total
}

fn process_counters(pid: u32, ticks: f64) -> Option<Counters> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces; fields follow the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, i.e. 11 and 12 after the name.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss_kib = field_value(&status, "VmRSS:").unwrap_or(0);
    let io = fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    Some(Counters {
        cpu_seconds: (utime + stime) / ticks,
        rss_bytes: rss_kib * 1024,
        read_bytes: field_value(&io, "read_bytes:").unwrap_or(0),
        write_bytes: field_value(&io, "write_bytes:").unwrap_or(0),
    })
}

/// The number after `name` on the line that starts with it.
fn field_value(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// `sysconf(_SC_CLK_TCK)`, read through `getconf` (100 on every Linux this runs on).
fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|t: &f64| *t > 0.0)
        .unwrap_or(100.0)
}

/// Processes whose command name (`/proc/PID/comm`) is `name`.
pub fn pids_named(name: &str) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim() == name)
                .unwrap_or(false)
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// Bytes that the files under `path` occupy on disk (allocated blocks, as `du` counts them).
pub fn disk_usage(path: &Path) -> std::io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(path)?;
    if !meta.is_dir() {
        return Ok(meta.blocks() * 512);
    }
    let mut total = meta.blocks() * 512;
    for entry in fs::read_dir(path)? {
        let entry = entry?;
        // A file removed while we walk (compaction, WAL recycling) is simply not counted.
        match disk_usage(&entry.path()) {
            Ok(bytes) => total += bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_this_process() {
        let sampler = Sampler::start(vec![std::process::id()]);
        // Burn some CPU so that the sample is not zero.
        let deadline = Instant::now() + Duration::from_millis(1300);
        let mut x = 0u64;
        while Instant::now() < deadline {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let usage = sampler.finish();
        assert!(usage.cpu_seconds > 0.5, "{usage:?}");
        assert!(usage.rss_max_bytes > 0);
        assert!(!usage.samples.is_empty());
    }

    #[test]
    fn disk_usage_counts_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a"), vec![1u8; 100_000]).unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/b"), vec![1u8; 50_000]).unwrap();
        let bytes = disk_usage(dir.path()).unwrap();
        assert!(bytes >= 150_000, "{bytes}");
    }

    #[test]
    fn finds_processes_by_name() {
        let me = fs::read_to_string(format!("/proc/{}/comm", std::process::id())).unwrap();
        assert!(pids_named(me.trim()).contains(&std::process::id()));
    }
}
