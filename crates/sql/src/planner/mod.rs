//! Planning: a query's names bound against its scope ([`bind`], [`scope`]), its FROM clause resolved
//! and joined ([`join`]; derived tables, [`cte`]s and views planned where they are named),
//! its subqueries planned into extra columns ([`subquery`]), set operations ([`union`]) and
//! window calls ([`window`]). Each bound SELECT block becomes a logical plan ([`logical`]),
//! which the optimizer's passes rewrite ([`optimize`]: predicate pushdown, conditions of
//! literals decided, each table's access path ([`access`]) and the join order chosen, sorts
//! and columns pruned, limits pushed into scans); [`query::plan_select`] returns it lowered to
//! the physical plan ([`physical`]), a tree with a node per operator the executor builds. The state planning keeps
//! while it descends is a [`query::PlanContext`].

pub mod access;
pub mod bind;
pub mod cte;
pub mod join;
pub mod logical;
pub mod optimize;
pub mod physical;
pub mod query;
pub mod scope;
pub mod subquery;
pub mod union;
pub mod window;
