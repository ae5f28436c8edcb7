//! The users' hold on their company's identity providers, behind `tokenctl users
//! set-local-sign-in`, `set-external-id`, `links` and `unlink`; each change audited.

use super::{not_found, principal_changed, AdminError};
use crate::context::Context;
use crate::domain::audit::AuditKind;
use crate::domain::{FederationLink, IdpId, PrincipalId, PrincipalType, User};
use crate::store::ExternalIdUpdate;

/// The longest external id: an upstream subject's bound, since the two are compared.
pub const MAX_EXTERNAL_ID_BYTES: usize = crate::domain::MAX_UPSTREAM_SUBJECT_BYTES;

async fn existing_user(ctx: &Context, id: &PrincipalId) -> Result<User, AdminError> {
    ctx.store
        .principals()
        .get_user(id)
        .await?
        .ok_or_else(|| not_found("user", id))
}

/// `users set-local-sign-in`: a break-glass user signs in with a password even when the
/// company requires its IdPs.
pub async fn set_user_local_sign_in(
    ctx: &Context,
    id: &PrincipalId,
    local_sign_in: bool,
) -> Result<User, AdminError> {
    let mut user = existing_user(ctx, id).await?;
    user.local_sign_in = local_sign_in;
    ctx.store.principals().put_user(&user).await?;
    let kind = AuditKind::UserLocalSignInSet { local_sign_in };
    principal_changed(ctx, kind, PrincipalType::User, *id).await;
    Ok(user)
}

/// `users set-external-id`: the id the company's directory knows the user by, unique within
/// the company (`None` clears it). Kept exactly as given: an upstream subject is compared with
/// it byte for byte.
pub async fn set_user_external_id(
    ctx: &Context,
    id: &PrincipalId,
    external_id: Option<&str>,
) -> Result<User, AdminError> {
    if let Some(value) = external_id {
        if value.is_empty()
            || value.len() > MAX_EXTERNAL_ID_BYTES
            || value.chars().any(char::is_control)
        {
            return Err(AdminError::Invalid(format!(
                "an external id is 1 to {MAX_EXTERNAL_ID_BYTES} bytes of printable text \
                 (--clear removes it)"
            )));
        }
    }
    match ctx
        .store
        .principals()
        .set_user_external_id(id, external_id)
        .await?
    {
        ExternalIdUpdate::Updated => {}
        ExternalIdUpdate::Taken => {
            return Err(AdminError::Conflict(
                "another user of the company already has that external id".into(),
            ))
        }
        ExternalIdUpdate::UnknownUser => return Err(not_found("user", id)),
        ExternalIdUpdate::NoCompany => {
            return Err(AdminError::Invalid(format!(
                "user {id} belongs to no company: an external id is unique within one"
            )))
        }
    }
    let kind = AuditKind::UserExternalIdSet {
        cleared: external_id.is_none(),
    };
    principal_changed(ctx, kind, PrincipalType::User, *id).await;
    existing_user(ctx, id).await
}

/// `users links`: the user's links to upstream subjects, oldest first.
pub async fn list_user_links(
    ctx: &Context,
    id: &PrincipalId,
) -> Result<(User, Vec<FederationLink>), AdminError> {
    let user = existing_user(ctx, id).await?;
    let links = ctx.store.federation().list_user_links(id).await?;
    Ok((user, links))
}

/// `users unlink`: every link of the user to that IdP (one, unless the IdP reported several
/// subjects for the user); the next sign-in there links afresh.
pub async fn unlink_user(
    ctx: &Context,
    id: &PrincipalId,
    idp: &IdpId,
) -> Result<Vec<FederationLink>, AdminError> {
    existing_user(ctx, id).await?;
    let federation = ctx.store.federation();
    let mut removed = Vec::new();
    for link in federation.list_user_links(id).await? {
        if &link.idp_id != idp {
            continue;
        }
        if let Some(link) = federation
            .delete_federation_link(&link.idp_id, &link.subject)
            .await?
        {
            removed.push(link);
        }
    }
    if removed.is_empty() {
        return Err(AdminError::NotFound {
            what: "link",
            id: format!("of user {id} to identity provider {idp}"),
        });
    }
    let kind = AuditKind::FederationUnlinked { idp_id: *idp };
    principal_changed(ctx, kind, PrincipalType::User, *id).await;
    Ok(removed)
}
