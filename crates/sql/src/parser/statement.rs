//! Strata's statement: what parsing produces and every handler takes.
//!
//! sqlparser's tree holds most statements; [`Statement::Sql`] carries one with what that tree
//! has no place for ([`Extras`]). The MySQL statements sqlparser lacks, or parses into forms that
//! lose what MySQL means, are variants of their own, read from the same tokens by
//! [`parse_mysql_only`] before sqlparser sees them. So a statement is routed by what it parses
//! to, never by matching its text.

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::parser::account::{parse_account_statement, AccountStatement};
use crate::parser::Extras;

/// One parsed statement.
#[derive(Clone, Debug)]
pub enum Statement {
    /// A statement sqlparser's tree holds, and what the tree has no place for.
    Sql(Box<ast::Statement>, Extras),
    /// A SHOW form sqlparser does not read.
    Show(Show),
    /// `{ANALYZE | OPTIMIZE} [NO_WRITE_TO_BINLOG | LOCAL] TABLE name [, name]…`: OPTIMIZE has
    /// nothing to rebuild here and analyzes instead, as InnoDB ends by doing.
    Analyze {
        tables: Vec<ast::ObjectName>,
        optimize: bool,
    },
    /// `DO expr [, expr]…`: evaluates the expressions for their effects.
    Do(Vec<ast::Expr>),
    /// `START TRANSACTION WITH CONSISTENT SNAPSHOT [, READ ONLY | READ WRITE]`: every
    /// transaction reads one snapshot from its first statement on, which is what the clause
    /// asks for.
    BeginConsistent,
    /// CREATE / ALTER / DROP / RENAME USER, SET PASSWORD, GRANT, REVOKE, SHOW GRANTS.
    Account(AccountStatement),
}

/// The SHOW forms read here.
#[derive(Clone, Debug, PartialEq)]
pub enum Show {
    /// `SHOW WARNINGS` or `SHOW ERRORS` (none are kept).
    Warnings,
    /// `SHOW {INDEX | INDEXES | KEYS} {FROM | IN} table [{FROM | IN} database] [WHERE expr]`.
    Index {
        table: ast::ObjectName,
        database: Option<ast::Ident>,
        filter: Option<ShowFilter>,
    },
    /// `SHOW TABLE STATUS [{FROM | IN} database] [LIKE 'pattern' | WHERE expr]`.
    TableStatus {
        database: Option<ast::Ident>,
        filter: Option<ShowFilter>,
    },
    /// `SHOW [STORAGE] ENGINES`.
    Engines,
    /// `SHOW [GLOBAL | SESSION] STATUS [LIKE … | WHERE …]`.
    Status {
        global: bool,
        filter: Option<ShowFilter>,
    },
    /// `SHOW COLLATION [LIKE … | WHERE …]`.
    Collation(Option<ShowFilter>),
    /// `SHOW {CHARACTER SET | CHARSET} [LIKE … | WHERE …]`.
    Charset(Option<ShowFilter>),
    /// `SHOW [FULL] PROCESSLIST`: without FULL, statements are cut to 100 characters.
    Processlist { full: bool },
    /// `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] name`.
    CreateDatabase(ast::Ident),
    /// TiDB's `SHOW TABLE table [INDEX index] REGIONS [WHERE expr]`.
    TableRegions {
        table: ast::ObjectName,
        index: Option<ast::Ident>,
        filter: Option<ShowFilter>,
    },
}

/// The `LIKE` or `WHERE` of a SHOW: LIKE matches the first column, WHERE reads the columns
/// by the names the SHOW gives them.
#[derive(Clone, Debug, PartialEq)]
pub enum ShowFilter {
    Like(String),
    Where(Box<ast::Expr>),
}

/// Reads the statement at the parser's position if it is one of Strata's own forms; None
/// (with nothing consumed) when sqlparser should read it.
pub fn parse_mysql_only(parser: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if let Some(account) = parse_account_statement(parser)? {
        return Ok(Some(Statement::Account(account)));
    }
    if parser.parse_keyword(Keyword::SHOW) {
        return match parse_show(parser)? {
            Some(show) => Ok(Some(Statement::Show(show))),
            None => {
                parser.prev_token();
                Ok(None)
            }
        };
    }
    if parser.peek_keyword(Keyword::ANALYZE) || parser.peek_keyword(Keyword::OPTIMIZE) {
        let optimize = parser.parse_keyword(Keyword::OPTIMIZE);
        if !optimize {
            parser.expect_keyword_is(Keyword::ANALYZE)?;
        }
        let _ = parser.parse_one_of_keywords(&[Keyword::NO_WRITE_TO_BINLOG, Keyword::LOCAL]);
        parser.expect_keyword_is(Keyword::TABLE)?;
        let tables = parser.parse_comma_separated(|p| p.parse_object_name(false))?;
        return Ok(Some(Statement::Analyze { tables, optimize }));
    }
    if parser.parse_keyword(Keyword::DO) {
        let exprs = parser.parse_comma_separated(Parser::parse_expr)?;
        return Ok(Some(Statement::Do(exprs)));
    }
    if parser.peek_keyword(Keyword::START) && at_words(parser, 2, &["WITH", "CONSISTENT"]) {
        parser.expect_keywords(&[Keyword::START, Keyword::TRANSACTION, Keyword::WITH])?;
        expect_word(parser, "CONSISTENT")?;
        parser.expect_keyword_is(Keyword::SNAPSHOT)?;
        while parser.consume_token(&Token::Comma) {
            parser.expect_keyword_is(Keyword::READ)?;
            parser.expect_one_of_keywords(&[Keyword::ONLY, Keyword::WRITE])?;
        }
        return Ok(Some(Statement::BeginConsistent));
    }
    Ok(None)
}

/// The SHOW form after `SHOW`, or None for one sqlparser reads.
fn parse_show(parser: &mut Parser) -> Result<Option<Show>, ParserError> {
    let show = if word_is(parser, "WARNINGS") || word_is(parser, "ERRORS") {
        parser.next_token();
        if parser.parse_keyword(Keyword::LIMIT) {
            parser.parse_comma_separated(Parser::parse_expr)?;
        }
        Show::Warnings
    } else if parser
        .parse_one_of_keywords(&[Keyword::INDEX, Keyword::KEYS])
        .is_some()
        || consume_word(parser, "INDEXES")
    {
        parser.expect_one_of_keywords(&[Keyword::FROM, Keyword::IN])?;
        let table = parser.parse_object_name(false)?;
        let database = parse_from_database(parser)?;
        let filter = if parser.parse_keyword(Keyword::WHERE) {
            Some(ShowFilter::Where(Box::new(parser.parse_expr()?)))
        } else {
            None
        };
        Show::Index {
            table,
            database,
            filter,
        }
    } else if parser.peek_keyword(Keyword::TABLE) && !at_keyword(parser, 1, Keyword::STATUS) {
        parser.expect_keyword_is(Keyword::TABLE)?;
        let table = parser.parse_object_name(false)?;
        let index = if parser.parse_keyword(Keyword::INDEX) {
            Some(parser.parse_identifier()?)
        } else {
            None
        };
        expect_word(parser, "REGIONS")?;
        let filter = if parser.parse_keyword(Keyword::WHERE) {
            Some(ShowFilter::Where(Box::new(parser.parse_expr()?)))
        } else {
            None
        };
        Show::TableRegions {
            table,
            index,
            filter,
        }
    } else if parser.parse_keywords(&[Keyword::TABLE, Keyword::STATUS]) {
        let database = parse_from_database(parser)?;
        Show::TableStatus {
            database,
            filter: parse_filter(parser)?,
        }
    } else if consume_word(parser, "ENGINES")
        || (parser.peek_keyword(Keyword::STORAGE) && at_words(parser, 1, &["ENGINES"]))
    {
        if parser.parse_keyword(Keyword::STORAGE) {
            expect_word(parser, "ENGINES")?;
        }
        Show::Engines
    } else if parser.peek_keyword(Keyword::STATUS)
        || (parser
            .peek_one_of_keywords(&[Keyword::GLOBAL, Keyword::SESSION])
            .is_some()
            && at_keyword(parser, 1, Keyword::STATUS))
    {
        let global = parser.parse_one_of_keywords(&[Keyword::GLOBAL, Keyword::SESSION])
            == Some(Keyword::GLOBAL);
        parser.expect_keyword_is(Keyword::STATUS)?;
        Show::Status {
            global,
            filter: parse_filter(parser)?,
        }
    } else if parser.parse_keyword(Keyword::COLLATION) {
        Show::Collation(parse_filter(parser)?)
    } else if parser.parse_keyword(Keyword::CHARSET)
        || parser.parse_keywords(&[Keyword::CHARACTER, Keyword::SET])
    {
        Show::Charset(parse_filter(parser)?)
    } else if consume_word(parser, "PROCESSLIST") {
        Show::Processlist { full: false }
    } else if parser.peek_keyword(Keyword::FULL) && at_words(parser, 1, &["PROCESSLIST"]) {
        parser.expect_keyword_is(Keyword::FULL)?;
        expect_word(parser, "PROCESSLIST")?;
        Show::Processlist { full: true }
    } else if parser.peek_keyword(Keyword::CREATE)
        && (at_keyword(parser, 1, Keyword::DATABASE) || at_keyword(parser, 1, Keyword::SCHEMA))
    {
        parser.expect_keyword_is(Keyword::CREATE)?;
        parser.expect_one_of_keywords(&[Keyword::DATABASE, Keyword::SCHEMA])?;
        let _ = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        Show::CreateDatabase(parser.parse_identifier()?)
    } else {
        return Ok(None);
    };
    Ok(Some(show))
}

/// An optional `{FROM | IN} database`.
fn parse_from_database(parser: &mut Parser) -> Result<Option<ast::Ident>, ParserError> {
    if parser
        .parse_one_of_keywords(&[Keyword::FROM, Keyword::IN])
        .is_some()
    {
        Ok(Some(parser.parse_identifier()?))
    } else {
        Ok(None)
    }
}

/// An optional `LIKE 'pattern'` or `WHERE expr`.
fn parse_filter(parser: &mut Parser) -> Result<Option<ShowFilter>, ParserError> {
    if parser.parse_keyword(Keyword::LIKE) {
        return Ok(Some(ShowFilter::Like(parser.parse_literal_string()?)));
    }
    if parser.parse_keyword(Keyword::WHERE) {
        return Ok(Some(ShowFilter::Where(Box::new(parser.parse_expr()?))));
    }
    Ok(None)
}

/// Whether the next token is the word `word` (one sqlparser has no keyword for).
fn word_is(parser: &Parser, word: &str) -> bool {
    matches!(&parser.peek_token().token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

pub(super) fn consume_word(parser: &mut Parser, word: &str) -> bool {
    let found = word_is(parser, word);
    if found {
        parser.next_token();
    }
    found
}

pub(super) fn expect_word(parser: &mut Parser, word: &str) -> Result<(), ParserError> {
    if consume_word(parser, word) {
        Ok(())
    } else {
        parser.expected(word, parser.peek_token())
    }
}

/// Whether the tokens `skip` places ahead are the unquoted words `words`.
pub(super) fn at_words(parser: &Parser, skip: usize, words: &[&str]) -> bool {
    words.iter().enumerate().all(|(i, word)| {
        matches!(&parser.peek_nth_token(skip + i).token,
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
    })
}

/// Whether the token `skip` places ahead is `keyword`.
fn at_keyword(parser: &Parser, skip: usize, keyword: Keyword) -> bool {
    matches!(&parser.peek_nth_token(skip).token, Token::Word(w) if w.keyword == keyword)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::dialect::StrataDialect;

    fn parse(sql: &str) -> Option<Statement> {
        let dialect = StrataDialect::default();
        let mut parser = Parser::new(&dialect).try_with_sql(sql).unwrap();
        parse_mysql_only(&mut parser).unwrap()
    }

    #[test]
    fn mysql_only_statements_parse_from_tokens() {
        assert!(matches!(
            parse("show warnings limit 10"),
            Some(Statement::Show(Show::Warnings))
        ));
        assert!(matches!(
            parse("SHOW KEYS FROM t IN db"),
            Some(Statement::Show(Show::Index { database: Some(d), .. })) if d.value == "db"
        ));
        assert!(matches!(
            parse("SHOW TABLE STATUS LIKE 't%'"),
            Some(Statement::Show(Show::TableStatus { filter: Some(ShowFilter::Like(p)), .. })) if p == "t%"
        ));
        assert!(matches!(
            parse("SHOW TABLE STATUS FROM shop WHERE Rows > 1"),
            Some(Statement::Show(Show::TableStatus {
                filter: Some(ShowFilter::Where(_)),
                ..
            }))
        ));
        assert!(matches!(
            parse("SHOW FULL PROCESSLIST"),
            Some(Statement::Show(Show::Processlist { full: true }))
        ));
        assert!(matches!(
            parse("SHOW GLOBAL STATUS LIKE 'x'"),
            Some(Statement::Show(Show::Status {
                global: true,
                filter: Some(ShowFilter::Like(p))
            })) if p == "x"
        ));
        assert!(matches!(
            parse("ANALYZE NO_WRITE_TO_BINLOG TABLE a, b.c"),
            Some(Statement::Analyze { tables, optimize: false }) if tables.len() == 2
        ));
        assert!(matches!(parse("DO SLEEP(0), 1 + 1"), Some(Statement::Do(e)) if e.len() == 2));
        assert!(matches!(
            parse("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"),
            Some(Statement::BeginConsistent)
        ));
    }

    #[test]
    fn other_statements_are_left_to_sqlparser() {
        for sql in [
            "SHOW TABLES",
            "SHOW VARIABLES LIKE 'a'",
            "SHOW CREATE TABLE t",
            "START TRANSACTION",
            "SELECT 1",
        ] {
            let dialect = StrataDialect::default();
            let mut parser = Parser::new(&dialect).try_with_sql(sql).unwrap();
            assert!(parse_mysql_only(&mut parser).unwrap().is_none(), "{sql}");
            // Nothing was consumed: sqlparser reads the whole statement.
            assert!(parser.parse_statement().is_ok(), "{sql}");
        }
    }
}
