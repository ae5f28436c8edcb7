//! Test support shared by the integration test binary: store factories and the app spawner.

pub mod app;
pub mod ddb_proxy;
pub mod dynamodb;
pub mod sqlite;
