//! Users and groups as SCIM resources: the principal's own fields (login, address, external id,
//! status) with what the directory said of the user, and `meta` with an entity tag that is the
//! digest of everything else, so that any change, by SCIM or by `tokenctl`, changes it.

use serde_json::{json, Map, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::clock::UnixTime;
use crate::domain::scim::{ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA};
use crate::domain::{DirectoryGroup, User, UserStatus};
use crate::secrets::TokenHash;

/// The attributes the principal's own fields hold, never kept in the directory's profile.
pub(super) const OWN_FIELDS: [&str; 7] = [
    "id",
    "userName",
    "externalId",
    "active",
    "password",
    "meta",
    "schemas",
];

pub(super) fn instant(at: UnixTime) -> String {
    OffsetDateTime::from_unix_timestamp(at)
        .ok()
        .and_then(|at| at.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// `W/"…"`: the digest of the resource without its `meta.version`.
fn version_of(resource: &Value) -> String {
    let digest = TokenHash::of(&resource.to_string()).to_hex();
    format!("W/\"{}\"", &digest[..16])
}

fn with_meta(
    mut resource: Value,
    resource_type: &str,
    location: String,
    created: UnixTime,
    modified: UnixTime,
) -> Value {
    resource["meta"] = json!({
        "resourceType": resource_type,
        "created": instant(created),
        "lastModified": instant(modified),
        "location": location,
    });
    let version = version_of(&resource);
    resource["meta"]["version"] = Value::String(version);
    resource
}

/// The user as its SCIM resource.
pub(super) fn user(user: &User, base: &str) -> Value {
    let mut resource = Map::new();
    let profile = user.directory.as_deref();
    if let Some(Value::Object(attributes)) = profile.map(|p| &p.attributes) {
        for (name, value) in attributes {
            if !OWN_FIELDS.contains(&name.as_str()) {
                resource.insert(name.clone(), value.clone());
            }
        }
    }
    let mut schemas = vec![Value::from(USER_SCHEMA)];
    if resource.contains_key(ENTERPRISE_USER_SCHEMA) {
        schemas.push(Value::from(ENTERPRISE_USER_SCHEMA));
    }
    resource.insert("schemas".into(), Value::Array(schemas));
    resource.insert("id".into(), Value::from(user.id.to_string()));
    // The login is kept folded to lower case; the spelling the directory gave is shown when it
    // is still the login.
    let spelt = profile
        .and_then(|p| p.attributes.get("userName"))
        .and_then(Value::as_str)
        .filter(|spelt| spelt.to_lowercase() == user.login.as_str());
    resource.insert(
        "userName".into(),
        Value::from(spelt.unwrap_or(user.login.as_str())),
    );
    if let Some(external_id) = &user.external_id {
        resource.insert("externalId".into(), Value::from(external_id.as_str()));
    }
    // Shown unless the directory left it unassigned (RFC 7643 2.5): a removed `active` reads as
    // removed, and the user's status stays what it was.
    let assigned = profile.is_none_or(|p| p.attributes.get("active").is_some());
    if assigned {
        resource.insert(
            "active".into(),
            Value::Bool(user.status == UserStatus::Active),
        );
    }
    // The address the user signs in with is the primary email, whatever the directory sent.
    if let Some(email) = &user.email {
        let emails = resource
            .entry("emails")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = emails {
            let present = list.iter().any(|entry| {
                entry["value"]
                    .as_str()
                    .is_some_and(|value| value.eq_ignore_ascii_case(email))
            });
            if !present {
                for entry in list.iter_mut() {
                    if let Some(entry) = entry.as_object_mut() {
                        entry.remove("primary");
                    }
                }
                list.insert(0, json!({"value": email, "primary": true}));
            }
        }
    }
    let (created, modified) = profile.map_or((user.created_at, user.created_at), |p| {
        (p.created_at, p.last_modified)
    });
    with_meta(
        Value::Object(resource),
        "User",
        format!("{base}/Users/{}", user.id),
        created,
        modified,
    )
}

/// The group as its SCIM resource.
pub(super) fn group(group: &DirectoryGroup, base: &str) -> Value {
    let members: Vec<Value> = group
        .members
        .iter()
        .map(|member| {
            json!({
                "value": member.to_string(),
                "$ref": format!("{base}/Users/{member}"),
                "type": "User",
            })
        })
        .collect();
    let mut resource = json!({
        "schemas": [GROUP_SCHEMA],
        "id": group.id.to_string(),
        "displayName": group.display_name,
        "members": members,
    });
    if let Some(external_id) = &group.external_id {
        resource["externalId"] = Value::from(external_id.as_str());
    }
    with_meta(
        resource,
        "Group",
        format!("{base}/Groups/{}", group.id),
        group.created_at,
        group.last_modified,
    )
}
