//! Bound expressions: what a parsed expression becomes once its columns, parameters and
//! functions are resolved, and how it is evaluated over one row.

use std::cmp::Ordering;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use strata_codec::Datum;

use crate::api::ColumnType;
use crate::error::{self, Result};
use crate::types::{self, compare, to_bool, to_decimal, to_f64, to_i64, SqlType, TypeKind};

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    CountStar,
    Sum,
    Avg,
    Min,
    Max,
}

/// An aggregate call of a query; expressions refer to its result by position.
#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    pub arg: Expr,
    pub distinct: bool,
}

/// Values that depend on the session, resolved at execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionValue {
    Database,
    LastInsertId,
    ConnectionId,
    User,
    Version,
    Now,
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
    CastSigned,
    CastUnsigned,
    CastChar,
    CastDecimal(u32, u32),
    CastDouble,
    CastDate,
    CastDateTime,
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
    Session(SessionValue),
}

/// What evaluation may consult besides the row.
pub trait EvalEnv {
    fn param(&self, index: usize) -> Datum;
    fn aggregate(&self, index: usize) -> Datum;
    fn session_value(&self, value: &SessionValue) -> Datum;
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
            if matches!(e, Expr::Column(_) | Expr::Agg(_)) {
                independent = false;
            }
        });
        independent
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

/// The type of an expression's result, as described to clients.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultType {
    pub column_type: ColumnType,
    pub length: u32,
    pub decimals: u8,
    pub unsigned: bool,
    pub not_null: bool,
}

impl ResultType {
    pub fn of(column_type: ColumnType, length: u32, decimals: u8) -> ResultType {
        ResultType {
            column_type,
            length,
            decimals,
            unsigned: false,
            not_null: false,
        }
    }

    pub fn from_sql(ty: &SqlType, not_null: bool) -> ResultType {
        let decimals = match ty.kind {
            TypeKind::Decimal | TypeKind::DateTime | TypeKind::Timestamp => ty.scale as u8,
            TypeKind::Float | TypeKind::Double => 31,
            _ => 0,
        };
        ResultType {
            column_type: ty.column_type(),
            length: ty.display_length(),
            decimals,
            unsigned: ty.unsigned,
            not_null,
        }
    }

    fn is_integer(&self) -> bool {
        matches!(
            self.column_type,
            ColumnType::Tiny
                | ColumnType::Short
                | ColumnType::Int24
                | ColumnType::Long
                | ColumnType::LongLong
        )
    }
}

fn negate(v: Datum) -> Result<Datum> {
    Ok(match v {
        Datum::Null => Datum::Null,
        Datum::Int(i) => Datum::Int(
            i.checked_neg()
                .ok_or_else(|| error::value_out_of_range("BIGINT", "-"))?,
        ),
        Datum::UInt(u) => {
            if u <= i64::MAX as u64 + 1 {
                Datum::Int((u as i128).wrapping_neg() as i64)
            } else {
                return Err(error::value_out_of_range("BIGINT", "-"));
            }
        }
        Datum::Float(f) => Datum::Float(-f),
        Datum::Decimal(d) => Datum::Decimal(-d),
        other => Datum::Float(-to_f64(&other).unwrap_or(0.0)),
    })
}

#[derive(PartialEq, PartialOrd)]
enum NumClass {
    Int,
    Decimal,
    Float,
}

fn num_class(d: &Datum) -> NumClass {
    match d {
        Datum::Int(_) | Datum::UInt(_) => NumClass::Int,
        Datum::Decimal(_) => NumClass::Decimal,
        Datum::Bytes(b) => {
            let prefix = types::numeric_prefix(b);
            if prefix.contains(['.', 'e', 'E']) {
                NumClass::Float
            } else {
                NumClass::Int
            }
        }
        _ => NumClass::Float,
    }
}

fn arithmetic(op: BinaryOp, a: &Datum, b: &Datum, strict: bool) -> Result<Datum> {
    let by_zero = || {
        if strict {
            Err(error::division_by_zero())
        } else {
            Ok(Datum::Null)
        }
    };
    let class = std::cmp::max_by(num_class(a), num_class(b), |x, y| {
        x.partial_cmp(y).unwrap_or(Ordering::Equal)
    });
    let overflow = || error::value_out_of_range("BIGINT", "arithmetic");
    if op == BinaryOp::Divide {
        let d = to_decimal(b).unwrap_or_default();
        if class == NumClass::Float {
            let y = to_f64(b).unwrap_or(0.0);
            return Ok(if y == 0.0 {
                Datum::Null
            } else {
                Datum::Float(to_f64(a).unwrap_or(0.0) / y)
            });
        }
        if d.is_zero() {
            return by_zero();
        }
        let x = to_decimal(a).unwrap_or_default();
        let scale = x.scale() + DIV_PRECISION_INCREMENT;
        let mut q = x.checked_div(d).ok_or_else(overflow)?.round_dp(scale);
        q.rescale(scale);
        return Ok(Datum::Decimal(q));
    }
    match class {
        NumClass::Int => {
            let (x, y) = (int_value(a), int_value(b));
            let r = match op {
                BinaryOp::Plus => x.checked_add(y),
                BinaryOp::Minus => x.checked_sub(y),
                BinaryOp::Multiply => x.checked_mul(y),
                BinaryOp::IntDivide => {
                    if y == 0 {
                        return by_zero();
                    }
                    x.checked_div(y)
                }
                BinaryOp::Modulo => {
                    if y == 0 {
                        return by_zero();
                    }
                    x.checked_rem(y)
                }
                _ => unreachable!("arithmetic operator"),
            }
            .ok_or_else(overflow)?;
            // As in MySQL: signed operands give a signed BIGINT, an unsigned one an unsigned.
            let unsigned = matches!(a, Datum::UInt(_)) || matches!(b, Datum::UInt(_));
            if unsigned {
                u64::try_from(r)
                    .map(Datum::UInt)
                    .map_err(|_| error::value_out_of_range("BIGINT UNSIGNED", "arithmetic"))
            } else {
                i64::try_from(r).map(Datum::Int).map_err(|_| overflow())
            }
        }
        NumClass::Decimal => {
            let (x, y) = (
                to_decimal(a).unwrap_or_default(),
                to_decimal(b).unwrap_or_default(),
            );
            let r = match op {
                BinaryOp::Plus => x.checked_add(y),
                BinaryOp::Minus => x.checked_sub(y),
                BinaryOp::Multiply => x.checked_mul(y),
                BinaryOp::IntDivide => {
                    if y.is_zero() {
                        return by_zero();
                    }
                    return Ok(Datum::Int((x / y).trunc().to_i64().ok_or_else(overflow)?));
                }
                BinaryOp::Modulo => {
                    if y.is_zero() {
                        return by_zero();
                    }
                    x.checked_rem(y)
                }
                _ => unreachable!("arithmetic operator"),
            };
            Ok(Datum::Decimal(r.ok_or_else(|| {
                error::value_out_of_range("DECIMAL", "arithmetic")
            })?))
        }
        NumClass::Float => {
            let (x, y) = (to_f64(a).unwrap_or(0.0), to_f64(b).unwrap_or(0.0));
            Ok(match op {
                BinaryOp::Plus => Datum::Float(x + y),
                BinaryOp::Minus => Datum::Float(x - y),
                BinaryOp::Multiply => Datum::Float(x * y),
                BinaryOp::IntDivide if y == 0.0 => return by_zero(),
                BinaryOp::IntDivide => Datum::Int((x / y).trunc() as i64),
                BinaryOp::Modulo if y == 0.0 => return by_zero(),
                BinaryOp::Modulo => Datum::Float(x % y),
                _ => unreachable!("arithmetic operator"),
            })
        }
    }
}

fn int_value(d: &Datum) -> i128 {
    match d {
        Datum::Int(i) => *i as i128,
        Datum::UInt(u) => *u as i128,
        other => to_i64(other).unwrap_or(0) as i128,
    }
}

fn binary(op: BinaryOp, l: &Expr, r: &Expr, row: &[Datum], env: &dyn EvalEnv) -> Result<Datum> {
    match op {
        BinaryOp::And => {
            let a = to_bool(&l.eval(row, env)?);
            if a == Some(false) {
                return Ok(bool_datum(false));
            }
            let b = to_bool(&r.eval(row, env)?);
            return Ok(match (a, b) {
                (_, Some(false)) => bool_datum(false),
                (Some(true), Some(true)) => bool_datum(true),
                _ => Datum::Null,
            });
        }
        BinaryOp::Or => {
            let a = to_bool(&l.eval(row, env)?);
            if a == Some(true) {
                return Ok(bool_datum(true));
            }
            let b = to_bool(&r.eval(row, env)?);
            return Ok(match (a, b) {
                (_, Some(true)) => bool_datum(true),
                (Some(false), Some(false)) => bool_datum(false),
                _ => Datum::Null,
            });
        }
        _ => {}
    }
    let a = l.eval(row, env)?;
    let b = r.eval(row, env)?;
    if op == BinaryOp::NullSafeEq {
        return Ok(bool_datum(match (&a, &b) {
            (Datum::Null, Datum::Null) => true,
            (Datum::Null, _) | (_, Datum::Null) => false,
            _ => compare(&a, &b) == Some(Ordering::Equal),
        }));
    }
    if a == Datum::Null || b == Datum::Null {
        return Ok(Datum::Null);
    }
    Ok(match op {
        BinaryOp::Eq => opt_bool(compare(&a, &b).map(|o| o == Ordering::Equal)),
        BinaryOp::NotEq => opt_bool(compare(&a, &b).map(|o| o != Ordering::Equal)),
        BinaryOp::Lt => opt_bool(compare(&a, &b).map(|o| o == Ordering::Less)),
        BinaryOp::LtEq => opt_bool(compare(&a, &b).map(|o| o != Ordering::Greater)),
        BinaryOp::Gt => opt_bool(compare(&a, &b).map(|o| o == Ordering::Greater)),
        BinaryOp::GtEq => opt_bool(compare(&a, &b).map(|o| o != Ordering::Less)),
        BinaryOp::Xor => opt_bool(match (to_bool(&a), to_bool(&b)) {
            (Some(x), Some(y)) => Some(x != y),
            _ => None,
        }),
        BinaryOp::BitAnd => Datum::UInt((int_value(&a) as u64) & (int_value(&b) as u64)),
        BinaryOp::BitOr => Datum::UInt((int_value(&a) as u64) | (int_value(&b) as u64)),
        _ => arithmetic(op, &a, &b, env.division_by_zero_is_error())?,
    })
}

/// SQL LIKE with `%`, `_` and an escape character; bytewise (binary collation).
pub fn like(text: &[u8], pattern: &[u8], escape: u8) -> bool {
    let (mut t, mut p) = (0usize, 0usize);
    let (mut star_p, mut star_t) = (usize::MAX, 0usize);
    while t < text.len() {
        if p < pattern.len() {
            let c = pattern[p];
            if c == escape && p + 1 < pattern.len() {
                if pattern[p + 1] == text[t] {
                    p += 2;
                    t += 1;
                    continue;
                }
            } else if c == b'%' {
                star_p = p;
                star_t = t;
                p += 1;
                continue;
            } else if c == b'_' || c == text[t] {
                p += 1;
                t += 1;
                continue;
            }
        }
        if star_p != usize::MAX {
            p = star_p + 1;
            star_t += 1;
            t = star_t;
            continue;
        }
        return false;
    }
    while p < pattern.len() && pattern[p] == b'%' {
        p += 1;
    }
    p == pattern.len()
}

fn call(func: &Func, args: &[Expr], row: &[Datum], env: &dyn EvalEnv) -> Result<Datum> {
    // Functions that do not evaluate every argument first.
    match func {
        Func::Coalesce => {
            for a in args {
                let v = a.eval(row, env)?;
                if v != Datum::Null {
                    return Ok(v);
                }
            }
            return Ok(Datum::Null);
        }
        Func::If => {
            let c = to_bool(&args[0].eval(row, env)?) == Some(true);
            return args[if c { 1 } else { 2 }].eval(row, env);
        }
        _ => {}
    }
    let values: Vec<Datum> = args
        .iter()
        .map(|a| a.eval(row, env))
        .collect::<Result<_>>()?;
    let first = values.first().cloned().unwrap_or(Datum::Null);
    let null_in = values.contains(&Datum::Null);
    let text = |d: &Datum| types::datum_to_text(d);
    Ok(match func {
        Func::NullIf => {
            if compare(&values[0], &values[1]) == Some(Ordering::Equal) {
                Datum::Null
            } else {
                first
            }
        }
        Func::Greatest | Func::Least => {
            if null_in {
                return Ok(Datum::Null);
            }
            let want = if *func == Func::Greatest {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            let mut best = first;
            for v in &values[1..] {
                if compare(v, &best) == Some(want) {
                    best = v.clone();
                }
            }
            best
        }
        _ if null_in => Datum::Null,
        Func::Concat => Datum::Bytes(values.iter().flat_map(text).collect()),
        Func::Length => Datum::Int(text(&first).len() as i64),
        Func::CharLength => Datum::Int(types::char_length(&text(&first)) as i64),
        Func::Upper => Datum::Bytes(
            String::from_utf8_lossy(&text(&first))
                .to_uppercase()
                .into_bytes(),
        ),
        Func::Lower => Datum::Bytes(
            String::from_utf8_lossy(&text(&first))
                .to_lowercase()
                .into_bytes(),
        ),
        Func::Trim => Datum::Bytes(
            String::from_utf8_lossy(&text(&first))
                .trim()
                .as_bytes()
                .to_vec(),
        ),
        Func::Substring => {
            let s = String::from_utf8_lossy(&text(&first)).to_string();
            let chars: Vec<char> = s.chars().collect();
            let pos = to_i64(&values[1]).unwrap_or(0);
            let start = if pos > 0 {
                (pos - 1) as usize
            } else if pos < 0 {
                chars.len().saturating_sub(pos.unsigned_abs() as usize)
            } else {
                return Ok(Datum::Bytes(Vec::new()));
            };
            let len = values
                .get(2)
                .map(|v| to_i64(v).unwrap_or(0).max(0) as usize)
                .unwrap_or(usize::MAX);
            Datum::Bytes(
                chars
                    .iter()
                    .skip(start)
                    .take(len)
                    .collect::<String>()
                    .into_bytes(),
            )
        }
        Func::Abs => match first {
            Datum::Int(i) => Datum::Int(
                i.checked_abs()
                    .ok_or_else(|| error::value_out_of_range("BIGINT", "abs"))?,
            ),
            Datum::UInt(u) => Datum::UInt(u),
            Datum::Decimal(d) => Datum::Decimal(d.abs()),
            other => Datum::Float(to_f64(&other).unwrap_or(0.0).abs()),
        },
        Func::Round => {
            let places = values.get(1).and_then(to_i64).unwrap_or(0);
            match first {
                Datum::Int(_) | Datum::UInt(_) if places >= 0 => first,
                Datum::Float(f) => {
                    let m = 10f64.powi(places as i32);
                    Datum::Float((f * m).round() / m)
                }
                other => {
                    let d = to_decimal(&other).unwrap_or_default();
                    Datum::Decimal(d.round_dp_with_strategy(
                        places.max(0) as u32,
                        rust_decimal::RoundingStrategy::MidpointAwayFromZero,
                    ))
                }
            }
        }
        Func::Floor | Func::Ceil => match first {
            Datum::Int(_) | Datum::UInt(_) => first,
            Datum::Decimal(d) => {
                let r = if *func == Func::Floor {
                    d.floor()
                } else {
                    d.ceil()
                };
                r.to_i64().map(Datum::Int).unwrap_or(Datum::Decimal(r))
            }
            other => {
                let f = to_f64(&other).unwrap_or(0.0);
                Datum::Float(if *func == Func::Floor {
                    f.floor()
                } else {
                    f.ceil()
                })
            }
        },
        Func::Power => Datum::Float(
            to_f64(&first)
                .unwrap_or(0.0)
                .powf(to_f64(&values[1]).unwrap_or(0.0)),
        ),
        Func::Sqrt => {
            let f = to_f64(&first).unwrap_or(0.0);
            if f < 0.0 {
                Datum::Null
            } else {
                Datum::Float(f.sqrt())
            }
        }
        Func::Mod => arithmetic(
            BinaryOp::Modulo,
            &values[0],
            &values[1],
            env.division_by_zero_is_error(),
        )?,
        Func::CastSigned => Datum::Int(to_i64(&first).unwrap_or(0)),
        Func::CastUnsigned => Datum::UInt(to_i64(&first).unwrap_or(0) as u64),
        Func::CastChar => Datum::Bytes(text(&first)),
        Func::CastDouble => Datum::Float(to_f64(&first).unwrap_or(0.0)),
        Func::CastDecimal(precision, scale) => {
            let ty = SqlType {
                kind: TypeKind::Decimal,
                unsigned: false,
                length: *precision,
                scale: *scale,
            };
            ty.coerce(first, "cast")?
        }
        Func::CastDate => types::to_datetime(&first)
            .map(|dt| Datum::Date(dt.date()))
            .unwrap_or(Datum::Null),
        Func::CastDateTime => types::to_datetime(&first)
            .map(Datum::DateTime)
            .unwrap_or(Datum::Null),
        Func::Coalesce | Func::If => unreachable!("handled above"),
    })
}

/// Infers the client-visible type of an expression.
pub fn result_type(expr: &Expr, columns: &[ResultType], aggs: &[AggCall]) -> ResultType {
    let long = ResultType::of(ColumnType::LongLong, 21, 0);
    let string = ResultType::of(ColumnType::VarString, 255 * 4, 0);
    match expr {
        Expr::Column(i) => columns.get(*i).cloned().unwrap_or(string),
        Expr::Literal(d) => datum_type(d),
        Expr::Param(_) => string,
        Expr::Session(
            SessionValue::LastInsertId
            | SessionValue::ConnectionId
            | SessionValue::FoundRows
            | SessionValue::RowCount,
        ) => ResultType {
            unsigned: true,
            ..long
        },
        Expr::Session(SessionValue::Now) => ResultType::of(ColumnType::DateTime, 19, 0),
        Expr::Session(SessionValue::CurDate) => ResultType::of(ColumnType::Date, 10, 0),
        Expr::Session(_) => string,
        Expr::Not(_)
        | Expr::IsNull(..)
        | Expr::IsTrue(..)
        | Expr::Between { .. }
        | Expr::InList { .. } => long,
        Expr::TupleIn { .. } | Expr::Like { .. } => long,
        Expr::Neg(e) => result_type(e, columns, aggs),
        Expr::Binary(op, l, r) => {
            use BinaryOp::*;
            match op {
                Eq | NotEq | Lt | LtEq | Gt | GtEq | NullSafeEq | And | Or | Xor | IntDivide => {
                    long
                }
                BitAnd | BitOr => ResultType {
                    unsigned: true,
                    ..long
                },
                _ => {
                    let (a, b) = (result_type(l, columns, aggs), result_type(r, columns, aggs));
                    numeric_result(*op, &a, &b)
                }
            }
        }
        Expr::Case {
            whens, otherwise, ..
        } => whens
            .first()
            .map(|(_, t)| result_type(t, columns, aggs))
            .or_else(|| otherwise.as_ref().map(|o| result_type(o, columns, aggs)))
            .unwrap_or(string),
        Expr::Call(func, args) => match func {
            Func::Length | Func::CharLength | Func::CastSigned => long,
            Func::CastUnsigned => ResultType {
                unsigned: true,
                ..long
            },
            Func::Power | Func::Sqrt | Func::CastDouble => {
                ResultType::of(ColumnType::Double, 22, 31)
            }
            Func::CastDecimal(p, s) => ResultType::of(ColumnType::NewDecimal, p + 2, *s as u8),
            Func::CastDate => ResultType::of(ColumnType::Date, 10, 0),
            Func::CastDateTime => ResultType::of(ColumnType::DateTime, 19, 0),
            Func::Abs | Func::Floor | Func::Ceil | Func::Round | Func::Mod => args
                .first()
                .map(|a| result_type(a, columns, aggs))
                .unwrap_or(long),
            Func::Coalesce | Func::Greatest | Func::Least | Func::NullIf => args
                .first()
                .map(|a| result_type(a, columns, aggs))
                .unwrap_or(string),
            Func::If => args
                .get(1)
                .map(|a| result_type(a, columns, aggs))
                .unwrap_or(string),
            _ => string,
        },
        Expr::Agg(i) => {
            let call = &aggs[*i];
            let arg = result_type(&call.arg, columns, aggs);
            match call.func {
                AggFunc::Count | AggFunc::CountStar => ResultType {
                    not_null: true,
                    ..long
                },
                AggFunc::Min | AggFunc::Max => ResultType {
                    not_null: false,
                    ..arg
                },
                AggFunc::Sum
                    if matches!(arg.column_type, ColumnType::Double | ColumnType::Float) =>
                {
                    ResultType::of(ColumnType::Double, 22, 31)
                }
                AggFunc::Sum => ResultType::of(ColumnType::NewDecimal, 65, arg.decimals.min(30)),
                AggFunc::Avg
                    if matches!(arg.column_type, ColumnType::Double | ColumnType::Float) =>
                {
                    ResultType::of(ColumnType::Double, 22, 31)
                }
                AggFunc::Avg => ResultType::of(
                    ColumnType::NewDecimal,
                    65,
                    (arg.decimals as u32 + DIV_PRECISION_INCREMENT).min(30) as u8,
                ),
            }
        }
    }
}

fn numeric_result(op: BinaryOp, a: &ResultType, b: &ResultType) -> ResultType {
    let is_float = |t: &ResultType| {
        matches!(
            t.column_type,
            ColumnType::Double
                | ColumnType::Float
                | ColumnType::VarString
                | ColumnType::String
                | ColumnType::Blob
        )
    };
    if is_float(a) || is_float(b) {
        return ResultType::of(ColumnType::Double, 22, 31);
    }
    if a.is_integer() && b.is_integer() && op != BinaryOp::Divide {
        return ResultType::of(ColumnType::LongLong, 21, 0);
    }
    let decimals = match op {
        BinaryOp::Divide => a.decimals as u32 + DIV_PRECISION_INCREMENT,
        BinaryOp::Multiply => a.decimals as u32 + b.decimals as u32,
        _ => a.decimals.max(b.decimals) as u32,
    };
    ResultType::of(ColumnType::NewDecimal, 65, decimals.min(30) as u8)
}

/// The type of a literal value.
pub fn datum_type(d: &Datum) -> ResultType {
    match d {
        Datum::Null => ResultType::of(ColumnType::Null, 0, 0),
        Datum::Int(i) => ResultType {
            not_null: true,
            ..ResultType::of(ColumnType::LongLong, i.to_string().len() as u32, 0)
        },
        Datum::UInt(u) => ResultType {
            unsigned: true,
            not_null: true,
            ..ResultType::of(ColumnType::LongLong, u.to_string().len() as u32, 0)
        },
        Datum::Float(_) => ResultType::of(ColumnType::Double, 22, 31),
        Datum::Decimal(d) => ResultType::of(
            ColumnType::NewDecimal,
            d.to_string().len() as u32,
            d.scale() as u8,
        ),
        Datum::Bytes(b) => ResultType {
            not_null: true,
            ..ResultType::of(ColumnType::VarString, (b.len() as u32).max(1) * 4, 31)
        },
        Datum::Date(_) => ResultType::of(ColumnType::Date, 10, 0),
        Datum::DateTime(_) => ResultType::of(ColumnType::DateTime, 26, 0),
    }
}

/// Converts a value to what a column of `ty` shows (used for binary results and SUM scale).
pub fn conform(value: Datum, ty: &ResultType) -> Datum {
    match (ty.column_type, value) {
        (ColumnType::NewDecimal, Datum::Int(i)) => Datum::Decimal(Decimal::from(i)),
        (ColumnType::NewDecimal, Datum::UInt(u)) => Datum::Decimal(Decimal::from(u)),
        (_, v) => v,
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(overflow.eval(&[], &ParamsEnv(&[])).unwrap_err().code, 1690);
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
    }
}
