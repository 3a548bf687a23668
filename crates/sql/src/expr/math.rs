//! Mathematical functions beyond the evaluator's arithmetic. As in MySQL, a logarithm of a
//! number at or below zero is NULL.

use rust_decimal::Decimal;
use strata_codec::Datum;

use crate::error::Result;
use crate::types::{to_f64, to_i64};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFunc {
    Sign,
    Exp,
    Ln,
    Log,
    Log2,
    Log10,
    Pi,
    Truncate,
    Rand,
    Degrees,
    Radians,
    Sin,
    Cos,
    Tan,
    Atan,
    Atan2,
    Cot,
    Asin,
    Acos,
}

impl MathFunc {
    pub fn by_name(name: &str) -> Option<MathFunc> {
        use MathFunc::*;
        Some(match name {
            "SIGN" => Sign,
            "EXP" => Exp,
            "LN" => Ln,
            "LOG" => Log,
            "LOG2" => Log2,
            "LOG10" => Log10,
            "PI" => Pi,
            "TRUNCATE" => Truncate,
            "RAND" => Rand,
            "DEGREES" => Degrees,
            "RADIANS" => Radians,
            "SIN" => Sin,
            "COS" => Cos,
            "TAN" => Tan,
            "ATAN" => Atan,
            "ATAN2" => Atan2,
            "COT" => Cot,
            "ASIN" => Asin,
            "ACOS" => Acos,
            _ => return None,
        })
    }

    pub fn arity_ok(self, n: usize) -> bool {
        match self {
            MathFunc::Pi | MathFunc::Rand => n == 0,
            MathFunc::Log => n == 1 || n == 2,
            MathFunc::Truncate | MathFunc::Atan2 => n == 2,
            MathFunc::Atan => n == 1 || n == 2,
            _ => n == 1,
        }
    }

    /// Whether the result is an integer (SIGN), the type of the first argument (TRUNCATE), or
    /// else a double.
    pub fn returns_integer(self) -> bool {
        self == MathFunc::Sign
    }
}

fn double(f: f64) -> Datum {
    if f.is_finite() {
        Datum::Float(f)
    } else {
        Datum::Null
    }
}

/// A DOUBLE result of function `name`: NULL where it is undefined (NaN), MySQL's 1690 where it
/// overflowed.
pub(super) fn double_in_range(f: f64, name: &str) -> Result<Datum> {
    if f.is_infinite() {
        return Err(crate::error::value_out_of_range("DOUBLE", name));
    }
    Ok(double(f))
}

/// `f` of a positive number; NULL at or below zero.
fn logarithm(x: f64, f: impl Fn(f64) -> f64) -> Datum {
    if x > 0.0 {
        double(f(x))
    } else {
        Datum::Null
    }
}

/// `value` cut (not rounded) to `places` decimals; negative places zero digits left of the
/// point.
fn truncate(value: &Datum, places: i64) -> Datum {
    let places = places.clamp(-30, 30);
    match value {
        Datum::Int(_) | Datum::UInt(_) if places >= 0 => value.clone(),
        Datum::Int(i) => {
            let unit = 10i64.checked_pow(places.unsigned_abs() as u32);
            Datum::Int(unit.map_or(0, |u| i - i % u))
        }
        Datum::UInt(u) => {
            let unit = 10u64.checked_pow(places.unsigned_abs() as u32);
            Datum::UInt(unit.map_or(0, |unit| u - u % unit))
        }
        Datum::Decimal(d) if places >= 0 => Datum::Decimal(d.trunc_with_scale(places as u32)),
        Datum::Decimal(d) => {
            let unit = Decimal::from(10u64.saturating_pow(places.unsigned_abs() as u32));
            Datum::Decimal((d / unit).trunc() * unit)
        }
        other => {
            let f = to_f64(other).unwrap_or(0.0);
            let unit = 10f64.powi(places as i32);
            double((f * unit).trunc() / unit)
        }
    }
}

pub(super) fn eval(func: MathFunc, values: &[Datum]) -> Result<Datum> {
    use MathFunc::*;
    match func {
        Pi => return Ok(Datum::Float(std::f64::consts::PI)),
        Rand => return Ok(Datum::Float(rand::random::<f64>())),
        _ => {}
    }
    if values.contains(&Datum::Null) {
        return Ok(Datum::Null);
    }
    let x = to_f64(&values[0]).unwrap_or(0.0);
    Ok(match func {
        Pi | Rand => unreachable!("handled above"),
        Sign => Datum::Int(match &values[0] {
            Datum::Decimal(d) if d.is_zero() => 0,
            Datum::Decimal(d) if d.is_sign_negative() => -1,
            Datum::Decimal(_) => 1,
            _ if x > 0.0 => 1,
            _ if x < 0.0 => -1,
            _ => 0,
        }),
        Exp => double_in_range(x.exp(), "exp")?,
        Ln => logarithm(x, f64::ln),
        Log if values.len() == 2 => {
            // LOG(base, x).
            let value = to_f64(&values[1]).unwrap_or(0.0);
            if x <= 0.0 || x == 1.0 {
                Datum::Null
            } else {
                logarithm(value, |v| v.ln() / x.ln())
            }
        }
        Log => logarithm(x, f64::ln),
        Log2 => logarithm(x, f64::log2),
        Log10 => logarithm(x, f64::log10),
        Truncate => truncate(&values[0], to_i64(&values[1]).unwrap_or(0)),
        Degrees => double_in_range(x.to_degrees(), "degrees")?,
        Radians => double(x.to_radians()),
        Sin => double(x.sin()),
        Cos => double(x.cos()),
        Tan => double(x.tan()),
        // ATAN(y, x) is ATAN2(y, x).
        Atan | Atan2 if values.len() == 2 => double(x.atan2(to_f64(&values[1]).unwrap_or(0.0))),
        Atan | Atan2 => double(x.atan()),
        Cot if x.tan() == 0.0 => {
            return Err(crate::error::Error::new(
                1690,
                "22003",
                format!("DOUBLE value is out of range in 'cot({x})'"),
            ))
        }
        Cot => double(1.0 / x.tan()),
        // Outside -1 to 1 there is no angle: NULL.
        Asin => double(x.asin()),
        Acos => double(x.acos()),
    })
}
