//! Accounts and privileges with the real clients: CREATE USER / GRANT / REVOKE / DROP USER
//! round trips through the `mariadb` client, each refusal with MySQL's code; wrong passwords,
//! locked and expired accounts; what a limited account sees; accounts kept across a restart and
//! shared by the SQL nodes of a cluster; and a server that will not listen beyond loopback
//! while root has no password.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{free_port, mariadb_binary, pymysql, Playground};

/// Runs `sql` through the `mariadb` client as `user` with `password` (None: no -p).
fn mariadb_as(port: u16, user: &str, password: Option<&str>, sql: &str) -> Output {
    mariadb_command(port, user, password, sql)
        .output()
        .expect("run the mariadb client")
}

/// The mariadb client's command that runs `sql` as `user`.
fn mariadb_command(port: u16, user: &str, password: Option<&str>, sql: &str) -> Command {
    let mut command = Command::new(mariadb_binary());
    command.args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", user]);
    if let Some(password) = password {
        command.arg(format!("-p{password}"));
    }
    command.args(["--batch", "--skip-column-names", "-e", sql]);
    command
}

/// The output of a statement that must succeed.
fn ok_as(port: u16, user: &str, password: Option<&str>, sql: &str) -> String {
    let out = mariadb_as(port, user, password, sql);
    assert!(
        out.status.success(),
        "{sql} as {user}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The error of a statement (or login) that must fail, e.g. `ERROR 1142 (42000) …`.
fn refused_as(port: u16, user: &str, password: Option<&str>, sql: &str) -> String {
    let out = mariadb_as(port, user, password, sql);
    assert!(
        !out.status.success(),
        "{sql} as {user} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_code(error: &str, code: &str) {
    assert!(
        error.contains(&format!("ERROR {code}")),
        "expected {code}, got: {error}"
    );
}

#[test]
fn accounts_and_privileges_round_trip() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut playground = Playground::start_in(data.path(), port);
    let root = |sql: &str| ok_as(port, "root", None, sql);

    // A new data folder has root@localhost without a password, with every privilege.
    assert_eq!(
        root("SELECT USER(), CURRENT_USER()"),
        "root@127.0.0.1\troot@localhost\n"
    );
    assert_eq!(
        root("SHOW GRANTS"),
        "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION\n"
    );

    root(
        "CREATE DATABASE shop; CREATE DATABASE hr; \
         CREATE TABLE shop.orders (id INT PRIMARY KEY, total INT); \
         CREATE TABLE shop.items (id INT PRIMARY KEY); CREATE TABLE hr.pay (id INT PRIMARY KEY); \
         INSERT INTO shop.orders VALUES (1, 10); \
         CREATE USER 'bob'@'%' IDENTIFIED BY 'bobpw'; \
         GRANT SELECT ON shop.* TO 'bob'@'%'",
    );
    assert_code(&refused_as(port, "root", None, "CREATE USER bob"), "1396");
    root("CREATE USER IF NOT EXISTS bob");
    assert_eq!(
        root("SHOW GRANTS FOR bob"),
        "GRANT USAGE ON *.* TO `bob`@`%`\nGRANT SELECT ON `shop`.* TO `bob`@`%`\n"
    );

    // Logging in: the password is checked, unknown users look the same as wrong passwords.
    let bob = |sql: &str| ok_as(port, "bob", Some("bobpw"), sql);
    assert_eq!(bob("SELECT CURRENT_USER()"), "bob@%\n");
    let wrong = refused_as(port, "bob", Some("nope"), "SELECT 1");
    assert_code(&wrong, "1045");
    assert!(wrong.contains("Access denied for user 'bob'"), "{wrong}");
    assert_code(&refused_as(port, "bob", None, "SELECT 1"), "1045");
    assert_code(&refused_as(port, "nobody", Some("x"), "SELECT 1"), "1045");

    // What bob may and may not do, each refusal with MySQL's code.
    assert_eq!(bob("SELECT id, total FROM shop.orders"), "1\t10\n");
    assert_code(
        &refused_as(
            port,
            "bob",
            Some("bobpw"),
            "INSERT INTO shop.orders VALUES (2, 20)",
        ),
        "1142",
    );
    assert_code(
        &refused_as(port, "bob", Some("bobpw"), "SELECT * FROM hr.pay"),
        "1142",
    );
    assert_code(&refused_as(port, "bob", Some("bobpw"), "USE hr"), "1044");
    assert_code(
        &refused_as(port, "bob", Some("bobpw"), "DROP DATABASE shop"),
        "1044",
    );
    assert_code(
        &refused_as(port, "bob", Some("bobpw"), "CREATE USER eve"),
        "1227",
    );
    assert_code(
        &refused_as(
            port,
            "bob",
            Some("bobpw"),
            "SET GLOBAL max_connections = 10",
        ),
        "1227",
    );
    assert_code(
        &refused_as(port, "bob", Some("bobpw"), "GRANT SELECT ON shop.* TO bob"),
        "1044",
    );
    // Only what bob may see is listed.
    assert_eq!(bob("SHOW DATABASES"), "information_schema\nshop\n");
    assert_eq!(
        bob(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA <> 'information_schema' ORDER BY 1, 2"
        ),
        "shop\titems\nshop\torders\n"
    );

    // Table-level grants, REVOKE, and a change seen by the next statement.
    root("GRANT INSERT ON shop.orders TO bob; REVOKE SELECT ON shop.* FROM bob");
    bob("INSERT INTO shop.orders VALUES (2, 20)");
    assert_code(
        &refused_as(port, "bob", Some("bobpw"), "SELECT * FROM shop.orders"),
        "1142",
    );
    assert_eq!(bob("SHOW TABLES FROM shop"), "orders\n");
    assert_code(
        &refused_as(port, "root", None, "REVOKE DELETE ON hr.* FROM bob"),
        "1141",
    );
    assert_code(
        &refused_as(port, "root", None, "GRANT SUPER ON shop.* TO bob"),
        "1221",
    );
    assert_code(
        &refused_as(port, "root", None, "GRANT SELECT ON shop.* TO ghost"),
        "1410",
    );

    // Locked and expired accounts.
    root("CREATE USER amy IDENTIFIED BY 'amypw' ACCOUNT LOCK");
    assert_code(&refused_as(port, "amy", Some("amypw"), "SELECT 1"), "3118");
    root("ALTER USER amy ACCOUNT UNLOCK PASSWORD EXPIRE");
    assert_code(&refused_as(port, "amy", Some("amypw"), "SELECT 1"), "1862");
    // A client that can handle an expired password logs in to change it, and only that.
    let expired = |sql: &str| {
        Command::new(mariadb_binary())
            .args([
                "-h",
                "127.0.0.1",
                "-P",
                &port.to_string(),
                "-u",
                "amy",
                "-pamypw",
            ])
            .args([
                "--connect-expired-password",
                "--batch",
                "--skip-column-names",
                "-e",
                sql,
            ])
            .output()
            .unwrap()
    };
    assert_code(
        &String::from_utf8_lossy(&expired("SELECT 1").stderr),
        "1820",
    );
    let changed = expired("ALTER USER USER() IDENTIFIED BY 'newpw'; SELECT CURRENT_USER()");
    assert_eq!(String::from_utf8_lossy(&changed.stdout), "amy@%\n");
    assert_eq!(ok_as(port, "amy", Some("newpw"), "SELECT 1"), "1\n");

    // PyMySQL logs in with a password too.
    let out = pymysql(
        port,
        "import sys, pymysql\n\
         c = pymysql.connect(host='127.0.0.1', port=int(sys.argv[1]), user='bob', password='bobpw')\n\
         cur = c.cursor(); cur.execute('SELECT CURRENT_USER()'); print(cur.fetchone()[0])\n\
         try:\n    pymysql.connect(host='127.0.0.1', port=int(sys.argv[1]), user='bob', password='x')\n\
         except pymysql.err.OperationalError as e:\n    print(e.args[0])\n",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "bob@%\n1045\n",
        "{out:?}"
    );

    // Accounts and grants survive a restart; renamed and dropped accounts stay so.
    root("RENAME USER amy TO 'amy2'@'localhost'");
    playground.kill9();
    drop(playground);
    let _playground = Playground::start_in(data.path(), port);
    assert_eq!(
        ok_as(port, "bob", Some("bobpw"), "SELECT CURRENT_USER()"),
        "bob@%\n"
    );
    assert_code(
        &refused_as(port, "bob", Some("bobpw"), "SELECT * FROM shop.orders"),
        "1142",
    );
    assert_eq!(
        ok_as(port, "amy2", Some("newpw"), "SELECT CURRENT_USER()"),
        "amy2@localhost\n"
    );
    ok_as(port, "root", None, "DROP USER bob, 'amy2'@'localhost'");
    assert_code(&refused_as(port, "bob", Some("bobpw"), "SELECT 1"), "1045");
    assert_code(&refused_as(port, "root", None, "DROP USER bob"), "1396");
}

#[test]
fn a_grant_on_one_sql_node_holds_on_the_other() {
    let cluster = Cluster::start(1, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    ok_as(
        a,
        "root",
        None,
        "CREATE DATABASE app; CREATE TABLE app.t (id INT PRIMARY KEY); \
         INSERT INTO app.t VALUES (7); CREATE USER carol IDENTIFIED BY 'cpw'",
    );
    // Within a second of the change on node a, node b lets carol in and then serves her grant.
    let within = |what: &str, check: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(1);
        while !check() {
            assert!(
                Instant::now() < deadline,
                "{what} not seen on the other node in 1 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    within("CREATE USER", &|| {
        mariadb_as(b, "carol", Some("cpw"), "SELECT 1")
            .status
            .success()
    });
    assert_code(
        &refused_as(b, "carol", Some("cpw"), "SELECT * FROM app.t"),
        "1142",
    );
    ok_as(a, "root", None, "GRANT SELECT ON app.t TO carol");
    within("GRANT", &|| {
        mariadb_as(b, "carol", Some("cpw"), "SELECT id FROM app.t")
            .status
            .success()
    });
    ok_as(a, "root", None, "REVOKE SELECT ON app.t FROM carol");
    within("REVOKE", &|| {
        !mariadb_as(b, "carol", Some("cpw"), "SELECT id FROM app.t")
            .status
            .success()
    });
}

#[test]
fn a_passwordless_root_is_not_served_beyond_loopback() {
    // Listening on every address with root@localhost and no password: refused, with what to do.
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["playground", "--data-dir"])
        .arg(data.path())
        .args(["--host", "0.0.0.0", "--port", &free_port().to_string()])
        .args(["--block-cache-mib", "64"])
        .stdin(Stdio::null())
        .output()
        .expect("run strata playground");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        text.contains("has no password") && text.contains("--insecure"),
        "{text}"
    );

    // With a root password on a new data folder, root is 'root'@'%' and needs it.
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let _playground = Playground::start_in_with(
        data.path(),
        port,
        &["--host", "0.0.0.0", "--root-password", "s3cret"],
    );
    assert_code(&refused_as(port, "root", None, "SELECT 1"), "1045");
    assert_eq!(
        ok_as(port, "root", Some("s3cret"), "SELECT CURRENT_USER()"),
        "root@%\n"
    );
}

#[test]
fn both_authentication_plugins_log_in_with_every_client() {
    let playground = Playground::start();
    let port = playground.port;
    ok_as(
        port,
        "root",
        None,
        "CREATE DATABASE sbtest; \
         CREATE USER nat IDENTIFIED WITH mysql_native_password BY 'natpw'; \
         CREATE USER sha IDENTIFIED WITH caching_sha2_password BY 'shapw'; \
         CREATE USER open_sha IDENTIFIED WITH caching_sha2_password; \
         GRANT ALL ON sbtest.* TO nat; GRANT ALL ON sbtest.* TO sha",
    );
    let accounts = [("nat", "natpw"), ("sha", "shapw"), ("open_sha", "")];

    // The mariadb client (Connector/C and its caching_sha2_password plugin).
    for (user, password) in accounts {
        let password = (!password.is_empty()).then_some(password);
        assert_eq!(
            ok_as(port, user, password, "SELECT CURRENT_USER()"),
            format!("{user}@%\n")
        );
        assert_code(&refused_as(port, user, Some("wrong"), "SELECT 1"), "1045");
    }

    // Each client below starts from an empty cache, so its first caching_sha2_password login
    // sends the password encrypted with the server's RSA key.
    let flush = || ok_as(port, "root", None, "FLUSH PRIVILEGES");
    // PyMySQL.
    flush();
    let out = pymysql(
        port,
        "import sys, pymysql\n\
         port = int(sys.argv[1])\n\
         for user, password in [('nat', 'natpw'), ('sha', 'shapw'), ('open_sha', ''), ('root', '')]:\n\
         \x20   c = pymysql.connect(host='127.0.0.1', port=port, user=user, password=password)\n\
         \x20   cur = c.cursor(); cur.execute('SELECT CURRENT_USER()'); print(cur.fetchone()[0])\n\
         for user in ['nat', 'sha']:\n\
         \x20   try:\n\
         \x20       pymysql.connect(host='127.0.0.1', port=port, user=user, password='wrong')\n\
         \x20   except pymysql.err.OperationalError as e:\n\
         \x20       print(e.args[0])\n",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "nat@%\nsha@%\nopen_sha@%\nroot@localhost\n1045\n1045\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // sysbench prepares and runs with each password account.
    flush();
    for account in &accounts[..2] {
        common::sysbench_as(port, *account, &[], None, &["cleanup", "prepare", "run"]);
    }

    // mysql_async, the Rust client.
    flush();
    common::runtime(1).block_on(async {
        use mysql_async::prelude::Queryable;
        for (user, password) in accounts {
            let url = format!("mysql://{user}:{password}@127.0.0.1:{port}");
            let mut conn = mysql_async::Conn::from_url(url).await.expect(user);
            let me: Option<String> = conn.query_first("SELECT CURRENT_USER()").await.unwrap();
            assert_eq!(me, Some(format!("{user}@%")));
            conn.disconnect().await.unwrap();
        }
        let url = format!("mysql://sha:wrong@127.0.0.1:{port}");
        let refused = mysql_async::Conn::from_url(url)
            .await
            .map(|_| ())
            .unwrap_err();
        assert!(refused.to_string().contains("1045"), "{refused}");
    });
}

#[test]
fn roles_lend_their_privileges_while_in_use() {
    let playground = Playground::start();
    let port = playground.port;
    let root = |sql: &str| ok_as(port, "root", None, sql);
    root(
        "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY); \
         INSERT INTO shop.t VALUES (1); \
         CREATE ROLE reader, 'auditor'; GRANT SELECT ON shop.* TO reader; \
         GRANT PROCESS ON *.* TO auditor; GRANT reader TO auditor; \
         CREATE USER dave IDENTIFIED BY 'dpw'; GRANT auditor TO dave",
    );
    assert_code(
        &refused_as(port, "root", None, "CREATE ROLE reader"),
        "1396",
    );
    assert_code(
        &refused_as(port, "root", None, "GRANT ghost TO dave"),
        "3523",
    );
    assert_eq!(
        root("SHOW GRANTS FOR dave"),
        "GRANT USAGE ON *.* TO `dave`@`%`\nGRANT `auditor`@`%` TO `dave`@`%`\n"
    );
    // A role is an account no one logs in as.
    assert_code(&refused_as(port, "reader", None, "SELECT 1"), "3118");

    let dave = |sql: &str| ok_as(port, "dave", Some("dpw"), sql);
    // Granted but not in use: nothing.
    assert_eq!(dave("SELECT CURRENT_ROLE()"), "NONE\n");
    assert_code(
        &refused_as(port, "dave", Some("dpw"), "SELECT * FROM shop.t"),
        "1142",
    );
    // In use, with the role granted to it.
    assert_eq!(
        dave("SET ROLE auditor; SELECT CURRENT_ROLE(); SELECT id FROM shop.t"),
        "`auditor`@`%`\n1\n"
    );
    assert_eq!(dave("SET ROLE ALL; SELECT COUNT(*) FROM shop.t"), "1\n");
    assert_code(
        &refused_as(port, "dave", Some("dpw"), "SET ROLE reader"),
        "3530",
    );
    // Default roles are in use from the login on.
    dave("SET DEFAULT ROLE ALL TO CURRENT_USER");
    assert_eq!(
        dave("SELECT CURRENT_ROLE(); SELECT id FROM shop.t"),
        "`auditor`@`%`\n1\n"
    );
    assert_eq!(dave("SET ROLE NONE; SELECT CURRENT_ROLE()"), "NONE\n");
    // Dropping a role takes it away from everyone.
    root("DROP ROLE auditor");
    assert_eq!(dave("SELECT CURRENT_ROLE()"), "NONE\n");
    assert_code(
        &refused_as(port, "dave", Some("dpw"), "SELECT * FROM shop.t"),
        "1142",
    );
    assert_eq!(
        root("SHOW GRANTS FOR dave"),
        "GRANT USAGE ON *.* TO `dave`@`%`\n"
    );
}

#[test]
fn failed_logins_block_an_account_until_it_is_unlocked() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let _playground = Playground::start_in(data.path(), port);
    let root = |sql: &str| ok_as(port, "root", None, sql);
    root(
        "CREATE USER amy IDENTIFIED BY 'right' FAILED_LOGIN_ATTEMPTS 2 PASSWORD_LOCK_TIME UNBOUNDED; \
         CREATE USER ben IDENTIFIED BY 'right' FAILED_LOGIN_ATTEMPTS 1 PASSWORD_LOCK_TIME 3",
    );
    assert_eq!(
        root("SELECT User_attributes FROM mysql.user WHERE user = 'amy'"),
        "{\"Password_locking\": {\"failed_login_attempts\": 2, \"password_lock_time_days\": -1}}\n"
    );

    // A wrong password, a right one (which resets the count), then two wrong ones in a row.
    assert_code(&refused_as(port, "amy", Some("wrong"), "SELECT 1"), "1045");
    assert_eq!(ok_as(port, "amy", Some("right"), "SELECT 1"), "1\n");
    assert_code(&refused_as(port, "amy", Some("wrong"), "SELECT 1"), "1045");
    let blocked = refused_as(port, "amy", Some("wrong"), "SELECT 1");
    assert_code(&blocked, "3955");
    assert!(
        blocked.contains("Account is blocked for unlimited day(s) (unlimited day(s) remaining) due to 2 consecutive failed logins"),
        "{blocked}"
    );
    // Blocked: even the right password is refused.
    assert_code(&refused_as(port, "amy", Some("right"), "SELECT 1"), "3955");
    let ben = refused_as(port, "ben", Some("wrong"), "SELECT 1");
    assert!(
        ben.contains("blocked for 3 day(s) (3 day(s) remaining) due to 1 consecutive"),
        "{ben}"
    );
    // Other accounts are unaffected; an unlock forgets the failures.
    root("ALTER USER amy ACCOUNT UNLOCK");
    assert_eq!(
        ok_as(port, "amy", Some("right"), "SELECT CURRENT_USER()"),
        "amy@%\n"
    );
    assert_code(&refused_as(port, "ben", Some("right"), "SELECT 1"), "3955");
    // Turning the locking off (PASSWORD_LOCK_TIME 0) lets ben in as well.
    root("ALTER USER ben PASSWORD_LOCK_TIME 0");
    assert_eq!(ok_as(port, "ben", Some("right"), "SELECT 1"), "1\n");
    for _ in 0..3 {
        assert_code(&refused_as(port, "ben", Some("wrong"), "SELECT 1"), "1045");
    }
    assert_code(
        &refused_as(
            port,
            "root",
            None,
            "CREATE USER cy FAILED_LOGIN_ATTEMPTS 40000",
        ),
        "1064",
    );
}

#[test]
fn grants_on_columns_admit_only_those_columns() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let _playground = Playground::start_in(data.path(), port);
    let root = |sql: &str| ok_as(port, "root", None, sql);
    root(
        "CREATE DATABASE shop; \
         CREATE TABLE shop.staff (id INT PRIMARY KEY, name VARCHAR(20), salary INT, \
             KEY ks (salary), KEY kn (name, salary)); \
         INSERT INTO shop.staff VALUES (1, 'ann', 100), (2, 'ben', 200); \
         CREATE USER cal IDENTIFIED BY 'pw'; \
         GRANT SELECT (id, Name), UPDATE (name) ON shop.staff TO cal",
    );
    assert_eq!(
        root("SHOW GRANTS FOR cal"),
        "GRANT USAGE ON *.* TO `cal`@`%`\n\
         GRANT SELECT (`id`, `name`), UPDATE (`name`) ON `shop`.`staff` TO `cal`@`%`\n"
    );
    assert_eq!(
        root(
            "SELECT Table_name, Table_priv, Column_priv FROM mysql.tables_priv WHERE User = 'cal'"
        ),
        "staff\t\tSelect,Update\n"
    );
    assert_eq!(
        root(
            "SELECT Db, Table_name, Column_name, Column_priv FROM mysql.columns_priv \
             WHERE User = 'cal' ORDER BY Column_name"
        ),
        "shop\tstaff\tid\tSelect\nshop\tstaff\tname\tSelect,Update\n"
    );

    // What cal may read and write, column by column; refusals as MySQL and MariaDB answer.
    let cal = |sql: &str| ok_as(port, "cal", Some("pw"), sql);
    let refused = |sql: &str, code: &str| {
        let error = refused_as(port, "cal", Some("pw"), sql);
        assert_code(&error, code);
        error
    };
    assert_eq!(
        cal("SELECT id, name FROM shop.staff ORDER BY id"),
        "1\tann\n2\tben\n"
    );
    assert_eq!(cal("SELECT COUNT(*) FROM shop.staff"), "2\n");
    assert_eq!(
        cal("SELECT name AS salary FROM shop.staff ORDER BY salary"),
        "ann\nben\n"
    );
    let denied = refused("SELECT salary FROM shop.staff", "1143");
    assert!(
        denied.contains(
            "SELECT command denied to user 'cal'@'%' for column 'salary' in table 'staff'"
        ),
        "{denied}"
    );
    refused("SELECT * FROM shop.staff", "1142");
    refused(
        "SELECT s.salary FROM shop.staff AS s WHERE s.id = 1",
        "1143",
    );
    cal("UPDATE shop.staff SET name = 'anne' WHERE id = 1");
    assert_eq!(root("SELECT name FROM shop.staff WHERE id = 1"), "anne\n");
    let denied = refused("UPDATE shop.staff SET salary = 0", "1143");
    assert!(denied.contains("UPDATE command denied"), "{denied}");
    let denied = refused("UPDATE shop.staff SET name = 'x' WHERE salary > 0", "1143");
    assert!(denied.contains("SELECT command denied"), "{denied}");
    refused("INSERT INTO shop.staff (id) VALUES (3)", "1142");
    refused("DELETE FROM shop.staff", "1142");
    assert_eq!(cal("SHOW TABLES FROM shop"), "staff\n");

    // Only the columns cal holds a privilege on are listed to it, with those privileges (as
    // MySQL and MariaDB list them); so are the index columns.
    assert_eq!(
        cal("SHOW FULL COLUMNS FROM shop.staff"),
        "id\tint\tNULL\tNO\tPRI\tNULL\t\tselect\t\n\
         name\tvarchar(20)\tutf8mb4_bin\tYES\tMUL\tNULL\t\tselect,update\t\n"
    );
    assert_eq!(
        cal("DESCRIBE shop.staff"),
        "id\tint\tNO\tPRI\tNULL\t\nname\tvarchar(20)\tYES\tMUL\tNULL\t\n"
    );
    let listed = "SELECT COLUMN_NAME, PRIVILEGES FROM information_schema.COLUMNS \
                  WHERE TABLE_SCHEMA = 'shop' ORDER BY ORDINAL_POSITION";
    assert_eq!(cal(listed), "id\tselect\nname\tselect,update\n");
    assert_eq!(
        root(listed),
        "id\tselect,insert,update,references\n\
         name\tselect,insert,update,references\n\
         salary\tselect,insert,update,references\n"
    );
    let indexed =
        "SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME FROM information_schema.STATISTICS \
                   WHERE TABLE_SCHEMA = 'shop' ORDER BY INDEX_NAME, SEQ_IN_INDEX";
    assert_eq!(cal(indexed), "PRIMARY\t1\tid\nkn\t1\tname\n");
    assert_eq!(
        root(indexed),
        "PRIMARY\t1\tid\nkn\t1\tname\nkn\t2\tsalary\nks\t1\tsalary\n"
    );
    let shown: Vec<String> = cal("SHOW INDEX FROM shop.staff")
        .lines()
        .map(|line| line.split('\t').take(5).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(shown, ["staff 0 PRIMARY 1 id", "staff 1 kn 1 name"]);

    // information_schema's grant tables, as MariaDB lists them: cal sees its own rows, root
    // everyone's.
    assert_eq!(
        cal("SELECT * FROM information_schema.USER_PRIVILEGES"),
        "'cal'@'%'\tdef\tUSAGE\tNO\n"
    );
    let column_grants = "SELECT GRANTEE, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, PRIVILEGE_TYPE, \
                         IS_GRANTABLE FROM information_schema.COLUMN_PRIVILEGES \
                         WHERE GRANTEE = '''cal''@''%''' ORDER BY COLUMN_NAME, PRIVILEGE_TYPE";
    let expected = "'cal'@'%'\tshop\tstaff\tid\tSELECT\tNO\n\
                    'cal'@'%'\tshop\tstaff\tname\tSELECT\tNO\n\
                    'cal'@'%'\tshop\tstaff\tname\tUPDATE\tNO\n";
    assert_eq!(cal(column_grants), expected);
    assert_eq!(root(column_grants), expected);
    assert_eq!(
        root("SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = '''cal''@''%'''"),
        "USAGE\n"
    );
    assert_eq!(
        cal("SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE GRANTEE LIKE '%root%'"),
        "0\n"
    );

    // GRANT and REVOKE by column, with MySQL's errors.
    assert_code(
        &refused_as(
            port,
            "root",
            None,
            "GRANT SELECT (nope) ON shop.staff TO cal",
        ),
        "1054",
    );
    assert_code(
        &refused_as(port, "root", None, "GRANT SELECT (id) ON shop.* TO cal"),
        "1144",
    );
    assert_code(
        &refused_as(
            port,
            "root",
            None,
            "REVOKE SELECT (salary) ON shop.staff FROM cal",
        ),
        "1147",
    );
    root("REVOKE SELECT (name) ON shop.staff FROM cal");
    refused("SELECT name FROM shop.staff", "1143");
    assert_eq!(cal("SELECT id FROM shop.staff ORDER BY id"), "1\n2\n");
    // A grant on the table covers every column.
    root("GRANT SELECT ON shop.staff TO cal");
    assert_eq!(
        cal(
            "SELECT GRANTEE, TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE, IS_GRANTABLE \
             FROM information_schema.TABLE_PRIVILEGES"
        ),
        "'cal'@'%'\tshop\tstaff\tSELECT\tNO\n"
    );
    assert_eq!(
        cal("SELECT * FROM shop.staff ORDER BY id"),
        "1\tanne\t100\n2\tben\t200\n"
    );
    assert_eq!(
        root("SHOW GRANTS FOR cal"),
        "GRANT USAGE ON *.* TO `cal`@`%`\n\
         GRANT SELECT, SELECT (`id`), UPDATE (`name`) ON `shop`.`staff` TO `cal`@`%`\n"
    );
    // Revoked on the table, a privilege goes from its columns too, as in MySQL and MariaDB.
    root("REVOKE SELECT ON shop.staff FROM cal");
    assert_eq!(
        root("SHOW GRANTS FOR cal"),
        "GRANT USAGE ON *.* TO `cal`@`%`\n\
         GRANT UPDATE (`name`) ON `shop`.`staff` TO `cal`@`%`\n"
    );
    refused("SELECT id FROM shop.staff", "1142");
}

#[test]
fn the_grant_tables_show_the_accounts() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let _playground = Playground::start_in(data.path(), port);
    let root = |sql: &str| ok_as(port, "root", None, sql);
    root(
        "CREATE DATABASE shop; CREATE TABLE shop.items (id INT PRIMARY KEY); \
         CREATE USER 'dee'@'10.0.%' IDENTIFIED WITH mysql_native_password BY 'pw' REQUIRE SSL; \
         GRANT SELECT, INSERT ON shop.* TO 'dee'@'10.0.%'; \
         GRANT UPDATE, DELETE ON shop.items TO 'dee'@'10.0.%'; \
         CREATE USER eve IDENTIFIED BY 'pw' ACCOUNT LOCK; CREATE ROLE reader; \
         GRANT reader TO eve; SET DEFAULT ROLE reader TO eve; \
         GRANT SELECT ON *.* TO eve WITH GRANT OPTION",
    );
    // Tools read mysql.user by column name; passwords show as their stored hashes.
    assert_eq!(
        root(
            "SELECT User, Host, Select_priv, Insert_priv, Grant_priv, Super_priv, ssl_type, \
             account_locked, plugin, LENGTH(authentication_string) FROM mysql.user \
             WHERE User IN ('dee', 'eve', 'reader') ORDER BY User"
        ),
        "dee\t10.0.%\tN\tN\tN\tN\tANY\tN\tmysql_native_password\t41\n\
         eve\t%\tY\tN\tY\tN\t\tY\tmysql_native_password\t41\n\
         reader\t%\tN\tN\tN\tN\t\tY\tmysql_native_password\t0\n"
    );
    assert_eq!(
        root("SELECT Host, Db, User, Select_priv, Insert_priv, Update_priv FROM mysql.db"),
        "10.0.%\tshop\tdee\tY\tY\tN\n"
    );
    assert_eq!(
        root("SELECT Db, User, Table_name, Table_priv, Column_priv FROM mysql.tables_priv"),
        "shop\tdee\titems\tUpdate,Delete\t\n"
    );
    assert_eq!(
        root("SELECT * FROM mysql.role_edges"),
        "%\treader\t%\teve\tN\n"
    );
    assert_eq!(
        root("SELECT USER, DEFAULT_ROLE_USER FROM mysql.default_roles"),
        "eve\treader\n"
    );
    assert_eq!(
        root("SELECT COUNT(*) FROM mysql.user WHERE User = 'root'"),
        "1\n"
    );

    // They are read-only, and reading them takes SELECT on them.
    assert_code(
        &refused_as(
            port,
            "root",
            None,
            "INSERT INTO mysql.user (User) VALUES ('x')",
        ),
        "1036",
    );
    assert_code(
        &refused_as(
            port,
            "root",
            None,
            "DELETE FROM mysql.user WHERE User = 'eve'",
        ),
        "1036",
    );
    root("CREATE USER fay IDENTIFIED BY 'pw'; GRANT SELECT ON shop.* TO fay");
    let denied = refused_as(port, "fay", Some("pw"), "SELECT User FROM mysql.user");
    assert_code(&denied, "1142");
    assert!(denied.contains("for table 'user'"), "{denied}");

    // information_schema's grant tables: root reads every account's rows, fay only her own.
    assert_eq!(
        root(
            "SELECT GRANTEE, TABLE_SCHEMA, PRIVILEGE_TYPE, IS_GRANTABLE \
             FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE LIKE '%dee%' \
             ORDER BY PRIVILEGE_TYPE"
        ),
        "'dee'@'10.0.%'\tshop\tINSERT\tNO\n'dee'@'10.0.%'\tshop\tSELECT\tNO\n"
    );
    assert_eq!(
        root(
            "SELECT GRANTEE, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.USER_PRIVILEGES \
             WHERE GRANTEE = '''eve''@''%'''"
        ),
        "'eve'@'%'\tSELECT\tYES\n"
    );
    assert_eq!(
        root(
            "SELECT TABLE_NAME, PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES \
             WHERE GRANTEE LIKE '%dee%' ORDER BY PRIVILEGE_TYPE"
        ),
        "items\tDELETE\nitems\tUPDATE\n"
    );
    assert_eq!(
        ok_as(
            port,
            "fay",
            Some("pw"),
            "SELECT GRANTEE, TABLE_SCHEMA, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES"
        ),
        "'fay'@'%'\tshop\tSELECT\n"
    );
}

/// information_schema.PROCESSLIST, like SHOW PROCESSLIST, lists other accounts' sessions
/// only to an account with the PROCESS privilege.
#[test]
fn other_sessions_are_listed_only_with_the_process_privilege() {
    let playground = Playground::start();
    let port = playground.port;
    ok_as(
        port,
        "root",
        None,
        "CREATE USER bob IDENTIFIED BY 'b'; CREATE USER carol IDENTIFIED BY 'c'; \
         GRANT PROCESS ON *.* TO carol",
    );
    // root runs a statement meanwhile (the client ends by itself).
    let mut sleeper = mariadb_as_child(port, "SELECT SLEEP(4)");
    let roots = "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
                 WHERE USER = 'root' AND INFO = 'SELECT SLEEP(4)'";
    let deadline = Instant::now() + Duration::from_secs(3);
    while ok_as(port, "carol", Some("c"), roots) != "1\n" {
        assert!(
            Instant::now() < deadline,
            "carol never saw root's statement"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(ok_as(port, "bob", Some("b"), roots), "0\n");
    assert_eq!(
        ok_as(
            port,
            "bob",
            Some("b"),
            "SELECT USER, COMMAND FROM information_schema.PROCESSLIST"
        ),
        "bob\tQuery\n"
    );
    assert!(!ok_as(port, "bob", Some("b"), "SHOW PROCESSLIST").contains("root"));
    let _ = sleeper.wait();
}

/// The mariadb client running `sql` as root, in the background.
fn mariadb_as_child(port: u16, sql: &str) -> std::process::Child {
    mariadb_command(port, "root", None, sql)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the mariadb client")
}

/// COM_CHANGE_USER through the Rust `mysql` crate: to an account of each authentication method
/// (the client is switched to the account's method when it proposes the other), into a
/// database; the old session's transaction is rolled back and its variables and prepared
/// statements are gone; CURRENT_USER() and the privileges are the new account's. A wrong
/// password is refused with 1873 and the connection closes, as MySQL does.
#[test]
fn change_user_authenticates_again_and_starts_a_new_session() {
    use mysql::prelude::Queryable;
    use mysql::{ChangeUserOpts, Conn, OptsBuilder};

    let p = Playground::start();
    p.sql(
        None,
        "CREATE DATABASE cu; CREATE TABLE cu.t (id INT PRIMARY KEY); \
         CREATE USER 'native'@'%' IDENTIFIED WITH mysql_native_password BY 'n-pass'; \
         CREATE USER 'sha2'@'%' IDENTIFIED WITH caching_sha2_password BY 's-pass'; \
         GRANT SELECT ON cu.* TO 'native'@'%'; GRANT SELECT, INSERT ON cu.* TO 'sha2'@'%'",
    );
    let opts = OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(p.port)
        .user(Some("root"));
    let mut conn = Conn::new(opts.clone()).expect("connect as root");
    conn.query_drop("SET @kept = 'root''s'").unwrap();
    conn.query_drop("BEGIN").unwrap();
    conn.query_drop("INSERT INTO cu.t VALUES (1)").unwrap();
    let statement = conn.prep("SELECT 1").unwrap();

    conn.change_user(
        ChangeUserOpts::default()
            .with_user(Some("native".into()))
            .with_pass(Some("n-pass".into()))
            .with_db_name(Some("cu".into())),
    )
    .expect("change to the native account");
    let who: (String, Option<String>, Option<String>) = conn
        .query_first("SELECT CURRENT_USER(), DATABASE(), @kept")
        .unwrap()
        .unwrap();
    assert_eq!(who, ("native@%".into(), Some("cu".into()), None));
    let rows: Vec<i32> = conn.query("SELECT id FROM t").unwrap();
    assert!(rows.is_empty(), "the open transaction was rolled back");
    let denied = conn.query_drop("INSERT INTO t VALUES (2)").unwrap_err();
    assert!(denied.to_string().contains("1142"), "{denied}");
    assert!(
        conn.exec_drop(&statement, ()).is_err(),
        "the old session's prepared statement is gone"
    );

    conn.change_user(
        ChangeUserOpts::default()
            .with_user(Some("sha2".into()))
            .with_pass(Some("s-pass".into()))
            .with_db_name(Some("cu".into())),
    )
    .expect("change to the caching_sha2 account");
    conn.query_drop("INSERT INTO t VALUES (3)").unwrap();
    let who: Option<String> = conn.query_first("SELECT CURRENT_USER()").unwrap();
    assert_eq!(who.as_deref(), Some("sha2@%"));
    let processes = p.sql(None, "SELECT USER, DB FROM information_schema.PROCESSLIST");
    assert!(processes.contains("sha2\tcu"), "{processes}");

    let refused = conn
        .change_user(
            ChangeUserOpts::default()
                .with_user(Some("native".into()))
                .with_pass(Some("wrong".into())),
        )
        .unwrap_err();
    assert!(refused.to_string().contains("1873"), "{refused}");
    assert!(
        conn.query_drop("SELECT 1").is_err(),
        "the connection is closed"
    );
    assert_eq!(p.sql(None, "SELECT id FROM cu.t"), "id\n3\n");
}
