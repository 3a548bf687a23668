//! Date and time functions. Their arguments are dates, datetimes or text in either form; one
//! that is none of these gives NULL, as in MySQL. Times without a date are not supported.
//! Conversions to and from Unix time use the server's time zone, as `NOW()` does.

use chrono::{Datelike, Local, Months, NaiveDate, NaiveDateTime, TimeDelta, TimeZone, Timelike};
use sqlparser::ast::DateTimeField;
use strata_codec::Datum;

use super::calendar::{self, ExtractUnit, DAY_NAMES, MONTH_NAMES, TO_DAYS_OFFSET};
use crate::error::Result;
use crate::types::{datum_to_text, to_datetime, to_i64};

/// The unit of an `INTERVAL` added to a date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IntervalUnit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl IntervalUnit {
    pub fn from_field(field: &DateTimeField) -> Option<IntervalUnit> {
        use DateTimeField as F;
        Some(match field {
            F::Microsecond | F::Microseconds => IntervalUnit::Microsecond,
            F::Second | F::Seconds => IntervalUnit::Second,
            F::Minute | F::Minutes => IntervalUnit::Minute,
            F::Hour | F::Hours => IntervalUnit::Hour,
            F::Day | F::Days => IntervalUnit::Day,
            F::Week(_) | F::Weeks => IntervalUnit::Week,
            F::Month | F::Months => IntervalUnit::Month,
            F::Quarter => IntervalUnit::Quarter,
            F::Year | F::Years => IntervalUnit::Year,
            _ => return None,
        })
    }

    /// The unit `TIMESTAMPDIFF` and `TIMESTAMPADD` name as their first argument.
    pub fn from_name(name: &str) -> Option<IntervalUnit> {
        use IntervalUnit::*;
        Some(match name.to_ascii_uppercase().as_str() {
            "MICROSECOND" => Microsecond,
            "SECOND" => Second,
            "MINUTE" => Minute,
            "HOUR" => Hour,
            "DAY" => Day,
            "WEEK" => Week,
            "MONTH" => Month,
            "QUARTER" => Quarter,
            "YEAR" => Year,
            _ => return None,
        })
    }

    /// Whether adding it to a date gives a date (not a datetime).
    pub fn keeps_dates(self) -> bool {
        self >= IntervalUnit::Day
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateFunc {
    /// `date + INTERVAL amount unit`, `DATE_ADD`, `DATE_SUB` (with the amount negated).
    Add(IntervalUnit),
    /// `TIMESTAMPDIFF(unit, from, to)`: whole units from the first to the second.
    Diff(IntervalUnit),
    UtcTimestamp,
    UtcDate,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Microsecond,
    DayOfWeek,
    WeekDay,
    DayOfYear,
    Quarter,
    ToDays,
    DateDiff,
    LastDay,
    MonthName,
    DayName,
    DateFormat,
    UnixTimestamp,
    FromUnixtime,
    Week,
    YearWeek,
    WeekOfYear,
    FromDays,
    MakeDate,
    PeriodAdd,
    PeriodDiff,
    StrToDate,
    /// `CONVERT_TZ(dt, from, to)`: between offsets (`'+05:30'`) and `SYSTEM`; a named zone is
    /// NULL, as in MySQL without its time zone tables.
    ConvertTz,
    /// `EXTRACT(unit FROM value)`.
    Extract(ExtractUnit),
}

impl DateFunc {
    pub fn by_name(name: &str) -> Option<DateFunc> {
        use DateFunc::*;
        Some(match name {
            "YEAR" => Year,
            "MONTH" => Month,
            "DAY" | "DAYOFMONTH" => Day,
            "HOUR" => Hour,
            "MINUTE" => Minute,
            "SECOND" => Second,
            "MICROSECOND" => Microsecond,
            "DAYOFWEEK" => DayOfWeek,
            "WEEKDAY" => WeekDay,
            "DAYOFYEAR" => DayOfYear,
            "QUARTER" => Quarter,
            "TO_DAYS" => ToDays,
            "DATEDIFF" => DateDiff,
            "LAST_DAY" => LastDay,
            "MONTHNAME" => MonthName,
            "DAYNAME" => DayName,
            "DATE_FORMAT" => DateFormat,
            "UNIX_TIMESTAMP" => UnixTimestamp,
            "FROM_UNIXTIME" => FromUnixtime,
            "UTC_TIMESTAMP" => UtcTimestamp,
            "UTC_DATE" => UtcDate,
            "WEEK" => Week,
            "YEARWEEK" => YearWeek,
            "WEEKOFYEAR" => WeekOfYear,
            "FROM_DAYS" => FromDays,
            "MAKEDATE" => MakeDate,
            "PERIOD_ADD" => PeriodAdd,
            "PERIOD_DIFF" => PeriodDiff,
            "STR_TO_DATE" => StrToDate,
            "CONVERT_TZ" => ConvertTz,
            _ => return None,
        })
    }

    pub fn arity_ok(self, n: usize) -> bool {
        match self {
            DateFunc::DateDiff
            | DateFunc::DateFormat
            | DateFunc::Add(_)
            | DateFunc::Diff(_)
            | DateFunc::MakeDate
            | DateFunc::PeriodAdd
            | DateFunc::PeriodDiff
            | DateFunc::StrToDate => n == 2,
            DateFunc::Week | DateFunc::YearWeek => n == 1 || n == 2,
            DateFunc::ConvertTz => n == 3,
            DateFunc::UtcTimestamp | DateFunc::UtcDate => n == 0,
            DateFunc::UnixTimestamp => n <= 1,
            DateFunc::FromUnixtime => n == 1 || n == 2,
            _ => n == 1,
        }
    }

    /// What the result is described as: `Some(true)` a date, `Some(false)` a datetime.
    pub fn returns_date(self, args: usize) -> Option<bool> {
        match self {
            DateFunc::LastDay | DateFunc::UtcDate | DateFunc::FromDays | DateFunc::MakeDate => {
                Some(true)
            }
            DateFunc::UtcTimestamp | DateFunc::ConvertTz => Some(false),
            DateFunc::FromUnixtime if args == 1 => Some(false),
            _ => None,
        }
    }

    /// Whether the result is text (else a number, or the date of [`DateFunc::returns_date`]).
    pub fn returns_text(self, args: usize) -> bool {
        match self {
            DateFunc::MonthName | DateFunc::DayName | DateFunc::DateFormat => true,
            DateFunc::FromUnixtime => args == 2,
            _ => false,
        }
    }
}

fn month_name(dt: &NaiveDateTime) -> &'static str {
    MONTH_NAMES[dt.month0() as usize]
}

fn day_name(dt: &NaiveDateTime) -> &'static str {
    DAY_NAMES[dt.weekday().num_days_from_monday() as usize]
}

fn last_day_of_month(date: NaiveDate) -> Option<NaiveDate> {
    let (year, month) = if date.month() == 12 {
        (date.year() + 1, 1)
    } else {
        (date.year(), date.month() + 1)
    };
    NaiveDate::from_ymd_opt(year, month, 1)?.pred_opt()
}

fn ordinal_suffix(day: u32) -> &'static str {
    match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// `DATE_FORMAT(dt, format)`.
pub fn format(dt: &NaiveDateTime, format: &[u8]) -> Vec<u8> {
    let mut out = String::new();
    let mut spec = false;
    let hour12 = |h: u32| if h.is_multiple_of(12) { 12 } else { h % 12 };
    let am_pm = |h: u32| if h < 12 { "AM" } else { "PM" };
    for c in String::from_utf8_lossy(format).chars() {
        if !spec {
            if c == '%' {
                spec = true;
            } else {
                out.push(c);
            }
            continue;
        }
        spec = false;
        let date = dt.date();
        let piece = match c {
            'a' => day_name(dt)[..3].to_string(),
            'b' => month_name(dt)[..3].to_string(),
            'c' => dt.month().to_string(),
            'D' => format!("{}{}", dt.day(), ordinal_suffix(dt.day())),
            'd' => format!("{:02}", dt.day()),
            'e' => dt.day().to_string(),
            'f' => format!("{:06}", dt.nanosecond() / 1000),
            'H' => format!("{:02}", dt.hour()),
            'h' | 'I' => format!("{:02}", hour12(dt.hour())),
            'i' => format!("{:02}", dt.minute()),
            'j' => format!("{:03}", dt.ordinal()),
            'k' => dt.hour().to_string(),
            'l' => hour12(dt.hour()).to_string(),
            'M' => month_name(dt).to_string(),
            'm' => format!("{:02}", dt.month()),
            'p' => am_pm(dt.hour()).to_string(),
            'r' => format!(
                "{:02}:{:02}:{:02} {}",
                hour12(dt.hour()),
                dt.minute(),
                dt.second(),
                am_pm(dt.hour())
            ),
            'S' | 's' => format!("{:02}", dt.second()),
            'T' => format!("{:02}:{:02}:{:02}", dt.hour(), dt.minute(), dt.second()),
            'U' => format!("{:02}", calendar::week(date, calendar::FORMAT_U).0),
            'u' => format!("{:02}", calendar::week(date, calendar::FORMAT_LOWER_U).0),
            'V' => format!("{:02}", calendar::week(date, calendar::FORMAT_V).0),
            'v' => format!("{:02}", calendar::week(date, calendar::FORMAT_LOWER_V).0),
            'W' => day_name(dt).to_string(),
            'w' => dt.weekday().num_days_from_sunday().to_string(),
            'X' => format!("{:04}", calendar::week(date, calendar::FORMAT_V).1),
            'x' => format!("{:04}", calendar::week(date, calendar::FORMAT_LOWER_V).1),
            'Y' => format!("{:04}", dt.year()),
            'y' => format!("{:02}", dt.year().rem_euclid(100)),
            other => other.to_string(),
        };
        out.push_str(&piece);
    }
    out.into_bytes()
}

/// `dt` moved by `amount` of `unit`; months past the end of the shorter month land on its last
/// day, as in MySQL. `None` outside years 0 to 9999.
fn add_interval(dt: NaiveDateTime, unit: IntervalUnit, amount: &Datum) -> Option<NaiveDateTime> {
    use IntervalUnit::*;
    let amount = crate::types::to_f64(amount)?;
    let whole = amount.round();
    if !whole.is_finite() || whole.abs() > 1e12 {
        return None;
    }
    let whole = whole as i64;
    let moved = match unit {
        Month | Quarter | Year => {
            let months = whole.checked_mul(match unit {
                Month => 1,
                Quarter => 3,
                _ => 12,
            })?;
            let by = Months::new(u32::try_from(months.unsigned_abs()).ok()?);
            if months >= 0 {
                dt.checked_add_months(by)?
            } else {
                dt.checked_sub_months(by)?
            }
        }
        _ => {
            let delta = match unit {
                Microsecond => TimeDelta::microseconds(whole),
                // Seconds may carry a fraction.
                Second => TimeDelta::microseconds((amount * 1e6).round() as i64),
                Minute => TimeDelta::try_minutes(whole)?,
                Hour => TimeDelta::try_hours(whole)?,
                Day => TimeDelta::try_days(whole)?,
                _ => TimeDelta::try_weeks(whole)?,
            };
            dt.checked_add_signed(delta)?
        }
    };
    (0..=9999).contains(&moved.year()).then_some(moved)
}

/// Whole `unit`s from `from` to `to`, cut toward zero. Months, quarters and years count
/// calendar months, a month being whole once the day and time of day are reached again.
fn units_between(from: NaiveDateTime, to: NaiveDateTime, unit: IntervalUnit) -> i64 {
    use IntervalUnit::*;
    match unit {
        Month | Quarter | Year => {
            let mut months = i64::from(to.year() - from.year()) * 12 + i64::from(to.month())
                - i64::from(from.month());
            let (from_rest, to_rest) = ((from.day(), from.time()), (to.day(), to.time()));
            if months > 0 && to_rest < from_rest {
                months -= 1;
            } else if months < 0 && to_rest > from_rest {
                months += 1;
            }
            months
                / match unit {
                    Month => 1,
                    Quarter => 3,
                    _ => 12,
                }
        }
        _ => {
            let micros = (to - from).num_microseconds().unwrap_or(0);
            micros
                / match unit {
                    Microsecond => 1,
                    Second => 1_000_000,
                    Minute => 60_000_000,
                    Hour => 3_600_000_000,
                    Day => 86_400_000_000,
                    _ => 604_800_000_000,
                }
        }
    }
}

/// Whether a value holds a date without a time of day.
fn is_date_only(d: &Datum) -> bool {
    match d {
        Datum::Date(_) => true,
        Datum::Bytes(b) => !b.contains(&b':'),
        _ => false,
    }
}

/// The offset from UTC, in seconds, of a time zone as CONVERT_TZ reads it: `±hh:mm` (within
/// MySQL's -13:59 to +14:00) or `SYSTEM` (the server's zone at `at`, a UTC time when
/// `at_is_utc`, else the zone's own); None for a named zone.
fn zone_offset(zone: &[u8], at: NaiveDateTime, at_is_utc: bool) -> Option<i64> {
    let zone = std::str::from_utf8(zone).ok()?.trim();
    if zone.eq_ignore_ascii_case("SYSTEM") {
        let offset = if at_is_utc {
            Local.from_utc_datetime(&at).offset().local_minus_utc()
        } else {
            Local
                .from_local_datetime(&at)
                .earliest()?
                .offset()
                .local_minus_utc()
        };
        return Some(i64::from(offset));
    }
    let (sign, rest) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    let (hours, minutes): (i64, i64) = (hours.parse().ok()?, minutes.parse().ok()?);
    let offset = sign * (hours * 3600 + minutes * 60);
    ((0..60).contains(&minutes) && (-(13 * 3600 + 59 * 60)..=14 * 3600).contains(&offset))
        .then_some(offset)
}

fn from_unix(seconds: i64) -> Option<NaiveDateTime> {
    Local
        .timestamp_opt(seconds, 0)
        .single()
        .map(|t| t.naive_local())
}

pub(super) fn eval(func: DateFunc, values: &[Datum]) -> Result<Datum> {
    use DateFunc::*;
    match func {
        UnixTimestamp if values.is_empty() => return Ok(Datum::Int(Local::now().timestamp())),
        UtcTimestamp => {
            let now = chrono::Utc::now().naive_utc();
            return Ok(Datum::DateTime(now.with_nanosecond(0).unwrap_or(now)));
        }
        UtcDate => return Ok(Datum::Date(chrono::Utc::now().date_naive())),
        _ => {}
    }
    if values.contains(&Datum::Null) {
        return Ok(Datum::Null);
    }
    match func {
        FromDays => {
            let n = to_i64(&values[0]).unwrap_or(0);
            return Ok(calendar::from_days(n).map_or(Datum::Null, Datum::Date));
        }
        MakeDate => {
            let (year, day) = (to_i64(&values[0]), to_i64(&values[1]));
            let made = year.zip(day).and_then(|(y, d)| calendar::make_date(y, d));
            return Ok(made.map_or(Datum::Null, Datum::Date));
        }
        PeriodAdd | PeriodDiff => {
            let (a, b) = (
                to_i64(&values[0]).unwrap_or(0),
                to_i64(&values[1]).unwrap_or(0),
            );
            return Ok(Datum::Int(match func {
                PeriodAdd => calendar::period_add(a, b),
                _ => calendar::period_diff(a, b),
            }));
        }
        ConvertTz => {
            let converted = to_datetime(&values[0]).and_then(|dt| {
                let from = zone_offset(&datum_to_text(&values[1]), dt, false)?;
                let utc = dt - TimeDelta::seconds(from);
                let to = zone_offset(&datum_to_text(&values[2]), utc, true)?;
                Some(utc + TimeDelta::seconds(to))
            });
            return Ok(converted.map_or(Datum::Null, Datum::DateTime));
        }
        StrToDate => {
            let format = datum_to_text(&values[1]);
            let read = calendar::str_to_date(&datum_to_text(&values[0]), &format);
            return Ok(match read {
                Some(dt) if calendar::format_has_time(&format) => Datum::DateTime(dt),
                Some(dt) => Datum::Date(dt.date()),
                None => Datum::Null,
            });
        }
        _ => {}
    }
    if func == FromUnixtime {
        let Some(dt) = to_i64(&values[0]).filter(|s| *s >= 0).and_then(from_unix) else {
            return Ok(Datum::Null);
        };
        return Ok(match values.get(1) {
            Some(f) => Datum::Bytes(format(&dt, &datum_to_text(f))),
            None => Datum::DateTime(dt),
        });
    }
    // TIME ± INTERVAL of days or less is a TIME.
    if let (Add(unit), Datum::Time(t)) = (func, &values[0]) {
        if matches!(
            unit,
            IntervalUnit::Month | IntervalUnit::Quarter | IntervalUnit::Year
        ) {
            return Ok(Datum::Null);
        }
        let base = NaiveDateTime::default();
        let at = base.checked_add_signed(TimeDelta::microseconds(*t));
        let moved = at.and_then(|at| add_interval(at, unit, &values[1]));
        return Ok(moved
            .and_then(|m| (m - base).num_microseconds())
            .map_or(Datum::Null, |m| Datum::Time(super::clock::clamp(m))));
    }
    // The clock parts of a TIME (its hours may pass 23), or of text that is one.
    if matches!(func, Hour | Minute | Second | Microsecond) {
        let time = match &values[0] {
            Datum::Time(t) => Some(*t),
            v @ Datum::Bytes(_) if to_datetime(v).is_none() => super::clock::to_time(v),
            _ => None,
        };
        if let Some(t) = time {
            let magnitude = t.unsigned_abs();
            let seconds = (magnitude / 1_000_000) as i64;
            return Ok(Datum::Int(match func {
                Hour => seconds / 3600,
                Minute => seconds / 60 % 60,
                Second => seconds % 60,
                _ => (magnitude % 1_000_000) as i64,
            }));
        }
    }
    let Some(dt) = to_datetime(&values[0]) else {
        return Ok(Datum::Null);
    };
    let int = |n: u32| Datum::Int(i64::from(n));
    Ok(match func {
        Diff(unit) => match to_datetime(&values[1]) {
            Some(to) => Datum::Int(units_between(dt, to, unit)),
            None => Datum::Null,
        },
        Add(unit) => match add_interval(dt, unit, &values[1]) {
            Some(moved) if unit.keeps_dates() && is_date_only(&values[0]) => {
                Datum::Date(moved.date())
            }
            Some(moved) => Datum::DateTime(moved),
            None => Datum::Null,
        },
        Year => Datum::Int(i64::from(dt.year())),
        Month => int(dt.month()),
        Day => int(dt.day()),
        Hour => int(dt.hour()),
        Minute => int(dt.minute()),
        Second => int(dt.second()),
        Microsecond => int(dt.nanosecond() / 1000),
        DayOfWeek => int(dt.weekday().number_from_sunday()),
        WeekDay => int(dt.weekday().num_days_from_monday()),
        DayOfYear => int(dt.ordinal()),
        Quarter => int(dt.month0() / 3 + 1),
        ToDays => Datum::Int(i64::from(dt.date().num_days_from_ce()) + TO_DAYS_OFFSET),
        DateDiff => match to_datetime(&values[1]) {
            Some(other) => Datum::Int((dt.date() - other.date()).num_days()),
            None => Datum::Null,
        },
        LastDay => last_day_of_month(dt.date()).map_or(Datum::Null, Datum::Date),
        MonthName => Datum::Bytes(month_name(&dt).as_bytes().to_vec()),
        DayName => Datum::Bytes(day_name(&dt).as_bytes().to_vec()),
        DateFormat => Datum::Bytes(format(&dt, &datum_to_text(&values[1]))),
        UnixTimestamp => Datum::Int(
            Local
                .from_local_datetime(&dt)
                .earliest()
                .map_or(0, |t| t.timestamp().max(0)),
        ),
        Week => {
            let mode = values.get(1).and_then(to_i64).unwrap_or(0);
            int(calendar::week(dt.date(), calendar::week_behaviour(mode)).0)
        }
        YearWeek => {
            let mode = values.get(1).and_then(to_i64).unwrap_or(0);
            let (week, year) = calendar::year_week(dt.date(), mode);
            Datum::Int(i64::from(year) * 100 + i64::from(week))
        }
        WeekOfYear => int(calendar::week(dt.date(), calendar::week_behaviour(3)).0),
        Extract(unit) => Datum::Int(unit.extract(&dt)),
        FromUnixtime | UtcTimestamp | UtcDate | FromDays | MakeDate | PeriodAdd | PeriodDiff
        | StrToDate | ConvertTz => unreachable!("handled above"),
    })
}
