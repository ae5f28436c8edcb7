//! JSON helpers with SCIM's rules: attribute names are case-insensitive (RFC 7643 §2.1), and
//! null, an empty string and an empty array all mean "unassigned" (RFC 7643 §2.5).

use serde_json::{Map, Value};

pub(crate) fn get_ci<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    let object = value.as_object()?;
    object.get(name).or_else(|| {
        object
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    })
}

/// The key under which the object holds `name`, in whatever case it was written.
pub(crate) fn key_ci(object: &Map<String, Value>, name: &str) -> Option<String> {
    if object.contains_key(name) {
        return Some(name.to_owned());
    }
    object
        .keys()
        .find(|key| key.eq_ignore_ascii_case(name))
        .cloned()
}

pub(crate) fn remove_ci(object: &mut Map<String, Value>, name: &str) -> Option<Value> {
    let key = key_ci(object, name)?;
    object.remove(&key)
}

/// The values of an attribute: each item of a multi-valued one, or the one value.
pub(crate) fn elements(value: &Value) -> std::slice::Iter<'_, Value> {
    match value {
        Value::Array(items) => items.iter(),
        other => std::slice::from_ref(other).iter(),
    }
}

pub(crate) fn is_present(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => items.iter().any(is_present),
        Value::Object(members) => members.values().any(is_present),
        Value::Bool(_) | Value::Number(_) => true,
    }
}
