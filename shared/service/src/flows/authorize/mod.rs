//! The authorization code flow's HTTP-free core (contract part 8): the authorize request's
//! checks, the pending request kept in an encrypted cookie, CSRF tokens for the forms, PKCE,
//! and minting codes. The router maps the outcomes to pages, redirects and cookies.

mod code;
mod csrf;
mod keys;
mod pending;
mod pkce;
mod redirect;
mod request;
#[cfg(test)]
mod request_tests;

pub use code::{issue_code, IssuedCode};
pub use csrf::{csrf_token, verify_csrf_token, Form, CSRF_FIELD};
pub use keys::{AuthorizeKeys, WeakSecret, MIN_SECRET_BYTES};
pub use pending::{
    clear_pending_cookie, set_pending_cookie, PendingAuthorization, PendingCookieError,
    PENDING_COOKIE_NAME, PENDING_COOKIE_PATH, PENDING_TTL_SECONDS,
};
pub use pkce::{s256_challenge, verify_s256, S256};
pub use redirect::{code_location, ErrorRedirect};
pub use request::{
    AuthorizeParams, AuthorizeRejection, Prompt, RegisteredClient, UntrustedRedirect,
    ValidatedAuthorization, OFFLINE_ACCESS,
};
