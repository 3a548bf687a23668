//! How numbers, sizes and changes are written in the report's cells.
//!
//! Every function accepts any `f64` and writes [`MISSING`] for NaN and infinities, so a broken
//! value in a result file shows as a blank cell instead of `NaN%` or a panic.

/// What a cell shows when it has no value.
pub(super) const MISSING: &str = "—";
/// What a cell shows for a run that failed before sysbench printed its summary.
pub(super) const FAILED: &str = "failed";

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const TIB: f64 = 1024.0 * 1024.0 * 1024.0 * 1024.0;

/// Writes `value` with `decimals` digits after the point.
pub(super) fn number(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        MISSING.to_string()
    }
}

/// Writes an optional value with `decimals` digits after the point.
pub(super) fn optional_number(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| MISSING.to_string(), |value| number(value, decimals))
}

/// Writes the change from `baseline` to `value` as a signed percentage with one decimal
/// (`+25.0%`, `-4.2%`); [`MISSING`] when the baseline is zero or either value is not finite.
pub(super) fn change(baseline: f64, value: f64) -> String {
    match change_percent(baseline, value) {
        Some(percent) => format!("{percent:+.1}%"),
        None => MISSING.to_string(),
    }
}

/// The change from `baseline` to `value` in percent, rounded to one decimal.
pub(super) fn change_percent(baseline: f64, value: f64) -> Option<f64> {
    if !baseline.is_finite() || !value.is_finite() || baseline == 0.0 {
        return None;
    }
    let percent = ((value - baseline) / baseline.abs() * 1000.0).round() / 10.0;
    // Rounding a tiny decline gives -0.0, which would print as "-0.0%".
    Some(if percent == 0.0 { 0.0 } else { percent })
}

/// Writes `value / baseline` as a factor with two decimals (`1.25×`).
pub(super) fn ratio(baseline: f64, value: f64) -> String {
    if baseline.is_finite() && value.is_finite() && baseline != 0.0 {
        format!("{:.2}×", value / baseline)
    } else {
        MISSING.to_string()
    }
}

/// Writes a byte count with a binary unit: `512 B`, `1.5 KiB`, `12.3 MiB`, `1.25 GiB`.
pub(super) fn bytes(bytes: u64) -> String {
    let value = bytes as f64;
    if value < KIB {
        format!("{bytes} B")
    } else if value < MIB {
        format!("{:.1} KiB", value / KIB)
    } else if value < GIB {
        format!("{:.1} MiB", value / MIB)
    } else if value < TIB {
        format!("{:.2} GiB", value / GIB)
    } else {
        format!("{:.2} TiB", value / TIB)
    }
}

/// Writes an optional byte count with [`bytes`].
pub(super) fn optional_bytes(value: Option<u64>) -> String {
    value.map_or_else(|| MISSING.to_string(), bytes)
}

/// Converts bytes to MiB.
pub(super) fn mib(bytes: f64) -> f64 {
    bytes / MIB
}

/// Writes a text field of a result file, [`MISSING`] when it is empty.
pub(super) fn text(value: &str) -> String {
    if value.trim().is_empty() {
        MISSING.to_string()
    } else {
        value.to_string()
    }
}

/// Writes a short axis label: `950`, `1.5k`, `12k`, `2.5M`.
pub(super) fn axis_value(value: f64) -> String {
    let magnitude = value.abs();
    if !value.is_finite() {
        String::new()
    } else if magnitude >= 1e9 {
        format!("{:.1}G", value / 1e9)
    } else if magnitude >= 1e6 {
        format!("{:.1}M", value / 1e6)
    } else if magnitude >= 1e4 {
        format!("{:.0}k", value / 1e3)
    } else if magnitude >= 1e3 {
        format!("{:.1}k", value / 1e3)
    } else if magnitude >= 10.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 0.1 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

/// Turns a text into an id fragment of lower-case letters, digits and single dashes.
pub(super) fn slug(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_signed_percentages_with_one_decimal() {
        assert_eq!(change(1000.0, 1250.0), "+25.0%");
        assert_eq!(change(2.0, 1.5), "-25.0%");
        assert_eq!(change(100.0, 100.0), "+0.0%");
        assert_eq!(change(100.0, 99.9999), "+0.0%");
        assert_eq!(change(0.0, 5.0), MISSING);
        assert_eq!(change(f64::NAN, 5.0), MISSING);
        assert_eq!(change(5.0, f64::INFINITY), MISSING);
    }

    #[test]
    fn numbers_hide_non_finite_values() {
        assert_eq!(number(1234.567, 2), "1234.57");
        assert_eq!(number(f64::NAN, 2), MISSING);
        assert_eq!(optional_number(None, 1), MISSING);
        assert_eq!(ratio(2.0, 3.0), "1.50×");
        assert_eq!(ratio(0.0, 3.0), MISSING);
    }

    #[test]
    fn bytes_use_binary_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(100 * 1024 * 1024), "100.0 MiB");
        assert_eq!(bytes(5 * 1024 * 1024 * 1024 / 4), "1.25 GiB");
        assert_eq!(optional_bytes(None), MISSING);
    }

    #[test]
    fn axis_values_are_short() {
        assert_eq!(axis_value(0.0), "0");
        assert_eq!(axis_value(950.0), "950");
        assert_eq!(axis_value(1500.0), "1.5k");
        assert_eq!(axis_value(12_000.0), "12k");
        assert_eq!(axis_value(2_500_000.0), "2.5M");
        assert_eq!(axis_value(0.26), "0.3");
        assert_eq!(axis_value(f64::NAN), "");
    }

    #[test]
    fn slugs_keep_letters_and_digits() {
        assert_eq!(slug("oltp_read_write"), "oltp-read-write");
        assert_eq!(slug("  <Strata> 0.1.0 "), "strata-0-1-0");
        assert_eq!(slug("--"), "");
    }
}
