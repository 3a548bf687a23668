//! TIME values (`Datum::Time`): MySQL's signed durations, at most 838:59:59 either way,
//! kept as microseconds; how text and numbers read as one; and the functions of them (TIME,
//! TIME_TO_SEC, SEC_TO_TIME, MAKETIME, TIMEDIFF, ADDTIME, SUBTIME, TIME_FORMAT).

use chrono::{NaiveDateTime, Timelike};
use strata_codec::Datum;

use crate::error::Result;
use crate::types::{self, to_datetime};

const MICROS_PER_SECOND: i64 = 1_000_000;
/// The largest TIME, 838:59:59, in microseconds.
pub const TIME_MAX: i64 = (838 * 3600 + 59 * 60 + 59) * MICROS_PER_SECOND;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeFunc {
    /// TIME(expr): the time part.
    Time,
    TimeToSec,
    SecToTime,
    MakeTime,
    TimeDiff,
    AddTime,
    SubTime,
    TimeFormat,
}

impl TimeFunc {
    pub fn by_name(name: &str) -> Option<TimeFunc> {
        Some(match name {
            "TIME" => TimeFunc::Time,
            "TIME_TO_SEC" => TimeFunc::TimeToSec,
            "SEC_TO_TIME" => TimeFunc::SecToTime,
            "MAKETIME" => TimeFunc::MakeTime,
            "TIMEDIFF" => TimeFunc::TimeDiff,
            "ADDTIME" => TimeFunc::AddTime,
            "SUBTIME" => TimeFunc::SubTime,
            "TIME_FORMAT" => TimeFunc::TimeFormat,
            _ => return None,
        })
    }

    pub fn arity(self) -> usize {
        match self {
            TimeFunc::Time | TimeFunc::TimeToSec | TimeFunc::SecToTime => 1,
            TimeFunc::MakeTime => 3,
            _ => 2,
        }
    }

    /// What the result is: a TIME, a number, or (ADDTIME and SUBTIME of a datetime) a
    /// datetime, which typing describes by its first argument.
    pub fn returns_time(self) -> bool {
        !matches!(self, TimeFunc::TimeToSec | TimeFunc::TimeFormat)
    }
}

/// Keeps a duration in TIME's range, as MySQL clamps one that overflows.
pub fn clamp(micros: i64) -> i64 {
    micros.clamp(-TIME_MAX, TIME_MAX)
}

/// Reads MySQL's TIME literals: `[-][D ]HH:MM[:SS[.ffffff]]`, `[-]HHMMSS[.ffffff]` (and its
/// shorter `MMSS`, `SS`), and the time part of a datetime.
pub fn parse_time(text: &str) -> Option<i64> {
    let text = text.trim();
    // A dash past the sign is a date's: the time part of a datetime.
    if text.trim_start_matches('-').contains('-') {
        if let Some(dt) = types::parse_datetime(text) {
            return Some(time_of_day(&dt));
        }
    }
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, text),
    };
    let (days, clock) = match body.split_once(' ') {
        Some((d, rest)) if d.bytes().all(|b| b.is_ascii_digit()) => {
            (d.parse::<i64>().ok()?, rest.trim())
        }
        _ => (0, body),
    };
    let (whole, fraction) = match clock.split_once('.') {
        Some((w, f)) => (w, f),
        None => (clock, ""),
    };
    if fraction.bytes().any(|b| !b.is_ascii_digit()) || whole.is_empty() {
        return None;
    }
    let number = |s: &str| -> Option<i64> {
        if s.is_empty() || s.len() > 7 || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse().ok()
        }
    };
    let (h, m, s) = if whole.contains(':') {
        let parts: Vec<&str> = whole.split(':').collect();
        match parts.as_slice() {
            [h, m] => (number(h)?, number(m)?, 0),
            [h, m, s] => (number(h)?, number(m)?, number(s)?),
            _ => return None,
        }
    } else {
        let n = number(whole)?;
        (n / 10_000, n / 100 % 100, n % 100)
    };
    if m > 59 || s > 59 {
        return None;
    }
    let mut digits: String = fraction.chars().take(6).collect();
    while digits.len() < 6 {
        digits.push('0');
    }
    let micros_part: i64 = digits.parse().ok()?;
    let total = ((days * 24 + h) * 3600 + m * 60 + s) * MICROS_PER_SECOND + micros_part;
    Some(clamp(if negative { -total } else { total }))
}

fn time_of_day(dt: &NaiveDateTime) -> i64 {
    i64::from(dt.num_seconds_from_midnight()) * MICROS_PER_SECOND
        + i64::from(dt.nanosecond() / 1000 % 1_000_000)
}

/// A value read as a TIME; None when it is not one.
pub fn to_time(d: &Datum) -> Option<i64> {
    match d {
        Datum::Time(t) => Some(*t),
        Datum::DateTime(dt) => Some(time_of_day(dt)),
        Datum::Date(_) => Some(0),
        Datum::Bytes(b) => parse_time(std::str::from_utf8(b).ok()?),
        Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) | Datum::Float(_) => {
            parse_time(&String::from_utf8_lossy(&types::datum_to_text(d)))
        }
        Datum::Null => None,
    }
}

/// `[-]HH:MM:SS`, then `fsp` digits of the second's fraction (None: six when there is one).
pub fn format_time(micros: i64, fsp: Option<u8>) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let magnitude = micros.unsigned_abs();
    let seconds = magnitude / 1_000_000;
    let fraction = magnitude % 1_000_000;
    let mut out = format!(
        "{sign}{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    let digits = match fsp {
        Some(d @ 1..=6) => usize::from(d),
        None if fraction != 0 => 6,
        _ => return out,
    };
    out.push('.');
    out.push_str(&format!("{fraction:06}")[..digits]);
    out
}

/// Rounds a TIME to `fsp` digits of its second's fraction, as MySQL stores one.
pub fn round_fraction(micros: i64, fsp: u32) -> i64 {
    let unit = 10i64.pow(6 - fsp.min(6));
    let rounded = (micros.abs() + unit / 2) / unit * unit;
    clamp(if micros < 0 { -rounded } else { rounded })
}

/// The value of a TIME in numeric context: `HHMMSS.ffffff`.
pub fn time_number(micros: i64) -> rust_decimal::Decimal {
    let magnitude = micros.unsigned_abs();
    let seconds = (magnitude / 1_000_000) as i64;
    let hhmmss = seconds / 3600 * 10_000 + seconds / 60 % 60 * 100 + seconds % 60;
    let value = rust_decimal::Decimal::from(hhmmss)
        + rust_decimal::Decimal::new((magnitude % 1_000_000) as i64, 6);
    let value = value.normalize();
    if micros < 0 {
        -value
    } else {
        value
    }
}

/// Whether a value is a date and time (so ADDTIME and SUBTIME give a datetime).
fn as_datetime(d: &Datum) -> Option<NaiveDateTime> {
    match d {
        Datum::DateTime(dt) => Some(*dt),
        Datum::Bytes(b) => {
            let text = std::str::from_utf8(b).ok()?.trim();
            // A date part has its dashes; a TIME's only sign is in front.
            if text.trim_start_matches('-').contains('-') {
                to_datetime(d)
            } else {
                None
            }
        }
        _ => None,
    }
}

pub fn eval(f: TimeFunc, args: &[Datum]) -> Result<Datum> {
    if args.contains(&Datum::Null) {
        return Ok(Datum::Null);
    }
    let time = |i: usize| to_time(&args[i]);
    Ok(match f {
        TimeFunc::Time => time(0).map_or(Datum::Null, Datum::Time),
        TimeFunc::TimeToSec => match time(0) {
            Some(t) => Datum::Int(t / MICROS_PER_SECOND),
            None => Datum::Null,
        },
        TimeFunc::SecToTime => match types::to_decimal(&args[0]) {
            Some(seconds) => {
                let micros = (seconds * rust_decimal::Decimal::from(MICROS_PER_SECOND))
                    .trunc()
                    .to_string()
                    .parse::<i128>()
                    .unwrap_or(0);
                Datum::Time(clamp(
                    micros.clamp(-(TIME_MAX as i128), TIME_MAX as i128) as i64
                ))
            }
            None => Datum::Null,
        },
        TimeFunc::MakeTime => {
            let (Some(h), Some(m)) = (types::to_i64(&args[0]), types::to_i64(&args[1])) else {
                return Ok(Datum::Null);
            };
            let Some(s) = types::to_decimal(&args[2]) else {
                return Ok(Datum::Null);
            };
            if !(0..60).contains(&m) || s.is_sign_negative() || s >= rust_decimal::Decimal::from(60)
            {
                return Ok(Datum::Null);
            }
            let s_micros = (s * rust_decimal::Decimal::from(MICROS_PER_SECOND))
                .trunc()
                .to_string()
                .parse::<i64>()
                .unwrap_or(0);
            let magnitude =
                (h.unsigned_abs().min(1_000) as i64 * 3600 + m * 60) * MICROS_PER_SECOND + s_micros;
            Datum::Time(clamp(if h < 0 { -magnitude } else { magnitude }))
        }
        TimeFunc::TimeDiff => match (as_datetime(&args[0]), as_datetime(&args[1])) {
            (Some(a), Some(b)) => {
                let micros = (a - b).num_microseconds().unwrap_or(i64::MAX);
                Datum::Time(clamp(micros))
            }
            (None, None) => match (time(0), time(1)) {
                (Some(a), Some(b)) => Datum::Time(clamp(a - b)),
                _ => Datum::Null,
            },
            // A datetime and a time: MySQL gives NULL.
            _ => Datum::Null,
        },
        TimeFunc::AddTime | TimeFunc::SubTime => {
            let Some(delta) = time(1) else {
                return Ok(Datum::Null);
            };
            let delta = if f == TimeFunc::SubTime {
                -delta
            } else {
                delta
            };
            match as_datetime(&args[0]) {
                Some(dt) => dt
                    .checked_add_signed(chrono::Duration::microseconds(delta))
                    .map_or(Datum::Null, Datum::DateTime),
                None => match time(0) {
                    Some(t) => Datum::Time(clamp(t + delta)),
                    None => Datum::Null,
                },
            }
        }
        TimeFunc::TimeFormat => match time(0) {
            Some(t) => Datum::Bytes(time_format(t, &types::datum_to_text(&args[1]))),
            None => Datum::Null,
        },
    })
}

/// TIME_FORMAT: DATE_FORMAT's hour, minute, second and fraction specifiers (`%H` may pass 23);
/// a date specifier gives NULL, as in MySQL.
fn time_format(micros: i64, format: &[u8]) -> Vec<u8> {
    let magnitude = micros.unsigned_abs();
    let seconds = magnitude / 1_000_000;
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let fraction = magnitude % 1_000_000;
    let twelve = if h % 12 == 0 { 12 } else { h % 12 };
    let ampm = if h % 24 < 12 { "AM" } else { "PM" };
    let mut out = String::new();
    if micros < 0 {
        out.push('-');
    }
    let text = String::from_utf8_lossy(format);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else {
            break;
        };
        match spec {
            'H' => out.push_str(&format!("{h:02}")),
            'k' => out.push_str(&h.to_string()),
            'h' | 'I' => out.push_str(&format!("{twelve:02}")),
            'l' => out.push_str(&twelve.to_string()),
            'i' => out.push_str(&format!("{m:02}")),
            'S' | 's' => out.push_str(&format!("{s:02}")),
            'f' => out.push_str(&format!("{fraction:06}")),
            'p' => out.push_str(ampm),
            'r' => out.push_str(&format!("{twelve:02}:{m:02}:{s:02} {ampm}")),
            'T' => out.push_str(&format!("{h:02}:{m:02}:{s:02}")),
            '%' => out.push('%'),
            'a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'U' | 'u' | 'V' | 'v' | 'W'
            | 'w' | 'X' | 'x' | 'Y' | 'y' => return b"NULL".to_vec(),
            other => out.push(other),
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Option<String> {
        parse_time(text).map(|m| format_time(m, None))
    }

    #[test]
    fn literals_read_as_mysql_reads_them() {
        assert_eq!(t("10:11:12").as_deref(), Some("10:11:12"));
        assert_eq!(t("1:2").as_deref(), Some("01:02:00"));
        assert_eq!(t("-838:59:59").as_deref(), Some("-838:59:59"));
        assert_eq!(t("900:00:00").as_deref(), Some("838:59:59"));
        assert_eq!(t("2 10:00:00").as_deref(), Some("58:00:00"));
        assert_eq!(t("101112").as_deref(), Some("10:11:12"));
        assert_eq!(t("112").as_deref(), Some("00:01:12"));
        assert_eq!(t("10:11:12.5").as_deref(), Some("10:11:12.500000"));
        assert_eq!(t("2024-01-02 03:04:05").as_deref(), Some("03:04:05"));
        assert_eq!(t("10:61:00"), None);
        assert_eq!(t("abc"), None);
    }

    #[test]
    fn functions_follow_the_manual() {
        let text = |s: &str| Datum::Bytes(s.as_bytes().to_vec());
        let time = |d: Datum| match d {
            Datum::Time(m) => format_time(m, None),
            other => format!("{other:?}"),
        };
        assert_eq!(
            time(eval(TimeFunc::TimeDiff, &[text("10:00:00"), text("12:30:00.5")]).unwrap()),
            "-02:30:00.500000"
        );
        assert_eq!(
            time(
                eval(
                    TimeFunc::TimeDiff,
                    &[
                        text("2008-12-31 23:59:59.000001"),
                        text("2008-12-30 01:01:01.000002")
                    ]
                )
                .unwrap()
            ),
            "46:58:57.999999"
        );
        assert_eq!(
            time(eval(TimeFunc::SecToTime, &[Datum::Int(2378)]).unwrap()),
            "00:39:38"
        );
        assert_eq!(
            eval(TimeFunc::TimeToSec, &[text("22:23:00")]).unwrap(),
            Datum::Int(80580)
        );
        assert_eq!(
            time(
                eval(
                    TimeFunc::MakeTime,
                    &[Datum::Int(12), Datum::Int(15), Datum::Int(30)]
                )
                .unwrap()
            ),
            "12:15:30"
        );
        assert_eq!(
            time(
                eval(
                    TimeFunc::AddTime,
                    &[text("01:00:00.999999"), text("02:00:00.999998")]
                )
                .unwrap()
            ),
            "03:00:01.999997"
        );
        assert_eq!(
            eval(
                TimeFunc::AddTime,
                &[text("2007-12-31 23:59:59.999999"), text("1 1:1:1.000002")]
            )
            .unwrap(),
            Datum::DateTime(types::parse_datetime("2008-01-02 01:01:01.000001").unwrap())
        );
        assert_eq!(
            eval(
                TimeFunc::TimeFormat,
                &[text("100:00:00"), text("%H %k %h %I %l")]
            )
            .unwrap(),
            text("100 100 04 04 4")
        );
        assert_eq!(
            time_number(parse_time("10:11:12.5").unwrap()).to_string(),
            "101112.5"
        );
    }
}
