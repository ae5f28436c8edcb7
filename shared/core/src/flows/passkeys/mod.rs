//! Passkeys (docs/decisions.md, "Passkeys"), free of HTTP: the account page's ceremony that adds
//! one, their list, names and removal, and the sign-in pages' ceremony that signs in with one.
//!
//! A ceremony is two requests: the options (a challenge) and the browser's answer. Its state is
//! kept in the store under the digest of a random id the page holds, and taken (deleted) by the
//! first answer, so a challenge is answered at most once and only within
//! [`PASSKEY_CEREMONY_TTL_SECONDS`]. Every refusal of a sign-in reads the same on the page (no
//! user enumeration) and is audited with its reason.

mod ceremony;
#[cfg(test)]
mod tests;

pub use ceremony::{credential_key, default_rp_id, InvalidRelyingParty, RelyingParty};

use crate::audit;
use crate::domain::audit::{AuditKind, PasskeyRefusal};
use crate::domain::{
    passkey_name, AuthMethod, CeremonyPurpose, PasskeyCeremony, PasskeyCredential, PrincipalId,
    PrincipalType, SignInSession, User, PASSKEY_CEREMONY_TTL_SECONDS,
};
use crate::errors::{Denial, Refusal, ServerError};
use crate::mail::FactorChange;
use crate::random::RandomExt;
use crate::secrets::TokenHash;
use crate::services::Services;
use crate::store::StoreError;

/// What the page's script is given to start a ceremony: the id to send back with the answer,
/// and the options for `navigator.credentials.create` or `get`.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct CeremonyStart {
    pub ceremony: String,
    /// WebAuthn's `CredentialCreationOptions` or `CredentialRequestOptions`, binary values in
    /// base64url.
    #[schema(value_type = Object)]
    pub options: serde_json::Value,
}

/// Why a passkey ceremony did not go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasskeyDenial {
    /// A sign-in answer refused, for any reason (the page says one sentence for all:
    /// [`PasskeyDenial::message`]).
    SignIn(PasskeyRefusal),
    /// A registration answer refused.
    Registration(PasskeyRefusal),
    /// A name that is empty once trimmed.
    NoName,
    /// No RP ID can be derived: the geolocation's host is an IP address (a local server on
    /// `127.0.0.1`), which WebAuthn never accepts, and `WEBAUTHN_RP_ID` is not set.
    Unavailable,
}

impl Denial for PasskeyDenial {}

pub type PasskeyError = Refusal<PasskeyDenial>;

/// The deployment's relying party: `WEBAUTHN_RP_ID` or the geolocation's host, the
/// geolocation's origin. A configuration that cannot be used is our failure (500).
pub fn relying_party(services: &Services) -> Result<RelyingParty, ServerError> {
    let geolocation = services.geolocation();
    let rp_id = services
        .policy
        .webauthn_rp_id
        .clone()
        .unwrap_or_else(|| default_rp_id(geolocation));
    RelyingParty::new(&rp_id, geolocation.as_str())
        .map_err(|_| ServerError::internal("WEBAUTHN_RP_ID cannot be used with this geolocation"))
}

/// The relying party for a new ceremony: without `WEBAUTHN_RP_ID`, a geolocation that gives no
/// usable RP ID means passkeys are not offered here (a refusal); a configured one that does not
/// fit is our failure.
fn ceremony_party(services: &Services) -> Result<RelyingParty, PasskeyError> {
    relying_party(services).map_err(|error| {
        if services.policy.webauthn_rp_id.is_none() {
            PasskeyDenial::Unavailable.into()
        } else {
            error.into()
        }
    })
}

async fn keep_ceremony(
    services: &Services,
    purpose: CeremonyPurpose,
    state: String,
) -> Result<String, StoreError> {
    let id = services.ctx.random.opaque_token();
    let now = services.ctx.clock.now();
    let ceremony = PasskeyCeremony {
        id_hash: TokenHash::of(&id),
        purpose,
        state,
        created_at: now,
        expires_at: now + PASSKEY_CEREMONY_TTL_SECONDS,
    };
    services
        .ctx
        .store
        .passkeys()
        .put_passkey_ceremony(&ceremony)
        .await?;
    Ok(id)
}

async fn take_ceremony(
    services: &Services,
    id: &str,
) -> Result<Option<PasskeyCeremony>, StoreError> {
    let now = services.ctx.clock.now();
    services
        .ctx
        .store
        .passkeys()
        .take_passkey_ceremony(&TokenHash::of(id), now)
        .await
}

fn options_json<T: serde::Serialize>(options: &T) -> Result<serde_json::Value, ServerError> {
    serde_json::to_value(options)
        .map_err(|_| ServerError::internal("passkey options could not be serialised"))
}

/// Starts adding a passkey to the signed-in user's account.
pub async fn registration_options(
    services: &Services,
    session: &SignInSession,
) -> Result<CeremonyStart, PasskeyError> {
    let user = session.principal_id;
    let store = &services.ctx.store;
    let Some(found) = store.principals().get_user(&user).await? else {
        return Err(PasskeyDenial::Registration(PasskeyRefusal::UserRefused).into());
    };
    let existing = store
        .passkeys()
        .list_passkeys(&user)
        .await?
        .iter()
        .filter_map(|passkey| {
            base64::Engine::decode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                &passkey.credential_id,
            )
            .ok()
        })
        .collect();
    let (options, state) = ceremony_party(services)?
        .start_registration(&user, found.login.as_str(), existing)
        .map_err(PasskeyDenial::Registration)?;
    let purpose = CeremonyPurpose::Registration { principal_id: user };
    let ceremony = keep_ceremony(services, purpose, state).await?;
    Ok(CeremonyStart {
        ceremony,
        options: options_json(&options)?,
    })
}

/// Finishes adding a passkey: the answer must be to a registration this user started.
pub async fn add(
    services: &Services,
    session: &SignInSession,
    ceremony_id: &str,
    answer: &str,
    name: &str,
) -> Result<PasskeyCredential, PasskeyError> {
    let name = passkey_name(name).ok_or(PasskeyDenial::NoName)?;
    let user = session.principal_id;
    let refused = |reason| PasskeyError::from(PasskeyDenial::Registration(reason));
    let ceremony = take_ceremony(services, ceremony_id)
        .await?
        .filter(|ceremony| ceremony.purpose == CeremonyPurpose::Registration { principal_id: user })
        .ok_or_else(|| refused(PasskeyRefusal::Ceremony))?;
    let (credential_id, passkey) = relying_party(services)?
        .finish_registration(&ceremony.state, answer)
        .map_err(refused)?;
    let record = PasskeyCredential {
        principal_id: user,
        credential_id,
        name,
        passkey,
        created_at: services.ctx.clock.now(),
        last_used_at: None,
    };
    if !services.ctx.store.passkeys().put_passkey(&record).await? {
        return Err(refused(PasskeyRefusal::Invalid));
    }
    let event = audit::event(&services.ctx, AuditKind::PasskeyAdded);
    audit::record(&services.ctx, event.principal(PrincipalType::User, user)).await;
    let change = FactorChange::PasskeyAdded {
        name: record.name.clone(),
    };
    crate::flows::factor_notice::notify(services, &user, change).await;
    Ok(record)
}

/// The signed-in user's passkeys, oldest first.
pub async fn list(
    services: &Services,
    user: &PrincipalId,
) -> Result<Vec<PasskeyCredential>, StoreError> {
    services.ctx.store.passkeys().list_passkeys(user).await
}

/// Renames one of the user's passkeys; `false` when the user has no such passkey.
pub async fn rename(
    services: &Services,
    user: &PrincipalId,
    credential_id: &str,
    name: &str,
) -> Result<bool, PasskeyError> {
    let name = passkey_name(name).ok_or(PasskeyDenial::NoName)?;
    let store = services.ctx.store.passkeys();
    Ok(store.rename_passkey(user, credential_id, &name).await?)
}

/// Removes one of the user's passkeys (audited); `false` when there was none.
pub async fn remove(
    services: &Services,
    user: &PrincipalId,
    credential_id: &str,
) -> Result<bool, StoreError> {
    let store = services.ctx.store.passkeys();
    let Some(removed) = store.delete_passkey(user, credential_id).await? else {
        return Ok(false);
    };
    let event = audit::event(&services.ctx, AuditKind::PasskeyRemoved);
    audit::record(&services.ctx, event.principal(PrincipalType::User, *user)).await;
    let change = FactorChange::PasskeyRemoved { name: removed.name };
    crate::flows::factor_notice::notify(services, user, change).await;
    Ok(true)
}

/// Starts a sign-in with any discoverable passkey (the button, or the browser's autofill).
pub async fn authentication_options(services: &Services) -> Result<CeremonyStart, PasskeyError> {
    let (options, state) = ceremony_party(services)?
        .start_authentication()
        .map_err(PasskeyDenial::SignIn)?;
    let ceremony = keep_ceremony(services, CeremonyPurpose::Authentication, state).await?;
    Ok(CeremonyStart {
        ceremony,
        options: options_json(&options)?,
    })
}

/// The user an authentication answer proves, after every check: a ceremony of this kind, taken
/// now; the user's own passkey (user handle and credential id); the answer verified against it;
/// a user who may sign in. The passkey's counter and last use are written. Each refusal is
/// audited, with the principal when the passkey was found.
pub async fn authenticate(
    services: &Services,
    ceremony_id: &str,
    answer: &str,
) -> Result<User, PasskeyError> {
    match verified_user(services, ceremony_id, answer).await {
        Ok(user) => Ok(user),
        Err(Refusal::Denied((reason, principal))) => {
            let event = audit::event(&services.ctx, AuditKind::PasskeyRefused { reason });
            let event = match principal {
                Some(user) => event.principal(PrincipalType::User, user),
                None => event,
            };
            audit::record(&services.ctx, event).await;
            Err(PasskeyDenial::SignIn(reason).into())
        }
        Err(Refusal::Server(error)) => Err(error.into()),
    }
}

type Refused = (PasskeyRefusal, Option<PrincipalId>);

impl Denial for Refused {}

async fn verified_user(
    services: &Services,
    ceremony_id: &str,
    answer: &str,
) -> Result<User, Refusal<Refused>> {
    let ceremony = take_ceremony(services, ceremony_id)
        .await?
        .filter(|ceremony| ceremony.purpose == CeremonyPurpose::Authentication)
        .ok_or((PasskeyRefusal::Ceremony, None))?;
    let (user, credential_id, answer) =
        RelyingParty::identify(answer).map_err(|reason| (reason, None))?;
    let store = &services.ctx.store;
    let passkey = store
        .passkeys()
        .get_passkey(&user, &credential_id)
        .await?
        .ok_or((PasskeyRefusal::UnknownCredential, None))?;
    let updated = relying_party(services)?
        .finish_authentication(&ceremony.state, &answer, &passkey.passkey)
        .map_err(|reason| (reason, Some(user)))?;
    let now = services.ctx.clock.now();
    if !store
        .passkeys()
        .record_passkey_use(&user, &credential_id, &updated, now)
        .await?
    {
        // Removed between the read and this write.
        return Err((PasskeyRefusal::UnknownCredential, Some(user)).into());
    }
    let found = store
        .principals()
        .get_user(&user)
        .await?
        .filter(|found| crate::auth::check_user_may_sign_in(services, found).is_ok())
        .ok_or((PasskeyRefusal::UserRefused, Some(user)))?;
    Ok(found)
}

/// What a passkey sign-in proves (RFC 8176): possession of a key, with the user verified on the
/// authenticator, so two factors. `swk`, not `hwk`: without attestation a synced passkey cannot
/// be told from a device-bound one, and `swk` claims the less.
pub const PASSKEY_AMR: &[AuthMethod] = &[AuthMethod::Swk, AuthMethod::Mfa];
