//! Once the user is known (signed in on the page, or by a live sign-in session): the consent the
//! user gave before answers for the same scopes (or fewer) without a page, unless `prompt=consent`;
//! otherwise the consent page, or `consent_required` for `prompt=none`. Approving remembers the
//! consent and notes the client in the session, so that it is told when the session ends.

use super::code::issue_code;
use super::csrf::{csrf_token, Form};
use super::pending::PendingAuthorization;
use super::redirect::{code_location, ErrorRedirect};
use super::step::{redirect_to, AuthorizeError, AuthorizeStep, FormPage, RefusalReason};
use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::{Client, Consent, PrincipalId, PrincipalType};
use crate::errors::Refusal;
use crate::flows::sessions;
use crate::flows::sign_in::PageKeys as AuthorizeKeys;
use crate::services::Services;
use crate::store::StoreError;

/// The next step for a signed-in user: a code at once when the consent is remembered, else
/// the consent page (or `consent_required` when no page may be shown).
pub(super) async fn proceed(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: PendingAuthorization,
) -> Result<AuthorizeStep, AuthorizeError> {
    let user = pending
        .signed_in_user
        .expect("proceed is called once the user is known");
    let request = &pending.request;
    if !request.prompt.consent && is_remembered(services, user, client, &pending).await? {
        return issue(services, &pending, user).await;
    }
    if request.prompt.none {
        let redirect =
            ErrorRedirect::consent_required(&request.redirect_uri, request.state.as_deref());
        return Ok(redirect_to(services, &redirect));
    }
    let Ok(sealed) = pending.seal(keys, services.ctx.random.as_ref()) else {
        return Err(Refusal::Denied(RefusalReason::TooLarge));
    };
    let registration = client.registration.as_ref();
    Ok(AuthorizeStep::Consent(FormPage {
        unverified_host: Some(client)
            .filter(|client| client.is_self_registered())
            .and_then(|_| url::Url::parse(&request.redirect_uri).ok())
            .and_then(|url| url.host_str().map(str::to_owned)),
        policy_uri: registration.and_then(|r| r.policy_uri.clone()),
        tos_uri: registration.and_then(|r| r.tos_uri.clone()),
        app_name: client.name.clone(),
        redirect_uri: request.redirect_uri.clone(),
        csrf_token: csrf_token(keys, Form::Consent, &pending),
        sealed: Some(sealed),
        scopes: request.scopes.iter().map(str::to_owned).collect(),
        resources: request.resources.iter().map(ToString::to_string).collect(),
        login: String::new(),
        error: None,
        idp_choices: Vec::new(),
    }))
}

async fn is_remembered(
    services: &Services,
    user: PrincipalId,
    client: &Client,
    pending: &PendingAuthorization,
) -> Result<bool, StoreError> {
    // A self-registered client (or a metadata document's) was vouched for by nobody, so its
    // consent page is always asked for first (never skipped as a first-party client's may be),
    // marked as not verified; once the user approved it, it is remembered like any other's,
    // so that `prompt=none` then answers with a code.
    let consent = services
        .ctx
        .store
        .consents()
        .get_consent(&user, &client.id)
        .await?;
    let request = &pending.request;
    Ok(consent.is_some_and(|consent| consent.covers(&request.scopes, &request.resources)))
}

/// Approve: remember the consent, mint and store the code, redirect with it. Deny: redirect
/// with `access_denied`.
pub(super) async fn decide(
    services: &Services,
    pending: PendingAuthorization,
    user: PrincipalId,
    approved: bool,
) -> Result<AuthorizeStep, AuthorizeError> {
    let request = &pending.request;
    if !approved {
        let redirect = ErrorRedirect::denied(&request.redirect_uri, request.state.as_deref());
        return Ok(redirect_to(services, &redirect));
    }
    // One code per pending request: a replayed consent form (a stolen cookie and its CSRF
    // token) mints nothing more.
    if !services
        .limiter()
        .claim_approval(&pending.id, pending.expires_at)
        .await?
    {
        return Err(Refusal::Denied(RefusalReason::NoPendingRequest));
    }
    remember_consent(services, user, &pending).await?;
    issue(services, &pending, user).await
}

async fn remember_consent(
    services: &Services,
    user: PrincipalId,
    pending: &PendingAuthorization,
) -> Result<(), StoreError> {
    let now = services.ctx.clock.now();
    let client = pending.request.client_id;
    let consents = services.ctx.store.consents();
    let (approved, resources) = (&pending.request.scopes, &pending.request.resources);
    let consent = match consents.get_consent(&user, &client).await? {
        Some(before) => before.widened(approved, resources, now),
        None => Consent {
            principal_id: user,
            client_id: client,
            scopes: approved.clone(),
            granted_at: now,
            resources: resources.clone(),
        },
    };
    consents.put_consent(&consent).await?;
    let event = audit::event(&services.ctx, AuditKind::ConsentGranted)
        .client(client)
        .principal(PrincipalType::User, user);
    audit::record(&services.ctx, event).await;
    Ok(())
}

/// Notes the client in the session, stores the code, and redirects with it.
async fn issue(
    services: &Services,
    pending: &PendingAuthorization,
    user: PrincipalId,
) -> Result<AuthorizeStep, AuthorizeError> {
    let request = &pending.request;
    if let Some(sid) = pending
        .sid
        .as_ref()
        .filter(|_| !pending.session_lists_client)
    {
        sessions::remember_client(services, &user, sid, request.client_id).await?;
    }
    let issued = issue_code(
        pending,
        user,
        services.ctx.random.as_ref(),
        services.ctx.clock.now(),
    );
    services
        .ctx
        .store
        .authorization_codes()
        .put_authorization_code(&issued.record)
        .await?;
    Ok(AuthorizeStep::Redirect(code_location(
        &request.redirect_uri,
        &issued.code,
        services.geolocation(),
        request.state.as_deref(),
    )))
}
