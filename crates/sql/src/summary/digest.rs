//! A statement's digest: its text with every literal made `?`, comments dropped, words in
//! lower case and spaces made single, so that `SELECT c FROM t WHERE id = 7` and
//! `select c from t where id=12 -- again` are one statement; a list of nothing but literals
//! (`IN (1, 2, 3)`, the rows of a multi-row VALUES) becomes one `(...)`, so lists of any
//! length are one statement too. As MySQL's and TiDB's digests, it works on tokens and never
//! parses, so it costs one pass over the text.

use std::hash::{Hash, Hasher};

use sha2::{Digest as _, Sha256};

/// A normalized text and the hash it is looked up by.
#[derive(Clone, Debug)]
pub struct Normalized {
    pub hash: u64,
    pub text: std::sync::Arc<str>,
}

impl Normalized {
    /// `sql` normalized ([`normalize_into`]), its text kept to at most `max_bytes` (the hash
    /// is of all of it).
    pub fn of(sql: &str, buffer: &mut String, max_bytes: usize) -> Normalized {
        normalize_into(sql, buffer);
        let hash = hash_of(buffer);
        Normalized {
            hash,
            text: std::sync::Arc::from(truncated(buffer, max_bytes)),
        }
    }
}

/// The lookup hash of a normalized text (stable within one process).
pub fn hash_of(normalized: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    normalized.hash(&mut hasher);
    hasher.finish()
}

/// The DIGEST column: SHA-256 of the normalized text, in hex (as TiDB's).
pub fn digest_hex(normalized: &str) -> String {
    let sum = Sha256::digest(normalized.as_bytes());
    sum.iter().map(|b| format!("{b:02x}")).collect()
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character.
pub fn truncated(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// An open parenthesis of the output: where it starts, and whether only literals and commas
/// followed it so far.
struct Group {
    start: usize,
    only_literals: bool,
}

/// Writes the normalized form of `sql` into `out` (cleared first).
pub fn normalize_into(sql: &str, out: &mut String) {
    out.clear();
    let bytes = sql.as_bytes();
    let mut groups: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'#' => {
                i = line_end(bytes, i);
                continue;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-')
                && bytes.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                i = line_end(bytes, i);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = match sql[i + 2..].find("*/") {
                    Some(end) => i + 2 + end + 2,
                    None => bytes.len(),
                };
                continue;
            }
            b'\'' | b'"' => {
                i = quoted_end(bytes, i);
                literal(out);
                continue;
            }
            b'`' => {
                i = quoted_end(bytes, i);
                word(out, &sql[start..i], &mut groups, false);
                continue;
            }
            b'0'..=b'9' => {
                i = number_end(bytes, i);
                literal(out);
                continue;
            }
            b'.' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) && !ends_word(out) => {
                i = number_end(bytes, i + 1);
                literal(out);
                continue;
            }
            b'?' => {
                i += 1;
                literal(out);
                continue;
            }
            _ => {}
        }
        if b == b'_' || b == b'$' || b.is_ascii_alphabetic() || b >= 0x80 {
            while i < bytes.len()
                && (bytes[i] == b'_'
                    || bytes[i] == b'$'
                    || bytes[i].is_ascii_alphanumeric()
                    || bytes[i] >= 0x80)
            {
                i += 1;
            }
            let text = &sql[start..i];
            // X'0A', B'01', N'text': a literal with a prefix.
            if matches!(text, "x" | "X" | "b" | "B" | "n" | "N") && bytes.get(i) == Some(&b'\'') {
                i = quoted_end(bytes, i);
                literal(out);
            } else {
                word(out, text, &mut groups, true);
            }
            continue;
        }
        // Punctuation and operators, one character at a time (the rest of a multi-character
        // operator follows without a space).
        let c = sql[i..].chars().next().expect("within the text");
        i += c.len_utf8();
        match c {
            '(' => {
                space(out);
                if let Some(outer) = groups.last_mut() {
                    outer.only_literals = false;
                }
                groups.push(Group {
                    start: out.len(),
                    only_literals: true,
                });
                out.push('(');
            }
            ')' => match groups.pop() {
                Some(group) if group.only_literals && out.len() > group.start + 1 => {
                    out.truncate(group.start);
                    // The rows of a multi-row VALUES: one `(...)` for all of them.
                    if out.ends_with("(...), ") {
                        out.truncate(out.len() - 2);
                    } else {
                        out.push_str("(...)");
                    }
                }
                _ => out.push(')'),
            },
            ',' => out.push_str(", "),
            '.' => out.push('.'),
            ';' => {}
            _ => {
                if let Some(group) = groups.last_mut() {
                    group.only_literals = false;
                }
                if !continues_operator(out, c) {
                    space(out);
                }
                out.push(c);
            }
        }
    }
    while out.ends_with(' ') {
        out.pop();
    }
}

/// Appends a word (keyword or identifier): lower case unless quoted.
fn word(out: &mut String, text: &str, groups: &mut [Group], lower: bool) {
    if let Some(group) = groups.last_mut() {
        group.only_literals = false;
    }
    if !out.ends_with('.') {
        space(out);
    }
    if lower {
        out.extend(text.chars().map(|c| c.to_ascii_lowercase()));
    } else {
        out.push_str(text);
    }
}

/// Appends `?` for a literal (or a placeholder).
fn literal(out: &mut String) {
    space(out);
    out.push('?');
}

/// A space before the next token, unless one is there or the token opens the text, a group,
/// or follows a qualifier's dot or a variable's `@`.
fn space(out: &mut String) {
    if !out.is_empty() && !out.ends_with([' ', '(', '.', '@']) {
        out.push(' ');
    }
}

/// Whether `c` is the next character of an operator that the output ends with (`>=`, `<=>`,
/// `@@`, `->>`, …).
fn continues_operator(out: &str, c: char) -> bool {
    const PAIRS: [&str; 11] = [
        ">=", "<=", "<>", "!=", "||", "&&", "<<", ">>", ":=", "->", "@@",
    ];
    let mut last = out.chars().rev();
    let (Some(p1), p2) = (last.next(), last.next()) else {
        return false;
    };
    let pair: String = [p1, c].iter().collect();
    match pair.as_str() {
        // `<=>` and `->>` only as the third character of those.
        "=>" => p2 == Some('<'),
        ">>" if p2 == Some('-') => true,
        other => PAIRS.contains(&other),
    }
}

/// Whether the output ends in a word, so a following `.5` is a qualifier, not a number.
fn ends_word(out: &str) -> bool {
    out.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '`')
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |end| from + end + 1)
}

/// The end of a quoted token starting at `from` (its quote doubled or escaped with `\`
/// inside, except in backticks); the text's end when unterminated.
fn quoted_end(bytes: &[u8], from: usize) -> usize {
    let quote = bytes[from];
    let mut i = from + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote != b'`' => i += 2,
            q if q == quote => {
                if bytes.get(i + 1) == Some(&quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The end of a number starting at `from`: digits, a fraction, an exponent, or a hex or
/// binary literal (`0x1F`, `0b101`).
fn number_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    if bytes[i] == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X' | b'b' | b'B')) {
        i += 2;
        while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
            i += 1;
        }
        return i;
    }
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E'))
        && (bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
            || (matches!(bytes.get(i + 1), Some(b'+' | b'-'))
                && bytes.get(i + 2).is_some_and(u8::is_ascii_digit)))
    {
        i += 2;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    // `1abc` is an identifier in MySQL: the rest of the word goes with it.
    while i < bytes.len() && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric()) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(sql: &str) -> String {
        let mut out = String::new();
        normalize_into(sql, &mut out);
        out
    }

    #[test]
    fn literals_comments_case_and_spaces_go() {
        assert_eq!(
            normalized("SELECT c FROM sbtest1 WHERE id=7"),
            "select c from sbtest1 where id = ?"
        );
        assert_eq!(
            normalized("select  c\nfrom sbtest1 where id = 12 -- again\n;"),
            "select c from sbtest1 where id = ?"
        );
        assert_eq!(
            normalized("SELECT /* hint */ 'it''s', \"x\\\"y\", 1.5e-3, .5, 0x1F, X'0a' # end"),
            "select ?, ?, ?, ?, ?, ?"
        );
        assert_eq!(
            normalized("SELECT t.c, `My Col` FROM db.t WHERE a>=1 AND b<>2"),
            "select t.c, `My Col` from db.t where a >= ? and b <> ?"
        );
        assert_eq!(
            normalized("SELECT COUNT(*) FROM t WHERE k BETWEEN ? AND ?"),
            "select count (*) from t where k between ? and ?"
        );
    }

    #[test]
    fn lists_of_literals_of_any_length_are_one() {
        let three = normalized("SELECT * FROM t WHERE id IN (1, 2, 3)");
        let five = normalized("select * from t where id in (4,5,6,7,8)");
        assert_eq!(three, "select * from t where id in (...)");
        assert_eq!(three, five);
        assert_eq!(
            normalized("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, NULL)"),
            "insert into t (a, b) values (...), (?, null)"
        );
        assert_eq!(
            normalized("INSERT INTO t VALUES (1, 'x'), (2, 'y')"),
            normalized("INSERT INTO t VALUES (5, 'z')")
        );
        assert_eq!(normalized("SELECT f(a, 1)"), "select f (a, ?)");
        assert_eq!(
            normalized("SELECT @@session.x, @v := -1, a <=> b, j->>'$.k'"),
            "select @@session.x, @v := - ?, a <=> b, j ->> ?"
        );
    }

    #[test]
    fn digests_are_sha256_in_hex() {
        assert_eq!(
            digest_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(truncated("héllo", 2), "h");
    }
}
