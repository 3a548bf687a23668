//! What the cluster's own ports let in. Mutual TLS between the roles: `strata playground --pd
//! 3 --kv 3 --tls` generates a CA and a certificate per process, the cluster serves sysbench
//! (over TLS on the MySQL port too; the three placement drivers elect their leader over TLS),
//! and a caller without a certificate of that CA gets no answer from a placement driver or a
//! KV node, by gRPC or on the point-read connection. And what a KV node refuses even from a
//! caller it admits: timestamps far beyond the oracle's.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{free_port, sql_at, sysbench_command};
use strata_pd_client::{PdClient, Security, TimestampOracle};
use strata_proto::kv::{self as pb, kv_client::KvClient, GetRequest};
use strata_proto::security::{self, ClusterTls};

/// A `strata playground --pd 3 --kv 3 --tls` process; stopped (with its children) when
/// dropped.
struct TlsCluster {
    child: Child,
    dir: PathBuf,
    sql_port: u16,
    pd_port: u16,
    kv_port: u16,
}

impl TlsCluster {
    fn start(dir: &Path) -> TlsCluster {
        let (sql_port, pd_port) = (free_port(), consecutive_free_ports(3));
        let kv_port = consecutive_free_ports(3);
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args([
                "playground",
                "--pd",
                "3",
                "--kv",
                "3",
                "--tls",
                "--block-cache-mib",
                "64",
            ])
            .args(["--port", &sql_port.to_string()])
            .args(["--pd-port", &pd_port.to_string()])
            .args(["--kv-port", &kv_port.to_string()])
            .arg("--data-dir")
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("playground.err")).unwrap())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let banner = std::thread::spawn(move || {
            let mut text = String::new();
            let mut byte = [0u8; 1];
            while !text.contains("connect with") && stdout.read(&mut byte).is_ok_and(|n| n > 0) {
                text.push(byte[0] as char);
            }
            text
        });
        let cluster = TlsCluster {
            child,
            dir: dir.to_path_buf(),
            sql_port,
            pd_port,
            kv_port,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while !banner.is_finished() {
            assert!(
                Instant::now() < deadline,
                "no banner from the playground: {}",
                std::fs::read_to_string(dir.join("playground.err")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let banner = banner.join().unwrap();
        assert!(banner.contains("mutual TLS between the roles"), "{banner}");
        cluster
    }

    fn tls_dir(&self) -> PathBuf {
        self.dir.join("cluster/cluster-tls")
    }

    /// The security of the cluster's node `name`.
    fn node(&self, name: &str) -> Security {
        let (cert, key) = security::node_files(&self.tls_dir(), name);
        Security::tls(
            ClusterTls::load(&self.tls_dir().join(security::CA_FILE), &cert, &key).unwrap(),
        )
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn consecutive_free_ports(n: u16) -> u16 {
    for _ in 0..100 {
        let port = free_port();
        if port.checked_add(n).is_some()
            && (1..n).all(|i| std::net::TcpListener::bind(("127.0.0.1", port + i)).is_ok())
        {
            return port;
        }
    }
    panic!("no {n} consecutive free ports");
}

/// A timestamp from the placement driver at `pd_port`, reached as `security` says.
fn timestamp(pd_port: u16, security: Security) -> Result<u64, String> {
    let pd = PdClient::connect_with(&format!("127.0.0.1:{pd_port}"), security)
        .map_err(|e| e.to_string())?;
    pd.get_ts().map(|ts| ts.0).map_err(|e| e.to_string())
}

/// A gRPC point read from the KV node at `kv_port`, reached as `security` says.
fn grpc_get(kv_port: u16, security: &Security) -> Result<(), String> {
    let endpoint = security
        .endpoint(&format!("127.0.0.1:{kv_port}"))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(5));
    let runtime = common::runtime(1);
    runtime.block_on(async {
        let channel = endpoint.connect().await.map_err(|e| format!("{e:?}"))?;
        let request = GetRequest {
            key: b"t".to_vec(),
            ts: 1,
            ..Default::default()
        };
        KvClient::new(channel)
            .get(request)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

#[test]
fn a_cluster_with_tls_serves_sysbench_and_only_callers_certified_by_its_ca() {
    let temp = tempfile::tempdir().unwrap();
    let cluster = TlsCluster::start(temp.path());

    // sysbench, with TLS on the MySQL port as well: --mysql-ssl=on reads cacert.pem,
    // client-cert.pem and client-key.pem from its working folder (any client certificate
    // does; the SQL node's own is at hand).
    let work = tempfile::tempdir().unwrap();
    let mysql_cert = temp.path().join("cluster/tls/server-cert.pem");
    std::fs::copy(&mysql_cert, work.path().join("cacert.pem")).unwrap();
    let (cert, key) = security::node_files(&cluster.tls_dir(), "sql1");
    std::fs::copy(cert, work.path().join("client-cert.pem")).unwrap();
    std::fs::copy(key, work.path().join("client-key.pem")).unwrap();
    sql_at(cluster.sql_port, None, "CREATE DATABASE sbtest");
    let run = [
        "oltp_read_write",
        "--time=5",
        "--threads=4",
        "--mysql-ssl=on",
        "run",
    ];
    for phase in [&["oltp_read_write", "prepare"][..], &run] {
        let out = sysbench_command(cluster.sql_port, 2, 1000)
            .current_dir(work.path())
            .args(phase)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && !text.contains("FATAL"),
            "sysbench {phase:?}:\n{text}"
        );
        if phase.contains(&"run") {
            assert!(text.contains("transactions:"), "{text}");
        }
    }
    assert_eq!(
        sql_at(
            cluster.sql_port,
            None,
            "SELECT COUNT(*) FROM sbtest.sbtest1"
        ),
        "COUNT(*)\n1000\n"
    );

    // A node of the cluster gets answers (so the refusals below are TLS's doing).
    let ours = cluster.node("sql1");
    // Each placement driver answers it: the leader with a timestamp, the others by naming the
    // leader the three elected over TLS. (A leader just elected answers once it has saved its
    // timestamp window; on a busy machine the three may still be settling.)
    for pd in 0..3 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match timestamp(cluster.pd_port + pd, ours.clone()) {
                Ok(ts) if ts > 0 => break,
                Err(e) if e.contains("does not serve (leader:") => break,
                other => assert!(
                    Instant::now() < deadline,
                    "placement driver {pd}: {other:?}"
                ),
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    grpc_get(cluster.kv_port, &ours).expect("a certified gRPC read");

    // A plain caller and one certified by another CA get nothing.
    let elsewhere = tempfile::tempdir().unwrap();
    security::generate_local(
        elsewhere.path(),
        &["intruder".into()],
        &["127.0.0.1".into()],
    )
    .unwrap();
    let (cert, key) = security::node_files(elsewhere.path(), "intruder");
    let stranger = Security::tls(
        ClusterTls::load(&elsewhere.path().join(security::CA_FILE), &cert, &key).unwrap(),
    );
    for (who, security) in [("plain", Security::plain()), ("another CA", stranger)] {
        for pd in 0..3 {
            let refused = timestamp(cluster.pd_port + pd, security.clone());
            assert!(
                refused
                    .as_ref()
                    .is_err_and(|e| !e.contains("does not serve")),
                "{who}: placement driver {pd} answered {refused:?}"
            );
        }
        for kv in 0..3 {
            let refused = grpc_get(cluster.kv_port + kv, &security);
            assert!(refused.is_err(), "{who}: KV node {kv} answered");
        }
    }

    // The point-read connection: a plain preface and frame get the connection closed.
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", cluster.kv_port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let mut hello = strata_proto::frame::READ_STREAM_PREFACE.to_vec();
    hello.extend_from_slice(&[0u8; 16]);
    let _ = stream.write_all(&hello);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(
        !answer.starts_with(strata_proto::frame::READ_STREAM_PREFACE),
        "a plain point-read connection was served"
    );
    assert!(
        answer.len() < 16,
        "a plain point-read connection got {answer:?}"
    );
}

/// A timestamp an hour past `now`'s.
fn an_hour_after(now: u64) -> u64 {
    now + ((3_600_000u64) << 18)
}

#[test]
fn timestamps_far_beyond_the_oracle_are_refused_and_poison_nothing() {
    let cluster = Cluster::start(1, 1);
    let port = cluster.sql[0].port;
    sql_at(
        port,
        None,
        "CREATE DATABASE f; CREATE TABLE f.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO f.t VALUES (1, 10)",
    );
    let now = timestamp(cluster.pd[0].port, Security::plain()).unwrap();
    let future = an_hour_after(now);
    let kv = format!("http://127.0.0.1:{}", cluster.kv[0].port);
    // Requests routed to the region of the table's rows, as a SQL node routes them.
    let pd = PdClient::connect(&cluster.pd_address).unwrap();
    let region = pd.region_of(b"t").unwrap().unwrap().region.unwrap();
    let context = Some(pb::Context {
        region_id: region.id,
        region_epoch: region.epoch,
    });
    let runtime = common::runtime(1);
    let refusal = |error: Option<pb::Error>| match error.and_then(|e| e.kind) {
        Some(pb::error::Kind::Key(key)) => format!("{:?}", key.kind),
        other => panic!("expected a key error, got {other:?}"),
    };
    runtime.block_on(async {
        let mut client = KvClient::connect(kv).await.unwrap();
        // A point read (gRPC), a scan and a commit from an hour ahead.
        let get = client
            .get(GetRequest {
                context,
                key: b"t".to_vec(),
                ts: future,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(refusal(get.error).contains("beyond what the timestamp oracle"));
        let scan = client
            .scan(pb::ScanRequest {
                context,
                start: b"t".to_vec(),
                ts: future,
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(refusal(scan.error).contains("beyond"));
        let commit = client
            .commit(pb::CommitRequest {
                context,
                keys: vec![b"t".to_vec()],
                start_ts: now,
                commit_ts: future,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(refusal(commit.error).contains("beyond"));
        // A read at the newest data (the SQL node's autocommit point reads) is not refused.
        let latest = client
            .get(GetRequest {
                context,
                key: b"t".to_vec(),
                ts: u64::MAX,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(latest.error.is_none(), "{:?}", latest.error);
    });
    // Nothing was poisoned: a commit right after is seen by the next statement (a read an
    // hour ahead, had it raised the node's max_read_ts, would have put this commit an hour
    // in the future).
    for v in 2..5 {
        let out = sql_at(
            port,
            None,
            &format!("INSERT INTO f.t VALUES ({v}, {v}); SELECT COUNT(*) FROM f.t"),
        );
        assert_eq!(out, format!("COUNT(*)\n{v}\n"));
    }
}
