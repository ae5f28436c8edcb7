//! Who is calling, independent of HTTP: the client (secrets, `private_key_jwt`), a bearer access
//! token and its DPoP proof, the user (password with its lockout, one-time password), and the
//! principal a credential names. The grants and the flows both authenticate through here; this
//! module knows neither.

pub mod bearer;
pub mod client;
pub mod client_assertion;
pub mod dpop;
pub mod otp;
pub mod presented_token;
pub mod principal;
pub mod user;

pub use bearer::{
    authenticate_access_token, authenticate_bearer, bearer_credential, verify_access_token,
    BearerDenial, BearerError, BearerToken,
};
pub use client::authenticate_client;
pub use user::{
    authenticate_user, authenticate_user_from, check_local_sign_in_allowed,
    check_one_factor_allowed, check_user_may_sign_in, has_own_second_factor, requires_company_idp,
    requires_second_factor,
};
