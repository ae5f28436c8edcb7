//! Signing in through a company's identity provider: the interaction leaves for the IdP with a
//! pending upstream request (its `state`'s digest the key, the nonce, the sealed PKCE verifier
//! and where the page continues), and the IdP's answer at our callback, once checked and its
//! user found, comes back to the page it left as one more sealed step ([`State::Upstream`]),
//! bound to the same browser: a callback URL opened in another browser continues nothing.

use serde::{Deserialize, Serialize};

use super::carrier;
use super::outcome::{identify, Next, SignInError};
use super::state::{Continue, Interaction, State, UpstreamProof};
use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::random::RandomExt as _;
use crate::domain::{
    AuthMethod, IdentityProvider, IdpProtocol, PendingUpstreamRequest, PrincipalId, PrincipalType,
    SealedSecret, UPSTREAM_REQUEST_TTL_SECONDS,
};
use crate::errors::ServerError;
use crate::federation::linking::{self, NoUser};
use crate::federation::oidc::{self, OidcRefusal, UpstreamIdentity};
use crate::federation::saml::{self, AssertionUse};
use crate::federation::{self, open_client_secret};
use crate::flows::second_factor::sealer;
use crate::secrets::TokenHash;
use crate::services::Services;

/// The IdP could not be reached when leaving for it: the sign-in form says so.
pub const IDP_UNREACHABLE: &str =
    "Your company's sign-in service cannot be reached right now. Please try again in a few minutes.";

/// Where the interaction continues when the IdP answers: the page's browser binding and
/// continuation, as the page gave them.
#[derive(Serialize, Deserialize)]
pub(super) struct Departure {
    pub browser: String,
    pub then: Continue,
    pub expected_user: Option<PrincipalId>,
    #[serde(default)]
    pub resume: Option<String>,
}

fn pkce_context(state_hash: &TokenHash) -> String {
    format!("upstream-pkce\0{}", state_hash.to_hex())
}

pub(super) fn departure_context(state_hash: &TokenHash) -> String {
    format!("upstream-departure\0{}", state_hash.to_hex())
}

/// What leaving for an IdP sends and keeps: where the browser goes, the value it carries back
/// (`state`, or SAML's `RelayState`), what the answer must repeat (the OIDC `nonce`, or our
/// `AuthnRequest`'s ID), and the PKCE verifier (none for SAML).
struct Request {
    location: String,
    carried: String,
    nonce: String,
    pkce_verifier: String,
}

async fn request_to(
    services: &Services,
    idp: &IdentityProvider,
    login: &str,
) -> Result<Option<Request>, ServerError> {
    match &idp.protocol {
        IdpProtocol::Oidc(connection) => {
            let now = services.ctx.clock.now();
            let Ok(provider) = services.upstream.get(&connection.issuer, now).await else {
                return Ok(None);
            };
            let Ok(request) =
                oidc::authorization_request(services, &provider, connection, Some(login))
            else {
                return Ok(None);
            };
            Ok(Some(Request {
                location: request.location,
                carried: request.state,
                nonce: request.nonce,
                pkce_verifier: request.pkce_verifier,
            }))
        }
        IdpProtocol::Saml(connection) => {
            let relay_state = services.ctx.random.opaque_token();
            let departure = saml::authn_request(services, idp, connection, &relay_state).await?;
            Ok(Some(Request {
                location: departure.location,
                carried: relay_state,
                nonce: departure.request_id,
                pkce_verifier: String::new(),
            }))
        }
    }
}

/// Sends the browser to `idp`, keeping what its answer is checked against.
pub(super) async fn leave_for(
    services: &Services,
    interaction: Interaction<'_>,
    idp: &IdentityProvider,
    login: &str,
) -> Result<Next, SignInError> {
    let Some(request) = request_to(services, idp, login).await? else {
        federation::record_refusal(services, Some(idp), "idp_unavailable").await;
        return Ok(identify(login, Some(IDP_UNREACHABLE)));
    };
    let now = services.ctx.clock.now();
    let state_hash = TokenHash::of(&request.carried);
    let key = sealer(services).await?;
    let random = services.ctx.random.as_ref();
    let departure = Departure {
        browser: interaction.browser.to_owned(),
        then: interaction.then.clone(),
        expected_user: interaction.expected_user,
        resume: interaction.resume.map(str::to_owned),
    };
    let departure = serde_json::to_vec(&departure).expect("a departure serialises");
    let pending = PendingUpstreamRequest {
        idp_id: idp.id,
        nonce: request.nonce,
        pkce_verifier: SealedSecret::new(key.seal(
            &pkce_context(&state_hash),
            request.pkce_verifier.as_bytes(),
            random,
        )),
        continuation: SealedSecret::new(key.seal(
            &departure_context(&state_hash),
            &departure,
            random,
        )),
        state_hash,
        created_at: now,
        expires_at: now + UPSTREAM_REQUEST_TTL_SECONDS,
    };
    services
        .ctx
        .store
        .federation()
        .put_upstream_request(&pending)
        .await
        .map_err(ServerError::from)?;
    Ok(Next::Upstream {
        location: request.location,
    })
}

/// What the IdP's answer at our callback carried (each absent one `None`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Callback<'a> {
    pub state: Option<&'a str>,
    pub code: Option<&'a str>,
    /// The IdP refused, or the user cancelled there (RFC 6749 §4.1.2.1).
    pub error: Option<&'a str>,
}

/// Where the browser goes after the callback.
#[derive(Debug)]
pub enum Returned {
    /// Back to the page the sign-in left, with the sealed step it continues with; for a
    /// sign-in the IdP started, the account page's sign-in nonce to set (the step is bound to
    /// it).
    Resume {
        location: String,
        account_nonce: Option<String>,
    },
    /// An error page: the sentence, and the reference the audit event carries.
    Refused {
        message: &'static str,
        reference: String,
    },
}

/// The IdP's answer: checked, its user found (linked or made), and the page it left continued.
pub async fn returned(
    services: &Services,
    callback: Callback<'_>,
) -> Result<Returned, ServerError> {
    let now = services.ctx.clock.now();
    let Some(state) = callback.state.filter(|state| !state.is_empty()) else {
        return Ok(refusal(services, None, "unknown_request", STALE).await);
    };
    let state_hash = TokenHash::of(state);
    let federation = services.ctx.store.federation();
    let Some(pending) = federation.take_upstream_request(&state_hash, now).await? else {
        return Ok(refusal(services, None, "unknown_request", STALE).await);
    };
    let idp_id = pending.idp_id;
    let Some(idp) = federation.get_identity_provider(&idp_id).await? else {
        return Ok(refusal(services, None, "unknown_idp", UNAVAILABLE).await);
    };
    if callback.error.is_some() {
        return Ok(refusal(services, Some(&idp), "idp_refused", IDP_REFUSED).await);
    }
    let key = sealer(services).await?;
    let opened = key
        .open(&pkce_context(&state_hash), pending.pkce_verifier.as_str())
        .and_then(|verifier| String::from_utf8(verifier).ok())
        .zip(
            key.open(
                &departure_context(&state_hash),
                pending.continuation.as_str(),
            )
            .and_then(|json| serde_json::from_slice::<Departure>(&json).ok()),
        );
    let (Some((verifier, departure)), Some(code), IdpProtocol::Oidc(connection)) =
        (opened, callback.code, &idp.protocol)
    else {
        return Ok(refusal(services, Some(&idp), "malformed", FAILED).await);
    };
    // A secret that does not open is the deployment's fault (another key ring): a 500, not
    // the user's refusal page.
    let client_secret = open_client_secret(services, &idp).await?;
    let redeemed = oidc::redeem(
        services,
        connection,
        client_secret.expose(),
        code,
        &verifier,
        &pending.nonce,
    )
    .await;
    let identity = match redeemed {
        Ok(identity) => identity,
        Err(refused) => {
            let message = match refused {
                OidcRefusal::Provider(_) => UNAVAILABLE,
                _ => FAILED,
            };
            return Ok(refusal(services, Some(&idp), refused.reason(), message).await);
        }
    };
    signed_in_upstream(services, &idp, identity, departure, None, Gate::Open).await
}

/// The one write that makes an upstream answer used, done once the user is found, so that a
/// retry after our failure before it finds everything as it was.
pub(super) enum Gate<'a> {
    /// Nothing more: the answer was used already (the OpenID Connect code, redeemed once at
    /// the IdP, its pending request taken first).
    Open,
    /// Take the pending request the answer names (of two answers, the first), then remember the
    /// assertion.
    Pending(&'a TokenHash, &'a AssertionUse),
    /// Remember the unsolicited assertion: only its first use signs in.
    FirstUse(&'a AssertionUse),
}

async fn pass(
    services: &Services,
    idp: &IdentityProvider,
    gate: Gate<'_>,
) -> Result<Option<Returned>, ServerError> {
    let now = services.ctx.clock.now();
    match gate {
        Gate::Open => Ok(None),
        Gate::Pending(state_hash, assertion) => {
            let federation = services.ctx.store.federation();
            if federation
                .take_upstream_request(state_hash, now)
                .await?
                .is_none()
            {
                return Ok(Some(
                    refusal(services, Some(idp), "unknown_request", STALE).await,
                ));
            }
            // The request, taken once, is what keeps this answer single-use; remembering its
            // assertion too only refuses it elsewhere sooner, so a failure here is not the user's.
            if saml::first_use(services, assertion).await.is_err() {
                tracing::warn!(
                    "a SAML assertion could not be remembered after its request was taken"
                );
            }
            Ok(None)
        }
        Gate::FirstUse(assertion) => Ok(if saml::first_use(services, assertion).await? {
            None
        } else {
            Some(refusal(services, Some(idp), "replayed", FAILED).await)
        }),
    }
}

/// Who the IdP signed in, found (linked or made) and audited, and the page the sign-in left
/// continued with it.
pub(super) async fn signed_in_upstream(
    services: &Services,
    idp: &IdentityProvider,
    identity: UpstreamIdentity,
    departure: Departure,
    account_nonce: Option<String>,
    gate: Gate<'_>,
) -> Result<Returned, ServerError> {
    let now = services.ctx.clock.now();
    let idp_id = idp.id;
    let resolved = match linking::resolve(services, idp, &identity).await? {
        Ok(resolved) => resolved,
        Err(no_user) => {
            let message = match no_user {
                NoUser::NoAccount => NO_ACCOUNT,
                NoUser::Inactive => INACTIVE,
            };
            return Ok(refusal(services, Some(idp), no_user.reason(), message).await);
        }
    };
    if let Some(refused) = pass(services, idp, gate).await? {
        return Ok(refused);
    }
    let user = resolved.user.id;
    let of_user =
        |kind: AuditKind| audit::event(&services.ctx, kind).principal(PrincipalType::User, user);
    if resolved.created {
        audit::record(&services.ctx, of_user(AuditKind::UserCreated)).await;
    }
    if resolved.linked {
        let linked = of_user(AuditKind::FederationLinked { idp: idp_id });
        audit::record(&services.ctx, linked).await;
    }
    let signed_in = of_user(AuditKind::FederationSignedIn { idp: idp_id });
    audit::record(&services.ctx, signed_in).await;

    let two_factors = identity.amr.contains(&AuthMethod::Mfa) || idp.trust_mfa;
    let state = State::Upstream {
        user,
        proof: UpstreamProof {
            idp: idp_id,
            amr: identity.amr,
            auth_time: identity.auth_time.filter(|time| *time <= now),
            id_token: identity.id_token,
        },
        two_factors,
    };
    let interaction = Interaction {
        browser: &departure.browser,
        then: &departure.then,
        session_cookie: None,
        expected_user: departure.expected_user,
        resume: None,
    };
    let carried = carrier::seal(services, interaction, &state).await?;
    Ok(Returned::Resume {
        location: resume_location(services, &departure, &carried),
        account_nonce,
    })
}

/// The page the sign-in left, with the step it continues with in `upstream`.
fn resume_location(services: &Services, departure: &Departure, carried: &str) -> String {
    let page = match &departure.then {
        Continue::Authorization(_) => "/oauth2/v0/authorize",
        Continue::DeviceCode(_) => "/oauth2/v0/device",
        Continue::Account => "/oauth2/v0/account",
    };
    let carried = url::form_urlencoded::byte_serialize(carried.as_bytes()).collect::<String>();
    let also = departure
        .resume
        .as_deref()
        .map(|query| format!("&{query}"))
        .unwrap_or_default();
    format!(
        "{}{page}?upstream={carried}{also}",
        services.geolocation().as_str().trim_end_matches('/')
    )
}

pub(super) const STALE: &str =
    "This sign-in has expired or was already completed. Please go back to the application and sign in again.";
pub(super) const UNAVAILABLE: &str =
    "Your company's sign-in service cannot be used right now. Please try again later or contact your administrator.";
pub(super) const IDP_REFUSED: &str =
    "Your company's sign-in service did not sign you in. Please go back to the application and try again.";
pub(super) const FAILED: &str =
    "Your company's sign-in service sent an answer that could not be accepted. Please try again or contact your administrator.";
const NO_ACCOUNT: &str =
    "There is no account for you here yet. Please ask your company's administrator to give you access.";
const INACTIVE: &str = "This account is disabled. Please contact your company's administrator.";

pub(super) async fn refusal(
    services: &Services,
    idp: Option<&IdentityProvider>,
    reason: &str,
    message: &'static str,
) -> Returned {
    let reference = federation::record_refusal(services, idp, reason).await;
    Returned::Refused { message, reference }
}

/// The IdPs a login is sent to, unless it is none.
pub(super) async fn idps_for(
    services: &Services,
    login: &str,
) -> Result<Vec<IdentityProvider>, ServerError> {
    federation::discover(services, login).await
}
