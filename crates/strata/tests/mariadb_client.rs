//! The `mariadb` command-line client in one session: create, insert, select, show tables, an
//! error, and the session staying usable after it.

mod common;

use common::Playground;

#[test]
fn one_session_of_the_mariadb_client() {
    let p = Playground::start();
    let out = p.mariadb(
        None,
        "CREATE DATABASE shop; USE shop; \
         CREATE TABLE items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20) NOT NULL, price DECIMAL(8,2) DEFAULT '0'); \
         INSERT INTO items (name, price) VALUES ('apple', 1.25), ('pear', 2.5); \
         SELECT id, name, price FROM items ORDER BY id; \
         SHOW TABLES; \
         SELECT DATABASE(), LAST_INSERT_ID();",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1\tapple\t1.25"), "{stdout}");
    assert!(stdout.contains("2\tpear\t2.50"), "{stdout}");
    assert!(stdout.contains("Tables_in_shop\nitems"), "{stdout}");
    assert!(stdout.contains("shop\t1"), "{stdout}");

    // An error in the middle of a session: the client reports it, with MySQL's code and state,
    // and `--force` goes on in the same connection.
    let mut child = std::process::Command::new(common::mariadb_binary())
        .args([
            "-h",
            "127.0.0.1",
            "-P",
            &p.port.to_string(),
            "-u",
            "root",
            "--batch",
            "--force",
            "shop",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"INSERT INTO items (id, name) VALUES (1, 'dup');\nSELECT COUNT(*) AS n FROM items;\nSELECT nope FROM items;\nSELECT 'still here';\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ERROR 1062 (23000)"), "{stderr}");
    assert!(stderr.contains("ERROR 1054 (42S22)"), "{stderr}");
    assert!(stdout.contains("n\n2"), "{stdout}");
    assert!(stdout.contains("still here"), "{stdout}");
}
