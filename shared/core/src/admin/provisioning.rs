//! A company's provisioning tokens (`tokenctl companies scim-tokens`) and its admin group
//! (`companies set-admin-group`).

use crate::audit;
use crate::context::Context;
use crate::domain::audit::AuditKind;
use crate::domain::{PrincipalId, PrincipalType, ProvisioningToken};
use crate::random::RandomExt;
use crate::secrets::TokenHash;
use crate::services::Services;

use super::{not_found, AdminError};

/// A new token: `token` is shown once and never again.
#[derive(Debug, Clone)]
pub struct CreatedProvisioningToken {
    pub token: String,
    pub record: ProvisioningToken,
}

pub async fn create_provisioning_token(
    ctx: &Context,
    company: &PrincipalId,
    expires_in_days: Option<u32>,
) -> Result<CreatedProvisioningToken, AdminError> {
    ctx.store
        .principals()
        .get_company(company)
        .await?
        .ok_or_else(|| not_found("company", company))?;
    let token = format!("scim_{}", ctx.random.opaque_token());
    let now = ctx.clock.now();
    let record = ProvisioningToken {
        id: ctx.random.uuid(),
        company_id: *company,
        token_hash: TokenHash::of(&token),
        created_at: now,
        expires_at: expires_in_days.map(|days| now + i64::from(days) * 86_400),
    };
    ctx.store
        .directory()
        .insert_provisioning_token(&record)
        .await?;
    let kind = AuditKind::ProvisioningTokenCreated {
        token_id: record.id,
    };
    let event = audit::event(ctx, kind).principal(PrincipalType::Company, *company);
    audit::record(ctx, event).await;
    Ok(CreatedProvisioningToken { token, record })
}

pub async fn list_provisioning_tokens(
    ctx: &Context,
    company: &PrincipalId,
) -> Result<Vec<ProvisioningToken>, AdminError> {
    Ok(ctx
        .store
        .directory()
        .list_provisioning_tokens(company)
        .await?)
}

pub async fn revoke_provisioning_token(
    ctx: &Context,
    company: &PrincipalId,
    id: &uuid::Uuid,
) -> Result<(), AdminError> {
    if !ctx
        .store
        .directory()
        .delete_provisioning_token(company, id)
        .await?
    {
        return Err(not_found("provisioning token", id));
    }
    let kind = AuditKind::ProvisioningTokenRevoked { token_id: *id };
    let event = audit::event(ctx, kind).principal(PrincipalType::Company, *company);
    audit::record(ctx, event).await;
    Ok(())
}

/// Names the directory group whose members administer the company; the members of that group
/// (if it exists) become administrators now, and those of the group it replaces who are not in
/// it stop being administrators.
pub async fn set_admin_group(
    services: &Services,
    company_id: &PrincipalId,
    name: Option<&str>,
) -> Result<(), AdminError> {
    let ctx = &services.ctx;
    let principals = ctx.store.principals();
    let mut company = principals
        .get_company(company_id)
        .await?
        .ok_or_else(|| not_found("company", company_id))?;
    let groups = ctx.store.directory().company_groups(company_id).await?;
    let members_of = |name: Option<&str>| -> Vec<PrincipalId> {
        name.and_then(|name| groups.iter().find(|group| group.is_named(name)))
            .map(|group| group.members.clone())
            .unwrap_or_default()
    };
    let before = members_of(company.admin_group.as_deref());
    let after = members_of(name);
    company.admin_group = name.map(str::to_owned);
    principals.put_company(&company).await?;
    for id in &after {
        if !set_administrator(services, id, true).await? {
            return Err(AdminError::Conflict(format!(
                "user {id} changed meanwhile; run again"
            )));
        }
    }
    for id in before.iter().filter(|id| !after.contains(id)) {
        if !set_administrator(services, id, false).await? {
            return Err(AdminError::Conflict(format!(
                "user {id} changed meanwhile; run again"
            )));
        }
    }
    let event = audit::event(ctx, AuditKind::CompanyAdminGroupSet)
        .principal(PrincipalType::Company, *company_id);
    audit::record(ctx, event).await;
    Ok(())
}

/// Makes the user an administrator of its company or not, conditional on what was read (tried
/// three times); `false` when it kept changing meanwhile. A user gone is nothing to change.
pub async fn set_administrator(
    services: &Services,
    id: &PrincipalId,
    admin: bool,
) -> Result<bool, crate::store::StoreError> {
    let store = &services.ctx.store;
    for _ in 0..3 {
        let Some(user) = store.principals().get_user(id).await? else {
            return Ok(true);
        };
        if user.is_admin == admin {
            return Ok(true);
        }
        let mut next = user.clone();
        next.is_admin = admin;
        next.revision += 1;
        if store.directory().replace_user(&user, &next).await? == crate::store::Replaced::Replaced {
            return Ok(true);
        }
    }
    Ok(false)
}
