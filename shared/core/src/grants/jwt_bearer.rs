//! `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1) with an identity
//! assertion (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant §4.4) of a company's
//! OpenID Provider added with `--id-jag`: this service, as the authorization server of an app or
//! MCP server, gives the agent of the user the assertion names an access token, with no browser
//! and no consent screen, the company having decided at its IdP.
//!
//! Order of checks: the assertion itself (`federation::assertion`: type, signature, issuer,
//! audience, lifetime: 167), the client it names (105), the resource (160), the scope (54), the
//! user it names (linked, or linkable as a first sign-in links: 167), and last its `jti`, kept
//! until its `exp` and spent in the same write as the token, so that only an assertion good in
//! every other way is spent, and one whose write failed is not (168 the second time). An access
//! token alone: no refresh token, no ID token; bound to the DPoP proof's key when there is one.

use super::GrantContext;
use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::{IdentityProvider, PrincipalType, Scopes, UpstreamSubject};
use crate::errors::{ErrorCode, GrantError, ServerError};
use crate::federation::assertion::{self, AssertionClaims};
use crate::federation::linking::{self, Resolved};
use crate::federation::oidc::UpstreamIdentity;
use crate::issuance::{requested_scopes, Asserted, IssuedTokens};
use crate::requests::JwtBearerRequest;
use crate::services::Services;
use crate::store::{FirstUse, ReplayKey};

/// The replay store's kind for redeemed assertions (each `jti` unique per issuer).
const REPLAY_KIND: &str = "id-jag";

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: JwtBearerRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let now = services.ctx.clock.now();
    let verified = match assertion::verify(services, request.assertion.expose(), now).await? {
        Ok(verified) => verified,
        Err(refusal) => {
            tracing::info!(%refusal, "jwt-bearer: the assertion is refused");
            return Err(ErrorCode::IdJagInvalid.into());
        }
    };
    let claims = &verified.claims;
    if claims.client_id != client.wire_id() {
        tracing::info!("jwt-bearer: the assertion names another client");
        return Err(ErrorCode::GrantNotIssuedToClient.into());
    }
    let audience = asserted_resources(services, context, claims)?;
    let grantable = match claims.scope.as_deref() {
        None => client.allowed_scopes.clone(),
        Some(scope) => client
            .allowed_scopes
            .intersection(&Scopes::parse(scope).map_err(|_| ErrorCode::IdJagInvalid)?),
    };
    let scopes = requested_scopes(request.scope.as_deref(), &grantable)?;
    let identity = UpstreamIdentity {
        subject: UpstreamSubject::new(&claims.iss, &claims.sub)
            .map_err(|_| ErrorCode::IdJagInvalid)?,
        email: claims.verified_email().map(str::to_owned),
        amr: claims.amr(),
        auth_time: claims.auth_time.filter(|time| *time <= now),
        id_token: String::new(),
    };
    let Some((idp, resolved)) = user_of(services, &verified.idps, &identity).await? else {
        return Err(ErrorCode::IdJagInvalid.into());
    };
    let asserted = Asserted {
        scopes,
        audience,
        jkt: context.dpop_jkt.clone(),
        auth_time: identity.auth_time,
        amr: identity.amr,
        idp: idp.id,
        assertion_jti: claims.jti.clone(),
        first_use: FirstUse {
            key: ReplayKey::new(REPLAY_KIND, &claims.iss, &claims.jti),
            expires_at: claims.exp,
            now,
        },
    };
    let issued = services
        .issuer()
        .issue_asserted_token(client, &resolved.user, asserted)
        .await?;
    let Some(issued) = issued else {
        tracing::info!("jwt-bearer: the assertion's jti was used before");
        return Err(ErrorCode::IdJagReplayed.into());
    };
    record_first_link(services, idp, &resolved).await;
    Ok(issued)
}

/// The token's `aud`: the request's `resource`s, else the assertion's; each allowed for the
/// client (part 17), and, when the assertion names resources, one of them (160 otherwise).
fn asserted_resources(
    services: &Services,
    context: &GrantContext,
    claims: &AssertionClaims,
) -> Result<Vec<crate::domain::Resource>, GrantError> {
    let Some(asserted) = claims.resources() else {
        return Err(ErrorCode::IdJagInvalid.into());
    };
    let named = if context.resources.is_empty() {
        asserted.clone()
    } else {
        context.resources.clone()
    };
    let allowed = services
        .policy
        .resources
        .requested(&context.client.resources, &named)
        .map_err(|refusal| {
            tracing::info!(%refusal, "jwt-bearer: resource refused");
            GrantError::from(ErrorCode::InvalidTarget)
        })?;
    let within_assertion = asserted.is_empty()
        || allowed.iter().all(|resource| {
            asserted.iter().any(|named| {
                crate::domain::Resource::parse(named).is_ok_and(|named| named == *resource)
            })
        });
    if !within_assertion {
        tracing::info!("jwt-bearer: the request names a resource the assertion does not");
        return Err(ErrorCode::InvalidTarget.into());
    }
    Ok(allowed)
}

/// The user the assertion's subject is, through the IdP (of those of its issuer) that already
/// links it, or else the oldest, as a first sign-in there would link it. `None`: no active user.
async fn user_of<'a>(
    services: &Services,
    idps: &'a [IdentityProvider],
    identity: &UpstreamIdentity,
) -> Result<Option<(&'a IdentityProvider, Resolved)>, ServerError> {
    let federation = services.ctx.store.federation();
    let mut chosen = None;
    // With one IdP of the issuer (the usual case) its link is read once, by `linking::resolve`.
    let candidates = if idps.len() > 1 { idps } else { &[] };
    for idp in candidates {
        if federation
            .get_federation_link(&idp.id, &identity.subject)
            .await?
            .is_some()
        {
            chosen = Some(idp);
            break;
        }
    }
    let Some(idp) = chosen.or(idps.first()) else {
        return Ok(None);
    };
    match linking::resolve(services, idp, identity).await? {
        Ok(resolved) => Ok(Some((idp, resolved))),
        Err(no_user) => {
            let reason = no_user.reason();
            crate::federation::record_refusal(services, Some(idp), reason).await;
            tracing::info!(reason, "jwt-bearer: the assertion names no active user");
            Ok(None)
        }
    }
}

/// `user.created` and `federation.linked`, as at a first sign-in through the IdP.
async fn record_first_link(services: &Services, idp: &IdentityProvider, resolved: &Resolved) {
    let of_user = |kind: AuditKind| {
        audit::event(&services.ctx, kind).principal(PrincipalType::User, resolved.user.id)
    };
    if resolved.created {
        audit::record(&services.ctx, of_user(AuditKind::UserCreated)).await;
    }
    if resolved.linked {
        let linked = of_user(AuditKind::FederationLinked { idp: idp.id });
        audit::record(&services.ctx, linked).await;
    }
}
