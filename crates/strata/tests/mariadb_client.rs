//! The tools of Debian's `mariadb-client`: the `mariadb` command-line client in one session
//! (create, insert, select, show tables, an error, and the session staying usable after it);
//! `mariadb-dump` of tables and views restored through `mariadb`, and of a database with every
//! column type, binary bytes and views restored with identical CHECKSUM TABLE and rows;
//! `mysqladmin` and `mysqlslap`.

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::Playground;

/// How long one tool may run before the test fails.
const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs one of the client tools against the playground, as root from 127.0.0.1.
fn tool(p: &Playground, program: &str, args: &[&str]) -> Output {
    let out = common::run_bounded(
        Command::new(program)
            .args(["-h", "127.0.0.1", "-P", &p.port.to_string(), "-u", "root"])
            .args(args),
        TOOL_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

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

/// Every column type, bytes that are not UTF-8 in BLOB, BINARY and BIT columns, quotes,
/// backslashes, NULLs and extreme values, a table without a primary key, a SERIAL column and a
/// view: dumped with `--databases` (so the dump creates the database, naming its character
/// set) in the default form and in the form with `--hex-blob` and a consistent snapshot,
/// dropped, and restored through `mariadb`, the tables have the CHECKSUM TABLE and the rows
/// they had.
#[test]
fn every_type_survives_a_dump_of_the_whole_database_and_its_restore() {
    let p = Playground::start();
    p.sql(
        None,
        r#"CREATE DATABASE alltypes DEFAULT CHARACTER SET utf8mb4; USE alltypes;
        CREATE TABLE t_all (
          id INT PRIMARY KEY AUTO_INCREMENT,
          ti TINYINT, si SMALLINT UNSIGNED, mi MEDIUMINT, bi BIGINT, ub BIGINT UNSIGNED,
          de DECIMAL(12,3), fl FLOAT, db DOUBLE,
          ch CHAR(5), vc VARCHAR(100) NOT NULL DEFAULT 'x', tx TEXT, bl BLOB, vb VARBINARY(20),
          bn BINARY(4), dt DATE, tm TIME, dtt DATETIME(3), ts TIMESTAMP NULL, yr YEAR,
          en ENUM('a','b','c'), st SET('x','y'), js JSON, bt BIT(8),
          KEY k_vc (vc), UNIQUE KEY u_bi (bi), KEY k_comp (ti, dt)
        ) COMMENT 'all types';
        INSERT INTO t_all VALUES (NULL, -128, 65535, -8388608, 9223372036854775807,
          18446744073709551615, -123456789.125, 1.5, 2.25e100, 'ab', 'hello ''world''',
          'line1\nline2\ttab\\', X'00FF10', X'DEADBEEF', X'01020304', '2024-02-29',
          '-838:59:59', '2024-01-02 03:04:05.678', '2020-01-01 00:00:00', 2155, 'b', 'x,y',
          '{"a": [1, 2, {"b": null}]}', b'10101010');
        INSERT INTO t_all (vc) VALUES ('only');
        INSERT INTO t_all (ti, vc, tx, bl, bt) VALUES (5, 'quotes " \\ and ` ', 'ünïcødé 😀',
          X'5C275C22000D0A1A', b'0');
        CREATE TABLE no_key (a INT, b VARCHAR(10));
        INSERT INTO no_key VALUES (1, 'a'), (1, 'a'), (NULL, NULL), (2, '');
        CREATE TABLE serials (id SERIAL, v INT);
        INSERT INTO serials (v) VALUES (10), (20);
        CREATE VIEW joined AS SELECT t.id, t.vc, n.b FROM t_all t JOIN no_key n ON n.a = t.id;"#,
    );
    let checksums =
        |p: &Playground| p.sql(Some("alltypes"), "CHECKSUM TABLE t_all, no_key, serials");
    // Row by row, as the client prints them (bytes that are not UTF-8 compared as bytes).
    let contents = |p: &Playground| -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = ["t_all", "no_key", "serials"]
            .iter()
            .map(|t| {
                let query = format!("SELECT * FROM {t} ORDER BY 1, 2; SHOW CREATE TABLE {t}");
                let rows = p.mariadb(Some("alltypes"), &query);
                assert!(
                    rows.status.success(),
                    "{}",
                    String::from_utf8_lossy(&rows.stderr)
                );
                rows.stdout
            })
            .collect();
        out.push(
            p.mariadb(Some("alltypes"), "SELECT * FROM joined ORDER BY id, b")
                .stdout,
        );
        out
    };
    let before_sums = checksums(&p);
    let before_rows = contents(&p);
    assert_eq!(before_sums.lines().count(), 4, "{before_sums}");
    assert!(!before_sums.contains("NULL"), "{before_sums}");
    assert!(
        before_rows[0].windows(2).any(|w| w == [0xDE, 0xAD]),
        "BLOB bytes as they are"
    );

    for options in [
        &[][..],
        &[
            "--single-transaction",
            "--hex-blob",
            "--routines",
            "--events",
            "--order-by-primary",
        ][..],
    ] {
        let mut args = options.to_vec();
        args.extend(["--databases", "alltypes"]);
        let dump = tool(&p, "mariadb-dump", &args).stdout;
        let text = String::from_utf8_lossy(&dump);
        assert!(text.contains("CREATE DATABASE"), "{text}");
        assert!(text.contains("CREATE TABLE `t_all`"), "{text}");
        p.sql(None, "DROP DATABASE alltypes");
        let restored = common::mariadb_reading(p.port, &[], &dump);
        assert!(
            restored.status.success(),
            "{options:?}: {}",
            String::from_utf8_lossy(&restored.stderr)
        );
        assert_eq!(checksums(&p), before_sums, "{options:?}");
        assert!(
            contents(&p) == before_rows,
            "{options:?}: the rows differ after the restore"
        );
    }
    // The restored auto-increment counter goes on after the restored rows.
    let next = p.sql(
        Some("alltypes"),
        "INSERT INTO t_all (vc) VALUES ('next'); SELECT id FROM t_all WHERE vc = 'next'",
    );
    assert!(next.ends_with("id\n4\n"), "{next}");
}

/// `mysqladmin` reports on the server, and `mysqlslap` runs its generated schema and loads
/// with several clients, then drops its schema.
#[test]
fn mysqladmin_and_mysqlslap_run_against_the_playground() {
    let p = Playground::start();
    let text = |out: Output| String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text(tool(&p, "mysqladmin", &["ping"])).contains("mysqld is alive"));
    let status = text(tool(&p, "mysqladmin", &["status"]));
    assert!(
        status.contains("Uptime:") && status.contains("Threads:"),
        "{status}"
    );
    let processes = text(tool(&p, "mysqladmin", &["processlist"]));
    assert!(
        processes.contains("| Id ") && processes.contains("root"),
        "{processes}"
    );
    let version = text(tool(&p, "mysqladmin", &["version"]));
    assert!(version.contains("Strata"), "{version}");
    let counters = text(tool(&p, "mysqladmin", &["extended-status"]));
    assert!(counters.contains("Com_select"), "{counters}");
    // Over the playground's Unix socket, as `localhost`.
    let socket = p.data_dir.join("mysql.sock");
    let over_socket = common::run_bounded(
        Command::new("mariadb")
            .arg("-S")
            .arg(&socket)
            .args(["-u", "root", "-N", "-e"])
            .arg(
                "SELECT CURRENT_USER(), HOST, @@socket = '' FROM information_schema.PROCESSLIST \
                 WHERE ID = CONNECTION_ID()",
            ),
        TOOL_TIMEOUT,
    );
    let shown = text(over_socket);
    assert_eq!(shown, "root@localhost\tlocalhost\t0\n");

    for load in ["mixed", "update", "key"] {
        let out = text(tool(
            &p,
            "mysqlslap",
            &[
                "--auto-generate-sql",
                &format!("--auto-generate-sql-load-type={load}"),
                "--auto-generate-sql-add-autoincrement",
                "--concurrency=4",
                "--iterations=2",
                "--number-of-queries=400",
            ],
        ));
        assert!(
            out.contains("Average number of seconds to run all queries"),
            "{load}: {out}"
        );
        assert!(
            out.contains("Number of clients running queries: 4"),
            "{load}: {out}"
        );
    }
    let databases = p.sql(None, "SHOW DATABASES");
    assert!(!databases.contains("mysqlslap"), "{databases}");
}
