//! Character set and collation names. Strata keeps every string as utf8mb4 (binary strings as
//! bytes), as a table's `CHARSET=` already reads; names in DDL are checked against MySQL's,
//! so a misspelt one gets MySQL's error rather than being taken silently.

use crate::error::{Error, Result};
use crate::parser::statement::DatabaseOptions;

/// MySQL 8.0's character sets (`SHOW CHARACTER SET` there), and `utf8`, its alias of utf8mb3.
const CHARSETS: &[&str] = &[
    "armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257", "cp850",
    "cp852", "cp866", "cp932", "dec8", "eucjpms", "euckr", "gb18030", "gb2312", "gbk", "geostd8",
    "greek", "hebrew", "hp8", "keybcs2", "koi8r", "koi8u", "latin1", "latin2", "latin5", "latin7",
    "macce", "macroman", "sjis", "swe7", "tis620", "ucs2", "ujis", "utf16", "utf16le", "utf32",
    "utf8", "utf8mb3", "utf8mb4",
];

/// Whether `name` (in lower case) is a character set MySQL knows.
pub fn is_known(name: &str) -> bool {
    CHARSETS.contains(&name)
}

/// The character set a collation belongs to: `binary`'s own, else the longest known character
/// set its name starts with (`utf8mb4_0900_ai_ci` is utf8mb4's, `utf8_bin` utf8's). Only that
/// prefix is checked: the suffixes MySQL knows are not listed here.
fn charset_of_collation(collation: &str) -> Option<&'static str> {
    if collation == "binary" {
        return Some("binary");
    }
    CHARSETS
        .iter()
        .filter(|charset| {
            collation
                .strip_prefix(**charset)
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('_'))
        })
        .max_by_key(|charset| charset.len())
        .copied()
}

/// Whether two character set names are one (`utf8` is `utf8mb3`).
fn same_charset(a: &str, b: &str) -> bool {
    let canonical = |name: &str| if name == "utf8" { "utf8mb3" } else { name }.to_string();
    canonical(a) == canonical(b)
}

/// Checks the names a CREATE or ALTER DATABASE gives: 1115 for an unknown character set,
/// 1273 for an unknown collation, 1253 for a collation of another character set.
pub fn check(options: &DatabaseOptions) -> Result<()> {
    if let Some(charset) = &options.charset {
        if !is_known(charset) {
            return Err(Error::new(
                1115,
                "42000",
                format!("Unknown character set: '{charset}'"),
            ));
        }
    }
    if let Some(collation) = &options.collation {
        let Some(of) = charset_of_collation(collation) else {
            return Err(Error::new(
                1273,
                "HY000",
                format!("Unknown collation: '{collation}'"),
            ));
        };
        if let Some(charset) = options.charset.as_deref().filter(|c| !same_charset(c, of)) {
            return Err(Error::new(
                1253,
                "42000",
                format!("COLLATION '{collation}' is not valid for CHARACTER SET '{charset}'"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(charset: Option<&str>, collation: Option<&str>) -> DatabaseOptions {
        DatabaseOptions {
            charset: charset.map(str::to_string),
            collation: collation.map(str::to_string),
        }
    }

    fn code(charset: Option<&str>, collation: Option<&str>) -> u16 {
        check(&options(charset, collation)).map_or_else(|e| e.code(), |()| 0)
    }

    #[test]
    fn names_are_checked_as_mysql_checks_them() {
        assert_eq!(code(Some("utf8mb4"), Some("utf8mb4_0900_ai_ci")), 0);
        assert_eq!(code(Some("utf8"), Some("utf8mb3_general_ci")), 0);
        assert_eq!(code(Some("utf8mb3"), Some("utf8_bin")), 0);
        assert_eq!(code(Some("latin1"), None), 0);
        assert_eq!(code(None, Some("latin1_swedish_ci")), 0);
        assert_eq!(code(Some("binary"), Some("binary")), 0);
        assert_eq!(code(Some("utf9"), None), 1115);
        assert_eq!(code(None, Some("klingon_ci")), 1273);
        assert_eq!(code(None, Some("utf8mb4")), 1273);
        assert_eq!(code(Some("latin1"), Some("utf8mb4_bin")), 1253);
        assert_eq!(code(Some("utf8"), Some("utf8mb4_bin")), 1253);
    }
}
