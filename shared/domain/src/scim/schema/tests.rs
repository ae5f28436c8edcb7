use super::*;
use crate::scim::{ENTERPRISE_USER_SCHEMA, USER_SCHEMA};

fn resolve(rt: &ResourceType, text: &str) -> Option<Resolved> {
    rt.resolve(&AttrPath::parse(text)?)
}

#[test]
fn bare_names_resolve_in_core_then_common_then_extensions() {
    let user_name = resolve(&USER_RESOURCE, "username").unwrap();
    assert_eq!(user_name.location, SchemaLocation::Core);
    assert_eq!(user_name.attribute.name, "userName");
    assert_eq!(
        resolve(&USER_RESOURCE, "ID").unwrap().location,
        SchemaLocation::Common
    );
    assert_eq!(
        resolve(&USER_RESOURCE, "department").unwrap().location,
        SchemaLocation::Extension(ENTERPRISE_USER_SCHEMA)
    );
    let display = resolve(&USER_RESOURCE, "displayName").unwrap();
    assert_eq!(display.location, SchemaLocation::Core);
    assert!(resolve(&GROUP_RESOURCE, "department").is_none());
    assert!(resolve(&USER_RESOURCE, "nickName").is_none());
}

#[test]
fn urn_prefixes_select_the_schema() {
    let department = resolve(
        &USER_RESOURCE,
        &format!("{}:Department", ENTERPRISE_USER_SCHEMA.to_uppercase()),
    )
    .unwrap();
    assert_eq!(department.extension(), Some(ENTERPRISE_USER_SCHEMA));
    assert!(resolve(
        &USER_RESOURCE,
        &format!("{ENTERPRISE_USER_SCHEMA}:userName")
    )
    .is_none());
    assert!(resolve(&USER_RESOURCE, &format!("{USER_SCHEMA}:userName")).is_some());
    assert!(resolve(&USER_RESOURCE, &format!("{USER_SCHEMA}:department")).is_none());
    assert!(resolve(&USER_RESOURCE, "urn:example:other:1.0:User:userName").is_none());
}

#[test]
fn sub_attributes_resolve() {
    let manager = resolve(
        &USER_RESOURCE,
        &format!("{ENTERPRISE_USER_SCHEMA}:manager.displayName"),
    )
    .unwrap();
    assert_eq!(manager.leaf().name, "displayName");
    assert!(manager.is_read_only());
    let given = resolve(&USER_RESOURCE, "name.GIVENNAME").unwrap();
    assert_eq!(given.sub.map(|sub| sub.name), Some("givenName"));
    assert!(resolve(&USER_RESOURCE, "userName.x").is_none());
    assert!(resolve(&USER_RESOURCE, "name.nickName").is_none());
    let reference = resolve(&GROUP_RESOURCE, "members.$ref").unwrap();
    assert_eq!(reference.leaf().kind, AttributeType::Reference);
}

#[test]
fn characteristics_follow_the_rfc() {
    let id = resolve(&USER_RESOURCE, "id").unwrap().attribute;
    assert_eq!(
        (id.mutability, id.returned, id.uniqueness, id.case_exact),
        (
            Mutability::ReadOnly,
            Returned::Always,
            Uniqueness::Server,
            true
        )
    );
    let external = resolve(&USER_RESOURCE, "externalId").unwrap().attribute;
    assert_eq!(
        (external.mutability, external.case_exact),
        (Mutability::ReadWrite, true)
    );
    let user_name = resolve(&USER_RESOURCE, "userName").unwrap().attribute;
    assert!(user_name.required && !user_name.case_exact);
    assert_eq!(user_name.uniqueness, Uniqueness::Server);
    let password = resolve(&USER_RESOURCE, "password").unwrap().attribute;
    assert_eq!(
        (password.mutability, password.returned),
        (Mutability::WriteOnly, Returned::Never)
    );
    let last_modified = resolve(&USER_RESOURCE, "meta.lastModified").unwrap().leaf();
    assert_eq!(last_modified.kind, AttributeType::DateTime);
    let email_type = resolve(&USER_RESOURCE, "emails.type").unwrap().leaf();
    assert_eq!(email_type.canonical_values, ["work", "home", "other"]);
    let group_name = resolve(&GROUP_RESOURCE, "displayName").unwrap().attribute;
    assert!(group_name.required);
    let member_value = resolve(&GROUP_RESOURCE, "members.value").unwrap().leaf();
    assert_eq!(member_value.mutability, Mutability::Immutable);
    let member_type = resolve(&GROUP_RESOURCE, "members.type").unwrap().leaf();
    assert_eq!(member_type.canonical_values, ["User", "Group"]);
    assert!(resolve(&GROUP_RESOURCE, "members.display")
        .unwrap()
        .is_read_only());
}

#[test]
fn the_resource_types() {
    assert_eq!(
        (USER_RESOURCE.name, USER_RESOURCE.endpoint),
        ("User", "/Users")
    );
    assert_eq!(
        (GROUP_RESOURCE.name, GROUP_RESOURCE.endpoint),
        ("Group", "/Groups")
    );
    assert_eq!(USER_RESOURCE.schema.id, USER_SCHEMA);
    assert_eq!(USER_RESOURCE.extensions, [&ENTERPRISE_USER]);
    assert!(USER_RESOURCE
        .extension(&ENTERPRISE_USER_SCHEMA.to_lowercase())
        .is_some());
    assert_eq!(GROUP.attributes.len(), 2);
}
