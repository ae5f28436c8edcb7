//! The one integration test binary: every suite is a module here, so the workspace links one
//! test executable instead of one per file.

mod company;
mod conformance_dynamodb;
mod conformance_sqlite;
mod cross_cutting;
mod ddb_proxy;
mod error_catalogue;
mod exchange;
mod interop;
mod lambda_events;
mod lambda_runtime;
mod mail;
mod pages;
mod round_trips;
mod security;
mod token_endpoint;
mod token_policy;
mod tokenctl;
