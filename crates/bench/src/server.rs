//! The server under test, as far as the benchmark tools control it: which processes to sample,
//! which folder holds its data, and how to stop, restore and start it between runs.
//!
//! Three cases: a Strata playground that the tool starts itself (it knows everything), an
//! outside server with commands to stop and start it and a data folder to copy (e.g. MariaDB
//! through `mariadb-peer.sh`), and an outside server the tool only measures.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::client::{self, Target};
use crate::resources;

/// How long a server may take to accept logins after it is started.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a playground may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// A failure to control the server.
#[derive(Debug)]
pub struct ServerError(pub String);

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServerError {}

impl From<client::ClientError> for ServerError {
    fn from(e: client::ClientError) -> Self {
        ServerError(e.0)
    }
}

/// The server under test.
pub enum Server {
    /// A `strata playground` child process.
    Playground(Playground),
    /// A server started elsewhere.
    External(External),
}

/// A playground this tool runs as a child process.
pub struct Playground {
    /// The `strata` binary.
    pub binary: PathBuf,
    /// Working folder: `data/` is the playground's data, `prepared/` the copy restored
    /// between runs, `playground.log` its output.
    pub dir: PathBuf,
    pub target: Target,
    child: Option<Child>,
}

/// A server started elsewhere, with optional control.
pub struct External {
    /// Process ids to sample.
    pub pids: Vec<u32>,
    /// Process name to look up at every run (its pid changes across restarts).
    pub process_name: Option<String>,
    /// The server's data folder, to measure and to restore.
    pub data_dir: Option<PathBuf>,
    /// Shell command that stops the server (before restoring its data folder).
    pub stop_command: Option<String>,
    /// Shell command that starts it again.
    pub start_command: Option<String>,
    /// Where the data folder is copied to after prepare.
    pub snapshot_dir: Option<PathBuf>,
    /// The server's status port (`host:port`), whose `/metrics` is read around each run.
    pub status_address: Option<String>,
    pub target: Target,
}

impl Server {
    /// The processes to sample now.
    pub fn pids(&self) -> Vec<u32> {
        match self {
            Server::Playground(p) => p.child.as_ref().map(|c| vec![c.id()]).unwrap_or_default(),
            Server::External(e) => {
                let mut pids = e.pids.clone();
                if let Some(name) = &e.process_name {
                    pids.extend(resources::pids_named(name));
                }
                pids.sort_unstable();
                pids.dedup();
                pids
            }
        }
    }

    /// The status port whose `/metrics` is read around each run: the playground's default
    /// (its MySQL port + 6080), or the one given for an outside server.
    pub fn status_address(&self) -> Option<String> {
        match self {
            Server::Playground(p) => p
                .target
                .port
                .checked_add(6080)
                .map(|port| format!("{}:{port}", p.target.host)),
            Server::External(e) => e.status_address.clone(),
        }
    }

    /// The folder holding the server's data, when known.
    pub fn data_dir(&self) -> Option<PathBuf> {
        match self {
            Server::Playground(p) => Some(p.dir.join("data")),
            Server::External(e) => e.data_dir.clone(),
        }
    }

    /// Whether [`Server::snapshot`] and [`Server::restore`] can work.
    pub fn can_restore(&self) -> bool {
        match self {
            Server::Playground(_) => true,
            Server::External(e) => {
                e.data_dir.is_some() && e.stop_command.is_some() && e.start_command.is_some()
            }
        }
    }

    /// "playground" or "data-dir": how restores are done.
    pub fn restore_mode(&self) -> &'static str {
        match self {
            Server::Playground(_) => "playground",
            Server::External(_) => "data-dir",
        }
    }

    /// Stops the server, copies its data folder aside and starts it again.
    pub fn snapshot(&mut self) -> Result<(), ServerError> {
        let (data, copy) = self.restore_paths()?;
        self.stop()?;
        copy_dir(&data, &copy)?;
        self.start()
    }

    /// Stops the server, replaces its data folder with the snapshot and starts it again.
    pub fn restore(&mut self) -> Result<(), ServerError> {
        let (data, copy) = self.restore_paths()?;
        if !copy.exists() {
            return Err(ServerError(format!("no snapshot at {}", copy.display())));
        }
        self.stop()?;
        copy_dir(&copy, &data)?;
        self.start()
    }

    fn restore_paths(&self) -> Result<(PathBuf, PathBuf), ServerError> {
        match self {
            Server::Playground(p) => Ok((p.dir.join("data"), p.dir.join("prepared"))),
            Server::External(e) => {
                let data = e.data_dir.clone().ok_or_else(|| {
                    ServerError(
                        "restoring needs --data-dir, --stop-command and --start-command".into(),
                    )
                })?;
                let copy = e.snapshot_dir.clone().unwrap_or_else(|| {
                    let mut name = data.file_name().unwrap_or_default().to_os_string();
                    name.push(".prepared");
                    data.with_file_name(name)
                });
                Ok((data, copy))
            }
        }
    }

    /// Starts the server and waits until it accepts logins.
    pub fn start(&mut self) -> Result<(), ServerError> {
        match self {
            Server::Playground(p) => p.start(),
            Server::External(e) => {
                if let Some(command) = &e.start_command {
                    shell(command)?;
                }
                let mut login = e.target.clone();
                login.db.clear();
                client::wait_until_ready(&login, START_TIMEOUT)?;
                Ok(())
            }
        }
    }

    /// Stops the server (a playground with SIGTERM, an outside server with its command).
    pub fn stop(&mut self) -> Result<(), ServerError> {
        match self {
            Server::Playground(p) => p.stop(),
            Server::External(e) => match &e.stop_command {
                Some(command) => shell(command),
                None => Err(ServerError("no --stop-command given".into())),
            },
        }
    }
}

impl Playground {
    /// A playground on `target`'s address with its files in `dir` (not started yet).
    pub fn new(binary: PathBuf, dir: PathBuf, target: Target) -> Playground {
        Playground {
            binary,
            dir,
            target,
            child: None,
        }
    }

    fn start(&mut self) -> Result<(), ServerError> {
        if self.child.is_some() {
            return Ok(());
        }
        fs::create_dir_all(&self.dir)
            .map_err(|e| ServerError(format!("creating {}: {e}", self.dir.display())))?;
        let log_path = self.dir.join("playground.log");
        let log = File::options()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| ServerError(format!("opening {}: {e}", log_path.display())))?;
        let err = log
            .try_clone()
            .map_err(|e| ServerError(format!("{}: {e}", log_path.display())))?;
        let child = Command::new(&self.binary)
            .arg("playground")
            .arg("--data-dir")
            .arg(self.dir.join("data"))
            .arg("--host")
            .arg(&self.target.host)
            .arg("--port")
            .arg(self.target.port.to_string())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| ServerError(format!("starting {}: {e}", self.binary.display())))?;
        self.child = Some(child);
        let mut login = self.target.clone();
        login.db.clear();
        if let Err(e) = client::wait_until_ready(&login, START_TIMEOUT) {
            let _ = self.stop();
            return Err(ServerError(format!("{e} (see {})", log_path.display())));
        }
        Ok(())
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ServerError(format!(
                        "playground did not stop within {STOP_TIMEOUT:?} of SIGTERM; killed it"
                    )));
                }
            }
        }
    }
}

impl Drop for Playground {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn shell(command: &str) -> Result<(), ServerError> {
    let status = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| ServerError(format!("running `{command}`: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(ServerError(format!("`{command}` failed: {status}")))
    }
}

/// Replaces `to` with a copy of `from` (ownership and modes kept, as `cp -a` does).
fn copy_dir(from: &Path, to: &Path) -> Result<(), ServerError> {
    if to.exists() {
        fs::remove_dir_all(to)
            .map_err(|e| ServerError(format!("removing {}: {e}", to.display())))?;
    }
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .map_err(|e| ServerError(format!("cp: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(ServerError(format!(
            "copying {} to {} failed: {status}",
            from.display(),
            to.display()
        )))
    }
}
