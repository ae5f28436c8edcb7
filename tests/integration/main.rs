//! The one integration test binary: every suite is a module here, so the workspace links one
//! test executable instead of one per file.

// The shared test support (tests/support/), compiled in: this package has no library
// (tests/Cargo.toml). Each target uses a part of it.
#[allow(dead_code, unused_imports)]
#[path = "../support/mod.rs"]
mod support;

mod audit;
mod authorize;
mod backchannel_logout;
mod client_documents;
mod client_secrets;
mod company;
mod conformance_dynamodb;
mod conformance_sqlite;
mod cross_cutting;
mod ddb_proxy;
mod device;
mod dpop;
mod dynamodb_ttl;
mod error_catalogue;
mod exchange;
mod exchange_principals;
mod federation;
mod interop;
mod introspection;
mod lambda_events;
mod lambda_runtime;
mod limits;
mod local_server;
mod lockout;
mod mail;
mod mcp_interop;
mod metadata;
mod metrics;
mod oidc_interop;
mod openid;
mod otp;
mod par;
mod passkeys;
mod private_key_jwt;
mod refresh_edges;
mod refresh_faults;
mod refresh_rotation;
mod registration;
mod resources;
mod revocation;
mod round_trips;
mod scim;
mod second_factor_browser;
mod security;
mod signing_keys;
mod store_unavailable;
mod token_endpoint;
mod token_exchange;
mod token_policy;
mod tokenctl;
