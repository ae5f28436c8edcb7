//! The token endpoint's request: `grant_type`, the client's credentials, and one typed request
//! per grant. Adding a grant means adding its type here, its arm in [`GrantRequest::read`] and
//! its schema in [`TokenRequest`]'s document (docs/layout.md, "Adding a grant").

use std::borrow::Cow;

use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use super::client::{BasicCredentials, PresentedClient};
use super::schema::{flat_form, parameter, parameter_value};
use super::{FromParameters, Parameters};
use crate::domain::{GrantType, ID_JAG_TOKEN_TYPE};
use crate::errors::ErrorCode;
use crate::secrets::Secret;

/// A token request whose shape is sound: no parameter repeated, a supported `grant_type`.
#[derive(Debug)]
pub struct TokenRequest {
    pub grant_type: GrantType,
    pub client: PresentedClient,
    /// The grant's own parameters, or the code for the first one missing or invalid in the
    /// grant's order. Kept, not answered, by the parse: the dispatch answers it only once the
    /// client is authenticated and allowed the grant (the catalogue's order of checks).
    pub grant: Result<GrantRequest, ErrorCode>,
    /// `resource` (RFC 8707), for every grant: checked by the dispatch once the client is
    /// authenticated and allowed the grant, or by the grant against what was granted.
    pub resources: Vec<String>,
}

impl TokenRequest {
    /// From a decoded body's (name, value) pairs and the decoded Basic header, if any. Refuses a
    /// repeated parameter (135), then a missing (65) or unsupported (60) `grant_type`.
    pub fn parse<N, V>(
        pairs: impl IntoIterator<Item = (N, V)>,
        basic: Option<Result<BasicCredentials, ErrorCode>>,
    ) -> Result<Self, ErrorCode>
    where
        N: Into<String>,
        V: Into<String>,
    {
        let mut parameters = Parameters::from_pairs(pairs)?;
        let grant_type = parameters
            .take("grant_type")
            .ok_or(ErrorCode::GrantTypeMissing)?;
        let grant_type = GrantType::parse(&grant_type).ok_or(ErrorCode::UnsupportedGrant)?;
        let client = PresentedClient::read(&mut parameters, basic);
        Ok(Self {
            grant_type,
            client,
            grant: GrantRequest::read(grant_type, &mut parameters),
            resources: parameters.take_resources(),
        })
    }
}

/// One object with every grant's parameters: which apply is `grant_type`'s to say, and a
/// parameter another grant reads is ignored, as any unknown one is. Flat rather than a `oneOf`
/// per grant: that is what the endpoint accepts (a request with another grant's parameters is
/// not refused for them), and a form body is generated from an object's properties by the
/// fuzzer (infra/fuzz-api.sh).
impl PartialSchema for TokenRequest {
    fn schema() -> RefOr<Schema> {
        flat_form(
            "Parameters of the token endpoint (form or JSON; all optional here because each \
             missing one has its own catalogue code)",
            [
                parameter(
                    "grant_type",
                    "`client_credentials`, `password`, `refresh_token` (or `refresh`), \
                     `authorization_code`, `otp`, \
                     `urn:ietf:params:oauth:grant-type:device_code`, \
                     `urn:ietf:params:oauth:grant-type:token-exchange` or \
                     `urn:ietf:params:oauth:grant-type:jwt-bearer`.",
                ),
                PresentedClient::schema(),
                resource_parameter(),
                ClientCredentialsRequest::schema(),
                PasswordRequest::schema(),
                RefreshRequest::schema(),
                AuthorizationCodeRequest::schema(),
                OtpGrantRequest::schema(),
                DeviceCodeRequest::schema(),
                TokenExchangeRequest::schema(),
                JwtBearerRequest::schema(),
            ],
        )
    }
}

/// `resource`, which every grant takes and which may repeat (as a token exchange's `audience` may).
pub(super) fn resource_parameter() -> RefOr<Schema> {
    parameter(
        super::RESOURCE,
        "RFC 8707: an absolute https URI without fragment (http on loopback) naming the API the \
         access token is for, its `aud`; repeat it (in JSON: an array) for several. Allowed: \
         `RESOURCES`, narrowed by the client's `--resource`; continuing a grant (a code, a \
         refresh, a device code), only resources it granted. Otherwise `invalid_target` (160).",
    )
}

impl ToSchema for TokenRequest {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TokenRequest")
    }
}

/// The parameters of the grant `grant_type` names.
#[derive(Debug)]
pub enum GrantRequest {
    ClientCredentials(ClientCredentialsRequest),
    Password(PasswordRequest),
    RefreshToken(RefreshRequest),
    AuthorizationCode(AuthorizationCodeRequest),
    Otp(OtpGrantRequest),
    DeviceCode(DeviceCodeRequest),
    TokenExchange(TokenExchangeRequest),
    JwtBearer(JwtBearerRequest),
}

impl GrantRequest {
    fn read(grant_type: GrantType, parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(match grant_type {
            GrantType::ClientCredentials => {
                Self::ClientCredentials(ClientCredentialsRequest::read(parameters)?)
            }
            GrantType::Password => Self::Password(PasswordRequest::read(parameters)?),
            GrantType::RefreshToken => Self::RefreshToken(RefreshRequest::read(parameters)?),
            GrantType::AuthorizationCode => {
                Self::AuthorizationCode(AuthorizationCodeRequest::read(parameters)?)
            }
            GrantType::Otp => Self::Otp(OtpGrantRequest::read(parameters)?),
            GrantType::DeviceCode => Self::DeviceCode(DeviceCodeRequest::read(parameters)?),
            GrantType::TokenExchange => {
                Self::TokenExchange(TokenExchangeRequest::read(parameters)?)
            }
            GrantType::JwtBearer => Self::JwtBearer(JwtBearerRequest::read(parameters)?),
        })
    }
}

/// `grant_type=client_credentials`.
#[derive(Debug, ToSchema)]
pub struct ClientCredentialsRequest {
    /// Space-separated; absent: every scope the grant allows.
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
}

impl FromParameters for ClientCredentialsRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            scope: parameters.take("scope"),
        })
    }
}

/// `grant_type=password`: a user's login and password, or a company's id and auth token.
#[derive(Debug, ToSchema)]
pub struct PasswordRequest {
    /// The user's login, or (`credtype=authtoken`) the company's id.
    #[schema(schema_with = parameter_value)]
    pub username: String,
    /// The user's password, or (`credtype=authtoken`) the company auth token.
    #[schema(schema_with = parameter_value)]
    pub password: Secret,
    /// `password` (the default) or `authtoken`.
    #[schema(schema_with = parameter_value)]
    pub credtype: CredentialType,
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
}

/// What `password` is: `credtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialType {
    /// A user's password (`credtype=password`, or no `credtype`).
    Password,
    /// A company auth token (`credtype=authtoken`).
    AuthToken,
}

/// 51, 52, then 120.
impl FromParameters for PasswordRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        let username = parameters
            .take("username")
            .ok_or(ErrorCode::UsernameMissing)?;
        let password = parameters
            .take_secret("password")
            .ok_or(ErrorCode::PasswordMissing)?;
        let credtype = match parameters.take("credtype").as_deref() {
            None | Some("password") => CredentialType::Password,
            Some("authtoken") => CredentialType::AuthToken,
            Some(_) => return Err(ErrorCode::CredtypeInvalid),
        };
        Ok(Self {
            username,
            password,
            credtype,
            scope: parameters.take("scope"),
        })
    }
}

/// `grant_type=refresh_token` (or `refresh`).
#[derive(Debug, ToSchema)]
pub struct RefreshRequest {
    #[schema(schema_with = parameter_value)]
    pub refresh_token: Secret,
    /// A subset of the family's scopes; absent: the family's.
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
}

/// 106.
impl FromParameters for RefreshRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            refresh_token: parameters
                .take_secret("refresh_token")
                .ok_or(ErrorCode::RefreshTokenMissing)?,
            scope: parameters.take("scope"),
        })
    }
}

/// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636).
#[derive(Debug, ToSchema)]
pub struct AuthorizationCodeRequest {
    #[schema(schema_with = parameter_value)]
    pub code: Secret,
    /// The `redirect_uri` the code was requested with.
    #[schema(schema_with = parameter_value)]
    pub redirect_uri: String,
    /// PKCE: required when the code was requested with a `code_challenge`.
    #[schema(schema_with = parameter_value)]
    pub code_verifier: Option<String>,
}

/// The missing code's, then the missing redirect URI's.
impl FromParameters for AuthorizationCodeRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        let code = parameters
            .take_secret("code")
            .ok_or(ErrorCode::CodeMissing)?;
        let redirect_uri = parameters
            .take("redirect_uri")
            .ok_or(ErrorCode::RedirectUriMissing)?;
        Ok(Self {
            code,
            redirect_uri,
            code_verifier: parameters.take("code_verifier"),
        })
    }
}

/// `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4).
#[derive(Debug, ToSchema)]
pub struct DeviceCodeRequest {
    /// The `device_code` of the device authorization response.
    #[schema(schema_with = parameter_value)]
    pub device_code: Secret,
}

impl FromParameters for DeviceCodeRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        let device_code = parameters
            .take_secret("device_code")
            .ok_or(ErrorCode::DeviceCodeMissing)?;
        Ok(Self { device_code })
    }
}

/// `grant_type=otp`: the one-time password `POST /oauth2/v0/otp` mailed, with what that request
/// said. All optional: their absence is answered by the one-time password's own checks, in
/// their order (`auth::otp::check_otp`), after the scope's.
#[derive(Debug, ToSchema)]
pub struct OtpGrantRequest {
    /// The one-time password.
    #[schema(schema_with = parameter_value)]
    pub otp: Option<Secret>,
    /// `email`, as when it was requested.
    #[schema(schema_with = super::schema::email_channel_type)]
    pub channel_type: Option<String>,
    /// The e-mail address, as when it was requested.
    #[schema(schema_with = super::schema::email_channel_handle)]
    pub channel_handle: Option<String>,
    /// As when it was requested.
    #[schema(schema_with = parameter_value)]
    pub name: Option<String>,
    /// As when it was requested.
    #[schema(schema_with = parameter_value)]
    pub company: Option<String>,
    /// As when it was requested.
    #[schema(schema_with = parameter_value)]
    pub link: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
}

impl FromParameters for OtpGrantRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            otp: parameters.take_secret("otp"),
            channel_type: parameters.take("channel_type"),
            channel_handle: parameters.take("channel_handle"),
            name: parameters.take("name"),
            company: parameters.take("company"),
            link: parameters.take("link"),
            scope: parameters.take("scope"),
        })
    }
}

/// RFC 8693 §3's `urn:ietf:params:oauth:token-type:access_token`: the one type this service
/// exchanges and issues.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// RFC 8693 §3's `urn:ietf:params:oauth:token-type:id_token`: a subject token may be one of
/// this service's ID tokens.
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";

/// `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693 §2.1). `resource`
/// is read for every grant ([`TokenRequest::resources`]).
#[derive(Debug, ToSchema)]
pub struct TokenExchangeRequest {
    /// An access token of this service, issued to this client or for one of its resources.
    #[schema(schema_with = parameter_value)]
    pub subject_token: Option<Secret>,
    /// `urn:ietf:params:oauth:token-type:access_token`, or `…:id_token` for an ID token this
    /// service issued to the client.
    #[schema(schema_with = parameter_value)]
    pub subject_token_type: String,
    /// An access token of this service naming who acts for the subject (the `act` claim).
    #[schema(schema_with = parameter_value)]
    pub actor_token: Option<Secret>,
    /// `urn:ietf:params:oauth:token-type:access_token`, with `actor_token`.
    #[schema(schema_with = parameter_value)]
    pub actor_token_type: Option<String>,
    /// A resource URI the token is for, as `resource`; may repeat.
    #[schema(schema_with = parameter_value)]
    pub audience: Vec<String>,
    /// At most the subject token's scopes; absent: the subject token's.
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
    /// `urn:ietf:params:oauth:token-type:access_token` (the default), or
    /// `urn:ietf:params:oauth:token-type:id-jag` for an identity assertion to another
    /// authorization server (`audience`, its issuer) from an ID token of this client.
    #[schema(schema_with = parameter_value)]
    pub requested_token_type: Option<String>,
}

impl TokenExchangeRequest {
    /// Whether the request asks for an identity assertion (ID-JAG) rather than an access token.
    pub fn wants_id_jag(&self) -> bool {
        self.requested_token_type.as_deref() == Some(ID_JAG_TOKEN_TYPE)
    }
}

/// 164 for a token type missing or not supported: the subject's, then the requested one, then
/// the actor's.
impl FromParameters for TokenExchangeRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        let subject_token_type = parameters
            .take("subject_token_type")
            .filter(|t| t == ACCESS_TOKEN_TYPE || t == ID_TOKEN_TYPE)
            .ok_or(ErrorCode::TokenTypeUnsupported)?;
        let requested_token_type = parameters.take("requested_token_type");
        if requested_token_type
            .as_deref()
            .is_some_and(|t| t != ACCESS_TOKEN_TYPE && t != ID_JAG_TOKEN_TYPE)
        {
            return Err(ErrorCode::TokenTypeUnsupported);
        }
        let actor_token = parameters.take_secret("actor_token");
        let actor_token_type = parameters.take("actor_token_type");
        let actor_type_ok = match (&actor_token, actor_token_type.as_deref()) {
            (None, None) => true,
            (Some(_), Some(t)) => t == ACCESS_TOKEN_TYPE,
            _ => false,
        };
        if !actor_type_ok {
            return Err(ErrorCode::TokenTypeUnsupported);
        }
        Ok(Self {
            subject_token: parameters.take_secret("subject_token"),
            subject_token_type,
            actor_token,
            actor_token_type,
            audience: parameters.take_audiences(),
            scope: parameters.take("scope"),
            requested_token_type,
        })
    }
}

/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1) with an identity
/// assertion (ID-JAG) of a company's identity provider. `resource` is read for every grant.
#[derive(Debug, ToSchema)]
pub struct JwtBearerRequest {
    /// The ID-JAG: a JWT with `typ: oauth-id-jag+jwt`, signed by a company identity provider
    /// trusted for identity assertions, whose `aud` is this service's issuer.
    #[schema(schema_with = parameter_value)]
    pub assertion: Secret,
    /// Within the client's allowed scopes and the assertion's `scope`; absent: both.
    #[schema(schema_with = parameter_value)]
    pub scope: Option<String>,
}

/// 169 without an assertion.
impl FromParameters for JwtBearerRequest {
    fn read(parameters: &mut Parameters) -> Result<Self, ErrorCode> {
        Ok(Self {
            assertion: parameters
                .take_secret("assertion")
                .ok_or(ErrorCode::AssertionMissing)?,
            scope: parameters.take("scope"),
        })
    }
}
