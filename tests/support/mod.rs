//! Test support shared by the integration test binary (and the benchmarks and the floor server,
//! which compile it in as `mod support` too: every dependency of this package is then a
//! dev-dependency, so `cargo build --workspace` resolves none of them; docs/development.md): store factories, the app spawner with a
//! method per endpoint, one assertion per error body shape, and the captured logs.

pub mod app;
pub mod assertions;
pub mod browser;
pub mod ddb_proxy;
pub mod document_server;
pub mod dpop;
pub mod dynamodb;
pub mod error_table;
pub mod jwks_check;
pub mod logout_receiver;
pub mod logs;
pub mod oidc_idp;
pub mod otlp_receiver;
pub mod ports;
pub mod relying_party;
pub mod saml_idp;
pub mod signing_lifecycle;
pub mod smtp_server;
pub mod sqlite;
pub mod stored_data;
pub mod tcp_fault;
pub mod test_ca;
pub mod user_agent;
