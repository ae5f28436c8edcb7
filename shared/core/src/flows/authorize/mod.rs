//! The authorization code flow (docs/decisions.md, "Authorization code flow"), free of HTTP: the
//! authorize request's checks, the pending request kept in an encrypted cookie, CSRF tokens for the
//! forms, PKCE, minting codes and checking them when redeemed, and the steps ([`start`],
//! [`submit`]) that tie these together, signing in with the pages' one sign-in interaction.
//! `http::authorize` maps each step to a page (`http::pages`), a redirect and cookies; the token
//! endpoint's `grant_type=authorization_code` (`grants`) redeems the codes.

mod code;
mod csrf;
mod pending;
mod pushed;
mod redirect;
mod request;
mod request_object;
#[cfg(test)]
mod request_tests;
mod resources;
mod signed_in;
mod start;
mod step;
mod submit;

pub use crate::domain::pkce::{s256_challenge, verify_s256, S256};
pub use crate::flows::sign_in::{
    page_keys as authorize_keys, sign_in_message, PageKeys as AuthorizeKeys, CSRF_FIELD,
    NOT_THE_EXPECTED_ACCOUNT,
};
pub use code::{issue_code, IssuedCode};
pub use csrf::{csrf_token, verify_csrf_token, Form};
pub use pending::{
    PendingAuthorization, PendingCookieError, PENDING_COOKIE_NAME, PENDING_COOKIE_PATH,
    PENDING_TTL_SECONDS,
};
pub use pushed::{push, PushDenial, PushError, PushedRequest};
pub use redirect::{code_location, ErrorRedirect};
pub use request::{
    AuthorizeParams, AuthorizeRejection, Prompt, RegisteredClient, UntrustedRedirect,
    ValidatedAuthorization, OFFLINE_ACCESS,
};
pub use request_object::REQUEST_OBJECT_MAX_LIFETIME_SECONDS;
pub use start::start;
pub use step::{AuthorizeError, AuthorizeStep, FormPage, RefusalReason};
pub use submit::{resume_upstream, submit, SubmittedCookies, SubmittedForm};
