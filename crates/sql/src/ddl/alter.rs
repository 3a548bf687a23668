//! ALTER TABLE (and CREATE INDEX, DROP INDEX, RENAME TABLE), online.
//!
//! The operations of one statement are applied in order to a [`Draft`] of the table, which
//! checks them all before anything is published. A change that only renames, re-defaults or
//! widens is then published in one step. A change that adds or drops a column, adds an index,
//! or narrows what a column accepts is made in two, as in F1 and TiDB:
//!
//! 1. The interim definition is published. An added column and a dropped one are *write-only*
//!    there: no statement names them and `*` leaves them out, but every write keeps their values
//!    (a new row gets the default), so a SQL node on this schema never loses what a node on the
//!    next one wrote. A new index is maintained by writes but not read. A narrowed column's new
//!    type is what writes must meet.
//!
//!    A new index reaches that state through one before it, *delete-only* (writes delete its
//!    entries but add none), published and waited for in the same way: a node that does not
//!    know the index rewrites a row without touching its entries, so while such a node may
//!    write, no node may add an entry that the rewrite would leave pointing at old values.
//! 2. Once no write planned with an older schema runs on any SQL node, the stored rows are
//!    checked against the narrowed columns and the new indexes are backfilled; then the target
//!    definition is published. A dropped column leaves the table (its values stay in the rows,
//!    under an id no column reuses) and its indexes' entries are deleted.
//!
//! If a step fails, the table's first definition is published again. A row stored before a
//! column was added holds no value for it and reads as the column's `origin_default`.
//! Changing a column's type is done where the stored values need no rewriting (widening, or
//! narrowing that every stored value meets); one that would rewrite them is refused.

use sqlparser::ast::{self, AlterColumnOperation, AlterTableOperation as Op, MySQLColumnPosition};
use strata_codec::{keys, Datum};
use strata_txn::TxnMode;

use super::define::{
    check_default, check_identifier, column_definition, default_value, free_index_name,
    index_columns, indexable,
};
use super::{Catalog, DDL_BATCH_ROWS};
use crate::catalog::{encode_json, table_key, ColumnDef, IndexDef, PrimaryKey, Schema, TableDef};
use crate::error::{self, Error, Result};
use crate::rows;
use crate::types::{SqlType, TypeKind};

/// A table's database and name.
pub type TableName = (String, String);

/// An index of the draft, by column ids (positions move while columns are added and dropped).
#[derive(Clone)]
struct DraftIndex {
    def: IndexDef,
    column_ids: Vec<i64>,
    /// Made by this statement: built in step 2.
    new: bool,
}

/// Which definition of a two-step change to build.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Step 1 before its new indexes are written: they are delete-only.
    DeleteOnly,
    /// Step 1: new indexes are written but not read; added and dropped columns write-only.
    WriteOnly,
    /// The end of the change.
    Done,
}

/// A table definition being changed by the operations of one statement.
struct Draft {
    base: std::sync::Arc<TableDef>,
    /// Columns in their new order, those being dropped included.
    columns: Vec<ColumnDef>,
    added: Vec<i64>,
    dropped: Vec<i64>,
    /// Columns whose stored values must meet their new definition.
    checked: Vec<i64>,
    /// Added NOT NULL columns for which no value can be made up: the table must be empty.
    need_empty: Vec<i64>,
    primary: Vec<i64>,
    indexes: Vec<DraftIndex>,
    dropped_indexes: Vec<i64>,
    next_column_id: i64,
    comment: String,
    /// The table's new database and name.
    rename: Option<(String, String)>,
    auto_increment: Option<u64>,
}

impl Draft {
    fn new(base: std::sync::Arc<TableDef>) -> Draft {
        let id_of = |p: &usize| base.columns[*p].id;
        Draft {
            columns: base.columns.clone(),
            added: Vec::new(),
            dropped: Vec::new(),
            checked: Vec::new(),
            need_empty: Vec::new(),
            primary: base.primary_columns().iter().map(id_of).collect(),
            indexes: base
                .indexes
                .iter()
                .map(|i| DraftIndex {
                    def: i.clone(),
                    column_ids: i.columns.iter().map(id_of).collect(),
                    new: false,
                })
                .collect(),
            dropped_indexes: Vec::new(),
            next_column_id: base.next_column_id,
            comment: base.comment.clone(),
            rename: None,
            auto_increment: None,
            base,
        }
    }

    /// Whether the change needs the two steps of the module's description.
    fn two_steps(&self) -> bool {
        !self.added.is_empty()
            || !self.dropped.is_empty()
            || !self.checked.is_empty()
            || !self.need_empty.is_empty()
            || self.indexes.iter().any(|i| i.new)
    }

    /// The position of a column statements can name.
    fn find(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| !self.dropped.contains(&c.id) && c.name.eq_ignore_ascii_case(name))
    }

    fn find_or_unknown(&self, name: &str) -> Result<usize> {
        self.find(name)
            .ok_or_else(|| error::unknown_column(name, &self.base.name))
    }

    fn find_index(&self, name: &str) -> Option<usize> {
        self.indexes
            .iter()
            .position(|i| i.def.name.eq_ignore_ascii_case(name))
    }

    fn apply(&mut self, op: &Op, database: Option<&str>) -> Result<()> {
        match op {
            Op::AddColumn {
                if_not_exists,
                column_def,
                column_position,
                ..
            } => self.add_column(column_def, column_position.as_ref(), *if_not_exists),
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => column_names
                .iter()
                .try_for_each(|c| self.drop_column(&c.value, *if_exists)),
            Op::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => self.change_column(col_name, col_name, data_type, options, column_position),
            Op::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => self.change_column(old_name, new_name, data_type, options, column_position),
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let i = self.find_or_unknown(&old_column_name.value)?;
                self.rename_column(i, &new_column_name.value)
            }
            Op::AlterColumn { column_name, op } => {
                let i = self.find_or_unknown(&column_name.value)?;
                let column = &mut self.columns[i];
                match op {
                    AlterColumnOperation::SetDefault { value } => {
                        column.default = Some(default_value(value)?);
                        check_default(column)
                    }
                    AlterColumnOperation::DropDefault => {
                        column.default = None;
                        Ok(())
                    }
                    other => Err(error::unsupported(format!("ALTER COLUMN … {other}"))),
                }
            }
            Op::AddConstraint { constraint, .. } => self.add_constraint(constraint),
            Op::DropIndex { name } => self.drop_index(&name.value, false),
            Op::DropConstraint {
                name, if_exists, ..
            } => {
                // A FOREIGN KEY or CHECK is not kept (CREATE TABLE ignores them); a UNIQUE is
                // an index.
                match self.find_index(&name.value) {
                    Some(_) => self.drop_index(&name.value, *if_exists),
                    None => Ok(()),
                }
            }
            Op::DropForeignKey { .. } | Op::Algorithm { .. } | Op::Lock { .. } => Ok(()),
            Op::DropPrimaryKey { .. } => Err(error::unsupported("dropping a primary key")),
            Op::RenameConstraint { old_name, new_name } => {
                let i = self.find_index(&old_name.value).ok_or_else(|| {
                    Error::new(
                        1176,
                        "42000",
                        format!(
                            "Key '{}' doesn't exist in table '{}'",
                            old_name.value, self.base.name
                        ),
                    )
                })?;
                check_identifier(&new_name.value)?;
                if self.find_index(&new_name.value).is_some_and(|j| j != i)
                    || new_name.value.eq_ignore_ascii_case("PRIMARY")
                {
                    return Err(error::duplicate_key_name(&new_name.value));
                }
                self.indexes[i].def.name = new_name.value.clone();
                Ok(())
            }
            Op::RenameTable { table_name } => {
                let name = match table_name {
                    ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n) => n,
                };
                let (db, table) = crate::planner::query::split_name(
                    name,
                    database.or(Some(&self.base.database)),
                )?;
                check_identifier(&table)?;
                self.rename = Some((db, table));
                Ok(())
            }
            Op::AutoIncrement { value, .. } => self.set_auto_increment(&value.value.to_string()),
            Op::SetTblProperties { table_properties } => {
                for option in table_properties {
                    let ast::SqlOption::KeyValue { key, value } = option else {
                        continue;
                    };
                    let text = match value {
                        ast::Expr::Value(v) => match &v.value {
                            ast::Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        other => other.to_string(),
                    };
                    match key.value.as_str() {
                        "COMMENT" => self.comment = text,
                        "AUTO_INCREMENT" => self.set_auto_increment(&text)?,
                        // Storage engines, row formats and character sets are Strata's own.
                        _ => {}
                    }
                }
                Ok(())
            }
            other => Err(error::unsupported(format!(
                "ALTER TABLE … {}",
                other
                    .to_string()
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            ))),
        }
    }

    fn set_auto_increment(&mut self, text: &str) -> Result<()> {
        let value = text
            .parse::<u64>()
            .map_err(|_| error::syntax(format!("near '{text}'")))?;
        self.auto_increment = Some(value);
        Ok(())
    }

    fn place(&mut self, column: ColumnDef, position: Option<&MySQLColumnPosition>) -> Result<()> {
        let at = match position {
            None => self.columns.len(),
            Some(MySQLColumnPosition::First) => 0,
            Some(MySQLColumnPosition::After(name)) => self.find_or_unknown(&name.value)? + 1,
        };
        self.columns.insert(at, column);
        Ok(())
    }

    fn add_column(
        &mut self,
        column_def: &ast::ColumnDef,
        position: Option<&MySQLColumnPosition>,
        if_not_exists: bool,
    ) -> Result<()> {
        let name = &column_def.name.value;
        if self.find(name).is_some() {
            return if if_not_exists {
                Ok(())
            } else {
                Err(error::duplicate_column(name))
            };
        }
        check_identifier(name)?;
        let defined = column_definition(column_def, self.next_column_id)?;
        self.next_column_id += 1;
        let mut column = defined.column;
        if defined.primary {
            return Err(error::unsupported("adding a PRIMARY KEY column"));
        }
        if column.auto_increment {
            return Err(error::unsupported("adding an AUTO_INCREMENT column"));
        }
        // The rows stored so far read the default, or the value MySQL makes up.
        let origin = match column.default_datum() {
            Some(d) => Some(d),
            None if column.nullable => None,
            None => column.ty.implicit_value(),
        };
        if origin.is_none() && !column.nullable {
            self.need_empty.push(column.id);
        }
        column.origin_default = origin.as_ref().and_then(crate::planner::bind::datum_text);
        let id = column.id;
        self.place(column, position)?;
        self.added.push(id);
        if defined.unique {
            self.add_index(None, std::slice::from_ref(name), true)?;
        }
        Ok(())
    }

    fn drop_column(&mut self, name: &str, if_exists: bool) -> Result<()> {
        let Some(i) = self.find(name) else {
            return if if_exists {
                Ok(())
            } else {
                Err(error::cant_drop(name))
            };
        };
        let id = self.columns[i].id;
        if self.primary.contains(&id) {
            return Err(error::unsupported("dropping a PRIMARY KEY column"));
        }
        if self
            .indexes
            .iter()
            .any(|x| x.column_ids.len() > 1 && x.column_ids.contains(&id))
        {
            return Err(error::unsupported(
                "dropping a column of a multi-column index",
            ));
        }
        let named = self
            .columns
            .iter()
            .filter(|c| !self.dropped.contains(&c.id))
            .count();
        if named == 1 {
            return Err(Error::new(
                1090,
                "42000",
                "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
            ));
        }
        let indexed: Vec<String> = self
            .indexes
            .iter()
            .filter(|x| x.column_ids == [id])
            .map(|x| x.def.name.clone())
            .collect();
        for index in indexed {
            self.drop_index(&index, false)?;
        }
        if let Some(a) = self.added.iter().position(|a| *a == id) {
            // Added by this statement: it never existed.
            self.added.remove(a);
            self.columns.remove(i);
        } else {
            self.dropped.push(id);
        }
        self.checked.retain(|c| *c != id);
        self.need_empty.retain(|c| *c != id);
        Ok(())
    }

    fn rename_column(&mut self, i: usize, new_name: &str) -> Result<()> {
        if self.find(new_name).is_some_and(|j| j != i) {
            return Err(error::duplicate_column(new_name));
        }
        check_identifier(new_name)?;
        self.columns[i].name = new_name.to_string();
        Ok(())
    }

    /// MODIFY (`old_name` = `new_name`) and CHANGE.
    fn change_column(
        &mut self,
        old_name: &ast::Ident,
        new_name: &ast::Ident,
        data_type: &ast::DataType,
        options: &[ast::ColumnOption],
        position: &Option<MySQLColumnPosition>,
    ) -> Result<()> {
        let i = self.find_or_unknown(&old_name.value)?;
        self.rename_column(i, &new_name.value)?;
        let old = self.columns[i].clone();
        let definition = ast::ColumnDef {
            name: new_name.clone(),
            data_type: data_type.clone(),
            options: options
                .iter()
                .map(|option| ast::ColumnOptionDef {
                    name: None,
                    option: option.clone(),
                })
                .collect(),
        };
        let defined = column_definition(&definition, old.id)?;
        let mut column = defined.column;
        column.origin_default = old.origin_default.clone();
        if self.primary.contains(&old.id) {
            column.nullable = false;
        } else if defined.primary {
            return Err(error::unsupported("adding a primary key"));
        }
        if storage_class(&old.ty) != storage_class(&column.ty) {
            return Err(error::unsupported(format!(
                "changing column '{}' from {} to {}, which stores its values differently",
                old.name,
                old.ty.sql_name(),
                column.ty.sql_name()
            )));
        }
        let handle = matches!(self.base.primary_key, PrimaryKey::IntHandle(_));
        if handle
            && self.primary == [old.id]
            && column.ty.unsigned
            && column.ty.kind == TypeKind::BigInt
        {
            return Err(error::unsupported(
                "making an integer primary key BIGINT UNSIGNED",
            ));
        }
        let narrows = !widens(&old.ty, &column.ty) || (old.nullable && !column.nullable);
        if narrows && !self.added.contains(&old.id) && !self.checked.contains(&old.id) {
            self.checked.push(old.id);
        }
        if position.is_some() {
            self.columns.remove(i);
            self.place(column, position.as_ref())?;
        } else {
            self.columns[i] = column;
        }
        if defined.unique {
            self.add_index(None, std::slice::from_ref(&new_name.value), true)?;
        }
        Ok(())
    }

    fn add_constraint(&mut self, constraint: &ast::TableConstraint) -> Result<()> {
        match constraint {
            ast::TableConstraint::Index { name, columns, .. } => self.add_index(
                name.as_ref().map(|n| n.value.as_str()),
                &index_columns(columns),
                false,
            ),
            ast::TableConstraint::Unique {
                name,
                index_name,
                columns,
                ..
            } => {
                let name = index_name.as_ref().or(name.as_ref());
                self.add_index(
                    name.map(|n| n.value.as_str()),
                    &index_columns(columns),
                    true,
                )
            }
            ast::TableConstraint::PrimaryKey { .. } if !self.primary.is_empty() => {
                Err(error::multiple_primary_keys())
            }
            ast::TableConstraint::PrimaryKey { .. } => {
                Err(error::unsupported("adding a primary key to a table"))
            }
            ast::TableConstraint::ForeignKey { .. } | ast::TableConstraint::Check { .. } => Ok(()),
            other => Err(error::unsupported(format!("constraint {other}"))),
        }
    }

    fn add_index(&mut self, name: Option<&str>, columns: &[String], unique: bool) -> Result<()> {
        let column_ids = columns
            .iter()
            .map(|c| {
                let i = self.find(c).ok_or_else(|| {
                    Error::new(
                        1072,
                        "42000",
                        format!("Key column '{c}' doesn't exist in table"),
                    )
                })?;
                indexable(&self.columns[i])?;
                Ok(self.columns[i].id)
            })
            .collect::<Result<Vec<_>>>()?;
        let name = match name {
            Some(n) => {
                check_identifier(n)?;
                if self.find_index(n).is_some() || n.eq_ignore_ascii_case("PRIMARY") {
                    return Err(error::duplicate_key_name(n));
                }
                n.to_string()
            }
            None => {
                let defs: Vec<IndexDef> = self.indexes.iter().map(|i| i.def.clone()).collect();
                free_index_name(&defs, &columns[0])
            }
        };
        self.indexes.push(DraftIndex {
            def: IndexDef {
                id: 0,
                name,
                columns: Vec::new(),
                unique,
                public: false,
                readable_from_ts: 0,
                delete_only: false,
            },
            column_ids,
            new: true,
        });
        Ok(())
    }

    fn drop_index(&mut self, name: &str, if_exists: bool) -> Result<()> {
        if name.eq_ignore_ascii_case("PRIMARY") && !self.primary.is_empty() {
            return Err(error::unsupported("dropping a primary key"));
        }
        let Some(i) = self.find_index(name) else {
            return if if_exists {
                Ok(())
            } else {
                Err(error::cant_drop(name))
            };
        };
        let index = self.indexes.remove(i);
        if !index.new {
            self.dropped_indexes.push(index.def.id);
        }
        Ok(())
    }

    /// The definition of a stage of the change.
    fn build(&self, stage: Stage, readable_from_ts: u64) -> TableDef {
        let interim = stage != Stage::Done;
        let columns: Vec<ColumnDef> = self
            .columns
            .iter()
            .filter(|c| interim || !self.dropped.contains(&c.id))
            .map(|c| ColumnDef {
                write_only: interim && (self.added.contains(&c.id) || self.dropped.contains(&c.id)),
                ..c.clone()
            })
            .collect();
        let position = |id: &i64| {
            columns
                .iter()
                .position(|c| c.id == *id)
                .expect("a draft's keys name its columns")
        };
        let primary_positions: Vec<usize> = self.primary.iter().map(position).collect();
        let primary_key = match self.base.primary_key {
            PrimaryKey::IntHandle(_) => PrimaryKey::IntHandle(primary_positions[0]),
            PrimaryKey::Clustered(_) => PrimaryKey::Clustered(primary_positions),
            PrimaryKey::RowId => PrimaryKey::RowId,
        };
        let indexes = self
            .indexes
            .iter()
            .map(|i| IndexDef {
                columns: i.column_ids.iter().map(position).collect(),
                public: if interim {
                    !i.new && i.def.public
                } else {
                    true
                },
                delete_only: i.new && stage == Stage::DeleteOnly,
                readable_from_ts: if i.new && !interim {
                    readable_from_ts
                } else {
                    i.def.readable_from_ts
                },
                ..i.def.clone()
            })
            .collect();
        let (database, name) = match (&self.rename, interim) {
            (Some((db, name)), false) => (db.clone(), name.clone()),
            _ => (self.base.database.clone(), self.base.name.clone()),
        };
        TableDef {
            id: self.base.id,
            database,
            name,
            columns,
            primary_key,
            indexes,
            next_column_id: self.next_column_id,
            comment: self.comment.clone(),
        }
    }
}

/// The datums a column type stores: a type change within one class can keep the stored values
/// as they are; across classes every value would be rewritten.
fn storage_class(ty: &SqlType) -> u8 {
    match ty.kind {
        TypeKind::TinyInt
        | TypeKind::SmallInt
        | TypeKind::MediumInt
        | TypeKind::Int
        | TypeKind::BigInt
        | TypeKind::Year => 0,
        TypeKind::Bit => 1,
        TypeKind::Float | TypeKind::Double => 2,
        TypeKind::Decimal => 3,
        TypeKind::Char | TypeKind::Varchar | TypeKind::Text | TypeKind::Enum | TypeKind::Set => 4,
        TypeKind::Json => 5,
        TypeKind::Date => 6,
        TypeKind::DateTime | TypeKind::Timestamp => 7,
        TypeKind::Time => 8,
    }
}

/// Whether every value `old` holds is a value of `new`, stored the same (so no stored row needs
/// checking).
fn widens(old: &SqlType, new: &SqlType) -> bool {
    let rank = |k: TypeKind| {
        [
            TypeKind::TinyInt,
            TypeKind::SmallInt,
            TypeKind::MediumInt,
            TypeKind::Int,
            TypeKind::BigInt,
        ]
        .iter()
        .position(|x| *x == k)
    };
    let text = |k: TypeKind| matches!(k, TypeKind::Char | TypeKind::Varchar | TypeKind::Text);
    if old == new {
        return true;
    }
    match (old.kind, new.kind) {
        (a, b) if rank(a).is_some() && rank(b).is_some() => {
            old.unsigned == new.unsigned && rank(b) >= rank(a)
        }
        (a, b) if text(a) && text(b) && (a == TypeKind::Text || b == TypeKind::Text) => {
            // Bytes against bytes: four per character of CHAR and VARCHAR.
            let bytes = |t: &SqlType| match t.kind {
                TypeKind::Text => t.text_bytes_max(),
                _ => t.length as usize * 4,
            };
            bytes(new) >= bytes(old)
        }
        (a, b) if text(a) && text(b) => new.length >= old.length,
        (TypeKind::Float, TypeKind::Double) => true,
        (TypeKind::Enum, TypeKind::Enum) | (TypeKind::Set, TypeKind::Set) => {
            old.members.iter().all(|m| new.members.contains(m))
        }
        (TypeKind::Enum, b) if text(b) => old
            .members
            .iter()
            .all(|m| m.chars().count() <= new.length as usize),
        (TypeKind::Decimal, TypeKind::Decimal) => {
            old.scale == new.scale && new.length >= old.length
        }
        (a, b) if a == b => old.length == new.length && old.scale == new.scale,
        _ => false,
    }
}

impl Catalog {
    /// Runs an ALTER TABLE's operations on `db.table` (`database`: the session's, for a new
    /// name that names none).
    pub fn alter_table(
        &self,
        db: &str,
        table: &str,
        operations: &[Op],
        database: Option<&str>,
    ) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        let mut draft = Draft::new(self.schema().table(db, table)?.clone());
        for op in operations {
            draft.apply(op, database)?;
        }
        self.run(draft)
    }

    /// CREATE INDEX.
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        name: &str,
        columns: &[String],
        unique: bool,
        if_not_exists: bool,
    ) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        let mut draft = Draft::new(self.schema().table(db, table)?.clone());
        if if_not_exists && draft.find_index(name).is_some() {
            return Ok(());
        }
        draft.add_index(Some(name), columns, unique)?;
        self.run(draft)
    }

    /// DROP INDEX.
    pub fn drop_index(&self, db: &str, table: &str, name: &str, if_exists: bool) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        let mut draft = Draft::new(self.schema().table(db, table)?.clone());
        draft.drop_index(name, if_exists)?;
        self.run(draft)
    }

    /// RENAME TABLE a TO b [, c TO d] …, one after another.
    pub fn rename_tables(&self, renames: &[(TableName, TableName)]) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        for ((db, table), (new_db, new_name)) in renames {
            check_identifier(new_name)?;
            if let Some(view) = self.schema().view(db, table).cloned() {
                self.rename_view(&view, new_db, new_name)?;
                continue;
            }
            let mut draft = Draft::new(self.schema().table(db, table)?.clone());
            draft.rename = Some((new_db.clone(), new_name.clone()));
            self.run(draft)?;
        }
        Ok(())
    }

    /// Publishes a draft, in one step or two (the module's description).
    fn run(&self, mut draft: Draft) -> Result<()> {
        if let Some((db, name)) = &draft.rename {
            let schema = self.schema();
            if !schema.databases.contains_key(db) {
                return Err(error::unknown_database(db));
            }
            let same = *db == draft.base.database && name.eq_ignore_ascii_case(&draft.base.name);
            if !same && (schema.table(db, name).is_ok() || schema.view(db, name).is_some()) {
                return Err(error::table_exists(name));
            }
        }
        // Index ids are never reused: entries of a dropped index that a late writer left behind
        // must not belong to a new one.
        if draft.indexes.iter().any(|i| i.new) {
            let mut txn = self.client.begin(TxnMode::Optimistic)?;
            for index in draft.indexes.iter_mut().filter(|i| i.new) {
                index.def.id = Self::next_id(&mut txn)?;
            }
            txn.commit()?;
        }
        let base = draft.base.clone();
        if draft.two_steps() {
            // Values a narrowed column refuses fail the statement before anything changes.
            self.check_rows(&draft)?;
            let stages: &[Stage] = if draft.indexes.iter().any(|i| i.new) {
                &[Stage::DeleteOnly, Stage::WriteOnly]
            } else {
                &[Stage::WriteOnly]
            };
            let result = stages
                .iter()
                .try_for_each(|stage| {
                    let version = self.publish(&base, draft.build(*stage, 0))?.version;
                    self.wait_for_older_writers(version)
                })
                .and_then(|_| self.check_rows(&draft))
                .and_then(|_| {
                    let new = draft.indexes.iter().filter(|i| i.new);
                    new.map(|i| i.def.id)
                        .try_for_each(|id| self.backfill(&base.database, &base.name, id))
                });
            if let Err(e) = result {
                let restored = TableDef {
                    next_column_id: draft.next_column_id,
                    ..(*base).clone()
                };
                self.publish(&base, restored)?;
                for index in draft.indexes.iter().filter(|i| i.new) {
                    let _ = self.delete_index_data(&base, index.def.id);
                }
                return Err(e);
            }
        }
        // Snapshots older than this would miss the last backfilled entries of a new index.
        let readable_from_ts = self.client.current_ts()?.0;
        self.publish(&base, draft.build(Stage::Done, readable_from_ts))?;
        for index_id in &draft.dropped_indexes {
            self.delete_index_data(&base, *index_id)?;
        }
        if let Some(value) = draft.auto_increment {
            self.autoids.rebase(base.id, value.saturating_sub(1))?;
        }
        Ok(())
    }

    /// Publishes `def` as the new definition of the table `old` was (under a new name if
    /// `def` has one).
    fn publish(&self, old: &TableDef, def: TableDef) -> Result<std::sync::Arc<Schema>> {
        self.change(|schema, txn| {
            schema
                .tables
                .remove(&(old.database.clone(), old.name.clone()));
            txn.delete(table_key(&old.database, &old.name));
            txn.put(table_key(&def.database, &def.name), encode_json(&def));
            schema.tables.insert(
                (def.database.clone(), def.name.clone()),
                std::sync::Arc::new(def.clone()),
            );
            Ok(())
        })
    }

    /// Checks the stored rows against the draft's narrowed columns and its added NOT NULL
    /// columns that need an empty table. Before step 1 this fails early; after it, with every
    /// writer meeting the new definitions, it is the check that counts.
    fn check_rows(&self, draft: &Draft) -> Result<()> {
        if draft.checked.is_empty() && draft.need_empty.is_empty() {
            return Ok(());
        }
        let base = &draft.base;
        // Read as the base definition stores them; judged by the draft's definitions.
        let checked: Vec<(usize, &ColumnDef)> = draft
            .checked
            .iter()
            .map(|id| {
                let position = base.columns.iter().position(|c| c.id == *id);
                let column = draft.columns.iter().find(|c| c.id == *id);
                (
                    position.expect("a checked column is stored"),
                    column.expect("and kept"),
                )
            })
            .collect();
        let positions: Vec<usize> = checked.iter().map(|(p, _)| *p).collect();
        let decoder = rows::RowDecoder::new(base, Some(&positions));
        let range = keys::record_range(base.table_id());
        let mut txn = self.client.begin(TxnMode::Optimistic)?;
        let mut start = range.start.clone();
        let mut row_number = 0u64;
        loop {
            let page = txn.scan(&start, &range.end, DDL_BATCH_ROWS, false)?;
            if let (Some(id), Some(_)) = (draft.need_empty.first(), page.first()) {
                let column = draft.columns.iter().find(|c| c.id == *id).expect("added");
                return Err(no_zero_value(column));
            }
            for (_, value) in &page {
                row_number += 1;
                let row = decoder.decode(value)?;
                for (position, column) in &checked {
                    check_value(column, &row[*position], row_number)?;
                }
            }
            match page.last() {
                Some((last, _)) if page.len() == DDL_BATCH_ROWS => {
                    start = [last.as_slice(), &[0]].concat();
                }
                _ => return Ok(()),
            }
        }
    }
}

/// Whether a stored value meets a column's new definition as it is stored.
fn check_value(column: &ColumnDef, value: &Datum, row: u64) -> Result<()> {
    if *value == Datum::Null {
        if column.nullable {
            return Ok(());
        }
        return Err(Error::new(1138, "22004", "Invalid use of NULL value"));
    }
    let coerced = column.ty.coerce(value.clone(), &column.name).map_err(|e| {
        if e.code() == 1406 {
            Error::new(
                1265,
                "01000",
                format!("Data truncated for column '{}' at row {row}", column.name),
            )
        } else {
            e
        }
    })?;
    if coerced != *value {
        return Err(error::unsupported(format!(
            "changing column '{}' to {}, which would rewrite its stored values",
            column.name,
            column.ty.sql_name()
        )));
    }
    Ok(())
}

/// The error for an added NOT NULL date or time column on a table with rows: MySQL's made-up
/// value would be the zero date, which strict mode refuses.
fn no_zero_value(column: &ColumnDef) -> Error {
    let (kind, zero) = match column.ty.kind {
        TypeKind::Date => ("date", "0000-00-00"),
        _ => ("datetime", "0000-00-00 00:00:00"),
    };
    Error::new(
        1292,
        "22007",
        format!(
            "Incorrect {kind} value: '{zero}' for column '{}' at row 1",
            column.name
        ),
    )
}
