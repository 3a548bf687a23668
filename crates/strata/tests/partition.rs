//! A network partition: the KV node that leads the data, with a SQL node next to it, is cut
//! off from the other two KV nodes (each KV node runs in its own network namespace; the cut
//! is a pair of blackhole routes between namespaces). Writes through the SQL node on the
//! minority side are never acknowledged while the cut lasts; the majority elects a new leader
//! and keeps acknowledging writes; once the cut heals, every write acknowledged on either
//! side is readable on both.

mod common;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use common::acked::{self, Inserters};
use common::cluster::Process;
use common::netns::Network;
use common::{free_port, mariadb_on};

/// The KV port inside each host's namespace.
const KV_PORT: u16 = 20160;
/// How long the cut lasts.
const CUT: Duration = Duration::from_secs(12);
/// After the cut, a write in flight may still be acknowledged for this long (it committed
/// before the cut, and its answer was on its way).
const IN_FLIGHT: Duration = Duration::from_millis(250);
/// How long the majority may take to elect a leader and serve writes again.
const MAJORITY_RECOVERY: Duration = Duration::from_secs(6);
/// How long a schema change or the first leader may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The host index of the KV node that leads the region of `key`, as the placement driver
/// reports it.
fn leader_host(pd: &str, network: &Network, key: &[u8]) -> usize {
    let pd = strata_pd_client::PdClient::connect(pd).expect("a placement driver client");
    let deadline = Instant::now() + SETUP_TIMEOUT;
    loop {
        let address = pd
            .region_of(key)
            .ok()
            .flatten()
            .and_then(|r| r.leader)
            .and_then(|l| pd.store_address(l.store_id).ok());
        if let Some(host) =
            address.and_then(|a| (0..3).find(|&i| a == format!("{}:{KV_PORT}", network.ip(i))))
        {
            return host;
        }
        assert!(
            Instant::now() < deadline,
            "no leader within {SETUP_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until `sql` succeeds through the SQL node at `host`:`port`.
fn wait_until_ok(host: IpAddr, port: u16, sql: &str) {
    let deadline = Instant::now() + SETUP_TIMEOUT;
    while !mariadb_on(&host.to_string(), port, None, sql)
        .status
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "{sql} kept failing on {host}:{port}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_leader_cut_off_from_the_majority_acknowledges_nothing_and_the_majority_serves() {
    let network = Network::create(3);
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = temp.path();
    let path = |name: &str| dir.join(name).display().to_string();
    let here: IpAddr = [127, 0, 0, 1].into();

    let pd_port = free_port();
    let pd_address = format!("{}:{pd_port}", network.bridge_ip());
    let _pd = Process::spawn_in(
        None,
        network.bridge_ip(),
        ["pd", "--listen", &pd_address, "--data-dir", &path("pd")]
            .map(String::from)
            .to_vec(),
        pd_port,
        dir.join("pd.log"),
    );
    let _kv: Vec<Process> = (0..3)
        .map(|i| {
            let listen = format!("{}:{KV_PORT}", network.ip(i));
            let data = path(&format!("kv{i}"));
            let args = [
                "kv",
                "--pd",
                &pd_address,
                "--listen",
                &listen,
                "--data-dir",
                &data,
            ];
            Process::spawn_in(
                Some(&network.ns(i)),
                network.ip(i),
                [&args[..], &["--block-cache-mib", "64"]]
                    .concat()
                    .into_iter()
                    .map(String::from)
                    .collect(),
                KV_PORT,
                dir.join(format!("kv{i}.log")),
            )
        })
        .collect();
    let sql = |netns: Option<&str>, host: IpAddr, name: &str| {
        let port = free_port();
        let (host_text, port_text) = (host.to_string(), port.to_string());
        let slow_log = dir.join(format!("{name}-slow.log")).display().to_string();
        let args = [
            "server",
            "--pd",
            &pd_address,
            "--host",
            &host_text,
            "--port",
            &port_text,
            "--slow-query-log-file",
            &slow_log,
            // Reached from other namespaces' addresses, as root without a password.
            "--insecure",
        ];
        let log = dir.join(format!("{name}.log"));
        Process::spawn_in(netns, host, args.map(String::from).to_vec(), port, log)
    };

    // The SQL node of the majority runs here and reaches every host; the minority's runs next
    // to the leader.
    let majority_sql = sql(None, here, "sql-majority");
    let leader = leader_host(&pd_address, &network, b"");
    let others: Vec<usize> = (0..3).filter(|&i| i != leader).collect();
    let minority_ip = network.ip(leader);
    let minority_sql = sql(Some(&network.ns(leader)), minority_ip, "sql-minority");
    acked::create_table(majority_sql.port, majority_sql.port);
    wait_until_ok(
        minority_ip,
        minority_sql.port,
        "SELECT COUNT(*) FROM crash.acked",
    );

    let started = Instant::now();
    let majority = Inserters::start_numbered("127.0.0.1", majority_sql.port, 0..2, started);
    let minority =
        Inserters::start_numbered(&minority_ip.to_string(), minority_sql.port, 2..4, started);
    std::thread::sleep(Duration::from_secs(4));
    network.cut(leader, &others);
    let cut_at = started.elapsed();
    std::thread::sleep(CUT);
    let healed_at = started.elapsed();
    network.heal(leader, &others);
    std::thread::sleep(Duration::from_secs(5));
    let majority = majority.stop();
    let minority = minority.stop();
    let (majority_acks, minority_acks) = (&majority.acknowledged, &minority.acknowledged);

    let during = |acks: &[(u64, Duration)], from: Duration| {
        acks.iter()
            .filter(|(_, at)| *at > from && *at < healed_at)
            .count()
    };
    println!(
        "cut at {cut_at:?}, healed at {healed_at:?}; majority: {} acknowledged, {} during the \
         cut; minority: {} acknowledged, {} during the cut",
        majority_acks.len(),
        during(majority_acks, cut_at),
        minority_acks.len(),
        during(minority_acks, cut_at),
    );
    let last_minority_ack = minority_acks
        .iter()
        .map(|(_, at)| *at)
        .filter(|at| *at < healed_at)
        .max();
    println!("the minority's last acknowledgement before the heal: {last_minority_ack:?}");
    let minority_before = minority_acks.iter().filter(|(_, at)| *at < cut_at).count();
    assert!(
        minority_before > 0,
        "the minority's SQL node wrote nothing before the cut"
    );
    assert_eq!(
        during(minority_acks, cut_at + IN_FLIGHT),
        0,
        "writes acknowledged on the minority side while it was cut off"
    );
    assert!(
        during(majority_acks, cut_at + MAJORITY_RECOVERY) > 0,
        "the majority acknowledged no write from {MAJORITY_RECOVERY:?} after the cut"
    );

    let outcome = majority.merge(minority);
    acked::assert_present(majority_sql.port, &outcome);
    acked::assert_present_on(&minority_ip.to_string(), minority_sql.port, &outcome);
}
