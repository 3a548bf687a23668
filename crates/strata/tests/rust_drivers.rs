//! The Rust MySQL drivers, `mysql` (synchronous), `mysql_async` and `sqlx` (whose types are
//! checked against the column definitions, and which sets PIPES_AS_CONCAT), with their
//! default options, against the playground and against every SQL node of a `--kv 3 --sql 2`
//! cluster: connecting over TCP to 127.0.0.1 (where `mysql` and `mysql_async` ask for
//! `@@socket` to move to a Unix socket) and to `localhost`, DDL, prepared and text statements
//! with every column type, NULLs, large values, transactions, errors, multiple result sets and
//! column metadata.

mod common;

use std::path::Path;

use common::cluster::Cluster;
use common::Playground;
use mysql::consts::{ColumnFlags, ColumnType};
use mysql::prelude::Queryable;
use mysql::Value;

/// A table with a column of every type Strata stores.
const CREATE_TABLE: &str = "CREATE TABLE every_type (
    id INT PRIMARY KEY,
    ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT, ubi BIGINT UNSIGNED,
    de DECIMAL(20,6), fl FLOAT, db DOUBLE,
    ch CHAR(10), vc VARCHAR(100) NOT NULL DEFAULT '', tx TEXT, bl BLOB, vb VARBINARY(100),
    d DATE, dt DATETIME(6), ts TIMESTAMP NULL, tm TIME, y YEAR,
    bt BIT(8), j JSON, e ENUM('small','large'), st SET('x','y','z'))";

/// The columns of `every_type` after `id`, in order.
const COLUMNS: &str =
    "ti, si, mi, i, bi, ubi, de, fl, db, ch, vc, tx, bl, vb, d, dt, ts, tm, y, bt, j, e, st";

/// A row written as SQL literals (the text protocol's way in).
const LITERALS: &str = "-128, -32768, -8388608, -2147483648, -9223372036854775808, \
     18446744073709551615, -12345678901234.123456, 1.5, -2.25, 'fixed', 'variable ü', \
     'some text', X'00FF10', X'BEEF', '2024-02-29', '2024-02-29 13:14:15.123456', \
     '2001-02-03 04:05:06', '-838:59:59', 2155, b'01011010', '{\"a\": [1, 2]}', 'large', 'x,z'";

/// That row as parameters of a prepared statement (the binary protocol's way in).
fn parameters() -> Vec<Value> {
    vec![
        Value::Int(-128),
        Value::Int(-32768),
        Value::Int(-8_388_608),
        Value::Int(-2_147_483_648),
        Value::Int(i64::MIN),
        Value::UInt(u64::MAX),
        Value::Bytes(b"-12345678901234.123456".to_vec()),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Bytes(b"fixed".to_vec()),
        Value::Bytes("variable ü".as_bytes().to_vec()),
        Value::Bytes(b"some text".to_vec()),
        Value::Bytes(vec![0x00, 0xFF, 0x10]),
        Value::Bytes(vec![0xBE, 0xEF]),
        Value::Date(2024, 2, 29, 0, 0, 0, 0),
        Value::Date(2024, 2, 29, 13, 14, 15, 123_456),
        Value::Date(2001, 2, 3, 4, 5, 6, 0),
        Value::Time(true, 34, 22, 59, 59, 0),
        Value::Int(2155),
        Value::Bytes(vec![0b0101_1010]),
        Value::Bytes(br#"{"a": [1, 2]}"#.to_vec()),
        Value::Bytes(b"large".to_vec()),
        Value::Bytes(b"x,z".to_vec()),
    ]
}

/// The row as the binary protocol returns it (a prepared SELECT), `id` first.
fn binary_row(id: i64) -> Vec<Value> {
    let mut row = vec![Value::Int(id)];
    row.extend(parameters());
    row
}

/// The row as the text protocol returns it, `id` first.
fn text_row(id: i64) -> Vec<Value> {
    let text = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    vec![
        text(&id.to_string()),
        text("-128"),
        text("-32768"),
        text("-8388608"),
        text("-2147483648"),
        text("-9223372036854775808"),
        text("18446744073709551615"),
        text("-12345678901234.123456"),
        text("1.5"),
        text("-2.25"),
        text("fixed"),
        text("variable ü"),
        text("some text"),
        Value::Bytes(vec![0x00, 0xFF, 0x10]),
        Value::Bytes(vec![0xBE, 0xEF]),
        text("2024-02-29"),
        text("2024-02-29 13:14:15.123456"),
        text("2001-02-03 04:05:06"),
        text("-838:59:59"),
        text("2155"),
        Value::Bytes(vec![0b0101_1010]),
        text(r#"{"a": [1, 2]}"#),
        text("large"),
        text("x,z"),
    ]
}

/// A row of NULLs but for `id` (and `vc`, which is NOT NULL with a default).
fn null_row(id: i64, text: bool) -> Vec<Value> {
    let mut row = vec![if text {
        Value::Bytes(id.to_string().into_bytes())
    } else {
        Value::Int(id)
    }];
    row.extend(std::iter::repeat_n(Value::NULL, 23));
    row[11] = Value::Bytes(Vec::new());
    row
}

/// The synchronous `mysql` crate, default options, at `host:port`.
fn exercise_mysql(host: &str, port: u16, database: &str, socket: Option<&Path>) {
    let url = format!("mysql://root@{host}:{port}/");
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap())
        .unwrap_or_else(|e| panic!("mysql crate connecting to {url}: {e}"));
    // It asked for @@socket and moved to the Unix socket it names (the playground's), where
    // it is `localhost`; a SQL node of a cluster has none, and it stayed on TCP.
    let named: Option<String> = conn.query_first("SELECT @@socket").unwrap();
    let over: Option<String> = conn
        .query_first("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
        .unwrap();
    match socket {
        Some(path) => {
            assert_eq!(named.as_deref(), path.to_str());
            assert_eq!(over.as_deref(), Some("localhost"));
        }
        None => {
            assert_eq!(named.as_deref(), Some(""));
            assert_ne!(over.as_deref(), Some("localhost"));
        }
    }
    let (version, comment): (String, String) = conn
        .query_first("SELECT @@version, @@version_comment")
        .unwrap()
        .unwrap();
    assert!(version.starts_with("8.0"), "{version}");
    assert!(!comment.is_empty());

    conn.query_drop(format!("CREATE DATABASE {database}"))
        .unwrap();
    conn.query_drop(format!("USE {database}")).unwrap();
    conn.query_drop(CREATE_TABLE).unwrap();
    conn.query_drop(format!(
        "INSERT INTO every_type (id, {COLUMNS}) VALUES (1, {LITERALS})"
    ))
    .unwrap();
    let insert = conn
        .prep(format!(
            "INSERT INTO every_type (id, {COLUMNS}) VALUES (?{})",
            ", ?".repeat(23)
        ))
        .unwrap();
    let mut params = vec![Value::Int(2)];
    params.extend(parameters());
    conn.exec_drop(&insert, params).unwrap();
    conn.query_drop("INSERT INTO every_type (id) VALUES (3)")
        .unwrap();

    // Both ways in read back the same, both ways out.
    let select = format!("SELECT id, {COLUMNS} FROM every_type WHERE id = ?");
    for id in [1, 2] {
        let row: mysql::Row = conn.exec_first(&select, (id,)).unwrap().unwrap();
        assert_eq!(row.unwrap(), binary_row(id), "binary protocol, row {id}");
        let row: mysql::Row = conn
            .query_first(select.replace('?', &id.to_string()))
            .unwrap()
            .unwrap();
        assert_eq!(row.unwrap(), text_row(id), "text protocol, row {id}");
    }
    let row: mysql::Row = conn.exec_first(&select, (3,)).unwrap().unwrap();
    assert_eq!(row.unwrap(), null_row(3, false));
    let row: mysql::Row = conn.query_first(select.replace('?', "3")).unwrap().unwrap();
    assert_eq!(row.unwrap(), null_row(3, true));
    // A NULL parameter matches nothing; IS NULL finds the NULL row.
    let none: Option<i64> = conn
        .exec_first("SELECT id FROM every_type WHERE ti = ?", (Value::NULL,))
        .unwrap();
    assert_eq!(none, None);
    let nulls: Vec<i64> = conn
        .exec("SELECT id FROM every_type WHERE ti IS NULL", ())
        .unwrap();
    assert_eq!(nulls, vec![3]);

    // Metadata of a prepared statement and of a result.
    let stmt = conn.prep(&select).unwrap();
    assert_eq!(stmt.num_params(), 1);
    let columns = stmt.columns();
    assert_eq!(columns.len(), 24);
    assert_eq!(columns[0].name_str(), "id");
    assert_eq!(columns[0].table_str(), "every_type");
    assert_eq!(columns[0].schema_str(), database);
    assert_eq!(columns[0].column_type(), ColumnType::MYSQL_TYPE_LONG);
    assert!(columns[0]
        .flags()
        .contains(ColumnFlags::PRI_KEY_FLAG | ColumnFlags::NOT_NULL_FLAG));
    assert_eq!(columns[6].name_str(), "ubi");
    assert!(columns[6].flags().contains(ColumnFlags::UNSIGNED_FLAG));
    assert_eq!(columns[7].column_type(), ColumnType::MYSQL_TYPE_NEWDECIMAL);
    assert_eq!(columns[7].decimals(), 6);
    assert_eq!(columns[16].column_type(), ColumnType::MYSQL_TYPE_DATETIME);
    assert_eq!(columns[16].decimals(), 6);
    assert!(columns[13].flags().contains(ColumnFlags::BLOB_FLAG));

    // A large value, both ways.
    conn.query_drop("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)")
        .unwrap();
    let large: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
    conn.exec_drop("INSERT INTO big VALUES (1, ?)", (large.clone(),))
        .unwrap();
    let back: Vec<u8> = conn
        .exec_first("SELECT b FROM big WHERE id = ?", (1,))
        .unwrap()
        .unwrap();
    assert!(back == large, "a 4 MB value came back different");
    let back: Vec<u8> = conn
        .query_first("SELECT b FROM big WHERE id = 1")
        .unwrap()
        .unwrap();
    assert!(back == large, "a 4 MB value came back different (text)");

    // Transactions.
    let mut tx = conn.start_transaction(mysql::TxOpts::default()).unwrap();
    tx.exec_drop("INSERT INTO every_type (id) VALUES (?)", (10,))
        .unwrap();
    tx.rollback().unwrap();
    let mut tx = conn.start_transaction(mysql::TxOpts::default()).unwrap();
    tx.exec_drop("INSERT INTO every_type (id) VALUES (?)", (11,))
        .unwrap();
    tx.commit().unwrap();
    let ids: Vec<i64> = conn.query("SELECT id FROM every_type ORDER BY id").unwrap();
    assert_eq!(ids, vec![1, 2, 3, 11]);

    // Errors carry MySQL's code and state, and the connection goes on.
    let mysql::Error::MySqlError(e) = conn
        .exec_drop("INSERT INTO every_type (id) VALUES (?)", (1,))
        .unwrap_err()
    else {
        panic!("not a server error")
    };
    assert_eq!((e.code, e.state.as_str()), (1062, "23000"), "{e}");
    let mysql::Error::MySqlError(e) = conn.query_drop("SELEC 1").unwrap_err() else {
        panic!("not a server error")
    };
    assert_eq!((e.code, e.state.as_str()), (1064, "42000"), "{e}");
    let mysql::Error::MySqlError(e) = conn.prep("SELECT nope FROM every_type").unwrap_err() else {
        panic!("not a server error")
    };
    assert_eq!((e.code, e.state.as_str()), (1054, "42S22"), "{e}");

    // Several statements, several result sets.
    let mut result = conn
        .query_iter("SELECT 1 AS one; SELECT 'a' AS x, 'b' AS y UNION ALL SELECT 'c', 'd'; DO 0")
        .unwrap();
    let mut sets = Vec::new();
    while let Some(set) = result.iter() {
        let names: Vec<String> = set
            .columns()
            .as_ref()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect();
        let rows: Vec<Vec<Value>> = set.map(|row| row.unwrap().unwrap()).collect();
        sets.push((names, rows));
    }
    let b = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    assert_eq!(
        sets,
        vec![
            (vec!["one".to_string()], vec![vec![b("1")]]),
            (
                vec!["x".to_string(), "y".to_string()],
                vec![vec![b("a"), b("b")], vec![b("c"), b("d")]]
            ),
            (vec![], vec![]),
        ]
    );
    drop(result);

    // Affected rows as MySQL counts them, and with CLIENT_FOUND_ROWS (MariaDB 10.11 gives
    // the same): ON DUPLICATE KEY UPDATE counts 1 per row inserted, 2 per row changed, and 0
    // (1 with the flag) per row set to its own values; UPDATE counts changed (matched) rows.
    let mut found = mysql::Conn::new(
        mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&format!("{url}{database}")).unwrap())
            .additional_capabilities(mysql::consts::CapabilityFlags::CLIENT_FOUND_ROWS),
    )
    .unwrap();
    conn.query_drop("CREATE TABLE fr (id INT PRIMARY KEY, v INT)")
        .unwrap();
    for (conn, expected) in [(&mut conn, [0, 2, 1, 1, 0]), (&mut found, [1, 2, 3, 3, 2])] {
        conn.query_drop("DELETE FROM fr").unwrap();
        conn.query_drop("INSERT INTO fr VALUES (1, 1), (2, 2)")
            .unwrap();
        let mut counts = Vec::new();
        for sql in [
            "INSERT INTO fr VALUES (1, 1) ON DUPLICATE KEY UPDATE v = VALUES(v)",
            "INSERT INTO fr VALUES (1, 5) ON DUPLICATE KEY UPDATE v = VALUES(v)",
            "INSERT INTO fr VALUES (1, 5), (2, 2), (3, 3) ON DUPLICATE KEY UPDATE v = VALUES(v)",
        ] {
            conn.query_drop(sql).unwrap();
            counts.push(conn.affected_rows());
        }
        let row_count: Option<u64> = conn.query_first("SELECT ROW_COUNT()").unwrap();
        counts.push(row_count.unwrap());
        conn.query_drop("UPDATE fr SET v = v WHERE id <= 2")
            .unwrap();
        counts.push(conn.affected_rows());
        assert_eq!(counts, expected);
    }
    drop(found);
    conn.query_drop(format!("DROP DATABASE {database}"))
        .unwrap();
}

/// `mysql_async`, default options, at `host:port`.
fn exercise_mysql_async(host: &str, port: u16, database: &str, socket: Option<&Path>) {
    use mysql_async::prelude::Queryable as _;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let url = format!("mysql://root@{host}:{port}/");
        let mut conn = mysql_async::Conn::from_url(&url)
            .await
            .unwrap_or_else(|e| panic!("mysql_async connecting to {url}: {e}"));
        // As the `mysql` crate: on the Unix socket @@socket names, when there is one.
        let named: Option<String> = conn.query_first("SELECT @@socket").await.unwrap();
        let over: Option<String> = conn
            .query_first(
                "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
            )
            .await
            .unwrap();
        assert_eq!(
            named.as_deref(),
            Some(socket.map_or("", |p| p.to_str().unwrap()))
        );
        assert_eq!(
            over.as_deref() == Some("localhost"),
            socket.is_some(),
            "{over:?}"
        );
        conn.query_drop(format!("CREATE DATABASE {database}"))
            .await
            .unwrap();
        conn.query_drop(format!("USE {database}")).await.unwrap();
        conn.query_drop(CREATE_TABLE).await.unwrap();
        let mut params = vec![Value::Int(2)];
        params.extend(parameters());
        conn.exec_drop(
            format!(
                "INSERT INTO every_type (id, {COLUMNS}) VALUES (?{})",
                ", ?".repeat(23)
            ),
            params,
        )
        .await
        .unwrap();
        conn.query_drop("INSERT INTO every_type (id) VALUES (3)")
            .await
            .unwrap();
        let select = format!("SELECT id, {COLUMNS} FROM every_type WHERE id = ?");
        let row: mysql_async::Row = conn.exec_first(&select, (2,)).await.unwrap().unwrap();
        assert_eq!(row.unwrap(), binary_row(2));
        let row: mysql_async::Row = conn
            .query_first(select.replace('?', "2"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.unwrap(), text_row(2));
        let row: mysql_async::Row = conn.exec_first(&select, (3,)).await.unwrap().unwrap();
        assert_eq!(row.unwrap(), null_row(3, false));

        let mut tx = conn
            .start_transaction(mysql_async::TxOpts::default())
            .await
            .unwrap();
        tx.exec_drop("UPDATE every_type SET ti = ? WHERE id = 3", (7,))
            .await
            .unwrap();
        tx.rollback().await.unwrap();
        let ti: Option<Option<i64>> = conn
            .query_first("SELECT ti FROM every_type WHERE id = 3")
            .await
            .unwrap();
        assert_eq!(ti, Some(None));

        let Err(mysql_async::Error::Server(e)) = conn
            .exec_drop("INSERT INTO every_type (id) VALUES (?)", (2,))
            .await
        else {
            panic!("a duplicate key was not a server error")
        };
        assert_eq!((e.code, e.state.as_str()), (1062, "23000"), "{e}");

        let mut result = conn.query_iter("SELECT 1; SELECT 2, 3").await.unwrap();
        let first: Vec<(i64,)> = result.collect().await.unwrap();
        let second: Vec<(i64, i64)> = result.collect().await.unwrap();
        assert_eq!((first, second), (vec![(1,)], vec![(2, 3)]));
        drop(result);
        conn.query_drop(format!("DROP DATABASE {database}"))
            .await
            .unwrap();
        conn.disconnect().await.unwrap();
    });
}

/// Every column of `every_type` after `id`, decoded by sqlx as the Rust type an application
/// would ask for (sqlx refuses a type the column definition does not allow), and printed.
fn sqlx_values(row: &sqlx::mysql::MySqlRow) -> Vec<String> {
    use sqlx::mysql::types::MySqlTime;
    use sqlx::mysql::MySql;
    use sqlx::types::chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
    use sqlx::types::{Decimal, Json};
    use sqlx::Row;
    fn get<'r, T>(row: &'r sqlx::mysql::MySqlRow, column: &str) -> String
    where
        T: sqlx::Decode<'r, MySql> + sqlx::Type<MySql> + std::fmt::Debug,
    {
        let value: Option<T> = row
            .try_get(column)
            .unwrap_or_else(|e| panic!("sqlx decoding {column}: {e}"));
        format!("{value:?}")
    }
    vec![
        get::<i8>(row, "ti"),
        get::<i16>(row, "si"),
        get::<i32>(row, "mi"),
        get::<i32>(row, "i"),
        get::<i64>(row, "bi"),
        get::<u64>(row, "ubi"),
        get::<Decimal>(row, "de"),
        get::<f32>(row, "fl"),
        get::<f64>(row, "db"),
        get::<String>(row, "ch"),
        get::<String>(row, "vc"),
        get::<String>(row, "tx"),
        get::<Vec<u8>>(row, "bl"),
        get::<Vec<u8>>(row, "vb"),
        get::<NaiveDate>(row, "d"),
        get::<NaiveDateTime>(row, "dt"),
        get::<DateTime<Utc>>(row, "ts"),
        get::<MySqlTime>(row, "tm"),
        get::<u16>(row, "y"),
        get::<u8>(row, "bt"),
        get::<Json<serde_json::Value>>(row, "j"),
        get::<String>(row, "e"),
        get::<String>(row, "st"),
    ]
}

/// `sqlx` (MySQL, on tokio), default options, at `host:port`.
fn exercise_sqlx(host: &str, port: u16, database: &str) {
    use sqlx::mysql::types::{MySqlTime, MySqlTimeSign};
    use sqlx::mysql::{MySqlConnection, MySqlDatabaseError};
    use sqlx::types::chrono::{NaiveDate, TimeZone, Utc};
    use sqlx::types::Decimal;
    use sqlx::{Column, Connection, Executor, Row, TypeInfo};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let url = format!("mysql://root@{host}:{port}/");
        let mut conn = MySqlConnection::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("sqlx connecting to {url}: {e}"));
        // sqlx sets PIPES_AS_CONCAT (and time_zone '+00:00') when it connects.
        let (version, joined): (String, String) = sqlx::query_as("SELECT @@version, 'sq' || 'lx'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert!(version.contains("Strata"), "{version}");
        assert_eq!(joined, "sqlx");
        for sql in [
            format!("CREATE DATABASE {database}"),
            format!("USE {database}"),
            CREATE_TABLE.to_string(),
            format!("INSERT INTO every_type (id, {COLUMNS}) VALUES (1, {LITERALS})"),
            "INSERT INTO every_type (id) VALUES (3)".to_string(),
        ] {
            conn.execute(sql.as_str())
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let dt = NaiveDate::from_ymd_opt(2024, 2, 29)
            .unwrap()
            .and_hms_micro_opt(13, 14, 15, 123_456)
            .unwrap();
        let ts = Utc.with_ymd_and_hms(2001, 2, 3, 4, 5, 6).unwrap();
        let insert = format!(
            "INSERT INTO every_type (id, {COLUMNS}) VALUES (?{})",
            ", ?".repeat(23)
        );
        sqlx::query(&insert)
            .bind(2)
            .bind(-128i8)
            .bind(-32768i16)
            .bind(-8_388_608i32)
            .bind(i32::MIN)
            .bind(i64::MIN)
            .bind(u64::MAX)
            .bind("-12345678901234.123456".parse::<Decimal>().unwrap())
            .bind(1.5f32)
            .bind(-2.25f64)
            .bind("fixed")
            .bind("variable ü")
            .bind("some text")
            .bind(vec![0x00u8, 0xFF, 0x10])
            .bind(vec![0xBEu8, 0xEF])
            .bind(NaiveDate::from_ymd_opt(2024, 2, 29).unwrap())
            .bind(dt)
            .bind(ts)
            .bind(MySqlTime::new(MySqlTimeSign::Negative, 838, 59, 59, 0).unwrap())
            .bind(2155u16)
            .bind(0x5Au8)
            .bind(r#"{"a": [1, 2]}"#)
            .bind("large")
            .bind("x,z")
            .execute(&mut conn)
            .await
            .unwrap();

        // The literals by the text protocol, the parameters by the binary one: the same values.
        let select = format!("SELECT id, {COLUMNS} FROM every_type WHERE id = ?");
        let by_text = conn
            .fetch_one(select.replace('?', "1").as_str())
            .await
            .unwrap();
        let prepared = sqlx::query(&select)
            .bind(2)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        let values = sqlx_values(&by_text);
        assert_eq!(values, sqlx_values(&prepared));
        let expected = [
            "Some(-128)",
            "Some(-32768)",
            "Some(-8388608)",
            "Some(-2147483648)",
            "Some(-9223372036854775808)",
            "Some(18446744073709551615)",
            "Some(-12345678901234.123456)",
            "Some(1.5)",
            "Some(-2.25)",
            "Some(\"fixed\")",
            "Some(\"variable ü\")",
            "Some(\"some text\")",
            "Some([0, 255, 16])",
            "Some([190, 239])",
            "Some(2024-02-29)",
            "Some(2024-02-29T13:14:15.123456)",
            "Some(2001-02-03T04:05:06Z)",
        ];
        assert_eq!(values[..expected.len()], expected);
        assert!(
            values[17].contains("Negative") && values[17].contains("838"),
            "{}",
            values[17]
        );
        assert_eq!(values[18..20], ["Some(2155)", "Some(90)"]);
        assert!(
            values[20].contains("\"a\": Array [Number(1), Number(2)]"),
            "{}",
            values[20]
        );
        assert_eq!(values[21..], ["Some(\"large\")", "Some(\"x,z\")"]);
        let nulls = sqlx_values(
            &conn
                .fetch_one(select.replace('?', "3").as_str())
                .await
                .unwrap(),
        );
        let mut expected_nulls = vec!["None".to_string(); 23];
        expected_nulls[10] = "Some(\"\")".into();
        assert_eq!(nulls, expected_nulls);

        // Column metadata, as sqlx names the types.
        let types: Vec<(String, String)> = prepared
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.type_info().name().to_string()))
            .collect();
        for (name, ty) in [
            ("id", "INT"),
            ("ubi", "BIGINT UNSIGNED"),
            ("de", "DECIMAL"),
            ("tx", "TEXT"),
            ("bl", "BLOB"),
            ("vb", "VARBINARY"),
            ("j", "JSON"),
            ("e", "ENUM"),
        ] {
            assert!(
                types.contains(&(name.to_string(), ty.to_string())),
                "{name} {ty}: {types:?}"
            );
        }

        // A large value both ways.
        conn.execute("ALTER TABLE every_type ADD COLUMN big LONGBLOB")
            .await
            .unwrap();
        let big: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        sqlx::query("UPDATE every_type SET big = ? WHERE id = 3")
            .bind(&big)
            .execute(&mut conn)
            .await
            .unwrap();
        let back: Vec<u8> = sqlx::query_scalar("SELECT big FROM every_type WHERE id = ?")
            .bind(3)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert!(back == big, "1 MiB LONGBLOB");

        // A rolled-back transaction leaves nothing.
        let mut tx = conn.begin().await.unwrap();
        sqlx::query("UPDATE every_type SET ti = ? WHERE id = 3")
            .bind(7)
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.rollback().await.unwrap();
        let ti: Option<i8> = sqlx::query_scalar("SELECT ti FROM every_type WHERE id = 3")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(ti, None);

        // An error carries MySQL's number and SQLSTATE; the connection goes on.
        let error = sqlx::query("INSERT INTO every_type (id) VALUES (?)")
            .bind(2)
            .execute(&mut conn)
            .await
            .unwrap_err();
        let database_error = error.as_database_error().expect("a server error");
        assert_eq!(database_error.code().as_deref(), Some("23000"));
        let number = database_error
            .try_downcast_ref::<MySqlDatabaseError>()
            .map(|e| e.number());
        assert_eq!(number, Some(1062));

        // Several result sets from one text, as sqlx reads them: the rows of each in turn.
        let rows = conn.fetch_all("SELECT 1; SELECT 2, 3").await.unwrap();
        let firsts: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(firsts, [1, 2]);
        conn.execute(format!("DROP DATABASE {database}").as_str())
            .await
            .unwrap();
        conn.close().await.unwrap();
    });
}

#[test]
fn rust_drivers_with_default_options_on_the_playground() {
    let playground = Playground::start();
    let socket = playground.data_dir.join("mysql.sock");
    exercise_mysql("127.0.0.1", playground.port, "sync_ip", Some(&socket));
    exercise_mysql("localhost", playground.port, "sync_name", Some(&socket));
    exercise_mysql_async("127.0.0.1", playground.port, "async_ip", Some(&socket));
    exercise_mysql_async("localhost", playground.port, "async_name", Some(&socket));
    exercise_sqlx("127.0.0.1", playground.port, "sqlx_ip");
    exercise_sqlx("localhost", playground.port, "sqlx_name");
}

#[test]
fn rust_drivers_with_default_options_on_every_sql_node_of_a_cluster() {
    let cluster = Cluster::start(3, 2);
    for (n, node) in cluster.sql.iter().enumerate() {
        exercise_mysql("127.0.0.1", node.port, &format!("sync_{n}"), None);
        exercise_mysql_async("localhost", node.port, &format!("async_{n}"), None);
        exercise_sqlx("127.0.0.1", node.port, &format!("sqlx_{n}"));
    }
}
