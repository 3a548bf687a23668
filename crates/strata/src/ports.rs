//! A role whose port is taken fails before it does anything else, with a message that names
//! the port and the process holding it (read from `/proc`, as `ss -ltnp` does).

use std::net::{SocketAddr, TcpListener};

/// Fails when `address` cannot be listened on; `flag` is the option that chooses it.
pub fn ensure_free(address: SocketAddr, flag: &str) -> Result<(), String> {
    if address.port() == 0 {
        return Ok(());
    }
    match TcpListener::bind(address) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            let holder = match holder_of(address.port()) {
                Some((pid, command)) => format!(" by process {pid} ({command})"),
                None => String::new(),
            };
            Err(format!(
                "port {} ({address}) is taken{holder}: stop that process or choose another \
                 port with {flag}",
                address.port()
            ))
        }
        Err(e) => Err(format!("cannot listen on {address}: {e}")),
    }
}

/// The process (id and command line) that listens on TCP `port`, if this user may see it.
pub fn holder_of(port: u16) -> Option<(u32, String)> {
    let inodes = listening_inodes(port);
    if inodes.is_empty() {
        return None;
    }
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|target| {
                let target = target.to_string_lossy();
                target
                    .strip_prefix("socket:[")
                    .and_then(|rest| rest.strip_suffix(']'))
                    .is_some_and(|inode| inodes.iter().any(|i| i == inode))
            })
        });
        if holds {
            let command = std::fs::read(entry.path().join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            return Some((pid, command));
        }
    }
    None
}

/// Socket inodes of the TCP listeners on `port` (IPv4 and IPv6).
fn listening_inodes(port: u16) -> Vec<String> {
    const LISTEN: &str = "0A";
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        // sl local_address rem_address st tx_queue:rx_queue tr:when retrnsmt uid timeout inode
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let local_port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) && *state == LISTEN {
                inodes.push((*inode).to_string());
            }
        }
    }
    inodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_port_names_this_process_as_its_holder() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let error = ensure_free(address, "--port").unwrap_err();
        assert!(
            error.contains(&format!("port {} ", address.port()))
                && error.contains(&format!("by process {}", std::process::id()))
                && error.contains("--port"),
            "{error}"
        );
        drop(listener);
        assert_eq!(ensure_free(address, "--port"), Ok(()));
    }
}
