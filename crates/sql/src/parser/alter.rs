//! `ALTER TABLE` in MySQL's grammar.
//!
//! sqlparser reads most of its operations (`ADD COLUMN … AFTER`, `MODIFY`, `CHANGE`, `ADD
//! INDEX`, `ALGORITHM=…`); the ones MySQL has and sqlparser lacks are read here and given as the
//! nearest operation of sqlparser's tree, so that the rest of Strata sees one statement type:
//!
//! ```text
//!   ADD [COLUMN] (c1 …, c2 …)            -> one AddColumn each
//!   DROP {INDEX | KEY} i                 -> DropIndex
//!   RENAME {INDEX | KEY} a TO b          -> RenameConstraint { a, b }
//!   RENAME [TO | AS] t                   -> RenameTable
//!   ENGINE=…, COMMENT '…', CHARSET …,    -> SetTblProperties, one KeyValue per option
//!   CONVERT TO CHARACTER SET … , FORCE      (keys upper-cased: ENGINE, COMMENT, CHARSET, …)
//! ```

use sqlparser::ast::{
    AlterTableOperation, Expr, Ident, RenameTableNameKind, SqlOption, Statement, Value,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Table options an ALTER TABLE may set (MySQL's `table_option`), each `NAME [=] value`.
const TABLE_OPTIONS: &[&str] = &[
    "ENGINE",
    "COMMENT",
    "CHARSET",
    "COLLATE",
    "AUTO_INCREMENT",
    "ROW_FORMAT",
    "KEY_BLOCK_SIZE",
    "AVG_ROW_LENGTH",
    "CHECKSUM",
    "COMPRESSION",
    "DELAY_KEY_WRITE",
    "ENCRYPTION",
    "INSERT_METHOD",
    "MAX_ROWS",
    "MIN_ROWS",
    "PACK_KEYS",
    "STATS_AUTO_RECALC",
    "STATS_PERSISTENT",
    "STATS_SAMPLE_PAGES",
];

/// Whether the parser stands at `ALTER TABLE`.
pub fn at_alter_table(parser: &Parser) -> bool {
    let [first, second] = parser.peek_tokens();
    is_word(&first, "ALTER") && is_word(&second, "TABLE")
}

/// Reads `ALTER TABLE name [operation [, operation] …]`.
pub fn parse_alter_table(parser: &mut Parser) -> Result<Statement, ParserError> {
    parser.expect_keywords(&[Keyword::ALTER, Keyword::TABLE])?;
    let name = parser.parse_object_name(false)?;
    let mut operations = Vec::new();
    if !at_end(parser) {
        loop {
            operation(parser, &mut operations)?;
            if !parser.consume_token(&Token::Comma) {
                break;
            }
        }
    }
    Ok(Statement::AlterTable {
        name,
        if_exists: false,
        only: false,
        operations,
        location: None,
        on_cluster: None,
        iceberg: false,
        end_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
    })
}

fn at_end(parser: &Parser) -> bool {
    matches!(parser.peek_token().token, Token::EOF | Token::SemiColon)
}

fn is_word(token: &Token, text: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(text))
}

fn peek_word(parser: &Parser, text: &str) -> bool {
    is_word(&parser.peek_token().token, text)
}

fn parse_word(parser: &mut Parser, text: &str) -> bool {
    let found = peek_word(parser, text);
    if found {
        parser.next_token();
    }
    found
}

/// Reads one operation (several for `ADD (…)`, or a run of table options).
fn operation(
    parser: &mut Parser,
    operations: &mut Vec<AlterTableOperation>,
) -> Result<(), ParserError> {
    let [first, second, third] = parser.peek_tokens();
    if is_word(&first, "ADD")
        && (second == Token::LParen || (is_word(&second, "COLUMN") && third == Token::LParen))
    {
        parser.next_token();
        parse_word(parser, "COLUMN");
        parser.expect_token(&Token::LParen)?;
        for column_def in parser.parse_comma_separated(Parser::parse_column_def)? {
            operations.push(AlterTableOperation::AddColumn {
                column_keyword: true,
                if_not_exists: false,
                column_def,
                column_position: None,
            });
        }
        parser.expect_token(&Token::RParen)?;
        return Ok(());
    }
    if is_word(&first, "DROP") && (is_word(&second, "INDEX") || is_word(&second, "KEY")) {
        parser.next_token();
        parser.next_token();
        let name = parser.parse_identifier()?;
        operations.push(AlterTableOperation::DropIndex { name });
        return Ok(());
    }
    if is_word(&first, "RENAME") && (is_word(&second, "INDEX") || is_word(&second, "KEY")) {
        parser.next_token();
        parser.next_token();
        let old_name = parser.parse_identifier()?;
        parser.expect_keyword(Keyword::TO)?;
        let new_name = parser.parse_identifier()?;
        operations.push(AlterTableOperation::RenameConstraint { old_name, new_name });
        return Ok(());
    }
    if is_word(&first, "RENAME") && !is_word(&second, "COLUMN") {
        parser.next_token();
        let table_name = if parser.parse_keyword(Keyword::AS) {
            RenameTableNameKind::As(parser.parse_object_name(false)?)
        } else {
            let _optional_to = parser.parse_keyword(Keyword::TO);
            RenameTableNameKind::To(parser.parse_object_name(false)?)
        };
        operations.push(AlterTableOperation::RenameTable { table_name });
        return Ok(());
    }
    // `DISABLE KEYS` / `ENABLE KEYS` (dumps wrap their INSERTs in them) change nothing on
    // InnoDB, nor here: an empty set of table options.
    if (is_word(&first, "DISABLE") || is_word(&first, "ENABLE")) && is_word(&second, "KEYS") {
        parser.next_token();
        parser.next_token();
        operations.push(AlterTableOperation::SetTblProperties {
            table_properties: Vec::new(),
        });
        return Ok(());
    }
    if at_table_option(parser) {
        let mut table_properties = Vec::new();
        while at_table_option(parser) {
            table_properties.extend(table_option(parser)?);
        }
        operations.push(AlterTableOperation::SetTblProperties { table_properties });
        return Ok(());
    }
    operations.push(parser.parse_alter_table_operation()?);
    Ok(())
}

fn at_table_option(parser: &Parser) -> bool {
    let [first, second, third] = parser.peek_tokens();
    let option = |t: &Token| TABLE_OPTIONS.iter().any(|o| is_word(t, o));
    let charset =
        |t: &Token| is_word(t, "CHARSET") || is_word(t, "CHARACTER") || is_word(t, "COLLATE");
    option(&first)
        || (is_word(&first, "DEFAULT") && charset(&second))
        || (is_word(&first, "CHARACTER") && is_word(&second, "SET"))
        || (is_word(&first, "CONVERT") && is_word(&second, "TO") && charset(&third))
        || is_word(&first, "FORCE")
}

/// Reads one table option (two for `CONVERT TO CHARACTER SET x COLLATE y`).
fn table_option(parser: &mut Parser) -> Result<Vec<SqlOption>, ParserError> {
    if parse_word(parser, "FORCE") {
        return Ok(Vec::new());
    }
    let converting = parse_word(parser, "CONVERT");
    if converting {
        parser.expect_keyword(Keyword::TO)?;
    }
    parse_word(parser, "DEFAULT");
    let token = parser.next_token();
    let key = match &token.token {
        Token::Word(w) if w.value.eq_ignore_ascii_case("CHARACTER") => {
            parser.expect_keyword(Keyword::SET)?;
            "CHARSET".to_string()
        }
        Token::Word(w) => w.value.to_ascii_uppercase(),
        _ => return parser.expected("a table option", token),
    };
    let _optional_eq = parser.consume_token(&Token::Eq);
    let token = parser.next_token();
    let value = match &token.token {
        Token::Word(w) => Expr::Identifier(Ident::new(w.value.clone())),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
            Expr::Value(Value::SingleQuotedString(s.clone()).into())
        }
        Token::Number(n, long) => Expr::Value(Value::Number(n.clone(), *long).into()),
        _ => return parser.expected("a table option's value", token),
    };
    let mut options = vec![SqlOption::KeyValue {
        key: Ident::new(key),
        value,
    }];
    if converting && peek_word(parser, "COLLATE") {
        options.extend(table_option(parser)?);
    }
    Ok(options)
}
