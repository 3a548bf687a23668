//! The real `mariadb` command-line client (MariaDB Connector/C, classic EOF packets) against the
//! server over the scripted backend.

mod common;

use std::process::{Command, Output};

use common::{backend, installed, TestServer};
use strata_mysql::ServerConfig;

const MARIADB: &str = "/usr/bin/mariadb";

fn mariadb(server: &TestServer, args: &[&str]) -> Output {
    let port = server.addr.port().to_string();
    Command::new(MARIADB)
        .args([
            "--no-defaults",
            "-h127.0.0.1",
            "-P",
            &port,
            "--connect-timeout=10",
        ])
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "mariadb failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "mariadb succeeded: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn select_one() {
    if !installed(MARIADB) {
        return;
    }
    let server = TestServer::start(ServerConfig::default(), backend());
    assert_eq!(
        stdout(&mariadb(&server, &["-uroot", "-e", "select 1"])),
        "1\n1\n"
    );
}

#[test]
fn multi_statements_rows_nulls_and_database() {
    if !installed(MARIADB) {
        return;
    }
    let server = TestServer::start(ServerConfig::default(), backend());
    let output = mariadb(
        &server,
        &[
            "-uroot",
            "-Dsbtest",
            "-e",
            "select 1; begin; select id, word from words; commit",
        ],
    );
    assert_eq!(stdout(&output), "1\n1\nid\tword\n1\tone\n2\tNULL\n");
    let output = mariadb(
        &server,
        &["-uroot", "-Dsbtest", "-e", "select 1; bogus; select 1"],
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "1\n1\n");
    assert!(stderr(&output).contains("ERROR 1064 (42000)"));
}

#[test]
fn passwords_and_unknown_database() {
    if !installed(MARIADB) {
        return;
    }
    let server = TestServer::start(
        ServerConfig::default(),
        backend().with_user("root", "").with_user("app", "secret"),
    );
    assert_eq!(
        stdout(&mariadb(&server, &["-uapp", "-psecret", "-e", "select 1"])),
        "1\n1\n"
    );
    let denied = stderr(&mariadb(&server, &["-uapp", "-pwrong", "-e", "select 1"]));
    assert!(
        denied.contains(
            "ERROR 1045 (28000): Access denied for user 'app'@'127.0.0.1' (using password: YES)"
        ),
        "{denied}"
    );
    let denied = stderr(&mariadb(&server, &["-uapp", "-e", "select 1"]));
    assert!(denied.contains("(using password: NO)"), "{denied}");
    let denied = stderr(&mariadb(&server, &["-unobody", "-e", "select 1"]));
    assert!(denied.contains("ERROR 1045"), "{denied}");
    let unknown = stderr(&mariadb(&server, &["-uroot", "-Dnosuch", "-e", "select 1"]));
    assert!(
        unknown.contains("ERROR 1049 (42000): Unknown database 'nosuch'"),
        "{unknown}"
    );
}

#[test]
fn too_many_connections() {
    if !installed(MARIADB) {
        return;
    }
    let server = TestServer::start(
        ServerConfig {
            max_connections: 1,
            ..ServerConfig::default()
        },
        backend(),
    );
    let held = common::raw_login(server.addr);
    let refused = stderr(&mariadb(&server, &["-uroot", "-e", "select 1"]));
    assert!(
        refused.contains("1040") && refused.contains("Too many connections"),
        "{refused}"
    );
    drop(held);
    // The slot is freed when the server notices the close; retry briefly.
    for _ in 0..50 {
        let output = mariadb(&server, &["-uroot", "-e", "select 1"]);
        if output.status.success() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("the connection slot was not freed");
}
