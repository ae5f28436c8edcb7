//! The one integration test binary: every suite is a module here, so the workspace links one
//! test executable instead of one per file.

mod company;
mod conformance_dynamodb;
mod conformance_sqlite;
mod ddb_proxy;
mod exchange;
mod interop;
mod lambda_events;
mod token_endpoint;
mod tokenctl;
