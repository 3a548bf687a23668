//! The statements Strata composes for itself (a union ordered as a whole, the rows of CREATE
//! TABLE … SELECT, the value of `SET @v = (SELECT …)`, the rows CHECKSUM TABLE reads, CREATE
//! DATABASE read with MySQL's options), built as trees around the user's own
//! parts, never as text to parse again.

use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::ast::{
    Expr, GroupByExpr, Ident, Insert, ObjectName, Query, Select, SelectFlavor, SelectItem, SetExpr,
    Statement, TableAlias, TableFactor, TableObject, TableWithJoins, Values,
    WildcardAdditionalOptions,
};

/// `SELECT projection [FROM from]`, with no other clause.
pub fn select(projection: Vec<SelectItem>, from: Vec<TableWithJoins>) -> Query {
    let select = Select {
        select_token: AttachedToken::empty(),
        distinct: None,
        top: None,
        top_before_distinct: false,
        projection,
        exclude: None,
        into: None,
        from,
        lateral_views: Vec::new(),
        prewhere: None,
        selection: None,
        group_by: GroupByExpr::Expressions(Vec::new(), Vec::new()),
        cluster_by: Vec::new(),
        distribute_by: Vec::new(),
        sort_by: Vec::new(),
        having: None,
        named_window: Vec::new(),
        qualify: None,
        window_before_qualify: false,
        value_table_mode: None,
        connect_by: None,
        flavor: SelectFlavor::Standard,
    };
    query(SetExpr::Select(Box::new(select)))
}

/// `VALUES` with no rows: a placeholder body, cheap to make, for a tree taken apart.
pub fn no_rows() -> SetExpr {
    SetExpr::Values(Values {
        explicit_row: false,
        rows: Vec::new(),
    })
}

/// A query of `body` alone, with no other clause.
pub fn query(body: SetExpr) -> Query {
    Query {
        with: None,
        body: Box::new(body),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}

/// `SELECT expr`.
pub fn select_value(expr: Expr) -> Query {
    select(vec![SelectItem::UnnamedExpr(expr)], Vec::new())
}

/// The table `name [AS alias]` of a FROM, with no other clause.
pub fn table(name: ObjectName, alias: Option<TableAlias>) -> TableFactor {
    TableFactor::Table {
        name,
        alias,
        args: None,
        with_hints: Vec::new(),
        version: None,
        with_ordinality: false,
        partitions: Vec::new(),
        json_path: None,
        sample: None,
        index_hints: Vec::new(),
    }
}

/// `SELECT * FROM name`.
pub fn select_all(name: ObjectName) -> Query {
    let table = TableWithJoins {
        relation: table(name, None),
        joins: Vec::new(),
    };
    select(
        vec![SelectItem::Wildcard(WildcardAdditionalOptions::default())],
        vec![table],
    )
}

/// `CREATE DATABASE [IF NOT EXISTS] name`.
pub fn create_database(db_name: ObjectName, if_not_exists: bool) -> Statement {
    Statement::CreateDatabase {
        db_name,
        if_not_exists,
        location: None,
        managed_location: None,
        or_replace: false,
        transient: false,
        clone: None,
        data_retention_time_in_days: None,
        max_data_extension_time_in_days: None,
        external_volume: None,
        catalog: None,
        replace_invalid_characters: None,
        default_ddl_collation: None,
        storage_serialization_policy: None,
        comment: None,
        catalog_sync: None,
        catalog_sync_namespace_mode: None,
        catalog_sync_namespace_flatten_delimiter: None,
        with_tags: None,
        with_contacts: None,
    }
}

/// `(query) AS alias` as the one table of a FROM.
pub fn derived(query: Query, alias: &str) -> TableWithJoins {
    TableWithJoins {
        relation: TableFactor::Derived {
            lateral: false,
            subquery: Box::new(query),
            alias: Some(TableAlias {
                name: Ident::new(alias),
                columns: Vec::new(),
            }),
        },
        joins: Vec::new(),
    }
}

/// `INSERT INTO table (columns) source`.
pub fn insert_select(table: ObjectName, columns: Vec<Ident>, source: Query) -> Statement {
    Statement::Insert(Insert {
        or: None,
        ignore: false,
        into: true,
        table: TableObject::TableName(table),
        table_alias: None,
        columns,
        overwrite: false,
        source: Some(Box::new(source)),
        assignments: Vec::new(),
        partitioned: None,
        after_columns: Vec::new(),
        has_table_keyword: false,
        on: None,
        returning: None,
        replace_into: false,
        priority: None,
        insert_alias: None,
        settings: None,
        format_clause: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::ast::{Value, WildcardAdditionalOptions};

    /// What is built prints as the SQL it stands for, so it is the tree the parser would give.
    #[test]
    fn trees_print_as_their_sql() {
        let one = Expr::value(Value::Number("1".into(), false));
        assert_eq!(select_value(one.clone()).to_string(), "SELECT 1");
        let wrapped = select(
            vec![SelectItem::Wildcard(WildcardAdditionalOptions::default())],
            vec![derived(select_value(one), "u")],
        );
        assert_eq!(wrapped.to_string(), "SELECT * FROM (SELECT 1) AS u");
        let insert = insert_select(
            ObjectName::from(vec![Ident::new("db"), Ident::new("t")]),
            vec![Ident::new("a")],
            wrapped,
        );
        assert_eq!(
            insert.to_string(),
            "INSERT INTO db.t (a) SELECT * FROM (SELECT 1) AS u"
        );
    }
}
