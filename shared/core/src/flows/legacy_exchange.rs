//! The old-token exchange (docs/decisions.md, "Old-token exchange"): an old refresh token of the
//! deprecated framework in, a new token family out. No HTTP here: `http::exchange` reads the
//! request and answers.
//!
//! Order of checks, so that nothing is revealed to a caller that has not earned it:
//!
//! 1. the application token (`Authorization: Bearer`, from `client_credentials`): `UNAUTHORIZED`;
//! 2. the calling app exists (`INVALIDAPP`); the body was readable (16 KiB, form or JSON);
//! 3. `secret` is the calling app's client secret, compared in constant time: `UNAUTHORIZED`;
//! 4. the app is enabled (`INVALIDAPP`), `token` is present (`INVALIDTOKEN`), `returnType` is
//!    absent or `companyToken` (`INVALIDTOKEN` with `invalid_request`);
//! 5. the consumer key: unknown answers 404 `INVALIDAPP`, linked to another app 400 `INVALIDAPP`;
//! 6. the old token: unknown, expired, issued to another old app, or not WSAdmin when a company
//!    token is asked, or its administrator no longer an active administrator of the company:
//!    `INVALIDTOKEN`; its scopes within the app's: `INVALIDSCOPES`;
//! 7. the principal passes the refresh grant's checks (`INVALIDTOKEN`, see [`principal_home`]);
//! 8. the family is created together with the old token's link, revoking the family a previous
//!    exchange of the same old token created, in one conditional write.
//!
//! Nothing is written before step 8, and step 8 is all or nothing.

use uuid::Uuid;

use crate::auth::authenticate_bearer;
use crate::auth::principal::{
    check_principal_may_sign_in, find_principal, is_active_administrator,
};
use crate::domain::audit::{AuditEvent, AuditKind, RevocationReason, StartedBy};
use crate::domain::{
    Client, ConsumerKey, FamilyId, Geolocation, LegacyExchange, LegacyToken, PrincipalId,
    PrincipalType, SecretCheck,
};
use crate::errors::{Denial, ExchangeCode, Refusal, ServerError};
use crate::issuance::LegacyExchangeLink;
use crate::issuance::{FamilyStart, FamilyTokens};
use crate::requests::ExchangeBody;
use crate::secrets::{Secret, TokenHash};
use crate::services::Services;
use crate::store::LegacyLink;

/// One exchange request, as read from HTTP.
pub struct ExchangeRequest<'a> {
    /// The path's `OLDConsumerKey`, as sent.
    pub consumer_key: &'a str,
    /// The `Authorization` header's value, if any.
    pub authorization: Option<&'a str>,
    /// The body, or why there is none ([`ExchangeDenial::BodyTooLarge`] or
    /// [`ExchangeDenial::BodyUnreadable`], answered at step 2).
    pub body: Result<ExchangeBody, ExchangeDenial>,
    /// `returnType` (answered at step 4 if invalid).
    pub return_type: Result<ReturnType, InvalidReturnType>,
}

/// What the caller asked for with `returnType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnType {
    /// The old token's own principal (a WSAdmin token: the admin user).
    Principal,
    /// `companyToken`: the company a WSAdmin token administers.
    Company,
}

/// `returnType` with a value other than `companyToken`, or given twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidReturnType;

/// What the exchange answers instead of tokens.
pub type ExchangeError = Refusal<ExchangeDenial>;

/// Why the exchange was refused. Every variant is answered before anything is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeDenial {
    /// A failure code of the exchange's catalogue, with its own `error` and description.
    Code(ExchangeCode),
    /// The consumer key names no old app (`INVALIDAPP`, but not found rather than bad).
    UnknownConsumerKey,
    /// `returnType` is neither absent nor `companyToken` (`INVALIDTOKEN`, a malformed request).
    InvalidReturnType,
    /// The body is over the size limit (`INVALIDTOKEN`, a malformed request).
    BodyTooLarge,
    /// The body is neither a form nor a JSON object of strings, or repeats a name (`INVALIDTOKEN`,
    /// a malformed request).
    BodyUnreadable,
}

impl Denial for ExchangeDenial {}

impl From<ExchangeCode> for ExchangeError {
    fn from(code: ExchangeCode) -> Self {
        Self::Denied(ExchangeDenial::Code(code))
    }
}

/// Runs the exchange. See the module documentation for the order of checks.
pub async fn exchange(
    services: &Services,
    request: ExchangeRequest<'_>,
) -> Result<FamilyTokens, ExchangeError> {
    let store = &services.ctx.store;

    // 1. The application token.
    let bearer = match authenticate_bearer(services, request.authorization).await {
        Ok(bearer) => bearer,
        Err(Refusal::Server(error)) => return Err(error.into()),
        Err(Refusal::Denied(denial)) => {
            tracing::info!(reason = %denial, "exchange: bearer token refused");
            return Err(ExchangeCode::Unauthorized.into());
        }
    };
    tracing::Span::current().record("client_id", tracing::field::display(bearer.client_id()));
    if bearer.principal_type() != PrincipalType::Application {
        tracing::info!(
            principal_type = %bearer.principal_type(),
            "exchange: bearer token is not an application token"
        );
        return Err(ExchangeCode::Unauthorized.into());
    }

    // 2. The calling app, and the body.
    let client = store
        .clients()
        .get_client(&bearer.client_id())
        .await?
        .ok_or(ExchangeCode::InvalidApp)?;
    let body = request.body?;

    // 3. The app's own secret proves the caller holds more than a (possibly leaked) token.
    let secret_ok = body.secret.as_ref().is_some_and(|secret| {
        matches!(
            client.check_secret(secret.expose(), services.ctx.clock.now()),
            SecretCheck::Valid { .. }
        )
    });
    if !secret_ok {
        return Err(ExchangeCode::Unauthorized.into());
    }

    // 4. The app's state and the request's shape.
    if !client.enabled {
        return Err(ExchangeCode::InvalidApp.into());
    }
    // Only the digest is kept: the old token is looked up by it, like every stored credential.
    let hash = body
        .token
        .as_ref()
        .map(Secret::hash)
        .ok_or(ExchangeCode::InvalidToken)?;
    let return_type = request
        .return_type
        .map_err(|InvalidReturnType| ExchangeDenial::InvalidReturnType)?;

    // 5. The consumer key.
    let legacy_app = match ConsumerKey::parse(request.consumer_key) {
        Ok(key) => store.legacy().get_legacy_app(&key).await?,
        Err(_) => None,
    };
    let legacy_app = legacy_app.ok_or(ExchangeDenial::UnknownConsumerKey)?;
    if legacy_app.client_id != client.id {
        return Err(ExchangeCode::InvalidApp.into());
    }

    // 6. The old token.
    let now = services.ctx.clock.now();
    let legacy = store
        .legacy()
        .get_legacy_token(&hash, now)
        .await?
        .filter(|t| !t.is_expired(now) && t.consumer_key == legacy_app.consumer_key)
        .ok_or(ExchangeCode::InvalidToken)?;
    let (principal_type, principal_id) = principal(&legacy, return_type)?;
    let through_admin = principal_type == PrincipalType::Company && legacy.wsadmin;
    if through_admin
        && !is_active_administrator(services, &legacy.principal_id, &principal_id).await?
    {
        tracing::info!("exchange: the WSAdmin token's administrator may no longer act");
        return Err(ExchangeCode::InvalidToken.into());
    }
    if !legacy.scopes.is_subset_of(&client.allowed_scopes) {
        return Err(ExchangeCode::InvalidScopes.into());
    }

    // 7. The principal's state and home.
    let geolocation = principal_home(services, principal_type, &principal_id, &client).await?;

    // 8. One family per old token: this one replaces the previous exchange's.
    let family = NewExchangeFamily {
        client: &client,
        legacy: &legacy,
        hash,
        principal_type,
        principal_id,
        geolocation,
    };
    start_family(services, family).await
}

/// Whom the new family is for.
fn principal(
    legacy: &LegacyToken,
    return_type: ReturnType,
) -> Result<(PrincipalType, PrincipalId), ExchangeCode> {
    match return_type {
        ReturnType::Principal => Ok((legacy.principal_type, legacy.principal_id)),
        ReturnType::Company => match (legacy.wsadmin, legacy.company_id) {
            (true, Some(company)) => Ok((PrincipalType::Company, company)),
            _ => Err(ExchangeCode::InvalidToken),
        },
    }
}

/// The principal's home deployment, once it passed the refresh grant's checks (docs/decisions.md,
/// "Lockout"): it exists, a user is neither disabled nor denied logon, a company is neither
/// disabled nor in maintenance and is enabled for the calling app. Every refusal is `INVALIDTOKEN`:
/// the old token no longer names a principal that may sign in to this app, which is a fact about
/// the token's principal (like the refresh grant's `invalid_grant`), not about the calling app
/// (`INVALIDAPP` is kept for the app's own link and state). The catalogue code that applies goes to
/// the log only.
async fn principal_home(
    services: &Services,
    principal_type: PrincipalType,
    id: &PrincipalId,
    client: &Client,
) -> Result<Geolocation, ExchangeError> {
    let Some(principal) = find_principal(services, principal_type, id).await? else {
        tracing::info!(%principal_type, "exchange: the old token's principal does not exist");
        return Err(ExchangeCode::InvalidToken.into());
    };
    match check_principal_may_sign_in(services, &principal, client).await {
        Ok(()) => Ok(principal.geolocation().clone()),
        Err(Refusal::Server(error)) => Err(error.into()),
        Err(Refusal::Denied(denial)) => {
            tracing::info!(
                %principal_type,
                code = denial.code.code(),
                "exchange: the old token's principal may not sign in"
            );
            Err(ExchangeCode::InvalidToken.into())
        }
    }
}

/// The family step 8 writes.
struct NewExchangeFamily<'a> {
    client: &'a Client,
    legacy: &'a LegacyToken,
    hash: TokenHash,
    principal_type: PrincipalType,
    principal_id: PrincipalId,
    geolocation: Geolocation,
}

/// Creates the family and moves the old token's link to it, revoking the previous exchange's
/// family in the same write. A concurrent exchange of the same old token that moved the link
/// first makes the write fail without effect; it is retried once against the fresh link (this
/// request then supersedes the concurrent one, as a later retry would), and a second loss
/// answers "unavailable" so that the client retries.
async fn start_family(
    services: &Services,
    family: NewExchangeFamily<'_>,
) -> Result<FamilyTokens, ExchangeError> {
    const ATTEMPTS: usize = 2;
    for _ in 0..ATTEMPTS {
        let previous = services
            .ctx
            .store
            .legacy()
            .get_legacy_exchange(&family.hash)
            .await?;
        let previous_revoked = match &previous {
            Some(previous) => revoked_event(services, previous.family_id).await?,
            None => Vec::new(),
        };
        let start = FamilyStart {
            client_id: family.client.id,
            principal_type: family.principal_type,
            principal_id: family.principal_id,
            scopes: family.legacy.scopes.clone(),
            geolocation: family.geolocation.clone(),
            jkt: None,
            grant: StartedBy::LegacyExchange,
            auth_time: None,
            sid: None,
            amr: Vec::new(),
            idp: None,
            issued_by: None,
            resources: Vec::new(),
            audience: Vec::new(),
        };
        let link = LegacyExchangeLink {
            link: LegacyLink {
                exchange: LegacyExchange {
                    token_hash: family.hash.clone(),
                    // Set to the new family's id by `Issuer::start_family_with_legacy_link`.
                    family_id: FamilyId::new(Uuid::nil()),
                    exchanged_at: services.ctx.clock.now(),
                },
                previous_family: previous.as_ref().map(|p| p.family_id),
            },
            revoke_previous: previous.as_ref().map(|p| (p.family_id, previous_revoked)),
        };
        if let Some(issued) = services
            .issuer()
            .start_family_with_legacy_link(start, link)
            .await?
        {
            if let Some(previous) = previous {
                tracing::info!(
                    revoked_family_id = %previous.family_id,
                    "exchange: old token exchanged again; previous family revoked"
                );
            }
            return Ok(issued);
        }
        tracing::warn!("exchange: concurrent exchange of the same old token; retrying");
    }
    Err(ServerError::unavailable("concurrent exchanges of one old token").into())
}

/// The `family.revoked` event of the family a previous exchange of the same old token created,
/// if it is live. Its owner is read rather than assumed: that exchange may have asked for the
/// company (`returnType=companyToken`) where this one asks for the administrator. The store
/// writes the event only if its write is the one that revokes the family (docs/decisions.md,
/// Audit events).
async fn revoked_event(
    services: &Services,
    previous: FamilyId,
) -> Result<Vec<AuditEvent>, ServerError> {
    let now = services.ctx.clock.now();
    let family = services
        .ctx
        .store
        .families()
        .get_family(&previous, now)
        .await?;
    Ok(family
        .filter(|family| family.revoked_at.is_none())
        .map(|family| {
            let reason = RevocationReason::ExchangedAgain;
            services.issuer().family_event(
                AuditKind::FamilyRevoked { reason },
                previous,
                (&family).into(),
            )
        })
        .into_iter()
        .collect())
}
