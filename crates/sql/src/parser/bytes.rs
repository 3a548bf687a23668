//! Statement text that is not all UTF-8. A client may put any bytes between quotes (mysqldump
//! writes a BLOB's bytes as they are, PyMySQL sends `_binary'…'`), and MySQL stores those
//! bytes. The parser reads `str`, so each byte that is not part of UTF-8 text becomes a
//! character of its own from the top of plane 16's private use area (U+10FF00 + the byte), and
//! a string literal turns those characters back into their bytes. A character of that range
//! that the text itself holds is carried as its four bytes the same way, so every text comes
//! back exactly.

use std::borrow::Cow;

/// The first of the 256 characters that stand for one byte each.
const BYTE_BASE: u32 = 0x10_FF00;

/// Whether `c` is one of the characters that stand for a byte.
fn stands_for_byte(c: char) -> bool {
    u32::from(c) >= BYTE_BASE
}

/// The statement text of `bytes`: itself when it is UTF-8 holding none of the characters that
/// stand for bytes, which is the common case and costs one pass.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        // Every character at or above U+100000 starts with the byte F4.
        if !bytes.contains(&0xF4) || !text.chars().any(stands_for_byte) {
            return Cow::Borrowed(text);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let as_bytes = |out: &mut String, raw: &[u8]| {
        for &b in raw {
            out.push(char::from_u32(BYTE_BASE + u32::from(b)).expect("in plane 16"));
        }
    };
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if stands_for_byte(c) {
                as_bytes(&mut out, c.encode_utf8(&mut [0; 4]).as_bytes());
            } else {
                out.push(c);
            }
        }
        as_bytes(&mut out, chunk.invalid());
    }
    Cow::Owned(out)
}

/// The bytes of a string literal's value: its UTF-8, with each character that stands for a
/// byte turned back into that byte.
pub fn literal_bytes(value: &str) -> Vec<u8> {
    if !value.as_bytes().contains(&0xF4) || !value.chars().any(stands_for_byte) {
        return value.as_bytes().to_vec();
    }
    let mut out = Vec::with_capacity(value.len());
    for c in value.chars() {
        if stands_for_byte(c) {
            out.push((u32::from(c) - BYTE_BASE) as u8);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_text_is_borrowed_as_it_is() {
        for text in ["select 1", "select 'ünïcødé 😀'", "", "\u{10FEFF}"] {
            assert!(matches!(decode(text.as_bytes()), Cow::Borrowed(t) if t == text));
            assert_eq!(literal_bytes(text), text.as_bytes());
        }
    }

    #[test]
    fn every_byte_string_comes_back_from_a_literal() {
        let cases: Vec<Vec<u8>> = vec![
            b"\x00\xff\x10".to_vec(),
            b"\xde\xad\xbe\xef".to_vec(),
            "caf\u{e9}".as_bytes().to_vec(),
            b"caf\xe9".to_vec(),
            "\u{10FF41}\u{10FFFF}x".as_bytes().to_vec(),
            b"\xf4\x8f\xbd".to_vec(),
            (0..=255u8).collect(),
        ];
        for bytes in cases {
            let text = decode(&bytes);
            assert_eq!(literal_bytes(&text), bytes, "{bytes:?}");
        }
    }

    #[test]
    fn bytes_inside_quotes_survive_the_parser() {
        let mut sql = b"INSERT INTO t VALUES ('".to_vec();
        sql.extend_from_slice(b"\x00\xaa\xff\\'");
        sql.extend_from_slice(b"')");
        let text = decode(&sql);
        let parsed = crate::parser::parse(&text).unwrap();
        let crate::parser::statement::Statement::Sql(tree, _) = &parsed.statements[0] else {
            panic!("not an INSERT");
        };
        let sqlparser::ast::Statement::Insert(insert) = &**tree else {
            panic!("not an INSERT");
        };
        let sqlparser::ast::SetExpr::Values(values) = &*insert.source.as_ref().unwrap().body else {
            panic!("no VALUES");
        };
        let sqlparser::ast::Expr::Value(value) = &values.rows[0][0] else {
            panic!("not a literal");
        };
        let sqlparser::ast::Value::SingleQuotedString(s) = &value.value else {
            panic!("not a string");
        };
        assert_eq!(literal_bytes(s), b"\x00\xaa\xff'");
    }
}
