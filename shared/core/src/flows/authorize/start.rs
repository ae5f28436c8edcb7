//! `GET /oauth2/v0/authorize` (docs/decisions.md, "Authorization code flow"), independent of
//! HTTP: the request checked (a pushed request or a request object standing for its
//! parameters), then single sign-on from a live session, or the sign-in page with the pending
//! request to keep in the browser's cookie.

use super::pending::PendingAuthorization;
use super::redirect::ErrorRedirect;
use super::request::{AuthorizeParams, AuthorizeRejection, RegisteredClient, UntrustedRedirect};
use super::step::{
    redirect_to, sealed, sign_in_page, AuthorizeError, AuthorizeStep, RefusalReason,
};
use crate::client_documents::DocumentError;
use crate::clock::UnixTime;
use crate::domain::{Client, PrincipalId, SignInSession};
use crate::errors::Refusal;
use crate::flows::sessions;
use crate::flows::sign_in::{self, Continue, Interaction, Next, PageKeys as AuthorizeKeys, Shown};
use crate::services::Services;
use crate::signing::SigningError;

/// `GET /oauth2/v0/authorize`: checks the request and opens the sign-in page.
///
/// `session_cookie` is the browser's sign-in session cookie: a live session of the right user,
/// recent enough for `prompt` and `max_age`, skips the sign-in page (single sign-on), and a
/// consent remembered for the scopes skips the consent page too.
pub async fn start(
    services: &Services,
    keys: &AuthorizeKeys,
    params: &AuthorizeParams,
    session_cookie: Option<&str>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let client = match requested_client(services, params).await? {
        Ok(client) => client,
        Err(rejection) => return rejected(services, rejection),
    };
    // A pushed request or a request object stands for the parameters it holds.
    let params = match super::pushed::resolve(services, params, &client).await? {
        Ok(params) => params,
        Err(rejection) => return rejected(services, rejection),
    };
    let params = params.as_ref();
    let mut request = match params.validate(&RegisteredClient::of(&client)) {
        Ok(request) => request,
        Err(rejection) => return rejected(services, rejection),
    };
    if let Err(rejection) =
        super::resources::check_resources(&services.policy, &client, params, &mut request)
    {
        return rejected(services, rejection);
    }
    if let Some(redirect) = super::pushed::profile_refusal(&client, params, &request) {
        return Ok(redirect_to(services, &redirect));
    }
    let expected_user = match hinted_user(services, params, &client).await? {
        Ok(user) => user,
        Err(refusal) => {
            let redirect = ErrorRedirect::openid(
                &request.redirect_uri,
                request.state.as_deref(),
                "invalid_request",
                refusal,
            );
            return Ok(redirect_to(services, &redirect));
        }
    };
    let now = services.ctx.clock.now();
    let session = sessions::current(services, session_cookie)
        .await?
        // A hint naming another user: this browser's session does not answer for them.
        .filter(|session| expected_user.is_none_or(|user| user == session.principal_id))
        .filter(|session| !request.prompt.login && is_recent_enough(session, request.max_age, now));
    let login_hint = request.login_hint.clone().unwrap_or_default();
    let idp_hint = params.idp_hint.clone().filter(|hint| !hint.is_empty());
    let mut pending = PendingAuthorization::new(request, services.ctx.random.as_ref(), now);
    pending.expected_user = expected_user;
    if client.is_fapi2() {
        pending.code_ttl = Some(crate::domain::FAPI2_CODE_TTL_SECONDS);
    }
    if let Some(session) = session {
        pending.signed_in_user = Some(session.principal_id);
        pending.signed_in_at = Some(session.authenticated_at);
        pending.session_lists_client = session.clients.contains(&pending.request.client_id);
        pending.sid = Some(session.sid);
        pending.amr = session.amr;
        pending.idp = session.upstream.map(|upstream| upstream.idp);
        return super::signed_in::proceed(services, keys, &client, pending).await;
    }
    if pending.request.prompt.none {
        let request = &pending.request;
        let redirect =
            ErrorRedirect::login_required(&request.redirect_uri, request.state.as_deref());
        return Ok(redirect_to(services, &redirect));
    }
    if let Some(idp) = idp_hint {
        return hinted_idp(services, keys, &client, pending, &idp, &login_hint).await;
    }
    sign_in_page(services, keys, &client, &pending, true, &login_hint, None)
}

/// `idp_hint`: straight to that company identity provider, the pending request in the cookie
/// for the browser's return; an IdP that does not exist: the sign-in page, saying so.
async fn hinted_idp(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: PendingAuthorization,
    idp: &str,
    login_hint: &str,
) -> Result<AuthorizeStep, AuthorizeError> {
    let then = Continue::Authorization(pending.id.clone());
    let interaction = Interaction {
        browser: &pending.id,
        then: &then,
        session_cookie: None,
        expected_user: pending.expected_user,
        resume: None,
    };
    let next = sign_in::leave_for_hinted(services, interaction, idp, login_hint)
        .await
        .map_err(Refusal::widen)?;
    match next {
        Next::Upstream { location } => {
            let sealed = Some(sealed(services, keys, &pending)?);
            Ok(AuthorizeStep::Upstream { location, sealed })
        }
        Next::Show(Shown::Identify { login, error }) => {
            sign_in_page(services, keys, client, &pending, true, &login, error)
        }
        _ => sign_in_page(services, keys, client, &pending, true, login_hint, None),
    }
}

/// The client `client_id` names: a registered one, or the client of the metadata document a URL
/// names (fetched unless kept and fresh). Unknown, or a document that cannot be fetched or does
/// not pass: the error page, since no address of the client can be trusted; a fetch past the
/// source address's limit: its 429 page.
async fn requested_client(
    services: &Services,
    params: &AuthorizeParams,
) -> Result<Result<Client, AuthorizeRejection>, AuthorizeError> {
    let page = |reason| Ok(Err(AuthorizeRejection::Page(reason)));
    let text = match params.client_id_text() {
        Ok(text) => text,
        Err(rejection) => return Ok(Err(rejection)),
    };
    if services.client_documents.names_document(text) {
        return match services.document_client(text).await {
            Ok(client) => Ok(Ok(client)),
            Err(DocumentError::Store(error)) => Err(error.into()),
            Err(DocumentError::Limited(exceeded)) => Err(RefusalReason::TooManyDocuments {
                retry_after: exceeded.retry_after,
            }
            .into()),
            Err(DocumentError::Unusable(_)) => page(UntrustedRedirect::ClientDocumentUnusable),
        };
    }
    let Ok(id) = params.client_id() else {
        return page(UntrustedRedirect::UnknownClient);
    };
    match services.ctx.store.clients().get_client(&id).await? {
        Some(client) => Ok(Ok(client)),
        None => page(UntrustedRedirect::UnknownClient),
    }
}

/// OpenID Connect Core §3.1.2.1: past `max_age` seconds since the user last signed in with a
/// credential, they must again; `max_age=0` is `prompt=login`.
fn is_recent_enough(session: &SignInSession, max_age: Option<u64>, now: UnixTime) -> bool {
    match max_age {
        None => true,
        Some(0) => false,
        // Whole seconds on both sides: `age == max` may be up to a second more, so it is
        // already too old.
        Some(max) => u64::try_from(session.age(now)).is_ok_and(|age| age < max),
    }
}

/// The user an `id_token_hint` names, when one was sent. A hint that is not an ID token this
/// deployment issued to this client is refused with one description, whatever failed.
async fn hinted_user(
    services: &Services,
    params: &AuthorizeParams,
    client: &Client,
) -> Result<Result<Option<PrincipalId>, &'static str>, SigningError> {
    let Some(hint) = params.id_token_hint.as_deref().filter(|h| !h.is_empty()) else {
        return Ok(Ok(None));
    };
    Ok(match services.codec.verify_id_token_hint(hint).await? {
        Ok(hinted) if hinted.client_id == client.id => Ok(Some(hinted.principal)),
        _ => Err("id_token_hint is not valid"),
    })
}

fn rejected(
    services: &Services,
    rejection: AuthorizeRejection,
) -> Result<AuthorizeStep, AuthorizeError> {
    match rejection {
        AuthorizeRejection::Page(reason) => Err(RefusalReason::Untrusted(reason).into()),
        AuthorizeRejection::Redirect(redirect) => Ok(redirect_to(services, &redirect)),
    }
}
