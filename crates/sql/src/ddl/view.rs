//! The catalog changes of views: CREATE [OR REPLACE] VIEW, ALTER VIEW, DROP VIEW, and RENAME
//! TABLE of a view. What a view is and how queries read it is view.rs's.
//!
//! Views and tables share one namespace per database, as in MySQL: a name is either.

use std::sync::Arc;

use crate::catalog::{encode_json, view_key, ViewDef};
use crate::error::{self, Error, Result};

use super::{check_identifier, Catalog};

/// How CREATE VIEW treats a view of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// CREATE VIEW: an error.
    Refuse,
    /// CREATE OR REPLACE VIEW: replaced.
    Replace,
    /// ALTER VIEW: replaced, and it must exist.
    Require,
}

/// ER_WRONG_OBJECT: `DROP VIEW` of a table.
fn not_a_view(db: &str, name: &str) -> Error {
    Error::new(1347, "HY000", format!("'{db}.{name}' is not VIEW"))
}

impl Catalog {
    /// Stores `def`, a view whose query was already checked.
    pub fn create_view(&self, def: ViewDef, existing: Existing) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        check_identifier(&def.name)?;
        let schema = self.schema();
        if !schema.databases.contains_key(&def.database) {
            return Err(error::unknown_database(&def.database));
        }
        let old = schema.view(&def.database, &def.name).cloned();
        if let Ok(table) = schema.table(&def.database, &def.name) {
            return Err(match existing {
                Existing::Refuse => error::table_exists(&table.name),
                Existing::Replace | Existing::Require => not_a_view(&def.database, &table.name),
            });
        }
        match (&old, existing) {
            (Some(old), Existing::Refuse) => return Err(error::table_exists(&old.name)),
            (None, Existing::Require) => {
                return Err(error::unknown_table(&def.database, &def.name))
            }
            _ => {}
        }
        self.change(|schema, txn| {
            if let Some(old) = &old {
                txn.delete(view_key(&old.database, &old.name));
                schema
                    .views
                    .remove(&(old.database.clone(), old.name.clone()));
            }
            txn.put(view_key(&def.database, &def.name), encode_json(&def));
            schema.views.insert(
                (def.database.clone(), def.name.clone()),
                Arc::new(def.clone()),
            );
            Ok(())
        })
        .map(drop)
    }

    /// DROP VIEW: every name must be a view (unless `if_exists` lets a missing one pass), or
    /// nothing is dropped.
    pub fn drop_views(&self, names: &[(String, String)], if_exists: bool) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        let schema = self.schema();
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for (db, name) in names {
            match schema.view(db, name) {
                Some(view) => found.push(view.clone()),
                None if schema.table(db, name).is_ok() => return Err(not_a_view(db, name)),
                None => missing.push(format!("{db}.{name}")),
            }
        }
        if !missing.is_empty() && !if_exists {
            return Err(error::bad_table(&missing.join(",")));
        }
        self.change(|schema, txn| {
            for view in &found {
                txn.delete(view_key(&view.database, &view.name));
                schema
                    .views
                    .remove(&(view.database.clone(), view.name.clone()));
            }
            Ok(())
        })
        .map(drop)
    }

    /// RENAME TABLE of a view, within its database as MySQL allows. The caller holds the DDL
    /// lock.
    pub(super) fn rename_view(&self, view: &ViewDef, new_db: &str, new_name: &str) -> Result<()> {
        if new_db != view.database {
            return Err(Error::new(
                1450,
                "HY000",
                format!(
                    "Changing schema from '{}' to '{new_db}' is not allowed.",
                    view.database
                ),
            ));
        }
        let schema = self.schema();
        let same = new_name.eq_ignore_ascii_case(&view.name);
        if !same
            && (schema.table(new_db, new_name).is_ok() || schema.view(new_db, new_name).is_some())
        {
            return Err(error::table_exists(new_name));
        }
        let renamed = ViewDef {
            name: new_name.to_string(),
            ..view.clone()
        };
        self.change(|schema, txn| {
            txn.delete(view_key(&view.database, &view.name));
            schema
                .views
                .remove(&(view.database.clone(), view.name.clone()));
            txn.put(view_key(new_db, new_name), encode_json(&renamed));
            schema.views.insert(
                (new_db.to_string(), new_name.to_string()),
                Arc::new(renamed.clone()),
            );
            Ok(())
        })
        .map(drop)
    }
}
