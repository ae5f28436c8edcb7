//! The SAML IdP's `Response` at our assertion consumer service: a sign-in this browser started
//! (its `RelayState` names the pending request, whose `AuthnRequest` ID the response must
//! answer, taken once the user is found, so that a re-posted form after our failure still
//! finds it), or one the IdP started, taken only from an IdP added with
//! `--allow-idp-initiated` and continued on the account page under a sign-in nonce set now.
//! Either way the assertion is checked (`federation::saml`) and the user found as for OpenID
//! Connect.

use super::state::Continue;
use super::upstream::{
    departure_context, refusal, signed_in_upstream, Departure, Gate, Returned, FAILED, IDP_REFUSED,
    STALE, UNAVAILABLE,
};
use crate::domain::random::RandomExt as _;
use crate::domain::{IdpId, IdpProtocol};
use crate::errors::ServerError;
use crate::federation::saml::{self, ResponseRefusal};
use crate::flows::second_factor::sealer;
use crate::secrets::TokenHash;
use crate::services::Services;

const UNSOLICITED: &str =
    "Your company's sign-in service sent a sign-in this service did not ask for. Please start from the application you want to use.";

/// The ACS form's two fields (each absent one `None`).
#[derive(Debug, Default, Clone, Copy)]
pub struct AcsPost<'a> {
    pub saml_response: Option<&'a str>,
    pub relay_state: Option<&'a str>,
}

/// The IdP `idp_id`'s response, checked, and where the browser goes.
pub async fn returned_from_saml(
    services: &Services,
    idp_id: &str,
    post: AcsPost<'_>,
) -> Result<Returned, ServerError> {
    let federation = services.ctx.store.federation();
    let idp = match IdpId::parse(idp_id) {
        Ok(id) => federation.get_identity_provider(&id).await?,
        Err(_) => None,
    };
    let Some(idp) = idp else {
        return Ok(refusal(services, None, "unknown_idp", UNAVAILABLE).await);
    };
    let IdpProtocol::Saml(connection) = &idp.protocol else {
        return Ok(refusal(services, Some(&idp), "unknown_idp", UNAVAILABLE).await);
    };
    let Some(saml_response) = post.saml_response.filter(|response| !response.is_empty()) else {
        return Ok(refusal(services, Some(&idp), "malformed", FAILED).await);
    };
    let relay_state = post.relay_state.filter(|relay| !relay.is_empty());
    let now = services.ctx.clock.now();
    let pending = match relay_state {
        Some(relay) => federation
            .get_upstream_request(&TokenHash::of(relay), now)
            .await?
            .filter(|pending| pending.idp_id == idp.id),
        None => None,
    };
    let (departure, in_response_to, account_nonce) = match pending {
        Some(pending) => {
            let key = sealer(services).await?;
            let departure = key
                .open(
                    &departure_context(&pending.state_hash),
                    pending.continuation.as_str(),
                )
                .and_then(|json| serde_json::from_slice::<Departure>(&json).ok());
            let Some(departure) = departure else {
                return Ok(refusal(services, Some(&idp), "malformed", FAILED).await);
            };
            (departure, Some((pending.nonce, pending.state_hash)), None)
        }
        None if connection.allow_idp_initiated => {
            let nonce = services.ctx.random.opaque_token();
            let departure = Departure {
                browser: nonce.clone(),
                then: Continue::Account,
                expected_user: None,
                resume: None,
            };
            (departure, None, Some(nonce))
        }
        None if relay_state.is_some() => {
            return Ok(refusal(services, Some(&idp), "unknown_request", STALE).await);
        }
        None => return Ok(refusal(services, Some(&idp), "unsolicited", UNSOLICITED).await),
    };
    let accepted = saml::accept_response(
        services,
        &idp,
        connection,
        saml_response,
        in_response_to.as_ref().map(|(id, _)| id.as_str()),
    )
    .await?;
    match accepted {
        Ok(accepted) => {
            let gate = match &in_response_to {
                Some((_, state_hash)) => Gate::Pending(state_hash, &accepted.assertion),
                None => Gate::FirstUse(&accepted.assertion),
            };
            let identity = accepted.identity;
            signed_in_upstream(services, &idp, identity, departure, account_nonce, gate).await
        }
        Err(refused) => {
            let message = match refused {
                ResponseRefusal::IdpFailure => IDP_REFUSED,
                _ => FAILED,
            };
            Ok(refusal(services, Some(&idp), refused.reason(), message).await)
        }
    }
}
