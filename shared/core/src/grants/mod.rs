//! The token endpoint's grants (docs/decisions.md, "Token formats"), independent of HTTP: one
//! handler per `grant_type`, each given its typed request (`requests`) and the request's
//! verified facts ([`GrantContext`]), and their dispatch ([`token_grant`]). Who is calling is
//! `auth`'s to say, minting is `issuance`'s; the other endpoints' flows are `flows`, which never
//! import this.
//!
//! Order of checks, chosen so that nothing is revealed to a caller that has not earned it:
//! the request's shape (repeated parameters, `grant_type`: the parse's), then client
//! authentication, the rate limits (a refresh's client count is made by its grant, with the
//! same answers: [`DeferredCount`]) and the DPoP proof, then whether the client may use the
//! grant, then the grant's own parameters (kept by the parse in [`TokenRequest::grant`]) and
//! credentials, and only after the credentials are proven, the principal's state and home
//! geolocation.

mod authorization_code;
mod client_credentials;
mod device_code;
mod id_jag;
mod jwt_bearer;
mod otp;
mod password;
mod refresh;
mod token_exchange;

#[cfg(test)]
mod authorization_code_tests;
#[cfg(test)]
mod password_tests;
#[cfg(test)]
mod refresh_tests;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod token_exchange_tests;

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::auth::authenticate_client;
use crate::auth::dpop::{self, DpopRequest, ProofDenial};
use crate::domain::{narrowed, Client, GrantType, Resource, TargetRefusal};
use crate::errors::{ErrorCode, GrantDenial, GrantError};
use crate::issuance::IssuedTokens;
use crate::jwt::SignIn;
use crate::limits::{source_subject, Limit, Limiter};
use crate::requests::{GrantRequest, TokenRequest};
use crate::services::Services;

/// What the token endpoint has verified about a request before its grant runs: each handler
/// reads these from here, never from the request's parameters.
#[derive(Debug)]
pub struct GrantContext {
    /// The authenticated client.
    pub client: Client,
    /// The thumbprint of the key of the request's verified DPoP proof (RFC 9449): what the
    /// issued tokens are bound to. `None`: no proof, bearer tokens.
    pub dpop_jkt: Option<String>,
    /// The caller's network address as the platform saw it (never a header the caller wrote).
    pub source: Option<IpAddr>,
    /// `resource` as sent (RFC 8707): see [`Self::requested_resources`] and
    /// [`Self::narrowed_resources`].
    pub resources: Vec<String>,
    /// Whether the request is still to be counted against its client's limit (a refresh's:
    /// [`Self::counter_for_write`], [`Self::count_request`]).
    pub uncounted: DeferredCount,
}

/// A request's count against its client's limit (`RATE_LIMIT_CLIENT_PER_MINUTE`), left to its
/// grant: a refresh that rotates counts it in its rotation's write, one store write instead of
/// two; every other outcome counts it before it writes anything or answers, so that a client
/// over its limit is answered 429 whatever it sent, as when every request is counted first
/// (docs/decisions.md, "Abuse limits").
#[derive(Debug, Default)]
pub struct DeferredCount(AtomicBool);

impl DeferredCount {
    /// A request still to be counted.
    pub fn pending() -> Self {
        Self(AtomicBool::new(true))
    }

    /// A request already counted, or not counted by its grant.
    pub fn settled() -> Self {
        Self::default()
    }

    /// Whether the count was still to be made; it is not any more.
    fn take(&self) -> bool {
        self.0.swap(false, Ordering::AcqRel)
    }

    /// Counts `client`'s request now, if it is still to be counted.
    async fn settle(&self, services: &Services, client: &Client) -> Result<(), GrantError> {
        if self.take() {
            services
                .limiter()
                .count(
                    Limit::ClientTokenRequests,
                    &client.id.to_string(),
                    services.ctx.clock.now(),
                )
                .await?;
        }
        Ok(())
    }
}

impl GrantContext {
    pub fn dpop_jkt(&self) -> Option<&str> {
        self.dpop_jkt.as_deref()
    }

    /// The resources a grant that starts something new (client credentials, a password, a
    /// one-time password) is asked for, each allowed by `RESOURCES` and the client's own list;
    /// otherwise `invalid_target` (160).
    pub fn requested_resources(&self, services: &Services) -> Result<Vec<Resource>, GrantError> {
        services
            .policy
            .resources
            .requested(&self.client.resources, &self.resources)
            .map_err(refused_target)
    }

    /// The resources a grant continuing an authorization (a code, a refresh, a device code)
    /// is asked for, among those `granted`; none named: all of them. Otherwise
    /// `invalid_target` (160).
    pub fn narrowed_resources(&self, granted: &[Resource]) -> Result<Vec<Resource>, GrantError> {
        narrowed(granted, &self.resources).map_err(refused_target)
    }
}

impl GrantContext {
    /// The limiter a write should count the request in, if it is still to be counted: the
    /// write then makes the count, whatever it decides.
    pub fn counter_for_write<'a>(&self, services: &'a Services) -> Option<Limiter<'a>> {
        self.uncounted.take().then(|| services.limiter())
    }

    /// Counts the request against its client's limit now, if it is still to be counted: before
    /// any write or answer of a grant that does not count it in its write.
    pub async fn count_request(&self, services: &Services) -> Result<(), GrantError> {
        self.uncounted.settle(services, &self.client).await
    }
}

fn refused_target(refusal: TargetRefusal) -> GrantError {
    tracing::info!(%refusal, "token request: resource refused");
    ErrorCode::InvalidTarget.into()
}

/// Runs the grant a token request asks for. Records `grant_type` and `client_id` on the current
/// tracing span for the request log.
///
/// `source` is the caller's network address as the platform saw it: password grants are counted
/// per address. `None` (no platform address) counts none.
///
/// A DPoP proof (`dpop`) is checked once the client is known, before the grant's own checks:
/// the grant then binds what it issues to the proof's key (docs/decisions.md, DPoP).
pub async fn token_grant(
    services: &Services,
    request: TokenRequest,
    source: Option<IpAddr>,
    dpop: &DpopRequest,
) -> Result<IssuedTokens, GrantError> {
    let span = tracing::Span::current();
    let grant_type = request.grant_type;
    span.record("grant_type", grant_type.as_str());
    crate::measure::note_grant(grant_type.as_str());

    let client = authenticate_client(services, &request.client).await?;
    span.record("client_id", tracing::field::display(client.id));
    // client_credentials counts its request itself (`issue_counted_application_token`): with
    // the key in memory, in the same store write as its token, one write a request, not two. A
    // refresh with the key in memory and no DPoP proof (whose `jti` is written before the
    // grant runs) leaves its count to the grant ([`DeferredCount`]). With KMS every other grant
    // is counted before anything is signed, so that a flood cannot spend the KMS quota.
    let uncounted = if grant_type == GrantType::ClientCredentials {
        DeferredCount::settled()
    } else {
        DeferredCount::pending()
    };
    let deferred = grant_type == GrantType::RefreshToken
        && !dpop.is_present()
        && !services.codec.keys().signs_with_kms();
    if !deferred {
        uncounted.settle(services, &client).await?;
    }
    if let (GrantType::Password, Some(source)) = (grant_type, source) {
        services
            .limiter()
            .count(
                Limit::AddressPasswordAttempts,
                &source_subject(source),
                services.ctx.clock.now(),
            )
            .await?;
    }
    let mut context = GrantContext {
        client,
        dpop_jkt: None,
        source,
        resources: request.resources,
        uncounted,
    };
    let issued =
        match checked_grant(services, &mut context, (grant_type, request.grant), dpop).await {
            Ok(issued) => issued,
            Err(refused) => {
                // A client over its limit is answered 429 whatever it sent.
                context.count_request(services).await?;
                return Err(refused);
            }
        };
    // RFC 8693: an exchange answers an access token alone; so does a redeemed assertion
    // (draft-ietf-oauth-identity-assertion-authz-grant §4.4).
    if matches!(grant_type, GrantType::TokenExchange | GrantType::JwtBearer) {
        return Ok(issued);
    }
    // Every user or company family gets an ID token (docs/decisions.md, "Authorization code flow"),
    // saying when its principal signed in to start the family (`auth_time`, OpenID Connect Core 2;
    // a refresh keeps the original sign-in's, Core 12.2).
    let (sid, amr) = (issued.sid.clone(), issued.amr.clone());
    let sign_in = SignIn {
        auth_time: issued.auth_time,
        sid: sid.as_ref(),
        amr: &amr,
        idp: issued.idp,
        ..SignIn::default()
    };
    Ok(issued.with_id_token(&services.codec, sign_in).await?)
}

/// The DPoP proof (its key's thumbprint into `context`), whether the client may use the grant,
/// the grant's parameters, then the grant itself.
async fn checked_grant(
    services: &Services,
    context: &mut GrantContext,
    (grant_type, parsed): (GrantType, Result<GrantRequest, ErrorCode>),
    dpop: &DpopRequest,
) -> Result<IssuedTokens, GrantError> {
    context.dpop_jkt = sender_key(services, &context.client, dpop).await?;
    // Whether the client may use the grant comes before the grant's parameters (60 before 51),
    // except for refresh, whose missing token (106) comes before its permission (107).
    if grant_type != GrantType::RefreshToken && !context.client.may_use(grant_type) {
        return Err(ErrorCode::UnsupportedGrant.into());
    }
    let context = &*context;
    match parsed? {
        GrantRequest::ClientCredentials(request) => {
            client_credentials::grant(services, context, request).await
        }
        GrantRequest::Password(request) => password::grant(services, context, request).await,
        GrantRequest::RefreshToken(request) => refresh::grant(services, context, request).await,
        GrantRequest::AuthorizationCode(request) => {
            authorization_code::grant(services, context, request).await
        }
        GrantRequest::Otp(request) => otp::grant(services, context, request).await,
        GrantRequest::DeviceCode(request) => device_code::grant(services, context, request).await,
        GrantRequest::TokenExchange(request) => {
            token_exchange::grant(services, context, request).await
        }
        GrantRequest::JwtBearer(request) => jwt_bearer::grant(services, context, request).await,
    }
}

/// The thumbprint of the request's proof key, once the proof passed every check and its `jti`
/// was unused. A client registered with `--require-dpop` must send one.
async fn sender_key(
    services: &Services,
    client: &Client,
    dpop: &DpopRequest,
) -> Result<Option<String>, GrantError> {
    let proof = dpop::check_request(services, dpop, None)
        .await
        .map_err(|refusal| {
            refusal.map_denied(|denial| {
                tracing::info!(%denial, "token request: DPoP proof refused");
                GrantDenial::from(denial)
            })
        })?;
    if proof.is_none() && client.requires_dpop() {
        tracing::info!("token request without the DPoP proof its client requires");
        return Err(GrantDenial::from(ProofDenial::Missing).into());
    }
    Ok(proof.map(|proof| proof.jkt))
}
