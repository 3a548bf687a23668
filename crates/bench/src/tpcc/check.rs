//! `strata bench tpcc check`: the consistency conditions of TPC-C clause 3.3.2.1–3.3.2.12, all
//! read in one snapshot.
//!
//! Every condition is one or two queries per warehouse that return the rows breaking it, so a
//! condition passes when its queries return nothing. The queries are decorrelated: per-group
//! sums and counts are derived tables (`(SELECT … GROUP BY …) AS x`) joined with LEFT JOIN,
//! and `COALESCE(x.sum, 0)` stands for a group without rows. That is what makes the checks of
//! customers (3.3.2.10 and 3.3.2.12) include customers without any delivered order line, whom
//! an inner join would skip.
//!
//! 3.3.2.11 (`count(orders) − count(new_order) = 2100`) holds only until the first Delivery,
//! so it runs only with `--check-all`. Before the conditions, a population check makes sure
//! warehouses 1..=N and their ten districts exist, since a missing warehouse would otherwise
//! pass every condition with no rows.
//!
//! SQL features the queries need: derived tables with GROUP BY and aggregates (SUM, COUNT,
//! MIN, MAX), LEFT JOIN and inner JOIN on equalities of several columns, COALESCE, IS NULL,
//! IS NOT NULL, arithmetic and `<>` on DECIMAL and INT, AND/OR.

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row, Value};

use super::{connect_or_explain, runtime, server_code, TpccError, DISTRICTS_PER_WAREHOUSE};
use crate::client::Target;

/// Offending rows printed per condition.
pub const EXAMPLES_PER_CONDITION: usize = 10;

/// What `check` verifies.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    pub target: Target,
    pub warehouses: u32,
    /// Also check 3.3.2.11, which holds only right after the load.
    pub all: bool,
}

/// One consistency condition.
struct Condition {
    id: &'static str,
    rule: &'static str,
    /// Whether it holds only right after the load (3.3.2.11).
    only_after_load: bool,
    /// The queries for warehouse `w` that return offending rows.
    queries: fn(u32) -> Vec<String>,
}

/// The outcome of one condition.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConditionReport {
    pub id: String,
    pub rule: String,
    /// Offending rows over all warehouses.
    pub offending_rows: u64,
    /// The first few offending rows, as `column=value` lists.
    pub examples: Vec<String>,
    /// A query that failed, with the server's message.
    pub error: Option<String>,
}

impl ConditionReport {
    /// Whether the condition holds.
    pub fn passed(&self) -> bool {
        self.offending_rows == 0 && self.error.is_none()
    }
}

/// Runs the checks in one snapshot and prints each outcome. Returns the reports (the caller
/// fails when one did not pass) or an error when the server could not be reached at all.
pub fn check(config: &CheckConfig) -> Result<Vec<ConditionReport>, TpccError> {
    if config.warehouses == 0 {
        return Err(TpccError("--warehouses must be at least 1".into()));
    }
    runtime(1)?.block_on(async {
        let mut conn = connect_or_explain(&config.target).await?;
        begin_snapshot(&mut conn).await?;
        let mut reports = vec![population(&mut conn, config.warehouses).await];
        print_report(&reports[0]);
        for condition in conditions() {
            if condition.only_after_load && !config.all {
                println!(
                    "{:<9} {:<58} skipped (only with --check-all)",
                    condition.id, condition.rule
                );
                continue;
            }
            let report = run_condition(&mut conn, &condition, config.warehouses).await;
            print_report(&report);
            reports.push(report);
        }
        let _ = conn.query_drop("COMMIT").await;
        let _ = conn.disconnect().await;
        Ok(reports)
    })
}

/// Opens a repeatable-read transaction whose snapshot is taken at once. A server without
/// `WITH CONSISTENT SNAPSHOT` gets a plain START TRANSACTION, whose snapshot its first read
/// takes (the same thing for a read-only transaction).
async fn begin_snapshot(conn: &mut Conn) -> Result<(), TpccError> {
    if let Err(e) = conn
        .query_drop("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .await
    {
        eprintln!(
            "strata bench tpcc: SET TRANSACTION ISOLATION LEVEL REPEATABLE READ failed ({e}); \
             checking with the server's default isolation"
        );
    }
    match conn
        .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if server_code(&e).is_some() => {
            eprintln!(
                "strata bench tpcc: START TRANSACTION WITH CONSISTENT SNAPSHOT failed ({e}); \
                 using START TRANSACTION"
            );
            super::query_drop(conn, "START TRANSACTION").await
        }
        Err(e) => Err(TpccError(format!("START TRANSACTION: {e}"))),
    }
}

/// Warehouses 1..=N and their districts exist.
async fn population(conn: &mut Conn, warehouses: u32) -> ConditionReport {
    let mut report = ConditionReport {
        id: "load".into(),
        rule: format!("warehouses 1..={warehouses} and their districts exist"),
        ..Default::default()
    };
    let expected = [
        (
            format!("SELECT COUNT(*) FROM warehouse WHERE w_id >= 1 AND w_id <= {warehouses}"),
            u64::from(warehouses),
            "warehouses",
        ),
        (
            format!("SELECT COUNT(*) FROM district WHERE d_w_id >= 1 AND d_w_id <= {warehouses}"),
            u64::from(warehouses * DISTRICTS_PER_WAREHOUSE),
            "districts",
        ),
    ];
    for (sql, want, what) in expected {
        match conn.query_first::<u64, _>(sql.as_str()).await {
            Ok(got) if got == Some(want) => {}
            Ok(got) => {
                report.offending_rows += 1;
                report.examples.push(format!(
                    "{what}: found {}, expected {want}",
                    got.unwrap_or(0)
                ));
            }
            Err(e) => {
                report.error.get_or_insert(format!("{sql}: {e}"));
            }
        }
    }
    report
}

async fn run_condition(conn: &mut Conn, condition: &Condition, warehouses: u32) -> ConditionReport {
    let mut report = ConditionReport {
        id: condition.id.to_string(),
        rule: condition.rule.to_string(),
        ..Default::default()
    };
    for w in 1..=warehouses {
        for sql in (condition.queries)(w) {
            match conn.query::<Row, _>(sql.as_str()).await {
                Ok(rows) => {
                    report.offending_rows += rows.len() as u64;
                    for row in rows {
                        if report.examples.len() < EXAMPLES_PER_CONDITION {
                            report.examples.push(format!("w_id={w} {}", describe(&row)));
                        }
                    }
                }
                Err(e) => {
                    report.error = Some(format!("{sql}: {e}"));
                    return report;
                }
            }
        }
    }
    report
}

fn print_report(report: &ConditionReport) {
    let verdict = match (&report.error, report.offending_rows) {
        (Some(_), _) => "ERROR".to_string(),
        (None, 0) => "pass".to_string(),
        (None, 1) => "FAIL (1 offending row)".to_string(),
        (None, n) => format!("FAIL ({n} offending rows)"),
    };
    println!("{:<9} {:<58} {verdict}", report.id, report.rule);
    if let Some(error) = &report.error {
        println!("    {error}");
    }
    for example in &report.examples {
        println!("    {example}");
    }
    if report.offending_rows > report.examples.len() as u64 && report.examples.len() > 1 {
        println!(
            "    … and {} more",
            report.offending_rows - report.examples.len() as u64
        );
    }
}

/// `column=value` for every column of `row`.
fn describe(row: &Row) -> String {
    row.columns_ref()
        .iter()
        .enumerate()
        .map(|(index, column)| {
            let value = row.as_ref(index).map_or("?".to_string(), show);
            format!("{}={value}", column.name_str())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn show(value: &Value) -> String {
    match value {
        Value::NULL => "NULL".to_string(),
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Float(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        other => other.as_sql(false),
    }
}

/// The conditions in clause order.
fn conditions() -> Vec<Condition> {
    vec![
        Condition {
            id: "3.3.2.1",
            rule: "W_YTD = sum(D_YTD)",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                "SELECT w.w_id, w.w_ytd, COALESCE(d.sum_d_ytd, 0) AS sum_d_ytd FROM warehouse w \
                 LEFT JOIN (SELECT d_w_id, SUM(d_ytd) AS sum_d_ytd FROM district WHERE d_w_id = {w} \
                 GROUP BY d_w_id) d ON d.d_w_id = w.w_id \
                 WHERE w.w_id = {w} AND w.w_ytd <> COALESCE(d.sum_d_ytd, 0)"
            )]
            },
        },
        Condition {
            id: "3.3.2.2",
            rule: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
            only_after_load: false,
            // max(NO_O_ID) is not compared in a district without new orders (the clause
            // exempts it): COALESCE makes that side equal.
            queries: |w| {
                vec![format!(
                    "SELECT d.d_id, d.d_next_o_id, o.max_o_id, n.max_no_o_id FROM district d \
                 LEFT JOIN (SELECT o_d_id, MAX(o_id) AS max_o_id FROM orders WHERE o_w_id = {w} \
                 GROUP BY o_d_id) o ON o.o_d_id = d.d_id \
                 LEFT JOIN (SELECT no_d_id, MAX(no_o_id) AS max_no_o_id FROM new_order \
                 WHERE no_w_id = {w} GROUP BY no_d_id) n ON n.no_d_id = d.d_id \
                 WHERE d.d_w_id = {w} AND (d.d_next_o_id - 1 <> COALESCE(o.max_o_id, 0) \
                 OR d.d_next_o_id - 1 <> COALESCE(n.max_no_o_id, d.d_next_o_id - 1))"
                )]
            },
        },
        Condition {
            id: "3.3.2.3",
            rule: "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW_ORDER)",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                    "SELECT n.no_d_id, n.min_no_o_id, n.max_no_o_id, n.new_orders FROM \
                 (SELECT no_d_id, MIN(no_o_id) AS min_no_o_id, MAX(no_o_id) AS max_no_o_id, \
                 COUNT(*) AS new_orders FROM new_order WHERE no_w_id = {w} GROUP BY no_d_id) n \
                 WHERE n.max_no_o_id - n.min_no_o_id + 1 <> n.new_orders"
                )]
            },
        },
        Condition {
            id: "3.3.2.4",
            rule: "sum(O_OL_CNT) = count(ORDER_LINE) per district",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                "SELECT d.d_id, COALESCE(o.sum_o_ol_cnt, 0) AS sum_o_ol_cnt, \
                 COALESCE(l.order_lines, 0) AS order_lines FROM district d \
                 LEFT JOIN (SELECT o_d_id, SUM(o_ol_cnt) AS sum_o_ol_cnt FROM orders \
                 WHERE o_w_id = {w} GROUP BY o_d_id) o ON o.o_d_id = d.d_id \
                 LEFT JOIN (SELECT ol_d_id, COUNT(*) AS order_lines FROM order_line \
                 WHERE ol_w_id = {w} GROUP BY ol_d_id) l ON l.ol_d_id = d.d_id \
                 WHERE d.d_w_id = {w} AND COALESCE(o.sum_o_ol_cnt, 0) <> COALESCE(l.order_lines, 0)"
            )]
            },
        },
        Condition {
            id: "3.3.2.5",
            rule: "O_CARRIER_ID IS NULL <=> a NEW_ORDER row exists",
            only_after_load: false,
            queries: |w| {
                vec![
                    format!(
                        "SELECT o.o_d_id, o.o_id, o.o_carrier_id, n.no_o_id FROM orders o \
                     LEFT JOIN new_order n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id \
                     AND n.no_o_id = o.o_id WHERE o.o_w_id = {w} AND \
                     ((o.o_carrier_id IS NULL AND n.no_o_id IS NULL) \
                     OR (o.o_carrier_id IS NOT NULL AND n.no_o_id IS NOT NULL))"
                    ),
                    // A new order must belong to an order.
                    format!(
                        "SELECT n.no_d_id, n.no_o_id, o.o_id FROM new_order n LEFT JOIN orders o \
                     ON o.o_w_id = n.no_w_id AND o.o_d_id = n.no_d_id AND o.o_id = n.no_o_id \
                     WHERE n.no_w_id = {w} AND o.o_id IS NULL"
                    ),
                ]
            },
        },
        Condition {
            id: "3.3.2.6",
            rule: "O_OL_CNT = count(ORDER_LINE) per order",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                "SELECT o.o_d_id, o.o_id, o.o_ol_cnt, COALESCE(l.order_lines, 0) AS order_lines \
                 FROM orders o LEFT JOIN (SELECT ol_d_id, ol_o_id, COUNT(*) AS order_lines \
                 FROM order_line WHERE ol_w_id = {w} GROUP BY ol_d_id, ol_o_id) l \
                 ON l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id \
                 WHERE o.o_w_id = {w} AND o.o_ol_cnt <> COALESCE(l.order_lines, 0)"
            )]
            },
        },
        Condition {
            id: "3.3.2.7",
            rule: "OL_DELIVERY_D IS NULL <=> O_CARRIER_ID IS NULL",
            only_after_load: false,
            // An order line without an order breaks it too.
            queries: |w| {
                vec![format!(
                "SELECT l.ol_d_id, l.ol_o_id, l.ol_number, l.ol_delivery_d, o.o_id, o.o_carrier_id \
                 FROM order_line l LEFT JOIN orders o ON o.o_w_id = l.ol_w_id \
                 AND o.o_d_id = l.ol_d_id AND o.o_id = l.ol_o_id WHERE l.ol_w_id = {w} AND \
                 (o.o_id IS NULL OR (l.ol_delivery_d IS NULL AND o.o_carrier_id IS NOT NULL) \
                 OR (l.ol_delivery_d IS NOT NULL AND o.o_carrier_id IS NULL))"
            )]
            },
        },
        Condition {
            id: "3.3.2.8",
            rule: "W_YTD = sum(H_AMOUNT)",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                    "SELECT w.w_id, w.w_ytd, COALESCE(h.sum_h_amount, 0) AS sum_h_amount \
                 FROM warehouse w LEFT JOIN (SELECT h_w_id, SUM(h_amount) AS sum_h_amount \
                 FROM history WHERE h_w_id = {w} GROUP BY h_w_id) h ON h.h_w_id = w.w_id \
                 WHERE w.w_id = {w} AND w.w_ytd <> COALESCE(h.sum_h_amount, 0)"
                )]
            },
        },
        Condition {
            id: "3.3.2.9",
            rule: "D_YTD = sum(H_AMOUNT) per district",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                    "SELECT d.d_id, d.d_ytd, COALESCE(h.sum_h_amount, 0) AS sum_h_amount \
                 FROM district d LEFT JOIN (SELECT h_d_id, SUM(h_amount) AS sum_h_amount \
                 FROM history WHERE h_w_id = {w} GROUP BY h_d_id) h ON h.h_d_id = d.d_id \
                 WHERE d.d_w_id = {w} AND d.d_ytd <> COALESCE(h.sum_h_amount, 0)"
                )]
            },
        },
        Condition {
            id: "3.3.2.10",
            rule: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                "SELECT c.c_d_id, c.c_id, c.c_balance, COALESCE(dl.delivered, 0) AS delivered, \
                 COALESCE(h.paid, 0) AS paid FROM customer c \
                 LEFT JOIN ({}) dl ON dl.o_d_id = c.c_d_id AND dl.o_c_id = c.c_id \
                 LEFT JOIN (SELECT h_c_d_id, h_c_id, SUM(h_amount) AS paid FROM history \
                 WHERE h_c_w_id = {w} GROUP BY h_c_d_id, h_c_id) h \
                 ON h.h_c_d_id = c.c_d_id AND h.h_c_id = c.c_id \
                 WHERE c.c_w_id = {w} AND c.c_balance <> COALESCE(dl.delivered, 0) - COALESCE(h.paid, 0)",
                delivered_per_customer(w)
            )]
            },
        },
        Condition {
            id: "3.3.2.11",
            rule: "count(ORDERS) - count(NEW_ORDER) = 2100 per district",
            only_after_load: true,
            queries: |w| {
                vec![format!(
                "SELECT d.d_id, COALESCE(o.order_count, 0) AS order_count, \
                 COALESCE(n.new_orders, 0) AS new_orders FROM district d \
                 LEFT JOIN (SELECT o_d_id, COUNT(*) AS order_count FROM orders WHERE o_w_id = {w} \
                 GROUP BY o_d_id) o ON o.o_d_id = d.d_id \
                 LEFT JOIN (SELECT no_d_id, COUNT(*) AS new_orders FROM new_order \
                 WHERE no_w_id = {w} GROUP BY no_d_id) n ON n.no_d_id = d.d_id \
                 WHERE d.d_w_id = {w} AND COALESCE(o.order_count, 0) - COALESCE(n.new_orders, 0) <> 2100"
            )]
            },
        },
        Condition {
            id: "3.3.2.12",
            rule: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
            only_after_load: false,
            queries: |w| {
                vec![format!(
                "SELECT c.c_d_id, c.c_id, c.c_balance, c.c_ytd_payment, \
                 COALESCE(dl.delivered, 0) AS delivered FROM customer c \
                 LEFT JOIN ({}) dl ON dl.o_d_id = c.c_d_id AND dl.o_c_id = c.c_id \
                 WHERE c.c_w_id = {w} AND c.c_balance + c.c_ytd_payment <> COALESCE(dl.delivered, 0)",
                delivered_per_customer(w)
            )]
            },
        },
    ]
}

/// The sum of delivered order-line amounts per customer of warehouse `w` (customers without
/// a delivered line have no row).
fn delivered_per_customer(w: u32) -> String {
    format!(
        "SELECT o.o_d_id, o.o_c_id, SUM(l.ol_amount) AS delivered FROM orders o \
         JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id \
         WHERE o.o_w_id = {w} AND l.ol_delivery_d IS NOT NULL GROUP BY o.o_d_id, o.o_c_id"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_conditions_in_clause_order() {
        let all = conditions();
        let ids: Vec<&str> = all.iter().map(|c| c.id).collect();
        let expected: Vec<String> = (1..=12).map(|n| format!("3.3.2.{n}")).collect();
        assert_eq!(ids, expected);
        let after_load: Vec<&str> = all
            .iter()
            .filter(|c| c.only_after_load)
            .map(|c| c.id)
            .collect();
        assert_eq!(after_load, ["3.3.2.11"]);
        for condition in &all {
            for sql in (condition.queries)(7) {
                assert!(sql.contains("= 7"), "{sql}");
                assert!(!sql.contains("{w}") && !sql.contains("  "), "{sql}");
                let opened = sql.matches('(').count();
                assert_eq!(opened, sql.matches(')').count(), "{sql}");
            }
        }
    }

    #[test]
    fn customer_checks_keep_customers_without_deliveries() {
        // The customer table drives both queries through LEFT JOINs, and the missing sums
        // count as 0: an inner join would drop such customers.
        for id in ["3.3.2.10", "3.3.2.12"] {
            let condition = conditions().into_iter().find(|c| c.id == id).unwrap();
            let sql = &(condition.queries)(1)[0];
            assert!(sql.starts_with("SELECT c.c_d_id"), "{sql}");
            assert!(sql.contains("FROM customer c LEFT JOIN ("), "{sql}");
            assert!(sql.contains("COALESCE(dl.delivered, 0)"), "{sql}");
        }
    }

    #[test]
    fn reports_pass_only_without_rows_and_errors() {
        let mut report = ConditionReport::default();
        assert!(report.passed());
        report.offending_rows = 1;
        assert!(!report.passed());
        let failed = ConditionReport {
            error: Some("syntax".into()),
            ..Default::default()
        };
        assert!(!failed.passed());
    }
}
