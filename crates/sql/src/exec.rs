//! What execution shares: the context expressions evaluate in, the key ranges and keys of
//! access paths, and the batched lookups of index nested-loop joins. The operators that run a
//! query block are in [`crate::executor`].

use strata_codec::{keys, memcomparable, Datum};
use strata_txn::Transaction;
use strata_types::Key;

use crate::catalog::TableDef;
use crate::error::{self, Result};
use crate::expr::{EvalEnv, Expr, SessionValue};
use crate::planner::access::{Access, RangeBound, TableSource};
use crate::planner::physical::SelectPlan;
use crate::rows;
use crate::types::{self, to_f64, SqlType};

/// Session values that expressions may read.
pub trait SessionEnv {
    fn session_value(&self, value: &SessionValue) -> Datum;
    /// `@name := value`: sets user variable `name` (lowercase) while a statement runs.
    fn set_user_variable(&self, name: &str, value: Datum);
    /// Whether the running statement must stop: killed (1317) or past its time limit (3024).
    fn check_interrupt(&self) -> Result<()>;
    /// The running statement waits in SLEEP() (`on`), or no longer does.
    fn user_sleep(&self, on: bool);
    /// Charges `bytes` the running statement keeps to its memory (8175 past its quota, 8176
    /// past the server's limit).
    fn consume_memory(&self, bytes: usize) -> Result<()>;
    /// Gives back `bytes` the running statement no longer holds (rows sent to the client).
    fn release_memory(&self, bytes: usize);
    /// Whether the running statement holds most of its quota: operators that can spill should.
    fn memory_pressed(&self) -> bool;
}

/// What one execution of a statement evaluates against.
pub struct Ctx<'a> {
    pub params: &'a [Datum],
    pub session: &'a dyn SessionEnv,
    /// Set for statements that write (strict mode).
    pub strict: bool,
    /// The joined row so far, for the access path of a join step (`Expr::Prefix`).
    pub prefix: &'a [Datum],
    /// The enclosing query's row, for a correlated subquery (`Expr::Outer`).
    pub outer: &'a [Datum],
}

impl<'a> Ctx<'a> {
    pub fn new(params: &'a [Datum], session: &'a dyn SessionEnv, strict: bool) -> Ctx<'a> {
        Ctx {
            params,
            session,
            strict,
            prefix: &[],
            outer: &[],
        }
    }

    /// The same context with `prefix` as the joined row so far.
    pub fn with_prefix<'b>(&'b self, prefix: &'b [Datum]) -> Ctx<'b> {
        Ctx {
            params: self.params,
            session: self.session,
            strict: self.strict,
            prefix,
            outer: self.outer,
        }
    }

    /// The context of a subquery run for the enclosing row `outer`.
    pub fn with_outer<'b>(&'b self, outer: &'b [Datum]) -> Ctx<'b> {
        Ctx {
            params: self.params,
            session: self.session,
            strict: self.strict,
            prefix: &[],
            outer,
        }
    }
}

impl EvalEnv for Ctx<'_> {
    fn param(&self, index: usize) -> Datum {
        self.params.get(index).cloned().unwrap_or(Datum::Null)
    }
    fn aggregate(&self, _index: usize) -> Datum {
        Datum::Null
    }
    fn session_value(&self, value: &SessionValue) -> Datum {
        self.session.session_value(value)
    }
    fn set_user_variable(&self, name: &str, value: Datum) {
        self.session.set_user_variable(name, value);
    }
    fn check_interrupt(&self) -> Result<()> {
        self.session.check_interrupt()
    }
    fn user_sleep(&self, on: bool) {
        self.session.user_sleep(on);
    }
    fn consume_memory(&self, bytes: usize) -> Result<()> {
        self.session.consume_memory(bytes)
    }
    fn division_by_zero_is_error(&self) -> bool {
        self.strict
    }
    fn prefix(&self, n: usize) -> Datum {
        self.prefix.get(n).cloned().unwrap_or(Datum::Null)
    }
    fn outer(&self, n: usize) -> Datum {
        self.outer.get(n).cloned().unwrap_or(Datum::Null)
    }
}

/// What a query block's expressions read after grouping: its aggregate values and, once
/// computed, its window values for the row.
pub(crate) struct AggEnv<'a> {
    ctx: &'a Ctx<'a>,
    aggs: &'a [Datum],
    windows: &'a [Datum],
}

impl<'a> AggEnv<'a> {
    pub(crate) fn new(ctx: &'a Ctx<'a>, aggs: &'a [Datum]) -> AggEnv<'a> {
        AggEnv {
            ctx,
            aggs,
            windows: &[],
        }
    }

    /// The environment of a row at the projection: its aggregate and window values.
    pub(crate) fn with_windows(
        ctx: &'a Ctx<'a>,
        aggs: &'a [Datum],
        windows: &'a [Datum],
    ) -> AggEnv<'a> {
        AggEnv { ctx, aggs, windows }
    }
}

impl EvalEnv for AggEnv<'_> {
    fn param(&self, index: usize) -> Datum {
        self.ctx.param(index)
    }
    fn aggregate(&self, index: usize) -> Datum {
        self.aggs.get(index).cloned().unwrap_or(Datum::Null)
    }
    fn window(&self, index: usize) -> Datum {
        self.windows.get(index).cloned().unwrap_or(Datum::Null)
    }
    fn session_value(&self, value: &SessionValue) -> Datum {
        self.ctx.session_value(value)
    }
    fn set_user_variable(&self, name: &str, value: Datum) {
        self.ctx.set_user_variable(name, value);
    }
    fn check_interrupt(&self) -> Result<()> {
        self.ctx.check_interrupt()
    }
    fn user_sleep(&self, on: bool) {
        self.ctx.user_sleep(on);
    }
    fn consume_memory(&self, bytes: usize) -> Result<()> {
        self.ctx.consume_memory(bytes)
    }
    fn division_by_zero_is_error(&self) -> bool {
        self.ctx.strict
    }
    fn outer(&self, n: usize) -> Datum {
        self.ctx.outer(n)
    }
}

/// Whether a condition holds (NULL does not).
// Every row a statement reads, joins or writes passes here: the other connections of a fiber
// thread get their turn from it too.
pub fn holds(filter: Option<&Expr>, row: &[Datum], env: &dyn EvalEnv) -> Result<bool> {
    strata_fiber::yield_if_long();
    match filter {
        None => Ok(true),
        Some(f) => Ok(types::to_bool(&f.eval(row, env)?) == Some(true)),
    }
}

/// Converts a value compared for equality with a key column to that column's type; None when
/// no value of the column can equal it.
pub fn key_datum(ty: &SqlType, value: Datum) -> Option<Datum> {
    if value == Datum::Null {
        return None;
    }
    let original = value.clone();
    let converted = ty.coerce(value, "key").ok()?;
    if ty.is_integer() && types::compare(&original, &converted) != Some(std::cmp::Ordering::Equal) {
        return None;
    }
    Some(converted)
}

/// A range bound converted to the key column's type; None means unbounded.
fn bound_datum(
    ty: &SqlType,
    bound: &RangeBound,
    low: bool,
    ctx: &Ctx,
) -> Result<Option<(Datum, bool)>> {
    let value = bound.expr.eval(&[], ctx)?;
    if value == Datum::Null {
        return Ok(None);
    }
    if ty.is_integer() {
        let f = match to_f64(&value) {
            Some(f) => f,
            None => return Ok(None),
        };
        if f.fract() != 0.0 {
            let rounded = if low { f.ceil() } else { f.floor() };
            return Ok(ty
                .coerce(Datum::Float(rounded), "key")
                .ok()
                .map(|d| (d, true)));
        }
    }
    Ok(ty.coerce(value, "key").ok().map(|d| (d, bound.inclusive)))
}

/// Both bounds of a range converted to the key column's type.
type Bounds = (Option<(Datum, bool)>, Option<(Datum, bool)>);

fn bounds(
    ty: &SqlType,
    low: Option<&RangeBound>,
    high: Option<&RangeBound>,
    ctx: &Ctx,
) -> Result<Bounds> {
    let low = match low {
        Some(b) => bound_datum(ty, b, true, ctx)?,
        None => None,
    };
    let high = match high {
        Some(b) => bound_datum(ty, b, false, ctx)?,
        None => None,
    };
    Ok((low, high))
}

/// Key range `[start, end)` from an equal prefix and optional bounds on the next column.
fn key_range(
    base: Key,
    encode: &dyn Fn(&[Datum]) -> Key,
    prefix: &[Datum],
    low: Option<(Datum, bool)>,
    high: Option<(Datum, bool)>,
) -> (Key, Key) {
    let prefix_key = if prefix.is_empty() {
        base
    } else {
        encode(prefix)
    };
    let with = |d: Datum| {
        let mut values = prefix.to_vec();
        values.push(d);
        encode(&values)
    };
    let start = match low {
        Some((d, true)) => with(d),
        Some((d, false)) => keys::prefix_next(&with(d)),
        None => prefix_key.clone(),
    };
    let end = match high {
        Some((d, true)) => keys::prefix_next(&with(d)),
        Some((d, false)) => with(d),
        None => keys::prefix_next(&prefix_key),
    };
    (start, end)
}

pub(crate) fn eval_prefix(
    table: &TableDef,
    columns: &[usize],
    exprs: &[Expr],
    ctx: &Ctx,
) -> Result<Option<Vec<Datum>>> {
    let mut out = Vec::with_capacity(exprs.len());
    for (column, e) in columns.iter().zip(exprs) {
        match key_datum(&table.columns[*column].ty, e.eval(&[], ctx)?) {
            Some(d) => out.push(d),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// The row keys a point access path names, whether or not the rows exist. Locking them makes
/// a DELETE or UPDATE of a missing row wait for a concurrent insert of it (as a gap lock would).
pub fn point_keys(source: &TableSource, ctx: &Ctx) -> Result<Vec<Key>> {
    let table = &*source.table;
    let pk = table.primary_columns();
    let lists: Vec<&Vec<Expr>> = match &source.access {
        Access::Point(exprs) => vec![exprs],
        Access::Points(list) => list.iter().collect(),
        _ => return Ok(Vec::new()),
    };
    let mut keys = Vec::with_capacity(lists.len());
    for exprs in lists {
        if let Some(handle) = eval_prefix(table, &pk, exprs, ctx)? {
            keys.push(rows::row_key(table, &handle));
        }
    }
    Ok(keys)
}

/// The row-key range of a primary-key range access, or None when a prefix value is NULL.
pub(crate) fn pk_range(
    table: &TableDef,
    prefix: &[Expr],
    low: &Option<RangeBound>,
    high: &Option<RangeBound>,
    ctx: &Ctx,
) -> Result<Option<(Key, Key)>> {
    let pk = table.primary_columns();
    let Some(prefix) = eval_prefix(table, &pk, prefix, ctx)? else {
        return Ok(None);
    };
    let next_ty = &table.columns[pk[prefix.len().min(pk.len() - 1)]].ty;
    let (low, high) = bounds(next_ty, low.as_ref(), high.as_ref(), ctx)?;
    let encode = |values: &[Datum]| keys::row_key(table.table_id(), values);
    let base = keys::record_prefix(table.table_id());
    Ok(Some(key_range(base, &encode, &prefix, low, high)))
}

/// The entry-key range of a secondary-index range access, or None when a prefix value is
/// NULL.
pub(crate) fn index_range(
    table: &TableDef,
    index: &crate::catalog::IndexDef,
    prefix: &[Expr],
    low: &Option<RangeBound>,
    high: &Option<RangeBound>,
    ctx: &Ctx,
) -> Result<Option<(Key, Key)>> {
    let Some(prefix) = eval_prefix(table, &index.columns, prefix, ctx)? else {
        return Ok(None);
    };
    let next_ty = &table.columns[index.columns[prefix.len().min(index.columns.len() - 1)]].ty;
    let (low, high) = bounds(next_ty, low.as_ref(), high.as_ref(), ctx)?;
    let encode = |values: &[Datum]| rows::index_values_key(table, index, values);
    let base = keys::index_prefix(table.table_id(), strata_types::IndexId(index.id));
    Ok(Some(key_range(base, &encode, &prefix, low, high)))
}

/// Visits the rows an access path finds, with their row keys, until `visit` returns false.
/// `limit_hint` sizes scan pages when the caller will stop early.
pub fn scan_source(
    txn: &mut Transaction,
    source: &TableSource,
    ctx: &Ctx,
    limit_hint: Option<usize>,
    visit: &mut dyn FnMut(Key, Vec<Datum>) -> Result<bool>,
) -> Result<()> {
    let mut cursor = crate::executor::Cursor::new(source, limit_hint);
    while let Some(page) = cursor.next_page(txn, ctx)? {
        for (key, row) in page {
            if !visit(key, row)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Evaluates LIMIT / OFFSET to counts.
pub fn eval_count(e: Option<&Expr>, ctx: &Ctx) -> Result<Option<usize>> {
    match e {
        None => Ok(None),
        Some(e) => {
            let v = e.eval(&[], ctx)?;
            match types::to_i64(&v) {
                Some(n) if n >= 0 => Ok(Some(n as usize)),
                _ => Err(error::wrong_arguments("LIMIT")),
            }
        }
    }
}

/// Runs a SELECT; returns its rows and the row keys it read (for locking reads).
pub fn execute_select(
    plan: &SelectPlan,
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<(Vec<Vec<Datum>>, Vec<Key>)> {
    crate::executor::execute(plan, txn, ctx)
}

/// Orders two rows' ORDER BY values (`order`: each expression with whether it is
/// descending). A long sort yields its fiber thread now and then.
pub fn compare_sort_keys(a: &[Datum], b: &[Datum], order: &[(Expr, bool)]) -> std::cmp::Ordering {
    strata_fiber::yield_if_long();
    for ((x, y), (_, desc)) in a.iter().zip(b).zip(order) {
        let o = types::sort_compare(x, y);
        let o = if *desc { o.reverse() } else { o };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}

/// Encodes values for hashing in GROUP BY and DISTINCT.
pub fn group_key(values: &[Datum]) -> Vec<u8> {
    let mut key = Vec::new();
    for v in values {
        let normalized = match v {
            Datum::Decimal(d) => Datum::Decimal(d.normalize()),
            other => other.clone(),
        };
        memcomparable::encode_key_datum(&mut key, &normalized);
    }
    key
}
