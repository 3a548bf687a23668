//! Expressions as EXPLAIN's operator info shows them, in TiDB's function form
//! (`eq(sbtest1.id, 5)`, `in(t.k, 1, 2, 3)`).

use std::fmt::Write;

use strata_codec::Datum;

use crate::expr::{AggCall, AggFunc, BinaryOp, Expr};
use crate::planner::access::TableSource;
use crate::planner::join::{BuildSource, JoinItem};
use crate::planner::physical::Plan;
use crate::types::datum_to_text;

/// Nesting shown before the rest of an expression is elided: EXPLAIN answers for any
/// expression a statement can hold.
const DEPTH_MAX: usize = 32;
/// List items shown (IN lists, function arguments) before the rest are counted.
const ITEMS_MAX: usize = 16;
/// Longest text shown for one expression.
const TEXT_MAX: usize = 1024;

/// What the columns (and aggregate values) an expression reads are called.
pub struct Names {
    pub columns: Vec<String>,
    pub aggs: Vec<String>,
}

impl Names {
    /// For expressions that read no row (LIMIT, a WHERE without FROM).
    pub fn none() -> Names {
        Names {
            columns: Vec::new(),
            aggs: Vec::new(),
        }
    }

    /// The columns of `source`'s table, as `table.column`.
    pub fn of_table(source: &TableSource) -> Names {
        Names {
            columns: table_names(source, &source.table.name),
            aggs: Vec::new(),
        }
    }

    fn column(&self, i: usize) -> String {
        self.columns
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("#{i}"))
    }

    fn agg(&self, i: usize) -> String {
        self.aggs
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("agg#{i}"))
    }
}

/// `e` as text, its columns called by `names`.
pub fn expr(e: &Expr, names: &Names) -> String {
    let mut out = String::new();
    write_expr(&mut out, e, names, 0);
    if out.len() > TEXT_MAX {
        let mut cut = TEXT_MAX;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

fn write_expr(out: &mut String, e: &Expr, names: &Names, depth: usize) {
    if depth >= DEPTH_MAX || out.len() > TEXT_MAX {
        out.push('…');
        return;
    }
    let call = |out: &mut String, name: &str, args: &mut dyn Iterator<Item = &Expr>| {
        out.push_str(name);
        out.push('(');
        for (k, arg) in args.enumerate() {
            if k == ITEMS_MAX {
                out.push_str(", …");
                break;
            }
            if k > 0 {
                out.push_str(", ");
            }
            write_expr(out, arg, names, depth + 1);
        }
        out.push(')');
    };
    match e {
        Expr::Column(i) => out.push_str(&names.column(*i)),
        Expr::Literal(d) => literal(out, d),
        Expr::Param(i) => {
            let _ = write!(out, "?{}", i + 1);
        }
        Expr::Neg(a) => call(out, "unaryminus", &mut std::iter::once(&**a)),
        Expr::Not(a) => call(out, "not", &mut std::iter::once(&**a)),
        Expr::Binary(op, a, b) => call(out, binary_name(*op), &mut [&**a, &**b].into_iter()),
        Expr::IsNull(a, negated) => {
            let name = if *negated { "not(isnull" } else { "isnull" };
            call(out, name, &mut std::iter::once(&**a));
            if *negated {
                out.push(')');
            }
        }
        Expr::IsTrue(a, negated) => {
            let name = if *negated { "not(istrue" } else { "istrue" };
            call(out, name, &mut std::iter::once(&**a));
            if *negated {
                out.push(')');
            }
        }
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => {
            let name = if *negated { "not between" } else { "between" };
            call(out, name, &mut [&**expr, &**low, &**high].into_iter());
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let name = if *negated { "not in" } else { "in" };
            call(out, name, &mut std::iter::once(&**expr).chain(list));
        }
        Expr::TupleIn {
            exprs,
            list,
            negated,
        } => {
            out.push_str(if *negated { "not in((" } else { "in((" });
            for (k, e) in exprs.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_expr(out, e, names, depth + 1);
            }
            let _ = write!(out, "), {} tuples)", list.len());
        }
        Expr::Like {
            expr,
            pattern,
            negated,
            ..
        } => {
            let name = if *negated { "not like" } else { "like" };
            call(out, name, &mut [&**expr, &**pattern].into_iter());
        }
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => {
            let mut args = operand
                .iter()
                .map(|o| &**o)
                .chain(whens.iter().flat_map(|(w, t)| [w, t]))
                .chain(otherwise.iter().map(|o| &**o));
            call(out, "case", &mut args);
        }
        Expr::Call(func, args) => call(out, &func_name(func), &mut args.iter()),
        Expr::Agg(i) => out.push_str(&names.agg(*i)),
        Expr::Window(i) => {
            let _ = write!(out, "window#{i}");
        }
        Expr::Prefix(i) => {
            let _ = write!(out, "joined#{i}");
        }
        Expr::Outer(i, _) => {
            let _ = write!(out, "outer#{i}");
        }
        Expr::Session(value) => out.push_str(&snake(&format!("{value:?}"))),
    }
}

fn table_names(source: &TableSource, alias: &str) -> Vec<String> {
    source
        .table
        .columns
        .iter()
        .map(|c| format!("{alias}.{}", c.name))
        .collect()
}

impl Names {
    /// The columns of the FROM row (`alias.column`) under a node of a query block, then
    /// the results of the subqueries under it, and the aggregate calls under it.
    pub fn of_block(node: &Plan) -> Names {
        let (mut columns, width) = match node.leaf() {
            Plan::Join(join) => {
                let mut columns = vec![String::new(); join.width];
                for step in &join.steps {
                    let own = match &step.item {
                        JoinItem::Lookup(source)
                        | JoinItem::Build {
                            source: BuildSource::Table(source),
                            ..
                        } => table_names(source, &step.alias),
                        JoinItem::Build {
                            source: BuildSource::Derived(derived),
                            ..
                        } => derived
                            .columns
                            .iter()
                            .map(|c| format!("{}.{}", step.alias, c.name))
                            .collect(),
                    };
                    for (k, name) in own.into_iter().take(step.width).enumerate() {
                        if let Some(slot) = columns.get_mut(step.offset + k) {
                            *slot = name;
                        }
                    }
                }
                (columns, join.width)
            }
            Plan::Scan { source, .. } => {
                let columns = table_names(source, &source.table.name);
                let width = columns.len();
                (columns, width)
            }
            _ => (Vec::new(), 0),
        };
        columns.resize(width, String::new());
        for (k, slot) in columns.iter_mut().enumerate() {
            if slot.is_empty() {
                *slot = format!("#{k}");
            }
        }
        columns.extend((0..node.subqueries().len()).map(|k| format!("subquery#{k}")));
        let mut names = Names {
            columns,
            aggs: Vec::new(),
        };
        names.aggs = node
            .aggs()
            .iter()
            .map(|call| aggregate(call, &names))
            .collect();
        names
    }
}

/// `exprs` as text, their columns called by `names`.
pub fn exprs<'e>(exprs: impl IntoIterator<Item = &'e Expr>, names: &Names) -> String {
    exprs
        .into_iter()
        .map(|e| expr(e, names))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An aggregate call as EXPLAIN shows it: `sum(t.k)`, `count(distinct t.c)`.
pub fn aggregate(call: &AggCall, names: &Names) -> String {
    let name = snake(&format!("{:?}", call.func));
    let arg = match call.func {
        AggFunc::CountStar => "1".to_string(),
        _ => exprs([&call.arg], names),
    };
    let distinct = if call.distinct { "distinct " } else { "" };
    let name = if name == "count_star" {
        "count".to_string()
    } else {
        name
    };
    format!("{name}({distinct}{arg})")
}

fn literal(out: &mut String, d: &Datum) {
    match d {
        Datum::Null => out.push_str("NULL"),
        Datum::Bytes(_) => {
            let text = String::from_utf8_lossy(&datum_to_text(d)).into_owned();
            let _ = write!(out, "{text:?}");
        }
        other => out.push_str(&String::from_utf8_lossy(&datum_to_text(other))),
    }
}

/// TiDB's names of the binary operators.
fn binary_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Plus => "plus",
        BinaryOp::Minus => "minus",
        BinaryOp::Multiply => "mul",
        BinaryOp::Divide => "div",
        BinaryOp::IntDivide => "intdiv",
        BinaryOp::Modulo => "mod",
        BinaryOp::Eq => "eq",
        BinaryOp::NotEq => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::LtEq => "le",
        BinaryOp::Gt => "gt",
        BinaryOp::GtEq => "ge",
        BinaryOp::NullSafeEq => "nulleq",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::Xor => "xor",
        BinaryOp::BitAnd => "bitand",
        BinaryOp::BitOr => "bitor",
        BinaryOp::BitXor => "bitxor",
        BinaryOp::ShiftLeft => "leftshift",
        BinaryOp::ShiftRight => "rightshift",
    }
}

/// A function's name from its variant: `Str(Replace)` is `replace`, `CastDecimal(10, 2)` is
/// `cast_decimal`.
fn func_name(func: &crate::expr::Func) -> String {
    let debug = format!("{func:?}");
    let name = match debug.split_once('(') {
        Some(("Str" | "Math" | "Date" | "Time" | "Regexp" | "Encoding" | "Json", inner)) => {
            inner.trim_end_matches(')').to_string()
        }
        Some((outer, _)) => outer.to_string(),
        None => debug,
    };
    snake(&name)
}

/// `CamelCase` as `camel_case` (only the leading word of a variant's debug text).
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (k, c) in name.chars().enumerate() {
        if !c.is_alphanumeric() {
            break;
        }
        if c.is_uppercase() && k > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            columns: vec!["t.c0".into(), "t.c1".into()],
            aggs: Vec::new(),
        }
    }

    #[test]
    fn conditions_read_as_tidb_prints_them() {
        let e = Expr::Binary(
            BinaryOp::And,
            Box::new(Expr::Binary(
                BinaryOp::Eq,
                Box::new(Expr::Column(0)),
                Box::new(Expr::Literal(Datum::Int(5))),
            )),
            Box::new(Expr::InList {
                expr: Box::new(Expr::Column(1)),
                list: vec![Expr::Literal(Datum::Bytes(b"a".to_vec())), Expr::Param(0)],
                negated: false,
            }),
        );
        assert_eq!(expr(&e, &names()), r#"and(eq(t.c0, 5), in(t.c1, "a", ?1))"#);
    }

    #[test]
    fn deep_and_long_expressions_are_elided() {
        let mut e = Expr::Column(0);
        for _ in 0..10_000 {
            e = Expr::Not(Box::new(e));
        }
        let text = expr(&e, &names());
        assert!(text.len() <= TEXT_MAX + '…'.len_utf8(), "{}", text.len());
        assert!(text.starts_with("not(not("), "{text}");
        assert!(text.contains("(…)"), "{text}");
        let list = Expr::InList {
            expr: Box::new(Expr::Column(0)),
            list: (0..100_000).map(|i| Expr::Literal(Datum::Int(i))).collect(),
            negated: false,
        };
        let text = expr(&list, &names());
        assert!(text.starts_with("in(t.c0, 0, 1, "), "{text}");
        assert!(text.ends_with(", …)"), "{text}");
        // The test's own deep expression is dropped without recursion.
        while let Expr::Not(inner) = e {
            e = *inner;
        }
    }
}
