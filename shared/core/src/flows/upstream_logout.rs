//! Signing out of a session a company's OpenID Provider started: once the session here ended
//! (RP-initiated logout, the account page's sign-out), the browser goes to the IdP's
//! `end_session_endpoint` with the IdP's ID token as `id_token_hint`, and comes back to
//! `/federation/v0/oidc/logged-out`, which sends it on where the sign-out was to end (the
//! client's `post_logout_redirect_uri`, or the signed-out page). That destination travels in
//! the IdP's `state`, sealed by us, so the return address is never an open redirect.

use serde::{Deserialize, Serialize};
use url::Url;

use crate::clock::UnixTime;
use crate::domain::{IdpProtocol, SignInSession};
use crate::errors::ServerError;
use crate::federation::{oidc, saml};
use crate::flows::second_factor::sealer;
use crate::flows::sessions;
use crate::services::Services;

/// How long the browser may take at the IdP's sign-out page.
const RETURN_TTL_SECONDS: UnixTime = 600;
const CONTEXT: &str = "upstream-logout";

#[derive(Serialize, Deserialize)]
struct Return {
    /// Where the sign-out ends: a registered `post_logout_redirect_uri` (with its `state`), or
    /// `None` for the signed-out page.
    to: Option<String>,
    expires_at: UnixTime,
}

/// Where the browser goes for the IdP's own sign-out, if `ended` was started by an OpenID
/// Provider that has one; `then` is where it ends afterwards. `None`: nothing to do upstream
/// (a password session, an IdP without the endpoint, or one that cannot be reached now: the
/// session here ended all the same).
pub async fn via_idp(
    services: &Services,
    ended: &SignInSession,
    then: Option<String>,
) -> Result<Option<String>, ServerError> {
    let Some(upstream) = &ended.upstream else {
        return Ok(None);
    };
    let federation = services.ctx.store.federation();
    let Some(idp) = federation.get_identity_provider(&upstream.idp).await? else {
        return Ok(None);
    };
    let now = services.ctx.clock.now();
    let back = Return {
        to: then,
        expires_at: now + RETURN_TTL_SECONDS,
    };
    let payload = serde_json::to_vec(&back).expect("a return serialises");
    let state = sealer(services)
        .await?
        .seal(CONTEXT, &payload, services.ctx.random.as_ref());
    let hint = sessions::upstream_id_token(services, upstream).await?;
    let connection = match &idp.protocol {
        IdpProtocol::Oidc(connection) => connection,
        IdpProtocol::Saml(connection) => {
            let Some(session) = hint.and_then(|hint| serde_json::from_str(&hint).ok()) else {
                return Ok(None);
            };
            return saml::logout_request(services, &idp, connection, &session, &state).await;
        }
    };
    let Ok(provider) = services.upstream.get(&connection.issuer, now).await else {
        return Ok(None);
    };
    let Some(endpoint) = provider.end_session_endpoint() else {
        return Ok(None);
    };
    let Ok(mut location) = Url::parse(endpoint) else {
        return Ok(None);
    };
    {
        let mut query = location.query_pairs_mut();
        if let Some(hint) = &hint {
            query.append_pair("id_token_hint", hint);
        }
        query
            .append_pair("client_id", &connection.client_id)
            .append_pair("post_logout_redirect_uri", &logged_out_uri(services))
            .append_pair("state", &state);
    }
    Ok(Some(location.into()))
}

/// Our address the IdP sends the browser back to after its sign-out.
pub fn logged_out_uri(services: &Services) -> String {
    oidc::redirect_uri(services).replace("/oidc/callback", "/oidc/logged-out")
}

/// Back from the IdP's sign-out: where the sign-out ends (`None`: the signed-out page). A
/// `state` we did not seal, or too old, ends on the signed-out page too.
pub async fn returned(
    services: &Services,
    state: Option<&str>,
) -> Result<Option<String>, ServerError> {
    let Some(state) = state else {
        return Ok(None);
    };
    let key = sealer(services).await?;
    let back = key
        .open(CONTEXT, state)
        .and_then(|payload| serde_json::from_slice::<Return>(&payload).ok())
        .filter(|back| back.expires_at > services.ctx.clock.now());
    Ok(back.and_then(|back| back.to))
}
