//! The requests of the endpoints other than the token endpoint that read a form or JSON body.
//! Every parameter is optional here: each endpoint answers a missing one at its own step of its
//! order of checks.

use utoipa::ToSchema;

use super::client::ClientRequest;
use super::schema::{email_channel_handle, email_channel_type, parameter_value};
use super::{FromParameters, Parameters};
use crate::errors::ErrorCode;
use crate::secrets::Secret;

/// A revocation (RFC 7009) or introspection (RFC 7662) request.
pub type PresentedTokenRequest = ClientRequest<PresentedToken>;

/// Revocation's and introspection's parameters, after the client's credentials.
#[derive(Debug, ToSchema)]
pub struct PresentedToken {
    #[schema(schema_with = parameter_value)]
    pub token: Option<Secret>,
    /// `access_token` or `refresh_token`; only a hint.
    #[schema(schema_with = parameter_value)]
    pub token_type_hint: Option<String>,
}

impl FromParameters for PresentedToken {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            token: parameters.take_secret("token"),
            token_type_hint: parameters.take("token_type_hint"),
        })
    }
}

/// A `POST /oauth2/v0/otp` request.
pub type OtpSendRequest = ClientRequest<OtpSendParameters>;

/// `POST /oauth2/v0/otp`'s parameters, after the client's credentials: where to mail a one-time password,
/// and the facts it is bound to (the `otp` grant repeats them).
#[derive(Debug, ToSchema)]
pub struct OtpSendParameters {
    /// `email`, the only channel.
    #[schema(schema_with = email_channel_type)]
    pub channel_type: Option<String>,
    /// The e-mail address.
    #[schema(schema_with = email_channel_handle)]
    pub channel_handle: Option<String>,
    /// Shown in the mail, and bound to the one-time password (the `otp` grant repeats it).
    #[schema(schema_with = parameter_value)]
    pub name: Option<String>,
    /// Shown in the mail, and bound to the one-time password.
    #[schema(schema_with = parameter_value)]
    pub company: Option<String>,
    /// Shown in the mail, and bound to the one-time password.
    #[schema(schema_with = parameter_value)]
    pub link: Option<String>,
}

impl FromParameters for OtpSendParameters {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            channel_type: parameters.take("channel_type"),
            channel_handle: parameters.take("channel_handle"),
            name: parameters.take("name"),
            company: parameters.take("company"),
            link: parameters.take("link"),
        })
    }
}

/// A `POST /oauth2/v0/device_authorization` request (RFC 8628 §3.1).
pub type DeviceAuthorizationRequest = ClientRequest<DeviceAuthorizationParameters>;

/// `POST /oauth2/v0/device_authorization`'s parameters, after the client's credentials.
#[derive(Debug, ToSchema)]
pub struct DeviceAuthorizationParameters {
    /// Space-separated; absent: every scope the client may ask for a user.
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
    /// RFC 8707 (repeatable): the resources the tokens are for, as at the token endpoint.
    #[schema(schema_with = parameter_value, rename = "resource")]
    pub resources: Vec<String>,
}

impl FromParameters for DeviceAuthorizationParameters {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            scope: parameters.take("scope"),
            resources: parameters.take_resources(),
        })
    }
}

/// A `POST /oauth2/v0/par` request (RFC 9126 §2.1).
pub type PushedAuthorizationRequest = ClientRequest<PushedAuthorizationParameters>;

/// The PAR endpoint's parameters, after the client's credentials: the authorization request's,
/// passed on whole to the authorize checks.
#[derive(Debug)]
pub struct PushedAuthorizationParameters(pub std::collections::BTreeMap<String, String>);

impl FromParameters for PushedAuthorizationParameters {
    /// Every `resource` (it may repeat) is kept as one value, separated by spaces: a resource
    /// indicator is a URI, which never holds a space (`AuthorizeParams::from_parameters` splits
    /// them again).
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        let resources = parameters.take_resources();
        let mut rest = parameters.take_rest();
        if !resources.is_empty() {
            rest.insert(super::RESOURCE.to_owned(), resources.join(" "));
        }
        Ok(Self(rest))
    }
}

/// The PAR endpoint's request as the OpenAPI document describes it.
pub type PushedAuthorizationForm = ClientRequest<PushedAuthorizationSchema>;

/// The PAR endpoint's parameters as the OpenAPI document lists them: those of
/// `GET /oauth2/v0/authorize`, or a `request` object holding them.
#[derive(Debug, ToSchema)]
pub struct PushedAuthorizationSchema {
    /// `code`.
    #[schema(schema_with = parameter_value)]
    pub response_type: Option<String>,
    /// Exactly one registered with `--redirect-uri`.
    #[schema(schema_with = parameter_value)]
    pub redirect_uri: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub state: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub nonce: Option<String>,
    /// `login`, `consent` or `none`.
    #[schema(schema_with = parameter_value)]
    pub prompt: Option<String>,
    /// PKCE (RFC 7636).
    #[schema(schema_with = parameter_value)]
    pub code_challenge: Option<String>,
    /// `S256`.
    #[schema(schema_with = parameter_value)]
    pub code_challenge_method: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub max_age: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub login_hint: Option<String>,
    /// RFC 9449 §10: the DPoP key thumbprint the code is bound to.
    #[schema(schema_with = parameter_value)]
    pub dpop_jkt: Option<String>,
    /// RFC 9101: a JWT signed with a key of the client's JWK Set (ES256, PS256, EdDSA) whose
    /// claims are the parameters, in place of the others.
    #[schema(schema_with = parameter_value)]
    pub request: Option<String>,
}

/// The old-token exchange's body.
#[derive(Debug, Default, ToSchema)]
pub struct ExchangeBody {
    /// The old refresh token.
    #[schema(schema_with = parameter_value)]
    pub token: Option<Secret>,
    /// The calling app's client secret.
    #[schema(schema_with = parameter_value)]
    pub secret: Option<Secret>,
}

impl FromParameters for ExchangeBody {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            token: parameters.take_secret("token"),
            secret: parameters.take_secret("secret"),
        })
    }
}

/// The company auth-token endpoint's body: the app, which the query may name instead.
#[derive(Debug, Default, ToSchema)]
pub struct CompanyAuthTokenAppBody {
    #[schema(schema_with = parameter_value)]
    pub client_id: Option<String>,
}

impl FromParameters for CompanyAuthTokenAppBody {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            client_id: parameters.take("client_id"),
        })
    }
}

/// The company auth-token endpoint's query, as sent (its path operation documents it):
/// `flows::company_auth_token` checks `redirect` and the query's agreement with the body.
#[derive(Debug, Default)]
pub struct CompanyAuthTokenQuery {
    pub client_id: Option<String>,
    pub redirect: Option<String>,
}

impl FromParameters for CompanyAuthTokenQuery {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            client_id: parameters.take("client_id"),
            redirect: parameters.take("redirect"),
        })
    }
}

/// `POST /oauth2/v0/userinfo`'s optional body: the access token, if the header does not carry it
/// (RFC 6750 §2.2).
#[derive(Debug, Default, ToSchema)]
pub struct UserInfoForm {
    #[schema(value_type = Option<String>)]
    pub access_token: Option<Secret>,
}

impl FromParameters for UserInfoForm {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            access_token: parameters.take_secret("access_token"),
        })
    }
}
