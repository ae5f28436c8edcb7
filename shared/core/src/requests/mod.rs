//! The typed requests of every endpoint that reads a form or JSON body: one type per grant of
//! the token endpoint ([`TokenRequest`], [`GrantRequest`]) and one per other endpoint, each read
//! from the body's decoded (name, value) pairs in this one place. Decoding the body (content
//! type, form or JSON, size limit) and the `Authorization: Basic` header is HTTP's; what RFC 6749
//! §3.1 says of parameters whatever carried them is applied here, so every decoder refuses the
//! same requests: a parameter sent without a value is treated as omitted, and none may appear
//! twice (code 135).
//!
//! A type's parse answers only the request's shape. A parameter whose absence has its own
//! catalogue code is either kept optional and checked by the flow at its step (revocation's
//! `token`, the one-time password's fields), or its code waits in [`TokenRequest::grant`] until
//! the dispatch has authenticated the client: nothing about a grant's parameters is answered to
//! a caller that has not proven who it is.
//!
//! The OpenAPI document describes these same types (`ToSchema`): every parameter as a value of a
//! form or a JSON object (`schema::parameter_value`), none required, since each missing one is
//! answered with its own code rather than refused by the schema.

mod bodies;
mod client;
mod schema;
mod token;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use crate::errors::ErrorCode;
use crate::secrets::Secret;

pub use bodies::{
    CompanyAuthTokenAppBody, CompanyAuthTokenQuery, DeviceAuthorizationParameters,
    DeviceAuthorizationRequest, ExchangeBody, OtpSendParameters, OtpSendRequest, PresentedToken,
    PresentedTokenRequest, PushedAuthorizationForm, PushedAuthorizationParameters,
    PushedAuthorizationRequest, PushedAuthorizationSchema, UserInfoForm,
};
pub use client::{BasicCredentials, ClientRequest, PresentedClient};
pub use token::{
    AuthorizationCodeRequest, ClientCredentialsRequest, CredentialType, DeviceCodeRequest,
    GrantRequest, JwtBearerRequest, OtpGrantRequest, PasswordRequest, RefreshRequest,
    TokenExchangeRequest, TokenRequest, ACCESS_TOKEN_TYPE, ID_TOKEN_TYPE,
};

/// One request's parameters by name, once RFC 6749 §3.1's rules are applied. Only this module
/// builds them: the types read from them are what the rest of the service sees.
pub struct Parameters {
    values: HashMap<String, String>,
    /// `resource` (RFC 8707 §2), in the order sent.
    resources: Vec<String>,
    /// `audience` (RFC 8693 §2.1), in the order sent.
    audiences: Vec<String>,
}

/// The parameter RFC 8707 lets a request repeat, once per resource.
pub const RESOURCE: &str = "resource";
/// The parameter RFC 8693 lets a token exchange repeat, once per audience.
pub const AUDIENCE: &str = "audience";

impl std::fmt::Debug for Parameters {
    /// Names only: values include passwords and tokens.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.values.keys()).finish()
    }
}

impl Parameters {
    /// The decoded (name, value) pairs in the order sent: empty values are dropped, a repeated
    /// name is refused (code 135), even one no request type reads; only `resource` and
    /// `audience` may repeat.
    fn from_pairs<N, V>(pairs: impl IntoIterator<Item = (N, V)>) -> Result<Self, ErrorCode>
    where
        N: Into<String>,
        V: Into<String>,
    {
        let mut values = HashMap::new();
        let (mut resources, mut audiences) = (Vec::new(), Vec::new());
        for (name, value) in pairs {
            let (name, value) = (name.into(), value.into());
            if value.is_empty() {
                continue;
            }
            if name == RESOURCE {
                resources.push(value);
            } else if name == AUDIENCE {
                audiences.push(value);
            } else if values.insert(name, value).is_some() {
                return Err(ErrorCode::UnsupportedRequestFormat);
            }
        }
        Ok(Self {
            values,
            resources,
            audiences,
        })
    }

    /// Every `resource` sent, as sent: whether each is a resource indicator, and one the client
    /// may name, is for the grant to answer (`invalid_target`) once the client is known.
    pub fn take_resources(&mut self) -> Vec<String> {
        std::mem::take(&mut self.resources)
    }

    /// Every `audience` sent, as sent (a token exchange's; RFC 8693 §2.1).
    pub fn take_audiences(&mut self) -> Vec<String> {
        std::mem::take(&mut self.audiences)
    }

    /// The parameter's value, if sent. Taken, so that two fields never read one parameter.
    pub fn take(&mut self, name: &str) -> Option<String> {
        self.values.remove(name)
    }

    /// Every parameter not taken yet: what a request passes on as a whole (a pushed
    /// authorization request's parameters).
    pub fn take_rest(&mut self) -> std::collections::BTreeMap<String, String> {
        std::mem::take(&mut self.values).into_iter().collect()
    }

    /// A credential's value, if sent: never printed from here on.
    pub fn take_secret(&mut self, name: &str) -> Option<Secret> {
        self.take(name).map(Secret::new)
    }
}

/// A request type read from a body's parameters. Parameters no type reads are ignored (RFC 6749
/// §3.2), but still refused when repeated.
pub trait FromParameters: Sized {
    /// Reads the type's own parameters; an error is a shape error, answered before anything
    /// else of the request is looked at.
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode>;

    /// The type from a decoded body's (name, value) pairs.
    fn parse<N, V>(pairs: impl IntoIterator<Item = (N, V)>) -> Result<Self, ErrorCode>
    where
        N: Into<String>,
        V: Into<String>,
    {
        Self::read(&mut Parameters::from_pairs(pairs)?)
    }
}
