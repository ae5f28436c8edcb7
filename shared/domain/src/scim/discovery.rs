//! The discovery documents: `/Schemas` (RFC 7643 §7), `/ResourceTypes` (§6) and
//! `/ServiceProviderConfig` (§5), rendered from the same static schema data the protocol
//! logic reads.

use serde_json::{json, Map, Value};

use super::schema::{
    Attribute, AttributeType, Mutability, ResourceType, Returned, Schema, Uniqueness,
};
use super::{RESOURCE_TYPE_SCHEMA, SCHEMA_SCHEMA, SERVICE_PROVIDER_CONFIG_SCHEMA};

fn base(base_url: &str) -> &str {
    base_url.trim_end_matches('/')
}

impl Schema {
    /// The schema's representation (RFC 7643 §7); the common attributes are not in it (§3.1).
    pub fn to_json(&self, base_url: &str) -> Value {
        json!({
            "schemas": [SCHEMA_SCHEMA],
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "attributes": self.attributes.iter().map(attribute_json).collect::<Vec<_>>(),
            "meta": {
                "resourceType": "Schema",
                "location": format!("{}/Schemas/{}", base(base_url), self.id),
            },
        })
    }
}

impl ResourceType {
    /// The resource type's representation (RFC 7643 §6).
    pub fn to_json(&self, base_url: &str) -> Value {
        let extensions: Vec<Value> = self
            .extensions
            .iter()
            .map(|extension| json!({ "schema": extension.id, "required": false }))
            .collect();
        let mut document = json!({
            "schemas": [RESOURCE_TYPE_SCHEMA],
            "id": self.name,
            "name": self.name,
            "endpoint": self.endpoint,
            "description": self.description,
            "schema": self.schema.id,
            "meta": {
                "resourceType": "ResourceType",
                "location": format!("{}/ResourceTypes/{}", base(base_url), self.name),
            },
        });
        if let (false, Some(object)) = (extensions.is_empty(), document.as_object_mut()) {
            object.insert("schemaExtensions".to_owned(), Value::Array(extensions));
        }
        document
    }
}

fn attribute_json(attribute: &Attribute) -> Value {
    let mut object = Map::new();
    object.insert("name".to_owned(), attribute.name.into());
    object.insert("type".to_owned(), kind(attribute.kind).into());
    object.insert("multiValued".to_owned(), attribute.multi_valued.into());
    object.insert("description".to_owned(), attribute.description.into());
    object.insert("required".to_owned(), attribute.required.into());
    if !attribute.canonical_values.is_empty() {
        object.insert(
            "canonicalValues".to_owned(),
            attribute.canonical_values.into(),
        );
    }
    if attribute.kind != AttributeType::Complex && attribute.kind != AttributeType::Boolean {
        object.insert("caseExact".to_owned(), attribute.case_exact.into());
    }
    object.insert(
        "mutability".to_owned(),
        mutability(attribute.mutability).into(),
    );
    object.insert("returned".to_owned(), returned(attribute.returned).into());
    if attribute.kind != AttributeType::Complex {
        object.insert(
            "uniqueness".to_owned(),
            uniqueness(attribute.uniqueness).into(),
        );
    }
    if attribute.kind == AttributeType::Reference {
        object.insert(
            "referenceTypes".to_owned(),
            attribute.reference_types.into(),
        );
    }
    if attribute.kind == AttributeType::Complex {
        let subs: Vec<Value> = attribute
            .sub_attributes
            .iter()
            .map(attribute_json)
            .collect();
        object.insert("subAttributes".to_owned(), subs.into());
    }
    Value::Object(object)
}

fn kind(kind: AttributeType) -> &'static str {
    match kind {
        AttributeType::String => "string",
        AttributeType::Boolean => "boolean",
        AttributeType::Decimal => "decimal",
        AttributeType::Integer => "integer",
        AttributeType::DateTime => "dateTime",
        AttributeType::Binary => "binary",
        AttributeType::Reference => "reference",
        AttributeType::Complex => "complex",
    }
}

fn mutability(mutability: Mutability) -> &'static str {
    match mutability {
        Mutability::ReadOnly => "readOnly",
        Mutability::ReadWrite => "readWrite",
        Mutability::Immutable => "immutable",
        Mutability::WriteOnly => "writeOnly",
    }
}

fn returned(returned: Returned) -> &'static str {
    match returned {
        Returned::Always => "always",
        Returned::Never => "never",
        Returned::Default => "default",
        Returned::Request => "request",
    }
}

fn uniqueness(uniqueness: Uniqueness) -> &'static str {
    match uniqueness {
        Uniqueness::None => "none",
        Uniqueness::Server => "server",
        Uniqueness::Global => "global",
    }
}

/// The service provider configuration (RFC 7643 §5): what this implementation supports.
pub fn service_provider_config(base_url: &str, documentation_uri: Option<&str>) -> Value {
    let mut document = json!({
        "schemas": [SERVICE_PROVIDER_CONFIG_SCHEMA],
        "patch": { "supported": true },
        "bulk": { "supported": true, "maxOperations": 100, "maxPayloadSize": 1_048_576 },
        "filter": { "supported": true, "maxResults": 200 },
        "changePassword": { "supported": false },
        "sort": { "supported": false },
        "etag": { "supported": true },
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "OAuth Bearer Token",
            "description": "A provisioning token or a company access token with scope scim",
            "specUri": "https://www.rfc-editor.org/info/rfc6750",
            "primary": true,
        }],
        "meta": {
            "resourceType": "ServiceProviderConfig",
            "location": format!("{}/ServiceProviderConfig", base(base_url)),
        },
    });
    if let (Some(uri), Some(object)) = (documentation_uri, document.as_object_mut()) {
        object.insert("documentationUri".to_owned(), uri.into());
    }
    document
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scim::schema::{ENTERPRISE_USER, GROUP, GROUP_RESOURCE, USER, USER_RESOURCE};
    use crate::scim::{ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA};

    fn names(document: &Value) -> Vec<&str> {
        document["attributes"]
            .as_array()
            .map(|attributes| {
                attributes
                    .iter()
                    .filter_map(|a| a["name"].as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn the_user_schema_lists_exactly_the_supported_attributes() {
        let document = USER.to_json("https://example.com/scim/v2/");
        assert_eq!(document["id"], USER_SCHEMA);
        assert_eq!(
            names(&document),
            [
                "userName",
                "name",
                "displayName",
                "emails",
                "active",
                "password"
            ]
        );
        assert_eq!(document["meta"]["resourceType"], "Schema");
        assert_eq!(
            document["meta"]["location"],
            format!("https://example.com/scim/v2/Schemas/{USER_SCHEMA}")
        );
        let user_name = &document["attributes"][0];
        assert_eq!(user_name["type"], "string");
        assert_eq!(user_name["required"], true);
        assert_eq!(user_name["caseExact"], false);
        assert_eq!(user_name["uniqueness"], "server");
        let password = &document["attributes"][5];
        assert_eq!(password["mutability"], "writeOnly");
        assert_eq!(password["returned"], "never");
        let emails = &document["attributes"][3];
        assert_eq!(emails["multiValued"], true);
        assert_eq!(
            emails["subAttributes"][2]["canonicalValues"],
            json!(["work", "home", "other"])
        );
    }

    #[test]
    fn the_enterprise_and_group_schemas() {
        let enterprise = ENTERPRISE_USER.to_json("https://x");
        assert_eq!(enterprise["id"], ENTERPRISE_USER_SCHEMA);
        assert_eq!(
            names(&enterprise),
            ["employeeNumber", "department", "manager"]
        );
        let manager = &enterprise["attributes"][2]["subAttributes"];
        assert_eq!(manager[1]["name"], "$ref");
        assert_eq!(manager[1]["referenceTypes"], json!(["User"]));
        assert_eq!(manager[2]["mutability"], "readOnly");
        let group = GROUP.to_json("https://x");
        assert_eq!(group["id"], GROUP_SCHEMA);
        assert_eq!(names(&group), ["displayName", "members"]);
        assert_eq!(
            group["attributes"][1]["subAttributes"][0]["mutability"],
            "immutable"
        );
    }

    #[test]
    fn resource_types() {
        let user = USER_RESOURCE.to_json("https://x/v2");
        assert_eq!(user["id"], "User");
        assert_eq!(user["endpoint"], "/Users");
        assert_eq!(user["schema"], USER_SCHEMA);
        assert_eq!(
            user["schemaExtensions"],
            json!([{ "schema": ENTERPRISE_USER_SCHEMA, "required": false }])
        );
        assert_eq!(user["meta"]["location"], "https://x/v2/ResourceTypes/User");
        let group = GROUP_RESOURCE.to_json("https://x/v2");
        assert_eq!(group["endpoint"], "/Groups");
        assert!(group.get("schemaExtensions").is_none());
    }

    #[test]
    fn the_service_provider_config() {
        let config = service_provider_config("https://x/v2", Some("https://docs"));
        assert_eq!(config["patch"]["supported"], true);
        assert_eq!(
            config["bulk"],
            json!({ "supported": true, "maxOperations": 100, "maxPayloadSize": 1048576 })
        );
        assert_eq!(
            config["filter"],
            json!({ "supported": true, "maxResults": 200 })
        );
        assert_eq!(config["changePassword"]["supported"], false);
        assert_eq!(config["sort"]["supported"], false);
        assert_eq!(config["etag"]["supported"], true);
        assert_eq!(config["documentationUri"], "https://docs");
        let scheme = &config["authenticationSchemes"][0];
        assert_eq!(scheme["type"], "oauthbearertoken");
        assert_eq!(scheme["primary"], true);
        assert!(service_provider_config("https://x", None)
            .get("documentationUri")
            .is_none());
    }
}
