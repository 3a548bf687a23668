//! Parsing: MySQL text to `sqlparser` statements.
//!
//! Before parsing, the token stream is adjusted the way MySQL's lexer would see it:
//! executable comments (`/*! … */`, `/*!50100 … */`, TiDB's `/*T![feature] … */`) are replaced by
//! the tokens inside them, and each `?` placeholder is numbered in textual order (`?1`, `?2`, …)
//! so that parameters bind by position however the binder walks the tree.

use sqlparser::ast::Statement;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

use crate::dialect::StrataDialect;
use crate::error::{syntax, Result};

/// Deepest nesting of executable comments honoured.
const EXECUTABLE_COMMENT_DEPTH_MAX: usize = 4;

/// Parsed statements of one text, with the number of `?` placeholders.
pub struct Parsed {
    pub statements: Vec<Statement>,
    pub param_count: usize,
}

/// Parses one or more `;`-separated statements.
pub fn parse(sql: &str) -> Result<Parsed> {
    let dialect = StrataDialect::default();
    let mut tokens = Vec::new();
    tokenize_into(&dialect, sql, &mut tokens, 0)?;
    let mut param_count = 0;
    for token in &mut tokens {
        if let Token::Placeholder(p) = token {
            if p == "?" {
                param_count += 1;
                *p = format!("?{param_count}");
            }
        }
    }
    // The parser has panicked on some malformed input (`1 DIV >=` in sqlparser 0.59): such text
    // is a syntax error, not a reason to drop the connection.
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Parser::new(&dialect).with_tokens(tokens).parse_statements()
    }));
    let statements = match parsed {
        Ok(result) => result.map_err(syntax)?,
        Err(_) => return Err(syntax("the statement could not be parsed")),
    };
    Ok(Parsed {
        statements,
        param_count,
    })
}

fn tokenize_into(
    dialect: &StrataDialect,
    sql: &str,
    out: &mut Vec<Token>,
    depth: usize,
) -> Result<()> {
    let tokens = Tokenizer::new(dialect, sql).tokenize().map_err(syntax)?;
    for token in tokens {
        match &token {
            Token::Whitespace(Whitespace::MultiLineComment(body))
                if depth < EXECUTABLE_COMMENT_DEPTH_MAX =>
            {
                if let Some(inner) = executable_body(body) {
                    out.push(Token::Whitespace(Whitespace::Space));
                    tokenize_into(dialect, inner, out, depth + 1)?;
                    out.push(Token::Whitespace(Whitespace::Space));
                    continue;
                }
                out.push(token);
            }
            _ => out.push(token),
        }
    }
    Ok(())
}

/// Returns the SQL inside an executable comment's body (`!…` or `T![…]…`), if it is one.
fn executable_body(body: &str) -> Option<&str> {
    if let Some(rest) = body.strip_prefix('!') {
        return Some(rest.trim_start_matches(|c: char| c.is_ascii_digit()));
    }
    if let Some(rest) = body.strip_prefix("T![") {
        let end = rest.find(']')?;
        // `/*T![clustered_index] CLUSTERED */` after PRIMARY KEY: every primary key is the
        // clustered row key here, so the words change nothing (NONCLUSTERED included).
        if rest[..end]
            .split(',')
            .any(|f| f.trim() == "clustered_index")
        {
            return Some("");
        }
        return Some(&rest[end + 1..]);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executable_comments_are_executed_and_hints_ignored() {
        let parsed = parse("CREATE TABLE t (id INT PRIMARY KEY) /*! ENGINE = innodb */ ").unwrap();
        let text = parsed.statements[0].to_string();
        assert!(text.contains("ENGINE"), "{text}");
        let parsed = parse("CREATE TABLE t (id INT /*T![auto_rand] AUTO_INCREMENT */)").unwrap();
        assert!(parsed.statements[0].to_string().contains("AUTO_INCREMENT"));
        let parsed =
            parse("CREATE TABLE t (a INT, PRIMARY KEY (a) /*T![clustered_index] CLUSTERED */)")
                .unwrap();
        assert!(!parsed.statements[0].to_string().contains("CLUSTERED"));
        let parsed = parse("SELECT /*+ TIDB_INLJ(a) */ 1").unwrap();
        assert_eq!(parsed.statements.len(), 1);
    }

    #[test]
    fn placeholders_are_numbered_in_text_order() {
        let parsed = parse("UPDATE t SET c=? WHERE id=?").unwrap();
        assert_eq!(parsed.param_count, 2);
        assert_eq!(
            parsed.statements[0].to_string(),
            "UPDATE t SET c = ?1 WHERE id = ?2"
        );
    }

    #[test]
    fn multi_statements_split() {
        assert_eq!(parse("SELECT 1; SELECT 2").unwrap().statements.len(), 2);
        assert!(parse("SELEC 1").is_err());
    }
}
