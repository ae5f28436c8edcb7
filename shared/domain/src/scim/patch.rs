//! PATCH (RFC 7644 §3.5.2): the request message and its application to a resource, all
//! operations or none.

use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::echo;
use super::filter::AttrPath;
use super::schema::{Attribute, Mutability, ResourceType, Schema};
use super::{path, ScimError, ScimType, PATCH_OP_SCHEMA};

mod ops;
mod remove;

/// The most operations one PATCH request may carry. Far more than a provisioning client sends
/// for one resource (a group's membership changes come in batches of a few hundred at most).
pub const MAX_PATCH_OPERATIONS: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PatchRequest {
    pub schemas: Vec<String>,
    #[serde(rename = "Operations", alias = "operations")]
    pub operations: Vec<PatchOperation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PatchOperation {
    pub op: PatchOp,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub value: Option<Value>,
}

/// The `op` of an operation. Read case-insensitively: Microsoft Entra sends `"Add"`,
/// `"Replace"` and `"Remove"` where RFC 7644 writes them in lower case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchOp {
    Add,
    Replace,
    Remove,
}

impl<'de> Deserialize<'de> for PatchOp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        match text.to_ascii_lowercase().as_str() {
            "add" => Ok(Self::Add),
            "replace" => Ok(Self::Replace),
            "remove" => Ok(Self::Remove),
            _ => Err(de::Error::custom(format!(
                "unknown op {} (add, replace or remove)",
                echo(&text)
            ))),
        }
    }
}

impl PatchRequest {
    /// Parses and validates a request body; a malformed body is 400 `invalidSyntax`.
    pub fn from_json(body: &[u8]) -> Result<Self, ScimError> {
        let request: Self = serde_json::from_slice(body).map_err(|error| {
            ScimError::bad_request(
                ScimType::InvalidSyntax,
                format!("not a PatchOp message: {}", echo(&error.to_string())),
            )
        })?;
        request.validate()?;
        Ok(request)
    }

    /// The message's schema is the PatchOp one, and it has "one or more PATCH operations"
    /// (RFC 7644 §3.5.2); too many operations are refused as in [`apply`].
    pub fn validate(&self) -> Result<(), ScimError> {
        if !self
            .schemas
            .iter()
            .any(|schema| schema.eq_ignore_ascii_case(PATCH_OP_SCHEMA))
        {
            return Err(ScimError::bad_request(
                ScimType::InvalidSyntax,
                format!("schemas must contain {PATCH_OP_SCHEMA}"),
            ));
        }
        if self.operations.is_empty() {
            return Err(ScimError::bad_request(
                ScimType::InvalidSyntax,
                "Operations must hold one or more operations",
            ));
        }
        check_count(&self.operations)
    }
}

/// 413, as RFC 7644 §3.7.4 answers a bulk request over its `maxOperations`: the RFC's own
/// answer to "more operations than the server accepts". `tooMany` is about a filter's results
/// and `invalidValue` about a value, neither fits.
fn check_count(operations: &[PatchOperation]) -> Result<(), ScimError> {
    if operations.len() > MAX_PATCH_OPERATIONS {
        return Err(ScimError::new(
            413,
            None,
            format!("a PATCH request may hold at most {MAX_PATCH_OPERATIONS} operations"),
        ));
    }
    Ok(())
}

/// Applies the operations in order to a copy of the resource and writes it back only when all
/// succeed: "A patch request, regardless of the number of operations, SHALL be treated as
/// atomic" (RFC 7644 §3.5.2). An error names the operation (from 1) that failed.
///
/// Interoperability, beyond RFC 7644:
/// - `op` in any case (Microsoft Entra's `"Replace"`);
/// - booleans as the strings `"True"`/`"False"` (Entra's `{"op":"Replace","path":"active",
///   "value":"False"}`);
/// - add or replace without a path whose value is an object of attributes (Okta's
///   `{"op":"replace","value":{"active":false}}`): extension attributes may be nested under
///   the URN or written `urn:…:User:department`, and a key may be any PATCH path
///   (`"name.givenName"`, `"emails[type eq \"work\"].value"`, as Entra sends them); there,
///   `readOnly` attributes such as `id` are ignored, as in a PUT body, and unknown ones too;
/// - `remove` of a multi-valued attribute with a `value` listing the values to remove (Entra's
///   `{"op":"Remove","path":"members","value":[{"value":"<id>"}]}`);
/// - `add` on `emails[type eq "work"].value` when no email is of that type creates one from
///   the filter's `eq` terms (Entra's way of setting a work email).
pub fn apply(
    resource: &mut Value,
    ops: &[PatchOperation],
    rt: &ResourceType,
) -> Result<(), ScimError> {
    check_count(ops)?;
    let mut copy = resource.clone();
    let Some(object) = copy.as_object_mut() else {
        return Err(ScimError::new(
            500,
            None,
            "the stored resource is not an object",
        ));
    };
    for (index, operation) in ops.iter().enumerate() {
        apply_one(object, operation, rt).map_err(|error| ScimError {
            detail: format!("operation {}: {}", index + 1, error.detail),
            ..error
        })?;
    }
    ops::tidy(object, rt);
    *resource = copy;
    Ok(())
}

fn apply_one(
    resource: &mut Map<String, Value>,
    operation: &PatchOperation,
    rt: &ResourceType,
) -> Result<(), ScimError> {
    match (operation.op, &operation.path) {
        (PatchOp::Remove, None) => Err(ScimError::bad_request(
            ScimType::NoTarget,
            "remove needs a path",
        )),
        (PatchOp::Remove, Some(text)) => {
            let path = path::parse(text, rt)?;
            match path.extension(rt) {
                Some(extension) => remove::remove_extension(resource, extension),
                None => remove::remove(resource, &path, operation.value.as_ref(), rt),
            }
        }
        (op, Some(text)) => {
            let path = path::parse(text, rt)?;
            let value = operation.value.as_ref().ok_or_else(missing_value)?;
            match path.extension(rt) {
                Some(extension) => set_extension(resource, extension, value, op, rt),
                None => ops::set(resource, &path, value, op, rt),
            }
        }
        (op, None) => {
            let Some(Value::Object(members)) = &operation.value else {
                return Err(ScimError::bad_request(
                    ScimType::InvalidValue,
                    "without a path, the value must be an object of attributes",
                ));
            };
            apply_members(resource, members, None, op, rt)
        }
    }
}

/// Add or replace on an extension's URN (RFC 7644 §3.10): `add` merges the value's attributes
/// into the extension's object as an add without a path does with the extension's key;
/// `replace` sets the object to the value: the attributes the value does not name are removed
/// (`readOnly` ones stay, the server sets them), those it names are replaced. A `null` value
/// adds nothing, and replaces the object with none.
fn set_extension(
    resource: &mut Map<String, Value>,
    extension: &'static Schema,
    value: &Value,
    op: PatchOp,
    rt: &ResourceType,
) -> Result<(), ScimError> {
    let members = match value {
        Value::Object(members) => Some(members),
        Value::Null => None,
        _ => {
            return Err(ScimError::bad_request(
                ScimType::InvalidValue,
                format!("the value of {} must be an object", extension.id),
            ))
        }
    };
    if op == PatchOp::Replace {
        let named = |attribute: &Attribute| {
            members.is_some_and(|members| {
                members.keys().any(|key| {
                    AttrPath::parse(key).is_some_and(|path| {
                        path.urn.is_none() && path.name.eq_ignore_ascii_case(attribute.name)
                    })
                })
            })
        };
        for attribute in extension.attributes {
            if attribute.mutability != Mutability::ReadOnly && !named(attribute) {
                remove::remove(resource, &extension_path(extension, attribute), None, rt)?;
            }
        }
    }
    match members {
        Some(members) => apply_members(resource, members, Some(extension.id), op, rt),
        None => Ok(()),
    }
}

/// The path of one of the extension's attributes.
fn extension_path(extension: &'static Schema, attribute: &'static Attribute) -> path::PatchPath {
    path::PatchPath {
        attr: AttrPath {
            urn: Some(extension.id.to_owned()),
            ..AttrPath::new(attribute.name)
        },
        filter: None,
        sub: None,
    }
}

fn missing_value() -> ScimError {
    ScimError::bad_request(ScimType::InvalidValue, "the operation needs a value")
}

/// Add or replace without a path: each member is an attribute, or an extension's object.
fn apply_members(
    resource: &mut Map<String, Value>,
    members: &Map<String, Value>,
    urn: Option<&'static str>,
    op: PatchOp,
    rt: &ResourceType,
) -> Result<(), ScimError> {
    for (key, value) in members {
        if key.eq_ignore_ascii_case("schemas") {
            continue;
        }
        if let (None, Some(extension)) = (urn, rt.extension(key)) {
            match value {
                Value::Object(inner) => {
                    apply_members(resource, inner, Some(extension.id), op, rt)?;
                }
                Value::Null => {}
                _ => {
                    return Err(ScimError::bad_request(
                        ScimType::InvalidValue,
                        format!("{} must be an object", extension.id),
                    ))
                }
            }
            continue;
        }
        let path = match urn {
            Some(urn) => match AttrPath::parse(key) {
                Some(attr) if attr.urn.is_none() => path::PatchPath {
                    attr: AttrPath {
                        urn: Some(urn.to_owned()),
                        ..attr
                    },
                    filter: None,
                    sub: None,
                },
                _ => continue,
            },
            None => match path::parse(key, rt) {
                Ok(path) => path,
                Err(_) => continue,
            },
        };
        match path.target(rt) {
            Some(target) if !target.is_read_only() => {}
            _ => continue,
        }
        if value.is_null() {
            if op == PatchOp::Replace {
                remove::remove(resource, &path, None, rt)?;
            }
            continue;
        }
        ops::set(resource, &path, value, op, rt)?;
    }
    Ok(())
}

#[cfg(test)]
mod extension_root_tests;
#[cfg(test)]
mod interop_tests;
#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod tests;
