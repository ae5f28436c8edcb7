//! The token endpoint's grants (docs/decisions.md, "Token formats"), independent of HTTP: one
//! handler per `grant_type` and their dispatch ([`token_grant`]). Who is calling is `auth`'s to
//! say, minting is `issuance`'s; the other endpoints' flows are `flows`, which never import this.
//!
//! Order of checks, chosen so that nothing is revealed to a caller that has not earned it:
//! the request's shape (`grant_type`), then client authentication, then whether the client may
//! use the grant, then the grant's own parameters and credentials, and only after the
//! credentials are proven, the principal's state and home geolocation.

mod authorization_code;
mod client_credentials;
mod otp;
mod password;
mod refresh;

use std::net::IpAddr;

use crate::auth::authenticate_client;
use crate::auth::dpop::{self, DpopRequest, ProofDenial};
use crate::domain::{Client, GrantType};
use crate::errors::{ErrorCode, GrantDenial, GrantError};
use crate::issuance::IssuedTokens;
use crate::jwt::SignIn;
use crate::limits::Limit;
use crate::params::TokenParams;
use crate::services::Services;

/// Runs the grant a token request asks for. Records `grant_type` and `client_id` on the current
/// tracing span for the request log.
///
/// `source` is the caller's network address as the platform saw it (never a header the caller
/// wrote): password grants are counted per address. `None` (no platform address) counts none.
///
/// A DPoP proof (`dpop`) is checked once the client is known, before the grant's own checks:
/// the grant then binds what it issues to the proof's key (docs/decisions.md, DPoP).
///
/// Every `invalid_client` refusal (401) to a client that sent HTTP Basic carries
/// `WWW-Authenticate: Basic`, whichever check refused it (RFC 6749 §5.2).
pub async fn token_grant(
    services: &Services,
    params: TokenParams,
    authorization: Option<&str>,
    source: Option<IpAddr>,
    dpop: &DpopRequest,
) -> Result<IssuedTokens, GrantError> {
    let via_basic = crate::auth::client::uses_basic(authorization);
    grant_tokens(services, params, authorization, source, dpop)
        .await
        .map_err(|error| crate::auth::client::with_basic_challenge(error, via_basic))
}

async fn grant_tokens(
    services: &Services,
    mut params: TokenParams,
    authorization: Option<&str>,
    source: Option<IpAddr>,
    dpop: &DpopRequest,
) -> Result<IssuedTokens, GrantError> {
    let span = tracing::Span::current();
    let grant_type = params.require("grant_type", ErrorCode::GrantTypeMissing)?;
    let grant = GrantType::parse(grant_type).ok_or(ErrorCode::UnsupportedGrant)?;
    span.record("grant_type", grant.as_str());
    crate::measure::note_grant(grant.as_str());

    let client = authenticate_client(services, &params, authorization).await?;
    span.record("client_id", tracing::field::display(client.id));
    let limiter = services.limiter();
    let now = services.ctx.clock.now();
    // client_credentials counts its request itself (`issue_counted_application_token`): with
    // the key in memory, in the same store write as its token, one write a request, not two.
    if grant != GrantType::ClientCredentials {
        limiter
            .count(Limit::ClientTokenRequests, &client.id.to_string(), now)
            .await?;
    }
    if let (GrantType::Password, Some(source)) = (grant, source) {
        limiter
            .count(Limit::AddressPasswordAttempts, &source.to_string(), now)
            .await?;
    }

    params.set_dpop_jkt(sender_key(services, &client, dpop).await?);
    let params = &params;

    let issued = match grant {
        GrantType::ClientCredentials => client_credentials::grant(services, &client, params).await,
        GrantType::Password => password::grant(services, &client, params).await,
        GrantType::RefreshToken => refresh::grant(services, &client, params).await,
        GrantType::AuthorizationCode => authorization_code::grant(services, &client, params).await,
        GrantType::Otp => otp::grant(services, &client, params).await,
    }?;
    // Every user or company family gets an ID token (docs/decisions.md, "Authorization code flow"),
    // saying when its principal signed in to start the family (`auth_time`, OpenID Connect Core 2;
    // a refresh keeps the original sign-in's, Core 12.2).
    let sign_in = SignIn {
        auth_time: issued.auth_time,
        ..SignIn::default()
    };
    Ok(issued.with_id_token(&services.codec, sign_in).await?)
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
    if proof.is_none() && client.require_dpop {
        tracing::info!("token request without the DPoP proof its client requires");
        return Err(GrantDenial::from(ProofDenial::Missing).into());
    }
    Ok(proof.map(|proof| proof.jkt))
}
