//! Pushed authorization requests (RFC 9126) and request objects (RFC 9101) on both sides
//! (docs/decisions.md, "Pushed authorization requests and request objects"): [`push`] checks an
//! authenticated client's request as the authorize endpoint would and keeps it behind a
//! `request_uri`; [`resolve`] turns an authorize request carrying a `request_uri` or a `request`
//! object into the parameters it stands for, before the usual checks.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::redirect::ErrorRedirect;
use super::request::{
    AuthorizeParams, AuthorizeRejection, RegisteredClient, UntrustedRedirect,
    ValidatedAuthorization,
};
use super::request_object::verify_request_object;
use crate::auth::dpop::{self, DpopRequest, ProofDenial};
use crate::clock::UnixTime;
use crate::domain::{Client, PushedAuthorization, PUSHED_REQUEST_TTL_SECONDS, REQUEST_URI_PREFIX};
use crate::errors::{Denial, ErrorCode, GrantDenial, Refusal};
use crate::limits::{Exceeded, Limit};
use crate::random::RandomExt;
use crate::secrets::TokenHash;
use crate::services::Services;
use crate::store::StoreError;

/// A stored pushed request, as the PAR endpoint answers it.
#[derive(Debug)]
pub struct PushedRequest {
    pub request_uri: String,
    pub expires_in: UnixTime,
}

/// Why a push was refused. Every refusal but the client's is a 400.
#[derive(Debug)]
pub enum PushDenial {
    /// As at the token endpoint: client authentication, a disabled client, the rate limit.
    Client(GrantDenial),
    /// What the authorize endpoint would have redirected with (its `error`, description and
    /// catalogue code when it has one), or shown as a page before the address was trusted.
    Refused {
        error: &'static str,
        description: &'static str,
        code: Option<u16>,
    },
}

impl Denial for PushDenial {}

impl From<Exceeded> for PushDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self::Client(exceeded.into())
    }
}

impl From<ErrorCode> for PushDenial {
    fn from(code: ErrorCode) -> Self {
        Self::Refused {
            error: code.error().as_str(),
            description: code.description(),
            code: Some(code.code()),
        }
    }
}

pub type PushError = Refusal<PushDenial>;

/// The thumbprint of the push's DPoP proof key, once the proof passed every check (its `jti`
/// spent); `None` without a proof.
async fn proof_key(services: &Services, dpop: &DpopRequest) -> Result<Option<String>, PushError> {
    let proof = dpop::check_request(services, dpop, None)
        .await
        .map_err(|refusal| {
            refusal.map_denied(|denial| {
                tracing::info!(%denial, "pushed request: DPoP proof refused");
                PushDenial::Client(GrantDenial::from(denial))
            })
        })?;
    Ok(proof.map(|proof| proof.jkt))
}

/// RFC 9126 §2: checks the pushed `parameters` (the body's, the client's credentials taken out)
/// for the authenticated `client`, and keeps them for [`PUSHED_REQUEST_TTL_SECONDS`]. Counted as
/// a token request of the client: each push writes a record.
///
/// A DPoP proof sent with the push binds the code to its key, as `dpop_jkt` would (RFC 9449
/// §10.1); with both, they must name the same key.
pub async fn push(
    services: &Services,
    client: &Client,
    mut parameters: BTreeMap<String, String>,
    dpop: &DpopRequest,
) -> Result<PushedRequest, PushError> {
    let now = services.ctx.clock.now();
    services
        .limiter()
        .count(Limit::ClientTokenRequests, &client.id.to_string(), now)
        .await?;
    // RFC 9126 §2.1: a pushed request names no other pushed request.
    if parameters.contains_key("request_uri") {
        return Err(PushDenial::Refused {
            error: "invalid_request",
            description: "request_uri may not be pushed",
            code: None,
        }
        .into());
    }
    if let Some(request) = parameters.get("request") {
        let issuer = services.geolocation().as_str();
        parameters = verify_request_object(request, client, issuer, now).map_err(|reason| {
            tracing::info!(reason, "request object refused");
            PushDenial::from(ErrorCode::InvalidRequestObject)
        })?;
    }
    parameters.insert("client_id".to_owned(), client.wire_id());
    let params =
        AuthorizeParams::from_parameters(&parameters).map_err(|_| PushDenial::Refused {
            error: "invalid_request",
            description: "a parameter is not a string",
            code: None,
        })?;
    let mut request = params
        .validate(&RegisteredClient::of(client))
        .map_err(PushDenial::from)?;
    super::resources::check_resources(&services.policy, client, &params, &mut request)
        .map_err(PushDenial::from)?;
    if let Some(redirect) = profile_refusal(client, &params, &request) {
        return Err(PushDenial::from(AuthorizeRejection::Redirect(redirect)).into());
    }
    if let Some(jkt) = proof_key(services, dpop).await? {
        if request.dpop_jkt.as_ref().is_some_and(|named| *named != jkt) {
            tracing::info!("pushed request: dpop_jkt names another key than the DPoP proof's");
            return Err(PushDenial::Client(GrantDenial::from(ProofDenial::WrongKey)).into());
        }
        parameters.insert("dpop_jkt".to_owned(), jkt);
    }
    let random = services.ctx.random.opaque_token();
    let record = PushedAuthorization {
        request_uri_hash: TokenHash::of(&random),
        client_id: client.id,
        parameters,
        pushed_at: now,
        expires_at: now + PUSHED_REQUEST_TTL_SECONDS,
    };
    services
        .ctx
        .store
        .pushed_authorizations()
        .put_pushed_authorization(&record)
        .await?;
    Ok(PushedRequest {
        request_uri: format!("{REQUEST_URI_PREFIX}{random}"),
        expires_in: PUSHED_REQUEST_TTL_SECONDS,
    })
}

impl From<AuthorizeRejection> for PushDenial {
    fn from(rejection: AuthorizeRejection) -> Self {
        match rejection {
            AuthorizeRejection::Redirect(redirect) => Self::Refused {
                error: redirect.error(),
                description: redirect.description(),
                code: redirect.error_code(),
            },
            AuthorizeRejection::Page(UntrustedRedirect::RedirectUriMissing) => {
                ErrorCode::RedirectUriMissing.into()
            }
            AuthorizeRejection::Page(_) => Self::Refused {
                error: "invalid_request",
                description: "redirect_uri is not registered for this client",
                code: None,
            },
        }
    }
}

/// The parameters an authorize request for `client` stands for: with a `request_uri`, the
/// pushed request's (taken, so used once; the request's other parameters are ignored);
/// otherwise, for a client that must push, the page naming 175; with a `request` object, its
/// verified claims; else the request's own.
pub(super) async fn resolve<'a>(
    services: &Services,
    params: &'a AuthorizeParams,
    client: &Client,
) -> Result<Result<Cow<'a, AuthorizeParams>, AuthorizeRejection>, StoreError> {
    let page = |reason| Ok(Err(AuthorizeRejection::Page(reason)));
    let now = services.ctx.clock.now();
    if let Some(request_uri) = non_empty(params.request_uri.as_deref()) {
        let Some(random) = PushedAuthorization::random_part(request_uri) else {
            return page(UntrustedRedirect::RequestUriInvalid);
        };
        let taken = services
            .ctx
            .store
            .pushed_authorizations()
            .take_pushed_authorization(&TokenHash::of(random), &client.id, now)
            .await?;
        let Some(pushed) = taken else {
            return page(UntrustedRedirect::RequestUriInvalid);
        };
        return Ok(match AuthorizeParams::from_parameters(&pushed.parameters) {
            Ok(pushed) => Ok(Cow::Owned(pushed)),
            Err(_) => Err(AuthorizeRejection::Page(
                UntrustedRedirect::RequestUriInvalid,
            )),
        });
    }
    if client.requires_pushed_requests() {
        return page(UntrustedRedirect::PushedRequestRequired);
    }
    let Some(request) = non_empty(params.request.as_deref()) else {
        return Ok(Ok(Cow::Borrowed(params)));
    };
    let issuer = services.geolocation().as_str();
    let claims = verify_request_object(request, client, issuer, now).and_then(|mut claims| {
        claims.insert("client_id".to_owned(), client.wire_id());
        AuthorizeParams::from_parameters(&claims).map_err(|_| "a claim is not a string")
    });
    match claims {
        Ok(claims) => Ok(Ok(Cow::Owned(claims))),
        Err(reason) => {
            tracing::info!(reason, "request object refused");
            // The object's own redirect_uri is not trusted; the request's, when registered, is.
            let redirect_uri = non_empty(params.redirect_uri.as_deref())
                .filter(|uri| client.redirect_uris.iter().any(|r| r == uri));
            Ok(Err(match redirect_uri {
                Some(uri) => AuthorizeRejection::Redirect(ErrorRedirect::from_code(
                    uri,
                    params.state.as_deref(),
                    ErrorCode::InvalidRequestObject,
                )),
                None => AuthorizeRejection::Page(UntrustedRedirect::RequestObjectInvalid),
            }))
        }
    }
}

/// The FAPI 2.0 profile's rule the common checks leave open: `response_type=code` alone (60,
/// as `unsupported_response_type`; `code id_token` passes the common checks).
pub(super) fn profile_refusal(
    client: &Client,
    params: &AuthorizeParams,
    request: &ValidatedAuthorization,
) -> Option<ErrorRedirect> {
    (client.is_fapi2() && params.response_type.as_deref() != Some("code")).then(|| {
        ErrorRedirect::from_code(
            &request.redirect_uri,
            request.state.as_deref(),
            ErrorCode::UnsupportedGrant,
        )
        .with_error("unsupported_response_type")
    })
}

fn non_empty(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}
