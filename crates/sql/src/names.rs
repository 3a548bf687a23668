//! The names MySQL gives the unaliased expressions of a select list: their text in the query,
//! as written (`SELECT 1+1` is named `1+1`, `SELECT count(*)` is `count(*)`). The parser
//! keeps no text, so after parsing each such item takes its text from the tokens as an alias;
//! an alias is what MySQL's name is, for ORDER BY, derived tables and CREATE TABLE … AS too.
//! Columns, string literals, NULL, TRUE and FALSE keep the names the planner gives them.

use std::ops::ControlFlow;

use sqlparser::ast::{self, SelectItem, SetExpr, VisitMut, VisitorMut};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

/// Words that may follow SELECT before its first item (the parser's tokens no longer have
/// the hints MySQL allows there, and DISTINCTROW reads DISTINCT).
const MODIFIERS: &[&str] = &["ALL", "DISTINCT"];

/// Words that end a select list.
const ENDS: &[Keyword] = &[
    Keyword::FROM,
    Keyword::WHERE,
    Keyword::GROUP,
    Keyword::HAVING,
    Keyword::WINDOW,
    Keyword::ORDER,
    Keyword::LIMIT,
    Keyword::INTO,
    Keyword::FOR,
    Keyword::LOCK,
    Keyword::UNION,
    Keyword::EXCEPT,
    Keyword::INTERSECT,
];

/// Names the unaliased expressions of every select list in `statements`, parsed from `tokens`
/// of `sql`.
pub fn name_select_items<'s>(
    statements: impl IntoIterator<Item = &'s mut ast::Statement>,
    tokens: &[TokenWithSpan],
    sql: &str,
) {
    let mut line_starts = vec![0];
    line_starts.extend(sql.match_indices('\n').map(|(i, _)| i + 1));
    let ascii_lines = sql.split('\n').map(str::is_ascii).collect();
    let selects = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| is_keyword(&t.token, Keyword::SELECT))
        .map(|(i, t)| (t.span.start, i))
        .collect();
    let mut namer = Namer {
        tokens,
        sql,
        line_starts,
        ascii_lines,
        selects,
    };
    for statement in statements {
        let _ = statement.visit(&mut namer);
    }
}

struct Namer<'t> {
    tokens: &'t [TokenWithSpan],
    sql: &'t str,
    /// Byte offset of each line of `sql`.
    line_starts: Vec<usize>,
    /// Whether each line of `sql` is ASCII, so that a column is a byte offset in it.
    ascii_lines: Vec<bool>,
    /// The place of each SELECT keyword among the tokens, by where it starts.
    selects: std::collections::HashMap<Location, usize>,
}

impl VisitorMut for Namer<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut ast::Query) -> ControlFlow<()> {
        self.set_expr(&mut query.body);
        ControlFlow::Continue(())
    }
}

impl Namer<'_> {
    fn set_expr(&self, body: &mut SetExpr) {
        match body {
            SetExpr::Select(select) => self.select(select),
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left);
                self.set_expr(right);
            }
            // A parenthesized query is visited as a query of its own.
            _ => {}
        }
    }

    fn select(&self, select: &mut ast::Select) {
        let start = select.select_token.0.span.start;
        if start.line == 0 || !select.projection.iter().any(needs_name) {
            return;
        }
        let Some(&at) = self.selects.get(&start) else {
            return;
        };
        let items = split_items(&self.tokens[at + 1..]);
        if items.len() != select.projection.len() {
            return;
        }
        for (item, tokens) in select.projection.iter_mut().zip(items) {
            if !needs_name(item) {
                continue;
            }
            let text = self.text(tokens);
            if let SelectItem::UnnamedExpr(expr) = item {
                if !text.is_empty() {
                    *item = SelectItem::ExprWithAlias {
                        expr: expr.clone(),
                        alias: ast::Ident::with_quote('`', text),
                    };
                }
            }
        }
    }
}

fn is_keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

/// Whether the item is an unaliased expression whose name is its text.
fn needs_name(item: &SelectItem) -> bool {
    let SelectItem::UnnamedExpr(e) = item else {
        return false;
    };
    match e {
        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => false,
        ast::Expr::Value(v) => !matches!(
            v.value,
            ast::Value::SingleQuotedString(_)
                | ast::Value::DoubleQuotedString(_)
                | ast::Value::NationalStringLiteral(_)
                | ast::Value::Null
                | ast::Value::Boolean(_)
        ),
        // `_binary'ab'` is named by its string, as the string alone is.
        ast::Expr::Prefixed { value, .. } => !matches!(&**value, ast::Expr::Value(v)
            if matches!(v.value, ast::Value::SingleQuotedString(_) | ast::Value::DoubleQuotedString(_))),
        _ => true,
    }
}

/// The tokens of each item of a select list (`tokens` start after SELECT).
fn split_items(tokens: &[TokenWithSpan]) -> Vec<&[TokenWithSpan]> {
    let mut start = 0;
    while let Some(t) = tokens.get(start) {
        let modifier = matches!(&t.token, Token::Word(w)
            if w.quote_style.is_none()
                && MODIFIERS.iter().any(|m| w.value.eq_ignore_ascii_case(m)));
        if modifier || matches!(t.token, Token::Whitespace(_)) {
            start += 1;
        } else {
            break;
        }
    }
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut end = start;
    while let Some(t) = tokens.get(end) {
        match &t.token {
            Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            Token::Comma if depth == 0 => {
                items.push(&tokens[start..end]);
                start = end + 1;
            }
            Token::SemiColon | Token::EOF if depth == 0 => break,
            Token::Word(_) if depth == 0 && ENDS.iter().any(|k| is_keyword(&t.token, *k)) => break,
            _ => {}
        }
        end += 1;
    }
    items.push(&tokens[start..end]);
    items
}

impl Namer<'_> {
    /// The byte offset in the query of a location (line and character, from 1).
    fn offset(&self, location: Location) -> Option<usize> {
        let line_start = *self
            .line_starts
            .get((location.line as usize).checked_sub(1)?)?;
        let column = (location.column as usize).checked_sub(1)?;
        let line = &self.sql[line_start..];
        if self.ascii_lines[location.line as usize - 1] {
            return (column <= line.len()).then_some(line_start + column);
        }
        let within = line
            .char_indices()
            .map(|(i, _)| i)
            .chain([line.len()])
            .nth(column)?;
        Some(line_start + within)
    }

    /// An item's text in the query, from its first token to its last but for the whitespace
    /// and comments around it; empty when a token has no place in it (one from an executable
    /// comment).
    fn text(&self, tokens: &[TokenWithSpan]) -> String {
        let meaningful = |t: &&TokenWithSpan| !matches!(t.token, Token::Whitespace(_));
        let (Some(first), Some(last)) = (
            tokens.iter().find(meaningful),
            tokens.iter().rev().find(meaningful),
        ) else {
            return String::new();
        };
        if tokens
            .iter()
            .filter(meaningful)
            .any(|t| t.span.start.line == 0)
        {
            return String::new();
        }
        match (self.offset(first.span.start), self.offset(last.span.end)) {
            (Some(start), Some(end)) if start <= end => self.sql[start..end].to_string(),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::{SelectItem, SetExpr, Statement};

    use crate::parser::parse;

    /// The names (aliases) of the first select list of `sql`, `-` for an item left unnamed.
    fn names(sql: &str) -> Vec<String> {
        let trees = parse(sql).unwrap().into_sql().unwrap();
        let Statement::Query(q) = &trees[0] else {
            panic!("not a query: {sql}");
        };
        let select = match q.body.as_ref() {
            SetExpr::Select(s) => s,
            SetExpr::SetOperation { left, .. } => match left.as_ref() {
                SetExpr::Select(s) => s,
                other => panic!("{other}"),
            },
            other => panic!("{other}"),
        };
        select
            .projection
            .iter()
            .map(|item| match item {
                SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                _ => "-".to_string(),
            })
            .collect()
    }

    #[test]
    fn items_are_named_by_their_text() {
        assert_eq!(
            names("SELECT 1+1, a, 'x', NULL, a  *  2 FROM t"),
            ["1+1", "-", "-", "-", "a  *  2"]
        );
        assert_eq!(names("SELECT a\n  + 1,\n\tb FROM t"), ["a\n  + 1", "-"]);
        assert_eq!(names("SELECT f(a, (b)), g(c) x FROM t"), ["f(a, (b))", "x"]);
        assert_eq!(names("SELECT DISTINCT a+1 FROM t WHERE b"), ["a+1"]);
        assert_eq!(names("SELECT ?+1, ?"), ["?+1", "?"]);
        assert_eq!(names("SELECT a+1 FROM t UNION SELECT 2"), ["a+1"]);
        assert_eq!(names("SELECT é+1, 'ü' || x FROM t"), ["é+1", "'ü' || x"]);
        // A subquery's items and the item around it are named each from their own text.
        let trees = parse("SELECT (SELECT b+1 FROM u) FROM t")
            .unwrap()
            .into_sql()
            .unwrap();
        assert!(trees[0].to_string().contains("AS `b+1`"));
        assert!(trees[0].to_string().contains("AS `(SELECT b+1 FROM u)`"));
    }

    #[test]
    fn text_from_an_executable_comment_is_left_unnamed() {
        assert_eq!(names("SELECT /*! 1+1, */ 2+2"), ["-", "2+2"]);
    }
}
