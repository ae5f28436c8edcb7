//! What deprovisioning ends: every sign-in session (each client told by back-channel logout)
//! and every token family, with its refresh and access tokens; for a deleted user also its
//! links, passkeys and second factors. Each step is idempotent, so a retried request that
//! failed midway finishes it.

use crate::admin::revoke_every_family;
use crate::domain::audit::{AuditKind, SessionEndReason};
use crate::domain::{PrincipalId, User};
use crate::flows::sessions;
use crate::services::Services;

use super::ScimResult;

/// What one sweep ended.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Swept {
    sessions_ended: usize,
    families_revoked: usize,
}

impl Swept {
    pub fn anything(self) -> bool {
        self.sessions_ended + self.families_revoked > 0
    }

    pub fn event(self, provisioning_token: Option<uuid::Uuid>, deleted: bool) -> AuditKind {
        AuditKind::UserDeprovisioned {
            provisioning_token,
            deleted,
            sessions_ended: self.sessions_ended as u64,
            families_revoked: self.families_revoked as u64,
        }
    }
}

/// Ends the user's sessions and revokes its families. Open authorization codes, device codes
/// and one-time passwords need no write: redeeming each reads the user's status first.
pub(super) async fn sweep(services: &Services, user: &PrincipalId) -> ScimResult<Swept> {
    let sessions_ended = sessions::end_all(services, user, SessionEndReason::Deprovisioned).await?;
    let families_revoked = revoke_every_family(&services.ctx, user).await?;
    Ok(Swept {
        sessions_ended,
        families_revoked,
    })
}

/// Removes what a deleted user signed in with besides its password: its links to the
/// company's identity providers, its passkeys, its authenticator app.
pub(super) async fn remove_credentials(services: &Services, user: &User) -> ScimResult<()> {
    let store = &services.ctx.store;
    for link in store.federation().list_user_links(&user.id).await? {
        store
            .federation()
            .delete_federation_link(&link.idp_id, &link.subject)
            .await?;
    }
    for passkey in store.passkeys().list_passkeys(&user.id).await? {
        store
            .passkeys()
            .delete_passkey(&user.id, &passkey.credential_id)
            .await?;
    }
    store.second_factors().delete_totp_factor(&user.id).await?;
    Ok(())
}
