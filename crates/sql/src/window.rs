//! Window functions (`… OVER (PARTITION BY … ORDER BY … frame)`): binding a call and its
//! window, and computing every call's value for each row of a query block once its grouping
//! and HAVING are done, before its DISTINCT, ORDER BY and LIMIT.
//!
//! A call sorts the block's rows by its partition and order keys, and walks each partition:
//! ranking functions and LAG / LEAD read positions and peers (rows equal in the order keys);
//! FIRST_VALUE, LAST_VALUE, NTH_VALUE and aggregates read the frame of each row. A frame that
//! starts at the partition's first row grows as the row moves on, so its aggregate is kept
//! running; one that ends at the last row is run backwards the same way; any other frame is
//! aggregated afresh for each row.

use std::cmp::Ordering;

use sqlparser::ast;
use strata_codec::Datum;

use crate::aggregate::FrameAggregate;
use crate::api::{ColumnType, SqlError};
use crate::bind::{Binder, Scope};
use crate::error::{self, Result};
use crate::exec::{compare_sort_keys, AggEnv, Ctx};
use crate::expr::{self, AggCall, AggFunc, BinaryOp, Expr, Func, IntervalUnit, ResultType};
use crate::types::{self, sort_compare};

/// The name MySQL gives a window written inside OVER (…) in its errors.
const UNNAMED: &str = "<unnamed window>";
/// How many named windows one window may inherit from, one from the next, before the chain
/// is taken for a cycle.
const INHERITANCE_DEPTH_MAX: usize = 64;

#[derive(Clone, Debug, PartialEq)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// NTILE(n): `args[0]` is n.
    Ntile,
    /// LAG / LEAD(expr, offset, default): `args` are those three.
    Lag,
    Lead,
    FirstValue,
    LastValue,
    /// NTH_VALUE(expr, n): `args[1]` is n.
    NthValue,
    /// An aggregate over the frame; its argument is the call's.
    Aggregate(AggCall),
}

impl WindowFunc {
    /// Whether the value depends on the frame (the others read the whole partition).
    fn reads_frame(&self) -> bool {
        matches!(
            self,
            WindowFunc::FirstValue
                | WindowFunc::LastValue
                | WindowFunc::NthValue
                | WindowFunc::Aggregate(_)
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
}

/// How far a frame bound is from the current row: rows, or a distance in the order key (a
/// number, or an INTERVAL of a date).
#[derive(Clone, Debug, PartialEq)]
pub struct Offset {
    pub amount: Expr,
    pub unit: Option<IntervalUnit>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Offset),
    CurrentRow,
    Following(Offset),
    UnboundedFollowing,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl Frame {
    /// The frame of a window without one: up to the current row's last peer when the window
    /// orders its rows, else the whole partition.
    fn default_for(ordered: bool) -> Frame {
        Frame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: if ordered {
                FrameBound::CurrentRow
            } else {
                FrameBound::UnboundedFollowing
            },
        }
    }
}

/// A window function call of a query block; expressions read its value through
/// `Expr::Window(i)`.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowCall {
    pub func: WindowFunc,
    pub args: Vec<Expr>,
    pub partition_by: Vec<Expr>,
    /// Each expression with whether it is descending.
    pub order_by: Vec<(Expr, bool)>,
    pub frame: Frame,
    /// The window's name in errors.
    pub window: String,
    pub ty: ResultType,
}

impl WindowCall {
    /// The expressions the call reads of each row.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        let agg = match &self.func {
            WindowFunc::Aggregate(call) => Some(&call.arg),
            _ => None,
        };
        self.args
            .iter()
            .chain(agg)
            .chain(&self.partition_by)
            .chain(self.order_by.iter().map(|(e, _)| e))
    }
}

fn invalid_use(name: &str) -> SqlError {
    SqlError::new(
        3593,
        "HY000",
        format!(
            "You cannot use the window function '{}' in this context.'",
            name.to_ascii_lowercase()
        ),
    )
}

/// A window function where none may be (WHERE, GROUP BY, HAVING, an argument of another
/// window function, a statement that writes).
pub fn check_allowed(binder: &Binder<'_>, name: &str) -> Result<()> {
    if binder.allow_windows {
        Ok(())
    } else {
        Err(invalid_use(name))
    }
}

fn window_error(code: u16, message: String) -> SqlError {
    SqlError::new(code, "HY000", message)
}

fn frame_illegal(window: &str) -> SqlError {
    window_error(
        3586,
        format!("Window '{window}': frame start or end is negative, NULL or of non-integral type"),
    )
}

/// Checks the names of a WINDOW clause (3591 for one defined twice).
pub fn check_named(named: &[ast::NamedWindowDefinition]) -> Result<()> {
    for (i, def) in named.iter().enumerate() {
        if named[..i]
            .iter()
            .any(|d| d.0.value.eq_ignore_ascii_case(&def.0.value))
        {
            return Err(window_error(
                3591,
                format!("Window '{}' is defined twice.", def.0.value),
            ));
        }
    }
    Ok(())
}

/// A window's clauses once the windows it names are folded in.
struct Resolved {
    name: String,
    partition_by: Vec<ast::Expr>,
    order_by: Vec<ast::OrderByExpr>,
    frame: Option<ast::WindowFrame>,
}

fn named_window<'n>(
    named: &'n [ast::NamedWindowDefinition],
    name: &ast::Ident,
) -> Result<&'n ast::NamedWindowDefinition> {
    named
        .iter()
        .find(|d| d.0.value.eq_ignore_ascii_case(&name.value))
        .ok_or_else(|| {
            window_error(
                3579,
                format!("Window name '{}' is not defined.", name.value),
            )
        })
}

fn resolve_named(
    named: &[ast::NamedWindowDefinition],
    name: &ast::Ident,
    depth: usize,
) -> Result<Resolved> {
    if depth > INHERITANCE_DEPTH_MAX {
        return Err(window_error(
            3580,
            "There is a circularity in the window dependency graph.".into(),
        ));
    }
    let def = named_window(named, name)?;
    let mut resolved = match &def.1 {
        ast::NamedWindowExpr::NamedWindow(other) => resolve_named(named, other, depth + 1)?,
        ast::NamedWindowExpr::WindowSpec(spec) => resolve_spec(named, spec, depth + 1)?,
    };
    resolved.name = def.0.value.clone();
    Ok(resolved)
}

/// Folds the window a spec names (`OVER (w ORDER BY …)`) into the spec, as MySQL allows: the
/// spec may add an ORDER BY the named window lacks, and a frame.
fn resolve_spec(
    named: &[ast::NamedWindowDefinition],
    spec: &ast::WindowSpec,
    depth: usize,
) -> Result<Resolved> {
    let Some(base_name) = &spec.window_name else {
        return Ok(Resolved {
            name: UNNAMED.to_string(),
            partition_by: spec.partition_by.clone(),
            order_by: spec.order_by.clone(),
            frame: spec.window_frame.clone(),
        });
    };
    let base = resolve_named(named, base_name, depth)?;
    if !spec.partition_by.is_empty() {
        return Err(window_error(
            3581,
            "A window which depends on another cannot define partitioning.".into(),
        ));
    }
    if base.frame.is_some() {
        return Err(window_error(
            3582,
            format!(
                "Window '{}' has a frame definition, so cannot be referenced by another window.",
                base.name
            ),
        ));
    }
    if !spec.order_by.is_empty() && !base.order_by.is_empty() {
        return Err(window_error(
            3583,
            format!(
                "Window '{UNNAMED}' cannot inherit '{}' since both contain an ORDER BY clause.",
                base.name
            ),
        ));
    }
    Ok(Resolved {
        name: UNNAMED.to_string(),
        partition_by: base.partition_by,
        order_by: if spec.order_by.is_empty() {
            base.order_by
        } else {
            spec.order_by.clone()
        },
        frame: spec.window_frame.clone(),
    })
}

/// Binds `name(args) OVER …` and returns the expression that reads its value.
pub fn bind_call(
    binder: &mut Binder<'_>,
    name: &str,
    f: &ast::Function,
    args: &[ast::Expr],
    distinct: bool,
    star: bool,
) -> Result<Expr> {
    check_allowed(binder, name)?;
    let resolved = match f.over.as_ref().expect("a window call has OVER") {
        ast::WindowType::NamedWindow(window) => resolve_named(binder.named_windows, window, 0)?,
        ast::WindowType::WindowSpec(spec) => resolve_spec(binder.named_windows, spec, 0)?,
    };
    if matches!(f.null_treatment, Some(ast::NullTreatment::IgnoreNulls)) {
        return Err(error::unsupported("IGNORE NULLS"));
    }
    if distinct {
        return Err(error::unsupported(format!(
            "{}(DISTINCT ..)",
            name.to_ascii_lowercase()
        )));
    }
    binder.allow_windows = false;
    let bound = bind_parts(binder, name, f, args, star, &resolved);
    binder.allow_windows = true;
    let call = bound?;
    let index = match binder.windows.iter().position(|c| *c == call) {
        Some(i) => i,
        None => {
            binder.windows.push(call);
            binder.windows.len() - 1
        }
    };
    Ok(Expr::Window(index))
}

fn bind_parts(
    binder: &mut Binder<'_>,
    name: &str,
    f: &ast::Function,
    args: &[ast::Expr],
    star: bool,
    resolved: &Resolved,
) -> Result<WindowCall> {
    let arity = |range: std::ops::RangeInclusive<usize>| {
        if range.contains(&args.len()) && !star {
            Ok(())
        } else {
            Err(error::syntax(format!("near '{f}'")))
        }
    };
    let func = match name {
        "ROW_NUMBER" => WindowFunc::RowNumber,
        "RANK" => WindowFunc::Rank,
        "DENSE_RANK" => WindowFunc::DenseRank,
        "PERCENT_RANK" => WindowFunc::PercentRank,
        "CUME_DIST" => WindowFunc::CumeDist,
        "NTILE" => WindowFunc::Ntile,
        "LAG" => WindowFunc::Lag,
        "LEAD" => WindowFunc::Lead,
        "FIRST_VALUE" => WindowFunc::FirstValue,
        "LAST_VALUE" => WindowFunc::LastValue,
        "NTH_VALUE" => WindowFunc::NthValue,
        _ => {
            let agg = match name {
                "COUNT" if star => AggFunc::CountStar,
                "COUNT" => AggFunc::Count,
                "SUM" => AggFunc::Sum,
                "AVG" => AggFunc::Avg,
                "MIN" => AggFunc::Min,
                "MAX" => AggFunc::Max,
                "VAR_POP" | "VARIANCE" => AggFunc::VarPop,
                "VAR_SAMP" => AggFunc::VarSamp,
                "STDDEV_POP" | "STDDEV" | "STD" => AggFunc::StdPop,
                "STDDEV_SAMP" => AggFunc::StdSamp,
                "BIT_AND" => AggFunc::BitAnd,
                "BIT_OR" => AggFunc::BitOr,
                "BIT_XOR" => AggFunc::BitXor,
                "JSON_ARRAYAGG" => AggFunc::JsonArrayAgg,
                "JSON_OBJECTAGG" => AggFunc::JsonObjectAgg,
                // GROUP_CONCAT and scalar functions take no OVER in MySQL's grammar.
                _ => return Err(error::syntax(format!("near 'OVER' in '{f}'"))),
            };
            if agg != AggFunc::CountStar && agg != AggFunc::JsonObjectAgg && args.len() != 1 {
                return Err(error::syntax(format!("near '{f}'")));
            }
            WindowFunc::Aggregate(binder.aggregate_call(agg, f, args, false)?)
        }
    };
    match func {
        WindowFunc::RowNumber
        | WindowFunc::Rank
        | WindowFunc::DenseRank
        | WindowFunc::PercentRank
        | WindowFunc::CumeDist => arity(0..=0)?,
        WindowFunc::Ntile | WindowFunc::FirstValue | WindowFunc::LastValue => arity(1..=1)?,
        WindowFunc::Lag | WindowFunc::Lead => arity(1..=3)?,
        WindowFunc::NthValue => arity(2..=2)?,
        WindowFunc::Aggregate(_) => {}
    }
    let mut bound = Vec::new();
    if !matches!(func, WindowFunc::Aggregate(_)) {
        for a in args {
            bound.push(binder.bind(a)?);
        }
    }
    // Counts and offsets are constants, as in MySQL.
    let constant_position = match func {
        WindowFunc::Ntile => Some(0),
        WindowFunc::Lag | WindowFunc::Lead | WindowFunc::NthValue => Some(1),
        _ => None,
    };
    if let Some(position) = constant_position {
        if bound.get(position).is_some_and(|e| !e.is_row_independent()) {
            return Err(error::wrong_arguments(&name.to_ascii_lowercase()));
        }
    }
    // A window function in the window's own clauses is 3595.
    let in_spec = |e: SqlError| {
        if e.code == 3593 {
            window_error(
                3595,
                format!(
                    "You cannot nest a window function in the specification of window '{}'.",
                    resolved.name
                ),
            )
        } else {
            e
        }
    };
    let mut partition_by = Vec::new();
    for e in &resolved.partition_by {
        partition_by.push(bind_key(binder, e, &resolved.name).map_err(in_spec)?);
    }
    let mut order_by = Vec::new();
    for item in &resolved.order_by {
        let e = bind_key(binder, &item.expr, &resolved.name).map_err(in_spec)?;
        order_by.push((e, item.options.asc == Some(false)));
    }
    let frame = match (&resolved.frame, func.reads_frame()) {
        (Some(frame), true) => bind_frame(binder, frame, &order_by, &resolved.name)?,
        _ => Frame::default_for(!order_by.is_empty()),
    };
    let types = binder.scope.types();
    let arg_type = |e: &Expr| expr::result_type(e, &types, &binder.aggs);
    let long = ResultType {
        not_null: true,
        ..ResultType::of(ColumnType::LongLong, 21, 0)
    };
    let ty = match &func {
        WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank | WindowFunc::Ntile => {
            long
        }
        WindowFunc::PercentRank | WindowFunc::CumeDist => ResultType {
            not_null: true,
            ..ResultType::of(ColumnType::Double, 23, 31)
        },
        WindowFunc::Lag
        | WindowFunc::Lead
        | WindowFunc::FirstValue
        | WindowFunc::LastValue
        | WindowFunc::NthValue => ResultType {
            not_null: false,
            ..arg_type(&bound[0])
        },
        WindowFunc::Aggregate(call) => expr::aggregate_type(call.func, arg_type(&call.arg)),
    };
    Ok(WindowCall {
        func,
        args: bound,
        partition_by,
        order_by,
        frame,
        window: resolved.name.clone(),
        ty,
    })
}

/// Binds a PARTITION BY or ORDER BY expression of a window, where a position (`ORDER BY 1`)
/// is refused, as in MySQL.
fn bind_key(binder: &mut Binder<'_>, e: &ast::Expr, window: &str) -> Result<Expr> {
    if let ast::Expr::Value(v) = e {
        if matches!(v.value, ast::Value::Number(..)) {
            return Err(window_error(
                3592,
                format!("Window '{window}': ORDER BY or PARTITION BY uses legacy position indication which is not supported, use expression."),
            ));
        }
    }
    binder.bind(e)
}

fn bind_frame(
    binder: &Binder<'_>,
    frame: &ast::WindowFrame,
    order_by: &[(Expr, bool)],
    window: &str,
) -> Result<Frame> {
    let units = match frame.units {
        ast::WindowFrameUnits::Rows => FrameUnits::Rows,
        ast::WindowFrameUnits::Range => FrameUnits::Range,
        ast::WindowFrameUnits::Groups => return Err(error::unsupported("GROUPS frames")),
    };
    let start = bind_bound(&frame.start_bound, units, window)?;
    let end = match &frame.end_bound {
        Some(b) => bind_bound(b, units, window)?,
        None => FrameBound::CurrentRow,
    };
    if start == FrameBound::UnboundedFollowing {
        return Err(window_error(
            3584,
            format!("Window '{window}': frame start cannot be UNBOUNDED FOLLOWING."),
        ));
    }
    if end == FrameBound::UnboundedPreceding {
        return Err(window_error(
            3585,
            format!("Window '{window}': frame end cannot be UNBOUNDED PRECEDING."),
        ));
    }
    let offsets: Vec<&Offset> = [&start, &end]
        .into_iter()
        .filter_map(|b| match b {
            FrameBound::Preceding(o) | FrameBound::Following(o) => Some(o),
            _ => None,
        })
        .collect();
    if units == FrameUnits::Range && !offsets.is_empty() {
        let key_type = match order_by {
            [(key, _)] => Some(expr::result_type(key, &binder.scope.types(), &binder.aggs)),
            _ => None,
        };
        let temporal = |t: &ResultType| {
            matches!(
                t.column_type,
                ColumnType::Date | ColumnType::DateTime | ColumnType::Timestamp
            )
        };
        let numeric = |t: &ResultType| {
            matches!(
                t.column_type,
                ColumnType::Tiny
                    | ColumnType::Short
                    | ColumnType::Int24
                    | ColumnType::Long
                    | ColumnType::LongLong
                    | ColumnType::NewDecimal
                    | ColumnType::Float
                    | ColumnType::Double
                    | ColumnType::Year
            )
        };
        let Some(key_type) = key_type.filter(|t| temporal(t) || numeric(t)) else {
            return Err(window_error(
                3587,
                format!("Window '{window}' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type"),
            ));
        };
        for offset in offsets {
            match (temporal(&key_type), offset.unit.is_some()) {
                (true, false) => {
                    return Err(window_error(
                        3588,
                        format!("Window '{window}' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed."),
                    ))
                }
                (false, true) => {
                    return Err(window_error(
                        3589,
                        format!("Window '{window}' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed."),
                    ))
                }
                _ => {}
            }
        }
    }
    Ok(Frame { units, start, end })
}

fn bind_bound(
    bound: &ast::WindowFrameBound,
    units: FrameUnits,
    window: &str,
) -> Result<FrameBound> {
    let offset = |e: &ast::Expr| -> Result<Offset> {
        // A bound is a constant: it reads no column.
        let scope = Scope::default();
        let mut constant = Binder::new(&scope, "window");
        let not_constant = |_| {
            window_error(
                3590,
                format!("Window '{window}' has a non-constant frame bound."),
            )
        };
        match e {
            ast::Expr::Interval(interval) => {
                if units == FrameUnits::Rows {
                    return Err(window_error(
                        3596,
                        format!("Window '{window}': INTERVAL can only be used with RANGE frames."),
                    ));
                }
                let unit = interval
                    .leading_field
                    .as_ref()
                    .filter(|_| interval.last_field.is_none())
                    .and_then(IntervalUnit::from_field)
                    .ok_or_else(|| error::unsupported(format!("INTERVAL {interval}")))?;
                Ok(Offset {
                    amount: constant.bind(&interval.value).map_err(not_constant)?,
                    unit: Some(unit),
                })
            }
            e => Ok(Offset {
                amount: constant.bind(e).map_err(not_constant)?,
                unit: None,
            }),
        }
    };
    Ok(match bound {
        ast::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
        ast::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
        ast::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
        ast::WindowFrameBound::Preceding(Some(e)) => FrameBound::Preceding(offset(e)?),
        ast::WindowFrameBound::Following(Some(e)) => FrameBound::Following(offset(e)?),
    })
}

/// One row of a query block at the window stage: the row its expressions read, and its
/// aggregate values.
pub type StageRow<'r> = (&'r [Datum], &'r [Datum]);

/// Every call's value for each row (`values[row][call]`), and the order the rows leave in
/// when the query has no ORDER BY: the order of the last call.
pub fn compute(
    calls: &[WindowCall],
    rows: &[StageRow<'_>],
    ctx: &Ctx,
) -> Result<(Vec<Vec<Datum>>, Vec<usize>)> {
    let mut values = vec![vec![Datum::Null; calls.len()]; rows.len()];
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let mut sorted_for: Option<&WindowCall> = None;
    let mut keys: Vec<Keys> = Vec::new();
    for (c, call) in calls.iter().enumerate() {
        let same_window = sorted_for.is_some_and(|previous| {
            previous.partition_by == call.partition_by && previous.order_by == call.order_by
        });
        if !same_window {
            keys = rows
                .iter()
                .map(|(row, aggs)| {
                    let env = AggEnv::new(ctx, aggs);
                    let eval = |e: &Expr| e.eval(row, &env);
                    Ok(Keys {
                        partition: call.partition_by.iter().map(eval).collect::<Result<_>>()?,
                        order: call
                            .order_by
                            .iter()
                            .map(|(e, _)| eval(e))
                            .collect::<Result<_>>()?,
                    })
                })
                .collect::<Result<_>>()?;
            // Stable: rows equal in every key keep the order the previous window left.
            order.sort_by(|&a, &b| {
                compare_keys(&keys[a].partition, &keys[b].partition)
                    .then_with(|| compare_sort_keys(&keys[a].order, &keys[b].order, &call.order_by))
            });
            sorted_for = Some(call);
        }
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len()
                && compare_keys(&keys[order[start]].partition, &keys[order[end]].partition)
                    == Ordering::Equal
            {
                end += 1;
            }
            let partition = Partition {
                rows: &order[start..end],
                keys: &keys,
                descending: call.order_by.first().is_some_and(|(_, d)| *d),
            };
            let answers = partition.evaluate(call, rows, ctx)?;
            for (&row, value) in order[start..end].iter().zip(answers) {
                values[row][c] = value;
            }
            start = end;
        }
    }
    Ok((values, order))
}

struct Keys {
    partition: Vec<Datum>,
    order: Vec<Datum>,
}

fn compare_keys(a: &[Datum], b: &[Datum]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = sort_compare(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// One partition's rows, in the window's order.
struct Partition<'p> {
    rows: &'p [usize],
    keys: &'p [Keys],
    /// Whether the window's first order key is descending.
    descending: bool,
}

impl Partition<'_> {
    fn order_key(&self, position: usize) -> &[Datum] {
        &self.keys[self.rows[position]].order
    }

    fn peers(&self, a: usize, b: usize) -> bool {
        compare_keys(self.order_key(a), self.order_key(b)) == Ordering::Equal
    }

    /// For each position, the first and one past the last position of its peers.
    fn peer_groups(&self) -> Vec<(usize, usize)> {
        let n = self.rows.len();
        let mut groups = vec![(0, 0); n];
        let mut start = 0;
        while start < n {
            let mut end = start + 1;
            while end < n && self.peers(start, end) {
                end += 1;
            }
            for slot in &mut groups[start..end] {
                *slot = (start, end);
            }
            start = end;
        }
        groups
    }

    fn evaluate(&self, call: &WindowCall, rows: &[StageRow<'_>], ctx: &Ctx) -> Result<Vec<Datum>> {
        let n = self.rows.len();
        let peers = self.peer_groups();
        // An argument of the call, for the row at `position`.
        let arg = |i: usize, position: usize| -> Result<Datum> {
            let (row, aggs) = rows[self.rows[position]];
            call.args[i].eval(row, &AggEnv::new(ctx, aggs))
        };
        let count = |i: usize| -> Result<Option<i64>> {
            let v = arg(i, 0)?;
            Ok(match v {
                Datum::Null => None,
                Datum::Float(_) | Datum::Decimal(_) | Datum::Bytes(_) => None,
                other => types::to_i64(&other),
            })
        };
        Ok(match &call.func {
            WindowFunc::RowNumber => (1..=n as i64).map(Datum::Int).collect(),
            WindowFunc::Rank => peers
                .iter()
                .map(|(s, _)| Datum::Int(*s as i64 + 1))
                .collect(),
            WindowFunc::DenseRank => {
                let mut rank = 0;
                let mut out = Vec::with_capacity(n);
                for (position, (s, _)) in peers.iter().enumerate() {
                    if *s == position {
                        rank += 1;
                    }
                    out.push(Datum::Int(rank));
                }
                out
            }
            WindowFunc::PercentRank => peers
                .iter()
                .map(|(s, _)| {
                    Datum::Float(if n > 1 {
                        *s as f64 / (n - 1) as f64
                    } else {
                        0.0
                    })
                })
                .collect(),
            WindowFunc::CumeDist => peers
                .iter()
                .map(|(_, e)| Datum::Float(*e as f64 / n as f64))
                .collect(),
            WindowFunc::Ntile => {
                let buckets = match count(0)? {
                    Some(b) if b > 0 => b as usize,
                    _ => return Err(error::wrong_arguments("ntile")),
                };
                let (size, larger) = (n / buckets, n % buckets);
                (0..n)
                    .map(|p| {
                        let bucket = if p < larger * (size + 1) {
                            p / (size + 1)
                        } else {
                            larger + (p - larger * (size + 1)) / size.max(1)
                        };
                        Datum::Int(bucket as i64 + 1)
                    })
                    .collect()
            }
            WindowFunc::Lag | WindowFunc::Lead => {
                let offset = if call.args.len() > 1 {
                    match count(1)? {
                        Some(o) if o >= 0 => o as usize,
                        _ => {
                            let name = if call.func == WindowFunc::Lag {
                                "lag"
                            } else {
                                "lead"
                            };
                            return Err(error::wrong_arguments(name));
                        }
                    }
                } else {
                    1
                };
                let mut out = Vec::with_capacity(n);
                for p in 0..n {
                    let source = if call.func == WindowFunc::Lag {
                        p.checked_sub(offset)
                    } else {
                        p.checked_add(offset).filter(|s| *s < n)
                    };
                    out.push(match source {
                        Some(s) => arg(0, s)?,
                        None if call.args.len() > 2 => arg(2, p)?,
                        None => Datum::Null,
                    });
                }
                out
            }
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
                let nth = if call.func == WindowFunc::NthValue {
                    match count(1)? {
                        Some(k) if k > 0 => k as usize,
                        _ => return Err(error::wrong_arguments("nth_value")),
                    }
                } else {
                    1
                };
                let mut out = Vec::with_capacity(n);
                for p in 0..n {
                    let (lo, hi) = self.frame(&call.frame, p, &peers, &call.window, ctx)?;
                    let pick = match call.func {
                        WindowFunc::LastValue => hi.checked_sub(1).filter(|&h| h >= lo),
                        _ => Some(lo + nth - 1).filter(|&q| q < hi),
                    };
                    out.push(match pick {
                        Some(q) => arg(0, q)?,
                        None => Datum::Null,
                    });
                }
                out
            }
            WindowFunc::Aggregate(agg) => {
                let values: Vec<Datum> = (0..n)
                    .map(|p| {
                        let (row, aggs) = rows[self.rows[p]];
                        agg.arg.eval(row, &AggEnv::new(ctx, aggs))
                    })
                    .collect::<Result<_>>()?;
                let frames: Vec<(usize, usize)> = (0..n)
                    .map(|p| self.frame(&call.frame, p, &peers, &call.window, ctx))
                    .collect::<Result<_>>()?;
                aggregate_frames(agg, &values, &frames, &call.frame, ctx)
            }
        })
    }

    /// The frame of the row at `position`: its first position and one past its last (empty
    /// when the first is not below the second).
    fn frame(
        &self,
        frame: &Frame,
        position: usize,
        peers: &[(usize, usize)],
        window: &str,
        ctx: &Ctx,
    ) -> Result<(usize, usize)> {
        let n = self.rows.len();
        let lo = self.bound(
            &frame.start,
            frame.units,
            position,
            peers,
            false,
            window,
            ctx,
        )?;
        let hi = self.bound(&frame.end, frame.units, position, peers, true, window, ctx)?;
        Ok((lo.min(n), hi.min(n).max(lo.min(n))))
    }

    /// A frame bound as a position: the first row in the frame (`end` false) or one past the
    /// last (`end` true).
    #[allow(clippy::too_many_arguments)]
    fn bound(
        &self,
        bound: &FrameBound,
        units: FrameUnits,
        position: usize,
        peers: &[(usize, usize)],
        end: bool,
        window: &str,
        ctx: &Ctx,
    ) -> Result<usize> {
        let n = self.rows.len();
        let (offset, following) = match bound {
            FrameBound::UnboundedPreceding => return Ok(0),
            FrameBound::UnboundedFollowing => return Ok(n),
            FrameBound::CurrentRow => {
                return Ok(match (units, end) {
                    (FrameUnits::Rows, false) => position,
                    (FrameUnits::Rows, true) => position + 1,
                    (FrameUnits::Range, false) => peers[position].0,
                    (FrameUnits::Range, true) => peers[position].1,
                });
            }
            FrameBound::Preceding(o) => (o, false),
            FrameBound::Following(o) => (o, true),
        };
        let amount = offset.amount.eval(&[], ctx)?;
        if units == FrameUnits::Rows {
            let rows = match amount {
                Datum::Int(i) if i >= 0 => i as usize,
                Datum::UInt(u) => usize::try_from(u).unwrap_or(usize::MAX),
                _ => return Err(frame_illegal(window)),
            };
            let at = if following {
                position.saturating_add(rows)
            } else if rows > position {
                // Before the partition's first row: an end there leaves the frame empty.
                return Ok(0);
            } else {
                position - rows
            };
            return Ok(if end { at.saturating_add(1) } else { at });
        }
        if amount == Datum::Null || types::to_f64(&amount).is_none_or(|a| a < 0.0) {
            return Err(frame_illegal(window));
        }
        let current = &self.order_key(position)[0];
        if *current == Datum::Null {
            // NULL ± N is NULL: the frame bound is the NULL peers'.
            return Ok(if end {
                peers[position].1
            } else {
                peers[position].0
            });
        }
        let descending = self.descending;
        // The key value the bound stands at: ahead in the order is `following`.
        let add = following != descending;
        let target = shift(current, &amount, offset.unit, add, ctx)?;
        // Positions before the bound: rows whose key comes before `target` in the window's
        // order (for an end, also those equal to it).
        let before = |p: usize| {
            // NULL keys come first in ascending order, last in descending order.
            let o = sort_compare(&self.order_key(p)[0], &target);
            let o = if descending { o.reverse() } else { o };
            if end {
                o != Ordering::Greater
            } else {
                o == Ordering::Less
            }
        };
        Ok(self.partition_point(before))
    }

    fn partition_point(&self, before: impl Fn(usize) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.rows.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// `value` moved by `amount` (of `unit`, for a date) forward (`add`) or back.
fn shift(
    value: &Datum,
    amount: &Datum,
    unit: Option<IntervalUnit>,
    add: bool,
    ctx: &Ctx,
) -> Result<Datum> {
    let (value, amount) = (Expr::Literal(value.clone()), Expr::Literal(amount.clone()));
    let moved = match unit {
        None => Expr::Binary(
            if add { BinaryOp::Plus } else { BinaryOp::Minus },
            Box::new(value),
            Box::new(amount),
        ),
        Some(unit) => {
            let amount = if add {
                amount
            } else {
                Expr::Neg(Box::new(amount))
            };
            Expr::Call(Func::Date(expr::DateFunc::Add(unit)), vec![value, amount])
        }
    };
    moved.eval(&[], ctx)
}

/// An aggregate over each row's frame (`frames[p]`, positions into `values`).
fn aggregate_frames(
    call: &AggCall,
    values: &[Datum],
    frames: &[(usize, usize)],
    frame: &Frame,
    ctx: &Ctx,
) -> Vec<Datum> {
    let n = values.len();
    let mut state = FrameAggregate::new(call, ctx);
    let mut out = vec![Datum::Null; n];
    if frame.start == FrameBound::UnboundedPreceding {
        // Frames grow: [0, hi) with hi never shrinking.
        let mut added = 0;
        for (p, &(_, hi)) in frames.iter().enumerate() {
            while added < hi {
                state.add(&values[added]);
                added += 1;
            }
            out[p] = state.value(false);
        }
    } else if frame.end == FrameBound::UnboundedFollowing {
        // Frames grow backwards: [lo, n) with lo never rising as the row moves back.
        let mut added = n;
        for p in (0..n).rev() {
            let lo = frames[p].0;
            while added > lo {
                added -= 1;
                state.add(&values[added]);
            }
            out[p] = state.value(true);
        }
    } else {
        for (p, &(lo, hi)) in frames.iter().enumerate() {
            state.clear();
            for value in &values[lo..hi] {
                strata_fiber::yield_if_long();
                state.add(value);
            }
            out[p] = state.value(false);
        }
    }
    out
}
