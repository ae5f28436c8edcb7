//! The one integration test binary: every suite is a module here, so the workspace links one
//! test executable instead of one per file.

mod authorize;
mod client_secrets;
mod company;
mod conformance_dynamodb;
mod conformance_sqlite;
mod cross_cutting;
mod ddb_proxy;
mod dynamodb_ttl;
mod error_catalogue;
mod exchange;
mod exchange_principals;
mod interop;
mod introspection;
mod lambda_events;
mod lambda_runtime;
mod limits;
mod lockout;
mod mail;
mod metadata;
mod metrics;
mod oidc_interop;
mod openid;
mod otp;
mod refresh_edges;
mod refresh_faults;
mod refresh_rotation;
mod revocation;
mod round_trips;
mod security;
mod signing_keys;
mod store_unavailable;
mod token_endpoint;
mod token_policy;
mod tokenctl;
