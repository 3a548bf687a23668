//! Parsing: MySQL text to `sqlparser` statements.
//!
//! Before parsing, the token stream is adjusted the way MySQL's lexer would see it:
//! executable comments (`/*! … */`, `/*!50100 … */`, TiDB's `/*T![feature] … */`) are replaced by
//! the tokens inside them, and each `?` placeholder is numbered in textual order (`?1`, `?2`, …)
//! so that parameters bind by position however the binder walks the tree; the words and
//! clauses of MySQL's that sqlparser's grammar lacks are rewritten or taken out (`rewrite`).
//!
//! MySQL's own statements are read into [`statement::Statement`]; ALTER TABLE's and SET's
//! clauses in [`alter`] and [`sets`]; [`dialect`] is sqlparser's MySQL dialect with Strata's
//! hooks; [`synth`] builds the trees of statements Strata runs on the user's behalf.

pub mod account;
pub mod alter;
pub mod bytes;
pub mod dialect;
mod rewrite;
pub mod sets;
pub mod statement;
pub mod synth;

use sqlparser::ast::{
    Delete, FromTable, ObjectName, ObjectNamePart, OrderByExpr, Statement, UpdateTableFromKind,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer, Whitespace};

use strata_txn::TxnMode;

use crate::error::{syntax, Error, Result};
pub use crate::parser::dialect::Modes;
use crate::parser::dialect::{StrataDialect, MAX_NESTING, MAX_QUERY_NESTING, MAX_TEXT_NESTING};
use crate::parser::rewrite::{
    drop_select_hints, set_assignments_as_equals, set_names_as_assignments,
    share_mode_as_for_share, take_unparsed_clauses, SelectHints, Shape,
};

/// The most characters of the query a syntax error quotes, as in MySQL.
const NEAR_CHARS_MAX: usize = 80;
/// Deepest nesting of executable comments honoured.
const EXECUTABLE_COMMENT_DEPTH_MAX: usize = 4;

/// The most UNION, EXCEPT and INTERSECT operators one text may hold.
const MAX_SET_OPERATORS: usize = 10_000;

/// How deep parentheses and CASE … END nest in `tokens`, and how deep parenthesized queries
/// (`(SELECT …`, `(WITH …`) nest among them. The parser recurses at least once per level;
/// text that nests deeper than it reads is refused with MySQL's stack overrun error before it
/// is parsed.
fn nesting(tokens: &[TokenWithSpan]) -> (usize, usize) {
    // For each open parenthesis or CASE, whether it opens a query.
    let mut open: Vec<bool> = Vec::new();
    let mut queries = 0usize;
    let (mut deepest, mut deepest_queries) = (0, 0);
    let mut words = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .peekable();
    while let Some(token) = words.next() {
        match &token.token {
            Token::LParen => {
                let query = words.peek().is_some_and(|next| {
                    matches!(&next.token, Token::Word(w) if matches!(w.keyword, Keyword::SELECT | Keyword::WITH))
                });
                queries += usize::from(query);
                open.push(query);
            }
            Token::Word(w) if w.keyword == Keyword::CASE => open.push(false),
            Token::RParen => queries -= usize::from(open.pop() == Some(true)),
            Token::Word(w) if w.keyword == Keyword::END => {
                queries -= usize::from(open.pop() == Some(true));
            }
            _ => {}
        }
        deepest = deepest.max(open.len());
        deepest_queries = deepest_queries.max(queries);
    }
    (deepest, deepest_queries)
}

/// Parsed statements of one text, with the number of `?` placeholders.
pub struct Parsed {
    pub statements: Vec<crate::parser::statement::Statement>,
    pub param_count: usize,
    /// Where each statement's text starts and ends (its first and last token).
    spans: Vec<(Location, Location)>,
}

impl Parsed {
    /// The text of each statement, cut from `sql` (the text parsed): what the slow log, the
    /// statement summary and PROCESSLIST show of a statement of a multi-statement query. The
    /// whole text where a statement's place is not known.
    pub fn texts<'s>(&self, sql: &'s str) -> Vec<&'s str> {
        let mut lines = vec![0];
        lines.extend(sql.match_indices('\n').map(|(at, _)| at + 1));
        // The byte offset of a line and column (both from 1; columns count characters).
        let offset = |at: Location| -> Option<usize> {
            let line_start = *lines.get((at.line as usize).checked_sub(1)?)?;
            let column = (at.column as usize).checked_sub(1)?;
            let rest = sql.get(line_start..)?;
            Some(
                line_start
                    + rest
                        .char_indices()
                        .nth(column)
                        .map_or(rest.len(), |(i, _)| i),
            )
        };
        (0..self.statements.len())
            .map(|i| {
                self.spans
                    .get(i)
                    .and_then(|&(start, end)| {
                        let (start, end) = (offset(start)?, offset(end)?);
                        Some(sql.get(start..end)?.trim()).filter(|t| !t.is_empty())
                    })
                    .unwrap_or(sql)
            })
            .collect()
    }

    /// The statements as sqlparser's trees, for text that holds only such statements (a view's
    /// definition); a statement of Strata's own is a syntax error there.
    pub fn into_sql(self) -> Result<Vec<Statement>> {
        self.statements
            .into_iter()
            .map(|s| match s {
                crate::parser::statement::Statement::Sql(statement, _) => Ok(*statement),
                other => Err(syntax(format!("near '{other:?}'"))),
            })
            .collect()
    }
}

/// What a statement says that sqlparser's tree has no place for.
#[derive(Clone, Debug, Default)]
pub struct Extras {
    /// A SELECT with SQL_CALC_FOUND_ROWS (FOUND_ROWS() then counts the rows its LIMIT left
    /// out).
    pub calc_found_rows: bool,
    /// The ORDER BY of MySQL's single-table `UPDATE … ORDER BY … [LIMIT]`.
    pub update_order_by: Vec<OrderByExpr>,
    /// The mode TiDB's `BEGIN PESSIMISTIC` or `BEGIN OPTIMISTIC` names.
    pub begin_mode: Option<TxnMode>,
    /// `CASCADED` or `LOCAL` for a CREATE or ALTER VIEW … WITH CHECK OPTION.
    pub view_check_option: Option<String>,
    /// The `MAX_EXECUTION_TIME(n)` optimizer hint of a SELECT, in milliseconds.
    pub max_execution_ms: Option<u64>,
    /// The character set and collation a CREATE DATABASE names.
    pub database_options: crate::parser::statement::DatabaseOptions,
}

/// How many statements one text may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch {
    /// Any number, `;`-separated: COM_QUERY from a client with CLIENT_MULTI_STATEMENTS.
    Multiple,
    /// One, optionally followed by `;`: a prepared statement, or COM_QUERY from a client
    /// without CLIENT_MULTI_STATEMENTS. Text after it is a syntax error quoting that text, as
    /// MySQL answers, and nothing runs.
    Single,
}

/// Parses one or more `;`-separated statements.
pub fn parse(sql: &str) -> Result<Parsed> {
    parse_batch(sql, Batch::Multiple)
}

/// Parses the statements of one text, as many as `batch` allows, in MySQL's default SQL mode.
pub fn parse_batch(sql: &str, batch: Batch) -> Result<Parsed> {
    parse_batch_in(sql, batch, Modes::default())
}

/// Parses the statements of one text, as many as `batch` allows, in a session whose
/// `sql_mode` gives `modes` (PIPES_AS_CONCAT, ANSI_QUOTES).
pub fn parse_batch_in(sql: &str, batch: Batch, modes: Modes) -> Result<Parsed> {
    let dialect = StrataDialect::with_modes(modes);
    let mut tokens = Vec::new();
    tokenize_into(&dialect, sql, &mut tokens, 0)?;
    let shape = Shape::of(&tokens);
    let hints = if shape.select {
        drop_select_hints(&mut tokens)
    } else {
        SelectHints::default()
    };
    if shape.lock {
        share_mode_as_for_share(&mut tokens);
    }
    if shape.charset {
        set_names_as_assignments(&mut tokens);
    }
    if shape.assignment {
        set_assignments_as_equals(&mut tokens);
    }
    let mut param_count = 0;
    if shape.placeholder {
        for token in &mut tokens {
            if let Token::Placeholder(p) = &mut token.token {
                if p == "?" {
                    param_count += 1;
                    *p = format!("?{param_count}");
                }
            }
        }
    }
    let (depth, query_depth) = nesting(&tokens);
    if query_depth > MAX_QUERY_NESTING {
        return Err(crate::error::too_deep_queries());
    }
    if shape.set_operators > MAX_SET_OPERATORS || depth > MAX_TEXT_NESTING {
        return Err(crate::error::too_deep());
    }
    let clauses = if shape.clauses {
        take_unparsed_clauses(&dialect, &mut tokens)
            .map_err(|e| parse_error(sql, &e.to_string()))?
    } else {
        Vec::new()
    };
    // The parser has panicked on some malformed input (`1 DIV >=` in sqlparser 0.59): such text
    // is a syntax error, not a reason to drop the connection.
    // Select lists are named from their tokens after parsing (the parser keeps no text).
    let kept = shape.select.then(|| tokens.clone());
    // Text this deep may reach the parser's limit inside a construct whose parsing turns that
    // into a syntax error (CASE): a syntax error is checked again with a deeper limit.
    let deep = (depth > MAX_NESTING / 8).then(|| tokens.clone());
    let mut spans = Vec::new();
    let mut parse = |tokens: Vec<TokenWithSpan>, limit: usize| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parse_statements(
                &mut Parser::new(&dialect)
                    .with_recursion_limit(limit)
                    .with_tokens_with_locations(tokens),
                batch,
                &mut spans,
            )
        }))
    };
    let mut statements = match parse(tokens, MAX_NESTING) {
        Ok(Err(ParserError::RecursionLimitExceeded)) => return Err(crate::error::too_deep()),
        Ok(Err(e)) => {
            if let Some(tokens) = deep {
                if let Ok(Ok(_)) = parse(tokens, MAX_NESTING * 4) {
                    return Err(crate::error::too_deep());
                }
            }
            return Err(parse_error(sql, &e.to_string()));
        }
        Ok(Ok(statements)) => statements,
        Err(_) => return Err(syntax("the statement could not be parsed")),
    };
    for statement in &mut statements {
        if let crate::parser::statement::Statement::Sql(s, _) = statement {
            crate::parser::sets::balance_set_operations(s)?;
        }
    }
    if let Some(tokens) = kept {
        let trees = statements.iter_mut().filter_map(|s| match s {
            crate::parser::statement::Statement::Sql(statement, _) => Some(&mut **statement),
            _ => None,
        });
        crate::names::name_select_items(trees, &tokens, sql);
    }
    for (i, statement) in statements.iter_mut().enumerate() {
        let crate::parser::statement::Statement::Sql(s, extras) = statement else {
            continue;
        };
        let select_at = match &**s {
            Statement::Query(q) => match q.body.as_ref() {
                sqlparser::ast::SetExpr::Select(select) => Some(select.select_token.0.span.start),
                _ => None,
            },
            _ => None,
        };
        *extras = Extras {
            calc_found_rows: select_at.is_some_and(|at| hints.calc_found_rows.contains(&at)),
            max_execution_ms: select_at.and_then(|at| {
                hints
                    .max_execution_ms
                    .iter()
                    .find(|(hinted, _)| *hinted == at)
                    .map(|(_, ms)| *ms)
            }),
            update_order_by: clauses
                .get(i)
                .map(|c| c.update_order_by.clone())
                .unwrap_or_default(),
            begin_mode: clauses.get(i).and_then(|c| c.begin_mode),
            view_check_option: clauses.get(i).and_then(|c| c.view_check_option.clone()),
            database_options: std::mem::take(&mut extras.database_options),
        };
    }
    Ok(Parsed {
        statements,
        param_count,
        spans,
    })
}

/// Reads `;`-separated statements, as sqlparser's `parse_statements` does, but MySQL's own
/// statements as Strata's ([`crate::parser::statement`]), and ALTER TABLE, UPDATE and DELETE in MySQL's
/// grammar (parse_alter.rs and below).
fn parse_statements(
    parser: &mut Parser,
    batch: Batch,
    spans: &mut Vec<(Location, Location)>,
) -> std::result::Result<Vec<crate::parser::statement::Statement>, ParserError> {
    let mut statements = Vec::new();
    let mut expecting_delimiter = false;
    loop {
        while parser.consume_token(&Token::SemiColon) {
            expecting_delimiter = false;
        }
        if parser.peek_token().token == Token::EOF {
            return Ok(statements);
        }
        if expecting_delimiter || (batch == Batch::Single && !statements.is_empty()) {
            return parser.expected("end of statement", parser.peek_token());
        }
        let start = parser.peek_token_ref().span.start;
        if let Some(statement) = crate::parser::statement::parse_mysql_only(parser)? {
            statements.push(statement);
            spans.push((start, parser.get_current_token().span.end));
            expecting_delimiter = true;
            continue;
        }
        let statement = if crate::parser::alter::at_alter_table(parser) {
            crate::parser::alter::parse_alter_table(parser)?
        } else if parser.peek_keyword(Keyword::UPDATE) {
            parse_update(parser)?
        } else if parser.peek_keyword(Keyword::DELETE) {
            parse_delete(parser)?
        } else {
            parser.parse_statement()?
        };
        statements.push(crate::parser::statement::Statement::Sql(
            Box::new(statement),
            Extras::default(),
        ));
        spans.push((start, parser.get_current_token().span.end));
        expecting_delimiter = true;
    }
}

/// MySQL's `UPDATE table_references SET … [WHERE …] [LIMIT n]` (its ORDER BY was taken out
/// before, by [`take_unparsed_clauses`]). Of comma-separated table references, the first is the
/// statement's table and the others its `from`; sqlparser reads only one.
fn parse_update(parser: &mut Parser) -> std::result::Result<Statement, ParserError> {
    parser.expect_keyword_is(Keyword::UPDATE)?;
    let mut tables = parser.parse_comma_separated(Parser::parse_table_and_joins)?;
    parser.expect_keyword_is(Keyword::SET)?;
    let assignments = parser.parse_comma_separated(Parser::parse_assignment)?;
    let selection = if parser.parse_keyword(Keyword::WHERE) {
        Some(parser.parse_expr()?)
    } else {
        None
    };
    let limit = if parser.parse_keyword(Keyword::LIMIT) {
        Some(parser.parse_expr()?)
    } else {
        None
    };
    let table = tables.remove(0);
    Ok(Statement::Update {
        table,
        assignments,
        from: (!tables.is_empty()).then_some(UpdateTableFromKind::BeforeSet(tables)),
        selection,
        returning: None,
        or: None,
        limit,
    })
}

/// MySQL's DELETE, in its three forms:
///
/// - `DELETE FROM t [WHERE …] [ORDER BY …] [LIMIT n]`;
/// - `DELETE t[.*], … FROM table_references [WHERE …]`;
/// - `DELETE FROM t[.*], … USING table_references [WHERE …]`.
///
/// Both multiple-table forms are read into `tables` (the targets) and `from` (the joined
/// tables).
/// The multiple-table forms have no ORDER BY or LIMIT, which are then a syntax error where
/// they stand, as in MySQL.
fn parse_delete(parser: &mut Parser) -> std::result::Result<Statement, ParserError> {
    fn target(parser: &mut Parser) -> std::result::Result<ObjectName, ParserError> {
        let mut parts = Vec::new();
        loop {
            parts.push(ObjectNamePart::Identifier(parser.parse_identifier()?));
            if !parser.consume_token(&Token::Period) || parser.consume_token(&Token::Mul) {
                return Ok(ObjectName(parts));
            }
        }
    }
    parser.expect_keyword_is(Keyword::DELETE)?;
    // Both multiple-table forms become `tables` (the targets) and `from` (what is joined).
    let (tables, from) = if parser.parse_keyword(Keyword::FROM) {
        let using = parser.maybe_parse(|p| {
            let targets = p.parse_comma_separated(target)?;
            p.expect_keyword_is(Keyword::USING)?;
            Ok(targets)
        })?;
        match using {
            Some(targets) => (
                targets,
                parser.parse_comma_separated(Parser::parse_table_and_joins)?,
            ),
            None => (
                Vec::new(),
                parser.parse_comma_separated(Parser::parse_table_and_joins)?,
            ),
        }
    } else {
        let tables = parser.parse_comma_separated(target)?;
        parser.expect_keyword_is(Keyword::FROM)?;
        let from = parser.parse_comma_separated(Parser::parse_table_and_joins)?;
        (tables, from)
    };
    let single = tables.is_empty();
    let selection = if parser.parse_keyword(Keyword::WHERE) {
        Some(parser.parse_expr()?)
    } else {
        None
    };
    let order_by = if single && parser.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
        parser.parse_comma_separated(Parser::parse_order_by_expr)?
    } else {
        Vec::new()
    };
    let limit = if single && parser.parse_keyword(Keyword::LIMIT) {
        Some(parser.parse_expr()?)
    } else {
        None
    };
    Ok(Statement::Delete(Delete {
        tables,
        from: FromTable::WithFromKeyword(from),
        using: None,
        selection,
        returning: None,
        order_by,
        limit,
    }))
}

/// MySQL's 1064 for a parser's `message`: the query's text from where the parser stopped (at
/// most [`NEAR_CHARS_MAX`] characters) and its line, when the message says where that is.
fn parse_error(sql: &str, message: &str) -> Error {
    let place = message.rsplit_once(" at Line: ").and_then(|(_, at)| {
        let (line, column) = at.split_once(", Column: ")?;
        Some((line.parse::<usize>().ok()?, column.parse::<usize>().ok()?))
    });
    // At the end of the text the parser names no place: MySQL quotes nothing there.
    let place = place.or_else(|| {
        message
            .ends_with("found: EOF")
            .then(|| (sql.split('\n').count(), usize::MAX))
    });
    let Some((line, column)) = place else {
        return syntax(message);
    };
    let near: String = sql
        .split('\n')
        .nth(line.saturating_sub(1))
        .map(|text| {
            let start = text
                .char_indices()
                .nth(column.saturating_sub(1))
                .map_or(text.len(), |(i, _)| i);
            let rest_of_line = &text[start..];
            let after: Vec<&str> = sql.split('\n').skip(line).collect();
            let mut rest = rest_of_line.to_string();
            for more in after {
                rest.push('\n');
                rest.push_str(more);
            }
            rest.chars().take(NEAR_CHARS_MAX).collect()
        })
        .unwrap_or_default();
    Error::new(
        1064,
        "42000",
        format!("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line {line}"),
    )
}

fn tokenize_into(
    dialect: &StrataDialect,
    sql: &str,
    out: &mut Vec<TokenWithSpan>,
    depth: usize,
) -> Result<()> {
    let tokens = Tokenizer::new(dialect, sql)
        .tokenize_with_location()
        .map_err(|e| parse_error(sql, &e.to_string()))?;
    let executable = |token: &TokenWithSpan| matches!(&token.token, Token::Whitespace(Whitespace::MultiLineComment(body)) if executable_body(body).is_some());
    if depth == 0 && out.is_empty() && !tokens.iter().any(executable) {
        *out = tokens;
        return Ok(());
    }
    for mut token in tokens {
        // Inside an executable comment, locations are the comment's text's, not the query's.
        if depth > 0 {
            token.span = Span::empty();
        }
        match &token.token {
            Token::Whitespace(Whitespace::MultiLineComment(body))
                if depth < EXECUTABLE_COMMENT_DEPTH_MAX =>
            {
                if let Some(inner) = executable_body(body) {
                    let space =
                        || TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty());
                    out.push(space());
                    tokenize_into(dialect, inner, out, depth + 1)?;
                    out.push(space());
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

    /// Each statement of a multi-statement text is cut out with its own text, on any line,
    /// after characters of any width, with Strata's own statements among sqlparser's.
    #[test]
    fn each_statement_of_several_has_its_text() {
        let sql = "SELECT 1;  INSERT INTO t VALUES ('a;b');\n  SELECT 'é€', 2 ;\
                   GRANT SELECT ON d.* TO u;SHOW PROCESSLIST\n";
        let parsed = parse_batch(sql, Batch::Multiple).unwrap();
        assert_eq!(
            parsed.texts(sql),
            [
                "SELECT 1",
                "INSERT INTO t VALUES ('a;b')",
                "SELECT 'é€', 2",
                "GRANT SELECT ON d.* TO u",
                "SHOW PROCESSLIST"
            ]
        );
    }

    fn sql_trees(parsed: &crate::parser::Parsed) -> Vec<Statement> {
        parsed
            .statements
            .iter()
            .filter_map(|s| match s {
                crate::parser::statement::Statement::Sql(tree, _) => Some((**tree).clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn executable_comments_are_executed_and_hints_ignored() {
        let parsed = parse("CREATE TABLE t (id INT PRIMARY KEY) /*! ENGINE = innodb */ ").unwrap();
        let text = sql_trees(&parsed)[0].to_string();
        assert!(text.contains("ENGINE"), "{text}");
        let parsed = parse("CREATE TABLE t (id INT /*T![auto_rand] AUTO_INCREMENT */)").unwrap();
        assert!(sql_trees(&parsed)[0].to_string().contains("AUTO_INCREMENT"));
        let parsed =
            parse("CREATE TABLE t (a INT, PRIMARY KEY (a) /*T![clustered_index] CLUSTERED */)")
                .unwrap();
        assert!(!sql_trees(&parsed)[0].to_string().contains("CLUSTERED"));
        let parsed = parse("SELECT /*+ TIDB_INLJ(a) */ 1").unwrap();
        assert_eq!(parsed.statements.len(), 1);
    }

    #[test]
    fn placeholders_are_numbered_in_text_order() {
        let parsed = parse("UPDATE t SET c=? WHERE id=?").unwrap();
        assert_eq!(parsed.param_count, 2);
        assert_eq!(
            sql_trees(&parsed)[0].to_string(),
            "UPDATE t SET c = ?1 WHERE id = ?2"
        );
    }

    #[test]
    fn multi_statements_split() {
        assert_eq!(parse("SELECT 1; SELECT 2").unwrap().statements.len(), 2);
        assert!(parse("SELEC 1").is_err());
    }

    #[test]
    fn names_and_character_set_items_are_assignments_wherever_they_stand() {
        let text = |sql: &str| sql_trees(&parse(sql).unwrap())[0].to_string();
        assert_eq!(
            text("SET time_zone = '+00:00', NAMES utf8mb4 COLLATE utf8mb4_unicode_ci"),
            "SET time_zone = '+00:00', character_set_client = utf8mb4, \
             character_set_connection = utf8mb4, character_set_results = utf8mb4, \
             collation_connection = utf8mb4_unicode_ci"
        );
        assert_eq!(
            text("SET CHARACTER SET 'latin1', @a = (SELECT names FROM t)"),
            "SET character_set_client = 'latin1', character_set_results = 'latin1', @a = \
             (SELECT names FROM t)"
        );
        assert_eq!(text("SET NAMES DEFAULT"), "SET NAMES DEFAULT");
        assert_eq!(text("UPDATE t SET names = 1"), "UPDATE t SET names = 1");
        assert!(parse("SET NAMES").is_err());
    }
}
