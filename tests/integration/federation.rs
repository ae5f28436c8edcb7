//! Company identity providers (docs/decisions.md, "Company identity providers"), on both
//! stores, against a real OpenID Provider (node-oidc-provider, `tests/support/oidc_idp.rs`): a
//! login of the company's domain goes to its IdP and comes back signed in, linked or made just
//! in time; every refusal of the callback is an error page with a reference and an audit event.

pub(crate) mod fixture;
mod id_jag;
pub(crate) mod id_jag_fixture;
mod id_jag_mcp;
mod in_browser;
pub(crate) mod oidc;
mod pages;
mod refusals;
mod saml;
pub(crate) mod saml_fixture;
mod saml_in_browser;
mod saml_refusals;
mod saml_retry;
mod tokens;
