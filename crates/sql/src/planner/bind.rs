//! The binder: resolves a parsed expression against the columns in scope into an [`Expr`].

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};
use strata_codec::Datum;

use crate::error::{self, Result};
use crate::expr::{AggCall, AggFunc, BinaryOp, Expr, Func, SessionValue};
use crate::planner::scope::{OuterScope, Scope};
use crate::types::{self, SqlType, TypeKind};

/// Where a query block's binders put the subqueries they meet.
pub trait SubqueryPlanner {
    /// Plans `query` (seeing `scope` as its enclosing scope) and returns the expression that
    /// reads its result in the current row.
    fn plan(&self, query: &ast::Query, kind: SubqueryKind, scope: &Scope) -> Result<Expr>;
}

/// How a subquery's result is used.
#[derive(Clone, Debug, PartialEq)]
pub enum SubqueryKind {
    /// Its one value (NULL when it returns no row; 1242 when more than one).
    Scalar,
    /// Whether it returns a row.
    Exists { negated: bool },
    /// Whether `expr` (bound in the enclosing query) equals a value it returns.
    In { expr: Expr, negated: bool },
}

/// Binds expressions of one query block.
pub struct Binder<'a> {
    pub scope: &'a Scope,
    /// The enclosing query's scope, for a correlated subquery.
    pub outer: Option<&'a OuterScope<'a>>,
    /// Receives subqueries; None where subqueries are not supported.
    pub subqueries: Option<&'a dyn SubqueryPlanner>,
    /// Aggregate calls met so far; `Expr::Agg(i)` refers to `aggs[i]`.
    pub aggs: Vec<AggCall>,
    pub allow_aggregates: bool,
    /// Window calls met so far; `Expr::Window(i)` refers to `windows[i]`.
    pub windows: Vec<crate::planner::window::WindowCall>,
    /// Whether window functions may appear (the select list and ORDER BY of a query block).
    pub allow_windows: bool,
    /// The query block's WINDOW clause.
    pub named_windows: &'a [ast::NamedWindowDefinition],
    /// Clause named in "Unknown column" errors.
    pub context: &'static str,
}

impl<'a> Binder<'a> {
    pub fn new(scope: &'a Scope, context: &'static str) -> Binder<'a> {
        Binder {
            scope,
            outer: None,
            subqueries: None,
            aggs: Vec::new(),
            allow_aggregates: false,
            windows: Vec::new(),
            allow_windows: false,
            named_windows: &[],
            context,
        }
    }

    pub fn bind(&mut self, e: &ast::Expr) -> Result<Expr> {
        use ast::Expr as A;
        Ok(match e {
            A::Identifier(ident) => self.identifier(None, ident)?,
            A::CompoundIdentifier(parts) => match parts.as_slice() {
                [scope, name] if scope.value.starts_with("@@") => system_variable(&name.value),
                [table, column] => self.identifier(Some(&table.value), column)?,
                [_db, table, column] => self.identifier(Some(&table.value), column)?,
                _ => return Err(error::unsupported(e)),
            },
            A::Value(v) => value_expr(&v.value)?,
            // A character set introducer (`_binary'…'`, `_utf8mb4'…'`): the string's bytes as
            // they are, which is what every string already holds. MySQL reads an unknown name
            // as a column.
            A::Prefixed { prefix, value } if matches!(**value, A::Value(_)) => {
                let charset = prefix.value.strip_prefix('_').unwrap_or_default();
                let charset = charset.to_ascii_lowercase();
                if !crate::charset::is_known(&charset) {
                    return Err(error::unknown_column(&prefix.value, self.context));
                }
                match self.bind(value)? {
                    // `_binary X'…'` is a binary string already.
                    Expr::Call(Func::CastBinary, args) => Expr::Call(Func::CastBinary, args),
                    text if charset == "binary" => Expr::Call(Func::CastBinary, vec![text]),
                    text => text,
                }
            }
            A::Nested(inner) => self.bind(inner)?,
            A::UnaryOp { op, expr } => {
                let inner = self.bind(expr)?;
                match op {
                    ast::UnaryOperator::Minus => match inner {
                        Expr::Literal(Datum::Int(i)) => Expr::Literal(Datum::Int(-i)),
                        Expr::Literal(Datum::Decimal(d)) => Expr::Literal(Datum::Decimal(-d)),
                        other => Expr::Neg(Box::new(other)),
                    },
                    ast::UnaryOperator::Plus => inner,
                    ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => {
                        Expr::Not(Box::new(inner))
                    }
                    // `~x` is x with all 64 bits flipped.
                    ast::UnaryOperator::PGBitwiseNot => Expr::Binary(
                        BinaryOp::BitXor,
                        Box::new(inner),
                        Box::new(Expr::Literal(Datum::UInt(u64::MAX))),
                    ),
                    _ => return Err(error::unsupported(op)),
                }
            }
            A::BinaryOp { left, op, right } if interval_operand(op, left, right).is_some() => {
                let (date, interval, subtract) =
                    interval_operand(op, left, right).expect("checked by the guard");
                self.date_add(date, interval, subtract)?
            }
            // `doc -> path` and `doc ->> path`.
            A::BinaryOp {
                left,
                op: op @ (ast::BinaryOperator::Arrow | ast::BinaryOperator::LongArrow),
                right,
            } => {
                let func = match op {
                    ast::BinaryOperator::Arrow => crate::expr::JsonFunc::Extract,
                    _ => crate::expr::JsonFunc::ExtractText,
                };
                Expr::Call(Func::Json(func), vec![self.bind(left)?, self.bind(right)?])
            }
            // `@name := value`.
            A::BinaryOp {
                left,
                op: ast::BinaryOperator::Assignment,
                right,
            } => match left.as_ref() {
                A::Identifier(ident)
                    if ident.quote_style.is_none() && ident.value.starts_with('@') =>
                {
                    let name = ident.value[1..].to_ascii_lowercase();
                    if name.is_empty() || name.starts_with('@') {
                        return Err(error::syntax("near ':='"));
                    }
                    Expr::Call(Func::SetUserVariable(name), vec![self.bind(right)?])
                }
                _ => return Err(error::syntax("near ':='")),
            },
            A::BinaryOp { left, op, right } => {
                let op = binary_op(op)?;
                Expr::Binary(op, Box::new(self.bind(left)?), Box::new(self.bind(right)?))
            }
            A::IsNull(inner) => Expr::IsNull(Box::new(self.bind(inner)?), false),
            A::IsNotNull(inner) => Expr::IsNull(Box::new(self.bind(inner)?), true),
            A::IsTrue(inner) => Expr::IsTrue(Box::new(self.bind(inner)?), false),
            A::IsNotTrue(inner) => Expr::IsTrue(Box::new(self.bind(inner)?), true),
            A::IsFalse(inner) => Expr::Binary(
                BinaryOp::NullSafeEq,
                Box::new(Expr::IsTrue(Box::new(self.bind(inner)?), true)),
                Box::new(Expr::Binary(
                    BinaryOp::Eq,
                    Box::new(Expr::IsNull(Box::new(self.bind(inner)?), true)),
                    Box::new(Expr::Literal(Datum::Int(1))),
                )),
            ),
            A::Between {
                expr,
                negated,
                low,
                high,
            } => Expr::Between {
                expr: Box::new(self.bind(expr)?),
                low: Box::new(self.bind(low)?),
                high: Box::new(self.bind(high)?),
                negated: *negated,
            },
            A::InList {
                expr,
                list,
                negated,
            } => match expr.as_ref() {
                A::Tuple(items) => {
                    let exprs = items
                        .iter()
                        .map(|i| self.bind(i))
                        .collect::<Result<Vec<_>>>()?;
                    let mut tuples = Vec::with_capacity(list.len());
                    for entry in list {
                        match entry {
                            A::Tuple(values) if values.len() == exprs.len() => tuples.push(
                                values
                                    .iter()
                                    .map(|v| self.bind(v))
                                    .collect::<Result<Vec<_>>>()?,
                            ),
                            _ => return Err(error::operand_columns(exprs.len())),
                        }
                    }
                    Expr::TupleIn {
                        exprs,
                        list: tuples,
                        negated: *negated,
                    }
                }
                _ => Expr::InList {
                    expr: Box::new(self.bind(expr)?),
                    list: list.iter().map(|i| self.bind(i)).collect::<Result<_>>()?,
                    negated: *negated,
                },
            },
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                ..
            } => {
                let escape = match escape_char {
                    Some(ast::Value::SingleQuotedString(s)) if s.len() == 1 => s.as_bytes()[0],
                    _ => b'\\',
                };
                Expr::Like {
                    expr: Box::new(self.bind(expr)?),
                    pattern: Box::new(self.bind(pattern)?),
                    negated: *negated,
                    escape,
                }
            }
            A::Extract {
                field: ast::DateTimeField::Custom(unit),
                expr,
                ..
            } => {
                let unit = crate::expr::ExtractUnit::by_name(&unit.value).ok_or_else(|| {
                    error::syntax(format!("unknown unit {} in EXTRACT", unit.value))
                })?;
                Expr::Call(
                    Func::Date(crate::expr::DateFunc::Extract(unit)),
                    vec![self.bind(expr)?],
                )
            }
            A::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let args = vec![self.bind(expr)?, self.bind(pattern)?];
                let matched = Expr::Call(Func::Regexp(crate::expr::RegexpFunc::Like), args);
                if *negated {
                    Expr::Not(Box::new(matched))
                } else {
                    matched
                }
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => Expr::Case {
                operand: operand
                    .as_ref()
                    .map(|o| self.bind(o).map(Box::new))
                    .transpose()?,
                whens: conditions
                    .iter()
                    .map(|w| Ok((self.bind(&w.condition)?, self.bind(&w.result)?)))
                    .collect::<Result<_>>()?,
                otherwise: else_result
                    .as_ref()
                    .map(|o| self.bind(o).map(Box::new))
                    .transpose()?,
            },
            A::Function(f) => self.function(f)?,
            A::Cast {
                expr, data_type, ..
            } => Expr::Call(
                crate::datatype::cast_func(data_type)?,
                vec![self.bind(expr)?],
            ),
            A::Convert {
                expr,
                data_type: Some(data_type),
                ..
            } => Expr::Call(
                crate::datatype::cast_func(data_type)?,
                vec![self.bind(expr)?],
            ),
            // CONVERT(x USING utf8mb4): text is UTF-8 (or bytes, for binary) already.
            A::Convert {
                expr,
                data_type: None,
                charset: Some(charset),
                ..
            } if matches!(
                charset.to_string().to_ascii_lowercase().as_str(),
                "utf8mb4" | "utf8" | "utf8mb3" | "binary" | "ascii" | "latin1"
            ) =>
            {
                let cast = if charset.to_string().eq_ignore_ascii_case("binary") {
                    Func::CastBinary
                } else {
                    Func::CastChar
                };
                Expr::Call(cast, vec![self.bind(expr)?])
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind(expr)?];
                args.push(match substring_from {
                    Some(f) => self.bind(f)?,
                    None => Expr::Literal(Datum::Int(1)),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?);
                }
                Expr::Call(Func::Substring, args)
            }
            A::Ceil { expr, .. } => Expr::Call(Func::Ceil, vec![self.bind(expr)?]),
            A::Floor { expr, .. } => Expr::Call(Func::Floor, vec![self.bind(expr)?]),
            A::Trim {
                expr,
                trim_where: None,
                trim_what: None,
                ..
            } => Expr::Call(Func::Trim, vec![self.bind(expr)?]),
            // `BINARY 'x'`: the string as a binary string.
            A::TypedString(typed)
                if matches!(
                    typed.data_type,
                    ast::DataType::Binary(_) | ast::DataType::Varbinary(_)
                ) =>
            {
                match value_expr(&typed.value.value)? {
                    Expr::Call(Func::CastBinary, args) => Expr::Call(Func::CastBinary, args),
                    other => Expr::Call(Func::CastBinary, vec![other]),
                }
            }
            A::TypedString(typed) => {
                let text = match &typed.value.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                };
                let ty = match typed.data_type {
                    ast::DataType::Date => SqlType::new(TypeKind::Date),
                    _ => SqlType {
                        scale: 6,
                        ..SqlType::new(TypeKind::DateTime)
                    },
                };
                Expr::Literal(ty.coerce(Datum::Bytes(text.into_bytes()), "literal")?)
            }
            A::Tuple(items) if items.len() == 1 => self.bind(&items[0])?,
            A::Tuple(items) => return Err(error::operand_columns(items.len().min(1))),
            A::Subquery(query) => self.subquery(query, SubqueryKind::Scalar)?,
            A::Exists { subquery, negated } => {
                self.subquery(subquery, SubqueryKind::Exists { negated: *negated })?
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let expr = self.bind(expr)?;
                self.subquery(
                    subquery,
                    SubqueryKind::In {
                        expr,
                        negated: *negated,
                    },
                )?
            }
            other => return Err(error::unsupported(other)),
        })
    }

    fn identifier(&self, table: Option<&str>, ident: &ast::Ident) -> Result<Expr> {
        let name = ident.value.as_str();
        if ident.quote_style.is_none() {
            if let Some(var) = name.strip_prefix("@@") {
                return Ok(system_variable(var));
            }
            if let Some(var) = name.strip_prefix('@') {
                return Ok(Expr::Session(SessionValue::UserVariable(
                    var.to_ascii_lowercase(),
                )));
            }
            if table.is_none() {
                match name.to_ascii_uppercase().as_str() {
                    "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" => {
                        return Ok(Expr::Session(SessionValue::Now(0)))
                    }
                    "CURRENT_DATE" => return Ok(Expr::Session(SessionValue::CurDate)),
                    "CURRENT_TIME" => return Ok(Expr::Session(SessionValue::CurTime(0))),
                    "CURRENT_USER" => return Ok(Expr::Session(SessionValue::CurrentUser)),
                    _ => {}
                }
            }
        }
        match self.scope.resolve(table, name, self.context) {
            Ok(i) => Ok(Expr::Column(i)),
            Err(e) if e.is_unknown_column() => match self.outer {
                Some(outer) => match outer.resolve(table, name, self.context)? {
                    Some((i, ty)) => Ok(Expr::Outer(i, Box::new(ty))),
                    None => Err(e),
                },
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    fn subquery(&mut self, query: &ast::Query, kind: SubqueryKind) -> Result<Expr> {
        match self.subqueries {
            Some(planner) => planner.plan(query, kind, self.scope),
            None => Err(error::unsupported("subqueries here")),
        }
    }

    /// The call of aggregate `func` with `args` (bound with aggregates disallowed).
    pub(crate) fn aggregate_call(
        &mut self,
        func: AggFunc,
        f: &ast::Function,
        args: &[ast::Expr],
        distinct: bool,
    ) -> Result<AggCall> {
        let mut bound = args
            .iter()
            .map(|a| self.bind(a))
            .collect::<Result<Vec<_>>>()?;
        let (mut separator, mut order_by) = (b",".to_vec(), Vec::new());
        if func == AggFunc::GroupConcat {
            if bound.is_empty() {
                return Err(error::syntax("GROUP_CONCAT needs an argument"));
            }
            if let FunctionArguments::List(list) = &f.args {
                for clause in &list.clauses {
                    match clause {
                        ast::FunctionArgumentClause::Separator(v) => {
                            separator = match value_expr(v)? {
                                Expr::Literal(d) => crate::types::datum_to_text(&d),
                                Expr::Call(Func::CastBinary, args) => match args.as_slice() {
                                    [Expr::Literal(d)] => crate::types::datum_to_text(d),
                                    _ => return Err(error::syntax("SEPARATOR needs a string")),
                                },
                                _ => return Err(error::syntax("SEPARATOR needs a string")),
                            };
                        }
                        ast::FunctionArgumentClause::OrderBy(items) => {
                            for item in items {
                                let e = self.bind(&item.expr)?;
                                order_by.push((e, item.options.asc == Some(false)));
                            }
                        }
                        other => return Err(error::unsupported(other)),
                    }
                }
            }
        }
        let wanted = match func {
            AggFunc::JsonObjectAgg => Some(2),
            AggFunc::JsonArrayAgg => Some(1),
            _ => None,
        };
        if wanted.is_some_and(|n| n != bound.len()) {
            return Err(crate::error::Error::new(
                1582,
                "42000",
                format!(
                    "Incorrect parameter count in the call to native function '{}'",
                    f.name
                ),
            ));
        }
        let arg = match (func, bound.len()) {
            // Several values are concatenated; a row with any of them NULL is skipped.
            (AggFunc::GroupConcat, n) if n > 1 => Expr::Call(Func::Concat, bound),
            // Every value counts, NULL as null: as JSON, none is NULL.
            (AggFunc::JsonArrayAgg, _) => self.json_value(bound.swap_remove(0)),
            (AggFunc::JsonObjectAgg, _) => {
                let value = self.json_value(bound.pop().expect("two arguments"));
                let key = bound.pop().expect("two arguments");
                Expr::Call(
                    Func::Json(crate::expr::JsonFunc::Array),
                    vec![self.json_value(key), value],
                )
            }
            (_, 0) => Expr::Literal(Datum::Int(1)),
            _ => bound.swap_remove(0),
        };
        Ok(AggCall {
            func,
            arg,
            distinct,
            separator,
            order_by,
        })
    }

    /// `date ± INTERVAL amount unit`.
    fn date_add(
        &mut self,
        date: &ast::Expr,
        interval: &ast::Interval,
        subtract: bool,
    ) -> Result<Expr> {
        let unit = interval
            .leading_field
            .as_ref()
            .filter(|_| interval.last_field.is_none())
            .and_then(crate::expr::IntervalUnit::from_field)
            .ok_or_else(|| error::unsupported(format!("INTERVAL {interval}")))?;
        let amount = self.bind(&interval.value)?;
        let amount = if subtract {
            Expr::Neg(Box::new(amount))
        } else {
            amount
        };
        Ok(Expr::Call(
            Func::Date(crate::expr::DateFunc::Add(unit)),
            vec![self.bind(date)?, amount],
        ))
    }

    fn function(&mut self, f: &ast::Function) -> Result<Expr> {
        let name = f.name.to_string().to_ascii_uppercase();
        let (args, distinct, star) = match &f.args {
            FunctionArguments::None => (Vec::new(), false, false),
            FunctionArguments::Subquery(_) => return Err(error::unsupported("subqueries")),
            FunctionArguments::List(list) => {
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                let mut star = false;
                let mut args = Vec::new();
                for arg in &list.args {
                    match arg {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e.clone()),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => star = true,
                        other => return Err(error::unsupported(other)),
                    }
                }
                (args, distinct, star)
            }
        };
        if f.over.is_some() {
            return crate::planner::window::bind_call(self, &name, f, &args, distinct, star);
        }
        let agg = match name.as_str() {
            "COUNT" if star => Some(AggFunc::CountStar),
            "COUNT" => Some(AggFunc::Count),
            "SUM" => Some(AggFunc::Sum),
            "AVG" => Some(AggFunc::Avg),
            "MIN" => Some(AggFunc::Min),
            "MAX" => Some(AggFunc::Max),
            "GROUP_CONCAT" => Some(AggFunc::GroupConcat),
            "VAR_POP" | "VARIANCE" => Some(AggFunc::VarPop),
            "VAR_SAMP" => Some(AggFunc::VarSamp),
            "STDDEV_POP" | "STDDEV" | "STD" => Some(AggFunc::StdPop),
            "STDDEV_SAMP" => Some(AggFunc::StdSamp),
            "BIT_AND" => Some(AggFunc::BitAnd),
            "BIT_OR" => Some(AggFunc::BitOr),
            "BIT_XOR" => Some(AggFunc::BitXor),
            "ANY_VALUE" => Some(AggFunc::AnyValue),
            "JSON_ARRAYAGG" => Some(AggFunc::JsonArrayAgg),
            "JSON_OBJECTAGG" => Some(AggFunc::JsonObjectAgg),
            _ => None,
        };
        if let Some(func) = agg {
            if !self.allow_aggregates {
                return Err(error::invalid_group_use());
            }
            // Aggregates do not nest, nor take window functions.
            self.allow_aggregates = false;
            let windows = std::mem::replace(&mut self.allow_windows, false);
            let bound = self.aggregate_call(func, f, &args, distinct);
            self.allow_aggregates = true;
            self.allow_windows = windows;
            let call = bound?;
            let index = match self.aggs.iter().position(|c| *c == call) {
                Some(i) => i,
                None => {
                    self.aggs.push(call);
                    self.aggs.len() - 1
                }
            };
            return Ok(Expr::Agg(index));
        }
        if let ("TIMESTAMPDIFF" | "TIMESTAMPADD", [ast::Expr::Identifier(unit), a, b]) =
            (name.as_str(), args.as_slice())
        {
            let unit = crate::expr::IntervalUnit::from_name(&unit.value)
                .ok_or_else(|| error::syntax(format!("near '{unit}' in {name}")))?;
            return Ok(if name == "TIMESTAMPDIFF" {
                Expr::Call(
                    Func::Date(crate::expr::DateFunc::Diff(unit)),
                    vec![self.bind(a)?, self.bind(b)?],
                )
            } else {
                // TIMESTAMPADD(unit, amount, date).
                Expr::Call(
                    Func::Date(crate::expr::DateFunc::Add(unit)),
                    vec![self.bind(b)?, self.bind(a)?],
                )
            });
        }
        if let ("DATE_ADD" | "ADDDATE" | "DATE_SUB" | "SUBDATE", [date, amount]) =
            (name.as_str(), args.as_slice())
        {
            let subtract = name.ends_with("SUB") || name == "SUBDATE";
            return match amount {
                ast::Expr::Interval(interval) => self.date_add(date, interval, subtract),
                // ADDDATE(date, days).
                days if name.ends_with("DATE") => {
                    let interval = ast::Interval {
                        value: Box::new(days.clone()),
                        leading_field: Some(ast::DateTimeField::Day),
                        leading_precision: None,
                        last_field: None,
                        fractional_seconds_precision: None,
                    };
                    self.date_add(date, &interval, subtract)
                }
                _ => Err(error::syntax(format!("{name} needs an INTERVAL"))),
            };
        }
        let session = |v| Ok(Expr::Session(v));
        match name.as_str() {
            "DATABASE" | "SCHEMA" => return session(SessionValue::Database),
            "LAST_INSERT_ID" if args.is_empty() => return session(SessionValue::LastInsertId),
            "CONNECTION_ID" => return session(SessionValue::ConnectionId),
            "USER" | "SESSION_USER" | "SYSTEM_USER" => return session(SessionValue::User),
            "CURRENT_USER" => return session(SessionValue::CurrentUser),
            "CURRENT_ROLE" => return session(SessionValue::CurrentRole),
            "VERSION" => return session(SessionValue::Version),
            "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" | "SYSDATE"
            | "CURTIME" | "CURRENT_TIME" => {
                let fsp = match args.as_slice() {
                    [] => 0,
                    [fsp] => match self.bind(fsp)? {
                        Expr::Literal(d) => crate::types::to_i64(&d).unwrap_or(-1),
                        _ => -1,
                    },
                    _ => -1,
                };
                return match u8::try_from(fsp) {
                    Ok(fsp) if fsp <= 6 && name.starts_with("CUR") => {
                        session(SessionValue::CurTime(fsp))
                    }
                    Ok(fsp) if fsp <= 6 => session(SessionValue::Now(fsp)),
                    _ => Err(crate::error::Error::new(
                        1426,
                        "42000",
                        format!(
                            "Too-big precision {fsp} specified for '{}'. Maximum is 6.",
                            name.to_ascii_lowercase()
                        ),
                    )),
                };
            }
            // The character set and collation of a value: text is the connection's, anything
            // else binary.
            "CHARSET" | "COLLATION" if args.len() == 1 => {
                let arg = self.bind(&args[0])?;
                let ty = crate::expr::result_type(&arg, &self.scope.types(), &self.aggs);
                let text = matches!(
                    ty.column_type,
                    crate::api::ColumnType::VarString
                        | crate::api::ColumnType::String
                        | crate::api::ColumnType::Blob
                );
                let answer = match (name.as_str(), text) {
                    ("CHARSET", true) => "utf8mb4",
                    ("COLLATION", true) => "utf8mb4_bin",
                    _ => "binary",
                };
                return Ok(Expr::Literal(Datum::Bytes(answer.as_bytes().to_vec())));
            }
            "CURDATE" | "CURRENT_DATE" => return session(SessionValue::CurDate),
            "FOUND_ROWS" => return session(SessionValue::FoundRows),
            "ROW_COUNT" => return session(SessionValue::RowCount),
            _ => {}
        }
        let func = match name.as_str() {
            "CONCAT" => Func::Concat,
            "LENGTH" | "OCTET_LENGTH" => Func::Length,
            "CHAR_LENGTH" | "CHARACTER_LENGTH" => Func::CharLength,
            "UPPER" | "UCASE" => Func::Upper,
            "LOWER" | "LCASE" => Func::Lower,
            "SUBSTRING" | "SUBSTR" | "MID" => Func::Substring,
            "ABS" => Func::Abs,
            "ROUND" => Func::Round,
            "FLOOR" => Func::Floor,
            "CEIL" | "CEILING" => Func::Ceil,
            "POWER" | "POW" => Func::Power,
            "SQRT" => Func::Sqrt,
            "COALESCE" => Func::Coalesce,
            "IFNULL" => Func::Coalesce,
            "IF" => Func::If,
            "NULLIF" => Func::NullIf,
            "GREATEST" => Func::Greatest,
            "LEAST" => Func::Least,
            "MOD" => Func::Mod,
            "TRIM" => Func::Trim,
            "SLEEP" => Func::Sleep,
            "GROUPING" => Func::Grouping,
            "DATE" => Func::CastDate,
            other => {
                if let Some(f) = crate::expr::StrFunc::by_name(other) {
                    Func::Str(f)
                } else if let Some(f) = crate::expr::MathFunc::by_name(other) {
                    Func::Math(f)
                } else if let Some(f) = crate::expr::DateFunc::by_name(other) {
                    Func::Date(f)
                } else if let Some(f) = crate::expr::TimeFunc::by_name(other) {
                    Func::Time(f)
                } else if let Some(f) = crate::expr::RegexpFunc::by_name(other) {
                    Func::Regexp(f)
                } else if let Some(f) = crate::expr::EncodingFunc::by_name(other) {
                    Func::Encoding(f)
                } else if let Some(f) = crate::expr::JsonFunc::by_name(other) {
                    Func::Json(f)
                } else {
                    return Err(crate::error::Error::new(
                        1305,
                        "42000",
                        format!("FUNCTION {name} does not exist"),
                    ));
                }
            }
        };
        let arity_ok = match func {
            Func::If => args.len() == 3,
            Func::NullIf | Func::Power | Func::Mod => args.len() == 2,
            Func::Substring => args.len() == 2 || args.len() == 3,
            Func::Round => args.len() == 1 || args.len() == 2,
            Func::Concat | Func::Coalesce | Func::Greatest | Func::Least | Func::Grouping => {
                !args.is_empty()
            }
            Func::Str(f) => f.arity_ok(args.len()),
            Func::Math(f) => f.arity_ok(args.len()),
            Func::Date(f) => f.arity_ok(args.len()),
            Func::Time(f) => f.arity() == args.len(),
            Func::Regexp(f) => f.arity_ok(args.len()),
            Func::Encoding(f) => f.arity_ok(args.len()),
            Func::Json(f) => f.arity_ok(args.len()),
            _ => args.len() == 1,
        };
        if !arity_ok {
            return Err(crate::error::Error::new(
                1582,
                "42000",
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ));
        }
        let mut bound = args
            .iter()
            .map(|a| self.bind(a))
            .collect::<Result<Vec<_>>>()?;
        if matches!(func, Func::Upper | Func::Lower)
            && crate::expr::result_type(&bound[0], &self.scope.types(), &self.aggs).binary
        {
            // UPPER and LOWER change nothing in a binary string, as in MySQL.
            return Ok(bound.swap_remove(0));
        }
        if let Func::Json(f) = func {
            for (i, arg) in bound.iter_mut().enumerate() {
                if f.is_value_argument(i) {
                    *arg = self.json_value(std::mem::replace(arg, Expr::Literal(Datum::Null)));
                }
            }
        }
        Ok(Expr::Call(func, bound))
    }

    /// `e` as a JSON value: as it is when it is JSON already, else converted (text becomes a
    /// JSON string).
    fn json_value(&self, e: Expr) -> Expr {
        let ty = crate::expr::result_type(&e, &self.scope.types(), &self.aggs);
        if ty.column_type == crate::api::ColumnType::Json {
            e
        } else {
            Expr::Call(Func::Json(crate::expr::JsonFunc::FromScalar), vec![e])
        }
    }
}

fn system_variable(name: &str) -> Expr {
    let name = name
        .strip_prefix("session.")
        .or_else(|| name.strip_prefix("global."))
        .unwrap_or(name);
    let name = name
        .strip_prefix("SESSION.")
        .or_else(|| name.strip_prefix("GLOBAL."))
        .unwrap_or(name);
    Expr::Session(SessionValue::SystemVariable(name.to_ascii_lowercase()))
}

fn binary_op(op: &ast::BinaryOperator) -> Result<BinaryOp> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Plus => BinaryOp::Plus,
        B::Minus => BinaryOp::Minus,
        B::Multiply => BinaryOp::Multiply,
        B::Divide => BinaryOp::Divide,
        B::Modulo => BinaryOp::Modulo,
        B::MyIntegerDivide | B::DuckIntegerDivide => BinaryOp::IntDivide,
        B::Eq => BinaryOp::Eq,
        B::NotEq => BinaryOp::NotEq,
        B::Lt => BinaryOp::Lt,
        B::LtEq => BinaryOp::LtEq,
        B::Gt => BinaryOp::Gt,
        B::GtEq => BinaryOp::GtEq,
        B::Spaceship => BinaryOp::NullSafeEq,
        B::And => BinaryOp::And,
        B::Or => BinaryOp::Or,
        B::Xor => BinaryOp::Xor,
        B::BitwiseAnd => BinaryOp::BitAnd,
        B::BitwiseOr => BinaryOp::BitOr,
        B::BitwiseXor => BinaryOp::BitXor,
        B::PGBitwiseShiftLeft => BinaryOp::ShiftLeft,
        B::PGBitwiseShiftRight => BinaryOp::ShiftRight,
        other => return Err(error::unsupported(other)),
    })
}

/// Converts a literal.
pub fn value_expr(v: &ast::Value) -> Result<Expr> {
    use ast::Value as V;
    Ok(match v {
        V::Number(text, _) => Expr::Literal(number_literal(text)?),
        V::SingleQuotedString(s) | V::DoubleQuotedString(s) => {
            Expr::Literal(Datum::Bytes(crate::parser::bytes::literal_bytes(s)))
        }
        V::HexStringLiteral(h) => match crate::expr::unhex_bytes(h.as_bytes()) {
            // A binary string (its value is the literal's: the cast only types it).
            Some(bytes) => Expr::Call(Func::CastBinary, vec![Expr::Literal(Datum::Bytes(bytes))]),
            None => return Err(error::syntax(format!("near 'x'{h}''"))),
        },
        // b'101': a number here, so that it compares with and is stored in BIT columns as
        // one (MySQL's bit-value literal is a binary string that reads as that number).
        V::SingleQuotedByteStringLiteral(bits) => {
            if bits.is_empty() || bits.len() > 64 || bits.bytes().any(|b| b != b'0' && b != b'1') {
                return Err(error::syntax(format!("near 'b'{bits}''")));
            }
            Expr::Literal(Datum::UInt(
                u64::from_str_radix(bits, 2).map_err(error::syntax)?,
            ))
        }
        V::Boolean(b) => Expr::Literal(Datum::Int(*b as i64)),
        V::Null => Expr::Literal(Datum::Null),
        V::Placeholder(p) => {
            let n: usize = p
                .trim_start_matches('?')
                .parse()
                .map_err(|_| error::syntax(format!("near '{p}'")))?;
            Expr::Param(n.saturating_sub(1))
        }
        other => return Err(error::unsupported(other)),
    })
}

fn number_literal(text: &str) -> Result<Datum> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Datum::Int(i));
    }
    if let Ok(u) = text.parse::<u64>() {
        return Ok(Datum::UInt(u));
    }
    if text.contains(['e', 'E']) {
        return text.parse::<f64>().map(Datum::Float).map_err(error::syntax);
    }
    rust_decimal::Decimal::from_str_exact(text)
        .map(Datum::Decimal)
        .or_else(|_| text.parse::<f64>().map(Datum::Float))
        .map_err(error::syntax)
}

/// The date, interval and direction of `date + INTERVAL …`, `INTERVAL … + date` or
/// `date - INTERVAL …`.
fn interval_operand<'e>(
    op: &ast::BinaryOperator,
    left: &'e ast::Expr,
    right: &'e ast::Expr,
) -> Option<(&'e ast::Expr, &'e ast::Interval, bool)> {
    match (op, left, right) {
        (ast::BinaryOperator::Plus, date, ast::Expr::Interval(i))
        | (ast::BinaryOperator::Plus, ast::Expr::Interval(i), date) => Some((date, i, false)),
        (ast::BinaryOperator::Minus, date, ast::Expr::Interval(i)) => Some((date, i, true)),
        _ => None,
    }
}

/// Converts a constant expression to a datum (for DEFAULT clauses).
pub fn constant(e: &ast::Expr) -> Result<Datum> {
    let scope = Scope::default();
    let expr = Binder::new(&scope, "field list").bind(e)?;
    expr.eval(&[], &crate::expr::ParamsEnv(&[]))
}

/// The text of a datum, for catalog defaults.
pub fn datum_text(d: &Datum) -> Option<String> {
    match d {
        Datum::Null => None,
        other => Some(String::from_utf8_lossy(&types::datum_to_text(other)).into_owned()),
    }
}
