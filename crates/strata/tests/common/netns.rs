//! A private network of hosts on one machine, for partition tests: a bridge in this network
//! namespace and one network namespace per host, each joined to the bridge by a veth pair, on
//! a /24 of 10.213.0.0/16 chosen from the process id. Cutting two hosts apart adds blackhole
//! routes on both sides; everything is removed when the network is dropped.
//!
//! Needs root (it runs `ip` from iproute2), as the test suite does on its machines.

use std::net::IpAddr;
use std::process::Command;

/// Runs `ip args`, which must succeed.
fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("run ip (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The bridge, its namespaces, and which pairs of hosts are cut apart.
pub struct Network {
    name: String,
    subnet: u32,
    hosts: usize,
}

impl Network {
    /// A network of `hosts` namespaces plus this one (at [`Network::bridge_ip`]).
    pub fn create(hosts: usize) -> Network {
        let id = std::process::id();
        let network = Network {
            name: format!("st{}", id % 100_000),
            subnet: 20 + id % 200,
            hosts,
        };
        let bridge = network.bridge();
        // Leftovers of an earlier run with the same id go first.
        network.remove();
        ip(&["link", "add", &bridge, "type", "bridge"]);
        let cidr = format!("{}/24", network.bridge_ip());
        ip(&["addr", "add", &cidr, "dev", &bridge]);
        ip(&["link", "set", &bridge, "up"]);
        for i in 0..hosts {
            let (ns, outside, inside) = (network.ns(i), network.veth(i, 'h'), network.veth(i, 'n'));
            ip(&["netns", "add", &ns]);
            ip(&[
                "link", "add", &outside, "type", "veth", "peer", "name", &inside,
            ]);
            ip(&["link", "set", &inside, "netns", &ns]);
            ip(&["link", "set", &outside, "master", &bridge]);
            ip(&["link", "set", &outside, "up"]);
            let cidr = format!("{}/24", network.ip(i));
            ip(&[
                "netns", "exec", &ns, "ip", "addr", "add", &cidr, "dev", &inside,
            ]);
            ip(&["netns", "exec", &ns, "ip", "link", "set", &inside, "up"]);
            ip(&["netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
        }
        network
    }

    fn bridge(&self) -> String {
        format!("{}br", self.name)
    }

    fn veth(&self, host: usize, side: char) -> String {
        format!("{}{side}{host}", self.name)
    }

    /// The namespace of host `i`.
    pub fn ns(&self, i: usize) -> String {
        format!("{}-h{i}", self.name)
    }

    /// This namespace's address on the network.
    pub fn bridge_ip(&self) -> IpAddr {
        IpAddr::from([10, 213, self.subnet as u8, 1])
    }

    /// Host `i`'s address.
    pub fn ip(&self, i: usize) -> IpAddr {
        IpAddr::from([10, 213, self.subnet as u8, 10 + i as u8])
    }

    /// Cuts host `i` off from hosts `others` (both ways); this namespace still reaches all.
    pub fn cut(&self, i: usize, others: &[usize]) {
        self.routes("add", i, others);
    }

    /// Undoes [`Network::cut`].
    pub fn heal(&self, i: usize, others: &[usize]) {
        self.routes("del", i, others);
    }

    fn routes(&self, verb: &str, i: usize, others: &[usize]) {
        for &j in others {
            for (from, to) in [(i, j), (j, i)] {
                let target = format!("{}/32", self.ip(to));
                ip(&[
                    "netns",
                    "exec",
                    &self.ns(from),
                    "ip",
                    "route",
                    verb,
                    "blackhole",
                    &target,
                ]);
            }
        }
    }

    fn remove(&self) {
        for i in 0..self.hosts {
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(i)])
                .output();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge()])
            .output();
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        self.remove();
    }
}
