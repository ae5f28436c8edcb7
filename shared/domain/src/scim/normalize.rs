//! Input normalization for POST and PUT bodies and for the result of a PATCH: canonical
//! attribute names, the extension's attributes under its URN, type checks, and only the
//! attributes the schema has.

use serde_json::{Map, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::filter::AttrPath;
use super::schema::{Attribute, AttributeType, Mutability, ResourceType};
use super::value::{get_ci, is_present};
use super::{ScimError, ScimType};

/// The deepest JSON [`without_null`] descends into; resources are four levels deep at most.
const MAX_DEPTH: usize = 32;

/// Normalizes a resource as a client sent it:
///
/// - attribute names in the schema's case; unknown attributes dropped;
/// - the extension's attributes under its URN, whether sent nested
///   (`"urn:…:enterprise:2.0:User": {"department": …}`) or flattened
///   (`"urn:…:enterprise:2.0:User:department": …`);
/// - `readOnly` attributes (`id`, `meta`, `members.display`, `manager.displayName`) dropped:
///   RFC 7644 §3.5.1 says "any values provided SHALL be ignored", and the server sets them;
/// - `null` means unassigned (RFC 7643 §2.5) and is dropped;
/// - types checked (400 `invalidValue`); booleans may be the strings `"True"`/`"False"`, which
///   Microsoft Entra sends;
/// - required attributes present and at most one `primary: true` per multi-valued attribute
///   (RFC 7643 §2.4), else 400 `invalidValue`;
/// - `schemas` recomputed: the core schema, and the extension's URN exactly when it has data.
///
/// The caller sets `id` and `meta` afterwards.
pub fn normalize(input: &Value, rt: &ResourceType) -> Result<Value, ScimError> {
    let Some(object) = input.as_object() else {
        return Err(ScimError::bad_request(
            ScimType::InvalidSyntax,
            "a resource must be a JSON object",
        ));
    };
    let mut core = Map::new();
    let mut extensions: Vec<(&'static str, Map<String, Value>)> = rt
        .extensions
        .iter()
        .map(|schema| (schema.id, Map::new()))
        .collect();
    for (key, value) in object {
        if key.eq_ignore_ascii_case("schemas") {
            continue;
        }
        if let Some(extension) = rt.extension(key) {
            let members = match value {
                Value::Null => continue,
                Value::Object(members) => members,
                _ => return Err(invalid(format!("{} must be an object", extension.id))),
            };
            for (name, value) in members {
                if let Some(path) = AttrPath::parse(name) {
                    let path = AttrPath {
                        urn: Some(extension.id.to_owned()),
                        ..path
                    };
                    place(&path, value, rt, &mut core, &mut extensions)?;
                }
            }
            continue;
        }
        if let Some(path) = AttrPath::parse(key) {
            place(&path, value, rt, &mut core, &mut extensions)?;
        }
    }
    for attribute in rt.schema.attributes.iter().filter(|a| a.required) {
        if !core.get(attribute.name).is_some_and(is_present) {
            return Err(invalid(format!("{} is required", attribute.name)));
        }
    }
    let mut schemas = vec![Value::from(rt.schema.id)];
    for (urn, members) in extensions {
        check_primary(&members)?;
        if !members.is_empty() {
            schemas.push(Value::from(urn));
            core.insert(urn.to_owned(), Value::Object(members));
        }
    }
    check_primary(&core)?;
    core.insert("schemas".to_owned(), Value::Array(schemas));
    Ok(Value::Object(core))
}

fn place(
    path: &AttrPath,
    value: &Value,
    rt: &ResourceType,
    core: &mut Map<String, Value>,
    extensions: &mut [(&'static str, Map<String, Value>)],
) -> Result<(), ScimError> {
    let Some(resolved) = rt.resolve(path) else {
        return Ok(());
    };
    if resolved.is_read_only() {
        return Ok(());
    }
    let target = match resolved.extension() {
        Some(urn) => match extensions.iter_mut().find(|(id, _)| *id == urn) {
            Some((_, members)) => members,
            None => return Ok(()),
        },
        None => core,
    };
    let attribute = resolved.attribute;
    match resolved.sub {
        Some(sub) if !attribute.multi_valued => {
            if let Some(value) = coerce_value(sub, value)? {
                let entry = target
                    .entry(attribute.name.to_owned())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(members) = entry {
                    members.insert(sub.name.to_owned(), value);
                }
            }
        }
        Some(_) => {}
        None => match coerce_attribute(attribute, value)? {
            Some(Value::Object(members)) => {
                let entry = target
                    .entry(attribute.name.to_owned())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(existing) = entry {
                    existing.extend(members);
                }
            }
            Some(value) => {
                target.insert(attribute.name.to_owned(), value);
            }
            None => {}
        },
    }
    Ok(())
}

/// A whole attribute's value: an array of values for a multi-valued attribute.
pub(crate) fn coerce_attribute(
    attribute: &'static Attribute,
    value: &Value,
) -> Result<Option<Value>, ScimError> {
    if !attribute.multi_valued {
        return coerce_value(attribute, value);
    }
    match value {
        Value::Null => Ok(None),
        Value::Array(items) => {
            let mut values = Vec::with_capacity(items.len());
            for item in items {
                if let Some(value) = coerce_value(attribute, item)? {
                    values.push(value);
                }
            }
            Ok((!values.is_empty()).then_some(Value::Array(values)))
        }
        _ => Err(invalid(format!("{} must be an array", attribute.name))),
    }
}

/// One value of an attribute (an item, for a multi-valued one) in its canonical form; `None`
/// when it is unassigned. Unknown and `readOnly` sub-attributes are dropped.
///
/// Two tolerances for provisioning clients: a boolean may be the string `"True"` or `"False"`
/// in any case (Microsoft Entra sends `{"op":"Replace","path":"active","value":"False"}`), and
/// a complex attribute with a `value` sub-attribute may be given as that string alone (Entra
/// sends the manager's id as `"value":"<id>"` for the enterprise `manager`).
pub(crate) fn coerce_value(
    attribute: &'static Attribute,
    value: &Value,
) -> Result<Option<Value>, ScimError> {
    let wrong = || {
        invalid(format!(
            "{} must be {}",
            attribute.name,
            expected(attribute.kind)
        ))
    };
    let coerced = match (attribute.kind, value) {
        (_, Value::Null) => return Ok(None),
        (AttributeType::Complex, Value::Object(members)) => {
            let mut out = Map::new();
            for (name, value) in members {
                let Some(sub) = attribute.sub_attribute(name) else {
                    continue;
                };
                if sub.mutability == Mutability::ReadOnly {
                    continue;
                }
                if let Some(value) = coerce_value(sub, value)? {
                    out.insert(sub.name.to_owned(), value);
                }
            }
            return Ok((!out.is_empty()).then_some(Value::Object(out)));
        }
        (AttributeType::Complex, Value::String(_)) => {
            let sub = attribute.value_sub_attribute().ok_or_else(wrong)?;
            let mut out = Map::new();
            if let Some(value) = coerce_value(sub, value)? {
                out.insert(sub.name.to_owned(), value);
            }
            Value::Object(out)
        }
        (AttributeType::Boolean, Value::Bool(_))
        | (AttributeType::Decimal, Value::Number(_))
        | (
            AttributeType::String | AttributeType::Binary | AttributeType::Reference,
            Value::String(_),
        ) => value.clone(),
        (AttributeType::Boolean, Value::String(text)) if text.eq_ignore_ascii_case("true") => {
            Value::Bool(true)
        }
        (AttributeType::Boolean, Value::String(text)) if text.eq_ignore_ascii_case("false") => {
            Value::Bool(false)
        }
        (AttributeType::Integer, Value::Number(number)) if number.is_i64() || number.is_u64() => {
            value.clone()
        }
        (AttributeType::DateTime, Value::String(text))
            if OffsetDateTime::parse(text, &Rfc3339).is_ok() =>
        {
            value.clone()
        }
        _ => return Err(wrong()),
    };
    Ok(Some(coerced))
}

fn expected(kind: AttributeType) -> &'static str {
    match kind {
        AttributeType::String | AttributeType::Binary | AttributeType::Reference => "a string",
        AttributeType::Boolean => "a boolean",
        AttributeType::Decimal => "a number",
        AttributeType::Integer => "an integer",
        AttributeType::DateTime => "an RFC 3339 date and time",
        AttributeType::Complex => "an object",
    }
}

/// At most one value of a multi-valued attribute is `primary` (RFC 7643 §2.4).
fn check_primary(members: &Map<String, Value>) -> Result<(), ScimError> {
    for (name, value) in members {
        if let Value::Array(items) = value {
            let primaries = items
                .iter()
                .filter(|item| get_ci(item, "primary") == Some(&Value::Bool(true)))
                .count();
            if primaries > 1 {
                return Err(invalid(format!("more than one of {name} is primary")));
            }
        }
    }
    Ok(())
}

/// The value without its `null` members and items: `null` means unassigned (RFC 7643 §2.5).
/// Subtrees deeper than the 32 levels no SCIM resource reaches are kept as they are.
pub fn without_null(value: &Value) -> Value {
    strip(value, 0)
}

fn strip(value: &Value, depth: usize) -> Value {
    if depth >= MAX_DEPTH {
        return value.clone();
    }
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key.clone(), strip(value, depth + 1)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|value| !value.is_null())
                .map(|value| strip(value, depth + 1))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn invalid(detail: String) -> ScimError {
    ScimError::bad_request(ScimType::InvalidValue, detail)
}

#[cfg(test)]
mod tests;
