//! Bound expressions: what a parsed expression becomes once its columns, parameters and
//! functions are resolved, and how it is evaluated over one row.
//!
//! The pieces: arithmetic and comparison (`arith`), built-in functions (`func`, with the
//! string, math and date families in `strings`, `math` and `dates`, regular expressions in
//! `regexp`) and the types results are
//! described to clients with (`typing`).

mod arith;
mod calendar;
mod clock;
mod dates;
mod encoding;
pub(crate) use encoding::unhex_bytes;
mod func;
pub(crate) use func::invalid_grouping;
mod json;
mod math;
mod regexp;
mod strings;
mod typing;

use std::cmp::Ordering;

use strata_codec::Datum;

use crate::error::Result;
use crate::types::{self, compare, to_bool};

use arith::{arithmetic, binary, negate};
pub use arith::{decimal_quotient, like};
pub use calendar::ExtractUnit;
pub use clock::{
    format_time, round_fraction as round_time, time_number as clock_number, to_time, TimeFunc,
};
pub use dates::{DateFunc, IntervalUnit};
pub use encoding::EncodingFunc;
use func::call;
pub use json::{
    parse_for_column as parse_json_for_column, print as print_json, scalar_json, JsonFunc,
    JsonResult,
};
pub use math::MathFunc;
pub use regexp::RegexpFunc;
pub use strings::StrFunc;
pub use typing::{aggregate_type, conform, merged_type, result_type, typed, ResultType, Typing};

/// Scale added by division, as MySQL's `div_precision_increment`.
const DIV_PRECISION_INCREMENT: u32 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Plus,
    Minus,
    Multiply,
    Divide,
    IntDivide,
    Modulo,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    NullSafeEq,
    And,
    Or,
    Xor,
    BitAnd,
    BitOr,
    BitXor,
    ShiftLeft,
    ShiftRight,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    CountStar,
    Sum,
    Avg,
    Min,
    Max,
    GroupConcat,
    /// JSON_ARRAYAGG: every value, NULL as null.
    JsonArrayAgg,
    /// JSON_OBJECTAGG(key, value): its argument is `JSON_ARRAY(key, value)`.
    JsonObjectAgg,
    /// VAR_POP, VARIANCE.
    VarPop,
    VarSamp,
    /// STDDEV_POP, STDDEV, STD.
    StdPop,
    StdSamp,
    BitAnd,
    BitOr,
    BitXor,
    AnyValue,
}

/// An aggregate call of a query; expressions refer to its result by position.
#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    pub arg: Expr,
    pub distinct: bool,
    /// GROUP_CONCAT's separator (`,` unless given).
    pub separator: Vec<u8>,
    /// GROUP_CONCAT's ORDER BY: expressions over the group's rows, each with whether it is
    /// descending.
    pub order_by: Vec<(Expr, bool)>,
}

/// Values that depend on the session, resolved at execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionValue {
    Database,
    LastInsertId,
    ConnectionId,
    /// `USER()`: the user name the client gave and its host.
    User,
    /// `CURRENT_USER()`: the account the client logged in as.
    CurrentUser,
    /// `CURRENT_ROLE()`: the roles in use, or `NONE`.
    CurrentRole,
    Version,
    /// `NOW(fsp)`: the time with `fsp` (0 to 6) digits of its seconds' fraction.
    Now(u8),
    /// `CURTIME(fsp)`: the time of day, as a TIME.
    CurTime(u8),
    CurDate,
    SystemVariable(String),
    UserVariable(String),
    FoundRows,
    RowCount,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Func {
    Concat,
    Length,
    CharLength,
    Upper,
    Lower,
    Substring,
    Abs,
    Round,
    Floor,
    Ceil,
    Power,
    Coalesce,
    If,
    NullIf,
    Greatest,
    Least,
    Mod,
    Sqrt,
    Trim,
    /// `SLEEP(seconds)`: waits (suspending only its fiber), then returns 0.
    Sleep,
    /// `@name := value`: sets user variable `name` (lowercase) and gives the value.
    SetUserVariable(String),
    /// `GROUPING(e, …)` of a `GROUP BY … WITH ROLLUP`, which the planner replaces by what the
    /// grouped rows carry (`query::roll_up`); left over, it is error 3603.
    Grouping,
    Str(StrFunc),
    Math(MathFunc),
    Date(DateFunc),
    Time(TimeFunc),
    Regexp(RegexpFunc),
    Encoding(EncodingFunc),
    Json(JsonFunc),
    CastSigned,
    CastUnsigned,
    CastChar,
    /// CAST(… AS BINARY), `BINARY x`, `X'…'` and `_binary'…'`: the value's bytes, as a binary
    /// string.
    CastBinary,
    CastDecimal(u32, u32),
    CastDouble,
    CastDate,
    CastDateTime,
    /// CAST(… AS TIME(fsp)).
    CastTime(u8),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Column(usize),
    Literal(Datum),
    /// A `?` parameter, by position.
    Param(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    IsTrue(Box<Expr>, bool),
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    /// `(a, b) IN ((1, 2), …)`.
    TupleIn {
        exprs: Vec<Expr>,
        list: Vec<Vec<Expr>>,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        escape: u8,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Call(Func, Vec<Expr>),
    /// The result of aggregate call `n` of the query.
    Agg(usize),
    /// The result of window call `n` of the query, for the current row.
    Window(usize),
    /// Column `n` of the joined row built so far, read by the access path of a later join
    /// step (index nested-loop join).
    Prefix(usize),
    /// Column `n` of the enclosing queries' current rows (a correlated subquery), and its
    /// type: the row of the query directly around, then the row of the one around that, ….
    Outer(usize, Box<ResultType>),
    Session(SessionValue),
}

/// What evaluation may consult besides the row.
pub trait EvalEnv {
    fn param(&self, index: usize) -> Datum;
    fn aggregate(&self, index: usize) -> Datum;
    /// The value of window call `index` for the current row.
    fn window(&self, _index: usize) -> Datum {
        Datum::Null
    }
    fn session_value(&self, value: &SessionValue) -> Datum;
    /// `@name := value`: sets a user variable of the session (where there is one).
    fn set_user_variable(&self, _name: &str, _value: Datum) {}
    /// Whether the running statement must stop (killed, or past its time limit), where it
    /// runs in a session.
    fn check_interrupt(&self) -> Result<()> {
        Ok(())
    }
    /// Notes that the running statement waits in SLEEP() (`on`) or no longer does: SHOW
    /// PROCESSLIST's state `User sleep`, where it runs in a session.
    fn user_sleep(&self, _on: bool) {}
    /// Charges `bytes` that the running statement keeps to its memory, where it runs in a
    /// session (8175 past its quota, 8176 past the server's limit).
    fn consume_memory(&self, _bytes: usize) -> Result<()> {
        Ok(())
    }
    /// Charges a row that the running statement keeps (see [`EvalEnv::consume_memory`]).
    fn keep_row(&self, row: &[Datum]) -> Result<()> {
        self.consume_memory(crate::memory::row_bytes(row))
    }
    /// Column `n` of the joined row built so far.
    fn prefix(&self, _n: usize) -> Datum {
        Datum::Null
    }
    /// Column `n` of the enclosing query's row.
    fn outer(&self, _n: usize) -> Datum {
        Datum::Null
    }
    /// Whether division by zero is an error (1365), as in MySQL's strict mode for statements
    /// that write; elsewhere it gives NULL.
    fn division_by_zero_is_error(&self) -> bool {
        false
    }
}

/// An environment with parameters only (constant folding, defaults).
pub struct ParamsEnv<'a>(pub &'a [Datum]);

impl EvalEnv for ParamsEnv<'_> {
    fn param(&self, index: usize) -> Datum {
        self.0.get(index).cloned().unwrap_or(Datum::Null)
    }
    fn aggregate(&self, _index: usize) -> Datum {
        Datum::Null
    }
    fn session_value(&self, _value: &SessionValue) -> Datum {
        Datum::Null
    }
}

fn bool_datum(b: bool) -> Datum {
    Datum::Int(b as i64)
}

fn opt_bool(b: Option<bool>) -> Datum {
    b.map_or(Datum::Null, bool_datum)
}

impl Expr {
    /// Evaluates over `row`.
    // Hot path: WHERE filters and projections of every query.
    pub fn eval(&self, row: &[Datum], env: &dyn EvalEnv) -> Result<Datum> {
        Ok(match self {
            Expr::Column(i) => row.get(*i).cloned().unwrap_or(Datum::Null),
            Expr::Literal(d) => d.clone(),
            Expr::Param(i) => env.param(*i),
            Expr::Agg(i) => env.aggregate(*i),
            Expr::Window(i) => env.window(*i),
            Expr::Prefix(i) => env.prefix(*i),
            Expr::Outer(i, _) => env.outer(*i),
            Expr::Session(v) => env.session_value(v),
            Expr::Neg(e) => negate(e.eval(row, env)?)?,
            Expr::Not(e) => opt_bool(to_bool(&e.eval(row, env)?).map(|b| !b)),
            Expr::IsNull(e, negated) => bool_datum((e.eval(row, env)? == Datum::Null) != *negated),
            Expr::IsTrue(e, negated) => {
                bool_datum((to_bool(&e.eval(row, env)?) == Some(true)) != *negated)
            }
            Expr::Binary(op, l, r) => binary(*op, l, r, row, env)?,
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let v = expr.eval(row, env)?;
                let lo = low.eval(row, env)?;
                let hi = high.eval(row, env)?;
                let ge = compare(&v, &lo).map(|o| o != Ordering::Less);
                let le = compare(&v, &hi).map(|o| o != Ordering::Greater);
                let inside = match (ge, le) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                opt_bool(inside.map(|b| b != *negated))
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let v = expr.eval(row, env)?;
                if v == Datum::Null {
                    return Ok(Datum::Null);
                }
                let mut saw_null = false;
                for item in list {
                    match compare(&v, &item.eval(row, env)?) {
                        Some(Ordering::Equal) => return Ok(bool_datum(!*negated)),
                        None => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Datum::Null
                } else {
                    bool_datum(*negated)
                }
            }
            Expr::TupleIn {
                exprs,
                list,
                negated,
            } => {
                let values: Vec<Datum> = exprs
                    .iter()
                    .map(|e| e.eval(row, env))
                    .collect::<Result<_>>()?;
                for tuple in list {
                    let mut all = true;
                    for (v, e) in values.iter().zip(tuple) {
                        if compare(v, &e.eval(row, env)?) != Some(Ordering::Equal) {
                            all = false;
                            break;
                        }
                    }
                    if all {
                        return Ok(bool_datum(!*negated));
                    }
                }
                bool_datum(*negated)
            }
            Expr::Like {
                expr,
                pattern,
                negated,
                escape,
            } => {
                let v = expr.eval(row, env)?;
                let p = pattern.eval(row, env)?;
                if v == Datum::Null || p == Datum::Null {
                    return Ok(Datum::Null);
                }
                let matched = like(
                    &types::datum_to_text(&v),
                    &types::datum_to_text(&p),
                    *escape,
                );
                bool_datum(matched != *negated)
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                let subject = match operand {
                    Some(o) => Some(o.eval(row, env)?),
                    None => None,
                };
                for (when, then) in whens {
                    let w = when.eval(row, env)?;
                    let hit = match &subject {
                        Some(s) => compare(s, &w) == Some(Ordering::Equal),
                        None => to_bool(&w) == Some(true),
                    };
                    if hit {
                        return then.eval(row, env);
                    }
                }
                match otherwise {
                    Some(e) => e.eval(row, env)?,
                    None => Datum::Null,
                }
            }
            Expr::Call(func, args) => call(func, args, row, env)?,
        })
    }

    /// Whether the expression reads no row column and no aggregate (a constant per execution).
    pub fn is_row_independent(&self) -> bool {
        let mut independent = true;
        self.walk(&mut |e| {
            if matches!(e, Expr::Column(_) | Expr::Agg(_) | Expr::Window(_)) {
                independent = false;
            }
        });
        independent
    }

    /// Rebuilds the expression with every `Column(i)` replaced by `f(i)`; None when `f`
    /// refuses a column.
    pub fn try_map_columns(&self, f: &mut dyn FnMut(usize) -> Option<Expr>) -> Option<Expr> {
        let mut map = |e: &Expr| e.try_map_columns(f);
        Some(match self {
            Expr::Column(i) => return f(*i),
            Expr::Literal(_)
            | Expr::Param(_)
            | Expr::Agg(_)
            | Expr::Window(_)
            | Expr::Prefix(_)
            | Expr::Outer(..)
            | Expr::Session(_) => self.clone(),
            Expr::Neg(e) => Expr::Neg(Box::new(map(e)?)),
            Expr::Not(e) => Expr::Not(Box::new(map(e)?)),
            Expr::IsNull(e, n) => Expr::IsNull(Box::new(map(e)?), *n),
            Expr::IsTrue(e, n) => Expr::IsTrue(Box::new(map(e)?), *n),
            Expr::Binary(op, l, r) => Expr::Binary(*op, Box::new(map(l)?), Box::new(map(r)?)),
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => Expr::Between {
                expr: Box::new(map(expr)?),
                low: Box::new(map(low)?),
                high: Box::new(map(high)?),
                negated: *negated,
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: Box::new(map(expr)?),
                list: list.iter().map(&mut map).collect::<Option<_>>()?,
                negated: *negated,
            },
            Expr::TupleIn {
                exprs,
                list,
                negated,
            } => Expr::TupleIn {
                exprs: exprs.iter().map(&mut map).collect::<Option<_>>()?,
                list: list
                    .iter()
                    .map(|t| t.iter().map(&mut map).collect::<Option<Vec<_>>>())
                    .collect::<Option<_>>()?,
                negated: *negated,
            },
            Expr::Like {
                expr,
                pattern,
                negated,
                escape,
            } => Expr::Like {
                expr: Box::new(map(expr)?),
                pattern: Box::new(map(pattern)?),
                negated: *negated,
                escape: *escape,
            },
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => Expr::Case {
                operand: match operand {
                    Some(o) => Some(Box::new(map(o)?)),
                    None => None,
                },
                whens: whens
                    .iter()
                    .map(|(w, t)| Some((map(w)?, map(t)?)))
                    .collect::<Option<_>>()?,
                otherwise: match otherwise {
                    Some(o) => Some(Box::new(map(o)?)),
                    None => None,
                },
            },
            Expr::Call(func, args) => Expr::Call(
                func.clone(),
                args.iter().map(&mut map).collect::<Option<_>>()?,
            ),
        })
    }

    /// The AND of `conjuncts`, or None when there are none: a balanced tree, conjuncts in
    /// order, so that no walk of it recurses once per conjunct.
    pub fn conjoin(mut conjuncts: Vec<Expr>) -> Option<Expr> {
        if conjuncts.len() <= 1 {
            return conjuncts.pop();
        }
        let right = conjuncts.split_off(conjuncts.len() / 2);
        Some(Expr::Binary(
            BinaryOp::And,
            Box::new(Expr::conjoin(conjuncts)?),
            Box::new(Expr::conjoin(right)?),
        ))
    }

    /// The columns the expression reads.
    pub fn columns(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Column(i) = e {
                out.push(*i);
            }
        });
        out
    }

    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Neg(e) | Expr::Not(e) | Expr::IsNull(e, _) | Expr::IsTrue(e, _) => e.walk(f),
            Expr::Binary(_, l, r) => {
                l.walk(f);
                r.walk(f);
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                expr.walk(f);
                low.walk(f);
                high.walk(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.walk(f);
                list.iter().for_each(|e| e.walk(f));
            }
            Expr::TupleIn { exprs, list, .. } => {
                exprs.iter().for_each(|e| e.walk(f));
                list.iter().flatten().for_each(|e| e.walk(f));
            }
            Expr::Like { expr, pattern, .. } => {
                expr.walk(f);
                pattern.walk(f);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    o.walk(f);
                }
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(o) = otherwise {
                    o.walk(f);
                }
            }
            Expr::Call(_, args) => args.iter().for_each(|e| e.walk(f)),
            Expr::Column(_)
            | Expr::Literal(_)
            | Expr::Param(_)
            | Expr::Agg(_)
            | Expr::Window(_)
            | Expr::Prefix(_)
            | Expr::Outer(..)
            | Expr::Session(_) => {}
        }
    }

    /// Visits the expression and its operands, outermost first, letting `f` rewrite each; the
    /// operands of an expression that `f` rewrote (it returns true) are not visited.
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr) -> bool) {
        if f(self) {
            return;
        }
        match self {
            Expr::Neg(e) | Expr::Not(e) | Expr::IsNull(e, _) | Expr::IsTrue(e, _) => e.walk_mut(f),
            Expr::Binary(_, l, r) => {
                l.walk_mut(f);
                r.walk_mut(f);
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                expr.walk_mut(f);
                low.walk_mut(f);
                high.walk_mut(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.walk_mut(f);
                list.iter_mut().for_each(|e| e.walk_mut(f));
            }
            Expr::TupleIn { exprs, list, .. } => {
                exprs.iter_mut().for_each(|e| e.walk_mut(f));
                list.iter_mut().flatten().for_each(|e| e.walk_mut(f));
            }
            Expr::Like { expr, pattern, .. } => {
                expr.walk_mut(f);
                pattern.walk_mut(f);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    o.walk_mut(f);
                }
                for (w, t) in whens {
                    w.walk_mut(f);
                    t.walk_mut(f);
                }
                if let Some(o) = otherwise {
                    o.walk_mut(f);
                }
            }
            Expr::Call(_, args) => args.iter_mut().for_each(|e| e.walk_mut(f)),
            Expr::Column(_)
            | Expr::Literal(_)
            | Expr::Param(_)
            | Expr::Agg(_)
            | Expr::Window(_)
            | Expr::Prefix(_)
            | Expr::Outer(..)
            | Expr::Session(_) => {}
        }
    }

    /// Splits an AND tree into its conjuncts.
    pub fn conjuncts(self) -> Vec<Expr> {
        match self {
            Expr::Binary(BinaryOp::And, l, r) => {
                let mut out = l.conjuncts();
                out.extend(r.conjuncts());
                out
            }
            other => vec![other],
        }
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    use super::*;

    fn eval(e: &Expr) -> Datum {
        e.eval(&[], &ParamsEnv(&[])).unwrap()
    }

    fn lit(i: i64) -> Box<Expr> {
        Box::new(Expr::Literal(Datum::Int(i)))
    }

    #[test]
    fn arithmetic_follows_mysql_types() {
        assert_eq!(
            eval(&Expr::Binary(BinaryOp::Plus, lit(1), lit(2))),
            Datum::Int(3)
        );
        assert_eq!(
            eval(&Expr::Binary(BinaryOp::Divide, lit(1), lit(4))).to_owned(),
            Datum::Decimal(Decimal::new(2500, 4))
        );
        assert_eq!(
            eval(&Expr::Binary(BinaryOp::Divide, lit(1), lit(0))),
            Datum::Null
        );
        let overflow = Expr::Binary(BinaryOp::Plus, lit(i64::MAX), lit(1));
        assert_eq!(
            overflow.eval(&[], &ParamsEnv(&[])).unwrap_err().code(),
            1690
        );
    }

    #[test]
    fn three_valued_logic() {
        let null = Box::new(Expr::Literal(Datum::Null));
        assert_eq!(
            eval(&Expr::Binary(BinaryOp::And, null.clone(), lit(0))),
            Datum::Int(0)
        );
        assert_eq!(
            eval(&Expr::Binary(BinaryOp::Or, null.clone(), lit(1))),
            Datum::Int(1)
        );
        assert_eq!(eval(&Expr::Binary(BinaryOp::Eq, null, lit(1))), Datum::Null);
    }

    #[test]
    fn like_patterns() {
        assert!(like(b"hello", b"h%o", b'\\'));
        assert!(like(b"hello", b"_ello", b'\\'));
        assert!(!like(b"hello", b"h%x", b'\\'));
        assert!(like(b"50%", b"50\\%", b'\\'));
        assert!(!like(b"500", b"50\\%", b'\\'));
        assert!(like(b"", b"%", b'\\'));
        // `_` is one character, however many bytes it takes.
        assert!(like("é".as_bytes(), b"_", b'\\'));
        assert!(like("aéb".as_bytes(), b"a_b", b'\\'));
        assert!(like("xéé".as_bytes(), "%é".as_bytes(), b'\\'));
        assert!(!like("é".as_bytes(), b"__", b'\\'));
    }
}
