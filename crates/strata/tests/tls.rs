//! TLS on the MySQL port with the real clients: the playground generates a certificate in its
//! data folder; the mariadb client, PyMySQL (checking the certificate) and sysbench
//! `--mysql-ssl=on` connect over TLS 1.3; `REQUIRE SSL` accounts and
//! `--require-secure-transport` refuse plain connections; `REQUIRE X509` accounts need a client
//! certificate from the `--ssl-ca` CA; `--skip-ssl` offers no TLS.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{free_port, mariadb_binary, pymysql, Playground};

/// Runs `sql` through the mariadb client as `user` (password `password` unless empty), over
/// TLS when `tls`, else plain.
fn mariadb(port: u16, user: &str, password: &str, tls: bool, sql: &str) -> Output {
    let mut command = Command::new(mariadb_binary());
    command.args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", user]);
    if !password.is_empty() {
        command.arg(format!("-p{password}"));
    }
    command
        .arg(if tls { "--ssl" } else { "--skip-ssl" })
        .args(["--batch", "--skip-column-names", "-e", sql])
        .output()
        .expect("run the mariadb client")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const SSL_STATUS: &str = "SHOW STATUS LIKE 'Ssl_version'";

#[test]
fn clients_connect_over_tls_with_a_generated_certificate() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let _playground = Playground::start_in(data.path(), port);
    let cert = data.path().join("tls").join("server-cert.pem");
    assert!(cert.exists(), "no certificate generated in the data folder");

    assert_eq!(
        stdout(&mariadb(port, "root", "", true, SSL_STATUS)),
        "Ssl_version\tTLSv1.3\n"
    );
    assert_eq!(
        stdout(&mariadb(port, "root", "", false, SSL_STATUS)),
        "Ssl_version\t\n"
    );
    assert_eq!(
        stdout(&mariadb(port, "root", "", true, "SELECT @@have_ssl")),
        "YES\n"
    );

    // An account that requires TLS: refused in plain, served over TLS.
    stdout(&mariadb(
        port,
        "root",
        "",
        true,
        "CREATE USER tess IDENTIFIED WITH caching_sha2_password BY 'tpw' REQUIRE SSL; \
         CREATE DATABASE sbtest; GRANT ALL ON sbtest.* TO tess",
    ));
    assert!(stderr(&mariadb(port, "tess", "tpw", false, "SELECT 1")).contains("ERROR 1045"));
    assert_eq!(
        stdout(&mariadb(port, "tess", "tpw", true, "SELECT CURRENT_USER()")),
        "tess@%\n"
    );

    // PyMySQL checks the certificate against the generated one, by address and by name.
    let script = format!(
        "import sys, pymysql\n\
         for host in ['127.0.0.1', 'localhost']:\n\
         \x20   c = pymysql.connect(host=host, port=int(sys.argv[1]), user='tess', password='tpw', ssl={{'ca': '{}'}})\n\
         \x20   cur = c.cursor(); cur.execute(\"{SSL_STATUS}\"); print(cur.fetchone()[1])\n",
        cert.display()
    );
    let out = pymysql(port, &script);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "TLSv1.3\nTLSv1.3\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // sysbench --mysql-ssl=on reads cacert.pem, client-cert.pem and client-key.pem from its
    // working folder.
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(&cert, work.path().join("cacert.pem")).unwrap();
    client_certificate(work.path());
    common::sysbench_as(
        port,
        ("tess", "tpw"),
        &["--mysql-ssl=on"],
        Some(work.path()),
        &["prepare", "run"],
    );
}

/// A client certificate and key, made with the openssl command.
fn client_certificate(dir: &Path) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-keyout", "client-key.pem", "-out", "client-cert.pem"])
        .args(["-subj", "/CN=strata-test-client"])
        .output()
        .expect("openssl is required: run scripts/test.sh, which installs it");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn plain_connections_are_refused_where_tls_is_required() {
    let playground = Playground::start_with(&["--require-secure-transport"]);
    let port = playground.port;
    let refused = stderr(&mariadb(port, "root", "", false, "SELECT 1"));
    assert!(refused.contains("ERROR 3159"), "{refused}");
    assert_eq!(
        stdout(&mariadb(
            port,
            "root",
            "",
            true,
            "SELECT @@require_secure_transport"
        )),
        "1\n"
    );
    // The Unix socket is a secure transport, as MySQL's.
    let socket = playground.data_dir.join("mysql.sock");
    let out = Command::new(mariadb_binary())
        .arg(format!("--socket={}", socket.display()))
        .args([
            "-u",
            "root",
            "--batch",
            "--skip-column-names",
            "-e",
            "SELECT 1",
        ])
        .output()
        .expect("run the mariadb client");
    assert_eq!(stdout(&out), "1\n");
}

#[test]
fn a_server_without_tls_says_so() {
    let playground = Playground::start_with(&["--skip-ssl"]);
    let port = playground.port;
    assert_eq!(
        stdout(&mariadb(port, "root", "", false, "SELECT @@have_ssl")),
        "DISABLED\n"
    );
    // A client that asks for TLS (without insisting) gets a plain connection.
    assert_eq!(
        stdout(&mariadb(port, "root", "", true, SSL_STATUS)),
        "Ssl_version\t\n"
    );
    assert!(!playground.data_dir.join("tls").exists());
}

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl is required: run scripts/test.sh, which installs it");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The mariadb client over TLS as `user`, showing the certificate and key in `dir` (if any).
fn mariadb_with_certificate(port: u16, user: &str, dir: Option<&Path>, sql: &str) -> Output {
    let mut command = Command::new(mariadb_binary());
    command.args([
        "-h",
        "127.0.0.1",
        "-P",
        &port.to_string(),
        "-u",
        user,
        "-pxpw",
        "--ssl",
    ]);
    if let Some(dir) = dir {
        command
            .arg(format!(
                "--ssl-cert={}",
                dir.join("client-cert.pem").display()
            ))
            .arg(format!(
                "--ssl-key={}",
                dir.join("client-key.pem").display()
            ));
    }
    command
        .args(["--batch", "--skip-column-names", "-e", sql])
        .output()
        .expect("run the mariadb client")
}

#[test]
fn require_x509_accounts_need_a_client_certificate_from_the_ca() {
    // A CA, a client certificate it issued, and a self-signed one it did not.
    let ours = tempfile::tempdir().unwrap();
    let dir = ours.path();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            "ca-key.pem",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=strata-test-ca",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "client-key.pem",
            "-out",
            "client.csr",
            "-subj",
            "/O=Strata Shop/CN=xena",
        ],
    );
    // A version 3 certificate for a client (webpki refuses version 1).
    std::fs::write(
        dir.join("client.ext"),
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "client.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "client.ext",
            "-out",
            "client-cert.pem",
        ],
    );
    let theirs = tempfile::tempdir().unwrap();
    client_certificate(theirs.path());

    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let ca = dir.join("ca.pem").display().to_string();
    let _playground = Playground::start_in_with(data.path(), port, &["--ssl-ca", &ca]);
    let root = |sql: &str| stdout(&mariadb(port, "root", "", false, sql));
    root(
        "CREATE USER xena IDENTIFIED BY 'xpw' REQUIRE X509; \
         CREATE USER yuri IDENTIFIED BY 'xpw' REQUIRE SSL",
    );
    assert_eq!(
        root("SELECT User, ssl_type FROM mysql.user WHERE User IN ('xena', 'yuri') ORDER BY User"),
        "xena\tX509\nyuri\tANY\n"
    );

    // With the CA's certificate: in. TLS without one, or plain: 1045.
    assert_eq!(
        stdout(&mariadb_with_certificate(
            port,
            "xena",
            Some(dir),
            "SELECT CURRENT_USER()"
        )),
        "xena@%\n"
    );
    let refused = stderr(&mariadb_with_certificate(port, "xena", None, "SELECT 1"));
    assert!(refused.contains("ERROR 1045"), "{refused}");
    let refused = stderr(&mariadb(port, "xena", "xpw", false, "SELECT 1"));
    assert!(refused.contains("ERROR 1045"), "{refused}");
    // A certificate the CA did not issue fails the TLS handshake itself.
    let refused = stderr(&mariadb_with_certificate(
        port,
        "yuri",
        Some(theirs.path()),
        "SELECT 1",
    ));
    assert!(refused.contains("ERROR 2026"), "{refused}");
    // A certificate is optional for everyone else.
    for certificate in [Some(dir), None] {
        assert_eq!(
            stdout(&mariadb_with_certificate(
                port,
                "yuri",
                certificate,
                "SELECT CURRENT_USER()"
            )),
            "yuri@%\n"
        );
    }

    // REQUIRE SUBJECT, ISSUER and CIPHER: the certificate's names in OpenSSL's one-line form,
    // the cipher as Ssl_cipher names it, each compared exactly.
    let status = stdout(&mariadb_with_certificate(
        port,
        "yuri",
        None,
        "SHOW STATUS LIKE 'Ssl_cipher'",
    ));
    let cipher = status
        .trim()
        .split('\t')
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(cipher.starts_with("TLS_AES_"), "{status}");
    root(&format!(
        "CREATE USER sam IDENTIFIED BY 'xpw' \
                 REQUIRE SUBJECT '/O=Strata Shop/CN=xena' AND ISSUER '/CN=strata-test-ca'; \
             CREATE USER sid IDENTIFIED BY 'xpw' \
                 REQUIRE ISSUER '/CN=strata-test-ca' SUBJECT '/CN=xena'; \
             CREATE USER cy IDENTIFIED BY 'xpw' REQUIRE CIPHER '{cipher}'; \
             CREATE USER cid IDENTIFIED BY 'xpw' REQUIRE CIPHER 'ECDHE-RSA-AES128-GCM-SHA256'"
    ));
    assert_eq!(
        root(
            "SELECT User, ssl_type, ssl_cipher, x509_issuer, x509_subject FROM mysql.user \
             WHERE User IN ('sam', 'cy') ORDER BY User"
        ),
        format!(
            "cy\tSPECIFIED\t{cipher}\t\t\n\
             sam\tSPECIFIED\t\t/CN=strata-test-ca\t/O=Strata Shop/CN=xena\n"
        )
    );
    let login = |user: &str, certificate: Option<&Path>| {
        mariadb_with_certificate(port, user, certificate, "SELECT CURRENT_USER()")
    };
    assert_eq!(stdout(&login("sam", Some(dir))), "sam@%\n");
    for refused in [
        login("sam", None),
        login("sid", Some(dir)),
        login("cid", Some(dir)),
    ] {
        let refused = stderr(&refused);
        assert!(refused.contains("ERROR 1045"), "{refused}");
    }
    assert_eq!(stdout(&login("cy", None)), "cy@%\n");
    let plain = stderr(&mariadb(port, "cy", "xpw", false, "SELECT 1"));
    assert!(plain.contains("ERROR 1045"), "{plain}");
    // REQUIRE NONE lifts it all.
    root("ALTER USER sam REQUIRE NONE");
    assert_eq!(
        stdout(&mariadb(port, "sam", "xpw", false, "SELECT CURRENT_USER()")),
        "sam@%\n"
    );
}

/// `caching_sha2_password` as MySQL 8 runs it: an account's first login on a SQL node sends
/// its password in full (encrypted with the server's RSA key on a plain connection, in clear
/// over TLS or the Unix socket), later ones take the fast path from the node's cache, which a
/// new password, FLUSH PRIVILEGES or a restart empties. PyMySQL shows which way it went: it
/// keeps the public key it asked for.
#[test]
fn caching_sha2_logins_send_the_password_in_full_until_cached() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut playground = Playground::start_in(data.path(), port);
    let root = |sql: &str| stdout(&mariadb(port, "root", "", false, sql));
    root("CREATE USER sha IDENTIFIED WITH caching_sha2_password BY 'shapw'");
    // MySQL's longest caching_sha2_password password is 256 bytes (the crypt's work grows with
    // the square of the length): one more is refused with 1819.
    root(&format!(
        "CREATE USER longest IDENTIFIED WITH caching_sha2_password BY '{}'",
        "p".repeat(256)
    ));
    for statement in [
        "CREATE USER toolong IDENTIFIED WITH caching_sha2_password BY '{}'",
        "ALTER USER longest IDENTIFIED BY '{}'",
    ] {
        let refused = stderr(&mariadb(
            port,
            "root",
            "",
            false,
            &statement.replace("{}", &"p".repeat(257)),
        ));
        assert!(refused.contains("ERROR 1819"), "{refused}");
    }
    // The longest logs in over TLS (in clear: RSA-OAEP with a 2048-bit key carries at most 214
    // bytes, in MySQL too).
    assert_eq!(
        stdout(&mariadb(
            port,
            "longest",
            &"p".repeat(256),
            true,
            "SELECT CURRENT_USER()"
        )),
        "longest@%\n"
    );
    let key_file = data.path().join("public_key.pem");
    let public_key = std::fs::read_to_string(&key_file).expect("the public key in the data folder");
    assert!(public_key.starts_with("-----BEGIN PUBLIC KEY-----"));
    assert_eq!(
        root("SHOW STATUS LIKE 'Caching_sha2_password_rsa_public_key'"),
        format!(
            "Caching_sha2_password_rsa_public_key\t{}\n",
            public_key.replace('\n', "\\n")
        )
    );
    let socket = data.path().join("mysql.sock");
    // Each line: how a login went (`key` when PyMySQL was sent the public key, `nokey` when it
    // was not), or the error number.
    let script = format!(
        "import sys, pymysql\n\
         port = int(sys.argv[1])\n\
         def login(password, **extra):\n\
         \x20   try:\n\
         \x20       c = pymysql.connect(host='127.0.0.1', port=port, user='sha', password=password, **extra)\n\
         \x20   except pymysql.err.OperationalError as e:\n\
         \x20       return str(e.args[0])\n\
         \x20   cur = c.cursor(); cur.execute('SELECT CURRENT_USER()'); assert cur.fetchone()[0] == 'sha@%'\n\
         \x20   if c.server_public_key is None:\n\
         \x20       return 'nokey'\n\
         \x20   assert c.server_public_key.decode() == open({key_file:?}).read()\n\
         \x20   return 'key'\n\
         def root(sql):\n\
         \x20   c = pymysql.connect(host='127.0.0.1', port=port, user='root'); c.cursor().execute(sql)\n\
         print(login('shapw'), login('shapw'), login('wrong'), login('shapw'))\n\
         root('FLUSH PRIVILEGES')\n\
         print(login('shapw'), login('shapw'))\n\
         root(\"ALTER USER sha IDENTIFIED BY 'newpw'\")\n\
         print(login('shapw'), login('newpw'), login('newpw'))\n\
         root('FLUSH PRIVILEGES')\n\
         print(login('newpw', unix_socket={socket:?}), login('newpw'))\n\
         root('FLUSH PRIVILEGES')\n\
         print(login('newpw', ssl={{'ca': None}}), login('newpw'))\n",
        key_file = key_file.display().to_string(),
        socket = socket.display().to_string(),
    );
    let out = pymysql(port, &script);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "key nokey 1045 nokey\n\
         key nokey\n\
         1045 key nokey\n\
         nokey nokey\n\
         nokey nokey\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The mariadb client (Connector/C) and sysbench ask for the key too, and log in.
    root("FLUSH PRIVILEGES");
    assert_eq!(
        stdout(&mariadb(
            port,
            "sha",
            "newpw",
            false,
            "SELECT CURRENT_USER()"
        )),
        "sha@%\n"
    );
    root("FLUSH PRIVILEGES");
    root("CREATE DATABASE sbtest; GRANT ALL ON sbtest.* TO sha");
    common::sysbench_as(port, ("sha", "newpw"), &[], None, &["prepare", "run"]);

    // A secret in MySQL's stored form (from MySQL 8's mysql.user: `$A$005$`, a 20-byte salt
    // and the SHA-256 crypt) logs in with its password.
    let secret = "24412430303524031A69251C34295C4B35167C7F1E5A7B63091349503974624D34504B5A\
                  424679354856336868686F52485A736E4A733368786E427575516C73446469496537";
    let script = format!(
        "import sys, pymysql\n\
         port = int(sys.argv[1])\n\
         secret = bytes.fromhex('{secret}').decode()\n\
         c = pymysql.connect(host='127.0.0.1', port=port, user='root')\n\
         c.cursor().execute('CREATE USER imported IDENTIFIED WITH caching_sha2_password AS %s', (secret,))\n\
         c = pymysql.connect(host='127.0.0.1', port=port, user='imported', password='foobar')\n\
         cur = c.cursor(); cur.execute('SELECT CURRENT_USER()'); print(cur.fetchone()[0])\n"
    );
    let out = pymysql(port, &script);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "imported@%\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // After a restart the cache is empty and the key pair the same.
    playground.kill9();
    drop(playground);
    let _playground = Playground::start_in(data.path(), port);
    let script = "import sys, pymysql\n\
                  c = pymysql.connect(host='127.0.0.1', port=int(sys.argv[1]), user='sha', password='newpw')\n\
                  print(c.server_public_key.decode() if c.server_public_key else 'fast')\n";
    let out = pymysql(port, script);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{public_key}\n"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
