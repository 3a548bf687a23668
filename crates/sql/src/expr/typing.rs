//! The types of expression results, as described to clients.

use rust_decimal::Decimal;
use strata_codec::Datum;

use crate::api::ColumnType;
use crate::types::{SqlType, TypeKind};

use super::*;

/// The type of an expression's result, as described to clients.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultType {
    pub column_type: ColumnType,
    pub length: u32,
    pub decimals: u8,
    pub unsigned: bool,
    pub not_null: bool,
    /// A binary string (bytes, the binary character set): a BINARY, VARBINARY or BLOB column,
    /// `X'…'`, `_binary'…'`, CAST(… AS BINARY), UNHEX, and string functions of one.
    pub binary: bool,
}

impl ResultType {
    pub fn of(column_type: ColumnType, length: u32, decimals: u8) -> ResultType {
        ResultType {
            column_type,
            length,
            decimals,
            unsigned: false,
            not_null: false,
            binary: false,
        }
    }

    /// A binary string of up to `length` bytes.
    pub fn binary_string(length: u32) -> ResultType {
        ResultType {
            binary: true,
            ..ResultType::of(ColumnType::VarString, length, 0)
        }
    }

    pub fn from_sql(ty: &SqlType, not_null: bool) -> ResultType {
        let decimals = match ty.kind {
            TypeKind::Decimal | TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time => {
                ty.scale as u8
            }
            TypeKind::Float | TypeKind::Double => 31,
            _ => 0,
        };
        ResultType {
            column_type: ty.column_type(),
            length: ty.display_length(),
            decimals,
            unsigned: ty.unsigned,
            not_null,
            binary: ty.binary,
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

/// Infers the client-visible type of an expression.
pub fn result_type(expr: &Expr, columns: &[ResultType], aggs: &[AggCall]) -> ResultType {
    typed(
        expr,
        &Typing {
            columns,
            aggs,
            windows: &[],
        },
    )
}

/// What the type of an expression depends on besides itself.
pub struct Typing<'a> {
    pub columns: &'a [ResultType],
    pub aggs: &'a [AggCall],
    /// The types of the query's window calls (`Expr::Window`).
    pub windows: &'a [ResultType],
}

/// Infers the client-visible type of an expression that may read window calls.
pub fn typed(expr: &Expr, env: &Typing<'_>) -> ResultType {
    let (columns, aggs) = (env.columns, env.aggs);
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
        Expr::Session(SessionValue::Now(fsp)) => ResultType::of(
            ColumnType::DateTime,
            19 + if *fsp > 0 { u32::from(*fsp) + 1 } else { 0 },
            *fsp,
        ),
        Expr::Session(SessionValue::CurDate) => ResultType::of(ColumnType::Date, 10, 0),
        Expr::Session(SessionValue::CurTime(fsp)) => ResultType::of(
            ColumnType::Time,
            10 + if *fsp > 0 { u32::from(*fsp) + 1 } else { 0 },
            *fsp,
        ),
        Expr::Session(_) => string,
        Expr::Not(_)
        | Expr::IsNull(..)
        | Expr::IsTrue(..)
        | Expr::Between { .. }
        | Expr::InList { .. } => long,
        Expr::TupleIn { .. } | Expr::Like { .. } => long,
        Expr::Neg(e) => typed(e, env),
        Expr::Binary(op, l, r) => {
            use BinaryOp::*;
            match op {
                Eq | NotEq | Lt | LtEq | Gt | GtEq | NullSafeEq | And | Or | Xor | IntDivide => {
                    long
                }
                BitAnd | BitOr | BitXor | ShiftLeft | ShiftRight => ResultType {
                    unsigned: true,
                    ..long
                },
                _ => {
                    let (a, b) = (typed(l, env), typed(r, env));
                    numeric_result(*op, &a, &b)
                }
            }
        }
        Expr::Case {
            whens, otherwise, ..
        } => {
            let branches: Vec<ResultType> = whens
                .iter()
                .map(|(_, t)| t)
                .chain(otherwise.as_deref())
                .map(|e| typed(e, env))
                .collect();
            if branches.is_empty() {
                string
            } else {
                merged_type(&branches)
            }
        }
        Expr::Call(func, args) => match func {
            Func::Length | Func::CharLength | Func::CastSigned | Func::Sleep => long,
            Func::CastUnsigned => ResultType {
                unsigned: true,
                ..long
            },
            Func::Power | Func::Sqrt | Func::CastDouble => {
                ResultType::of(ColumnType::Double, 22, 31)
            }
            Func::CastDecimal(p, s) => ResultType::of(ColumnType::NewDecimal, p + 2, *s as u8),
            Func::CastBinary => {
                ResultType::binary_string(args.first().map_or(255, |a| typed(a, env).length.max(1)))
            }
            Func::Encoding(EncodingFunc::Unhex) => ResultType::binary_string(255),
            Func::CastDate => ResultType::of(ColumnType::Date, 10, 0),
            Func::CastDateTime => ResultType::of(ColumnType::DateTime, 19, 0),
            Func::Abs | Func::Mod => args.first().map(|a| typed(a, env)).unwrap_or(long),
            // Of an exact number, FLOOR and CEIL give an integer and ROUND keeps as many
            // decimals as it is asked for (none by default), as in MySQL.
            Func::Floor | Func::Ceil | Func::Round => {
                let ty = args.first().map(|a| typed(a, env)).unwrap_or(long.clone());
                match (func, args.get(1)) {
                    _ if ty.column_type != ColumnType::NewDecimal => ty,
                    (Func::Floor | Func::Ceil, _) => long,
                    (_, None) => ResultType { decimals: 0, ..ty },
                    (_, Some(Expr::Literal(places))) => ResultType {
                        decimals: crate::types::to_i64(places).unwrap_or(0).clamp(0, 30) as u8,
                        ..ty
                    },
                    _ => ty,
                }
            }
            Func::NullIf => args.first().map(|a| typed(a, env)).unwrap_or(string),
            Func::Coalesce | Func::Greatest | Func::Least | Func::If => {
                // IF's first argument is its condition; the others are its results.
                let skip = usize::from(*func == Func::If);
                let results: Vec<ResultType> =
                    args.iter().skip(skip).map(|a| typed(a, env)).collect();
                if results.is_empty() {
                    string
                } else {
                    merged_type(&results)
                }
            }
            Func::SetUserVariable(_) => args.first().map(|a| typed(a, env)).unwrap_or(string),
            Func::Grouping => ResultType {
                not_null: true,
                ..long
            },
            Func::Str(f) if f.returns_integer() => long,
            Func::Math(f) if f.returns_integer() => long,
            Func::Regexp(f) if f.returns_integer() => long,
            Func::Json(f) => match f.returns() {
                JsonResult::Json => ResultType::of(ColumnType::Json, u32::MAX, 0),
                JsonResult::Text => string,
                JsonResult::Integer => long,
            },
            Func::Encoding(f) if f.returns_integer() => ResultType {
                unsigned: f.returns_unsigned(),
                ..long
            },
            Func::Date(DateFunc::StrToDate) => match args.get(1) {
                Some(Expr::Literal(format))
                    if !super::calendar::format_has_time(&crate::types::datum_to_text(format)) =>
                {
                    ResultType::of(ColumnType::Date, 10, 0)
                }
                _ => ResultType::of(ColumnType::DateTime, 19, 0),
            },
            Func::Math(MathFunc::Truncate) => {
                let mut ty = args.first().map(|a| typed(a, env)).unwrap_or(long);
                // Decimals as many as a constant second argument keeps.
                if let Some(Expr::Literal(places)) = args.get(1) {
                    if ty.column_type == ColumnType::NewDecimal {
                        ty.decimals = crate::types::to_i64(places).unwrap_or(0).clamp(0, 30) as u8;
                    }
                }
                ty
            }
            Func::Math(_) => ResultType::of(ColumnType::Double, 22, 31),
            Func::Date(DateFunc::Add(_))
                if args
                    .first()
                    .is_some_and(|a| typed(a, env).column_type == ColumnType::Time) =>
            {
                ResultType::of(ColumnType::Time, 10, 0)
            }
            Func::Date(DateFunc::Add(unit)) => {
                let date = args
                    .first()
                    .map(|a| typed(a, env).column_type == ColumnType::Date);
                if unit.keeps_dates() && date == Some(true) {
                    ResultType::of(ColumnType::Date, 10, 0)
                } else {
                    ResultType::of(ColumnType::DateTime, 19, 0)
                }
            }
            Func::CastTime(fsp) => ResultType::of(
                ColumnType::Time,
                10 + if *fsp > 0 { u32::from(*fsp) + 1 } else { 0 },
                *fsp,
            ),
            Func::Time(TimeFunc::TimeToSec) => long,
            Func::Time(TimeFunc::AddTime | TimeFunc::SubTime)
                if args.first().is_some_and(|a| {
                    matches!(
                        typed(a, env).column_type,
                        ColumnType::DateTime | ColumnType::Timestamp
                    )
                }) =>
            {
                ResultType::of(ColumnType::DateTime, 26, 6)
            }
            Func::Time(f) if f.returns_time() => ResultType::of(ColumnType::Time, 10, 0),
            Func::Date(f) => match f.returns_date(args.len()) {
                Some(true) => ResultType::of(ColumnType::Date, 10, 0),
                Some(false) => ResultType::of(ColumnType::DateTime, 19, 0),
                None if f.returns_text(args.len()) => string,
                None => long,
            },
            // Of a binary string, a function that gives part of its string (or strings) gives
            // a binary string, as in MySQL.
            Func::Concat | Func::Substring | Func::Upper | Func::Lower | Func::Trim
                if args.iter().any(|a| typed(a, env).binary) =>
            {
                ResultType {
                    binary: true,
                    ..string
                }
            }
            Func::Str(f) if f.keeps_binary() && args.iter().any(|a| typed(a, env).binary) => {
                ResultType {
                    binary: true,
                    ..string
                }
            }
            _ => string,
        },
        // Values of another row: described as text; clients see their real values.
        Expr::Prefix(_) => ResultType::of(ColumnType::VarString, 255, 0),
        Expr::Outer(_, ty) => (**ty).clone(),
        Expr::Agg(i) => {
            let call = &aggs[*i];
            aggregate_type(call.func, typed(&call.arg, env))
        }
        Expr::Window(i) => env.windows.get(*i).cloned().unwrap_or(string),
    }
}

/// The type of aggregate `func` over values of type `arg`.
pub fn aggregate_type(func: AggFunc, arg: ResultType) -> ResultType {
    let long = ResultType::of(ColumnType::LongLong, 21, 0);
    match func {
        AggFunc::Count | AggFunc::CountStar => ResultType {
            not_null: true,
            ..long
        },
        AggFunc::GroupConcat => ResultType::of(ColumnType::VarString, 1024 * 4, 0),
        AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
            ResultType::of(ColumnType::Json, u32::MAX, 0)
        }
        AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StdPop | AggFunc::StdSamp => {
            ResultType::of(ColumnType::Double, 23, 31)
        }
        AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => ResultType {
            not_null: true,
            unsigned: true,
            ..long
        },
        AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => ResultType {
            not_null: false,
            ..arg
        },
        AggFunc::Sum if matches!(arg.column_type, ColumnType::Double | ColumnType::Float) => {
            ResultType::of(ColumnType::Double, 22, 31)
        }
        AggFunc::Sum => ResultType::of(ColumnType::NewDecimal, 65, arg.decimals.min(30)),
        AggFunc::Avg if matches!(arg.column_type, ColumnType::Double | ColumnType::Float) => {
            ResultType::of(ColumnType::Double, 22, 31)
        }
        AggFunc::Avg => ResultType::of(
            ColumnType::NewDecimal,
            65,
            (arg.decimals as u32 + DIV_PRECISION_INCREMENT).min(30) as u8,
        ),
    }
}

/// The one type of values that may come from any of `types` (CASE and IF results,
/// COALESCE's arguments, a UNION's column), as MySQL aggregates result types: NULL takes no
/// part; one type stays itself (with the most decimals and the longest length); integers,
/// decimals and doubles make the widest of them; dates and datetimes make a datetime; anything
/// else mixed makes text.
pub fn merged_type(types: &[ResultType]) -> ResultType {
    use ColumnType::*;
    let not_null = types.iter().all(|t| t.not_null);
    let length = types.iter().map(|t| t.length).max().unwrap_or(0);
    let decimals = types.iter().map(|t| t.decimals).max().unwrap_or(0);
    let unsigned = types.iter().all(|t| t.unsigned || t.column_type == Null);
    let known: Vec<&ResultType> = types.iter().filter(|t| t.column_type != Null).collect();
    // A binary string among strings makes the result one, as MySQL's charset aggregation.
    let binary = known.iter().any(|t| t.binary);
    let Some(first) = known.first() else {
        return ResultType::of(Null, 0, 0);
    };
    if known.iter().all(|t| t.column_type == first.column_type) {
        return ResultType {
            length,
            decimals,
            unsigned,
            not_null,
            binary,
            ..(*first).clone()
        };
    }
    let all = |f: &dyn Fn(&ResultType) -> bool| known.iter().all(|t| f(t));
    let any =
        |column_types: &[ColumnType]| known.iter().any(|t| column_types.contains(&t.column_type));
    let merged = if all(&|t| t.is_integer()) {
        ResultType {
            unsigned,
            ..ResultType::of(LongLong, 21, 0)
        }
    } else if all(&|t| t.is_integer() || matches!(t.column_type, NewDecimal | Double | Float)) {
        if any(&[Double, Float]) {
            ResultType::of(Double, 22, 31)
        } else {
            ResultType::of(NewDecimal, 65, decimals.min(30))
        }
    } else if all(&|t| matches!(t.column_type, Date | DateTime | Timestamp)) {
        ResultType::of(
            DateTime,
            19 + u32::from(decimals.min(6)) * 2,
            decimals.min(6),
        )
    } else {
        ResultType {
            binary,
            ..ResultType::of(VarString, length.max(255), 0)
        }
    };
    ResultType { not_null, ..merged }
}

pub(super) fn numeric_result(op: BinaryOp, a: &ResultType, b: &ResultType) -> ResultType {
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
        Datum::Time(_) => ResultType::of(ColumnType::Time, 17, 0),
    }
}

/// Converts a value to what a column of `ty` shows (used for binary results and SUM scale).
pub fn conform(value: Datum, ty: &ResultType) -> Datum {
    let scaled = |mut d: Decimal| {
        // Shown with the type's scale, as MySQL shows COALESCE(SUM(price), 0) as 0.00, and a
        // quotient's further digits rounded away (half away from zero, as MySQL rounds).
        let decimals = u32::from(ty.decimals);
        if decimals > d.scale() && decimals <= 28 {
            d.rescale(decimals);
        } else if decimals < d.scale() {
            d = d.round_dp_with_strategy(
                decimals,
                rust_decimal::RoundingStrategy::MidpointAwayFromZero,
            );
        }
        Datum::Decimal(d)
    };
    match (ty.column_type, value) {
        (ColumnType::NewDecimal, Datum::Int(i)) => scaled(Decimal::from(i)),
        (ColumnType::NewDecimal, Datum::UInt(u)) => scaled(Decimal::from(u)),
        (ColumnType::NewDecimal, Datum::Decimal(d)) => scaled(d),
        // A number or date among strings (a UNION's column, CASE's result) is its text, so
        // that DISTINCT and ORDER BY treat it as the string the client sees.
        (
            ColumnType::VarString | ColumnType::String,
            v @ (Datum::Int(_)
            | Datum::UInt(_)
            | Datum::Decimal(_)
            | Datum::Date(_)
            | Datum::DateTime(_)
            | Datum::Time(_)),
        ) => Datum::Bytes(crate::types::datum_to_text(&v)),
        (_, v) => v,
    }
}
