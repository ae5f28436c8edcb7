//! `/Users`: create, read, query, replace, patch, delete. The principal's own fields (login,
//! address, external id, status) are written with the directory's profile in one conditional
//! write; deprovisioning follows a write that leaves the user inactive, every time, so that a
//! retried request finishes what a failed one began.

use serde_json::{Map, Value};

use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::scim::normalize::normalize;
use crate::domain::scim::patch::{apply, PatchRequest};
use crate::domain::scim::schema::USER_RESOURCE;
use crate::domain::scim::{filter::IndexedAttribute, ScimError, ScimType};
use crate::domain::{
    ChannelHandle, DirectoryProfile, Login, PrincipalId, PrincipalType, User, UserStatus,
};
use crate::random::RandomExt;
use crate::secrets::PasswordHash;
use crate::services::Services;
use crate::store::{Inserted, Replaced};

use super::listing::{json_body, ListQuery, Projection};
use super::render::{self, OWN_FIELDS};
use super::{
    admitted, deprovision, not_found, precondition_failed, Failure, Provisioner, ScimReply,
    ScimResult,
};

fn invalid(detail: &str) -> Failure {
    Failure::Scim(ScimError::bad_request(ScimType::InvalidValue, detail))
}

fn uniqueness(detail: String) -> Failure {
    Failure::Scim(ScimError::new(409, Some(ScimType::Uniqueness), detail))
}

/// The company's user `id`, or 404 (another company's user is not found either).
pub(super) async fn company_user(
    services: &Services,
    p: &Provisioner,
    id: &str,
) -> ScimResult<User> {
    let found = match PrincipalId::parse(id) {
        Ok(parsed) => services.ctx.store.principals().get_user(&parsed).await?,
        Err(_) => None,
    };
    found
        .filter(|user| user.company_id == Some(p.company_id()))
        .ok_or_else(|| not_found("User", id))
}

/// The user `resource` (normalized) describes: `current`'s fields kept where SCIM has none.
fn user_from(
    services: &Services,
    p: &Provisioner,
    current: Option<&User>,
    resource: &Value,
) -> ScimResult<User> {
    let ctx = &services.ctx;
    let now = ctx.clock.now();
    let user_name = resource["userName"]
        .as_str()
        .ok_or_else(|| invalid("userName is required"))?;
    let login = Login::parse(user_name).map_err(|_| invalid("userName is not a valid login"))?;
    let external_id = match &resource["externalId"] {
        Value::String(value) if !value.is_empty() => Some(value.clone()),
        Value::Null | Value::String(_) => None,
        _ => return Err(invalid("externalId must be a string")),
    };
    // Unassigned (never given, or removed) leaves the status as it is.
    let active = resource["active"].as_bool();
    let email = primary_email(resource)?;
    let mut attributes = Map::new();
    if let Value::Object(all) = resource {
        for (name, value) in all {
            if !OWN_FIELDS.contains(&name.as_str()) {
                attributes.insert(name.clone(), value.clone());
            }
        }
    }
    // Kept for its spelling: the login is folded to lower case.
    attributes.insert("userName".into(), Value::from(user_name));
    // Kept as assigned, so that an unassigned `active` is shown unassigned.
    if let Some(active) = active {
        attributes.insert("active".into(), Value::Bool(active));
    }
    let password = match &resource["password"] {
        Value::String(password) if !password.is_empty() => Some(password.as_str()),
        Value::Null => None,
        _ => return Err(invalid("password must be a non-empty string")),
    };
    let password_hash = match (password, current) {
        (Some(password), _) => PasswordHash::new(password, ctx.random.as_ref()),
        (None, Some(current)) => current.password_hash.clone(),
        // A hash of a password thrown away, which nobody knows: the user signs in through the
        // company's IdP until one is set. The decoy is that, precomputed: a Bulk of 100 users
        // without passwords spends no Argon2 on them.
        (None, None) => PasswordHash::decoy().clone(),
    };
    let status = match (active, current.map(|c| c.status)) {
        (Some(true), _) | (None, None) => UserStatus::Active,
        (None, Some(status)) => status,
        (Some(false), Some(status)) if status != UserStatus::Active => status,
        (Some(false), _) => UserStatus::Disabled,
    };
    let created_at = current
        .and_then(|c| c.directory.as_deref().map(|d| d.created_at))
        .or(current.map(|c| c.created_at))
        .unwrap_or(now);
    Ok(User {
        id: current.map_or_else(|| PrincipalId::new(ctx.random.uuid()), |c| c.id),
        login,
        password_hash,
        company_id: Some(p.company_id()),
        is_admin: current.is_some_and(|c| c.is_admin),
        geolocation: current
            .map_or_else(|| p.company.geolocation.clone(), |c| c.geolocation.clone()),
        status,
        created_at: current.map_or(now, |c| c.created_at),
        email,
        local_sign_in: current.is_some_and(|c| c.local_sign_in),
        external_id,
        directory: Some(Box::new(DirectoryProfile {
            attributes: Value::Object(attributes),
            created_at,
            last_modified: now,
        })),
        revision: current.map_or(0, |c| c.revision + 1),
        // Taking access away cancels what was issued until now; giving it back keeps that.
        deprovisioned_at: match (status, current) {
            (UserStatus::Active, current) => current.and_then(|c| c.deprovisioned_at),
            (_, Some(c)) if c.status == UserStatus::Active => Some(now),
            (_, current) => current.and_then(|c| c.deprovisioned_at).or(Some(now)),
        },
    })
}

/// The address the user signs in with: the primary email, else the first.
fn primary_email(resource: &Value) -> ScimResult<Option<String>> {
    let Some(emails) = resource["emails"].as_array() else {
        return Ok(None);
    };
    let chosen = emails
        .iter()
        .find(|email| email["primary"].as_bool() == Some(true))
        .or_else(|| emails.first());
    let Some(value) = chosen.and_then(|email| email["value"].as_str()) else {
        return Ok(None);
    };
    let address = ChannelHandle::parse(value)
        .map_err(|_| invalid("emails.value is not an e-mail address"))?;
    Ok(Some(address.as_str().to_owned()))
}

async fn record(services: &Services, p: &Provisioner, kind: AuditKind, user: PrincipalId) {
    let mut event = audit::event(&services.ctx, kind).principal(PrincipalType::User, user);
    if let Some(client) = p.client {
        event = event.client(client);
    }
    audit::record(&services.ctx, event).await;
}

/// Which of the user's unique values another user holds, for the 409's detail: a user of the
/// same company is named (a retried create finds the user it made), another company's not.
async fn taken_detail(services: &Services, p: &Provisioner, user: &User) -> ScimResult<String> {
    let principals = services.ctx.store.principals();
    if let Some(holder) = principals.get_user_by_login(&user.login).await? {
        if holder.id != user.id {
            return Ok(if holder.company_id == Some(p.company_id()) {
                format!("userName is already taken by User {}", holder.id)
            } else {
                "userName is already taken".to_owned()
            });
        }
    }
    if let Some(external_id) = &user.external_id {
        if let Some(holder) = principals
            .get_user_by_external_id(&p.company_id(), external_id)
            .await?
        {
            if holder.id != user.id {
                return Ok(format!("externalId is already taken by User {}", holder.id));
            }
        }
    }
    Ok("an email of the user is already another user's".to_owned())
}

pub async fn create_user(
    services: &Services,
    p: &Provisioner,
    body: &[u8],
) -> ScimResult<ScimReply> {
    let resource = normalize(&json_body(body)?, &USER_RESOURCE)?;
    let user = user_from(services, p, None, &resource)?;
    match services.ctx.store.principals().insert_user(&user).await? {
        Inserted::Inserted => {}
        Inserted::AlreadyExists => return Err(uniqueness(taken_detail(services, p, &user).await?)),
    }
    let kind = AuditKind::UserProvisioned {
        provisioning_token: p.token,
    };
    record(services, p, kind, user.id).await;
    Ok(ScimReply::resource(201, render::user(&user, &p.base)))
}

pub async fn get_user(
    services: &Services,
    p: &Provisioner,
    id: &str,
    attributes: Option<&str>,
    excluded: Option<&str>,
) -> ScimResult<ScimReply> {
    let projection = Projection::parse(attributes, excluded, &USER_RESOURCE)?;
    let user = company_user(services, p, id).await?;
    let resource = render::user(&user, &p.base);
    let mut reply = ScimReply::resource(200, resource.clone());
    reply.body = Some(projection.apply(&resource));
    Ok(reply)
}

pub async fn list_users(
    services: &Services,
    p: &Provisioner,
    query: &ListQuery,
) -> ScimResult<ScimReply> {
    let checked = query.check(&USER_RESOURCE)?;
    let store = &services.ctx.store;
    let company = p.company_id();
    let indexed = checked.filter.as_ref().and_then(|f| f.exact_match());
    let (page, total) = match (indexed, &checked.filter) {
        // An equality on an indexed attribute is one lookup, whatever the company's size.
        (Some((attribute, value)), _) if attribute != IndexedAttribute::DisplayName => {
            let found = match attribute {
                IndexedAttribute::UserName => match Login::parse(value) {
                    Ok(login) => store.principals().get_user_by_login(&login).await?,
                    Err(_) => None,
                },
                IndexedAttribute::ExternalId => {
                    store
                        .principals()
                        .get_user_by_external_id(&company, value)
                        .await?
                }
                IndexedAttribute::Email => match ChannelHandle::parse(value) {
                    Ok(address) => store.principals().get_user_by_email(&address).await?,
                    Err(_) => None,
                },
                IndexedAttribute::Id | IndexedAttribute::DisplayName => {
                    match PrincipalId::parse(value) {
                        Ok(id) => store.principals().get_user(&id).await?,
                        Err(_) => None,
                    }
                }
            };
            let matching: Vec<Value> = found
                .filter(|user| user.company_id == Some(company))
                .map(|user| render::user(&user, &p.base))
                .into_iter()
                .filter(|resource| {
                    checked
                        .filter
                        .as_ref()
                        .is_none_or(|f| f.matches(resource, &USER_RESOURCE))
                })
                .collect();
            let total = matching.len();
            (
                matching
                    .into_iter()
                    .skip(checked.skip)
                    .take(checked.count)
                    .collect(),
                total,
            )
        }
        (_, None) => {
            let listed = store
                .directory()
                .company_users(&company, checked.skip, checked.count)
                .await?;
            let page = listed
                .users
                .iter()
                .map(|u| render::user(u, &p.base))
                .collect();
            (page, listed.total)
        }
        // Any other filter reads the company's users, page by page, never the table.
        (_, Some(filter)) => {
            let mut matching = Vec::new();
            let mut total = 0;
            let mut after = None;
            loop {
                let users = store
                    .directory()
                    .company_users_after(&company, after.as_ref(), 200)
                    .await?;
                for user in &users {
                    let resource = render::user(user, &p.base);
                    if filter.matches(&resource, &USER_RESOURCE) {
                        if total >= checked.skip && matching.len() < checked.count {
                            matching.push(resource);
                        }
                        total += 1;
                    }
                }
                match users.last() {
                    Some(last) if users.len() == 200 => after = Some(last.id),
                    _ => break,
                }
            }
            (matching, total)
        }
    };
    Ok(ScimReply::message(200, checked.response(&page, total)))
}

/// Writes `next` over `current` and records it; then, when the user is not active, ends what it
/// holds (again, when it already was inactive: a retry finishes a failed sweep).
async fn write_user(
    services: &Services,
    p: &Provisioner,
    current: &User,
    next: User,
) -> ScimResult<ScimReply> {
    match services
        .ctx
        .store
        .directory()
        .replace_user(current, &next)
        .await?
    {
        Replaced::Replaced => {}
        Replaced::Changed => return Err(precondition_failed()),
        Replaced::Taken => return Err(uniqueness(taken_detail(services, p, &next).await?)),
    }
    let kind = AuditKind::UserUpdated {
        provisioning_token: p.token,
    };
    record(services, p, kind, next.id).await;
    if next.status != UserStatus::Active {
        let swept = deprovision::sweep(services, &next.id).await?;
        if current.status == UserStatus::Active || swept.anything() {
            let kind = swept.event(p.token, false);
            record(services, p, kind, next.id).await;
        }
    }
    Ok(ScimReply::resource(200, render::user(&next, &p.base)))
}

pub async fn replace_user(
    services: &Services,
    p: &Provisioner,
    id: &str,
    body: &[u8],
    if_match: Option<&str>,
) -> ScimResult<ScimReply> {
    let current = company_user(services, p, id).await?;
    admitted(render::user(&current, &p.base), if_match)?;
    let body = json_body(body)?;
    if body["id"]
        .as_str()
        .is_some_and(|given| given != current.id.to_string())
    {
        return Err(Failure::Scim(ScimError::bad_request(
            ScimType::Mutability,
            "id cannot change",
        )));
    }
    let resource = normalize(&body, &USER_RESOURCE)?;
    let next = user_from(services, p, Some(&current), &resource)?;
    write_user(services, p, &current, next).await
}

pub async fn patch_user(
    services: &Services,
    p: &Provisioner,
    id: &str,
    body: &[u8],
    if_match: Option<&str>,
) -> ScimResult<ScimReply> {
    let request = PatchRequest::from_json(body)?;
    let current = company_user(services, p, id).await?;
    let mut resource = admitted(render::user(&current, &p.base), if_match)?;
    apply(&mut resource, &request.operations, &USER_RESOURCE)?;
    let resource = normalize(&resource, &USER_RESOURCE)?;
    let next = user_from(services, p, Some(&current), &resource)?;
    write_user(services, p, &current, next).await
}

pub async fn delete_user(
    services: &Services,
    p: &Provisioner,
    id: &str,
    if_match: Option<&str>,
) -> ScimResult<ScimReply> {
    let mut current = company_user(services, p, id).await?;
    admitted(render::user(&current, &p.base), if_match)?;
    let store = &services.ctx.store;
    // Disabled first, so that nothing the sweep misses can be used; the records go last, so
    // that a retry after a failure midway finds the user and finishes.
    if current.status == UserStatus::Active {
        let mut disabled = current.clone();
        disabled.status = UserStatus::Disabled;
        disabled.deprovisioned_at = Some(services.ctx.clock.now());
        disabled.revision += 1;
        match store.directory().replace_user(&current, &disabled).await? {
            Replaced::Replaced => current = disabled,
            Replaced::Changed | Replaced::Taken => return Err(precondition_failed()),
        }
    }
    let swept = deprovision::sweep(services, &current.id).await?;
    deprovision::remove_credentials(services, &current).await?;
    super::groups::remove_member(services, p, &current.id).await?;
    match store.directory().delete_user(&current).await? {
        Replaced::Replaced => {}
        Replaced::Changed | Replaced::Taken => return Err(precondition_failed()),
    }
    record(services, p, swept.event(p.token, true), current.id).await;
    Ok(ScimReply::no_content())
}
