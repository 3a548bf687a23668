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
    /// `ALTER {DATABASE | SCHEMA} [name] option…`: the database's name, else the current one.
    AlterDatabase {
        name: Option<ast::Ident>,
        options: DatabaseOptions,
    },
    /// `CHECKSUM TABLE name [, name]… [QUICK | EXTENDED]`.
    Checksum {
        tables: Vec<ast::ObjectName>,
        quick: bool,
    },
}

impl Statement {
    /// Whether the statement is what an operator runs to find and stop others (KILL, SHOW
    /// PROCESSLIST): it starts even while the server's memory is nearly spent.
    pub fn is_process_control(&self) -> bool {
        matches!(self, Statement::Show(Show::Processlist { .. }))
            || matches!(self, Statement::Sql(sql, _) if matches!(**sql, ast::Statement::Kill { .. }))
    }
}

/// The character set and collation CREATE or ALTER DATABASE names (`[DEFAULT] CHARACTER SET
/// [=] name`, `[DEFAULT] COLLATE [=] name`); ENCRYPTION and COMMENT are read and dropped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatabaseOptions {
    pub charset: Option<String>,
    pub collation: Option<String>,
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
    /// A SHOW of objects Strata has none of (triggers, events, stored routines, a binary log),
    /// answered with no rows as MySQL answers where there are none: `SHOW TRIGGERS [{FROM | IN}
    /// database] [LIKE … | WHERE …]`, `SHOW EVENTS …` likewise, `SHOW {FUNCTION | PROCEDURE}
    /// STATUS [LIKE … | WHERE …]`, `SHOW {MASTER | BINARY LOG} STATUS`.
    Empty {
        of: EmptyShow,
        database: Option<ast::Ident>,
        filter: Option<ShowFilter>,
    },
    /// `SHOW {BINARY | MASTER} LOGS`: MySQL's error without a binary log.
    BinaryLogs,
    /// TiDB's `SHOW TABLE table [INDEX index] REGIONS [WHERE expr]`.
    TableRegions {
        table: ast::ObjectName,
        index: Option<ast::Ident>,
        filter: Option<ShowFilter>,
    },
}

/// What an empty SHOW lists.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EmptyShow {
    Triggers,
    Events,
    FunctionStatus,
    ProcedureStatus,
    BinaryLogStatus,
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
    if parser.peek_keyword(Keyword::CREATE)
        && (at_keyword(parser, 1, Keyword::DATABASE) || at_keyword(parser, 1, Keyword::SCHEMA))
    {
        parser.expect_keyword_is(Keyword::CREATE)?;
        parser.expect_one_of_keywords(&[Keyword::DATABASE, Keyword::SCHEMA])?;
        let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        let name = parser.parse_object_name(false)?;
        let options = parse_database_options(parser)?.unwrap_or_default();
        let tree = crate::parser::synth::create_database(name, if_not_exists);
        let extras = Extras {
            database_options: options,
            ..Extras::default()
        };
        return Ok(Some(Statement::Sql(Box::new(tree), extras)));
    }
    if parser.peek_keyword(Keyword::ALTER)
        && (at_keyword(parser, 1, Keyword::DATABASE) || at_keyword(parser, 1, Keyword::SCHEMA))
    {
        parser.expect_keyword_is(Keyword::ALTER)?;
        parser.expect_one_of_keywords(&[Keyword::DATABASE, Keyword::SCHEMA])?;
        let name = match parser.peek_token().token {
            Token::Word(w) if w.quote_style.is_some() || !is_database_option(&w.value) => {
                Some(parser.parse_identifier()?)
            }
            _ => None,
        };
        let Some(options) = parse_database_options(parser)? else {
            return parser.expected("CHARACTER SET, COLLATE or ENCRYPTION", parser.peek_token());
        };
        return Ok(Some(Statement::AlterDatabase { name, options }));
    }
    if word_is(parser, "CHECKSUM") && at_keyword(parser, 1, Keyword::TABLE) {
        parser.next_token();
        parser.expect_keyword_is(Keyword::TABLE)?;
        let tables = parser.parse_comma_separated(|p| p.parse_object_name(false))?;
        let quick = consume_word(parser, "QUICK");
        if !quick {
            let _ = consume_word(parser, "EXTENDED");
        }
        return Ok(Some(Statement::Checksum { tables, quick }));
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
    } else if word_is(parser, "TRIGGERS") || word_is(parser, "EVENTS") {
        let of = if consume_word(parser, "TRIGGERS") {
            EmptyShow::Triggers
        } else {
            parser.next_token();
            EmptyShow::Events
        };
        Show::Empty {
            of,
            database: parse_from_database(parser)?,
            filter: parse_filter(parser)?,
        }
    } else if (parser.peek_keyword(Keyword::FUNCTION) || parser.peek_keyword(Keyword::PROCEDURE))
        && at_keyword(parser, 1, Keyword::STATUS)
    {
        let of = if parser.parse_keyword(Keyword::FUNCTION) {
            EmptyShow::FunctionStatus
        } else {
            parser.expect_keyword_is(Keyword::PROCEDURE)?;
            EmptyShow::ProcedureStatus
        };
        parser.expect_keyword_is(Keyword::STATUS)?;
        Show::Empty {
            of,
            database: None,
            filter: parse_filter(parser)?,
        }
    } else if (word_is(parser, "MASTER") && at_keyword(parser, 1, Keyword::STATUS))
        || (parser.peek_keyword(Keyword::BINARY)
            && at_words(parser, 1, &["LOG"])
            && at_keyword(parser, 2, Keyword::STATUS))
    {
        if !consume_word(parser, "MASTER") {
            parser.expect_keyword_is(Keyword::BINARY)?;
            expect_word(parser, "LOG")?;
        }
        parser.expect_keyword_is(Keyword::STATUS)?;
        Show::Empty {
            of: EmptyShow::BinaryLogStatus,
            database: None,
            filter: None,
        }
    } else if (word_is(parser, "MASTER") || parser.peek_keyword(Keyword::BINARY))
        && at_words(parser, 1, &["LOGS"])
    {
        parser.next_token();
        parser.next_token();
        Show::BinaryLogs
    } else {
        return Ok(None);
    };
    Ok(Some(show))
}

/// Whether an unquoted `word` after ALTER DATABASE starts an option rather than naming the
/// database.
fn is_database_option(word: &str) -> bool {
    [
        "DEFAULT",
        "CHARACTER",
        "CHARSET",
        "COLLATE",
        "ENCRYPTION",
        "COMMENT",
    ]
    .iter()
    .any(|option| word.eq_ignore_ascii_case(option))
}

/// The options of CREATE or ALTER DATABASE, in any order, each optionally after DEFAULT and
/// before `=`; None when there are none.
fn parse_database_options(parser: &mut Parser) -> Result<Option<DatabaseOptions>, ParserError> {
    let mut options = DatabaseOptions::default();
    let mut read = false;
    loop {
        let default = parser.parse_keyword(Keyword::DEFAULT);
        let slot = if parser.parse_keywords(&[Keyword::CHARACTER, Keyword::SET])
            || consume_word(parser, "CHARSET")
        {
            &mut options.charset
        } else if parser.parse_keyword(Keyword::COLLATE) {
            &mut options.collation
        } else if consume_word(parser, "ENCRYPTION") {
            let _ = parser.consume_token(&Token::Eq);
            let value = parser.parse_literal_string()?;
            if !value.eq_ignore_ascii_case("Y") && !value.eq_ignore_ascii_case("N") {
                return parser.expected("'Y' or 'N'", parser.peek_token());
            }
            read = true;
            continue;
        } else if !default && parser.parse_keyword(Keyword::COMMENT) {
            let _ = parser.consume_token(&Token::Eq);
            parser.parse_literal_string()?;
            read = true;
            continue;
        } else if default {
            return parser.expected("CHARACTER SET, COLLATE or ENCRYPTION", parser.peek_token());
        } else {
            break;
        };
        let _ = parser.consume_token(&Token::Eq);
        let next = parser.next_token();
        *slot = Some(match next.token {
            Token::Word(w) => w.value.to_ascii_lowercase(),
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s.to_ascii_lowercase(),
            _ => return parser.expected("a character set or collation name", next),
        });
        read = true;
    }
    Ok(read.then_some(options))
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
    fn database_options_and_checksum_parse() {
        let Some(Statement::Sql(tree, extras)) =
            parse("CREATE DATABASE IF NOT EXISTS `shop` DEFAULT CHARACTER SET = utf8mb4 COLLATE 'UTF8MB4_BIN' ENCRYPTION='N'")
        else {
            panic!("not a CREATE DATABASE");
        };
        assert!(
            matches!(*tree, ast::Statement::CreateDatabase { if_not_exists: true, ref db_name, .. } if db_name.to_string() == "`shop`")
        );
        assert_eq!(
            extras.database_options,
            DatabaseOptions {
                charset: Some("utf8mb4".into()),
                collation: Some("utf8mb4_bin".into())
            }
        );
        assert!(matches!(
            parse("ALTER DATABASE CHARSET latin1"),
            Some(Statement::AlterDatabase { name: None, options }) if options.charset.as_deref() == Some("latin1")
        ));
        assert!(matches!(
            parse("ALTER SCHEMA d COMMENT 'x'"),
            Some(Statement::AlterDatabase { name: Some(n), options }) if n.value == "d" && options == DatabaseOptions::default()
        ));
        assert!(matches!(
            parse("ALTER SCHEMA `comment` DEFAULT COLLATE utf8mb4_bin"),
            Some(Statement::AlterDatabase { name: Some(n), .. }) if n.value == "comment"
        ));
        assert!(matches!(
            parse("CHECKSUM TABLE a, b.c EXTENDED"),
            Some(Statement::Checksum { tables, quick: false }) if tables.len() == 2
        ));
        assert!(matches!(
            parse("checksum table a quick"),
            Some(Statement::Checksum { quick: true, .. })
        ));
        for bad in [
            "ALTER DATABASE d",
            "ALTER DATABASE d DEFAULT",
            "CREATE DATABASE d DEFAULT COMMENT 'x'",
            "CREATE DATABASE d ENCRYPTION 'maybe'",
            "CREATE DATABASE d CHARACTER SET 5",
        ] {
            let dialect = StrataDialect::default();
            let mut parser = Parser::new(&dialect).try_with_sql(bad).unwrap();
            assert!(parse_mysql_only(&mut parser).is_err(), "{bad}");
        }
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
