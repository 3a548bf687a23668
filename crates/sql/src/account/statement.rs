//! Running the account statements: each checks what its own account may do, edits a copy of
//! the accounts, and has the catalog write the accounts that changed (ddl/accounts.rs).

use std::collections::BTreeMap;

use strata_codec::Datum;

use super::check::{database_denied, global_denied, table_denied};
use super::password::SHA2_PASSWORD_MAX_BYTES;
use super::{
    is_stored_secret, normalized_secret, stored_secret, Account, Accounts, ColumnPrivileges,
    Identity, Privileges, CACHING_SHA2_PASSWORD,
};
use crate::api::Output;
use crate::catalog::Schema;
use crate::error::{self, Error, Result};
use crate::parser::account::{
    AccountOptions, AccountStatement, Auth, Level, PrivilegeList, RoleChoice, Secret, UserRef,
};
use crate::session::Session;
use crate::show::{ok, rows, text, text_column};

/// Runs one account statement.
pub(crate) fn execute(session: &mut Session, statement: &AccountStatement) -> Result<Output> {
    if let AccountStatement::ShowGrants(user) = statement {
        return show_grants(session, user);
    }
    session.implicit_commit()?;
    let me = session.account_identity();
    let catalog = session.server().catalog().clone();
    let schema = catalog.schema();
    let mine = own_account(session, &schema);
    let mut password_changed = false;
    match statement {
        AccountStatement::CreateUser {
            if_not_exists,
            users,
            options,
        } => {
            require(&mine, Privileges::CREATE_USER)?;
            refuse_unsupported(options)?;
            catalog.edit_accounts(|accounts| {
                let mut failed = Vec::new();
                for (identity, auth) in users {
                    if accounts.get(identity).is_some() {
                        failed.push(identity);
                        continue;
                    }
                    let mut account = Account::new(identity);
                    if let Some(auth) = auth {
                        apply_auth(&mut account, auth)?;
                    }
                    apply_options(&mut account, options);
                    accounts.insert(account);
                }
                if !failed.is_empty() && !if_not_exists {
                    return Err(operation_failed("CREATE USER", &failed));
                }
                Ok(())
            })?;
        }
        AccountStatement::AlterUser {
            if_exists,
            users,
            options,
        } => {
            refuse_unsupported(options)?;
            for (user, _) in users {
                let own_password_only = Some(&resolve(user, &me)) == me.as_ref()
                    && *options == AccountOptions::default();
                if !own_password_only {
                    require(&mine, Privileges::CREATE_USER)?;
                }
            }
            catalog.edit_accounts(|accounts| {
                let mut failed = Vec::new();
                for (user, auth) in users {
                    let identity = resolve(user, &me);
                    let Some(existing) = accounts.get(&identity) else {
                        failed.push(identity);
                        continue;
                    };
                    let mut account = (**existing).clone();
                    if let Some(auth) = auth {
                        apply_auth(&mut account, auth)?;
                        password_changed |= Some(&identity) == me.as_ref();
                    }
                    apply_options(&mut account, options);
                    accounts.insert(account);
                }
                if !failed.is_empty() && !if_exists {
                    let failed: Vec<&Identity> = failed.iter().collect();
                    return Err(operation_failed("ALTER USER", &failed));
                }
                Ok(())
            })?;
        }
        AccountStatement::DropUser { if_exists, users } => {
            require(&mine, Privileges::CREATE_USER)?;
            catalog.edit_accounts(|accounts| {
                drop_accounts(accounts, "DROP USER", users, *if_exists)
            })?;
        }
        AccountStatement::CreateRole {
            if_not_exists,
            roles,
        } => {
            require_any(
                &mine,
                Privileges::CREATE_USER.union(Privileges::CREATE_ROLE),
            )?;
            catalog.edit_accounts(|accounts| {
                let mut failed = Vec::new();
                for identity in roles {
                    if accounts.get(identity).is_some() {
                        failed.push(identity);
                        continue;
                    }
                    // A role is an account no one logs in as.
                    let mut role = Account::new(identity);
                    role.locked = true;
                    accounts.insert(role);
                }
                if !failed.is_empty() && !if_not_exists {
                    return Err(operation_failed("CREATE ROLE", &failed));
                }
                Ok(())
            })?;
        }
        AccountStatement::DropRole { if_exists, roles } => {
            require_any(&mine, Privileges::CREATE_USER.union(Privileges::DROP_ROLE))?;
            catalog.edit_accounts(|accounts| {
                drop_accounts(accounts, "DROP ROLE", roles, *if_exists)
            })?;
        }
        AccountStatement::GrantRoles { roles, users } => {
            require_any(&mine, Privileges::CREATE_USER.union(Privileges::SUPER))?;
            catalog.edit_accounts(|accounts| {
                for identity in roles.iter().chain(users) {
                    if accounts.get(identity).is_none() {
                        return Err(unknown_authorization_id(identity));
                    }
                }
                for identity in users {
                    let mut account = (**accounts.get(identity).expect("checked above")).clone();
                    account.roles.extend(roles.iter().cloned());
                    accounts.insert(account);
                }
                Ok(())
            })?;
        }
        AccountStatement::RevokeRoles { roles, users } => {
            require_any(&mine, Privileges::CREATE_USER.union(Privileges::SUPER))?;
            catalog.edit_accounts(|accounts| {
                for identity in users {
                    let Some(existing) = accounts.get(identity) else {
                        return Err(unknown_authorization_id(identity));
                    };
                    let mut account = (**existing).clone();
                    for role in roles {
                        account.roles.remove(role);
                        account.default_roles.remove(role);
                    }
                    accounts.insert(account);
                }
                Ok(())
            })?;
        }
        AccountStatement::SetRole(choice) => {
            let Some(me) = &me else {
                return Ok(ok());
            };
            let granted = schema
                .accounts
                .get(me)
                .map(|a| a.roles.clone())
                .unwrap_or_default();
            let active = match choice {
                RoleChoice::Default => schema
                    .accounts
                    .get(me)
                    .map(|a| a.default_roles.iter().cloned().collect())
                    .unwrap_or_default(),
                other => choose_roles(other, &granted, me)?,
            };
            session.set_active_roles(active);
        }
        AccountStatement::SetDefaultRole { roles, users } => {
            for user in users {
                if Some(&resolve(user, &me)) != me.as_ref() {
                    require(&mine, Privileges::CREATE_USER)?;
                }
            }
            catalog.edit_accounts(|accounts| {
                for user in users {
                    let identity = resolve(user, &me);
                    let Some(existing) = accounts.get(&identity) else {
                        return Err(unknown_authorization_id(&identity));
                    };
                    let mut account = (**existing).clone();
                    let chosen = match roles {
                        RoleChoice::Default => account.default_roles.iter().cloned().collect(),
                        other => choose_roles(other, &account.roles, &identity)?,
                    };
                    account.default_roles = chosen.into_iter().collect();
                    accounts.insert(account);
                }
                Ok(())
            })?;
        }
        AccountStatement::RenameUser(renames) => {
            require(&mine, Privileges::CREATE_USER)?;
            catalog.edit_accounts(|accounts| {
                let mut failed = Vec::new();
                for (old, new) in renames {
                    if accounts.get(new).is_some() {
                        failed.push(old);
                        continue;
                    }
                    match accounts.remove(old) {
                        Some(account) => {
                            let mut account = (*account).clone();
                            account.user.clone_from(&new.user);
                            account.host.clone_from(&new.host);
                            accounts.insert(account);
                        }
                        None => failed.push(old),
                    }
                }
                if !failed.is_empty() {
                    return Err(operation_failed("RENAME USER", &failed));
                }
                Ok(())
            })?;
        }
        AccountStatement::SetPassword { user, password } => {
            let identity = resolve(user, &me);
            if Some(&identity) != me.as_ref() {
                require(&mine, Privileges::CREATE_USER)?;
            }
            catalog.edit_accounts(|accounts| {
                let Some(existing) = accounts.get(&identity) else {
                    return Err(Error::new(
                        1133,
                        "28000",
                        "Can't find any matching row in the user table",
                    ));
                };
                let mut account = (**existing).clone();
                account.auth_string = secret_of(&account.plugin, password)?;
                account.password_expired = false;
                accounts.insert(account);
                Ok(())
            })?;
            password_changed = Some(&identity) == me.as_ref();
        }
        AccountStatement::Grant {
            privileges,
            level,
            users,
            grant_option,
        } => {
            let level = resolve_level(session, level)?;
            let (mut granted, columns) = level.expand(privileges, &schema)?;
            if *grant_option {
                granted = granted.union(Privileges::GRANT_OPTION);
            }
            level.check_grantor(&mine, granted, &columns, &schema)?;
            catalog.edit_accounts(|accounts| {
                for identity in users {
                    let Some(existing) = accounts.get(identity) else {
                        return Err(Error::new(
                            1410,
                            "42000",
                            "You are not allowed to create a user with GRANT",
                        ));
                    };
                    let mut account = (**existing).clone();
                    level.grant(&mut account, granted, &columns);
                    accounts.insert(account);
                }
                Ok(())
            })?;
        }
        AccountStatement::Revoke {
            privileges,
            level,
            users,
        } => {
            let level = match level {
                None => {
                    require(&mine, Privileges::CREATE_USER)?;
                    None
                }
                Some(level) => {
                    let level = resolve_level(session, level)?;
                    let (revoked, columns) = level.expand(privileges, &schema)?;
                    level.check_grantor(&mine, revoked, &columns, &schema)?;
                    Some((level, revoked, columns))
                }
            };
            catalog.edit_accounts(|accounts| {
                for identity in users {
                    let Some(existing) = accounts.get(identity) else {
                        return Err(no_such_grant(identity, None));
                    };
                    let mut account = (**existing).clone();
                    match &level {
                        None => {
                            account.global = Privileges::NONE;
                            account.databases.clear();
                            account.tables.clear();
                            account.columns.clear();
                        }
                        Some((level, revoked, columns)) => {
                            level.revoke(&mut account, *revoked, columns)?
                        }
                    }
                    accounts.insert(account);
                }
                Ok(())
            })?;
        }
        AccountStatement::ShowGrants(_) => unreachable!("answered above"),
    }
    if password_changed {
        session.password_was_changed();
    }
    Ok(ok())
}

/// What the session's account may do as it stands now, with its active roles, or None for an
/// embedded session (which may do anything).
fn own_account(session: &Session, schema: &Schema) -> Option<Account> {
    session.effective_account(schema)
}

/// Removes `identities` and every grant of them as a role (1396 for one that does not exist,
/// unless `if_exists`; then nothing is removed).
fn drop_accounts(
    accounts: &mut Accounts,
    operation: &str,
    identities: &[Identity],
    if_exists: bool,
) -> Result<()> {
    let failed: Vec<&Identity> = identities
        .iter()
        .filter(|identity| accounts.remove(identity).is_none())
        .collect();
    if !failed.is_empty() && !if_exists {
        return Err(operation_failed(operation, &failed));
    }
    let holders: Vec<Account> = accounts
        .iter()
        .filter(|a| identities.iter().any(|i| a.roles.contains(i)))
        .map(|a| (**a).clone())
        .collect();
    for mut holder in holders {
        for identity in identities {
            holder.roles.remove(identity);
            holder.default_roles.remove(identity);
        }
        accounts.insert(holder);
    }
    Ok(())
}

/// The roles a `SET ROLE` or `SET DEFAULT ROLE` names, each granted to `owner` (3530).
fn choose_roles(
    choice: &RoleChoice,
    granted: &std::collections::BTreeSet<Identity>,
    owner: &Identity,
) -> Result<Vec<Identity>> {
    Ok(match choice {
        RoleChoice::Default | RoleChoice::None => Vec::new(),
        RoleChoice::AllExcept(except) => granted
            .iter()
            .filter(|r| !except.contains(r))
            .cloned()
            .collect(),
        RoleChoice::These(roles) => {
            if let Some(missing) = roles.iter().find(|r| !granted.contains(r)) {
                return Err(Error::new(
                    3530,
                    "HY000",
                    format!(
                        "`{}`@`{}` is not granted to `{}`@`{}`",
                        missing.user, missing.host, owner.user, owner.host
                    ),
                ));
            }
            roles.clone()
        }
    })
}

/// 3523: a role or user that does not exist.
fn unknown_authorization_id(identity: &Identity) -> Error {
    Error::new(
        3523,
        "HY000",
        format!(
            "Unknown authorization ID `{}`@`{}`",
            identity.user, identity.host
        ),
    )
}

/// 1227 unless `mine` holds one of the global privileges `any_of`.
fn require_any(mine: &Option<Account>, any_of: Privileges) -> Result<()> {
    match mine {
        Some(account) if !account.global.intersects(any_of) => Err(global_denied(any_of)),
        _ => Ok(()),
    }
}

/// 1227 unless `mine` (None: an embedded session) holds the global privilege `needed`.
fn require(mine: &Option<Account>, needed: Privileges) -> Result<()> {
    match mine {
        Some(account) if !account.global.contains(needed) => Err(global_denied(needed)),
        _ => Ok(()),
    }
}

fn resolve(user: &UserRef, me: &Option<Identity>) -> Identity {
    match (user, me) {
        (UserRef::Named(identity), _) => identity.clone(),
        (UserRef::Current, Some(me)) => me.clone(),
        (UserRef::Current, None) => Identity::new("root", "localhost"),
    }
}

fn refuse_unsupported(options: &AccountOptions) -> Result<()> {
    match &options.unsupported {
        Some(option) => Err(error::unsupported(option)),
        None => Ok(()),
    }
}

fn apply_auth(account: &mut Account, auth: &Auth) -> Result<()> {
    if let Some(plugin) = &auth.plugin {
        if plugin != super::NATIVE_PASSWORD && plugin != super::CACHING_SHA2_PASSWORD {
            return Err(Error::new(
                1524,
                "HY000",
                format!("Plugin '{plugin}' is not loaded"),
            ));
        }
        account.plugin.clone_from(plugin);
    }
    account.auth_string = match &auth.secret {
        Secret::None => String::new(),
        Secret::Password(password) => secret_of(&account.plugin, password)?,
        Secret::Hash(hash) if is_stored_secret(&account.plugin, hash) => {
            normalized_secret(&account.plugin, hash)
        }
        Secret::Hash(_) => {
            return Err(Error::new(
                1827,
                "HY000",
                "The password hash doesn't have the expected format.",
            ))
        }
    };
    account.password_expired = false;
    Ok(())
}

/// The stored form of `password` for `plugin`; a `caching_sha2_password` password longer
/// than MySQL's limit is refused as MySQL refuses it (1819).
fn secret_of(plugin: &str, password: &str) -> Result<String> {
    if plugin == CACHING_SHA2_PASSWORD && password.len() > SHA2_PASSWORD_MAX_BYTES {
        return Err(Error::new(
            1819,
            "HY000",
            "Your password does not satisfy the current policy requirements",
        ));
    }
    Ok(stored_secret(plugin, password))
}

fn apply_options(account: &mut Account, options: &AccountOptions) {
    if let Some(lock) = options.lock {
        account.locked = lock;
    }
    // An unlock, or new locking options, forget the failed logins counted so far.
    let before = account.locking;
    if let Some(attempts) = options.failed_login_attempts {
        account.locking.attempts = attempts;
    }
    if let Some(days) = options.password_lock_days {
        account.locking.lock_days = days;
    }
    if options.lock == Some(false) || account.locking != before {
        account.locking.epoch = before.epoch.wrapping_add(1);
    }
    if let Some(expire) = options.expire {
        account.password_expired = expire;
    }
    if let Some(require) = options.require_secure {
        account.require_secure = require;
    }
    if let Some(require) = options.require_x509 {
        account.require_x509 = require;
    }
    if let Some(specified) = &options.require_specified {
        account.require_specified = specified.clone();
    }
}

/// 1396: `Operation CREATE USER failed for 'a'@'%','b'@'%'`.
fn operation_failed(operation: &str, failed: &[&Identity]) -> Error {
    let names: Vec<String> = failed.iter().map(|i| i.to_string()).collect();
    Error::new(
        1396,
        "HY000",
        format!("Operation {operation} failed for {}", names.join(",")),
    )
}

/// 1141 (no grant at all for the account) or 1147 (none on the table).
fn no_such_grant(identity: &Identity, table: Option<&str>) -> Error {
    match table {
        None => Error::new(
            1141,
            "42000",
            format!(
                "There is no such grant defined for user '{}' on host '{}'",
                identity.user, identity.host
            ),
        ),
        Some(table) => Error::new(
            1147,
            "42000",
            format!(
                "There is no such grant defined for user '{}' on host '{}' on table '{table}'",
                identity.user, identity.host
            ),
        ),
    }
}

/// A grant's level with the current database filled in.
enum Resolved {
    Global,
    Database(String),
    Table(String, String),
}

fn resolve_level(session: &Session, level: &Level) -> Result<Resolved> {
    let current = || {
        session
            .current_database()
            .map(str::to_string)
            .ok_or_else(error::no_database)
    };
    Ok(match level {
        Level::Global => Resolved::Global,
        Level::Database(db) => Resolved::Database(match db {
            Some(db) => db.clone(),
            None => current()?,
        }),
        Level::Table(db, table) => {
            let db = match db {
                Some(db) => db.clone(),
                None => current()?,
            };
            Resolved::Table(db, table.clone())
        }
    })
}

impl Resolved {
    /// What `ALL` means here.
    fn all(&self) -> Privileges {
        match self {
            Resolved::Global => Privileges::all_global(),
            Resolved::Database(_) => Privileges::all_database(),
            Resolved::Table(..) => Privileges::all_table(),
        }
    }

    /// The privileges a GRANT or REVOKE names at this level, and on which columns of the
    /// table (named as the table spells them); 1221 or 1144 for one that does not exist at
    /// it, 1054 for a column the table does not have.
    fn expand(
        &self,
        list: &PrivilegeList,
        schema: &crate::catalog::Schema,
    ) -> Result<(Privileges, ColumnPrivileges)> {
        let (named, columns) = match list {
            PrivilegeList::All { grant_option } => {
                let all = self.all();
                let all = if *grant_option {
                    all.union(Privileges::GRANT_OPTION)
                } else {
                    all
                };
                return Ok((all, ColumnPrivileges::new()));
            }
            PrivilegeList::Some(named, columns) => (*named, columns),
        };
        let mut on_columns = ColumnPrivileges::new();
        if !columns.is_empty() {
            let illegal = || {
                Error::new(
                    1144,
                    "42000",
                    "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
                )
            };
            let Resolved::Table(db, table) = self else {
                return Err(illegal());
            };
            let known = super::check::column_names(schema, db, table)
                .ok_or_else(|| error::unknown_table(db, table))?;
            for grant in columns {
                if !Privileges::all_column().contains(grant.privilege) {
                    return Err(illegal());
                }
                for column in &grant.columns {
                    let Some(name) = known.iter().find(|k| k.eq_ignore_ascii_case(column)) else {
                        return Err(error::unknown_column(column, table));
                    };
                    let held = on_columns.entry(name.clone()).or_default();
                    *held = held.union(grant.privilege);
                }
            }
        }
        let beyond = named.plain().without(self.all());
        if !beyond.is_empty() {
            return Err(match self {
                Resolved::Database(_) => Error::new(
                    1221,
                    "HY000",
                    "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
                ),
                _ => Error::new(
                    1144,
                    "42000",
                    "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
                ),
            });
        }
        Ok((named, on_columns))
    }

    /// The grantor must hold what it grants, and GRANT OPTION, at this level (on its columns:
    /// each privilege on the column or the table, GRANT OPTION on the table); a table must
    /// exist (1146).
    fn check_grantor(
        &self,
        mine: &Option<Account>,
        granted: Privileges,
        columns: &ColumnPrivileges,
        schema: &crate::catalog::Schema,
    ) -> Result<()> {
        if let Resolved::Table(db, table) = self {
            if schema.table(db, table).is_err() && schema.view(db, table).is_none() {
                return Err(error::unknown_table(db, table));
            }
        }
        let Some(account) = mine else {
            return Ok(());
        };
        let needed = granted.union(Privileges::GRANT_OPTION);
        let identity = account.identity();
        match self {
            Resolved::Global if !account.global.contains(needed) => Err(Error::new(
                1045,
                "28000",
                format!("Access denied for user {identity} (using password: YES)"),
            )),
            Resolved::Database(db) if !account.has(needed, db, None) => {
                Err(database_denied(&identity, db))
            }
            Resolved::Table(db, table)
                if !account.has(needed, db, Some(table))
                    || columns.iter().any(|(column, privileges)| {
                        !account
                            .privileges_on_column(db, table, column)
                            .contains(*privileges)
                    }) =>
            {
                Err(table_denied("GRANT", &identity, table))
            }
            _ => Ok(()),
        }
    }

    fn grant(&self, account: &mut Account, granted: Privileges, columns: &ColumnPrivileges) {
        match self {
            Resolved::Global => account.global = account.global.union(granted),
            Resolved::Database(db) => {
                let entry = account.databases.entry(db.clone()).or_default();
                *entry = entry.union(granted);
            }
            Resolved::Table(db, table) => {
                if !columns.is_empty() {
                    let held = entry_of(&mut account.columns, db, table);
                    for (column, privileges) in columns {
                        let entry = held.entry(column.clone()).or_default();
                        *entry = entry.union(*privileges);
                    }
                    if granted.is_empty() {
                        // Only columns were named: no table-level entry.
                        return;
                    }
                }
                let entry = entry_of(&mut account.tables, db, table);
                *entry = entry.union(granted);
            }
        }
    }

    /// Takes `revoked` away at this level (at a table's, from its columns too, as MySQL
    /// does) and `columns` from the table's columns; 1141 / 1147 when the account holds
    /// nothing there to take.
    fn revoke(
        &self,
        account: &mut Account,
        revoked: Privileges,
        columns: &ColumnPrivileges,
    ) -> Result<()> {
        let identity = account.identity();
        match self {
            Resolved::Global => account.global = account.global.without(revoked),
            Resolved::Database(db) => {
                let Some(held) = account.databases.get_mut(db) else {
                    return Err(no_such_grant(&identity, None));
                };
                *held = held.without(revoked);
                if held.is_empty() {
                    account.databases.remove(db);
                }
            }
            Resolved::Table(db, table) => {
                let on_table = !revoked.is_empty()
                    && edit_entry(&mut account.tables, db, table, |held| {
                        *held = held.without(revoked);
                        held.is_empty()
                    });
                let mut missing_column = false;
                let on_columns = edit_entry(&mut account.columns, db, table, |held| {
                    for (column, privileges) in columns {
                        match held.get_mut(column) {
                            Some(p) => *p = p.without(*privileges),
                            None => missing_column = true,
                        }
                    }
                    for p in held.values_mut() {
                        *p = p.without(revoked);
                    }
                    held.retain(|_, p| !p.is_empty());
                    held.is_empty()
                });
                let found = if columns.is_empty() {
                    on_table || on_columns
                } else {
                    on_columns && !missing_column && (revoked.is_empty() || on_table)
                };
                if !found {
                    return Err(no_such_grant(&identity, Some(table)));
                }
            }
        }
        Ok(())
    }
}

/// The entry of `db.table` (its name matched without case) in a map of grants by database
/// and table, made empty when there is none.
fn entry_of<'a, T: Default>(
    grants: &'a mut BTreeMap<String, BTreeMap<String, T>>,
    db: &str,
    table: &str,
) -> &'a mut T {
    let tables = grants.entry(db.to_string()).or_default();
    let key = tables
        .keys()
        .find(|t| t.eq_ignore_ascii_case(table))
        .cloned()
        .unwrap_or_else(|| table.to_string());
    tables.entry(key).or_default()
}

/// Edits the entry of `db.table` (its name matched without case) in a map of grants by
/// database and table: `edit` changes it and says whether it is now empty, and so removed.
/// Returns whether there was an entry.
fn edit_entry<T>(
    grants: &mut BTreeMap<String, BTreeMap<String, T>>,
    db: &str,
    table: &str,
    edit: impl FnOnce(&mut T) -> bool,
) -> bool {
    let Some(tables) = grants.get_mut(db) else {
        return false;
    };
    let Some(key) = tables
        .keys()
        .find(|t| t.eq_ignore_ascii_case(table))
        .cloned()
    else {
        return false;
    };
    if edit(tables.get_mut(&key).expect("found above")) {
        tables.remove(&key);
    }
    if tables.is_empty() {
        grants.remove(db);
    }
    true
}

/// `SHOW GRANTS [FOR user]`: one GRANT statement per level the account holds something at,
/// as MySQL prints them.
fn show_grants(session: &Session, user: &UserRef) -> Result<Output> {
    let me = session.account_identity();
    let schema = session.server().catalog().schema();
    let identity = resolve(user, &me);
    let account = match schema.accounts.get(&identity) {
        Some(account) => (**account).clone(),
        // An embedded session answers as an account with every privilege.
        None if me.is_none() && matches!(user, UserRef::Current) => {
            let mut account = Account::new(&Identity::new(session.user_name(), "localhost"));
            account.global = Privileges::all_global().union(Privileges::GRANT_OPTION);
            account
        }
        None => return Err(no_such_grant(&identity, None)),
    };
    if me.as_ref().is_some_and(|me| *me != identity) {
        let mine = own_account(session, &schema);
        if let Some(mine) = mine {
            if !mine.has(Privileges::SELECT, "mysql", None) {
                return Err(database_denied(&mine.identity(), "mysql"));
            }
        }
    }
    Ok(rows(
        vec![text_column(&format!(
            "Grants for {}@{}",
            identity.user, identity.host
        ))],
        grant_lines(&account)
            .into_iter()
            .map(|line| vec![text(line)])
            .collect::<Vec<Vec<Datum>>>(),
    ))
}

/// The GRANT statements that recreate an account's privileges.
pub fn grant_lines(account: &Account) -> Vec<String> {
    let to = format!("`{}`@`{}`", account.user, account.host);
    let line = |privileges: Privileges, all: Privileges, on: String| {
        let option = if privileges.contains(Privileges::GRANT_OPTION) {
            " WITH GRANT OPTION"
        } else {
            ""
        };
        format!("GRANT {} ON {on} TO {to}{option}", privileges.describe(all))
    };
    let mut lines = vec![line(
        account.global,
        Privileges::all_global(),
        "*.*".to_string(),
    )];
    for (db, privileges) in &account.databases {
        lines.push(line(
            *privileges,
            Privileges::all_database(),
            format!("`{db}`.*"),
        ));
    }
    // A table's privileges and its columns' on one line, as MySQL prints them.
    let mut tables: BTreeMap<(&str, &str), (Privileges, Option<&ColumnPrivileges>)> =
        BTreeMap::new();
    for (db, held) in &account.tables {
        for (table, privileges) in held {
            tables.entry((db, table)).or_default().0 = *privileges;
        }
    }
    for (db, held) in &account.columns {
        for (table, columns) in held {
            tables.entry((db, table)).or_default().1 = Some(columns);
        }
    }
    for ((db, table), (privileges, columns)) in tables {
        let on = format!("`{db}`.`{table}`");
        let Some(columns) = columns else {
            lines.push(line(privileges, Privileges::all_table(), on));
            continue;
        };
        let mut listed = Vec::new();
        if !privileges.plain().is_empty() {
            listed.push(privileges.describe(Privileges::all_table()));
        }
        for kind in Privileges::all_column().names() {
            let kind_bit = Privileges::named(kind).expect("a privilege's own name");
            let named: Vec<String> = columns
                .iter()
                .filter(|(_, p)| p.contains(kind_bit))
                .map(|(c, _)| format!("`{c}`"))
                .collect();
            if !named.is_empty() {
                listed.push(format!("{kind} ({})", named.join(", ")));
            }
        }
        let option = if privileges.contains(Privileges::GRANT_OPTION) {
            " WITH GRANT OPTION"
        } else {
            ""
        };
        lines.push(format!(
            "GRANT {} ON {on} TO {to}{option}",
            listed.join(", ")
        ));
    }
    if !account.roles.is_empty() {
        let roles: Vec<String> = account.roles.iter().map(quoted).collect();
        lines.push(format!("GRANT {} TO {to}", roles.join(",")));
    }
    lines
}

/// `` `user`@`host` ``, as SHOW GRANTS and CURRENT_ROLE() write an account.
pub fn quoted(identity: &Identity) -> String {
    format!("`{}`@`{}`", identity.user, identity.host)
}
