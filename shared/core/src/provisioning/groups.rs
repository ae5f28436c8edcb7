//! `/Groups`: a company's groups of its own users. The group `companies set-admin-group` names
//! makes its members the company's administrators: a change of its members changes theirs.

use serde_json::Value;

use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::scim::normalize::normalize;
use crate::domain::scim::patch::{apply, PatchRequest};
use crate::domain::scim::schema::GROUP_RESOURCE;
use crate::domain::scim::{ScimError, ScimType};
use crate::domain::{DirectoryGroup, PrincipalId, PrincipalType, MAX_GROUP_MEMBERS};
use crate::random::RandomExt;
use crate::services::Services;
use crate::store::Replaced;

use super::listing::{json_body, ListQuery, Projection};
use super::render;
use super::{
    admitted, not_found, precondition_failed, Failure, Provisioner, ScimReply, ScimResult,
};

fn invalid(detail: &str) -> Failure {
    Failure::Scim(ScimError::bad_request(ScimType::InvalidValue, detail))
}

async fn company_group(
    services: &Services,
    p: &Provisioner,
    id: &str,
) -> ScimResult<DirectoryGroup> {
    let Ok(parsed) = uuid::Uuid::parse_str(id) else {
        return Err(not_found("Group", id));
    };
    services
        .ctx
        .store
        .directory()
        .get_group(&p.company_id(), &parsed)
        .await?
        .ok_or_else(|| not_found("Group", id))
}

/// The group `resource` (normalized) describes, its members checked to be the company's users.
async fn group_from(
    services: &Services,
    p: &Provisioner,
    current: Option<&DirectoryGroup>,
    resource: &Value,
) -> ScimResult<DirectoryGroup> {
    let now = services.ctx.clock.now();
    let display_name = resource["displayName"]
        .as_str()
        .filter(|name| !name.trim().is_empty())
        .ok_or_else(|| invalid("displayName is required"))?;
    let mut members: Vec<PrincipalId> = Vec::new();
    for member in resource["members"].as_array().into_iter().flatten() {
        let id = member["value"]
            .as_str()
            .and_then(|value| PrincipalId::parse(value).ok())
            .ok_or_else(|| invalid("members.value must be the id of a User"))?;
        if !members.contains(&id) {
            members.push(id);
        }
    }
    if members.len() > MAX_GROUP_MEMBERS {
        return Err(invalid("a group holds at most 5000 members"));
    }
    let principals = services.ctx.store.principals();
    for id in &members {
        let known = current.is_some_and(|group| group.members.contains(id));
        if !known {
            let user = principals.get_user(id).await?;
            if user.is_none_or(|user| user.company_id != Some(p.company_id())) {
                return Err(invalid(
                    "members.value must be the id of one of the company's Users",
                ));
            }
        }
    }
    Ok(DirectoryGroup {
        id: current.map_or_else(|| services.ctx.random.uuid(), |group| group.id),
        company_id: p.company_id(),
        display_name: display_name.to_owned(),
        external_id: resource["externalId"].as_str().map(str::to_owned),
        members,
        created_at: current.map_or(now, |group| group.created_at),
        last_modified: now,
        revision: current.map_or(0, |group| group.revision + 1),
    })
}

async fn record(services: &Services, p: &Provisioner, group: &DirectoryGroup, deleted: bool) {
    let kind = AuditKind::GroupUpdated {
        group_id: group.id,
        provisioning_token: p.token,
        deleted,
    };
    let mut event =
        audit::event(&services.ctx, kind).principal(PrincipalType::Company, p.company_id());
    if let Some(client) = p.client {
        event = event.client(client);
    }
    audit::record(&services.ctx, event).await;
}

/// When either is the company's admin group: its members who joined are administrators now,
/// those who left no longer.
async fn sync_administrators(
    services: &Services,
    p: &Provisioner,
    before: Option<&DirectoryGroup>,
    after: Option<&DirectoryGroup>,
) -> ScimResult<()> {
    let Some(admin_group) = p.company.admin_group.as_deref() else {
        return Ok(());
    };
    let members = |group: Option<&DirectoryGroup>| -> Vec<PrincipalId> {
        group
            .filter(|group| group.is_named(admin_group))
            .map(|group| group.members.clone())
            .unwrap_or_default()
    };
    let (was, is) = (members(before), members(after));
    let changes = is
        .iter()
        .filter(|id| !was.contains(id))
        .map(|id| (*id, true))
        .chain(
            was.iter()
                .filter(|id| !is.contains(id))
                .map(|id| (*id, false)),
        );
    for (id, admin) in changes {
        if !crate::admin::set_administrator(services, &id, admin).await? {
            return Err(precondition_failed());
        }
    }
    Ok(())
}

pub async fn create_group(
    services: &Services,
    p: &Provisioner,
    body: &[u8],
) -> ScimResult<ScimReply> {
    let resource = normalize(&json_body(body)?, &GROUP_RESOURCE)?;
    let group = group_from(services, p, None, &resource).await?;
    if !services.ctx.store.directory().insert_group(&group).await? {
        return Err(Failure::Scim(ScimError::new(
            409,
            Some(ScimType::Uniqueness),
            "the group exists",
        )));
    }
    sync_administrators(services, p, None, Some(&group)).await?;
    record(services, p, &group, false).await;
    Ok(ScimReply::resource(201, render::group(&group, &p.base)))
}

pub async fn get_group(
    services: &Services,
    p: &Provisioner,
    id: &str,
    attributes: Option<&str>,
    excluded: Option<&str>,
) -> ScimResult<ScimReply> {
    let projection = Projection::parse(attributes, excluded, &GROUP_RESOURCE)?;
    let group = company_group(services, p, id).await?;
    let resource = render::group(&group, &p.base);
    let mut reply = ScimReply::resource(200, resource.clone());
    reply.body = Some(projection.apply(&resource));
    Ok(reply)
}

pub async fn list_groups(
    services: &Services,
    p: &Provisioner,
    query: &ListQuery,
) -> ScimResult<ScimReply> {
    let checked = query.check(&GROUP_RESOURCE)?;
    let groups = services
        .ctx
        .store
        .directory()
        .company_groups(&p.company_id())
        .await?;
    let matching: Vec<Value> = groups
        .iter()
        .map(|group| render::group(group, &p.base))
        .filter(|resource| {
            checked
                .filter
                .as_ref()
                .is_none_or(|filter| filter.matches(resource, &GROUP_RESOURCE))
        })
        .collect();
    let total = matching.len();
    let page: Vec<Value> = matching
        .into_iter()
        .skip(checked.skip)
        .take(checked.count)
        .collect();
    Ok(ScimReply::message(200, checked.response(&page, total)))
}

async fn write_group(
    services: &Services,
    p: &Provisioner,
    current: &DirectoryGroup,
    next: DirectoryGroup,
) -> ScimResult<ScimReply> {
    match services
        .ctx
        .store
        .directory()
        .replace_group(current, &next)
        .await?
    {
        Replaced::Replaced => {}
        Replaced::Changed | Replaced::Taken => return Err(precondition_failed()),
    }
    sync_administrators(services, p, Some(current), Some(&next)).await?;
    record(services, p, &next, false).await;
    Ok(ScimReply::resource(200, render::group(&next, &p.base)))
}

pub async fn replace_group(
    services: &Services,
    p: &Provisioner,
    id: &str,
    body: &[u8],
    if_match: Option<&str>,
) -> ScimResult<ScimReply> {
    let current = company_group(services, p, id).await?;
    admitted(render::group(&current, &p.base), if_match)?;
    let resource = normalize(&json_body(body)?, &GROUP_RESOURCE)?;
    let next = group_from(services, p, Some(&current), &resource).await?;
    write_group(services, p, &current, next).await
}

pub async fn patch_group(
    services: &Services,
    p: &Provisioner,
    id: &str,
    body: &[u8],
    if_match: Option<&str>,
) -> ScimResult<ScimReply> {
    let request = PatchRequest::from_json(body)?;
    let current = company_group(services, p, id).await?;
    let mut resource = admitted(render::group(&current, &p.base), if_match)?;
    apply(&mut resource, &request.operations, &GROUP_RESOURCE)?;
    let resource = normalize(&resource, &GROUP_RESOURCE)?;
    let next = group_from(services, p, Some(&current), &resource).await?;
    write_group(services, p, &current, next).await
}

pub async fn delete_group(
    services: &Services,
    p: &Provisioner,
    id: &str,
    if_match: Option<&str>,
) -> ScimResult<ScimReply> {
    let current = company_group(services, p, id).await?;
    admitted(render::group(&current, &p.base), if_match)?;
    match services
        .ctx
        .store
        .directory()
        .delete_group(&current)
        .await?
    {
        Replaced::Replaced => {}
        Replaced::Changed | Replaced::Taken => return Err(precondition_failed()),
    }
    sync_administrators(services, p, Some(&current), None).await?;
    record(services, p, &current, true).await;
    Ok(ScimReply::no_content())
}

/// Takes a deleted user out of every group of the company.
pub(super) async fn remove_member(
    services: &Services,
    p: &Provisioner,
    user: &PrincipalId,
) -> ScimResult<()> {
    let directory = services.ctx.store.directory();
    for group in directory.company_groups(&p.company_id()).await? {
        if group.members.contains(user) {
            let mut next = group.clone();
            next.members.retain(|member| member != user);
            next.revision += 1;
            next.last_modified = services.ctx.clock.now();
            if directory.replace_group(&group, &next).await? != Replaced::Replaced {
                return Err(precondition_failed());
            }
            record(services, p, &next, false).await;
        }
    }
    Ok(())
}
