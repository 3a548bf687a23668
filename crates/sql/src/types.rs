//! SQL types of columns, MySQL's conversions between values, and comparison.
//!
//! Conversions follow MySQL's strict mode (`STRICT_TRANS_TABLES`, the default): a value that
//! does not fit its column is an error (1264, 1406, 1366), never silently clipped.

use std::cmp::Ordering;

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use strata_codec::Datum;

use crate::api::ColumnType;
use crate::error::{self, Result};

/// Longest TEXT/BLOB value, in bytes.
pub const TEXT_BYTES_MAX: usize = 65_535;
/// The most bytes of a TINYTEXT or TINYBLOB.
pub const TINY_TEXT_BYTES: usize = 255;
/// The most bytes of a MEDIUMTEXT or MEDIUMBLOB.
pub const MEDIUM_TEXT_BYTES: usize = 16_777_215;
/// The most bytes of a LONGTEXT or LONGBLOB.
pub const LONG_TEXT_BYTES: usize = 4_294_967_295;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TypeKind {
    TinyInt,
    SmallInt,
    MediumInt,
    Int,
    BigInt,
    Float,
    Double,
    Decimal,
    Char,
    Varchar,
    Text,
    Date,
    DateTime,
    Timestamp,
    /// TIME: a signed duration (`expr/clock.rs`).
    Time,
    /// JSON, kept as its text in MySQL's normal form (`expr/json.rs`).
    Json,
    /// ENUM, SET and YEAR (`members.rs`).
    Enum,
    Set,
    Year,
    /// BIT(M): M bits (`length`), kept as an unsigned integer (`members.rs`).
    Bit,
}

/// Digits a `rust_decimal::Decimal` holds (its largest value is just below 10^29).
const DECIMAL_DIGITS_HELD: u32 = 29;

/// A column's type: kind plus length (characters, or decimal precision), scale and sign.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqlType {
    pub kind: TypeKind,
    pub unsigned: bool,
    pub length: u32,
    pub scale: u32,
    /// The members of an ENUM or SET, in order (empty for every other type).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// A binary string (BINARY, VARBINARY, BLOB): bytes rather than characters. Its values
    /// are kept and compared as those of CHAR, VARCHAR and TEXT are (bytewise, as Strata's
    /// collation is binary); clients see the binary character set and flag, as MySQL sends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

impl SqlType {
    pub fn new(kind: TypeKind) -> SqlType {
        SqlType {
            kind,
            unsigned: false,
            length: 0,
            scale: 0,
            members: Vec::new(),
            binary: false,
        }
    }

    /// The column definition flags MySQL sends for the type itself: UNSIGNED and ZEROFILL for
    /// YEAR, ENUM and SET for theirs (drivers such as sqlx read YEAR as an unsigned integer
    /// only with them).
    pub fn client_flags(&self) -> u16 {
        use crate::api::column_flags;
        match self.kind {
            TypeKind::Year => column_flags::UNSIGNED | column_flags::ZEROFILL,
            TypeKind::Enum => column_flags::ENUM,
            TypeKind::Set => column_flags::SET,
            _ => 0,
        }
    }

    /// Whether clients see the column as bytes: a binary string, or a type MySQL sends with
    /// the binary character set (numbers, dates, BIT).
    pub fn is_binary_to_clients(&self) -> bool {
        self.binary || !self.is_string()
    }

    /// The most bytes a TEXT or BLOB column holds: 255 for TINY, 16 MiB - 1 for MEDIUM,
    /// 4 GiB - 1 for LONG, 65,535 otherwise (and for columns stored before sizes were kept).
    pub fn text_bytes_max(&self) -> usize {
        if self.kind == TypeKind::Text && self.length > 0 {
            self.length as usize
        } else {
            TEXT_BYTES_MAX
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::TinyInt
                | TypeKind::SmallInt
                | TypeKind::MediumInt
                | TypeKind::Int
                | TypeKind::BigInt
        )
    }

    pub fn is_string(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Char | TypeKind::Varchar | TypeKind::Text | TypeKind::Enum | TypeKind::Set
        )
    }

    pub fn column_type(&self) -> ColumnType {
        match self.kind {
            TypeKind::TinyInt => ColumnType::Tiny,
            TypeKind::SmallInt => ColumnType::Short,
            TypeKind::MediumInt => ColumnType::Int24,
            TypeKind::Int => ColumnType::Long,
            TypeKind::BigInt => ColumnType::LongLong,
            TypeKind::Float => ColumnType::Float,
            TypeKind::Double => ColumnType::Double,
            TypeKind::Decimal => ColumnType::NewDecimal,
            TypeKind::Char => ColumnType::String,
            TypeKind::Varchar => ColumnType::VarString,
            TypeKind::Text => ColumnType::Blob,
            TypeKind::Date => ColumnType::Date,
            TypeKind::DateTime => ColumnType::DateTime,
            TypeKind::Timestamp => ColumnType::Timestamp,
            TypeKind::Time => ColumnType::Time,
            TypeKind::Json => ColumnType::Json,
            TypeKind::Enum | TypeKind::Set => ColumnType::String,
            TypeKind::Year => ColumnType::Year,
            TypeKind::Bit => ColumnType::Bit,
        }
    }

    /// The display width sent in column definitions.
    pub fn display_length(&self) -> u32 {
        match self.kind {
            TypeKind::TinyInt => 4,
            TypeKind::SmallInt => 6,
            TypeKind::MediumInt => 9,
            TypeKind::Int => 11,
            TypeKind::BigInt => 20,
            TypeKind::Float => 12,
            TypeKind::Double => 22,
            TypeKind::Decimal => self.length + 2,
            // In bytes: four per character of utf8mb4 text, one of a binary string.
            TypeKind::Char | TypeKind::Varchar if self.binary => self.length,
            TypeKind::Char | TypeKind::Varchar => self.length * 4,
            TypeKind::Text if self.binary => {
                u32::try_from(self.text_bytes_max()).unwrap_or(u32::MAX)
            }
            TypeKind::Text => u32::try_from(self.text_bytes_max() * 4).unwrap_or(u32::MAX),
            TypeKind::Date => 10,
            TypeKind::DateTime | TypeKind::Timestamp => {
                19 + if self.scale > 0 { self.scale + 1 } else { 0 }
            }
            TypeKind::Time => 10 + if self.scale > 0 { self.scale + 1 } else { 0 },
            TypeKind::Json => u32::MAX,
            TypeKind::Enum => {
                self.members
                    .iter()
                    .map(|m| m.chars().count())
                    .max()
                    .unwrap_or(0) as u32
                    * 4
            }
            TypeKind::Set => {
                let all: usize = self.members.iter().map(|m| m.chars().count() + 1).sum();
                all.saturating_sub(1) as u32 * 4
            }
            TypeKind::Year => 4,
            TypeKind::Bit => self.length,
        }
    }

    /// The type as `SHOW CREATE TABLE` prints it.
    pub fn sql_name(&self) -> String {
        let unsigned = if self.unsigned { " unsigned" } else { "" };
        match self.kind {
            TypeKind::TinyInt => format!("tinyint{unsigned}"),
            TypeKind::SmallInt => format!("smallint{unsigned}"),
            TypeKind::MediumInt => format!("mediumint{unsigned}"),
            TypeKind::Int => format!("int{unsigned}"),
            TypeKind::BigInt => format!("bigint{unsigned}"),
            TypeKind::Float => "float".into(),
            TypeKind::Double => "double".into(),
            TypeKind::Decimal => format!("decimal({},{}){unsigned}", self.length, self.scale),
            TypeKind::Char if self.binary => format!("binary({})", self.length),
            TypeKind::Varchar if self.binary => format!("varbinary({})", self.length),
            TypeKind::Text if self.binary => match self.text_bytes_max() {
                TINY_TEXT_BYTES => "tinyblob".into(),
                TEXT_BYTES_MAX => "blob".into(),
                MEDIUM_TEXT_BYTES => "mediumblob".into(),
                _ => "longblob".into(),
            },
            TypeKind::Char => format!("char({})", self.length),
            TypeKind::Varchar => format!("varchar({})", self.length),
            TypeKind::Text => match self.text_bytes_max() {
                TINY_TEXT_BYTES => "tinytext".into(),
                TEXT_BYTES_MAX => "text".into(),
                MEDIUM_TEXT_BYTES => "mediumtext".into(),
                _ => "longtext".into(),
            },
            TypeKind::Date => "date".into(),
            TypeKind::DateTime if self.scale > 0 => format!("datetime({})", self.scale),
            TypeKind::Time if self.scale > 0 => format!("time({})", self.scale),
            TypeKind::Time => "time".into(),
            TypeKind::DateTime => "datetime".into(),
            TypeKind::Timestamp if self.scale > 0 => format!("timestamp({})", self.scale),
            TypeKind::Timestamp => "timestamp".into(),
            TypeKind::Json => "json".into(),
            TypeKind::Enum => format!("enum({})", crate::members::quoted_list(&self.members)),
            TypeKind::Set => format!("set({})", crate::members::quoted_list(&self.members)),
            TypeKind::Year => "year".into(),
            TypeKind::Bit => format!("bit({})", self.length),
        }
    }

    fn integer_range(&self) -> (i128, i128) {
        let bits = match self.kind {
            TypeKind::TinyInt => 8,
            TypeKind::SmallInt => 16,
            TypeKind::MediumInt => 24,
            TypeKind::Int => 32,
            _ => 64,
        };
        if self.unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        }
    }

    /// A default kept in its text form, as the value it was: text, but a BIT's is its number
    /// (the text of `b'101'` is `5`).
    pub fn stored_default(&self, text: &str) -> Datum {
        match (self.kind, text.parse::<u64>()) {
            (TypeKind::Bit, Ok(n)) => Datum::UInt(n),
            _ => Datum::Bytes(text.as_bytes().to_vec()),
        }
    }

    /// The value MySQL makes up for a NOT NULL column with no default where one is needed
    /// (the rows a table has when `ALTER TABLE … ADD` makes such a column): zero, the empty
    /// string, the first ENUM member, JSON null. None for dates and times, whose zero value
    /// strict mode refuses.
    pub fn implicit_value(&self) -> Option<Datum> {
        let value = match self.kind {
            TypeKind::Char | TypeKind::Varchar | TypeKind::Text | TypeKind::Set => {
                Datum::Bytes(Vec::new())
            }
            TypeKind::Enum => Datum::Bytes(self.members.first()?.as_bytes().to_vec()),
            TypeKind::Json => Datum::Bytes(b"null".to_vec()),
            TypeKind::Float | TypeKind::Double => Datum::Float(0.0),
            TypeKind::Time => Datum::Time(0),
            TypeKind::Date | TypeKind::DateTime | TypeKind::Timestamp => return None,
            _ => self.coerce(Datum::Int(0), "").ok()?,
        };
        Some(value)
    }

    /// Converts `value` for storage in a column of this type (strict mode).
    pub fn coerce(&self, value: Datum, column: &str) -> Result<Datum> {
        if value == Datum::Null {
            return Ok(Datum::Null);
        }
        match self.kind {
            TypeKind::Enum => crate::members::enum_value(&self.members, value, column),
            TypeKind::Set => crate::members::set_value(&self.members, value, column),
            TypeKind::Year => crate::members::year_value(value, column),
            TypeKind::Bit => crate::members::bit_value(value, self.length, column),
            TypeKind::Json => {
                let text = match &value {
                    Datum::Bytes(b) => crate::expr::parse_json_for_column(b, column)?,
                    other => crate::expr::scalar_json(other),
                };
                Ok(Datum::Bytes(text.into_bytes()))
            }
            k if self.is_integer() && k != TypeKind::Float => {
                let n: i128 = match &value {
                    Datum::Int(i) => *i as i128,
                    Datum::UInt(u) => *u as i128,
                    Datum::Float(f) => {
                        if !f.is_finite() || f.abs() > 1e38 {
                            return Err(error::out_of_range(column));
                        }
                        f.round() as i128
                    }
                    Datum::Decimal(d) => d
                        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
                        .to_i128()
                        .ok_or_else(|| error::out_of_range(column))?,
                    Datum::Bytes(b) => parse_integer_strict(b).ok_or_else(|| {
                        error::incorrect_value("integer", &String::from_utf8_lossy(b), column)
                    })?,
                    Datum::Time(t) => crate::expr::clock_number(*t)
                        .round()
                        .to_i128()
                        .ok_or_else(|| error::out_of_range(column))?,
                    Datum::Date(_) | Datum::DateTime(_) => parse_integer_strict(
                        String::from_utf8_lossy(&datum_to_text(&value))
                            .replace(['-', ' ', ':'], "")
                            .as_bytes(),
                    )
                    .ok_or_else(|| error::out_of_range(column))?,
                    Datum::Null => unreachable!("handled above"),
                };
                let (min, max) = self.integer_range();
                if n < min || n > max {
                    return Err(error::out_of_range(column));
                }
                Ok(if self.unsigned && n > i64::MAX as i128 {
                    Datum::UInt(n as u64)
                } else {
                    Datum::Int(n as i64)
                })
            }
            TypeKind::Float | TypeKind::Double => {
                let f = to_f64(&value).ok_or_else(|| {
                    error::incorrect_value(
                        "double",
                        &String::from_utf8_lossy(&datum_to_text(&value)),
                        column,
                    )
                })?;
                Ok(Datum::Float(if self.kind == TypeKind::Float {
                    f as f32 as f64
                } else {
                    f
                }))
            }
            TypeKind::Decimal => {
                let d = to_decimal(&value).ok_or_else(|| {
                    error::incorrect_value(
                        "decimal",
                        &String::from_utf8_lossy(&datum_to_text(&value)),
                        column,
                    )
                })?;
                let d =
                    d.round_dp_with_strategy(self.scale, RoundingStrategy::MidpointAwayFromZero);
                let integer_digits = self.length.saturating_sub(self.scale);
                // A Decimal holds at most 28 digits: a wider column bounds nothing it can hold.
                let too_wide = integer_digits < DECIMAL_DIGITS_HELD
                    && d.abs() >= Decimal::from_i128_with_scale(10i128.pow(integer_digits), 0);
                if too_wide || (self.unsigned && d.is_sign_negative() && !d.is_zero()) {
                    return Err(error::out_of_range(column));
                }
                let mut d = d;
                d.rescale(self.scale);
                Ok(Datum::Decimal(d))
            }
            TypeKind::Char | TypeKind::Varchar | TypeKind::Text => {
                let mut bytes = match value {
                    Datum::Bytes(b) => b,
                    other => datum_to_text(&other),
                };
                if self.kind == TypeKind::Char {
                    while bytes.last() == Some(&b' ') {
                        bytes.pop();
                    }
                }
                let too_long = if self.kind == TypeKind::Text {
                    bytes.len() > self.text_bytes_max()
                } else {
                    char_length(&bytes) > self.length as usize
                };
                if too_long {
                    return Err(error::data_too_long(column));
                }
                Ok(Datum::Bytes(bytes))
            }
            TypeKind::Date => match to_datetime(&value) {
                Some(dt) => Ok(Datum::Date(dt.date())),
                None => Err(incorrect_time("date", &value, column)),
            },
            TypeKind::DateTime | TypeKind::Timestamp => match to_datetime(&value) {
                Some(dt) => Ok(Datum::DateTime(truncate_fraction(dt, self.scale))),
                None => Err(incorrect_time("datetime", &value, column)),
            },
            TypeKind::Time => match crate::expr::to_time(&value) {
                Some(t) => Ok(Datum::Time(crate::expr::round_time(t, self.scale))),
                None => Err(incorrect_time("time", &value, column)),
            },
            _ => unreachable!("every kind is matched"),
        }
    }
}

/// A value a DATE, DATETIME or TIME column cannot read: 1292, as MySQL's strict mode sends.
fn incorrect_time(kind: &str, value: &Datum, column: &str) -> crate::error::Error {
    crate::error::Error::new(
        1292,
        "22007",
        format!(
            "Incorrect {kind} value: '{}' for column '{column}' at row 1",
            String::from_utf8_lossy(&datum_to_text(value))
        ),
    )
}

fn truncate_fraction(dt: NaiveDateTime, fsp: u32) -> NaiveDateTime {
    let micros = dt.and_utc().timestamp_subsec_micros();
    let unit = 10u32.pow(6 - fsp.min(6));
    let kept = (micros / unit) * unit;
    dt.with_nanosecond(kept * 1000).unwrap_or(dt)
}

use chrono::Timelike;

/// Number of UTF-8 characters in `bytes` (bytes that are not UTF-8 count one each).
pub fn char_length(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.chars().count(),
        Err(_) => bytes.len(),
    }
}

fn parse_integer_strict(bytes: &[u8]) -> Option<i128> {
    let text = std::str::from_utf8(bytes).ok()?.trim();
    if let Ok(n) = text.parse::<i128>() {
        return Some(n);
    }
    let d = Decimal::from_str_exact(text)
        .ok()
        .or_else(|| text.parse::<f64>().ok().and_then(Decimal::from_f64))?;
    d.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .to_i128()
}

/// The longest numeric prefix of a string, as MySQL reads a string in numeric context
/// (`'12abc'` is 12, `'abc'` is 0).
pub fn numeric_prefix(bytes: &[u8]) -> &str {
    let text = std::str::from_utf8(bytes).unwrap_or("");
    let text = text.trim_start();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_exp = false;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            seen_digit = true;
            end = i + 1;
        } else if (c == '+' || c == '-') && (i == 0 || matches!(chars[i - 1], 'e' | 'E')) {
        } else if c == '.' && !seen_dot && !seen_exp {
            seen_dot = true;
        } else if (c == 'e' || c == 'E') && seen_digit && !seen_exp {
            seen_exp = true;
        } else {
            break;
        }
        i += 1;
    }
    if !seen_digit {
        return "0";
    }
    &text[..end]
}

/// A value in numeric context as a double.
pub fn to_f64(d: &Datum) -> Option<f64> {
    Some(match d {
        Datum::Null => return None,
        Datum::Int(i) => *i as f64,
        Datum::UInt(u) => *u as f64,
        Datum::Float(f) => *f,
        Datum::Decimal(d) => d.to_f64()?,
        Datum::Bytes(b) => numeric_prefix(b).parse::<f64>().unwrap_or(0.0),
        Datum::Date(_) | Datum::DateTime(_) => String::from_utf8_lossy(&datum_to_text(d))
            .replace(['-', ' ', ':'], "")
            .parse::<f64>()
            .ok()?,
        Datum::Time(t) => crate::expr::clock_number(*t).to_f64()?,
    })
}

/// A value in numeric context as an exact decimal.
pub fn to_decimal(d: &Datum) -> Option<Decimal> {
    match d {
        Datum::Null => None,
        Datum::Int(i) => Some(Decimal::from(*i)),
        Datum::UInt(u) => Some(Decimal::from(*u)),
        Datum::Float(f) => Decimal::from_f64(*f),
        Datum::Decimal(d) => Some(*d),
        Datum::Bytes(b) => {
            let prefix = numeric_prefix(b);
            Decimal::from_str_exact(prefix)
                .ok()
                .or_else(|| Decimal::from_scientific(prefix).ok())
                .or_else(|| prefix.parse::<f64>().ok().and_then(Decimal::from_f64))
        }
        Datum::Date(_) | Datum::DateTime(_) => to_f64(d).and_then(Decimal::from_f64),
        Datum::Time(t) => Some(crate::expr::clock_number(*t)),
    }
}

/// A value in integer context (rounded as MySQL does).
pub fn to_i64(d: &Datum) -> Option<i64> {
    match d {
        Datum::Int(i) => Some(*i),
        Datum::UInt(u) => Some(*u as i64),
        Datum::Float(f) => Some(f.round() as i64),
        Datum::Decimal(d) => d
            .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
            .to_i64(),
        Datum::Bytes(_) => to_decimal(d).and_then(|d| d.round().to_i64()),
        _ => to_f64(d).map(|f| f as i64),
    }
}

/// Truth value of a condition: None for NULL.
pub fn to_bool(d: &Datum) -> Option<bool> {
    match d {
        Datum::Null => None,
        Datum::Int(i) => Some(*i != 0),
        Datum::UInt(u) => Some(*u != 0),
        Datum::Decimal(d) => Some(!d.is_zero()),
        other => to_f64(other).map(|f| f != 0.0),
    }
}

/// Parses MySQL date and datetime literals: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS[.ffffff]`,
/// also with `T` or `/` separators, and `YYYYMMDD[HHMMSS]` numbers.
pub fn parse_datetime(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    for format in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y/%m/%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(text, format) {
            return Some(dt);
        }
    }
    for format in ["%Y-%m-%d", "%Y/%m/%d", "%Y%m%d"] {
        if let Ok(d) = NaiveDate::parse_from_str(text, format) {
            return Some(d.and_time(NaiveTime::MIN));
        }
    }
    if text.len() == 14 && text.bytes().all(|b| b.is_ascii_digit()) {
        return NaiveDateTime::parse_from_str(text, "%Y%m%d%H%M%S").ok();
    }
    None
}

pub fn to_datetime(d: &Datum) -> Option<NaiveDateTime> {
    match d {
        Datum::DateTime(dt) => Some(*dt),
        Datum::Date(date) => Some(date.and_time(NaiveTime::MIN)),
        Datum::Bytes(b) => parse_datetime(std::str::from_utf8(b).ok()?),
        Datum::Int(_) | Datum::UInt(_) => {
            parse_datetime(&String::from_utf8_lossy(&datum_to_text(d)))
        }
        _ => None,
    }
}

/// The text form of a value, as the text protocol sends it.
pub fn datum_to_text(d: &Datum) -> Vec<u8> {
    match d {
        Datum::Null => b"NULL".to_vec(),
        Datum::Int(i) => i.to_string().into_bytes(),
        Datum::UInt(u) => u.to_string().into_bytes(),
        Datum::Float(f) => format_double(*f).into_bytes(),
        Datum::Decimal(d) => d.to_string().into_bytes(),
        Datum::Bytes(b) => b.clone(),
        Datum::Date(d) => d.format("%Y-%m-%d").to_string().into_bytes(),
        Datum::DateTime(dt) => {
            if dt.and_utc().timestamp_subsec_micros() == 0 {
                dt.format("%Y-%m-%d %H:%M:%S").to_string().into_bytes()
            } else {
                dt.format("%Y-%m-%d %H:%M:%S%.6f").to_string().into_bytes()
            }
        }
        Datum::Time(t) => crate::expr::format_time(*t, None).into_bytes(),
    }
}

/// Formats a double the way MySQL prints it (shortest round-trip form, no trailing `.0`).
pub fn format_double(f: f64) -> String {
    if f.is_finite() && f == f.trunc() && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else if f.abs() >= 1e15 || (f != 0.0 && f.abs() < 1e-4) {
        let s = format!("{f:e}");
        s.replace("e", "e+").replace("e+-", "e-")
    } else {
        format!("{f}")
    }
}

fn is_numeric(d: &Datum) -> bool {
    matches!(
        d,
        Datum::Int(_) | Datum::UInt(_) | Datum::Float(_) | Datum::Decimal(_)
    )
}

/// Compares two non-NULL values with MySQL's coercions; None if either is NULL.
pub fn compare(a: &Datum, b: &Datum) -> Option<Ordering> {
    use Datum::*;
    Some(match (a, b) {
        (Null, _) | (_, Null) => return None,
        (Int(x), Int(y)) => x.cmp(y),
        (UInt(x), UInt(y)) => x.cmp(y),
        (Int(x), UInt(y)) => (*x as i128).cmp(&(*y as i128)),
        (UInt(x), Int(y)) => (*x as i128).cmp(&(*y as i128)),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Decimal(x), Decimal(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (DateTime(x), DateTime(y)) => x.cmp(y),
        (Time(x), Time(y)) => x.cmp(y),
        (Time(_), _) | (_, Time(_)) => match (crate::expr::to_time(a), crate::expr::to_time(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => to_f64(a)?.partial_cmp(&to_f64(b)?)?,
        },
        (Date(_) | DateTime(_), _) | (_, Date(_) | DateTime(_)) => {
            match (to_datetime(a), to_datetime(b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => to_f64(a)?.partial_cmp(&to_f64(b)?)?,
            }
        }
        (Float(_), _) | (_, Float(_)) => to_f64(a)?.partial_cmp(&to_f64(b)?)?,
        (Decimal(_), _) | (_, Decimal(_)) if is_numeric(a) && is_numeric(b) => {
            to_decimal(a)?.cmp(&to_decimal(b)?)
        }
        _ => to_f64(a)?.partial_cmp(&to_f64(b)?)?,
    })
}

/// Total order for sorting: NULL first, then [`compare`].
pub fn sort_compare(a: &Datum, b: &Datum) -> Ordering {
    match (a, b) {
        (Datum::Null, Datum::Null) => Ordering::Equal,
        (Datum::Null, _) => Ordering::Less,
        (_, Datum::Null) => Ordering::Greater,
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> SqlType {
        SqlType::new(TypeKind::Int)
    }

    #[test]
    fn strict_integer_coercion() {
        assert_eq!(
            int().coerce(Datum::Bytes(b"0".to_vec()), "k").unwrap(),
            Datum::Int(0)
        );
        assert_eq!(int().coerce(Datum::Float(2.5), "k").unwrap(), Datum::Int(3));
        assert_eq!(
            int().coerce(Datum::Int(1 << 31), "k").unwrap_err().code(),
            1264
        );
        assert_eq!(
            int()
                .coerce(Datum::Bytes(b"abc".to_vec()), "k")
                .unwrap_err()
                .code(),
            1366
        );
        let tiny_unsigned = SqlType {
            unsigned: true,
            ..SqlType::new(TypeKind::TinyInt)
        };
        assert_eq!(
            tiny_unsigned
                .coerce(Datum::Int(-1), "k")
                .unwrap_err()
                .code(),
            1264
        );
    }

    #[test]
    fn strings_decimals_and_dates() {
        let char5 = SqlType {
            length: 5,
            ..SqlType::new(TypeKind::Char)
        };
        assert_eq!(
            char5.coerce(Datum::Bytes(b"ab  ".to_vec()), "c").unwrap(),
            Datum::Bytes(b"ab".to_vec())
        );
        assert_eq!(
            char5
                .coerce(Datum::Bytes(b"abcdef".to_vec()), "c")
                .unwrap_err()
                .code(),
            1406
        );
        assert_eq!(
            char5
                .coerce(Datum::Bytes("ééééé".as_bytes().to_vec()), "c")
                .unwrap(),
            Datum::Bytes("ééééé".as_bytes().to_vec())
        );
        let money = SqlType {
            length: 6,
            scale: 2,
            ..SqlType::new(TypeKind::Decimal)
        };
        assert_eq!(
            datum_to_text(&money.coerce(Datum::Bytes(b"12.345".to_vec()), "m").unwrap()),
            b"12.35"
        );
        assert_eq!(
            datum_to_text(&money.coerce(Datum::Int(7), "m").unwrap()),
            b"7.00"
        );
        assert_eq!(
            money.coerce(Datum::Int(10_000), "m").unwrap_err().code(),
            1264
        );
        let dt = SqlType::new(TypeKind::DateTime);
        assert_eq!(
            datum_to_text(
                &dt.coerce(Datum::Bytes(b"2024-02-03 04:05:06".to_vec()), "d")
                    .unwrap()
            ),
            b"2024-02-03 04:05:06"
        );
    }

    #[test]
    fn comparisons_coerce_like_mysql() {
        assert_eq!(
            compare(&Datum::Int(2), &Datum::Bytes(b"10".to_vec())),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(&Datum::Bytes(b"2".to_vec()), &Datum::Bytes(b"10".to_vec())),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&Datum::Int(-1), &Datum::UInt(u64::MAX)),
            Some(Ordering::Less)
        );
        assert_eq!(compare(&Datum::Null, &Datum::Int(1)), None);
        assert_eq!(format_double(1.0), "1");
        assert_eq!(format_double(1.5), "1.5");
    }
}
