//! Regular expressions: `REGEXP` / `RLIKE` and the `REGEXP_*` functions.
//!
//! Matching is case-sensitive, as every comparison of Strata's binary collation is, unless a
//! match type says `i`. Positions count characters from 1. A pattern the engine refuses gets
//! the error MySQL gives for that kind of mistake (3688–3697); back-references and look-around,
//! which the engine does not run, get 3690 ("not implemented").

use std::cell::RefCell;

use regex::{Regex, RegexBuilder};
use strata_codec::Datum;

use crate::error::{Error, Result};
use crate::types::{datum_to_text, to_i64};

/// Compiled patterns a thread keeps for the patterns it met last (a pattern is usually one
/// literal for a whole statement).
const COMPILED_CACHED: usize = 8;
/// The largest compiled pattern: a larger one is refused with 3700, MySQL's "pattern too big".
const COMPILED_BYTES_MAX: usize = 8 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegexpFunc {
    Like,
    Replace,
    Substr,
    Instr,
}

impl RegexpFunc {
    pub fn by_name(name: &str) -> Option<RegexpFunc> {
        Some(match name {
            "REGEXP_LIKE" => RegexpFunc::Like,
            "REGEXP_REPLACE" => RegexpFunc::Replace,
            "REGEXP_SUBSTR" => RegexpFunc::Substr,
            "REGEXP_INSTR" => RegexpFunc::Instr,
            _ => return None,
        })
    }

    pub fn arity_ok(self, n: usize) -> bool {
        match self {
            RegexpFunc::Like => (2..=3).contains(&n),
            RegexpFunc::Replace => (3..=6).contains(&n),
            RegexpFunc::Substr => (2..=5).contains(&n),
            RegexpFunc::Instr => (2..=6).contains(&n),
        }
    }

    pub fn returns_integer(self) -> bool {
        matches!(self, RegexpFunc::Like | RegexpFunc::Instr)
    }

    /// Where the match type argument is, by function.
    fn match_type_at(self) -> usize {
        match self {
            RegexpFunc::Like => 2,
            RegexpFunc::Replace => 5,
            RegexpFunc::Substr => 4,
            RegexpFunc::Instr => 5,
        }
    }

    fn name(self) -> &'static str {
        match self {
            RegexpFunc::Like => "regexp_like",
            RegexpFunc::Replace => "regexp_replace",
            RegexpFunc::Substr => "regexp_substr",
            RegexpFunc::Instr => "regexp_instr",
        }
    }
}

fn regexp_error(code: u16, message: &str) -> Error {
    Error::new(code, "HY000", message)
}

/// MySQL's error for a pattern the engine refused, from the engine's description of it.
fn pattern_error(error: &regex::Error) -> Error {
    let text = error.to_string();
    let has = |s: &str| text.contains(s);
    if let regex::Error::CompiledTooBig(_) = error {
        return regexp_error(3700, "The pattern is too big to compile.");
    }
    if has("look-around") || has("backreferences") {
        regexp_error(
            3690,
            "The regular expression contains a feature that is not implemented in this library.",
        )
    } else if has("unclosed group") || has("unopened group") {
        regexp_error(3691, "Mismatched parenthesis in regular expression.")
    } else if has("unclosed character class") {
        regexp_error(
            3696,
            "The regular expression contains an unclosed bracket expression.",
        )
    } else if has("invalid character class range") {
        regexp_error(3697, "Illegal character range in regular expression.")
    } else if has("invalid repetition count range") {
        regexp_error(
            3693,
            "The maximum is less than the minumum in a {min,max} interval.",
        )
    } else if has("repetition quantifier") || has("decimal literal") {
        regexp_error(3692, "Incorrect description of a {min,max} interval.")
    } else if has("escape") {
        regexp_error(3689, "Unrecognized escape sequence in regular expression.")
    } else if has("repetition operator missing expression") {
        regexp_error(
            3688,
            "Syntax error in regular expression on line 1, character 1.",
        )
    } else {
        regexp_error(3685, "Illegal argument to a regular expression.")
    }
}

/// The flags of a match type argument (`c`, `i`, `m`, `n`, `u`; the last of `c` and `i`
/// wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MatchType {
    case_insensitive: bool,
    multi_line: bool,
    dot_matches_new_line: bool,
}

fn match_type(func: RegexpFunc, value: Option<&Datum>) -> Result<MatchType> {
    let mut flags = MatchType::default();
    let Some(value) = value else {
        return Ok(flags);
    };
    for c in datum_to_text(value) {
        match c {
            b'c' => flags.case_insensitive = false,
            b'i' => flags.case_insensitive = true,
            b'm' => flags.multi_line = true,
            b'n' => flags.dot_matches_new_line = true,
            b'u' => {}
            _ => {
                return Err(Error::new(
                    1210,
                    "HY000",
                    format!("Incorrect arguments to {}", func.name()),
                ))
            }
        }
    }
    Ok(flags)
}

thread_local! {
    static COMPILED: RefCell<Vec<(String, MatchType, Regex)>> =
        const { RefCell::new(Vec::new()) };
}

/// `pattern` compiled with `flags`, from this thread's cache when it was met lately.
fn compiled(pattern: &str, flags: MatchType) -> Result<Regex> {
    let cached = COMPILED.with(|c| {
        c.borrow()
            .iter()
            .find(|(p, f, _)| p == pattern && *f == flags)
            .map(|(_, _, r)| r.clone())
    });
    if let Some(regex) = cached {
        return Ok(regex);
    }
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multi_line)
        .dot_matches_new_line(flags.dot_matches_new_line)
        .size_limit(COMPILED_BYTES_MAX)
        .build()
        .map_err(|e| pattern_error(&e))?;
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() == COMPILED_CACHED {
            c.remove(0);
        }
        c.push((pattern.to_string(), flags, regex.clone()));
    });
    Ok(regex)
}

/// The byte offset of character `position` (from 1) of `text`; 3686 past its end.
fn byte_offset(text: &str, position: &Datum) -> Result<usize> {
    let position = to_i64(position).unwrap_or(0);
    let chars = text.chars().count() as i64;
    if position < 1 || position > chars + 1 {
        return Err(regexp_error(
            3686,
            "Index out of bounds in regular expression search.",
        ));
    }
    Ok(text
        .char_indices()
        .nth(position as usize - 1)
        .map_or(text.len(), |(at, _)| at))
}

/// The number of an occurrence argument: from 1, anything lower counts as 1.
fn occurrence(value: Option<&Datum>, default: i64) -> usize {
    value.and_then(to_i64).unwrap_or(default).max(1) as usize
}

pub(super) fn eval(func: RegexpFunc, values: &[Datum]) -> Result<Datum> {
    if values.contains(&Datum::Null) {
        return Ok(Datum::Null);
    }
    let text = String::from_utf8_lossy(&datum_to_text(&values[0])).into_owned();
    let pattern = String::from_utf8_lossy(&datum_to_text(&values[1])).into_owned();
    if pattern.is_empty() {
        return Err(regexp_error(
            3685,
            "Illegal argument to a regular expression.",
        ));
    }
    let flags = match_type(func, values.get(func.match_type_at()))?;
    let regex = compiled(&pattern, flags)?;
    Ok(match func {
        RegexpFunc::Like => Datum::Int(regex.is_match(&text) as i64),
        RegexpFunc::Replace => {
            let from = match values.get(3) {
                Some(p) => byte_offset(&text, p)?,
                None => 0,
            };
            // Occurrence 0 (the default) replaces every match.
            let nth = values.get(4).and_then(to_i64).unwrap_or(0).max(0) as usize;
            let replacement = String::from_utf8_lossy(&datum_to_text(&values[2])).into_owned();
            let (head, tail) = text.split_at(from);
            let replaced = if nth == 0 {
                regex.replace_all(tail, replacement.as_str()).into_owned()
            } else {
                let mut out = String::with_capacity(tail.len());
                let mut last = 0;
                if let Some(captures) = regex.captures_iter(tail).nth(nth - 1) {
                    let whole = captures.get(0).expect("group 0 is the whole match");
                    out.push_str(&tail[last..whole.start()]);
                    captures.expand(&replacement, &mut out);
                    last = whole.end();
                }
                out.push_str(&tail[last..]);
                out
            };
            Datum::Bytes(format!("{head}{replaced}").into_bytes())
        }
        RegexpFunc::Substr => {
            let from = match values.get(2) {
                Some(p) => byte_offset(&text, p)?,
                None => 0,
            };
            let nth = occurrence(values.get(3), 1);
            match regex.find_iter(&text[from..]).nth(nth - 1) {
                Some(m) => Datum::Bytes(m.as_str().as_bytes().to_vec()),
                None => Datum::Null,
            }
        }
        RegexpFunc::Instr => {
            let from = match values.get(2) {
                Some(p) => byte_offset(&text, p)?,
                None => 0,
            };
            let nth = occurrence(values.get(3), 1);
            let after = match values.get(4).and_then(to_i64).unwrap_or(0) {
                0 => false,
                1 => true,
                _ => {
                    return Err(Error::new(
                        1210,
                        "HY000",
                        "Incorrect arguments to regexp_instr: return_option must be 1 or 0.",
                    ))
                }
            };
            match regex.find_iter(&text[from..]).nth(nth - 1) {
                Some(m) => {
                    let end = from + if after { m.end() } else { m.start() };
                    Datum::Int(text[..end].chars().count() as i64 + 1)
                }
                None => Datum::Int(0),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Datum {
        Datum::Bytes(text.as_bytes().to_vec())
    }

    fn code(result: Result<Datum>) -> u16 {
        result.unwrap_err().code()
    }

    #[test]
    fn refused_patterns_get_mysql_errors() {
        let like = |p: &str| eval(RegexpFunc::Like, &[s("a"), s(p)]);
        assert_eq!(code(like("(")), 3691);
        assert_eq!(code(like("[a")), 3696);
        assert_eq!(code(like("[z-a]")), 3697);
        assert_eq!(code(like("a{2,1}")), 3693);
        assert_eq!(code(like("(a)\\1")), 3690);
        assert_eq!(code(like("")), 3685);
        let bad_flag = eval(RegexpFunc::Like, &[s("a"), s("a"), s("x")]);
        assert_eq!(code(bad_flag), 1210);
    }

    #[test]
    fn a_thread_keeps_a_few_compiled_patterns() {
        for i in 0..COMPILED_CACHED * 2 {
            let pattern = format!("a{i}");
            assert_eq!(
                eval(RegexpFunc::Like, &[s(&pattern), s(&pattern)]).unwrap(),
                Datum::Int(1)
            );
        }
        assert_eq!(COMPILED.with(|c| c.borrow().len()), COMPILED_CACHED);
    }
}
