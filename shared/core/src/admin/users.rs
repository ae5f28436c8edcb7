//! An administrator's hold on one user's sign-in (docs/decisions.md, "Second factors and status
//! from the command line"): the second factors the user holds, listed and removed one at a time
//! (the recovery path of a user who lost one, and the end of one someone else added), and the
//! user's status, whose change away from active also takes every session and token the user
//! holds.

use std::fmt;
use std::sync::Mutex;

use crate::audit;
use crate::clock::UnixTime;
use crate::context::Context;
use crate::domain::audit::{AuditKind, RemovedFactor, RevocationReason, SessionEndReason};
use crate::domain::{PasskeyCredential, PrincipalId, PrincipalType, User, UserStatus};
use crate::errors::ServerError;
use crate::flows::{factor_notice, sessions};
use crate::mail::FactorChange;
use crate::services::Services;
use crate::store::StoreError;

use super::{not_found, AdminError};

/// The factor id of a user's authenticator app. It never names a passkey: a credential id is
/// unpadded base64url, whose length is never one more than a multiple of four, and this is 17
/// characters long (a credential id is at least 16 bytes, 22 characters, anyway).
pub const AUTHENTICATOR_APP: &str = "authenticator-app";

/// The longest credential id WebAuthn allows (1023 bytes) in unpadded base64url.
const CREDENTIAL_ID_MAX_CHARS: usize = 1364;

/// One of a user's second factors as `users factors list` prints it and `users factors remove`
/// takes it: a passkey by its credential id, or the authenticator app (with its recovery
/// codes, which exist only with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactorId {
    Passkey(String),
    AuthenticatorApp,
}

impl FactorId {
    /// [`AUTHENTICATOR_APP`], or anything else spelt as a credential id is stored (base64url,
    /// no padding); `None` for text that can name no factor.
    pub fn parse(text: &str) -> Option<Self> {
        if text == AUTHENTICATOR_APP {
            return Some(Self::AuthenticatorApp);
        }
        let credential_id = !text.is_empty()
            && text.len() <= CREDENTIAL_ID_MAX_CHARS
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        credential_id.then(|| Self::Passkey(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Passkey(credential_id) => credential_id,
            Self::AuthenticatorApp => AUTHENTICATOR_APP,
        }
    }
}

impl fmt::Display for FactorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The user's authenticator app, without its secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthenticatorApp {
    pub enrolled_at: UnixTime,
    pub recovery_codes_left: usize,
}

/// Every second factor of one user.
#[derive(Debug, Clone)]
pub struct UserFactors {
    pub user: User,
    /// Oldest first.
    pub passkeys: Vec<PasskeyCredential>,
    pub authenticator_app: Option<AuthenticatorApp>,
}

async fn existing_user(ctx: &Context, id: &PrincipalId) -> Result<User, AdminError> {
    ctx.store
        .principals()
        .get_user(id)
        .await?
        .ok_or_else(|| not_found("user", id))
}

/// `users factors list`.
pub async fn list_factors(ctx: &Context, id: &PrincipalId) -> Result<UserFactors, AdminError> {
    let user = existing_user(ctx, id).await?;
    let passkeys = ctx.store.passkeys().list_passkeys(id).await?;
    let authenticator_app = ctx
        .store
        .second_factors()
        .get_totp_factor(id)
        .await?
        .map(|factor| AuthenticatorApp {
            enrolled_at: factor.enrolled_at,
            recovery_codes_left: factor.recovery_codes.len(),
        });
    Ok(UserFactors {
        user,
        passkeys,
        authenticator_app,
    })
}

/// `users factors remove`: the factor is gone at once (a passkey sign-in or a code in progress
/// finds nothing), audited as the administrator's, and the user is mailed as for a removal of
/// their own (when they have an address; a mail that fails undoes nothing). The user's sessions
/// stay: an operator who suspects the factor was used against the user ends them too
/// (`sessions revoke`).
pub async fn remove_factor(
    services: &Services,
    id: &PrincipalId,
    factor: &FactorId,
) -> Result<User, AdminError> {
    let ctx = &services.ctx;
    let user = existing_user(ctx, id).await?;
    let removed = match factor {
        FactorId::Passkey(credential_id) => {
            let deleted = ctx
                .store
                .passkeys()
                .delete_passkey(id, credential_id)
                .await?;
            deleted.map(|passkey| {
                let change = FactorChange::PasskeyRemoved { name: passkey.name };
                (RemovedFactor::Passkey, change)
            })
        }
        FactorId::AuthenticatorApp => {
            let deleted = ctx.store.second_factors().delete_totp_factor(id).await?;
            let change = FactorChange::AuthenticatorAppRemoved;
            deleted.then_some((RemovedFactor::AuthenticatorApp, change))
        }
    };
    let Some((removed, change)) = removed else {
        let (what, id) = match factor {
            FactorId::Passkey(credential_id) => {
                ("passkey", format!("{credential_id} of user {id}"))
            }
            FactorId::AuthenticatorApp => ("authenticator app", format!("of user {id}")),
        };
        return Err(AdminError::NotFound { what, id });
    };
    let kind = AuditKind::SecondFactorRemovedByAdministrator { factor: removed };
    let event = audit::event(ctx, kind).principal(PrincipalType::User, *id);
    audit::record(ctx, event).await;
    factor_notice::notify(services, id, change).await;
    Ok(user)
}

/// What `users set-status` did.
#[derive(Debug, Clone)]
pub struct StatusSet {
    pub user: User,
    /// Sign-in sessions ended (each client told by back-channel logout).
    pub sessions_ended: usize,
    /// Token families revoked, their refresh and access tokens with them.
    pub families_revoked: usize,
}

/// `users set-status`. Any status but active takes the user's access at once: the status is
/// written first (so no new sign-in or refresh succeeds once running instances read it), then
/// every live session ends and every live family is revoked. Active again revives nothing.
/// Setting a status the user already has does it all again, so a run that failed halfway is
/// finished by running it again.
pub async fn set_user_status(
    services: &Services,
    id: &PrincipalId,
    status: UserStatus,
) -> Result<StatusSet, AdminError> {
    let ctx = &services.ctx;
    let mut user = existing_user(ctx, id).await?;
    user.status = status;
    if status != UserStatus::Active {
        // What was issued until now stays dead when the user is active again, as after a
        // provisioning client's deactivation.
        user.deprovisioned_at = Some(ctx.clock.now());
    }
    ctx.store.principals().put_user(&user).await?;
    let event = audit::event(ctx, AuditKind::UserStatusSet { status });
    audit::record(ctx, event.principal(PrincipalType::User, *id)).await;
    if status == UserStatus::Active {
        return Ok(StatusSet {
            user,
            sessions_ended: 0,
            families_revoked: 0,
        });
    }
    let unfinished = |failed: &'static str| {
        move |source: ServerError| AdminError::Unfinished {
            done: format!("user {id} is now {}", status.as_str()),
            failed,
            source,
        }
    };
    let sessions_ended = sessions::end_all(services, id, SessionEndReason::Administrator)
        .await
        .map_err(unfinished("not every session was ended"))?;
    let families_revoked = revoke_every_family(ctx, id)
        .await
        .map_err(|error| unfinished("not every token was revoked")(error.into()))?;
    Ok(StatusSet {
        user,
        sessions_ended,
        families_revoked,
    })
}

/// Revokes every live family of the user, client by client, each with its `family.revoked`
/// event in the same write.
pub(crate) async fn revoke_every_family(
    ctx: &Context,
    user: &PrincipalId,
) -> Result<usize, StoreError> {
    let now = ctx.clock.now();
    let revocation = ctx.store.revocation();
    let mut revoked = 0;
    for connection in revocation.user_connections(user, now).await? {
        let client = connection.client_id;
        let made = Mutex::new(Vec::new());
        let make = |family| {
            let kind = AuditKind::FamilyRevoked {
                reason: RevocationReason::Admin,
            };
            let event = audit::event(ctx, kind)
                .client(client)
                .principal(PrincipalType::User, *user)
                .family(family);
            made.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(event.clone());
            event
        };
        let families = revocation
            .revoke_connection(user, &client, now, Some(&make))
            .await?;
        let made = made
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let written: Vec<_> = made
            .into_iter()
            .filter(|event| event.family_id.is_some_and(|id| families.contains(&id)))
            .collect();
        audit::logged(&written);
        revoked += families.len();
    }
    Ok(revoked)
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;

    use super::*;

    #[test]
    fn the_app_and_credential_ids_parse_apart_and_print_as_parsed() {
        assert_eq!(
            FactorId::parse("authenticator-app"),
            Some(FactorId::AuthenticatorApp)
        );
        for id in ["Ab-_09", "-starts-with-a-hyphen", "authenticator-apps"] {
            let parsed = FactorId::parse(id).unwrap();
            assert_eq!(parsed, FactorId::Passkey(id.to_owned()));
            assert_eq!(parsed.to_string(), id);
        }
        assert_eq!(FactorId::AuthenticatorApp.to_string(), AUTHENTICATOR_APP);
        for refused in ["", "a=", "a b", "a.b", "a/b"] {
            assert_eq!(FactorId::parse(refused), None, "{refused:?}");
        }
        assert!(FactorId::parse(&"A".repeat(CREDENTIAL_ID_MAX_CHARS)).is_some());
        assert_eq!(
            FactorId::parse(&"A".repeat(CREDENTIAL_ID_MAX_CHARS + 1)),
            None
        );
    }

    /// Why the literal can never be a stored credential id.
    #[test]
    fn no_encoded_credential_is_spelt_like_the_app() {
        assert_eq!(AUTHENTICATOR_APP.len() % 4, 1);
        for bytes in 16..=64 {
            let encoded = URL_SAFE_NO_PAD.encode(vec![0; bytes]);
            assert_ne!(encoded.len() % 4, 1);
        }
    }
}
