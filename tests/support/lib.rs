//! Test support shared by the integration test binary: store factories, the app spawner with a
//! method per endpoint, one assertion per error body shape, and the captured logs.

pub mod app;
pub mod assertions;
pub mod browser;
pub mod ddb_proxy;
pub mod dpop;
pub mod dynamodb;
pub mod jwks_check;
pub mod logs;
pub mod otlp_receiver;
pub mod ports;
pub mod relying_party;
pub mod signing_lifecycle;
pub mod smtp_server;
pub mod sqlite;
pub mod stored_data;
pub mod tcp_fault;
pub mod user_agent;
