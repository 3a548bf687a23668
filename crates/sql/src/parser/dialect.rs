//! The SQL dialect Strata parses: `sqlparser`'s MySQL dialect, with MySQL's operators and their
//! precedence where that dialect differs.
//!
//! MySQL's precedence, tightest first (the reference manual's "Operator Precedence"):
//!
//! ```text
//!   !            ~   - (unary)   ^   * / DIV % MOD   + -   << >>   &   |
//!   = <=> >= > <= < <> != IS LIKE REGEXP IN BETWEEN   NOT   AND &&   XOR   OR ||
//! ```
//!
//! The MySQL dialect of `sqlparser` 0.59 binds XOR tighter than `=` (so `a = 1 XOR b = 2` was
//! `a = (1 XOR b) = 2`), parses the right side of DIV as a whole expression (`7 DIV 2 + 1` was
//! `7 DIV 3`), puts `^` below `&`, and knows neither MOD, `<<`, `>>`, `~`, `&&` nor `||` as OR.
//! `||` is OR as in MySQL's default SQL mode; with `PIPES_AS_CONCAT` in `sql_mode` (which sqlx
//! sets, and `ANSI` implies) it concatenates, binding between `^` and the unary operators, and
//! a run of them is read as one `CONCAT(…)` call, so the tree (and a view's text) says so.

use sqlparser::ast::{
    BinaryOperator, DateTimeField, Expr, ExtractSyntax, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, ObjectName, Statement, UnaryOperator,
};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Binding powers, higher binds tighter. The comparison, NOT and IS levels are `sqlparser`'s
/// own (its defaults for the MySQL dialect), so the operators left to it fit in between.
/// `->` and `->>` read a JSON column's member: they bind as tightly as the column itself.
const PREC_JSON_PATH: u8 = 70;
const PREC_BANG: u8 = 60;
/// Unary minus and `~`: tighter than `^` (`-2 ^ 1` is `(-2) ^ 1`).
const PREC_UNARY: u8 = 50;
/// `||` as concatenation (`PIPES_AS_CONCAT`): between `^` and the unary operators.
const PREC_CONCAT: u8 = 47;
const PREC_XOR_BITS: u8 = 45;
const PREC_MUL: u8 = 40;
const PREC_PLUS: u8 = 30;
const PREC_SHIFT: u8 = 27;
const PREC_BIT_AND: u8 = 26;
const PREC_BIT_OR: u8 = 25;
const PREC_AND: u8 = 10;
const PREC_XOR: u8 = 7;
const PREC_OR: u8 = 5;

/// `sqlparser`'s MySQL dialect with MySQL's operators. It reports itself as that dialect, so
/// the parser's MySQL-only syntax stays on; every hook that dialect overrides is passed on.
#[derive(Debug)]
pub struct StrataDialect {
    mysql: MySqlDialect,
    /// `sql_mode` holds PIPES_AS_CONCAT: `||` concatenates.
    pipes_as_concat: bool,
    /// `sql_mode` holds ANSI_QUOTES: `"…"` quotes an identifier, not a string.
    ansi_quotes: bool,
}

/// What of a session's `sql_mode` changes how its statements parse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modes {
    /// PIPES_AS_CONCAT (or ANSI): `||` concatenates.
    pub pipes_as_concat: bool,
    /// ANSI_QUOTES (or ANSI): `"` quotes identifiers, as `` ` `` does.
    pub ansi_quotes: bool,
}

impl Default for StrataDialect {
    fn default() -> StrataDialect {
        StrataDialect {
            mysql: MySqlDialect {},
            pipes_as_concat: false,
            ansi_quotes: false,
        }
    }
}

impl StrataDialect {
    /// The dialect of a session whose `sql_mode` gives `modes`.
    pub fn with_modes(modes: Modes) -> StrataDialect {
        StrataDialect {
            pipes_as_concat: modes.pipes_as_concat,
            ansi_quotes: modes.ansi_quotes,
            ..StrataDialect::default()
        }
    }
}

/// The binary operator the next token starts, with its binding power, where this dialect
/// decides it; `pipes` when `||` concatenates.
fn infix(token: &Token, pipes: bool) -> Option<(BinaryOperator, u8)> {
    Some(match token {
        Token::Word(w) if w.keyword == Keyword::DIV => (BinaryOperator::MyIntegerDivide, PREC_MUL),
        Token::Word(w) if w.keyword == Keyword::MOD => (BinaryOperator::Modulo, PREC_MUL),
        Token::Word(w) if w.keyword == Keyword::XOR => (BinaryOperator::Xor, PREC_XOR),
        Token::Arrow => (BinaryOperator::Arrow, PREC_JSON_PATH),
        Token::LongArrow => (BinaryOperator::LongArrow, PREC_JSON_PATH),
        Token::Caret => (BinaryOperator::BitwiseXor, PREC_XOR_BITS),
        Token::ShiftLeft => (BinaryOperator::PGBitwiseShiftLeft, PREC_SHIFT),
        Token::ShiftRight => (BinaryOperator::PGBitwiseShiftRight, PREC_SHIFT),
        Token::Ampersand => (BinaryOperator::BitwiseAnd, PREC_BIT_AND),
        Token::Pipe => (BinaryOperator::BitwiseOr, PREC_BIT_OR),
        Token::Overlap => (BinaryOperator::And, PREC_AND),
        Token::StringConcat if pipes => (BinaryOperator::StringConcat, PREC_CONCAT),
        Token::StringConcat => (BinaryOperator::Or, PREC_OR),
        _ => return None,
    })
}

/// How deep parentheses, subqueries and prefix operators may nest: sqlparser's own limit, which
/// counts each level of its recursive descent. `tests/stack.rs` checks that the deepest
/// statements it lets through run on a quarter of a connection's stack.
pub const MAX_NESTING: usize = 132;

/// How deep parentheses and CASE … END may nest in a statement's text: what `MAX_NESTING`
/// leaves once a statement and its select list took their levels, and a CASE's innermost
/// expression its own.
pub const MAX_TEXT_NESTING: usize = MAX_NESTING - 4;

/// How deep parenthesized queries may nest in a statement (subqueries, derived tables): 63, as
/// MySQL and MariaDB (1473 past it).
pub const MAX_QUERY_NESTING: usize = 63;

/// Runs of one associative operator longer than this are grouped as a balanced tree.
const BALANCE_FROM: usize = 32;

/// The most operators a run that must stay left-deep may hold (`a - b + c …`, or `/`, `<<`):
/// deeper trees than this would risk the stack of whatever walks them, so longer runs get
/// MySQL's thread stack overrun error instead.
pub const MAX_LEFT_DEEP: usize = 256;

/// The binary operator the next token starts, with its binding power: this dialect's own
/// ([`infix`]) and the arithmetic, AND and OR operators sqlparser would read the same way.
fn chain_operator(token: &Token, pipes: bool) -> Option<(BinaryOperator, u8)> {
    Some(match token {
        Token::Plus => (BinaryOperator::Plus, PREC_PLUS),
        Token::Minus => (BinaryOperator::Minus, PREC_PLUS),
        Token::Mul => (BinaryOperator::Multiply, PREC_MUL),
        Token::Div => (BinaryOperator::Divide, PREC_MUL),
        Token::Mod => (BinaryOperator::Modulo, PREC_MUL),
        Token::Word(w) if w.keyword == Keyword::AND => (BinaryOperator::And, PREC_AND),
        Token::Word(w) if w.keyword == Keyword::OR => (BinaryOperator::Or, PREC_OR),
        token => return infix(token, pipes),
    })
}

/// Whether `(a op b) op c` always equals `a op (b op c)`, evaluated left to right: true of
/// AND, OR and XOR in three-valued logic and of the bit operators; true of `+` and `*` except
/// where an intermediate result would overflow or a DOUBLE rounds differently.
fn associative(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::And
            | BinaryOperator::Or
            | BinaryOperator::Xor
            | BinaryOperator::Plus
            | BinaryOperator::Multiply
            | BinaryOperator::BitwiseAnd
            | BinaryOperator::BitwiseOr
            | BinaryOperator::BitwiseXor
    )
}

/// `first op right op right …`: every operator of one binding power in a row, read in a loop
/// rather than one call per operator. The tree is left-deep, as sqlparser builds it, unless the
/// run is long and of one associative operator: then it is balanced (its leaves in the same
/// order, so evaluation and short-circuiting run left to right as before), so that no later
/// walk of it (binding, evaluation, cloning, dropping) recurses once per operator. A
/// `WHERE id = 0 OR id = 1 OR …` of 100,000 terms is a tree 17 deep.
fn parse_chain(
    parser: &mut Parser,
    first: &Expr,
    precedence: u8,
    pipes: bool,
) -> Result<Expr, ParserError> {
    let mut operators = Vec::new();
    let mut operands = vec![first.clone()];
    while let Some((op, _)) =
        chain_operator(&parser.peek_token().token, pipes).filter(|(_, p)| *p == precedence)
    {
        parser.next_token();
        operands.push(parser.parse_subexpr(precedence)?);
        operators.push(op);
    }
    // `a || b || c` as concatenation (the only operator of its binding power): CONCAT(a, b, c).
    if operators.first() == Some(&BinaryOperator::StringConcat) {
        return Ok(concat_call(operands));
    }
    let uniform = operators.iter().all(|op| *op == operators[0]);
    if operators.len() >= BALANCE_FROM && uniform && associative(&operators[0]) {
        return Ok(balanced(operators[0].clone(), &mut operands));
    }
    if operators.len() > MAX_LEFT_DEEP {
        return Err(ParserError::RecursionLimitExceeded);
    }
    let mut operands = operands.into_iter();
    let mut tree = operands.next().expect("the first operand");
    for (op, right) in operators.into_iter().zip(operands) {
        tree = Expr::BinaryOp {
            left: Box::new(tree),
            op,
            right: Box::new(right),
        };
    }
    Ok(tree)
}

/// `CONCAT(args…)`.
fn concat_call(args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new("CONCAT")]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// `operands` joined by `op` as a balanced tree, leaves in order.
fn balanced(op: BinaryOperator, operands: &mut [Expr]) -> Expr {
    if let [only] = operands {
        return std::mem::replace(only, Expr::value(sqlparser::ast::Value::Null));
    }
    let (left, right) = operands.split_at_mut(operands.len() / 2);
    let left = Box::new(balanced(op.clone(), left));
    let right = Box::new(balanced(op.clone(), right));
    Expr::BinaryOp { left, op, right }
}

/// `[NOT] REGEXP pattern` and `[NOT] RLIKE pattern`, parsed here since `sqlparser` takes a
/// NULL pattern for the NULL of `NOT NULL` and fails.
fn parse_regexp(parser: &mut Parser, expr: &Expr, like: u8) -> Option<Result<Expr, ParserError>> {
    let is_regexp = |t: &Token| matches!(t, Token::Word(w) if matches!(w.keyword, Keyword::REGEXP | Keyword::RLIKE));
    let negated = match parser.peek_token().token {
        Token::Word(w)
            if w.keyword == Keyword::NOT && is_regexp(&parser.peek_nth_token(1).token) =>
        {
            true
        }
        t if is_regexp(&t) => false,
        _ => return None,
    };
    if negated {
        parser.next_token();
    }
    let regexp =
        matches!(parser.next_token().token, Token::Word(w) if w.keyword == Keyword::REGEXP);
    Some(parser.parse_subexpr(like).map(|pattern| Expr::RLike {
        negated,
        expr: Box::new(expr.clone()),
        pattern: Box::new(pattern),
        regexp,
    }))
}

/// `EXTRACT(unit FROM value)` with any of MySQL's units, compound ones (`YEAR_MONTH`,
/// `DAY_SECOND`, …) included: the unit is kept as a word for the binder to check.
fn parse_extract(parser: &mut Parser) -> Result<Expr, ParserError> {
    parser.next_token();
    parser.expect_token(&Token::LParen)?;
    let unit = match parser.next_token().token {
        Token::Word(w) => w.value,
        other => {
            return Err(ParserError::ParserError(format!(
                "Expected: a date or time unit, found: {other}"
            )))
        }
    };
    parser.expect_keyword(Keyword::FROM)?;
    let expr = parser.parse_expr()?;
    parser.expect_token(&Token::RParen)?;
    Ok(Expr::Extract {
        field: DateTimeField::Custom(Ident::new(unit)),
        syntax: ExtractSyntax::From,
        expr: Box::new(expr),
    })
}

fn is_not(token: &Token) -> bool {
    matches!(token, Token::Word(w) if w.keyword == Keyword::NOT)
}

/// `count` negations of `expr`. NOT NOT x is x as a truth value (1, 0 or NULL), which a third
/// NOT negates as it would x, so a run of any length is one negation (odd) or two (even).
fn negations(op: UnaryOperator, count: usize, expr: Expr) -> Expr {
    let once = |expr| Expr::UnaryOp {
        op,
        expr: Box::new(expr),
    };
    if count % 2 == 1 {
        once(expr)
    } else {
        once(once(expr))
    }
}

impl Dialect for StrataDialect {
    fn dialect(&self) -> std::any::TypeId {
        std::any::TypeId::of::<MySqlDialect>()
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        let token = parser.peek_token().token;
        match token {
            Token::Mul | Token::Div | Token::Mod => Some(Ok(PREC_MUL)),
            Token::Plus | Token::Minus => Some(Ok(PREC_PLUS)),
            token => infix(&token, self.pipes_as_concat).map(|(_, precedence)| Ok(precedence)),
        }
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        _precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if let Some(regexp) = parse_regexp(parser, expr, self.prec_value(Precedence::Like)) {
            return Some(regexp);
        }
        let pipes = self.pipes_as_concat;
        let (_, precedence) = chain_operator(&parser.peek_token().token, pipes)?;
        Some(parse_chain(parser, expr, precedence, pipes))
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let (op, precedence) = match parser.peek_token().token {
            Token::Word(w)
                if w.keyword == Keyword::EXTRACT
                    && parser.peek_nth_token(1).token == Token::LParen =>
            {
                return Some(parse_extract(parser));
            }
            // A run of negations is read at once: its operand is parsed once, however long
            // the run, instead of once more per NOT.
            Token::Word(w)
                if w.keyword == Keyword::NOT && is_not(&parser.peek_nth_token(1).token) =>
            {
                let mut count = 0;
                while is_not(&parser.peek_token().token) {
                    parser.next_token();
                    count += 1;
                }
                let precedence = self.prec_value(Precedence::UnaryNot);
                return Some(
                    parser
                        .parse_subexpr(precedence)
                        .map(|expr| negations(UnaryOperator::Not, count, expr)),
                );
            }
            Token::ExclamationMark | Token::DoubleExclamationMark => {
                let mut count = 0;
                loop {
                    match parser.peek_token().token {
                        Token::ExclamationMark => count += 1,
                        Token::DoubleExclamationMark => count += 2,
                        _ => break,
                    }
                    parser.next_token();
                }
                return Some(
                    parser
                        .parse_subexpr(PREC_BANG)
                        .map(|expr| negations(UnaryOperator::BangNot, count, expr)),
                );
            }
            Token::Tilde => (UnaryOperator::PGBitwiseNot, PREC_UNARY),
            Token::Minus => (UnaryOperator::Minus, PREC_UNARY),
            _ => return None,
        };
        parser.next_token();
        Some(parser.parse_subexpr(precedence).map(|expr| Expr::UnaryOp {
            op,
            expr: Box::new(expr),
        }))
    }

    // Everything below passes on what the MySQL dialect decides.

    fn is_identifier_start(&self, ch: char) -> bool {
        self.mysql.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.mysql.is_identifier_part(ch)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        (self.ansi_quotes && ch == '"') || self.mysql.is_delimited_identifier_start(ch)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.mysql.identifier_quote_style(identifier)
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.mysql.supports_string_literal_backslash_escape()
    }

    fn supports_string_literal_concatenation(&self) -> bool {
        self.mysql.supports_string_literal_concatenation()
    }

    fn ignores_wildcard_escapes(&self) -> bool {
        self.mysql.ignores_wildcard_escapes()
    }

    fn supports_numeric_prefix(&self) -> bool {
        self.mysql.supports_numeric_prefix()
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.mysql.parse_statement(parser)
    }

    fn require_interval_qualifier(&self) -> bool {
        self.mysql.require_interval_qualifier()
    }

    /// `GROUP BY … WITH ROLLUP` (the planner refuses the other modifiers, as MySQL does).
    fn supports_group_by_with_modifier(&self) -> bool {
        true
    }

    fn supports_limit_comma(&self) -> bool {
        self.mysql.supports_limit_comma()
    }

    fn supports_create_table_select(&self) -> bool {
        self.mysql.supports_create_table_select()
    }

    fn supports_insert_set(&self) -> bool {
        self.mysql.supports_insert_set()
    }

    fn supports_user_host_grantee(&self) -> bool {
        self.mysql.supports_user_host_grantee()
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.mysql.is_table_factor_alias(explicit, kw, parser)
    }

    fn supports_table_hints(&self) -> bool {
        self.mysql.supports_table_hints()
    }

    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.mysql.requires_single_line_comment_whitespace()
    }

    fn supports_match_against(&self) -> bool {
        self.mysql.supports_match_against()
    }

    fn supports_set_names(&self) -> bool {
        self.mysql.supports_set_names()
    }

    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.mysql.supports_comma_separated_set_assignments()
    }

    fn supports_data_type_signed_suffix(&self) -> bool {
        self.mysql.supports_data_type_signed_suffix()
    }

    fn supports_cross_join_constraint(&self) -> bool {
        self.mysql.supports_cross_join_constraint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_expr(sql: &str) -> Result<Expr, ParserError> {
        Parser::new(&StrataDialect::default())
            .try_with_sql(sql)?
            .parse_expr()
    }

    fn depth(e: &Expr) -> usize {
        match e {
            Expr::BinaryOp { left, right, .. } => 1 + depth(left).max(depth(right)),
            _ => 0,
        }
    }

    #[test]
    fn long_runs_of_one_associative_operator_are_balanced_in_order() {
        let sql = (0..1000)
            .map(|i| format!("a = {i}"))
            .collect::<Vec<_>>()
            .join(" OR ");
        let e = parse_expr(&sql).unwrap();
        assert_eq!(depth(&e), 11);
        // The leaves keep their order: the tree prints as the text it was read from.
        assert_eq!(e.to_string(), sql);
    }

    #[test]
    fn runs_of_negations_are_one_or_two_however_long() {
        let dialect = StrataDialect::default();
        let parser = || Parser::new(&dialect).with_recursion_limit(MAX_NESTING);
        for (sql, expected) in [
            (format!("{}a = b", "NOT ".repeat(100_000)), "NOT NOT a = b"),
            (format!("{}a = b", "NOT ".repeat(100_001)), "NOT a = b"),
            (format!("{}1 = 2", "! ".repeat(99_999)), "!1 = 2"),
            (format!("{}x", "!!".repeat(50_000)), "!!x"),
            (
                "NOT NOT EXISTS (SELECT 1)".to_string(),
                "NOT NOT EXISTS (SELECT 1)",
            ),
        ] {
            let e = parser().try_with_sql(&sql).unwrap().parse_expr().unwrap();
            assert_eq!(e.to_string(), expected);
        }
        // One NOT is still sqlparser's (NOT EXISTS, NOT IN, …).
        let e = parser()
            .try_with_sql("NOT EXISTS (SELECT 1)")
            .unwrap()
            .parse_expr();
        assert!(matches!(e, Ok(Expr::Exists { negated: true, .. })));
    }

    #[test]
    fn short_or_mixed_runs_stay_left_deep_as_sqlparser_builds_them() {
        let e = parse_expr("1 - 2 + 3 * 4 - 5").unwrap();
        let Expr::BinaryOp { left, op, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(*op, BinaryOperator::Minus);
        assert_eq!(left.to_string(), "1 - 2 + 3 * 4");
        assert_eq!(depth(&parse_expr("a OR b OR c").unwrap()), 2);
        let mixed = (0..MAX_LEFT_DEEP)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" - ");
        assert_eq!(depth(&parse_expr(&mixed).unwrap()), MAX_LEFT_DEEP - 1);
        assert!(matches!(
            parse_expr(&format!("{mixed} - 1 - 2")),
            Err(ParserError::RecursionLimitExceeded)
        ));
    }
}
