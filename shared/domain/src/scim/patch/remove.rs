//! `remove` (RFC 7644 §3.5.2.2).

use serde_json::{Map, Value};

use super::ops::{check_immutable, error, holder, put_array, same_value, take_array, target};
use crate::scim::filter::eval::matches_value;
use crate::scim::filter::Filter;
use crate::scim::path::PatchPath;
use crate::scim::schema::{Attribute, ResourceType, Schema};
use crate::scim::value::{elements, is_present, key_ci, remove_ci};
use crate::scim::{ScimError, ScimType};

pub(super) fn remove(
    resource: &mut Map<String, Value>,
    path: &PatchPath,
    value: Option<&Value>,
    rt: &ResourceType,
) -> Result<(), ScimError> {
    let target = target(path, rt)?;
    let attribute = target.attribute;
    if path.filter.is_none() && target.sub.is_none() && attribute.required {
        return Err(error(
            ScimType::InvalidValue,
            format!("{} is required", attribute.name),
        ));
    }
    let no_target = || {
        error(
            ScimType::NoTarget,
            format!("no value of {} matches the filter", attribute.name),
        )
    };
    let Some(holder) = holder(resource, &target, false) else {
        return match path.filter {
            Some(_) => Err(no_target()),
            None => Ok(()),
        };
    };
    match (&path.filter, target.sub) {
        (None, None) => match value {
            Some(listed) if attribute.multi_valued && !listed.is_null() => {
                let mut items = take_array(holder, attribute.name);
                items.retain(|item| !elements(listed).any(|gone| same_value(item, gone)));
                put_array(holder, attribute.name, items);
                Ok(())
            }
            _ => {
                let old = key_ci(holder, attribute.name).and_then(|key| holder.get(&key));
                check_immutable(attribute, old, None)?;
                remove_ci(holder, attribute.name);
                Ok(())
            }
        },
        (None, Some(sub)) => {
            let Some(key) = key_ci(holder, attribute.name) else {
                return Ok(());
            };
            if let Some(value) = holder.get_mut(&key) {
                for item in as_mut_slice(value) {
                    if let Some(object) = item.as_object_mut() {
                        let old = key_ci(object, sub.name).and_then(|key| object.get(&key));
                        check_immutable(sub, old, None)?;
                        remove_ci(object, sub.name);
                    }
                }
            }
            Ok(())
        }
        (Some(filter), sub) => {
            let mut items = take_array(holder, attribute.name);
            let before = items.len();
            let result = match sub {
                None => {
                    items.retain(|item| !matches_value(filter, item, attribute));
                    if items.len() == before {
                        Err(no_target())
                    } else {
                        Ok(())
                    }
                }
                Some(sub) => remove_matching_sub(&mut items, attribute, filter, sub, no_target),
            };
            put_array(holder, attribute.name, items);
            result
        }
    }
}

/// `remove` of an extension's URN: the extension's object goes, every attribute of it as a
/// `remove` of that attribute would (a required or immutable one with a value is refused), and
/// its `readOnly` ones with it; [`super::ops::tidy`] then takes the URN out of `schemas`.
pub(super) fn remove_extension(
    resource: &mut Map<String, Value>,
    extension: &'static Schema,
) -> Result<(), ScimError> {
    let Some(key) = key_ci(resource, extension.id) else {
        return Ok(());
    };
    if let Some(Value::Object(members)) = resource.get(&key) {
        for attribute in extension.attributes {
            let old = key_ci(members, attribute.name).and_then(|name| members.get(&name));
            if attribute.required && old.is_some_and(is_present) {
                return Err(error(
                    ScimType::InvalidValue,
                    format!("{} is required", attribute.name),
                ));
            }
            check_immutable(attribute, old, None)?;
        }
    }
    resource.remove(&key);
    Ok(())
}

fn remove_matching_sub(
    items: &mut [Value],
    attribute: &'static Attribute,
    filter: &Filter,
    sub: &'static Attribute,
    no_target: impl Fn() -> ScimError,
) -> Result<(), ScimError> {
    let mut found = false;
    for item in items.iter_mut() {
        if !matches_value(filter, item, attribute) {
            continue;
        }
        found = true;
        if let Some(object) = item.as_object_mut() {
            let old = key_ci(object, sub.name).and_then(|key| object.get(&key));
            check_immutable(sub, old, None)?;
            remove_ci(object, sub.name);
        }
    }
    if found {
        Ok(())
    } else {
        Err(no_target())
    }
}

fn as_mut_slice(value: &mut Value) -> &mut [Value] {
    match value {
        Value::Array(items) => items.as_mut_slice(),
        other => std::slice::from_mut(other),
    }
}
