//! The token service's protocol layer (crate `token-core`): the grants (one handler each) and the
//! other flows, who is calling, how tokens are minted and signed, mail, limits, audit, the
//! configuration the binaries read, and the ports (`Mailer`, `LogoutQueue`, `KmsKeys`,
//! `SecretStore`, the fetcher's `Exchange`) whose adapters are `token-adapters`'. No HTTP here:
//! `token-http` maps what these return.
//!
//! The layers below are reached under the names they had when they were modules of one crate
//! (`crate::domain`, `crate::store`, …), so that a path says which layer it reaches.

pub mod admin;
pub mod audit;
pub mod auth;
pub mod client_documents;
pub mod client_keys;
pub mod config;
pub mod context;
pub mod device_pace;
pub mod errors;
pub mod federation;
pub mod flows;
pub mod grants;
pub mod idp_documents;
pub mod import;
pub mod issuance;
pub mod jwt;
pub mod limits;
pub mod logout_delivery;
pub mod mail;
pub mod measure;
pub mod outbound;
pub mod provisioning;
pub mod requests;
pub mod services;
pub mod signing;
#[cfg(test)]
mod test_state;

use token_domain as domain;
use token_domain::{clock, jose, random, secrets};
use token_store as store;
