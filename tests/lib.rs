//! Test support shared by the integration test binary: store factories and app spawners.

pub mod dynamodb;
pub mod sqlite;
