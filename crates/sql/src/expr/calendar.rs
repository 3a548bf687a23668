//! Calendar arithmetic MySQL defines its own way: week numbers in the eight week modes,
//! `STR_TO_DATE`, day numbers, periods (`YYYYMM`) and `EXTRACT`'s units.

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

/// Days from MySQL's day 0 (`TO_DAYS('0000-01-01')` is 1) to chrono's day 1 (0001-01-01).
pub const TO_DAYS_OFFSET: i64 = 365;

/// Week behaviour flags, as MySQL's `calc_week` takes them.
const MONDAY_FIRST: u32 = 1;
const WEEK_YEAR: u32 = 2;
const FIRST_WEEKDAY: u32 = 4;

/// The behaviour flags of `WEEK(date, mode)`'s mode (0 to 7): modes without Monday first
/// count their first week from the first Sunday.
pub fn week_behaviour(mode: i64) -> u32 {
    let mut flags = (mode & 7) as u32;
    if flags & MONDAY_FIRST == 0 {
        flags ^= FIRST_WEEKDAY;
    }
    flags
}

/// The behaviour of `DATE_FORMAT`'s `%U`, `%u`, `%V`/`%X` and `%v`/`%x`.
pub const FORMAT_U: u32 = FIRST_WEEKDAY;
pub const FORMAT_LOWER_U: u32 = MONDAY_FIRST;
pub const FORMAT_V: u32 = WEEK_YEAR | FIRST_WEEKDAY;
pub const FORMAT_LOWER_V: u32 = MONDAY_FIRST | WEEK_YEAR;

fn day_number(date: NaiveDate) -> i64 {
    i64::from(date.num_days_from_ce()) + TO_DAYS_OFFSET
}

fn days_in_year(year: i32) -> i64 {
    if NaiveDate::from_ymd_opt(year, 2, 29).is_some() {
        366
    } else {
        365
    }
}

/// The week of `date` and the year it belongs to, under `behaviour` (MySQL's `calc_week`):
/// weeks start on Monday or Sunday; the first week is the one with the first such day, or the
/// first with four days of the year; days before it are week 0 of this year, or the last week
/// of the year before when weeks belong to years (`WEEK_YEAR`).
pub fn week(date: NaiveDate, behaviour: u32) -> (u32, i32) {
    let monday_first = behaviour & MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & FIRST_WEEKDAY != 0;
    let daynr = day_number(date);
    let mut first_daynr = day_number(NaiveDate::from_ymd_opt(date.year(), 1, 1).unwrap_or(date));
    // 0 for the first day of the week.
    let weekday_of = |daynr: i64| (daynr + 5 + i64::from(!monday_first)).rem_euclid(7);
    let mut weekday = weekday_of(first_daynr);
    let mut year = date.year();
    let first_week_is_partial =
        |weekday: i64| (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4);
    if date.month() == 1 && i64::from(date.day()) <= 7 - weekday {
        if !week_year && first_week_is_partial(weekday) {
            return (0, year);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first_daynr -= days;
        weekday = (weekday + 53 * 7 - days).rem_euclid(7);
    }
    let days = if first_week_is_partial(weekday) {
        daynr - (first_daynr + (7 - weekday))
    } else {
        daynr - (first_daynr - weekday)
    };
    if week_year && days >= 52 * 7 {
        let weekday = (weekday + days_in_year(year)).rem_euclid(7);
        if !first_week_is_partial(weekday) {
            return (1, year + 1);
        }
    }
    ((days / 7 + 1) as u32, year)
}

/// `YEARWEEK(date, mode)`: the week and the year it belongs to; weeks at the edges of a year
/// belong to the year that holds most of them (or their first day), never week 0.
pub fn year_week(date: NaiveDate, mode: i64) -> (u32, i32) {
    week(date, week_behaviour(mode) | WEEK_YEAR)
}

/// `FROM_DAYS(n)`: the date of MySQL day number `n`; NULL before year 1.
pub fn from_days(n: i64) -> Option<NaiveDate> {
    let ce = i32::try_from(n - TO_DAYS_OFFSET).ok()?;
    NaiveDate::from_num_days_from_ce_opt(ce).filter(|d| d.year() >= 1)
}

/// `MAKEDATE(year, day_of_year)`: years 0 to 69 are 2000 to 2069, 70 to 99 are 1970 to 1999.
pub fn make_date(year: i64, day: i64) -> Option<NaiveDate> {
    if day < 1 {
        return None;
    }
    let year = match year {
        0..=69 => year + 2000,
        70..=99 => year + 1900,
        _ => year,
    };
    let first = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, 1, 1)?;
    first
        .checked_add_days(chrono::Days::new(day as u64 - 1))
        .filter(|d| d.year() <= 9999)
}

/// A period (`YYMM` or `YYYYMM`) as a count of months.
fn period_months(period: i64) -> i64 {
    if period == 0 {
        return 0;
    }
    let mut year = period / 100;
    if year < 70 {
        year += 2000;
    } else if year < 100 {
        year += 1900;
    }
    year * 12 + period % 100 - 1
}

/// `PERIOD_ADD(period, months)`, as `YYYYMM`.
pub fn period_add(period: i64, months: i64) -> i64 {
    if period == 0 {
        return 0;
    }
    let total = period_months(period) + months;
    total.div_euclid(12) * 100 + total.rem_euclid(12) + 1
}

/// `PERIOD_DIFF(a, b)`: months from period b to period a.
pub fn period_diff(a: i64, b: i64) -> i64 {
    period_months(a) - period_months(b)
}

/// The unit of `EXTRACT(unit FROM value)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtractUnit {
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Microsecond,
    YearMonth,
    DayHour,
    DayMinute,
    DaySecond,
    DayMicrosecond,
    HourMinute,
    HourSecond,
    HourMicrosecond,
    MinuteSecond,
    MinuteMicrosecond,
    SecondMicrosecond,
}

impl ExtractUnit {
    pub fn by_name(name: &str) -> Option<ExtractUnit> {
        use ExtractUnit::*;
        Some(match name.to_ascii_uppercase().as_str() {
            "YEAR" => Year,
            "QUARTER" => Quarter,
            "MONTH" => Month,
            "WEEK" => Week,
            "DAY" => Day,
            "HOUR" => Hour,
            "MINUTE" => Minute,
            "SECOND" => Second,
            "MICROSECOND" => Microsecond,
            "YEAR_MONTH" => YearMonth,
            "DAY_HOUR" => DayHour,
            "DAY_MINUTE" => DayMinute,
            "DAY_SECOND" => DaySecond,
            "DAY_MICROSECOND" => DayMicrosecond,
            "HOUR_MINUTE" => HourMinute,
            "HOUR_SECOND" => HourSecond,
            "HOUR_MICROSECOND" => HourMicrosecond,
            "MINUTE_SECOND" => MinuteSecond,
            "MINUTE_MICROSECOND" => MinuteMicrosecond,
            "SECOND_MICROSECOND" => SecondMicrosecond,
            _ => return None,
        })
    }

    /// The unit's fields of `dt`, each written after the last in its own digits.
    pub fn extract(self, dt: &NaiveDateTime) -> i64 {
        use ExtractUnit::*;
        let (y, mo, d) = (
            i64::from(dt.year()),
            i64::from(dt.month()),
            i64::from(dt.day()),
        );
        let (h, mi, s) = (
            i64::from(dt.hour()),
            i64::from(dt.minute()),
            i64::from(dt.second()),
        );
        let us = i64::from(dt.nanosecond() / 1000);
        match self {
            Year => y,
            Quarter => (mo - 1) / 3 + 1,
            Month => mo,
            Week => i64::from(week(dt.date(), week_behaviour(0)).0),
            Day => d,
            Hour => h,
            Minute => mi,
            Second => s,
            Microsecond => us,
            YearMonth => y * 100 + mo,
            DayHour => d * 100 + h,
            DayMinute => (d * 100 + h) * 100 + mi,
            DaySecond => ((d * 100 + h) * 100 + mi) * 100 + s,
            DayMicrosecond => (((d * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
            HourMinute => h * 100 + mi,
            HourSecond => (h * 100 + mi) * 100 + s,
            HourMicrosecond => ((h * 100 + mi) * 100 + s) * 1_000_000 + us,
            MinuteSecond => mi * 100 + s,
            MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
            SecondMicrosecond => s * 1_000_000 + us,
        }
    }
}

pub const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub const DAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Whether a `STR_TO_DATE` format reads a time of day (else its result is a date).
pub fn format_has_time(format: &[u8]) -> bool {
    let mut spec = false;
    for &c in format {
        if spec {
            if b"HkhIlisSfpTr".contains(&c) {
                return true;
            }
            spec = false;
        } else if c == b'%' {
            spec = true;
        }
    }
    false
}

/// Reads up to `max` digits at the start of `text`.
fn digits(text: &[u8], at: &mut usize, max: usize) -> Option<i64> {
    let start = *at;
    while *at < text.len() && *at - start < max && text[*at].is_ascii_digit() {
        *at += 1;
    }
    std::str::from_utf8(&text[start..*at]).ok()?.parse().ok()
}

/// Reads a month or day name (whole or its first three letters) from `names`; returns its index.
fn name(text: &[u8], at: &mut usize, names: &[&str], whole: bool) -> Option<usize> {
    let rest = text[*at..].to_ascii_lowercase();
    names.iter().position(|n| {
        let n = n.to_ascii_lowercase();
        let n = if whole { &n[..] } else { &n[..3] };
        if rest.starts_with(n.as_bytes()) {
            *at += n.len();
            true
        } else {
            false
        }
    })
}

/// `format` with `%T` and `%r` spelled out as the fields they stand for.
fn expand_times(format: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(format.len());
    let mut f = 0;
    while f < format.len() {
        if format[f] == b'%' && f + 1 < format.len() {
            match format[f + 1] {
                b'T' => out.extend_from_slice(b"%H:%i:%s"),
                b'r' => out.extend_from_slice(b"%h:%i:%s %p"),
                other => out.extend_from_slice(&[b'%', other]),
            }
            f += 2;
        } else {
            out.push(format[f]);
            f += 1;
        }
    }
    out
}

/// `STR_TO_DATE(text, format)`: the date and time `text` spells in `format` (the specifiers of
/// `DATE_FORMAT`). `None` if it does not match or names no valid date.
pub fn str_to_date(text: &[u8], format: &[u8]) -> Option<NaiveDateTime> {
    let format = expand_times(format);
    let (mut year, mut month, mut day) = (0i64, 0i64, 0i64);
    let (mut hour, mut minute, mut second, mut micros) = (0i64, 0i64, 0i64, 0i64);
    let (mut pm, mut twelve_hour, mut day_of_year) = (None::<bool>, false, None::<i64>);
    let mut at = 0usize;
    let mut f = 0usize;
    // As MySQL reads: spaces of the text before each field are skipped, spaces of the format
    // match nothing, and the read ends where the text does.
    while f < format.len() {
        while at < text.len() && text[at].is_ascii_whitespace() {
            at += 1;
        }
        if at == text.len() {
            break;
        }
        let c = format[f];
        f += 1;
        if c != b'%' || f == format.len() {
            if c.is_ascii_whitespace() {
                continue;
            }
            if text.get(at) != Some(&c) {
                return None;
            }
            at += 1;
            continue;
        }
        let spec = format[f];
        f += 1;
        match spec {
            b'Y' => year = digits(text, &mut at, 4)?,
            b'y' => {
                let y = digits(text, &mut at, 2)?;
                year = if y < 70 { 2000 + y } else { 1900 + y };
            }
            b'm' | b'c' => month = digits(text, &mut at, 2)?,
            b'd' | b'e' => day = digits(text, &mut at, 2)?,
            b'H' | b'k' => hour = digits(text, &mut at, 2)?,
            b'h' | b'I' | b'l' => {
                hour = digits(text, &mut at, 2)?;
                twelve_hour = true;
            }
            b'i' => minute = digits(text, &mut at, 2)?,
            b's' | b'S' => second = digits(text, &mut at, 2)?,
            b'f' => {
                let start = at;
                let value = digits(text, &mut at, 6)?;
                micros = value * 10i64.pow(6 - (at - start) as u32);
            }
            b'j' => day_of_year = Some(digits(text, &mut at, 3)?),
            b'M' => month = name(text, &mut at, &MONTH_NAMES, true)? as i64 + 1,
            b'b' => month = name(text, &mut at, &MONTH_NAMES, false)? as i64 + 1,
            b'W' => {
                name(text, &mut at, &DAY_NAMES, true)?;
            }
            b'a' => {
                name(text, &mut at, &DAY_NAMES, false)?;
            }
            b'p' => {
                let rest = text[at..].to_ascii_uppercase();
                pm = Some(if rest.starts_with(b"PM") {
                    true
                } else if rest.starts_with(b"AM") {
                    false
                } else {
                    return None;
                });
                at += 2;
            }
            b'%' => {
                if text.get(at) != Some(&b'%') {
                    return None;
                }
                at += 1;
            }
            _ => return None,
        }
    }
    if twelve_hour || pm.is_some() {
        if !(1..=12).contains(&hour) {
            return None;
        }
        hour %= 12;
        if pm == Some(true) {
            hour += 12;
        }
    }
    let date = match day_of_year {
        Some(n) if month == 0 && day == 0 => make_date(year.max(1), n)?,
        _ => NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month as u32, day as u32)?,
    };
    let time =
        NaiveTime::from_hms_micro_opt(hour as u32, minute as u32, second as u32, micros as u32)?;
    Some(date.and_time(time))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn weeks_follow_mysql_modes() {
        // The reference manual's examples of WEEK, YEARWEEK and WEEKOFYEAR.
        let w = |d: NaiveDate, mode: i64| week(d, week_behaviour(mode)).0;
        assert_eq!(w(date(2008, 2, 20), 0), 7);
        assert_eq!(w(date(2008, 2, 20), 1), 8);
        assert_eq!(w(date(2008, 12, 31), 1), 53);
        assert_eq!(w(date(2000, 1, 1), 0), 0);
        assert_eq!(w(date(2000, 1, 1), 2), 52);
        assert_eq!(w(date(2008, 2, 20), 3), 8);
        assert_eq!(year_week(date(1987, 1, 1), 0), (52, 1986));
        // ISO weeks (mode 3): 2008-12-29 is in week 1 of 2009.
        assert_eq!(week(date(2008, 12, 29), week_behaviour(3)), (1, 2009));
        assert_eq!(week(date(2010, 1, 3), week_behaviour(3)), (53, 2009));
    }

    #[test]
    fn days_and_periods() {
        assert_eq!(from_days(730669), Some(date(2000, 7, 3)));
        assert_eq!(make_date(2011, 31), Some(date(2011, 1, 31)));
        assert_eq!(make_date(2011, 32), Some(date(2011, 2, 1)));
        assert_eq!(make_date(2011, 365), Some(date(2011, 12, 31)));
        assert_eq!(make_date(2014, 0), None);
        assert_eq!(period_add(200801, 2), 200803);
        assert_eq!(period_add(801, 2), 200803);
        assert_eq!(period_diff(200802, 200703), 11);
    }

    #[test]
    fn str_to_date_reads_formats() {
        let read =
            |t: &str, f: &str| str_to_date(t.as_bytes(), f.as_bytes()).map(|d| d.to_string());
        assert_eq!(
            read("01,5,2013", "%d,%m,%Y").as_deref(),
            Some("2013-05-01 00:00:00")
        );
        assert_eq!(
            read("May 1, 2013", "%M %d,%Y").as_deref(),
            Some("2013-05-01 00:00:00")
        );
        // A time alone would be a TIME value, a type Strata does not have.
        assert_eq!(read("09:30:17", "%H:%i:%s"), None);
        assert_eq!(
            read("10:11:12 PM 2013-01-02", "%r %Y-%m-%d").as_deref(),
            Some("2013-01-02 22:11:12")
        );
        assert_eq!(
            read("2013-01-02 03:04:05.5", "%Y-%m-%d %T.%f").as_deref(),
            Some("2013-01-02 03:04:05.500")
        );
        assert_eq!(read("2013-02-30", "%Y-%m-%d"), None);
        assert_eq!(read("x2013", "%Y"), None);
        assert_eq!(
            read(" 2013 -1- 2", "%Y-%m-%d").as_deref(),
            Some("2013-01-02 00:00:00")
        );
        assert!(format_has_time(b"%Y %H"));
        assert!(!format_has_time(b"%Y-%m-%d"));
    }
}
