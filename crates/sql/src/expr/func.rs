//! Built-in functions.

use std::cmp::Ordering;
use std::time::Duration;

use rust_decimal::prelude::ToPrimitive;
use strata_codec::Datum;

use crate::error::{self, Result};
use crate::types::{self, compare, to_bool, to_decimal, to_f64, to_i64, SqlType, TypeKind};

use super::*;

/// The longest wait of `SLEEP()`: a year (a longer one would not fit a `Duration`).
const SLEEP_SECONDS_MAX: f64 = 365.0 * 24.0 * 3600.0;
/// How often a SLEEP looks whether its statement was interrupted.
const SLEEP_SLICE: Duration = Duration::from_millis(10);

pub(super) fn call(func: &Func, args: &[Expr], row: &[Datum], env: &dyn EvalEnv) -> Result<Datum> {
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
        Func::Grouping => return Err(invalid_grouping()),
        Func::SetUserVariable(name) => {
            let value = args[0].eval(row, env)?;
            env.set_user_variable(name, value.clone());
            return Ok(value);
        }
        _ => {}
    }
    let values: Vec<Datum> = args
        .iter()
        .map(|a| a.eval(row, env))
        .collect::<Result<_>>()?;
    match func {
        Func::Str(f) => return super::strings::eval(*f, &values),
        Func::Math(f) => return super::math::eval(*f, &values),
        Func::Date(f) => return super::dates::eval(*f, &values),
        Func::Time(f) => return super::clock::eval(*f, &values),
        Func::Regexp(f) => return super::regexp::eval(*f, &values),
        Func::Encoding(f) => return Ok(super::encoding::eval(*f, &values)),
        Func::Json(f) => return super::json::eval(*f, &values),
        _ => {}
    }
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
        Func::Sleep => {
            // As MySQL in strict mode (its default): no wait for a NULL or negative duration.
            let Some(seconds) = to_f64(&first).filter(|s| *s >= 0.0) else {
                return Err(crate::error::Error::new(
                    1210,
                    "HY000",
                    "Incorrect arguments to sleep",
                ));
            };
            // As MySQL: interrupted (killed, or past the statement's time limit), SLEEP ends
            // early and returns 1; the statement itself then stops at its next check.
            let end =
                std::time::Instant::now() + Duration::from_secs_f64(seconds.min(SLEEP_SECONDS_MAX));
            env.user_sleep(true);
            let slept = loop {
                if env.check_interrupt().is_err() {
                    break Datum::Int(1);
                }
                let left = end.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    break Datum::Int(0);
                }
                strata_fiber::sleep(left.min(SLEEP_SLICE));
            };
            env.user_sleep(false);
            slept
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
                Datum::Int(_) | Datum::UInt(_) => {
                    // Negative places round digits left of the point, half away from zero.
                    let n = match first {
                        Datum::UInt(u) => i128::from(u),
                        _ => i128::from(to_i64(&first).unwrap_or(0)),
                    };
                    let Some(unit) = 10i128.checked_pow(places.unsigned_abs().min(38) as u32)
                    else {
                        return Ok(Datum::Int(0));
                    };
                    let rounded = (n + n.signum() * (unit / 2)) / unit * unit;
                    match first {
                        Datum::UInt(_) => {
                            Datum::UInt(u64::try_from(rounded).map_err(|_| {
                                error::value_out_of_range("BIGINT UNSIGNED", "round")
                            })?)
                        }
                        _ => Datum::Int(
                            i64::try_from(rounded)
                                .map_err(|_| error::value_out_of_range("BIGINT", "round"))?,
                        ),
                    }
                }
                Datum::Decimal(d) if places < 0 => {
                    let unit = rust_decimal::Decimal::from(
                        10u64.saturating_pow(places.unsigned_abs().min(19) as u32),
                    );
                    Datum::Decimal(
                        (d / unit).round_dp_with_strategy(
                            0,
                            rust_decimal::RoundingStrategy::MidpointAwayFromZero,
                        ) * unit,
                    )
                }
                Datum::Float(f) => {
                    // Past a DOUBLE's range of exponents: all digits go, or none does.
                    let m = 10f64.powi(places.clamp(-400, 400) as i32);
                    let rounded = (f * m).round() / m;
                    Datum::Float(if m == 0.0 {
                        0.0
                    } else if rounded.is_finite() {
                        rounded
                    } else {
                        f
                    })
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
        Func::Power => {
            let f = to_f64(&first)
                .unwrap_or(0.0)
                .powf(to_f64(&values[1]).unwrap_or(0.0));
            // MySQL refuses a power with no real value (POW(-8, 0.5)) as well as an overflow.
            super::arith::finite(f).map_err(|_| error::value_out_of_range("DOUBLE", "pow"))?
        }
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
        Func::CastSigned => Datum::Int(cast_signed(&first)),
        Func::CastUnsigned => Datum::UInt(match first {
            Datum::UInt(u) => u,
            Datum::Float(f) if f >= u64::MAX as f64 => u64::MAX,
            Datum::Float(f) if f >= 0.0 => f.round() as u64,
            ref other => match (to_i64(other), to_f64(other)) {
                (Some(i), _) => i as u64,
                (None, Some(f)) if f > 0.0 => u64::MAX,
                _ => cast_signed(other) as u64,
            },
        }),
        Func::CastChar | Func::CastBinary => Datum::Bytes(text(&first)),
        Func::CastDouble => Datum::Float(to_f64(&first).unwrap_or(0.0)),
        Func::CastDecimal(precision, scale) => {
            let ty = SqlType {
                length: *precision,
                scale: *scale,
                ..SqlType::new(TypeKind::Decimal)
            };
            ty.coerce(first, "cast")?
        }
        Func::CastDate => types::to_datetime(&first)
            .map(|dt| Datum::Date(dt.date()))
            .unwrap_or(Datum::Null),
        Func::CastDateTime => types::to_datetime(&first)
            .map(Datum::DateTime)
            .unwrap_or(Datum::Null),
        Func::CastTime(fsp) => super::clock::to_time(&first)
            .map(|t| Datum::Time(super::clock::round_fraction(t, u32::from(*fsp))))
            .unwrap_or(Datum::Null),
        Func::Coalesce
        | Func::If
        | Func::SetUserVariable(_)
        | Func::Grouping
        | Func::Str(_)
        | Func::Math(_)
        | Func::Date(_)
        | Func::Time(_)
        | Func::Regexp(_)
        | Func::Encoding(_)
        | Func::Json(_) => {
            unreachable!("handled above")
        }
    })
}

/// ER_INVALID_GROUPING_FUNC_USE: GROUPING() outside a `GROUP BY … WITH ROLLUP` query's select
/// list, HAVING or ORDER BY.
pub(crate) fn invalid_grouping() -> crate::error::Error {
    crate::error::Error::new(3603, "HY000", "Invalid use of GROUPING function")
}

/// `CAST(value AS SIGNED)`: a number past BIGINT's range is clamped to its bounds, as MySQL
/// does (an unsigned one is taken as its two's complement).
fn cast_signed(value: &Datum) -> i64 {
    match (to_i64(value), to_f64(value)) {
        (Some(i), _) => i,
        (None, Some(f)) if f > 0.0 => i64::MAX,
        (None, Some(f)) if f < 0.0 => i64::MIN,
        _ => 0,
    }
}
