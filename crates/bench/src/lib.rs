//! `strata bench`: benchmark drivers and reports for Strata or any MySQL-protocol server.
//!
//! - [`sysbench`] drives the real sysbench 1.0.20 over a matrix of workloads × thread counts
//!   and parses what it prints;
//! - [`tpcc`] is a TPC-C driver that behaves like go-tpc (prepare, run, check, cleanup);
//! - [`resources`] samples the server's CPU, memory and IO from /proc while a run goes;
//! - [`server`] starts, stops and restores the server under test when the tool may;
//! - [`report`] renders result files as Markdown and as one HTML page with SVG charts;
//! - [`result`] is the JSON the drivers write and the report reads.
//!
//! This crate talks to servers only over the MySQL protocol and through child processes; it
//! depends on no other layer of Strata, so it measures MariaDB or MySQL the same way.

pub mod cli;
pub mod client;
pub mod environment;
pub mod report;
pub mod resources;
pub mod result;
pub mod server;
pub mod server_metrics;
pub mod sysbench;
pub mod tpcc;
