//! The authorization code flow over real HTTP, on both stores (docs/decisions.md, Authorization
//! code flow): the authorize endpoint's pages and redirects, every error it catalogues, the
//! `authorization_code` grant with PKCE, reuse revoking the family, and ID tokens verified against
//! the JWK Set.

mod code_exchange;
pub(crate) mod flow;
pub(crate) mod in_browser;
mod refusals;
mod sign_in_lockout;
