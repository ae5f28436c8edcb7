//! The flows besides the token endpoint's grants, independent of HTTP like the grants: each
//! takes the request's plain values and answers tokens or a domain error that its HTTP module
//! turns into the endpoint's response.

pub mod authorize;
pub mod company_auth_token;
pub mod introspection;
pub mod legacy_exchange;
pub mod presented_token;
pub mod revocation;
