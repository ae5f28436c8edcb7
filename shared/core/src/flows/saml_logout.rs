//! Our single logout service for a SAML IdP (`/federation/v0/saml/{idp_id}/slo`, HTTP-Redirect):
//! the IdP's `LogoutResponse` to the `LogoutRequest` our sign-out sent (the sign-out ends where
//! its sealed `RelayState` says), or the IdP's own `LogoutRequest`, which ends every session it
//! started for that NameID here, each client told by back-channel logout, and is answered with
//! our signed `LogoutResponse`. A message that is not signed by the IdP, or not from it or to
//! us, changes nothing.

use crate::domain::audit::SessionEndReason;
use crate::domain::{IdpId, IdpProtocol, UpstreamSubject};
use crate::errors::ServerError;
use crate::federation;
use crate::federation::saml::{self, Logout, LogoutBinding};
use crate::flows::{sessions, upstream_logout};
use crate::services::Services;

/// Where the browser goes from our single logout service.
#[derive(Debug)]
pub enum SingleLogout {
    Redirect(String),
    /// The signed-out page.
    SignedOut,
    /// An error page: the sentence and the `federation.refused` reference.
    Refused {
        message: &'static str,
        reference: String,
    },
}

const NOT_ACCEPTED: &str =
    "This sign-out message could not be accepted. Nothing was changed. Please contact your administrator if this persists.";

pub async fn single_logout(
    services: &Services,
    idp_id: &str,
    binding: LogoutBinding<'_>,
) -> Result<SingleLogout, ServerError> {
    let federation = services.ctx.store.federation();
    let idp = match IdpId::parse(idp_id) {
        Ok(id) => federation.get_identity_provider(&id).await?,
        Err(_) => None,
    };
    let Some((idp, IdpProtocol::Saml(connection))) = idp.map(|idp| (idp.clone(), idp.protocol))
    else {
        return Ok(refused(services, None, "unknown_idp").await);
    };
    let (logout, relay_state) = match saml::received_logout(services, &idp, &connection, binding)? {
        Ok(received) => received,
        Err(refusal) => return Ok(refused(services, Some(&idp), refusal.reason()).await),
    };
    match logout {
        Logout::Response(_) => Ok(
            match upstream_logout::returned(services, relay_state.as_deref()).await? {
                Some(location) => SingleLogout::Redirect(location),
                None => SingleLogout::SignedOut,
            },
        ),
        Logout::Request(request) => {
            let now = services.ctx.clock.now();
            if request
                .not_on_or_after
                .is_some_and(|until| until + saml::CLOCK_SKEW_SECONDS <= now)
            {
                return Ok(refused(services, Some(&idp), "expired").await);
            }
            if let Ok(subject) = UpstreamSubject::new(&connection.entity_id, &request.name_id) {
                if let Some(link) = federation.get_federation_link(&idp.id, &subject).await? {
                    let reason = SessionEndReason::IdpLogout;
                    sessions::end_started_by(services, &link.user_id, &idp.id, reason).await?;
                }
            }
            let answer = saml::logout_response(
                services,
                &idp,
                &connection,
                &request.id,
                relay_state.as_deref(),
            )
            .await?;
            Ok(answer.map_or(SingleLogout::SignedOut, SingleLogout::Redirect))
        }
    }
}

async fn refused(
    services: &Services,
    idp: Option<&crate::domain::IdentityProvider>,
    reason: &str,
) -> SingleLogout {
    SingleLogout::Refused {
        message: NOT_ACCEPTED,
        reference: federation::record_refusal(services, idp, reason).await,
    }
}
