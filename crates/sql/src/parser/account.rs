//! The account statements: CREATE / ALTER / DROP / RENAME USER, SET PASSWORD, GRANT, REVOKE
//! and SHOW GRANTS, read from sqlparser's tokens in MySQL's grammar (sqlparser's own forms of
//! these follow other databases).

use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::account::{Identity, Privileges, TlsRequirement};
use crate::parser::statement::{at_words, consume_word, expect_word};

/// One account statement.
#[derive(Clone, Debug, PartialEq)]
pub enum AccountStatement {
    /// `CREATE USER [IF NOT EXISTS] user [auth] [, user [auth]]… [options]`.
    CreateUser {
        if_not_exists: bool,
        users: Vec<(Identity, Option<Auth>)>,
        options: AccountOptions,
    },
    /// `ALTER USER [IF EXISTS] user [auth] [, user [auth]]… [options]`.
    AlterUser {
        if_exists: bool,
        users: Vec<(UserRef, Option<Auth>)>,
        options: AccountOptions,
    },
    /// `DROP USER [IF EXISTS] user [, user]…`.
    DropUser {
        if_exists: bool,
        users: Vec<Identity>,
    },
    /// `RENAME USER old TO new [, old TO new]…`.
    RenameUser(Vec<(Identity, Identity)>),
    /// `SET PASSWORD [FOR user] = 'password'`.
    SetPassword { user: UserRef, password: String },
    /// `GRANT privileges ON level TO user [, user]… [WITH GRANT OPTION]`.
    Grant {
        privileges: PrivilegeList,
        level: Level,
        users: Vec<Identity>,
        grant_option: bool,
    },
    /// `REVOKE privileges ON level FROM user [, user]…`, or `REVOKE ALL [PRIVILEGES], GRANT
    /// OPTION FROM user [, user]…` (level None: every level).
    Revoke {
        privileges: PrivilegeList,
        level: Option<Level>,
        users: Vec<Identity>,
    },
    /// `SHOW GRANTS [FOR user]`.
    ShowGrants(UserRef),
    /// `CREATE ROLE [IF NOT EXISTS] role [, role]…`.
    CreateRole {
        if_not_exists: bool,
        roles: Vec<Identity>,
    },
    /// `DROP ROLE [IF EXISTS] role [, role]…`.
    DropRole {
        if_exists: bool,
        roles: Vec<Identity>,
    },
    /// `GRANT role [, role]… TO user [, user]… [WITH ADMIN OPTION]`.
    GrantRoles {
        roles: Vec<Identity>,
        users: Vec<Identity>,
    },
    /// `REVOKE role [, role]… FROM user [, user]…`.
    RevokeRoles {
        roles: Vec<Identity>,
        users: Vec<Identity>,
    },
    /// `SET ROLE {DEFAULT | NONE | ALL [EXCEPT role, …] | role, …}`.
    SetRole(RoleChoice),
    /// `SET DEFAULT ROLE {NONE | ALL | role, …} TO user [, user]…`.
    SetDefaultRole {
        roles: RoleChoice,
        users: Vec<UserRef>,
    },
}

/// Which of its granted roles a session uses.
#[derive(Clone, Debug, PartialEq)]
pub enum RoleChoice {
    /// The account's default roles.
    Default,
    None,
    /// Every granted role but these.
    AllExcept(Vec<Identity>),
    These(Vec<Identity>),
}

/// An account named in a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum UserRef {
    Named(Identity),
    /// `CURRENT_USER[()]` or `USER()`, or no `FOR`: the session's account.
    Current,
}

/// How an account authenticates: `IDENTIFIED [WITH plugin] [BY 'password' | AS 'hash']`.
#[derive(Clone, Debug, PartialEq)]
pub struct Auth {
    pub plugin: Option<String>,
    pub secret: Secret,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Secret {
    /// No BY or AS: no password.
    None,
    /// `BY 'password'`.
    Password(String),
    /// `AS 'stored form'`.
    Hash(String),
}

/// `SUBJECT 's' [AND] ISSUER 'i' [AND] CIPHER 'c'`, in any order, each at most once.
fn parse_tls_requirement(parser: &mut Parser) -> Result<TlsRequirement, ParserError> {
    let mut specified = TlsRequirement::default();
    loop {
        let slot = if consume_word(parser, "SUBJECT") {
            &mut specified.subject
        } else if consume_word(parser, "ISSUER") {
            &mut specified.issuer
        } else if consume_word(parser, "CIPHER") {
            &mut specified.cipher
        } else if specified.is_empty() {
            return parser.expected(
                "SSL, X509, NONE, SUBJECT, ISSUER or CIPHER",
                parser.peek_token(),
            );
        } else {
            return Ok(specified);
        };
        if slot.is_some() {
            return parser.expected(
                "each of SUBJECT, ISSUER and CIPHER once",
                parser.peek_token(),
            );
        }
        *slot = Some(parser.parse_literal_string()?);
        let _ = parser.parse_keyword(Keyword::AND);
    }
}

/// The options after the accounts of CREATE USER and ALTER USER.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccountOptions {
    /// `ACCOUNT LOCK` (true) or `ACCOUNT UNLOCK` (false).
    pub lock: Option<bool>,
    /// `PASSWORD EXPIRE` (true) or `PASSWORD EXPIRE NEVER | DEFAULT` (false).
    pub expire: Option<bool>,
    /// `REQUIRE SSL` or `X509` (true) or `REQUIRE NONE` (false).
    pub require_secure: Option<bool>,
    /// `REQUIRE X509` (true) or `REQUIRE SSL | NONE` (false).
    pub require_x509: Option<bool>,
    /// `REQUIRE SUBJECT | ISSUER | CIPHER …` (empty for `REQUIRE NONE | SSL | X509`).
    pub require_specified: Option<TlsRequirement>,
    /// `FAILED_LOGIN_ATTEMPTS n`.
    pub failed_login_attempts: Option<u32>,
    /// `PASSWORD_LOCK_TIME days` (`UNBOUNDED`: [`crate::account::locking::UNBOUNDED`]).
    pub password_lock_days: Option<i32>,
    /// An option read but not implemented, named for the error.
    pub unsupported: Option<String>,
}

/// What GRANT or REVOKE names.
#[derive(Clone, Debug, PartialEq)]
pub enum PrivilegeList {
    /// `ALL [PRIVILEGES]`: everything the level allows.
    All { grant_option: bool },
    /// Named privileges on the level (`GRANT OPTION` among them possibly; USAGE is none),
    /// and privileges on named columns of a table (`SELECT (a, b)`).
    Some(Privileges, Vec<ColumnGrant>),
}

/// `privilege (column [, column]…)` in GRANT or REVOKE.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnGrant {
    pub privilege: Privileges,
    pub columns: Vec<String>,
}

/// The level of a grant.
#[derive(Clone, Debug, PartialEq)]
pub enum Level {
    /// `*.*`
    Global,
    /// `db.*`, or `*` (None: the current database).
    Database(Option<String>),
    /// `db.table`, or `table` in the current database.
    Table(Option<String>, String),
}

/// Reads an account statement at the parser's position; None (nothing consumed) for any other.
pub fn parse_account_statement(
    parser: &mut Parser,
) -> Result<Option<AccountStatement>, ParserError> {
    let first = parser.peek_token().token;
    let second = parser.peek_nth_token(1).token;
    let is = |token: &Token, word: &str| matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word));
    let statement = if is(&first, "CREATE") && is(&second, "USER") {
        advance(parser, 2);
        let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        let users = parser.parse_comma_separated(|p| Ok((parse_user(p)?, parse_auth(p)?)))?;
        AccountStatement::CreateUser {
            if_not_exists,
            users,
            options: parse_options(parser)?,
        }
    } else if is(&first, "ALTER") && is(&second, "USER") {
        advance(parser, 2);
        let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let users = parser.parse_comma_separated(|p| Ok((parse_user_ref(p)?, parse_auth(p)?)))?;
        AccountStatement::AlterUser {
            if_exists,
            users,
            options: parse_options(parser)?,
        }
    } else if is(&first, "DROP") && is(&second, "USER") {
        advance(parser, 2);
        let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        AccountStatement::DropUser {
            if_exists,
            users: parser.parse_comma_separated(parse_user)?,
        }
    } else if is(&first, "RENAME") && is(&second, "USER") {
        advance(parser, 2);
        AccountStatement::RenameUser(parser.parse_comma_separated(|p| {
            let old = parse_user(p)?;
            p.expect_keyword_is(Keyword::TO)?;
            Ok((old, parse_user(p)?))
        })?)
    } else if is(&first, "SET") && is(&second, "PASSWORD") {
        advance(parser, 2);
        let user = if parser.parse_keyword(Keyword::FOR) {
            parse_user_ref(parser)?
        } else {
            UserRef::Current
        };
        parser.expect_token(&Token::Eq)?;
        let password = if parser.parse_keyword(Keyword::PASSWORD) {
            // The old `= PASSWORD('text')` form.
            parser.expect_token(&Token::LParen)?;
            let text = parser.parse_literal_string()?;
            parser.expect_token(&Token::RParen)?;
            text
        } else {
            parser.parse_literal_string()?
        };
        AccountStatement::SetPassword { user, password }
    } else if is(&first, "CREATE") && is(&second, "ROLE") {
        advance(parser, 2);
        let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        AccountStatement::CreateRole {
            if_not_exists,
            roles: parser.parse_comma_separated(parse_user)?,
        }
    } else if is(&first, "DROP") && is(&second, "ROLE") {
        advance(parser, 2);
        let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        AccountStatement::DropRole {
            if_exists,
            roles: parser.parse_comma_separated(parse_user)?,
        }
    } else if is(&first, "SET") && is(&second, "ROLE") {
        advance(parser, 2);
        AccountStatement::SetRole(parse_role_choice(parser, true)?)
    } else if is(&first, "SET") && is(&second, "DEFAULT") && at_words(parser, 2, &["ROLE"]) {
        advance(parser, 3);
        let roles = parse_role_choice(parser, false)?;
        parser.expect_keyword_is(Keyword::TO)?;
        AccountStatement::SetDefaultRole {
            roles,
            users: parser.parse_comma_separated(parse_user_ref)?,
        }
    } else if is(&first, "GRANT") && at_role_list(parser, Keyword::TO) {
        advance(parser, 1);
        let roles = parser.parse_comma_separated(parse_user)?;
        parser.expect_keyword_is(Keyword::TO)?;
        let users = parser.parse_comma_separated(parse_user)?;
        if parser.parse_keyword(Keyword::WITH) {
            expect_word(parser, "ADMIN")?;
            parser.expect_keyword_is(Keyword::OPTION)?;
        }
        AccountStatement::GrantRoles { roles, users }
    } else if is(&first, "REVOKE") && at_role_list(parser, Keyword::FROM) {
        advance(parser, 1);
        let roles = parser.parse_comma_separated(parse_user)?;
        parser.expect_keyword_is(Keyword::FROM)?;
        AccountStatement::RevokeRoles {
            roles,
            users: parser.parse_comma_separated(parse_user)?,
        }
    } else if is(&first, "GRANT") {
        advance(parser, 1);
        let privileges = parse_privileges(parser)?;
        parser.expect_keyword_is(Keyword::ON)?;
        let level = parse_level(parser)?;
        parser.expect_keyword_is(Keyword::TO)?;
        let users = parser.parse_comma_separated(parse_user)?;
        let grant_option = parser.parse_keywords(&[Keyword::WITH, Keyword::GRANT, Keyword::OPTION]);
        AccountStatement::Grant {
            privileges,
            level,
            users,
            grant_option,
        }
    } else if is(&first, "REVOKE") {
        advance(parser, 1);
        let privileges = parse_privileges(parser)?;
        let level = if parser.parse_keyword(Keyword::ON) {
            Some(parse_level(parser)?)
        } else {
            match privileges {
                PrivilegeList::All { grant_option: true } => None,
                _ => return parser.expected("ON", parser.peek_token()),
            }
        };
        parser.expect_keyword_is(Keyword::FROM)?;
        AccountStatement::Revoke {
            privileges,
            level,
            users: parser.parse_comma_separated(parse_user)?,
        }
    } else if is(&first, "SHOW") && is(&second, "GRANTS") {
        advance(parser, 2);
        let user = if parser.parse_keyword(Keyword::FOR) {
            parse_user_ref(parser)?
        } else {
            UserRef::Current
        };
        AccountStatement::ShowGrants(user)
    } else {
        return Ok(None);
    };
    Ok(Some(statement))
}

/// Whether the GRANT or REVOKE at the parser names roles: a list of accounts followed by
/// `keyword` (TO or FROM) with no ON before it. Reads ahead without consuming.
fn at_role_list(parser: &mut Parser, keyword: Keyword) -> bool {
    // Read ahead and always fail, so that the parser goes back to exactly where it was (going
    // back token by token would also step over the whitespace and `;` before the statement).
    let mut roles = false;
    let _ = parser.maybe_parse(|p| {
        p.next_token();
        roles = p
            .parse_comma_separated(parse_user)
            .is_ok_and(|_| p.peek_keyword(keyword));
        Err::<(), _>(ParserError::ParserError(String::new()))
    });
    roles
}

/// `DEFAULT` (when `default_allowed`), `NONE`, `ALL [EXCEPT role, …]` or a list of roles.
fn parse_role_choice(
    parser: &mut Parser,
    default_allowed: bool,
) -> Result<RoleChoice, ParserError> {
    if default_allowed && parser.parse_keyword(Keyword::DEFAULT) {
        return Ok(RoleChoice::Default);
    }
    if parser.parse_keyword(Keyword::NONE) {
        return Ok(RoleChoice::None);
    }
    if parser.parse_keyword(Keyword::ALL) {
        let except = if parser.parse_keyword(Keyword::EXCEPT) {
            parser.parse_comma_separated(parse_user)?
        } else {
            Vec::new()
        };
        return Ok(RoleChoice::AllExcept(except));
    }
    Ok(RoleChoice::These(parser.parse_comma_separated(parse_user)?))
}

fn advance(parser: &mut Parser, tokens: usize) {
    for _ in 0..tokens {
        parser.next_token();
    }
}

/// `'user'@'host'`, `user@host`, `"user"@"host"` or `user` (host `%`).
fn parse_user(parser: &mut Parser) -> Result<Identity, ParserError> {
    let token = parser.next_token();
    let (user, mut host) = match &token.token {
        Token::Word(w) if w.quote_style.is_none() => match w.value.split_once('@') {
            Some((user, host)) => (user.to_string(), Some(host.to_string())),
            None => (w.value.clone(), None),
        },
        Token::Word(w) => (w.value.clone(), None),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => (s.clone(), None),
        _ => return parser.expected("a user name", token),
    };
    if host.is_none() {
        match parser.peek_token().token {
            Token::AtSign => {
                parser.next_token();
                host = Some(String::new());
            }
            Token::Word(w) if w.quote_style.is_none() && w.value.starts_with('@') => {
                parser.next_token();
                host = Some(w.value[1..].to_string());
            }
            _ => {}
        }
    }
    let host = match host {
        None => "%".to_string(),
        Some(host) if !host.is_empty() => host,
        Some(_) => parse_name_part(parser, "a host name")?,
    };
    if user.chars().count() > 32 {
        return Err(ParserError::ParserError(format!(
            "String '{user}' is too long for user name (should be no longer than 32)"
        )));
    }
    if host.chars().count() > 255 {
        return Err(ParserError::ParserError(format!(
            "String '{host}' is too long for host name (should be no longer than 255)"
        )));
    }
    Ok(Identity::new(user, host))
}

/// A host or name written as a word or a quoted string.
fn parse_name_part(parser: &mut Parser, what: &str) -> Result<String, ParserError> {
    let token = parser.next_token();
    match token.token {
        Token::Word(w) => Ok(w.value),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        _ => parser.expected(what, token),
    }
}

/// A user, or `CURRENT_USER[()]` / `USER()` for the session's own account.
fn parse_user_ref(parser: &mut Parser) -> Result<UserRef, ParserError> {
    if parser.parse_keyword(Keyword::CURRENT_USER)
        || (parser.peek_keyword(Keyword::USER) && parser.peek_nth_token(1).token == Token::LParen)
    {
        if parser.peek_keyword(Keyword::USER) {
            parser.next_token();
        }
        if parser.consume_token(&Token::LParen) {
            parser.expect_token(&Token::RParen)?;
        }
        return Ok(UserRef::Current);
    }
    Ok(UserRef::Named(parse_user(parser)?))
}

/// An optional `IDENTIFIED [WITH plugin] [BY 'password' | AS 'hash']`.
fn parse_auth(parser: &mut Parser) -> Result<Option<Auth>, ParserError> {
    if !consume_word(parser, "IDENTIFIED") {
        return Ok(None);
    }
    let plugin = if parser.parse_keyword(Keyword::WITH) {
        Some(parse_name_part(parser, "a plugin name")?.to_ascii_lowercase())
    } else {
        None
    };
    let secret = if parser.parse_keyword(Keyword::BY) {
        if consume_word(parser, "RANDOM") {
            return Err(ParserError::ParserError(
                "IDENTIFIED BY RANDOM PASSWORD is not supported".into(),
            ));
        }
        Secret::Password(parser.parse_literal_string()?)
    } else if parser.parse_keyword(Keyword::AS) {
        Secret::Hash(parser.parse_literal_string()?)
    } else if plugin.is_some() {
        Secret::None
    } else {
        return parser.expected("BY or WITH", parser.peek_token());
    };
    Ok(Some(Auth { plugin, secret }))
}

/// The options after CREATE USER's or ALTER USER's accounts.
fn parse_options(parser: &mut Parser) -> Result<AccountOptions, ParserError> {
    let mut options = AccountOptions::default();
    loop {
        if parser.parse_keyword(Keyword::ACCOUNT) {
            options.lock = Some(
                parser.expect_one_of_keywords(&[Keyword::LOCK, Keyword::UNLOCK])? == Keyword::LOCK,
            );
        } else if parser.peek_keyword(Keyword::PASSWORD) && at_words(parser, 1, &["EXPIRE"]) {
            advance(parser, 2);
            if parser.parse_keyword(Keyword::INTERVAL) {
                parser.parse_literal_uint()?;
                parser.expect_keyword_is(Keyword::DAY)?;
                options.unsupported = Some("PASSWORD EXPIRE INTERVAL".into());
            } else if parser.parse_keyword(Keyword::DEFAULT) || consume_word(parser, "NEVER") {
                options.expire = Some(false);
            } else {
                options.expire = Some(true);
            }
        } else if parser.parse_keyword(Keyword::REQUIRE) {
            options.require_specified = Some(TlsRequirement::default());
            if parser.parse_keyword(Keyword::NONE) {
                options.require_secure = Some(false);
                options.require_x509 = Some(false);
            } else if consume_word(parser, "SSL") {
                options.require_secure = Some(true);
                options.require_x509 = Some(false);
            } else if consume_word(parser, "X509") {
                options.require_secure = Some(true);
                options.require_x509 = Some(true);
            } else {
                let specified = parse_tls_requirement(parser)?;
                options.require_secure = Some(true);
                options.require_x509 =
                    Some(specified.subject.is_some() || specified.issuer.is_some());
                options.require_specified = Some(specified);
            }
        } else if parser.parse_keyword(Keyword::COMMENT) || consume_word(parser, "ATTRIBUTE") {
            parser.parse_literal_string()?;
        } else if parser.parse_keyword(Keyword::WITH) {
            // Resource limits: MAX_QUERIES_PER_HOUR n …
            while let Token::Word(_) = parser.peek_token().token {
                let name = parser.next_token().to_string();
                parser.parse_literal_uint()?;
                options.unsupported = Some(name);
            }
        } else if let Token::Word(w) = parser.peek_token().token {
            let upper = w.value.to_ascii_uppercase();
            if upper == "FAILED_LOGIN_ATTEMPTS" {
                parser.next_token();
                options.failed_login_attempts = Some(parse_locking_number(parser)?);
            } else if upper == "PASSWORD_LOCK_TIME" {
                parser.next_token();
                options.password_lock_days = Some(if parser.parse_keyword(Keyword::UNBOUNDED) {
                    crate::account::locking::UNBOUNDED
                } else {
                    parse_locking_number(parser)? as i32
                });
            } else {
                return Ok(options);
            }
        } else {
            return Ok(options);
        }
    }
}

/// A number of FAILED_LOGIN_ATTEMPTS or PASSWORD_LOCK_TIME, 0 to 32767 as in MySQL.
fn parse_locking_number(parser: &mut Parser) -> Result<u32, ParserError> {
    let number = parser.parse_literal_uint()?;
    u32::try_from(number)
        .ok()
        .filter(|n| *n <= crate::account::locking::LOCKING_MAX)
        .ok_or_else(|| {
            ParserError::ParserError(format!(
                "{number} is out of range (0 to {})",
                crate::account::locking::LOCKING_MAX
            ))
        })
}

/// The privileges of GRANT or REVOKE, up to ON (or, for REVOKE ALL, GRANT OPTION, FROM).
fn parse_privileges(parser: &mut Parser) -> Result<PrivilegeList, ParserError> {
    if parser.parse_keyword(Keyword::ALL) {
        let _ = parser.parse_keyword(Keyword::PRIVILEGES);
        let grant_option = if parser.consume_token(&Token::Comma) {
            parser.expect_keywords(&[Keyword::GRANT, Keyword::OPTION])?;
            true
        } else {
            false
        };
        return Ok(PrivilegeList::All { grant_option });
    }
    let mut privileges = Privileges::NONE;
    let mut columns_granted = Vec::new();
    loop {
        let mut words = Vec::new();
        while let Token::Word(w) = parser.peek_token().token {
            if w.quote_style.is_some() || (w.keyword == Keyword::ON && !words.is_empty()) {
                break;
            }
            if w.keyword == Keyword::ON {
                break;
            }
            parser.next_token();
            words.push(w.value.to_ascii_uppercase());
        }
        if words.is_empty() {
            return parser.expected("a privilege", parser.peek_token());
        }
        let name = words.join(" ");
        let named = if name == "USAGE" {
            Privileges::NONE
        } else {
            Privileges::named(&name).ok_or_else(|| {
                ParserError::ParserError(format!("Illegal privilege level specified for {name}"))
            })?
        };
        if parser.consume_token(&Token::LParen) {
            let columns = parser.parse_comma_separated(|p| Ok(p.parse_identifier()?.value))?;
            parser.expect_token(&Token::RParen)?;
            columns_granted.push(ColumnGrant {
                privilege: named,
                columns,
            });
        } else {
            privileges = privileges.union(named);
        }
        if !parser.consume_token(&Token::Comma) {
            return Ok(PrivilegeList::Some(privileges, columns_granted));
        }
    }
}

/// `*.*`, `*`, `db.*`, `db.table` or `table`, after an optional TABLE.
fn parse_level(parser: &mut Parser) -> Result<Level, ParserError> {
    let _ = parser.parse_keyword(Keyword::TABLE);
    let first = if parser.consume_token(&Token::Mul) {
        None
    } else {
        Some(parser.parse_identifier()?.value)
    };
    if !parser.consume_token(&Token::Period) {
        return Ok(match first {
            None => Level::Database(None),
            Some(table) => Level::Table(None, table),
        });
    }
    let second = if parser.consume_token(&Token::Mul) {
        None
    } else {
        Some(parser.parse_identifier()?.value)
    };
    match (first, second) {
        (None, None) => Ok(Level::Global),
        (Some(db), None) => Ok(Level::Database(Some(db))),
        (Some(db), Some(table)) => Ok(Level::Table(Some(db), table)),
        (None, Some(_)) => parser.expected("a database name", parser.peek_token()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::dialect::StrataDialect;

    fn parse(sql: &str) -> AccountStatement {
        let dialect = StrataDialect::default();
        let mut parser = Parser::new(&dialect).try_with_sql(sql).unwrap();
        let statement = parse_account_statement(&mut parser)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .unwrap_or_else(|| panic!("{sql}: not an account statement"));
        assert_eq!(parser.peek_token().token, Token::EOF, "{sql}");
        statement
    }

    fn bob(host: &str) -> Identity {
        Identity::new("bob", host)
    }

    /// An account statement after another in one text is read as the first one is.
    #[test]
    fn account_statements_follow_others_in_a_batch() {
        let sql = "SELECT 1; GRANT SELECT ON k.* TO u; GRANT r1 TO u ;\n REVOKE r1 FROM u; \
                   CREATE USER v; SELECT 2";
        let parsed = crate::parser::parse_batch(sql, crate::parser::Batch::Multiple).unwrap();
        let kinds: Vec<String> = parsed
            .statements
            .iter()
            .map(|s| match s {
                crate::parser::statement::Statement::Account(a) => format!("{a:?}")
                    .split([' ', '{', '('])
                    .next()
                    .unwrap()
                    .to_string(),
                _ => "other".to_string(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "other",
                "Grant",
                "GrantRoles",
                "RevokeRoles",
                "CreateUser",
                "other"
            ]
        );
    }

    #[test]
    fn users_are_written_every_way_mysql_reads_them() {
        for (sql, host) in [
            ("DROP USER 'bob'@'localhost'", "localhost"),
            ("DROP USER bob@localhost", "localhost"),
            ("DROP USER \"bob\"@\"10.0.%\"", "10.0.%"),
            ("DROP USER `bob`@`%`", "%"),
            ("DROP USER bob", "%"),
            ("DROP USER 'bob'", "%"),
            ("DROP USER bob@'127.0.0.1'", "127.0.0.1"),
        ] {
            assert_eq!(
                parse(sql),
                AccountStatement::DropUser {
                    if_exists: false,
                    users: vec![bob(host)]
                },
                "{sql}"
            );
        }
    }

    #[test]
    fn create_alter_and_set_password_parse() {
        assert_eq!(
            parse("CREATE USER IF NOT EXISTS 'bob'@'%' IDENTIFIED BY 'pw', amy IDENTIFIED WITH mysql_native_password AS '' ACCOUNT LOCK PASSWORD EXPIRE"),
            AccountStatement::CreateUser {
                if_not_exists: true,
                users: vec![
                    (bob("%"), Some(Auth { plugin: None, secret: Secret::Password("pw".into()) })),
                    (
                        Identity::new("amy", "%"),
                        Some(Auth {
                            plugin: Some("mysql_native_password".into()),
                            secret: Secret::Hash(String::new())
                        })
                    ),
                ],
                options: AccountOptions {
                    lock: Some(true),
                    expire: Some(true),
                    ..AccountOptions::default()
                },
            }
        );
        assert_eq!(
            parse("ALTER USER bob FAILED_LOGIN_ATTEMPTS 3 PASSWORD_LOCK_TIME UNBOUNDED ACCOUNT UNLOCK"),
            AccountStatement::AlterUser {
                if_exists: false,
                users: vec![(UserRef::Named(bob("%")), None)],
                options: AccountOptions {
                    lock: Some(false),
                    failed_login_attempts: Some(3),
                    password_lock_days: Some(crate::account::locking::UNBOUNDED),
                    ..AccountOptions::default()
                },
            }
        );
        assert_eq!(
            parse("ALTER USER USER() IDENTIFIED BY 'new'"),
            AccountStatement::AlterUser {
                if_exists: false,
                users: vec![(
                    UserRef::Current,
                    Some(Auth {
                        plugin: None,
                        secret: Secret::Password("new".into())
                    })
                )],
                options: AccountOptions::default(),
            }
        );
        assert_eq!(
            parse("SET PASSWORD FOR 'bob'@'%' = 'x'"),
            AccountStatement::SetPassword {
                user: UserRef::Named(bob("%")),
                password: "x".into()
            }
        );
        assert_eq!(
            parse("RENAME USER bob TO 'rob'@'localhost'"),
            AccountStatement::RenameUser(vec![(bob("%"), Identity::new("rob", "localhost"))])
        );
    }

    #[test]
    fn require_clauses_parse_in_any_order() {
        let options = |sql: &str| match parse(sql) {
            AccountStatement::AlterUser { options, .. } => options,
            other => panic!("{sql}: {other:?}"),
        };
        let specified = options(
            "ALTER USER bob REQUIRE CIPHER 'TLS_AES_256_GCM_SHA384' SUBJECT '/O=Shop/CN=bob' \
             AND ISSUER '/CN=ca' ACCOUNT LOCK",
        );
        assert_eq!(
            specified,
            AccountOptions {
                lock: Some(true),
                require_secure: Some(true),
                require_x509: Some(true),
                require_specified: Some(TlsRequirement {
                    subject: Some("/O=Shop/CN=bob".into()),
                    issuer: Some("/CN=ca".into()),
                    cipher: Some("TLS_AES_256_GCM_SHA384".into()),
                }),
                ..AccountOptions::default()
            }
        );
        // A cipher alone needs TLS, not a certificate; SSL clears what was specified.
        let cipher = options("ALTER USER bob REQUIRE CIPHER 'c'");
        assert_eq!(
            (cipher.require_secure, cipher.require_x509),
            (Some(true), Some(false))
        );
        let ssl = options("ALTER USER bob REQUIRE SSL");
        assert_eq!(ssl.require_specified, Some(TlsRequirement::default()));
        for wrong in [
            "ALTER USER bob REQUIRE",
            "ALTER USER bob REQUIRE SUBJECT 'a' SUBJECT 'b'",
            "ALTER USER bob REQUIRE CIPHER",
        ] {
            let dialect = StrataDialect::default();
            let mut parser = Parser::new(&dialect).try_with_sql(wrong).unwrap();
            let parsed = parse_account_statement(&mut parser);
            assert!(
                parsed.is_err() || parser.peek_token().token != Token::EOF,
                "{wrong}: {parsed:?}"
            );
        }
    }

    #[test]
    fn grants_parse_at_every_level() {
        assert_eq!(
            parse("GRANT SELECT, INSERT, CREATE VIEW ON shop.* TO 'bob'@'%' WITH GRANT OPTION"),
            AccountStatement::Grant {
                privileges: PrivilegeList::Some(
                    Privileges::SELECT
                        .union(Privileges::INSERT)
                        .union(Privileges::CREATE_VIEW),
                    Vec::new()
                ),
                level: Level::Database(Some("shop".into())),
                users: vec![bob("%")],
                grant_option: true,
            }
        );
        assert_eq!(
            parse("GRANT ALL PRIVILEGES ON *.* TO bob"),
            AccountStatement::Grant {
                privileges: PrivilegeList::All {
                    grant_option: false
                },
                level: Level::Global,
                users: vec![bob("%")],
                grant_option: false,
            }
        );
        assert_eq!(
            parse("GRANT SELECT (id, `Name`), INSERT, UPDATE (qty) ON shop.orders TO bob"),
            AccountStatement::Grant {
                privileges: PrivilegeList::Some(
                    Privileges::INSERT,
                    vec![
                        ColumnGrant {
                            privilege: Privileges::SELECT,
                            columns: vec!["id".into(), "Name".into()]
                        },
                        ColumnGrant {
                            privilege: Privileges::UPDATE,
                            columns: vec!["qty".into()]
                        }
                    ]
                ),
                level: Level::Table(Some("shop".into()), "orders".into()),
                users: vec![bob("%")],
                grant_option: false,
            }
        );
        assert!(matches!(
            parse("GRANT UPDATE ON TABLE `shop`.`orders` TO bob"),
            AccountStatement::Grant { level: Level::Table(Some(d), t), .. } if d == "shop" && t == "orders"
        ));
        assert!(matches!(
            parse("REVOKE ALL PRIVILEGES, GRANT OPTION FROM bob"),
            AccountStatement::Revoke { level: None, .. }
        ));
        assert!(matches!(
            parse("REVOKE DELETE ON * FROM bob"),
            AccountStatement::Revoke {
                level: Some(Level::Database(None)),
                ..
            }
        ));
        assert_eq!(
            parse("SHOW GRANTS FOR CURRENT_USER()"),
            AccountStatement::ShowGrants(UserRef::Current)
        );
        assert_eq!(
            parse("SHOW GRANTS FOR bob@localhost"),
            AccountStatement::ShowGrants(UserRef::Named(bob("localhost")))
        );
    }

    #[test]
    fn roles_parse() {
        assert_eq!(
            parse("CREATE ROLE IF NOT EXISTS 'reader', writer@localhost"),
            AccountStatement::CreateRole {
                if_not_exists: true,
                roles: vec![
                    Identity::new("reader", "%"),
                    Identity::new("writer", "localhost")
                ],
            }
        );
        assert_eq!(
            parse("GRANT reader, 'writer' TO bob WITH ADMIN OPTION"),
            AccountStatement::GrantRoles {
                roles: vec![Identity::new("reader", "%"), Identity::new("writer", "%")],
                users: vec![bob("%")],
            }
        );
        assert_eq!(
            parse("REVOKE reader FROM bob"),
            AccountStatement::RevokeRoles {
                roles: vec![Identity::new("reader", "%")],
                users: vec![bob("%")],
            }
        );
        // Privileges are still privileges.
        assert!(matches!(
            parse("GRANT SELECT ON t TO bob"),
            AccountStatement::Grant { .. }
        ));
        assert!(matches!(
            parse("REVOKE ALL PRIVILEGES, GRANT OPTION FROM bob"),
            AccountStatement::Revoke { .. }
        ));
        assert_eq!(
            parse("SET ROLE ALL EXCEPT reader"),
            AccountStatement::SetRole(RoleChoice::AllExcept(vec![Identity::new("reader", "%")]))
        );
        assert_eq!(
            parse("SET ROLE DEFAULT"),
            AccountStatement::SetRole(RoleChoice::Default)
        );
        assert_eq!(
            parse("SET DEFAULT ROLE reader TO bob, CURRENT_USER"),
            AccountStatement::SetDefaultRole {
                roles: RoleChoice::These(vec![Identity::new("reader", "%")]),
                users: vec![UserRef::Named(bob("%")), UserRef::Current],
            }
        );
        assert_eq!(
            parse("DROP ROLE IF EXISTS reader"),
            AccountStatement::DropRole {
                if_exists: true,
                roles: vec![Identity::new("reader", "%")],
            }
        );
    }

    #[test]
    fn other_statements_are_left_alone() {
        for sql in [
            "CREATE TABLE user (a INT)",
            "SET @a = 1",
            "SHOW TABLES",
            "DROP TABLE user",
        ] {
            let dialect = StrataDialect::default();
            let mut parser = Parser::new(&dialect).try_with_sql(sql).unwrap();
            assert!(
                parse_account_statement(&mut parser).unwrap().is_none(),
                "{sql}"
            );
            assert!(parser.parse_statement().is_ok(), "{sql}");
        }
    }
}
