//! Schema objects from their SQL definitions: a CREATE TABLE's columns, keys and defaults, as
//! CREATE TABLE and ALTER TABLE read them.

use sqlparser::ast;

use crate::catalog::{ColumnDef, DefaultValue, IndexDef, PrimaryKey, TableDef};
use crate::error::{self, Result};
use crate::planner::bind;

/// Longest identifier MySQL accepts.
const IDENTIFIER_MAX_CHARS: usize = 64;

pub(crate) fn check_identifier(name: &str) -> Result<()> {
    if name.is_empty() || name.chars().count() > IDENTIFIER_MAX_CHARS {
        return Err(crate::error::Error::new(
            1059,
            "42000",
            format!("Identifier name '{name}' is too long"),
        ));
    }
    Ok(())
}

/// Refuses a key on a column no index can hold (JSON, as MySQL refuses it).
pub(crate) fn indexable(column: &ColumnDef) -> Result<()> {
    if column.ty.kind == crate::types::TypeKind::Json {
        return Err(crate::error::Error::new(
            3152,
            "42000",
            format!(
                "JSON column '{}' supports indexing only via generated columns on a specified \
                 JSON path.",
                column.name
            ),
        ));
    }
    Ok(())
}

pub(crate) fn index_columns(columns: &[ast::IndexColumn]) -> Vec<String> {
    columns.iter().map(|c| expr_name(&c.column.expr)).collect()
}

fn expr_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => i.value.clone(),
        ast::Expr::CompoundIdentifier(parts) => {
            parts.last().map(|p| p.value.clone()).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

/// A column as its definition gives it, with the keys it declares on itself.
pub(crate) struct DefinedColumn {
    pub column: ColumnDef,
    pub primary: bool,
    pub unique: bool,
}

/// Reads one column definition (`name type [options]`), giving the column `id`.
pub(crate) fn column_definition(c: &ast::ColumnDef, id: i64) -> Result<DefinedColumn> {
    // SERIAL is BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE.
    let serial = matches!(&c.data_type, ast::DataType::Custom(name, modifiers)
        if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("serial"));
    let ty = if serial {
        crate::datatype::sql_type(&ast::DataType::BigIntUnsigned(None))?
    } else {
        crate::datatype::sql_type(&c.data_type)?
    };
    let mut column = ColumnDef {
        id,
        name: c.name.value.clone(),
        ty,
        nullable: !serial,
        default: None,
        auto_increment: serial,
        origin_default: None,
        write_only: false,
    };
    let (mut primary, mut unique) = (false, serial);
    for option in &c.options {
        match &option.option {
            ast::ColumnOption::Null => column.nullable = true,
            ast::ColumnOption::NotNull => column.nullable = false,
            ast::ColumnOption::Default(e) => column.default = Some(default_value(e)?),
            ast::ColumnOption::Unique {
                is_primary: true, ..
            } => {
                primary = true;
                column.nullable = false;
            }
            ast::ColumnOption::Unique {
                is_primary: false, ..
            } => unique = true,
            ast::ColumnOption::DialectSpecific(tokens) => {
                let text = tokens
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<String>()
                    .to_ascii_uppercase();
                if text.contains("AUTO_INCREMENT") {
                    column.auto_increment = true;
                }
            }
            ast::ColumnOption::Comment(_)
            | ast::ColumnOption::CharacterSet(_)
            | ast::ColumnOption::Collation(_) => {}
            ast::ColumnOption::OnUpdate(_) => {}
            other => return Err(error::unsupported(format!("column option {other}"))),
        }
    }
    check_default(&column)?;
    Ok(DefinedColumn {
        column,
        primary,
        unique,
    })
}

/// Refuses a default the column's type cannot hold, or NULL for a NOT NULL column (1067).
pub(crate) fn check_default(column: &ColumnDef) -> Result<()> {
    let invalid = || {
        crate::error::Error::new(
            1067,
            "42000",
            format!("Invalid default value for '{}'", column.name),
        )
    };
    match &column.default {
        Some(DefaultValue::Literal(Some(text))) => {
            column
                .ty
                .coerce(column.ty.stored_default(text), &column.name)
                .map_err(|_| invalid())?;
        }
        Some(DefaultValue::Literal(None)) if !column.nullable => return Err(invalid()),
        _ => {}
    }
    Ok(())
}

/// CREATE TABLE … LIKE: a new empty table with the columns statements see of `source`, its
/// keys and its comment (an ALTER TABLE under way on `source` is left out).
pub(crate) fn like_definition(source: &TableDef, db: &str, name: &str) -> TableDef {
    let kept: Vec<usize> = source.visible_columns().map(|(i, _)| i).collect();
    let position = |p: &usize| kept.iter().position(|k| k == p);
    let columns: Vec<ColumnDef> = kept
        .iter()
        .enumerate()
        .map(|(i, p)| ColumnDef {
            id: i as i64 + 1,
            origin_default: None,
            write_only: false,
            ..source.columns[*p].clone()
        })
        .collect();
    let positions = |cs: &[usize]| cs.iter().map(position).collect::<Option<Vec<usize>>>();
    let primary_key = match &source.primary_key {
        PrimaryKey::IntHandle(c) => {
            PrimaryKey::IntHandle(position(c).expect("a key column is kept"))
        }
        PrimaryKey::Clustered(cs) => {
            PrimaryKey::Clustered(positions(cs).expect("key columns are kept"))
        }
        PrimaryKey::RowId => PrimaryKey::RowId,
    };
    let indexes = source
        .indexes
        .iter()
        .filter(|i| i.public)
        .filter_map(|i| {
            Some(IndexDef {
                id: 0,
                columns: positions(&i.columns)?,
                public: true,
                readable_from_ts: 0,
                delete_only: false,
                ..i.clone()
            })
        })
        .collect();
    TableDef {
        id: 0,
        database: db.to_string(),
        name: name.to_string(),
        next_column_id: columns.len() as i64 + 1,
        columns,
        primary_key,
        indexes,
        comment: source.comment.clone(),
    }
}

/// The COMMENT among a CREATE TABLE's table options.
fn table_comment(create: &ast::CreateTable) -> String {
    let options = match &create.table_options {
        ast::CreateTableOptions::Plain(options)
        | ast::CreateTableOptions::With(options)
        | ast::CreateTableOptions::Options(options)
        | ast::CreateTableOptions::TableProperties(options) => options.as_slice(),
        _ => &[],
    };
    let from_options = options.iter().find_map(|o| match o {
        ast::SqlOption::Comment(
            ast::CommentDef::WithEq(text) | ast::CommentDef::WithoutEq(text),
        ) => Some(text.clone()),
        _ => None,
    });
    match (&create.comment, from_options) {
        (Some(ast::CommentDef::WithEq(text) | ast::CommentDef::WithoutEq(text)), _) => text.clone(),
        (None, Some(text)) => text,
        (None, None) => String::new(),
    }
}

/// `base`, or `base_2`, `base_3`, … if an index already has that name (as MySQL names a key
/// it was given no name for).
pub(crate) fn free_index_name(indexes: &[IndexDef], base: &str) -> String {
    let taken = |name: &str| indexes.iter().any(|i| i.name.eq_ignore_ascii_case(name));
    let mut name = base.to_string();
    let mut n = 2;
    while taken(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

/// Builds a table definition from CREATE TABLE.
pub(crate) fn table_definition(
    create: &ast::CreateTable,
    db: &str,
    name: &str,
) -> Result<TableDef> {
    let mut columns = Vec::with_capacity(create.columns.len());
    let mut primary: Option<Vec<String>> = None;
    let mut indexes: Vec<(String, Vec<String>, bool)> = Vec::new();
    for (i, c) in create.columns.iter().enumerate() {
        if columns
            .iter()
            .any(|x: &ColumnDef| x.name.eq_ignore_ascii_case(&c.name.value))
        {
            return Err(error::duplicate_column(&c.name.value));
        }
        let defined = column_definition(c, i as i64 + 1)?;
        let column = defined.column.name.clone();
        if defined.primary {
            if primary.is_some() {
                return Err(error::multiple_primary_keys());
            }
            primary = Some(vec![column.clone()]);
        }
        if defined.unique {
            indexes.push((column.clone(), vec![column], true));
        }
        columns.push(defined.column);
    }
    for constraint in &create.constraints {
        match constraint {
            ast::TableConstraint::PrimaryKey { columns: cs, .. } => {
                if primary.is_some() {
                    return Err(error::multiple_primary_keys());
                }
                primary = Some(index_columns(cs));
            }
            ast::TableConstraint::Unique {
                name: n,
                index_name,
                columns: cs,
                ..
            } => {
                let cols = index_columns(cs);
                let name = index_name
                    .as_ref()
                    .or(n.as_ref())
                    .map(|i| i.value.clone())
                    .unwrap_or_else(|| cols[0].clone());
                indexes.push((name, cols, true));
            }
            ast::TableConstraint::Index {
                name: n,
                columns: cs,
                ..
            } => {
                let cols = index_columns(cs);
                let name = n
                    .as_ref()
                    .map(|i| i.value.clone())
                    .unwrap_or_else(|| cols[0].clone());
                indexes.push((name, cols, false));
            }
            ast::TableConstraint::ForeignKey { .. } | ast::TableConstraint::Check { .. } => {}
            other => return Err(error::unsupported(format!("constraint {other}"))),
        }
    }
    let position = |n: &str| {
        let i = columns
            .iter()
            .position(|c: &ColumnDef| c.name.eq_ignore_ascii_case(n))
            .ok_or_else(|| {
                crate::error::Error::new(
                    1072,
                    "42000",
                    format!("Key column '{n}' doesn't exist in table"),
                )
            })?;
        indexable(&columns[i])?;
        Ok(i)
    };
    let primary_positions: Option<Vec<usize>> = match &primary {
        None => None,
        Some(cols) => Some(cols.iter().map(|c| position(c)).collect::<Result<_>>()?),
    };
    let mut index_defs = Vec::new();
    for (index_name, cols, unique) in indexes {
        let unique_name = free_index_name(&index_defs, &index_name);
        let positions = cols.iter().map(|c| position(c)).collect::<Result<_>>()?;
        index_defs.push(IndexDef {
            id: 0,
            name: unique_name,
            columns: positions,
            unique,
            public: true,
            readable_from_ts: 0,
            delete_only: false,
        });
    }
    let primary_key = match primary_positions {
        None => PrimaryKey::RowId,
        Some(positions) => {
            for p in &positions {
                columns[*p].nullable = false;
            }
            // An unsigned BIGINT does not fit the signed handle's order: it is clustered instead.
            let ty = &columns[positions[0]].ty;
            if positions.len() == 1
                && ty.is_integer()
                && !(ty.unsigned && ty.kind == crate::types::TypeKind::BigInt)
            {
                PrimaryKey::IntHandle(positions[0])
            } else {
                PrimaryKey::Clustered(positions)
            }
        }
    };
    let auto: Vec<&ColumnDef> = columns.iter().filter(|c| c.auto_increment).collect();
    if auto.len() > 1 {
        return Err(crate::error::Error::new(1075, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key"));
    }
    let next_column_id = columns.len() as i64 + 1;
    Ok(TableDef {
        id: 0,
        database: db.to_string(),
        name: name.to_string(),
        columns,
        primary_key,
        indexes: index_defs,
        next_column_id,
        comment: table_comment(create),
    })
}

pub(crate) fn default_value(e: &ast::Expr) -> Result<DefaultValue> {
    let is_now = match e {
        ast::Expr::Function(f) => matches!(
            f.name.to_string().to_ascii_uppercase().as_str(),
            "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIMESTAMP"
        ),
        ast::Expr::Identifier(i) => i.value.eq_ignore_ascii_case("CURRENT_TIMESTAMP"),
        _ => false,
    };
    if is_now {
        return Ok(DefaultValue::CurrentTimestamp);
    }
    let value = bind::constant(e)?;
    Ok(DefaultValue::Literal(bind::datum_text(&value)))
}

/// Column names of a CREATE INDEX.
pub fn create_index_columns(create: &ast::CreateIndex) -> Vec<String> {
    index_columns(&create.columns)
}
