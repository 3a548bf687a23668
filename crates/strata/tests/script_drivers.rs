//! The Python, Node.js and Java drivers and frameworks people use with MySQL, with their
//! default options, against the playground and against each SQL node of a `--kv 3 --sql 2`
//! cluster: Oracle's MySQL Connector/Python (its C extension
//! when it loads, and pure Python), PyMySQL (Debian's package), SQLAlchemy with Alembic, Django,
//! Node's `mysql2`, and JDBC through MariaDB Connector/J (Debian's package). Each test installs
//! what it needs from its registry (PyPI, npm) into the build's test folder when it is not
//! there yet (the Debian packages come with the test command's), then runs a script of checks
//! (`tests/drivers/`): for the drivers, connecting
//! over TCP to 127.0.0.1 and to localhost, DDL, text and prepared statements with every column
//! type, NULLs, a 1 MiB value, transactions, errors, multiple result sets and column metadata;
//! for SQLAlchemy and Django, models, ORM sessions, reflection and migrations.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::cluster::Cluster;
use common::{run_bounded, Playground};

/// The versions installed (pinned: a new release is a change to review).
const CONNECTOR_PYTHON: &str = "mysql-connector-python==26.10.0";
const SQLALCHEMY: [&str; 3] = ["SQLAlchemy==2.0.58", "alembic==1.20.1", "PyMySQL==1.1.2"];
const DJANGO: [&str; 2] = ["Django==5.2.19", "PyMySQL==1.1.2"];
const MYSQL2: &str = "mysql2@3.24.5";
/// Debian's MariaDB Connector/J (libmariadb-java 2.7.6).
const CONNECTOR_J: &str = "/usr/share/java/mariadb-java-client.jar";
/// Bounds on an install and on a script.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(180);

/// Where the drivers are installed: kept between runs, inside the build's folder.
fn driver_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("drivers")
        .join(name)
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/drivers")
        .join(name)
}

/// Runs `install` unless `marker` exists under `dir`; panics with its output when it fails.
/// One install at a time: tests that share a driver run in parallel, and two installs into
/// one folder (npm's above all) undo each other's files.
fn ensure_installed(dir: &Path, marker: &str, install: &mut Command) {
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = INSTALLING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if dir.join(marker).exists() {
        return;
    }
    std::fs::create_dir_all(dir).unwrap();
    let out = run_bounded(install, INSTALL_TIMEOUT);
    assert!(
        out.status.success() && dir.join(marker).exists(),
        "installing with {install:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs a driver script against `port`; asserts it printed "ok".
fn run_script(command: &mut Command) {
    let out = run_bounded(command, SCRIPT_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("ok"),
        "{command:?} ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// `python3 -m pip install` of `packages` into `dir`: `--target` installs beside the
/// interpreter's own packages, not into them.
fn pip_install(dir: &Path, packages: &[&str]) -> Command {
    let mut command = Command::new("python3");
    command
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg("--target")
        .arg(dir)
        .args(packages);
    command
}

#[test]
fn mysql_connector_python_with_default_options() {
    connector_python(Playground::start().port);
}

fn connector_python(port: u16) {
    let dir = driver_dir("python");
    ensure_installed(
        &dir,
        "mysql/connector/__init__.py",
        &mut pip_install(&dir, &[CONNECTOR_PYTHON]),
    );
    run_script(
        Command::new("python3")
            .arg(script("connector.py"))
            .arg(port.to_string())
            .arg(&dir),
    );
}

/// SQLAlchemy's ORM over PyMySQL (both from PyPI) and an Alembic migration: a schema created
/// from models, sessions with relationships, reflection (which parses SHOW CREATE TABLE) and
/// ALTER TABLE through Alembic's operations (tests/drivers/sqlalchemy_orm.py).
#[test]
fn sqlalchemy_orm_and_an_alembic_migration() {
    sqlalchemy(Playground::start().port);
}

fn sqlalchemy(port: u16) {
    let dir = driver_dir("sqlalchemy");
    ensure_installed(
        &dir,
        "alembic/__init__.py",
        &mut pip_install(&dir, &SQLALCHEMY),
    );
    run_script(
        Command::new("python3")
            .arg(script("sqlalchemy_orm.py"))
            .arg(port.to_string())
            .arg(&dir),
    );
}

/// Django's MySQL backend over PyMySQL (both from PyPI): a model round trip through the ORM
/// and the schema editor (tests/drivers/django_models.py).
#[test]
fn django_models_round_trip() {
    django(Playground::start().port);
}

fn django(port: u16) {
    let dir = driver_dir("django");
    ensure_installed(&dir, "django/__init__.py", &mut pip_install(&dir, &DJANGO));
    run_script(
        Command::new("python3")
            .arg(script("django_models.py"))
            .arg(port.to_string())
            .arg(&dir),
    );
}

/// PyMySQL from Debian's package: no install, and no prepared statements, so every parameter
/// (bytes included) travels inside the statement's text.
#[test]
fn pymysql_with_default_options() {
    pymysql(Playground::start().port);
}

fn pymysql(port: u16) {
    run_script(
        Command::new(common::python_with_pymysql())
            .arg(script("pymysql_driver.py"))
            .arg(port.to_string()),
    );
}

#[test]
fn node_mysql2_with_default_options() {
    node_mysql2(Playground::start().port);
}

fn node_mysql2(port: u16) {
    let dir = driver_dir("node");
    ensure_installed(
        &dir,
        "node_modules/mysql2/package.json",
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&dir)
            .arg(MYSQL2),
    );
    run_script(
        Command::new("node")
            .arg(script("mysql2.js"))
            .arg(port.to_string())
            .arg(&dir),
    );
}

/// Debian's MariaDB Connector/J (libmariadb-java, which the test command installs with a JDK):
/// JDBC with its default options (statements prepared in the client) and with server-side
/// prepared statements, every type, a streamed result and metadata (tests/drivers/Jdbc.java).
/// Oracle's MySQL Connector/J is on Maven Central only, which this machine cannot reach.
#[test]
fn jdbc_with_mariadb_connector_j() {
    jdbc(Playground::start().port);
}

fn jdbc(port: u16) {
    assert!(
        Path::new(CONNECTOR_J).exists() && Command::new("javac").arg("-version").output().is_ok(),
        "a JDK and {CONNECTOR_J} are required: run scripts/test.sh, which installs \
         default-jdk-headless and libmariadb-java"
    );
    let classes = tempfile::tempdir().unwrap();
    let compiled = run_bounded(
        Command::new("javac")
            .arg("-d")
            .arg(classes.path())
            .args(["-cp", CONNECTOR_J])
            .arg(script("Jdbc.java")),
        SCRIPT_TIMEOUT,
    );
    assert!(
        compiled.status.success(),
        "javac: {}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    run_script(
        Command::new("java")
            .arg("-cp")
            .arg(format!("{}:{CONNECTOR_J}", classes.path().display()))
            .arg("Jdbc")
            .arg(port.to_string()),
    );
}

/// The same driver and ORM scripts against each SQL node of a cluster of real processes
/// (three KV nodes, two SQL nodes sharing data and schema), one node after the other.
#[test]
fn drivers_on_every_sql_node_of_a_cluster() {
    let cluster = Cluster::start(3, 2);
    for node in &cluster.sql {
        connector_python(node.port);
        pymysql(node.port);
        node_mysql2(node.port);
        jdbc(node.port);
        sqlalchemy(node.port);
        django(node.port);
    }
}
