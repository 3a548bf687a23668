//! Restarts: a SIGTERM stops the playground cleanly, data and schema survive restarts, and
//! auto-increment values are never handed out twice, even after `kill -9`.

mod common;

use std::time::{Duration, Instant};

use common::Playground;

fn ids(p: &Playground) -> Vec<u64> {
    p.sql(Some("r"), "SELECT id FROM t ORDER BY id")
        .lines()
        .skip(1)
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[test]
fn data_survives_restarts_and_auto_increment_never_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let mut p = Playground::start_in(dir.path(), port);
    p.sql(None, "CREATE DATABASE r");
    p.sql(
        Some("r"),
        "CREATE TABLE t (id BIGINT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(10))",
    );
    p.sql(Some("r"), "INSERT INTO t (v) VALUES ('a'), ('b'), ('c')");
    let before = ids(&p);
    assert_eq!(before, vec![1, 2, 3]);

    // SIGTERM: a clean stop within a bounded time.
    let pid = p.child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = p.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the playground did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "clean shutdown exits 0: {status:?}");

    let mut p = Playground::start_in(dir.path(), port);
    p.sql(Some("r"), "INSERT INTO t (v) VALUES ('d')");
    let after_clean = ids(&p);
    assert_eq!(&after_clean[..3], &before[..]);
    assert!(after_clean[3] > 3);

    // kill -9 and restart: nothing acknowledged is lost and new ids exceed every old one.
    p.kill9();
    let p = Playground::start_in(dir.path(), port);
    assert_eq!(ids(&p), after_clean);
    p.sql(Some("r"), "INSERT INTO t (v) VALUES ('e')");
    let after_crash = ids(&p);
    assert_eq!(after_crash.len(), 5);
    assert!(after_crash[4] > after_clean[3], "{after_crash:?}");
    let schema = p.sql(Some("r"), "SHOW CREATE TABLE t");
    assert!(schema.contains("AUTO_INCREMENT"), "{schema}");
}
