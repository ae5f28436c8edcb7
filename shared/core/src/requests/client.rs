//! The client's credentials as a request presents them, before `auth::client` checks them, and
//! the requests of the endpoints that authenticate their client ([`ClientRequest`]).

use std::borrow::Cow;

use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use super::schema::{flat_form, parameter_value};
use super::{FromParameters, Parameters};
use crate::errors::ErrorCode;
use crate::secrets::Secret;

/// The credentials of `Authorization: Basic`, decoded by HTTP (RFC 6749 §2.3.1: both halves
/// form-decoded). An empty half is kept empty: authentication counts it as missing.
#[derive(Debug, Clone)]
pub struct BasicCredentials {
    pub id: String,
    pub secret: Secret,
}

/// The client credentials a request presents: `client_id` and `client_secret` in the body, or
/// HTTP Basic, or a `private_key_jwt` assertion. Nothing here is checked yet.
#[derive(Debug, Default, ToSchema)]
pub struct PresentedClient {
    #[schema(schema_with = parameter_value)]
    pub client_id: Option<String>,
    #[schema(schema_with = parameter_value)]
    pub client_secret: Option<Secret>,
    /// `private_key_jwt` (RFC 7523): `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`.
    #[schema(schema_with = parameter_value)]
    pub client_assertion_type: Option<String>,
    /// `private_key_jwt`: the client's signed JWT, instead of `client_secret`.
    #[schema(schema_with = parameter_value)]
    pub client_assertion: Option<Secret>,
    /// `Authorization: Basic`: `None` without one, the catalogue's code (64) for one that does
    /// not decode, answered when the client is authenticated. A header, not a parameter.
    #[schema(ignore)]
    pub basic: Option<Result<BasicCredentials, ErrorCode>>,
}

impl PresentedClient {
    pub(super) fn read(
        parameters: &mut Parameters,
        basic: Option<Result<BasicCredentials, ErrorCode>>,
    ) -> Self {
        Self {
            client_id: parameters.take("client_id"),
            client_secret: parameters.take_secret("client_secret"),
            client_assertion_type: parameters.take("client_assertion_type"),
            client_assertion: parameters.take_secret("client_assertion"),
            basic,
        }
    }

    /// The request sent HTTP Basic, well-formed or not: an `invalid_client` answer then carries
    /// `WWW-Authenticate: Basic` (RFC 6749 §5.2), which HTTP adds.
    pub fn via_basic(&self) -> bool {
        self.basic.is_some()
    }

    /// The client authenticates with an assertion rather than a secret.
    pub fn presents_assertion(&self) -> bool {
        self.client_assertion_type.is_some() || self.client_assertion.is_some()
    }
}

/// A request of an endpoint that authenticates its client (revocation, introspection, the
/// one-time password request): the client's credentials, then the endpoint's own parameters.
/// The token endpoint's is [`super::TokenRequest`], whose parameters depend on the grant.
#[derive(Debug)]
pub struct ClientRequest<T> {
    pub client: PresentedClient,
    pub request: T,
}

impl<T: FromParameters> ClientRequest<T> {
    /// From a decoded body's (name, value) pairs and the decoded Basic header, if any.
    pub fn parse<N, V>(
        pairs: impl IntoIterator<Item = (N, V)>,
        basic: Option<Result<BasicCredentials, ErrorCode>>,
    ) -> Result<Self, ErrorCode>
    where
        N: Into<String>,
        V: Into<String>,
    {
        let mut parameters = Parameters::from_pairs(pairs)?;
        let client = PresentedClient::read(&mut parameters, basic);
        Ok(Self {
            client,
            request: T::read(&mut parameters)?,
        })
    }
}

/// The client's parameters and the endpoint's, in one object: that is how they are sent.
impl<T: ToSchema> PartialSchema for ClientRequest<T> {
    fn schema() -> RefOr<Schema> {
        flat_form(
            "Client authentication (in the body, or HTTP Basic instead of `client_id` and \
             `client_secret`), then the endpoint's parameters (form or JSON; all optional here \
             because each missing one has its own catalogue code)",
            [PresentedClient::schema(), T::schema()],
        )
    }
}

impl<T: ToSchema> ToSchema for ClientRequest<T> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("{}WithClient", T::name()))
    }
}
