//! Views: a SELECT stored under a name that queries read like a table.
//!
//! CREATE VIEW plans the SELECT once, to check it and to fix the view's column names (the
//! column list, or the names the select list gives), and stores its text ([`ViewDef`]). A
//! query that names the view reads it as a derived table: the stored text is parsed and
//! planned again, against the current schema, with the view's database for unqualified
//! names. A view whose tables or columns are gone is error 1356 when read, as in MySQL.
//!
//! INSERT, UPDATE and DELETE through a view over one table write that table (write.rs);
//! through other views they get MySQL's errors for views that cannot be written (1471,
//! 1288).

use sqlparser::ast::{self, TableFactor};

use crate::api::Output;
use crate::catalog::{PrimaryKey, Schema, TableDef, ViewDef};
use crate::ddl::Existing;
use crate::error::{self, Error, Result};
use crate::planner::join::RelationSource;
use crate::planner::physical::SelectPlan;
use crate::planner::query::{self, PlanContext};
use crate::session::Session;
use crate::show::{ok, rows, text, text_column};

mod write;

pub use write::through_view;

/// Views read inside views, at most (deeper nesting is taken for recursion).
const VIEW_NESTING_MAX: usize = 32;

/// ER_VIEW_INVALID.
fn invalid(view: &ViewDef) -> Error {
    Error::new(
        1356,
        "HY000",
        format!(
            "View '{}.{}' references invalid table(s) or column(s) or function(s) or \
             definer/invoker of view lack rights to use them",
            view.database, view.name
        ),
    )
}

/// ER_VIEW_RECURSIVE.
const RECURSIVE_CODE: u16 = 1462;

/// CREATE [OR REPLACE] VIEW and ALTER VIEW (`existing` says which).
pub fn execute_create(
    session: &mut Session,
    name: &ast::ObjectName,
    columns: &[ast::Ident],
    query: &ast::Query,
    existing: Existing,
    if_not_exists: bool,
) -> Result<Output> {
    session.implicit_commit()?;
    let catalog = session.server().catalog().clone();
    let schema = catalog.schema();
    let check_option = session.extras().view_check_option.clone();
    let def = define(
        &schema,
        session.current_database(),
        name,
        columns,
        query,
        check_option.as_deref(),
    )?;
    if if_not_exists && schema.view(&def.database, &def.name).is_some() {
        return Ok(ok());
    }
    catalog.create_view(def, existing).map(|()| ok())
}

/// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view).
pub fn show_create(session: &Session, name: &ast::ObjectName) -> Result<Output> {
    let (db, name) = query::split_name(name, session.current_database())?;
    let schema = session.server().catalog().schema();
    let Some(view) = schema.view(&db, &name) else {
        return Err(match schema.table(&db, &name) {
            Ok(table) => Error::new(1347, "HY000", format!("'{db}.{}' is not VIEW", table.name)),
            Err(e) => e,
        });
    };
    let columns = [
        "View",
        "Create View",
        "character_set_client",
        "collation_connection",
    ];
    Ok(rows(
        columns.iter().map(|c| text_column(c)).collect(),
        vec![vec![
            text(&view.name),
            text(create_statement(view)),
            text("utf8mb4"),
            text("utf8mb4_bin"),
        ]],
    ))
}

/// The definition CREATE VIEW or ALTER VIEW gives: `query` checked against `schema`, the
/// columns named by `columns` or by the select list.
pub fn define(
    schema: &Schema,
    current_database: Option<&str>,
    name: &ast::ObjectName,
    columns: &[ast::Ident],
    query: &ast::Query,
    check_option: Option<&str>,
) -> Result<ViewDef> {
    let (database, name) = query::split_name(name, current_database)?;
    if !schema.databases.contains_key(&database) {
        return Err(error::unknown_database(&database));
    }
    let plan = query::plan_select(query, schema, Some(&database))?;
    let source_columns: Vec<String> = plan.columns.iter().map(|c| c.name.clone()).collect();
    let names: Vec<String> = if columns.is_empty() {
        source_columns.clone()
    } else if columns.len() != plan.columns.len() {
        return Err(Error::new(
            1353,
            "HY000",
            "In definition of view, derived table or common table expression, SELECT list and \
             column names list have different column counts",
        ));
    } else {
        columns.iter().map(|c| c.value.clone()).collect()
    };
    for (i, column) in names.iter().chain(&source_columns).enumerate() {
        let earlier = if i < names.len() {
            &names[..i]
        } else {
            &source_columns[..i - names.len()]
        };
        if earlier.iter().any(|n| n.eq_ignore_ascii_case(column)) {
            return Err(Error::new(
                1060,
                "42S21",
                format!("Duplicate column name '{column}'"),
            ));
        }
    }
    Ok(ViewDef {
        database,
        name,
        columns: names,
        source_columns,
        column_list: !columns.is_empty(),
        definition: query.to_string(),
        check_option: check_option.unwrap_or("NONE").to_string(),
    })
}

/// The view a FROM item names, planned as a derived table under the item's alias or the
/// view's name; None when the item names no view.
pub fn resolve(factor: &TableFactor, cx: &PlanContext) -> Result<Option<(String, RelationSource)>> {
    let (schema, database) = (cx.schema, cx.database);
    let TableFactor::Table {
        name,
        alias,
        args: None,
        ..
    } = factor
    else {
        return Ok(None);
    };
    let (db, table) = match query::qualified_name(name)? {
        (Some(db), table) => (db, table),
        (None, table) => match database {
            Some(db) => (db.to_string(), table),
            None => return Ok(None),
        },
    };
    let Some(view) = schema.view(&db, &table) else {
        return Ok(None);
    };
    let plan = plan(view, cx)?;
    let alias = alias
        .as_ref()
        .map_or_else(|| view.name.clone(), |a| a.name.value.clone());
    Ok(Some((alias, RelationSource::Derived(Box::new(plan)))))
}

/// Plans the stored SELECT of `view`, its columns named as the view's.
fn plan(view: &ViewDef, cx: &PlanContext) -> Result<SelectPlan> {
    if cx.view_depth >= VIEW_NESTING_MAX {
        return Err(Error::new(
            RECURSIVE_CODE,
            "HY000",
            format!(
                "`{}`.`{}` contains view recursion",
                view.database, view.name
            ),
        ));
    }
    // The definition names tables in the view's database, and sees none of the CTEs of
    // the query that reads the view.
    let inside = PlanContext {
        view_depth: cx.view_depth + 1,
        live: cx.live,
        ..PlanContext::new(cx.schema, Some(&view.database))
    };
    let planned = plan_definition(view, &inside);
    let mut plan = match planned {
        Ok(plan) => plan,
        Err(e) if e.code() == RECURSIVE_CODE => return Err(e),
        Err(_) => return Err(invalid(view)),
    };
    if plan.columns.len() != view.columns.len() {
        return Err(invalid(view));
    }
    let mut columns = plan.columns.to_vec();
    for (column, name) in columns.iter_mut().zip(&view.columns) {
        column.name.clone_from(name);
    }
    plan.columns = columns.into();
    Ok(plan)
}

/// Plans the stored SELECT. The columns were fixed at creation: when the SELECT now gives
/// others (a `SELECT *` over a table that gained a column), the view reads the ones it had,
/// by name, from the SELECT as a derived table; one that is gone fails the plan.
fn plan_definition(view: &ViewDef, cx: &PlanContext) -> Result<SelectPlan> {
    let plan = query::plan_select_in(&parse_definition(&view.definition)?, cx, None)?;
    let same = plan.columns.len() == view.source_columns.len()
        && plan
            .columns
            .iter()
            .zip(&view.source_columns)
            .all(|(c, s)| c.name.eq_ignore_ascii_case(s));
    if same || view.source_columns.is_empty() {
        return Ok(plan);
    }
    let columns: Vec<String> = view.source_columns.iter().map(|c| quote(c)).collect();
    let narrowed = format!(
        "SELECT {} FROM ({}) AS {}",
        columns.join(", "),
        view.definition,
        quote(&view.name)
    );
    query::plan_select_in(&parse_definition(&narrowed)?, cx, None)
}

fn parse_definition(definition: &str) -> Result<ast::Query> {
    let mut statements = crate::parser::parse(definition)?.into_sql()?;
    match statements.pop() {
        Some(ast::Statement::Query(query)) if statements.is_empty() => Ok(*query),
        _ => Err(error::internal("a view's definition is not a SELECT")),
    }
}

/// The view's columns as a table's (for DESCRIBE and information_schema.COLUMNS), typed
/// by a plan of its SELECT against `schema`.
pub fn table_def(view: &ViewDef, schema: &Schema) -> Result<TableDef> {
    let plan = plan(view, &PlanContext::new(schema, None))?;
    let columns = plan
        .columns
        .iter()
        .zip(&plan.result_types)
        .zip(1..)
        .map(|((info, ty), id)| crate::create_as::query_column(schema, info, ty, id))
        .collect::<Vec<_>>();
    Ok(TableDef {
        id: 0,
        database: view.database.clone(),
        name: view.name.clone(),
        next_column_id: columns.len() as i64 + 1,
        columns,
        primary_key: PrimaryKey::RowId,
        indexes: Vec::new(),
        comment: "VIEW".to_string(),
    })
}

/// What SHOW CREATE VIEW shows: the statement that would create the view again.
pub fn create_statement(view: &ViewDef) -> String {
    let columns = if view.column_list {
        let names: Vec<String> = view.columns.iter().map(|c| quote(c)).collect();
        format!(" ({})", names.join(","))
    } else {
        String::new()
    };
    let check = match view.check_option.as_str() {
        "NONE" => String::new(),
        mode => format!(" WITH {mode} CHECK OPTION"),
    };
    format!(
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW {}{columns} AS \
         {}{check}",
        quote(&view.name),
        view.definition
    )
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The error of an INSERT (`statement` "INSERT"), UPDATE or DELETE whose target `db.name` is
/// a view; None when it is not one.
pub fn refuse_write(schema: &Schema, db: &str, name: &str, statement: &str) -> Option<Error> {
    let view = schema.view(db, name)?;
    Some(if statement == "INSERT" {
        Error::new(
            1471,
            "HY000",
            format!(
                "The target table {} of the INSERT is not insertable-into",
                view.name
            ),
        )
    } else {
        Error::new(
            1288,
            "HY000",
            format!(
                "The target table {} of the {statement} is not updatable",
                view.name
            ),
        )
    })
}
