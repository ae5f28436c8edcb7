//! A token exchange with `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`
//! (draft-ietf-oauth-identity-assertion-authz-grant §4.3): this service, as the company's
//! identity provider, asserts the user of an ID token it issued to the requesting client to
//! another authorization server the client is configured for, so that the client's agent gets a
//! token there without a browser.
//!
//! Order of checks: the subject (an unexpired ID token of this deployment for this client, for
//! a user whose sign-in session is live and who is active: 165), the user's company (it may have
//! turned assertions off: 182), the target (`audience` one of the client's `id-jag-targets`,
//! `resource` within its list: 160), the scope (within the target's: 54). Reads: the session,
//! the user, the company. Nothing is written but the audit event: the assertion is a signed,
//! short-lived statement the target redeems once.

use super::GrantContext;
use crate::domain::audit::AuditKind;
use crate::domain::random::RandomExt;
use crate::domain::{
    AccessTokenRecord, Client, ClientId, IdJagTarget, PrincipalId, PrincipalType, Resource, Scopes,
    TokenId, UserStatus, ID_JAG_MAX_LIFETIME_SECONDS, ID_JAG_TOKEN_TYPE,
};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::IssuedTokens;
use crate::jwt::{IdJagClaims, IdTokenClaims};
use crate::requests::{TokenExchangeRequest, ID_TOKEN_TYPE};
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: TokenExchangeRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let now = services.ctx.clock.now();
    // An actor token has no place in an assertion: refused rather than silently dropped.
    if request.actor_token.is_some() {
        return Err(ErrorCode::ActorTokenInvalid.into());
    }
    let (subject, session) = live_subject(services, client, &request).await?;
    let user = services
        .ctx
        .store
        .principals()
        .get_user(&subject)
        .await?
        .filter(|user| user.status == UserStatus::Active)
        .ok_or(ErrorCode::SubjectTokenInvalid)?;
    if let Some(company) = &user.company_id {
        let company = services.ctx.store.principals().get_company(company).await?;
        if company.is_some_and(|company| !company.id_jag) {
            tracing::info!("token exchange: the user's company turned identity assertions off");
            return Err(ErrorCode::IdJagDisabled.into());
        }
    }
    let target = chosen_target(client, &request.audience)?;
    let resource = asserted_resource(target, &context.resources)?;
    let scope = match request.scope.as_deref().map(Scopes::parse) {
        None => None,
        Some(Ok(scopes)) if target.allows_scopes(&scopes) => Some(scopes),
        Some(_) => return Err(ErrorCode::ScopeExceedsGrant.into()),
    };
    let jti = services.ctx.random.uuid();
    let claims = IdJagClaims {
        iss: String::new(),
        sub: subject.to_string(),
        aud: target.audience.clone(),
        client_id: target.client_id.clone(),
        jti: jti.to_string(),
        iat: now,
        exp: now + ID_JAG_MAX_LIFETIME_SECONDS,
        auth_time: Some(session.auth_time),
        amr: session.amr.clone(),
        resource: resource.as_ref().map(ToString::to_string),
        scope: scope.as_ref().map(ToString::to_string),
    };
    let assertion = services.codec.encode_id_jag(claims).await?;
    let event = crate::audit::event(
        &services.ctx,
        AuditKind::TokenIdJagIssued {
            jti: jti.to_string(),
            audience: target.audience.clone(),
            target_client_id: target.client_id.clone(),
        },
    )
    .client(client.id)
    .principal(PrincipalType::User, subject);
    crate::audit::record(&services.ctx, event).await;
    Ok(answer(client, subject, assertion, scope, (now, jti)))
}

/// What the ID token says of the sign-in it came from.
struct SignedIn {
    auth_time: i64,
    amr: Vec<crate::domain::AuthMethod>,
}

/// The ID token's user, if it is an unexpired ID token of this deployment for `client`, issued
/// in a sign-in session that is still live (165 otherwise).
async fn live_subject(
    services: &Services,
    client: &Client,
    request: &TokenExchangeRequest,
) -> Result<(PrincipalId, SignedIn), GrantError> {
    let now = services.ctx.clock.now();
    let refused = || GrantError::from(ErrorCode::SubjectTokenInvalid);
    let (Some(token), true) = (
        &request.subject_token,
        request.subject_token_type == ID_TOKEN_TYPE,
    ) else {
        return Err(refused());
    };
    let Some(claims) = services.codec.verify_id_token(token.expose(), now).await? else {
        return Err(refused());
    };
    let IdTokenClaims {
        aud,
        sub,
        sid,
        principal_type,
        ..
    } = &claims;
    let ours = ClientId::from_wire(aud).is_ok_and(|id| id == client.id);
    let (Ok(user), Some(sid), true, PrincipalType::User) =
        (PrincipalId::parse(sub), sid, ours, principal_type)
    else {
        tracing::info!(
            ours,
            "token exchange: the subject is no user's ID token of this client"
        );
        return Err(refused());
    };
    let Some(session) = services
        .ctx
        .store
        .sessions()
        .get_session(&user, sid, now)
        .await?
    else {
        tracing::info!("token exchange: the ID token's sign-in session has ended");
        return Err(refused());
    };
    Ok((
        user,
        SignedIn {
            auth_time: claims.auth_time.unwrap_or(session.authenticated_at),
            amr: if claims.amr.is_empty() {
                session.amr
            } else {
                claims.amr
            },
        },
    ))
}

/// The client's target whose issuer is the one `audience` (160 for none, several, or one not
/// configured).
fn chosen_target<'a>(
    client: &'a Client,
    audience: &[String],
) -> Result<&'a IdJagTarget, GrantError> {
    let [audience] = audience else {
        tracing::info!(
            count = audience.len(),
            "token exchange: an assertion needs one audience"
        );
        return Err(ErrorCode::InvalidTarget.into());
    };
    client
        .id_jag_targets
        .iter()
        .find(|target| target.audience == *audience)
        .ok_or_else(|| {
            tracing::info!("token exchange: no identity assertion target for this audience");
            ErrorCode::InvalidTarget.into()
        })
}

/// The one resource the assertion names, if the request named one the target allows (160
/// otherwise; several are refused, one assertion being for one resource).
fn asserted_resource(
    target: &IdJagTarget,
    resources: &[String],
) -> Result<Option<Resource>, GrantError> {
    let resource = match resources {
        [] => None,
        [one] => Some(Resource::parse(one).map_err(|_| ErrorCode::InvalidTarget)?),
        _ => return Err(ErrorCode::InvalidTarget.into()),
    };
    if !target.allows_resource(resource.as_ref()) {
        tracing::info!("token exchange: the resource is not the assertion target's");
        return Err(ErrorCode::InvalidTarget.into());
    }
    Ok(resource)
}

/// RFC 8693 §2.2.1's answer: the assertion as `access_token`, `issued_token_type` id-jag (which
/// the endpoint answers with `token_type: N_A`), its lifetime. The record describes the
/// assertion for the answer and is stored nowhere.
fn answer(
    client: &Client,
    subject: PrincipalId,
    assertion: String,
    scope: Option<Scopes>,
    (now, jti): (i64, uuid::Uuid),
) -> IssuedTokens {
    let access = AccessTokenRecord {
        jti: TokenId::new(jti),
        client_id: client.id,
        principal_type: PrincipalType::User,
        subject: *subject.as_uuid(),
        family_id: None,
        scopes: scope.unwrap_or_default(),
        issued_at: now,
        expires_at: now + ID_JAG_MAX_LIFETIME_SECONDS,
        revoked: false,
        jkt: None,
        audience: Vec::new(),
        act: None,
        client_url: None,
        auth_time: None,
        amr: Vec::new(),
        exchanged_from: Vec::new(),
    };
    let mut issued = IssuedTokens::assertion(assertion, access);
    issued.issued_token_type = Some(ID_JAG_TOKEN_TYPE);
    issued
}
