//! Go's database/sql with go-sql-driver/mysql (Debian's packages, which scripts/test.sh
//! installs) logs in to the playground with each authentication plugin, plain and over TLS
//! with the generated certificate verified, and runs a text and a prepared statement.

mod common;

use std::path::Path;
use std::process::Command;

use common::{free_port, Playground};

/// Where Debian's golang-github-go-sql-driver-mysql-dev puts the driver (a GOPATH).
const GOPATH: &str = "/usr/share/gocode";

/// Builds `tests/go/login.go` into `dir` and returns the program's path.
fn build_login(dir: &Path) -> std::path::PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/go/login.go");
    assert!(
        Path::new(GOPATH)
            .join("src/github.com/go-sql-driver/mysql")
            .is_dir()
            && Command::new("go").arg("version").output().is_ok(),
        "Go and go-sql-driver/mysql are required: run scripts/test.sh, which installs \
         golang-go and golang-github-go-sql-driver-mysql-dev"
    );
    let program = dir.join("login");
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&program)
        .arg(&source)
        .env("GO111MODULE", "off")
        .env("GOPATH", GOPATH)
        .env("GOCACHE", dir.join("cache"))
        .env("GOFLAGS", "")
        .output()
        .expect("run go build");
    assert!(
        out.status.success(),
        "go build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    program
}

#[test]
fn go_sql_driver_logs_in_with_each_plugin_plain_and_over_tls() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let playground = Playground::start_in(data.path(), port);
    playground.sql(
        None,
        "CREATE USER nat IDENTIFIED WITH mysql_native_password BY 'npw'; \
         CREATE USER sha IDENTIFIED WITH caching_sha2_password BY 'spw'; \
         CREATE USER tls IDENTIFIED BY 'tpw' REQUIRE SSL",
    );
    let login = build_login(work.path());
    let out = Command::new(&login)
        .arg(data.path().join("tls/server-cert.pem"))
        .arg(format!("127.0.0.1:{port}"))
        .args([
            "nat:npw:plain",
            "nat:npw:verified",
            "sha:spw:plain",
            "sha:spw:verified",
            "sha:wrong:plain",
            "tls:tpw:plain",
            "tls:tpw:verified",
        ])
        .output()
        .expect("run the Go program");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "nat@% 42 plain\n\
         nat@% 42 TLSv1.3\n\
         sha@% 42 plain\n\
         sha@% 42 TLSv1.3\n\
         error: Error 1045: Access denied for user 'sha'@'127.0.0.1' (using password: YES)\n\
         error: Error 1045: Access denied for user 'tls'@'127.0.0.1' (using password: YES)\n\
         tls@% 42 TLSv1.3\n"
    );
}
