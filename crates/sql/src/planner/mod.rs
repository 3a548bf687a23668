//! Planning: a query's names bound against its scope ([`bind`]), its FROM clause resolved
//! and joined ([`join`]; derived tables, [`cte`]s and views planned where they are named),
//! its subqueries planned into extra columns ([`subquery`]), set operations ([`union`]) and
//! window calls ([`window`]), and each table's access path chosen ([`access`]); [`query::plan_select`]
//! returns the [`query::SelectPlan`] the executor builds its operators from. The state
//! planning keeps while it descends is a [`query::PlanContext`].

pub mod access;
pub mod bind;
pub mod cte;
pub mod join;
pub mod query;
pub mod subquery;
pub mod union;
pub mod window;
