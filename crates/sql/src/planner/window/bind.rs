//! Binding of window calls: the function, the window (named windows folded in), its keys and
//! its frame, with MySQL's errors for each.

use sqlparser::ast;

use super::{window_error, Frame, FrameBound, FrameUnits, Offset, WindowCall, WindowFunc};
use crate::api::ColumnType;
use crate::error::{self, Error, Result};
use crate::expr::{self, AggFunc, Expr, IntervalUnit, ResultType};
use crate::planner::bind::Binder;
use crate::planner::scope::Scope;

/// The name MySQL gives a window written inside OVER (…) in its errors.
const UNNAMED: &str = "<unnamed window>";
/// How many named windows one window may inherit from, one from the next, before the chain
/// is taken for a cycle.
const INHERITANCE_DEPTH_MAX: usize = 64;

fn invalid_use(name: &str) -> Error {
    Error::new(
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
    let in_spec = |e: Error| {
        if e.code() == 3593 {
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
