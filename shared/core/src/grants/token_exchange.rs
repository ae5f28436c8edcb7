//! `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693):
//! a service or agent holding a user's access token gets one for another resource, acting for
//! that user, optionally naming who acts (`actor_token`, the `act` claim).
//!
//! A client may exchange a subject token issued to itself, or one whose `aud` names one of its
//! resources (`--resource`): the resource server the token was meant for may call onwards. The
//! new token keeps the subject's principal and family, so revoking the family revokes it; it
//! records the access tokens it was exchanged from, so revoking the subject (or any token
//! before it in a chain of exchanges) revokes it too, family or none. It lives no longer than
//! the subject token. No refresh token.
//!
//! Nothing widens: the scope is within both the subject token's and the exchanging client's
//! (asking beyond either is 54, as at every grant; asking for none gets what both allow), and
//! the audience is the subject token's unless the request names others, each one the subject's
//! family was granted, the subject token's own, or one of the client's `--resource`s (160):
//! a client cannot trade a token for one its resource, or this deployment, never granted.
//!
//! A sender-constrained token (`cnf.jkt`, RFC 9449) is exchanged only with a DPoP proof by its
//! key: otherwise whoever stole a bound token could trade it for an unbound one. Without that
//! proof it is not exchangeable (165 for the subject, 166 for the actor), as a bound refresh
//! token without its proof is an invalid one (108); the new token is bound to the proof's key.
//!
//! Order of checks: the token types (164, the parse's), the subject token (165), the actor
//! token (166), the scope (54), the target (160). Reads: the subject's record (and the actor's,
//! and the subject's family when a named resource is neither the subject's nor the client's);
//! one write, the new token.

use super::GrantContext;
use crate::auth::presented_token::{identify, PresentedToken, TokenTypeHint};
use crate::domain::{
    narrowed, AccessTokenRecord, Actor, ClientId, Resource, Scopes, TargetRefusal, TokenId,
    MAX_EXCHANGE_CHAIN, OPENID, SECRETS_MANAGEMENT_SCOPE,
};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::{requested_scopes, Exchanged, IssuedTokens};
use crate::requests::{TokenExchangeRequest, ID_TOKEN_TYPE};
use crate::secrets::Secret;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: TokenExchangeRequest,
) -> Result<IssuedTokens, GrantError> {
    if request.wants_id_jag() {
        return super::id_jag::grant(services, context, request).await;
    }
    let client = &context.client;
    let of_id_token = request.subject_token_type == ID_TOKEN_TYPE;
    let subject = if of_id_token {
        id_token_subject(services, request.subject_token.as_ref()).await?
    } else {
        live_access_token(services, request.subject_token.as_ref()).await?
    }
    .filter(|subject| {
        subject.client_id == client.id
            || subject
                .audience
                .iter()
                .any(|r| client.resources.contains(r))
    })
    .filter(|subject| held_by_the_prover(subject, context, "subject_token"))
    .filter(within_the_chain_limit)
    .ok_or(ErrorCode::SubjectTokenInvalid)?;
    let act = match &request.actor_token {
        None => None,
        Some(token) => {
            let actor = live_access_token(services, Some(token))
                .await?
                .filter(|actor| held_by_the_prover(actor, context, "actor_token"))
                .ok_or(ErrorCode::ActorTokenInvalid)?;
            Some(Actor {
                sub: actor.subject.hyphenated().to_string(),
                client_id: actor.wire_client_id(),
                act: subject.act.clone().map(Box::new),
            })
        }
    };
    let grantable = subject.scopes.intersection(&client.requestable_scopes());
    let scopes = requested_scopes(request.scope.as_deref(), &grantable)?;
    let audience = exchanged_audience(services, context, &subject, request.audience).await?;
    // An ID token is not revocable (only expiry ends one): nothing to record. An access token
    // is, and so is each token it was itself exchanged from.
    let exchanged_from = if of_id_token {
        Vec::new()
    } else {
        let mut chain = subject.exchanged_from.clone();
        chain.push(subject.jti);
        chain
    };
    let exchanged = Exchanged {
        scopes,
        audience,
        jkt: context.dpop_jkt.clone(),
        // Without an actor token the subject's own `act` is kept: who acted does not change.
        act: act.or_else(|| subject.act.clone()),
        exchanged_from,
    };
    Ok(services
        .issuer()
        .issue_exchanged_token(client, &subject, exchanged)
        .await?)
}

/// Whether `token`, if bound to a key (`cnf.jkt`), comes with a DPoP proof by that key; an
/// unbound one always does. `which` names the parameter in the log line.
fn held_by_the_prover(token: &AccessTokenRecord, context: &GrantContext, which: &str) -> bool {
    let Some(bound) = token.jkt.as_deref() else {
        return true;
    };
    let held = context.dpop_jkt() == Some(bound);
    if !held {
        tracing::info!(
            token = which,
            proof = context.dpop_jkt.is_some(),
            "token exchange: a DPoP-bound token without a proof by its key"
        );
    }
    held
}

/// Whether `subject` may be exchanged once more: a chain of exchanges is kept short, since
/// every read of its last token reads each token before it.
fn within_the_chain_limit(subject: &AccessTokenRecord) -> bool {
    let within = subject.exchanged_from.len() < MAX_EXCHANGE_CHAIN;
    if !within {
        tracing::info!(
            chain = subject.exchanged_from.len(),
            "token exchange: the subject token ends a chain of exchanges as long as allowed"
        );
    }
    within
}

/// An access token of this service that is live (signed by us, stored, unexpired, unrevoked),
/// whoever it was issued to; `None` otherwise.
async fn live_access_token(
    services: &Services,
    token: Option<&Secret>,
) -> Result<Option<AccessTokenRecord>, GrantError> {
    let Some(token) = token else {
        return Ok(None);
    };
    let now = services.ctx.clock.now();
    Ok(
        match identify(
            services,
            token.expose(),
            Some(TokenTypeHint::AccessToken),
            now,
        )
        .await?
        {
            // A token for the app's own secrets API is no resource's (part 13): neither a
            // subject nor an actor here.
            PresentedToken::Access(record)
                if !record.revoked && !record.scopes.contains(SECRETS_MANAGEMENT_SCOPE) =>
            {
                Some(record)
            }
            _ => None,
        },
    )
}

/// An ID token of this service, unexpired, as the access token it stands for: its principal,
/// the client it was issued to, its expiry, and the one scope an ID token speaks for
/// (`openid`). ID tokens are not stored: none belongs to a family, and only expiry ends one.
async fn id_token_subject(
    services: &Services,
    token: Option<&Secret>,
) -> Result<Option<AccessTokenRecord>, GrantError> {
    let Some(token) = token else {
        return Ok(None);
    };
    let now = services.ctx.clock.now();
    let Some(claims) = services.codec.verify_id_token(token.expose(), now).await? else {
        return Ok(None);
    };
    let (Ok(client_id), Ok(subject)) = (
        ClientId::from_wire(&claims.aud),
        uuid::Uuid::parse_str(&claims.sub),
    ) else {
        return Ok(None);
    };
    Ok(Some(AccessTokenRecord {
        jti: TokenId::new(uuid::Uuid::nil()),
        client_id,
        principal_type: claims.principal_type,
        subject,
        family_id: None,
        scopes: Scopes::parse(OPENID).unwrap_or_default(),
        issued_at: claims.iat,
        expires_at: claims.exp,
        revoked: false,
        jkt: None,
        audience: Vec::new(),
        act: None,
        // A client ID metadata document's client is named by its URL.
        client_url: crate::domain::is_url_client_id(&claims.aud).then(|| claims.aud.clone()),
        auth_time: claims.auth_time,
        amr: claims.amr,
        exchanged_from: Vec::new(),
    }))
}

/// `resource` and `audience` together, each one the subject token's `aud` names, one of the
/// client's `--resource`s, or one the subject's family was granted (160 otherwise; the family
/// is read only for a resource that is none of the first two); none named: the subject token's
/// own `aud` (an ID token's names a client, not a resource: this deployment).
async fn exchanged_audience(
    services: &Services,
    context: &GrantContext,
    subject: &AccessTokenRecord,
    audience: Vec<String>,
) -> Result<Vec<Resource>, GrantError> {
    let mut values = context.resources.clone();
    values.extend(audience);
    if values.is_empty() {
        return Ok(subject.audience.clone());
    }
    let mut granted: Vec<Resource> = subject
        .audience
        .iter()
        .chain(&context.client.resources)
        .cloned()
        .collect();
    let mut allowed = narrowed(&granted, &values);
    if let (Err(TargetRefusal::NotAllowed), Some(family_id)) = (&allowed, subject.family_id) {
        let now = services.ctx.clock.now();
        if let Some(family) = services
            .ctx
            .store
            .families()
            .get_family(&family_id, now)
            .await?
        {
            granted.extend(family.resources);
            allowed = narrowed(&granted, &values);
        }
    }
    allowed.map_err(|refusal| {
        tracing::info!(%refusal, "token exchange: target refused");
        ErrorCode::InvalidTarget.into()
    })
}
