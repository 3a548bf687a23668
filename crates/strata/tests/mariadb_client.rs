//! The `mariadb` command-line client in one session: create, insert, select, show tables, an
//! error, and the session staying usable after it. And `mariadb-dump` of tables and views,
//! restored through `mariadb`.

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
    let out = common::mariadb_reading(
        p.port,
        &["--batch", "--force", "shop"],
        b"INSERT INTO items (id, name) VALUES (1, 'dup');\nSELECT COUNT(*) AS n FROM items;\nSELECT nope FROM items;\nSELECT 'still here';\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ERROR 1062 (23000)"), "{stderr}");
    assert!(stderr.contains("ERROR 1054 (42S22)"), "{stderr}");
    assert!(stdout.contains("n\n2"), "{stdout}");
    assert!(stdout.contains("still here"), "{stdout}");
}

/// `mariadb-dump` of a database with tables and views, restored through the `mariadb` client
/// into another database: the same tables, views and rows come back.
#[test]
fn a_mariadb_dump_restores_into_another_database() {
    let p = Playground::start();
    p.sql(
        None,
        "CREATE DATABASE src; USE src; \
         CREATE TABLE items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20) NOT NULL, \
           price DECIMAL(8,2), added DATETIME, KEY name (name)); \
         INSERT INTO items (name, price, added) VALUES ('apple', 1.25, '2024-01-02 03:04:05'), \
           ('it''s \"quoted\"', NULL, NULL), ('pear', 2.5, '2024-05-06 07:08:09'); \
         CREATE TABLE tags (item INT, tag VARCHAR(10)); \
         INSERT INTO tags VALUES (1, 'fruit'), (3, 'fruit'), (3, 'green'); \
         CREATE VIEW priced AS SELECT id, name, price * 2 AS double_price FROM items WHERE price IS NOT NULL; \
         CREATE VIEW tagged (item_name, tags) AS SELECT i.name, COUNT(*) FROM items i JOIN tags t ON t.item = i.id GROUP BY i.name;",
    );
    let dump = std::process::Command::new("mariadb-dump")
        .args([
            "-h",
            "127.0.0.1",
            "-P",
            &p.port.to_string(),
            "-u",
            "root",
            "src",
        ])
        .output()
        .expect("run mariadb-dump (from mariadb-client)");
    let text = String::from_utf8_lossy(&dump.stdout).into_owned();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    assert!(text.contains("CREATE TABLE `items`"), "{text}");
    assert!(
        text.contains("VIEW `tagged` (`item_name`,`tags`) AS"),
        "{text}"
    );

    p.sql(None, "CREATE DATABASE copy");
    let out = common::mariadb_reading(p.port, &["copy"], text.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    for query in [
        "SHOW FULL TABLES",
        "SELECT * FROM items ORDER BY id",
        "SELECT * FROM tags ORDER BY item, tag",
        "SELECT * FROM priced ORDER BY id",
        "SELECT * FROM tagged ORDER BY item_name",
        "SHOW CREATE TABLE items",
    ] {
        let original = p.sql(Some("src"), query);
        let copied = p
            .sql(Some("copy"), query)
            .replace("Tables_in_copy", "Tables_in_src");
        assert_eq!(copied, original, "{query}");
        assert!(original.lines().count() > 1, "{query}: {original}");
    }
    // The next id continues after the restored rows.
    let next = p.sql(
        Some("copy"),
        "INSERT INTO items (name) VALUES ('fig'); SELECT id FROM items WHERE name = 'fig'",
    );
    assert!(next.ends_with("id\n4\n"), "{next}");
}
