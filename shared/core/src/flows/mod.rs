//! The flows besides the token endpoint's grants, independent of HTTP like the grants: each
//! takes the request's plain values and answers tokens or a domain error that its HTTP module
//! turns into the endpoint's response.
//!
//! A flow with several steps or state of its own (the authorization code flow, one-time
//! passwords) is a folder owning its request parsing, its state and its errors; the token
//! endpoint's handler of its grant (in `grants`) calls into it for anything the flow decides.

pub mod account;
pub mod authorize;
pub mod backchannel_logout;
pub mod client_secrets;
pub mod company_auth_token;
pub mod device;
pub mod factor_notice;
pub mod introspection;
pub mod legacy_exchange;
pub mod logout;
pub mod passkeys;
pub mod registration;
pub mod revocation;
pub mod saml_logout;
pub mod second_factor;
pub mod sessions;
pub mod sign_in;
pub mod upstream_logout;
pub mod userinfo;
