//! Test support shared by the integration test binary: store factories and the app spawner.

pub mod app;
pub mod dynamodb;
pub mod smtp_server;
pub mod sqlite;
