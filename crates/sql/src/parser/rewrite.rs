//! Rewrites of a text's tokens before sqlparser reads them: MySQL's words and clauses that
//! sqlparser's grammar lacks become what it reads (`LOCK IN SHARE MODE` as `FOR SHARE`, `SET
//! NAMES` as assignments, `:=` in a SET as `=`), or are taken out and kept beside the tree (the
//! hints after SELECT, an UPDATE's ORDER BY, a BEGIN's mode, a view's CHECK OPTION).

use sqlparser::ast::OrderByExpr;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Whitespace};

use strata_txn::TxnMode;

use crate::parser::dialect::StrataDialect;

/// Which of the rewrites before parsing a text's tokens call for, found in one pass: most
/// statements (an INSERT, a point SELECT) need few of them, and each would otherwise walk
/// every token again.
#[derive(Default)]
pub(super) struct Shape {
    /// A SELECT: its hints are dropped and its select list named from the tokens.
    pub(super) select: bool,
    /// LOCK, as in `LOCK IN SHARE MODE`.
    pub(super) lock: bool,
    /// NAMES, CHARSET or CHARACTER, as a SET names a character set.
    pub(super) charset: bool,
    /// `:=`, which a SET reads as `=`.
    pub(super) assignment: bool,
    /// A `?` placeholder to number.
    pub(super) placeholder: bool,
    /// How many UNION, EXCEPT and INTERSECT operators. sqlparser reads a chain of them in a
    /// loop but builds it left-deep, and drops such a tree (on a syntax error further on) one
    /// level per part: more parts than [`super::MAX_SET_OPERATORS`] are refused before it builds one.
    pub(super) set_operators: usize,
    /// UPDATE, BEGIN or VIEW: a clause [`take_unparsed_clauses`] takes out may be there.
    pub(super) clauses: bool,
}

impl Shape {
    pub(super) fn of(tokens: &[TokenWithSpan]) -> Shape {
        let mut shape = Shape::default();
        for token in tokens {
            match &token.token {
                Token::Word(w) if w.quote_style.is_none() => match w.keyword {
                    Keyword::SELECT => shape.select = true,
                    Keyword::LOCK => shape.lock = true,
                    Keyword::NAMES | Keyword::CHARSET | Keyword::CHARACTER => shape.charset = true,
                    Keyword::UNION | Keyword::EXCEPT | Keyword::INTERSECT => {
                        shape.set_operators += 1;
                    }
                    Keyword::UPDATE | Keyword::BEGIN | Keyword::VIEW => shape.clauses = true,
                    _ => {}
                },
                Token::Assignment => shape.assignment = true,
                Token::Placeholder(_) => shape.placeholder = true,
                _ => {}
            }
        }
        shape
    }
}

/// What one statement says that sqlparser does not read: an UPDATE's ORDER BY, a BEGIN's
/// mode, a view's CHECK OPTION.
#[derive(Default)]
pub(super) struct UnparsedClauses {
    pub(super) update_order_by: Vec<OrderByExpr>,
    pub(super) begin_mode: Option<TxnMode>,
    pub(super) view_check_option: Option<String>,
}

/// Takes out of each statement what sqlparser does not read: the ORDER BY of a single-table
/// `UPDATE … ORDER BY … [LIMIT]` (read here on its own), the mode of TiDB's
/// `BEGIN PESSIMISTIC` / `BEGIN OPTIMISTIC`, and the `WITH [CASCADED | LOCAL] CHECK OPTION`
/// that ends a CREATE or ALTER VIEW. Returns them for each non-empty statement, in order.
pub(super) fn take_unparsed_clauses(
    dialect: &StrataDialect,
    tokens: &mut [TokenWithSpan],
) -> std::result::Result<Vec<UnparsedClauses>, ParserError> {
    let word = |t: &TokenWithSpan, text: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(text));
    let mut orders = Vec::new();
    let mut start = 0;
    while start < tokens.len() {
        // One statement's tokens end at a `;` outside parentheses.
        let mut depth = 0i32;
        let mut end = start;
        while end < tokens.len() && !(depth == 0 && tokens[end].token == Token::SemiColon) {
            match tokens[end].token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ => {}
            }
            end += 1;
        }
        let significant: Vec<usize> = (start..end)
            .filter(|&k| !matches!(tokens[k].token, Token::Whitespace(_)))
            .collect();
        if let Some(&first) = significant.first() {
            let mut order = Vec::new();
            let mut begin_mode = None;
            let view_check_option = take_view_check_option(tokens, &significant);
            if let [begin, mode] = significant[..] {
                if word(&tokens[begin], "BEGIN") {
                    begin_mode = if word(&tokens[mode], "PESSIMISTIC") {
                        Some(TxnMode::Pessimistic)
                    } else if word(&tokens[mode], "OPTIMISTIC") {
                        Some(TxnMode::Optimistic)
                    } else {
                        None
                    };
                    if begin_mode.is_some() {
                        tokens[mode].token = Token::Whitespace(Whitespace::Space);
                    }
                }
            }
            if word(&tokens[first], "UPDATE") {
                let mut depth = 0i32;
                let mut clause: Option<(usize, usize)> = None;
                for (w, &k) in significant.iter().enumerate() {
                    match tokens[k].token {
                        Token::LParen => depth += 1,
                        Token::RParen => depth -= 1,
                        _ => {}
                    }
                    if depth != 0 {
                        continue;
                    }
                    match clause {
                        None if word(&tokens[k], "ORDER")
                            && significant
                                .get(w + 1)
                                .is_some_and(|&b| word(&tokens[b], "BY")) =>
                        {
                            clause = Some((k, end));
                        }
                        Some((from, _)) if word(&tokens[k], "LIMIT") => {
                            clause = Some((from, k));
                            break;
                        }
                        _ => {}
                    }
                }
                if let Some((from, to)) = clause {
                    let taken = tokens[from..to].to_vec();
                    for t in &mut tokens[from..to] {
                        t.token = Token::Whitespace(Whitespace::Space);
                    }
                    let mut parser = Parser::new(dialect).with_tokens_with_locations(taken);
                    parser.expect_keywords(&[Keyword::ORDER, Keyword::BY])?;
                    order = parser.parse_comma_separated(Parser::parse_order_by_expr)?;
                    if parser.peek_token().token != Token::EOF {
                        return parser
                            .expected("LIMIT or the end of the UPDATE", parser.peek_token());
                    }
                }
            }
            orders.push(UnparsedClauses {
                update_order_by: order,
                begin_mode,
                view_check_option,
            });
        }
        start = end + 1;
    }
    Ok(orders)
}

/// Blanks the `WITH [CASCADED | LOCAL] CHECK OPTION` that ends a CREATE or ALTER VIEW (the
/// `significant` tokens of one statement) and returns which it is (`CASCADED` unless LOCAL).
pub(super) fn take_view_check_option(
    tokens: &mut [TokenWithSpan],
    significant: &[usize],
) -> Option<String> {
    let word = |k: usize, text: &str| matches!(&tokens[k].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(text));
    let first = *significant.first()?;
    let is_view = (word(first, "CREATE") || word(first, "ALTER"))
        && significant.iter().any(|&k| word(k, "VIEW"));
    let [.., with, kind, check, option] = significant else {
        return None;
    };
    if !is_view || !word(*check, "CHECK") || !word(*option, "OPTION") {
        return None;
    }
    let (taken, mode): (&[usize], &str) = if word(*with, "WITH") && word(*kind, "LOCAL") {
        (&significant[significant.len() - 4..], "LOCAL")
    } else if word(*with, "WITH") && word(*kind, "CASCADED") {
        (&significant[significant.len() - 4..], "CASCADED")
    } else if word(*kind, "WITH") {
        (&significant[significant.len() - 3..], "CASCADED")
    } else {
        return None;
    };
    for &k in taken {
        tokens[k].token = Token::Whitespace(Whitespace::Space);
    }
    Some(mode.to_string())
}

/// Words after SELECT that only advise MySQL's executor, which Strata's parser does not know:
/// they become whitespace.
const SELECT_HINTS: &[&str] = &[
    "HIGH_PRIORITY",
    "STRAIGHT_JOIN",
    "SQL_SMALL_RESULT",
    "SQL_BIG_RESULT",
    "SQL_BUFFER_RESULT",
    "SQL_NO_CACHE",
];

/// Drops the hints of [`SELECT_HINTS`] among the words that open a select list, and reads
/// DISTINCTROW as DISTINCT (its synonym). Drops SQL_CALC_FOUND_ROWS too, and returns where
/// the SELECTs it followed are.
pub(super) fn drop_select_hints(tokens: &mut [TokenWithSpan]) -> SelectHints {
    let mut hints = SelectHints::default();
    let mut select_at = Location::empty();
    let mut after_select = false;
    for t in tokens.iter_mut() {
        if let Token::Whitespace(Whitespace::MultiLineComment(comment)) = &t.token {
            if let (true, Some(ms)) = (after_select, max_execution_time_hint(comment)) {
                hints.max_execution_ms.push((select_at, ms));
            }
            continue;
        }
        let Token::Word(w) = &mut t.token else {
            if !matches!(t.token, Token::Whitespace(_)) {
                after_select = false;
            }
            continue;
        };
        if w.quote_style.is_some() {
            after_select = false;
            continue;
        }
        if w.keyword == Keyword::SELECT {
            after_select = true;
            select_at = t.span.start;
        } else if after_select && SELECT_HINTS.iter().any(|h| w.value.eq_ignore_ascii_case(h)) {
            t.token = Token::Whitespace(Whitespace::Space);
        } else if after_select && w.value.eq_ignore_ascii_case("SQL_CALC_FOUND_ROWS") {
            t.token = Token::Whitespace(Whitespace::Space);
            hints.calc_found_rows.push(select_at);
        } else if after_select && w.value.eq_ignore_ascii_case("DISTINCTROW") {
            w.value = "DISTINCT".into();
            w.keyword = Keyword::DISTINCT;
        } else if !(after_select && matches!(w.keyword, Keyword::ALL | Keyword::DISTINCT)) {
            after_select = false;
        }
    }
    hints
}

/// What the words and optimizer hints after a SELECT asked for, by where the SELECT starts.
#[derive(Default)]
pub(super) struct SelectHints {
    pub(super) calc_found_rows: Vec<Location>,
    pub(super) max_execution_ms: Vec<(Location, u64)>,
}

/// The milliseconds of a `MAX_EXECUTION_TIME(n)` in an optimizer hint comment (`/*+ … */`).
fn max_execution_time_hint(comment: &str) -> Option<u64> {
    let hints = comment.strip_prefix('+')?;
    let upper = hints.to_ascii_uppercase();
    let at = upper.find("MAX_EXECUTION_TIME")?;
    let rest = hints[at + "MAX_EXECUTION_TIME".len()..].trim_start();
    let inside = rest.strip_prefix('(')?;
    inside[..inside.find(')')?].trim().parse().ok()
}

/// Reads MySQL's older `LOCK IN SHARE MODE` as its synonym `FOR SHARE`, which the parser knows.
pub(super) fn share_mode_as_for_share(tokens: &mut [TokenWithSpan]) {
    let word = |t: &TokenWithSpan, text: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(text));
    let words: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    for k in 0..words.len().saturating_sub(3) {
        let [lock, in_, share, mode] = [words[k], words[k + 1], words[k + 2], words[k + 3]];
        if word(&tokens[lock], "LOCK")
            && word(&tokens[in_], "IN")
            && word(&tokens[share], "SHARE")
            && word(&tokens[mode], "MODE")
        {
            let as_word = |text: &str| Token::make_keyword(text);
            tokens[lock].token = as_word("FOR");
            tokens[in_].token = Token::Whitespace(Whitespace::Space);
            tokens[share].token = as_word("SHARE");
            tokens[mode].token = Token::Whitespace(Whitespace::Space);
        }
    }
}

/// Whether `token` is the unquoted word `word`.
fn is_word(token: &Token, word: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// `SET NAMES cs [COLLATE co]` and `SET {CHARACTER SET | CHARSET} cs`, alone or among other
/// assignments of one SET (`SET time_zone = '+00:00', NAMES utf8mb4 COLLATE …`, as sqlx sends
/// it), as the assignments MySQL makes of them: NAMES sets `character_set_client`,
/// `_connection` and `_results` (and `collation_connection`), CHARACTER SET the client's and
/// the results'. sqlparser reads NAMES only as a statement of its own. `NAMES DEFAULT` is left
/// to it.
pub(super) fn set_names_as_assignments(tokens: &mut Vec<TokenWithSpan>) {
    let mentioned = tokens.iter().any(|t| {
        is_word(&t.token, "NAMES") || is_word(&t.token, "CHARSET") || is_word(&t.token, "CHARACTER")
    });
    if !mentioned {
        return;
    }
    let mut out = Vec::with_capacity(tokens.len() + 16);
    let (mut statement_start, mut in_set, mut item_start, mut depth) = (true, false, false, 0i32);
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i].token;
        match token {
            Token::Whitespace(_) => {
                out.push(tokens[i].clone());
                i += 1;
                continue;
            }
            Token::SemiColon => {
                (statement_start, in_set, depth) = (true, false, 0);
                out.push(tokens[i].clone());
                i += 1;
                continue;
            }
            Token::Word(w) if statement_start => {
                in_set = w.quote_style.is_none() && w.value.eq_ignore_ascii_case("SET");
                statement_start = false;
                item_start = in_set;
                out.push(tokens[i].clone());
                i += 1;
                continue;
            }
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if in_set && depth == 0 => {
                item_start = true;
                out.push(tokens[i].clone());
                i += 1;
                continue;
            }
            _ => {}
        }
        statement_start = false;
        if std::mem::take(&mut item_start) {
            if let Some((assignments, consumed)) = names_item(&tokens[i..]) {
                out.extend(assignments);
                i += consumed;
                continue;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    *tokens = out;
}

/// The assignments of a NAMES or CHARACTER SET item at the start of `tokens`, and how many
/// tokens it took; None when the item is neither (or is `… DEFAULT`).
fn names_item(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, usize)> {
    let mut at = 0;
    let next = |at: &mut usize| -> Option<&TokenWithSpan> {
        while matches!(tokens.get(*at)?.token, Token::Whitespace(_)) {
            *at += 1;
        }
        let token = tokens.get(*at)?;
        *at += 1;
        Some(token)
    };
    let first = next(&mut at)?;
    let span = first.span;
    let names = is_word(&first.token, "NAMES");
    let charset_item = is_word(&first.token, "CHARSET")
        || (is_word(&first.token, "CHARACTER") && is_word(&next(&mut at)?.token, "SET"));
    if !names && !charset_item {
        return None;
    }
    let value = |token: &TokenWithSpan| match &token.token {
        Token::Word(w) if !w.value.eq_ignore_ascii_case("DEFAULT") => Some(token.token.clone()),
        Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => Some(token.token.clone()),
        _ => None,
    };
    let charset = value(next(&mut at)?)?;
    let mut collation = None;
    if names {
        let before = at;
        match next(&mut at) {
            Some(t) if is_word(&t.token, "COLLATE") => collation = Some(value(next(&mut at)?)?),
            _ => at = before,
        }
    }
    let names_set: &[&str] = if names {
        &[
            "character_set_client",
            "character_set_connection",
            "character_set_results",
        ]
    } else {
        &["character_set_client", "character_set_results"]
    };
    let mut assignments: Vec<(&str, Token)> =
        names_set.iter().map(|n| (*n, charset.clone())).collect();
    if let Some(collation) = collation {
        assignments.push(("collation_connection", collation));
    }
    let mut out = Vec::new();
    for (n, (name, value)) in assignments.into_iter().enumerate() {
        if n > 0 {
            out.push(Token::Comma);
            out.push(Token::Whitespace(Whitespace::Space));
        }
        out.extend([
            Token::make_word(name, None),
            Token::Whitespace(Whitespace::Space),
            Token::Eq,
            Token::Whitespace(Whitespace::Space),
            value,
        ]);
    }
    let out = out
        .into_iter()
        .map(|token| TokenWithSpan { token, span })
        .collect();
    Some((out, at))
}

/// Reads `:=` as `=` where a SET statement assigns (`SET @a := 1, b := 2`), which sqlparser
/// does not accept there; elsewhere `:=` stays the assignment operator of expressions.
pub(super) fn set_assignments_as_equals(tokens: &mut [TokenWithSpan]) {
    let mut statement_start = true;
    let mut in_set = false;
    let mut depth = 0i32;
    for token in tokens.iter_mut() {
        match &token.token {
            Token::Whitespace(_) => continue,
            Token::SemiColon => {
                statement_start = true;
                in_set = false;
                depth = 0;
                continue;
            }
            Token::Word(w) if statement_start => {
                in_set = w.quote_style.is_none() && w.value.eq_ignore_ascii_case("SET");
            }
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Assignment if in_set && depth == 0 => token.token = Token::Eq,
            _ => {}
        }
        statement_start = false;
    }
}
