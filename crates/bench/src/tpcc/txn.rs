//! The five TPC-C transactions with go-tpc's SQL, as server-side prepared statements.
//!
//! Each transaction is two parts: its input, drawn from the worker's generator by a pure
//! function (testable without a server), and its execution on one connection between a text
//! `START TRANSACTION` and a text `COMMIT` (or `ROLLBACK` on error, and for the 1% of
//! New-Orders with an unused item, which count as successes as in go-tpc).
//!
//! [`Statements`] holds the 63 statements one connection prepares: 6 fixed New-Order
//! statements plus 11 variants (5..=15 lines) of the item SELECT, the stock SELECT and the
//! order-line INSERT, 10 Payment, 5 Order-Status, 7 Delivery and 2 Stock-Level statements.

use std::collections::HashMap;

use mysql_async::prelude::{FromValue, Queryable};
use mysql_async::{Conn, Params, Row, Statement, Value};

use super::input::{
    CustomerKey, DeliveryInput, NewOrderInput, OrderStatusInput, PaymentInput, StockLevelInput,
    TransactionInput, MAX_LINES, MIN_LINES,
};
use super::DISTRICTS_PER_WAREHOUSE;

/// Error codes of lock conflicts: MySQL deadlock (1213) and lock wait timeout (1205), TiDB's
/// "can not retry select for update" (8002) and TiKV's write conflict (9007).
pub const CONFLICT_CODES: [u16; 4] = [1213, 1205, 8002, 9007];

const NEW_ORDER_SELECT_CUSTOMER: &str = "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?";
const NEW_ORDER_SELECT_DISTRICT: &str =
    "SELECT d_next_o_id, d_tax FROM district WHERE d_id = ? AND d_w_id = ? FOR UPDATE";
const NEW_ORDER_UPDATE_DISTRICT: &str =
    "UPDATE district SET d_next_o_id = ? + 1 WHERE d_id = ? AND d_w_id = ?";
const NEW_ORDER_INSERT_ORDER: &str = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, ?, ?)";
const NEW_ORDER_INSERT_NEW_ORDER: &str =
    "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
const NEW_ORDER_UPDATE_STOCK: &str = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?";

const PAYMENT_UPDATE_DISTRICT: &str =
    "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?";
const PAYMENT_SELECT_DISTRICT: &str = "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?";
const PAYMENT_UPDATE_WAREHOUSE: &str = "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?";
const PAYMENT_SELECT_WAREHOUSE: &str =
    "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?";
const PAYMENT_SELECT_CUSTOMERS_BY_LAST: &str =
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
const PAYMENT_SELECT_CUSTOMER_FOR_UPDATE: &str = "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE";
const PAYMENT_UPDATE_CUSTOMER: &str = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const PAYMENT_SELECT_CUSTOMER_DATA: &str =
    "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const PAYMENT_UPDATE_CUSTOMER_WITH_DATA: &str = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const PAYMENT_INSERT_HISTORY: &str = "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

const ORDER_STATUS_COUNT_BY_LAST: &str =
    "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?";
const ORDER_STATUS_SELECT_BY_LAST: &str = "SELECT c_balance, c_first, c_middle, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
const ORDER_STATUS_SELECT_BY_ID: &str = "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const ORDER_STATUS_LATEST_ORDER: &str = "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1";
const ORDER_STATUS_ORDER_LINES: &str = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";

const DELIVERY_SELECT_NEW_ORDER: &str = "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE";
const DELIVERY_UPDATE_CUSTOMER: &str = "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";

const STOCK_LEVEL_SELECT_DISTRICT: &str =
    "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?";
const STOCK_LEVEL_COUNT: &str = "SELECT /*+ TIDB_INLJ(order_line,stock) */ COUNT(DISTINCT (s_i_id)) stock_count FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? - 20 AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?";

/// How a transaction that did not fail ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// The New-Order with an unused item, rolled back on purpose.
    RolledBack,
}

/// Why a transaction failed.
#[derive(Debug)]
pub enum TxnError {
    /// A statement failed.
    Sql {
        statement: String,
        error: mysql_async::Error,
    },
    /// The data is not what TPC-C promises (a missing customer, item or order).
    Data(String),
}

impl TxnError {
    /// Whether this is a lock conflict (deadlock, lock wait timeout, write conflict).
    pub fn is_conflict(&self) -> bool {
        matches!(self, TxnError::Sql { error: mysql_async::Error::Server(e), .. }
            if CONFLICT_CODES.contains(&e.code))
    }

    /// Whether the connection may be unusable (the error did not come from the server).
    pub fn connection_lost(&self) -> bool {
        matches!(
            self,
            TxnError::Sql {
                error: mysql_async::Error::Io(_) | mysql_async::Error::Driver(_),
                ..
            }
        )
    }
}

impl std::fmt::Display for TxnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TxnError::Sql { statement, error } => {
                let short: String = statement.chars().take(120).collect();
                let ellipsis = if short.len() < statement.len() {
                    "…"
                } else {
                    ""
                };
                write!(f, "{short}{ellipsis}: {error}")
            }
            TxnError::Data(message) => f.write_str(message),
        }
    }
}

/// A prepared statement and its text (for error messages).
struct Prepared {
    sql: String,
    statement: Statement,
}

/// Every statement a worker runs, prepared on its connection.
pub struct Statements {
    by_sql: HashMap<String, Prepared>,
}

impl Statements {
    /// Prepares all 63 statements on `conn`.
    pub async fn prepare(conn: &mut Conn) -> Result<Statements, TxnError> {
        let mut by_sql = HashMap::new();
        for sql in all_statements() {
            let statement = conn
                .prep(sql.as_str())
                .await
                .map_err(|error| TxnError::Sql {
                    statement: format!("PREPARE {sql}"),
                    error,
                })?;
            by_sql.insert(sql.clone(), Prepared { sql, statement });
        }
        Ok(Statements { by_sql })
    }

    fn get(&self, sql: &str) -> &Prepared {
        self.by_sql
            .get(sql)
            .unwrap_or_else(|| panic!("statement not prepared: {sql}"))
    }
}

/// The SQL of every prepared statement, New-Order variants included.
fn all_statements() -> Vec<String> {
    let mut all: Vec<String> = [
        NEW_ORDER_SELECT_CUSTOMER,
        NEW_ORDER_SELECT_DISTRICT,
        NEW_ORDER_UPDATE_DISTRICT,
        NEW_ORDER_INSERT_ORDER,
        NEW_ORDER_INSERT_NEW_ORDER,
        NEW_ORDER_UPDATE_STOCK,
        PAYMENT_UPDATE_DISTRICT,
        PAYMENT_SELECT_DISTRICT,
        PAYMENT_UPDATE_WAREHOUSE,
        PAYMENT_SELECT_WAREHOUSE,
        PAYMENT_SELECT_CUSTOMERS_BY_LAST,
        PAYMENT_SELECT_CUSTOMER_FOR_UPDATE,
        PAYMENT_UPDATE_CUSTOMER,
        PAYMENT_SELECT_CUSTOMER_DATA,
        PAYMENT_UPDATE_CUSTOMER_WITH_DATA,
        PAYMENT_INSERT_HISTORY,
        ORDER_STATUS_COUNT_BY_LAST,
        ORDER_STATUS_SELECT_BY_LAST,
        ORDER_STATUS_SELECT_BY_ID,
        ORDER_STATUS_LATEST_ORDER,
        ORDER_STATUS_ORDER_LINES,
        DELIVERY_SELECT_NEW_ORDER,
        DELIVERY_UPDATE_CUSTOMER,
        STOCK_LEVEL_SELECT_DISTRICT,
        STOCK_LEVEL_COUNT,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for lines in MIN_LINES..=MAX_LINES {
        all.push(select_items_sql(lines));
        all.push(select_stock_sql(lines));
        all.push(insert_order_lines_sql(lines));
    }
    all.extend(delivery_statements());
    all
}

fn select_items_sql(lines: usize) -> String {
    format!(
        "SELECT i_price, i_name, i_data, i_id FROM item WHERE i_id IN ({})",
        vec!["?"; lines].join(",")
    )
}

fn select_stock_sql(lines: usize) -> String {
    let dists: Vec<String> = (1..=10).map(|i| format!("s_dist_{i:02}")).collect();
    format!(
        "SELECT s_i_id, s_quantity, s_data, {} FROM stock WHERE (s_w_id, s_i_id) IN ({}) FOR UPDATE",
        dists.join(", "),
        vec!["(?,?)"; lines].join(",")
    )
}

fn insert_order_lines_sql(lines: usize) -> String {
    format!(
        "INSERT into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES {}",
        vec!["(?,?,?,?,?,?,?,?,?)"; lines].join(",")
    )
}

/// The five Delivery statements over the ten (w_id, d_id, o_id) tuples, in execution order:
/// delete new orders, set carriers, read customers, stamp order lines, sum amounts.
fn delivery_statements() -> [String; 5] {
    let tuples = vec!["(?,?,?)"; DISTRICTS_PER_WAREHOUSE as usize].join(",");
    [
        format!("DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ({tuples})"),
        format!("UPDATE orders SET o_carrier_id = ? WHERE (o_w_id, o_d_id, o_id) IN ({tuples})"),
        format!("SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN ({tuples})"),
        format!(
            "UPDATE order_line SET ol_delivery_d = ? WHERE (ol_w_id, ol_d_id, ol_o_id) IN ({tuples})"
        ),
        format!(
            "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ({tuples}) GROUP BY ol_d_id"
        ),
    ]
}

/// Runs one transaction between START TRANSACTION and COMMIT; on error it sends ROLLBACK
/// (whose own failure is ignored: the first error counts).
pub async fn run_transaction(
    conn: &mut Conn,
    statements: &Statements,
    input: TransactionInput,
) -> Result<Outcome, TxnError> {
    text(conn, "START TRANSACTION").await?;
    let mut tx = Tx { conn, statements };
    let body = match input {
        TransactionInput::NewOrder(input) => tx.new_order(input).await,
        TransactionInput::Payment(input) => tx.payment(input).await,
        TransactionInput::OrderStatus(input) => tx.order_status(input).await,
        TransactionInput::Delivery(input) => tx.delivery(input).await,
        TransactionInput::StockLevel(input) => tx.stock_level(input).await,
    };
    match body {
        Ok(Outcome::Committed) => text(tx.conn, "COMMIT").await.map(|()| Outcome::Committed),
        Ok(Outcome::RolledBack) => text(tx.conn, "ROLLBACK")
            .await
            .map(|()| Outcome::RolledBack),
        Err(e) => {
            let _ = tx.conn.query_drop("ROLLBACK").await;
            Err(e)
        }
    }
}

async fn text(conn: &mut Conn, sql: &str) -> Result<(), TxnError> {
    conn.query_drop(sql).await.map_err(|error| TxnError::Sql {
        statement: sql.to_string(),
        error,
    })
}

/// Now as the DATETIME string go-tpc sends.
fn now_string() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string()
}

/// Reads column `index` of `row`.
fn column<T: FromValue>(row: &Row, index: usize, what: &str) -> Result<T, TxnError> {
    match row.get_opt::<T, usize>(index) {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => Err(TxnError::Data(format!("{what}: unexpected value {e:?}"))),
        None => Err(TxnError::Data(format!("{what}: column {index} missing"))),
    }
}

fn int(value: impl Into<i64>) -> Value {
    Value::Int(value.into())
}

/// An open transaction on one connection.
struct Tx<'a> {
    conn: &'a mut Conn,
    statements: &'a Statements,
}

impl Tx<'_> {
    async fn rows(&mut self, sql: &str, params: Vec<Value>) -> Result<Vec<Row>, TxnError> {
        let prepared = self.statements.get(sql);
        self.conn
            .exec(&prepared.statement, Params::Positional(params))
            .await
            .map_err(|error| TxnError::Sql {
                statement: prepared.sql.clone(),
                error,
            })
    }

    async fn row(&mut self, sql: &str, params: Vec<Value>, what: &str) -> Result<Row, TxnError> {
        self.rows(sql, params)
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| TxnError::Data(format!("{what} not found")))
    }

    async fn exec(&mut self, sql: &str, params: Vec<Value>) -> Result<(), TxnError> {
        let prepared = self.statements.get(sql);
        self.conn
            .exec_drop(&prepared.statement, Params::Positional(params))
            .await
            .map_err(|error| TxnError::Sql {
                statement: prepared.sql.clone(),
                error,
            })
    }

    async fn new_order(&mut self, input: NewOrderInput) -> Result<Outcome, TxnError> {
        let (w, d, c) = (input.w_id, input.d_id, input.c_id);
        let what = format!("customer ({w}, {d}, {c})");
        let row = self
            .row(
                NEW_ORDER_SELECT_CUSTOMER,
                vec![int(w), int(d), int(c)],
                &what,
            )
            .await?;
        let c_discount: f64 = column(&row, 0, "c_discount")?;
        let w_tax: f64 = column(&row, 3, "w_tax")?;
        let what = format!("district ({w}, {d})");
        let row = self
            .row(NEW_ORDER_SELECT_DISTRICT, vec![int(d), int(w)], &what)
            .await?;
        let o_id: i64 = column(&row, 0, "d_next_o_id")?;
        let d_tax: f64 = column(&row, 1, "d_tax")?;
        self.exec(NEW_ORDER_UPDATE_DISTRICT, vec![int(o_id), int(d), int(w)])
            .await?;
        let count = input.lines.len();
        let order = vec![
            int(o_id),
            int(d),
            int(w),
            int(c),
            Value::from(now_string()),
            int(count as i64),
            int(i64::from(input.all_local())),
        ];
        self.exec(NEW_ORDER_INSERT_ORDER, order).await?;
        self.exec(NEW_ORDER_INSERT_NEW_ORDER, vec![int(o_id), int(d), int(w)])
            .await?;

        let ids: Vec<Value> = input.lines.iter().map(|l| int(l.i_id)).collect();
        let mut prices: HashMap<i64, f64> = HashMap::new();
        for row in self.rows(&select_items_sql(count), ids).await? {
            prices.insert(column(&row, 3, "i_id")?, column(&row, 0, "i_price")?);
        }
        if let Some(missing) = input.lines.iter().find(|l| !prices.contains_key(&l.i_id)) {
            if missing.i_id == -1 {
                return Ok(Outcome::RolledBack);
            }
            return Err(TxnError::Data(format!("item {} not found", missing.i_id)));
        }

        let pairs: Vec<Value> = input
            .lines
            .iter()
            .flat_map(|l| [int(w), int(l.i_id)])
            .collect();
        let mut stock: HashMap<i64, (i64, String)> = HashMap::new();
        for row in self.rows(&select_stock_sql(count), pairs).await? {
            let dist: String = column(&row, 2 + d as usize, "s_dist")?;
            stock.insert(
                column(&row, 0, "s_i_id")?,
                (column(&row, 1, "s_quantity")?, dist),
            );
        }
        let mut lines = Vec::with_capacity(count * 9);
        for (number, line) in input.lines.iter().enumerate() {
            let Some((quantity, dist)) = stock.get(&line.i_id) else {
                return Err(TxnError::Data(format!(
                    "stock ({w}, {}) not found",
                    line.i_id
                )));
            };
            let ordered = i64::from(line.quantity);
            let mut left = quantity - ordered;
            if left < 10 {
                left += 91;
            }
            let remote = i64::from(line.supply_w_id != w);
            let update = vec![int(left), int(ordered), int(remote), int(line.i_id), int(w)];
            self.exec(NEW_ORDER_UPDATE_STOCK, update).await?;
            let amount =
                ordered as f64 * prices[&line.i_id] * (1.0 + w_tax + d_tax) * (1.0 - c_discount);
            lines.extend([
                int(o_id),
                int(d),
                int(w),
                int(number as i64 + 1),
                int(line.i_id),
                int(line.supply_w_id),
                int(ordered),
                Value::Double((amount * 100.0).round() / 100.0),
                Value::from(dist.as_str()),
            ]);
        }
        self.exec(&insert_order_lines_sql(count), lines).await?;
        Ok(Outcome::Committed)
    }

    async fn payment(&mut self, input: PaymentInput) -> Result<Outcome, TxnError> {
        let (w, d) = (input.w_id, input.d_id);
        let amount = Value::Double(f64::from(input.amount_cents) / 100.0);
        self.exec(
            PAYMENT_UPDATE_DISTRICT,
            vec![amount.clone(), int(w), int(d)],
        )
        .await?;
        let what = format!("district ({w}, {d})");
        let row = self
            .row(PAYMENT_SELECT_DISTRICT, vec![int(w), int(d)], &what)
            .await?;
        let d_name: String = column(&row, 5, "d_name")?;
        self.exec(PAYMENT_UPDATE_WAREHOUSE, vec![amount.clone(), int(w)])
            .await?;
        let what = format!("warehouse {w}");
        let row = self
            .row(PAYMENT_SELECT_WAREHOUSE, vec![int(w)], &what)
            .await?;
        let w_name: String = column(&row, 5, "w_name")?;

        let (c_w, c_d) = (input.c_w_id, input.c_d_id);
        let c_id = match &input.customer {
            CustomerKey::Id(id) => i64::from(*id),
            CustomerKey::LastName(last) => {
                let params = vec![int(c_w), int(c_d), Value::from(last.as_str())];
                let rows = self.rows(PAYMENT_SELECT_CUSTOMERS_BY_LAST, params).await?;
                let Some(row) = rows.get(rows.len().div_ceil(2).max(1) - 1) else {
                    return Err(TxnError::Data(format!(
                        "no customer named {last} in ({c_w}, {c_d})"
                    )));
                };
                column(row, 0, "c_id")?
            }
        };
        let key = vec![int(c_w), int(c_d), int(c_id)];
        let what = format!("customer ({c_w}, {c_d}, {c_id})");
        let row = self
            .row(PAYMENT_SELECT_CUSTOMER_FOR_UPDATE, key.clone(), &what)
            .await?;
        let credit: String = column(&row, 9, "c_credit")?;
        if credit == "BC" {
            let row = self
                .row(PAYMENT_SELECT_CUSTOMER_DATA, key.clone(), &what)
                .await?;
            let old: String = column(&row, 0, "c_data")?;
            let mut data = format!(
                "{c_id} {c_d} {c_w} {d} {w} {}.{:02} | {old}",
                input.amount_cents / 100,
                input.amount_cents % 100
            );
            data.truncate(500);
            let mut params = vec![amount.clone(), amount.clone(), Value::from(data)];
            params.extend(key);
            self.exec(PAYMENT_UPDATE_CUSTOMER_WITH_DATA, params).await?;
        } else {
            let mut params = vec![amount.clone(), amount.clone()];
            params.extend(key);
            self.exec(PAYMENT_UPDATE_CUSTOMER, params).await?;
        }
        let history = vec![
            int(c_d),
            int(c_w),
            int(c_id),
            int(d),
            int(w),
            Value::from(now_string()),
            amount,
            Value::from(format!("{w_name}    {d_name}")),
        ];
        self.exec(PAYMENT_INSERT_HISTORY, history).await?;
        Ok(Outcome::Committed)
    }

    async fn order_status(&mut self, input: OrderStatusInput) -> Result<Outcome, TxnError> {
        let (w, d) = (input.w_id, input.d_id);
        let c_id: i64 = match input.customer {
            CustomerKey::Id(id) => {
                let what = format!("customer ({w}, {d}, {id})");
                self.row(
                    ORDER_STATUS_SELECT_BY_ID,
                    vec![int(w), int(d), int(id)],
                    &what,
                )
                .await?;
                i64::from(id)
            }
            CustomerKey::LastName(last) => {
                let params = || vec![int(w), int(d), Value::from(last.as_str())];
                let what = format!("customers named {last}");
                let row = self
                    .row(ORDER_STATUS_COUNT_BY_LAST, params(), &what)
                    .await?;
                let named: i64 = column(&row, 0, "namecnt")?;
                let rows = self.rows(ORDER_STATUS_SELECT_BY_LAST, params()).await?;
                let middle = ((named.max(1) + 1) / 2 - 1) as usize;
                let Some(row) = rows.get(middle.min(rows.len().saturating_sub(1))) else {
                    return Err(TxnError::Data(format!(
                        "no customer named {last} in ({w}, {d})"
                    )));
                };
                column(row, 3, "c_id")?
            }
        };
        let what = format!("an order of customer ({w}, {d}, {c_id})");
        let row = self
            .row(
                ORDER_STATUS_LATEST_ORDER,
                vec![int(w), int(d), int(c_id)],
                &what,
            )
            .await?;
        let o_id: i64 = column(&row, 0, "o_id")?;
        self.rows(ORDER_STATUS_ORDER_LINES, vec![int(w), int(d), int(o_id)])
            .await?;
        Ok(Outcome::Committed)
    }

    async fn delivery(&mut self, input: DeliveryInput) -> Result<Outcome, TxnError> {
        let (w, carrier) = (input.w_id, input.carrier_id);
        let districts = DISTRICTS_PER_WAREHOUSE as usize;
        let mut order_ids = vec![0i64; districts];
        for (index, o_id) in order_ids.iter_mut().enumerate() {
            let params = vec![int(w), int(index as i64 + 1)];
            if let Some(row) = self.rows(DELIVERY_SELECT_NEW_ORDER, params).await?.first() {
                *o_id = column(row, 0, "no_o_id")?;
            }
        }
        // Districts without a new order keep o_id 0, which matches no row.
        let tuples: Vec<Value> = order_ids
            .iter()
            .enumerate()
            .flat_map(|(index, &o_id)| [int(w), int(index as i64 + 1), int(o_id)])
            .collect();
        let [delete, set_carrier, read_customers, stamp_lines, sum_amounts] = delivery_statements();
        self.exec(&delete, tuples.clone()).await?;
        let mut params = vec![int(carrier)];
        params.extend(tuples.iter().cloned());
        self.exec(&set_carrier, params).await?;
        let mut customers = vec![None; districts];
        for row in self.rows(&read_customers, tuples.clone()).await? {
            let d: i64 = column(&row, 0, "o_d_id")?;
            let slot = customers.get_mut((d - 1) as usize);
            *slot.ok_or_else(|| TxnError::Data(format!("order of district {d}")))? =
                Some(column::<i64>(&row, 1, "o_c_id")?);
        }
        let mut params = vec![Value::from(now_string())];
        params.extend(tuples.iter().cloned());
        self.exec(&stamp_lines, params).await?;
        let mut amounts = vec![0f64; districts];
        for row in self.rows(&sum_amounts, tuples).await? {
            let d: i64 = column(&row, 0, "ol_d_id")?;
            if let Some(slot) = amounts.get_mut((d - 1) as usize) {
                *slot = column(&row, 1, "SUM(ol_amount)")?;
            }
        }
        for (index, &o_id) in order_ids.iter().enumerate() {
            if o_id == 0 {
                continue;
            }
            let d = index as i64 + 1;
            let Some(c_id) = customers[index] else {
                return Err(TxnError::Data(format!(
                    "order ({w}, {d}, {o_id}) of a new_order row not found"
                )));
            };
            let params = vec![Value::Double(amounts[index]), int(w), int(d), int(c_id)];
            self.exec(DELIVERY_UPDATE_CUSTOMER, params).await?;
        }
        Ok(Outcome::Committed)
    }

    async fn stock_level(&mut self, input: StockLevelInput) -> Result<Outcome, TxnError> {
        let (w, d, threshold) = (input.w_id, input.d_id, input.threshold);
        let what = format!("district ({w}, {d})");
        let row = self
            .row(STOCK_LEVEL_SELECT_DISTRICT, vec![int(w), int(d)], &what)
            .await?;
        let next: i64 = column(&row, 0, "d_next_o_id")?;
        let params = vec![int(w), int(d), int(next), int(next), int(w), int(threshold)];
        self.rows(STOCK_LEVEL_COUNT, params).await?;
        Ok(Outcome::Committed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_three_statements_with_go_tpc_shapes() {
        let all = all_statements();
        assert_eq!(all.len(), 63);
        let unique: std::collections::HashSet<&String> = all.iter().collect();
        assert_eq!(unique.len(), 63);
        assert_eq!(
            select_items_sql(5),
            "SELECT i_price, i_name, i_data, i_id FROM item WHERE i_id IN (?,?,?,?,?)"
        );
        assert_eq!(
            select_stock_sql(5),
            "SELECT s_i_id, s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, \
             s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE \
             (s_w_id, s_i_id) IN ((?,?),(?,?),(?,?),(?,?),(?,?)) FOR UPDATE"
        );
        assert_eq!(insert_order_lines_sql(15).matches('?').count(), 15 * 9);
        for sql in delivery_statements() {
            assert_eq!(sql.matches("(?,?,?)").count(), 10, "{sql}");
        }
    }

    #[test]
    fn conflicts_are_recognised() {
        let error = |code| TxnError::Sql {
            statement: "UPDATE".into(),
            error: mysql_async::Error::Server(mysql_async::ServerError {
                code,
                message: "x".into(),
                state: "HY000".into(),
            }),
        };
        assert!(error(1213).is_conflict());
        assert!(error(9007).is_conflict());
        assert!(!error(1064).is_conflict());
        assert!(!error(1213).connection_lost());
        assert!(!TxnError::Data("x".into()).is_conflict());
    }
}
