//! The OAuth 2.0 token service's domain crate: grants and the other flows (no HTTP in them),
//! tokens, errors, the storage trait and its backends, and the HTTP routers that the three Lambda
//! functions and the local server serve.

pub mod admin;
pub mod aws_sdk;
pub mod bootstrap;
pub mod clock;
pub mod config;
pub mod context;
pub mod domain;
pub mod errors;
pub mod flows;
pub mod grants;
pub mod http;
pub mod import;
pub mod jose;
pub mod jwt;
pub mod limits;
pub mod mail;
pub mod measure;
pub mod random;
pub mod secrets;
pub mod services;
pub mod signing;
pub mod store;
pub mod telemetry;
