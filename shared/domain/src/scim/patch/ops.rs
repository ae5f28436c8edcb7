//! The three PATCH operations on one target (RFC 7644 §3.5.2.1 add, §3.5.2.2 remove,
//! §3.5.2.3 replace).

use serde_json::{Map, Value};

use super::PatchOp;
use crate::scim::error::echo;
use crate::scim::filter::eval::matches_value;
use crate::scim::filter::{CompareOp, Filter};
use crate::scim::normalize::coerce_value;
use crate::scim::path::PatchPath;
use crate::scim::schema::{Attribute, Mutability, Resolved, ResourceType};
use crate::scim::value::{elements, get_ci, is_present, key_ci, remove_ci};
use crate::scim::{ScimError, ScimType};

pub(super) fn error(kind: ScimType, detail: String) -> ScimError {
    ScimError::bad_request(kind, detail)
}

pub(super) fn target(path: &PatchPath, rt: &ResourceType) -> Result<Resolved, ScimError> {
    let target = path.target(rt).ok_or_else(|| {
        error(
            ScimType::InvalidPath,
            format!("unknown attribute {}", echo(&path.to_string())),
        )
    })?;
    if target.is_read_only() {
        return Err(error(
            ScimType::Mutability,
            format!("{} is readOnly", target.leaf().name),
        ));
    }
    Ok(target)
}

/// The object that holds the attribute: the resource, or its extension's object.
pub(super) fn holder<'a>(
    resource: &'a mut Map<String, Value>,
    target: &Resolved,
    create: bool,
) -> Option<&'a mut Map<String, Value>> {
    let Some(urn) = target.extension() else {
        return Some(resource);
    };
    let key = key_ci(resource, urn).unwrap_or_else(|| urn.to_owned());
    let is_object = resource.get(&key).is_some_and(Value::is_object);
    if !is_object {
        if !create {
            return None;
        }
        resource.insert(key.clone(), Value::Object(Map::new()));
    }
    resource.get_mut(&key).and_then(Value::as_object_mut)
}

/// Writes under the schema's name, replacing the attribute in whatever case it was stored.
fn put(object: &mut Map<String, Value>, name: &str, value: Value) {
    remove_ci(object, name);
    object.insert(name.to_owned(), value);
}

pub(super) fn take_array(object: &mut Map<String, Value>, name: &str) -> Vec<Value> {
    match remove_ci(object, name) {
        Some(Value::Array(items)) => items,
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

pub(super) fn put_array(object: &mut Map<String, Value>, name: &str, items: Vec<Value>) {
    if !items.is_empty() {
        object.insert(name.to_owned(), Value::Array(items));
    }
}

/// "a client MUST NOT modify an attribute that has mutability "readOnly" or "immutable".
/// However, a client MAY "add" a value to an "immutable" attribute if the attribute had no
/// previous value" (RFC 7644 §3.5.2).
pub(super) fn check_immutable(
    attribute: &Attribute,
    old: Option<&Value>,
    new: Option<&Value>,
) -> Result<(), ScimError> {
    let had_value = old.is_some_and(is_present);
    if attribute.mutability == Mutability::Immutable && had_value && old != new {
        return Err(error(
            ScimType::Mutability,
            format!("{} is immutable", attribute.name),
        ));
    }
    Ok(())
}

fn coerced_items(attribute: &'static Attribute, value: &Value) -> Result<Vec<Value>, ScimError> {
    let mut items = Vec::new();
    for item in elements(value) {
        if let Some(item) = coerce_value(attribute, item)? {
            items.push(item);
        }
    }
    Ok(items)
}

pub(super) fn set(
    resource: &mut Map<String, Value>,
    path: &PatchPath,
    value: &Value,
    op: PatchOp,
    rt: &ResourceType,
) -> Result<(), ScimError> {
    let target = target(path, rt)?;
    let attribute = target.attribute;
    let Some(holder) = holder(resource, &target, true) else {
        return Ok(());
    };
    match (&path.filter, target.sub) {
        (Some(filter), sub) => set_filtered(holder, attribute, filter, sub, value, op),
        (None, Some(sub)) if attribute.multi_valued => {
            // RFC 7644 gives `emails.value` without a filter no meaning of its own; it reads as
            // every value's, and with no value yet as the first one's.
            let mut items = take_array(holder, attribute.name);
            if items.is_empty() {
                items.push(Value::Object(Map::new()));
            }
            for item in &mut items {
                if let Some(object) = item.as_object_mut() {
                    set_sub(object, sub, value)?;
                }
            }
            let touched: Vec<usize> = (0..items.len()).collect();
            fix_primary(&mut items, &touched)?;
            put_array(holder, attribute.name, items);
            Ok(())
        }
        (None, Some(sub)) => {
            with_object(holder, attribute.name, |object| set_sub(object, sub, value))
        }
        (None, None) if attribute.multi_valued => {
            let new = coerced_items(attribute, value)?;
            let old = take_array(holder, attribute.name);
            // "If the target location is a multi-valued attribute and no filter is specified,
            // the attribute and all values are replaced" (RFC 7644 §3.5.2.3).
            let mut items = if op == PatchOp::Replace {
                Vec::new()
            } else {
                old
            };
            let mut touched = Vec::new();
            let by_id = identified_by_value(attribute);
            for item in new {
                let same = |old: &Value| holds(old, &item) || (by_id && same_value(old, &item));
                if let Some(index) = items.iter().position(same) {
                    if let (Some(Value::Object(old)), Value::Object(new)) =
                        (items.get_mut(index), item)
                    {
                        for (name, value) in new {
                            old.entry(name).or_insert(value);
                        }
                    }
                    touched.push(index);
                } else {
                    items.push(item);
                    touched.push(items.len() - 1);
                }
            }
            fix_primary(&mut items, &touched)?;
            put_array(holder, attribute.name, items);
            Ok(())
        }
        (None, None) if attribute.is_complex() => with_object(holder, attribute.name, |object| {
            merge(object, attribute, value)
        }),
        (None, None) => {
            let new = coerce_value(attribute, value)?;
            check_immutable(
                attribute,
                holder
                    .get(attribute.name)
                    .or_else(|| key_ci(holder, attribute.name).and_then(|key| holder.get(&key))),
                new.as_ref(),
            )?;
            match new {
                Some(new) => put(holder, attribute.name, new),
                None => {
                    remove_ci(holder, attribute.name);
                }
            }
            Ok(())
        }
    }
}

/// Runs `change` on the attribute's object, created empty when the attribute has none.
fn with_object(
    holder: &mut Map<String, Value>,
    name: &str,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<(), ScimError>,
) -> Result<(), ScimError> {
    let mut object = match remove_ci(holder, name) {
        Some(Value::Object(object)) => object,
        _ => Map::new(),
    };
    let result = change(&mut object);
    holder.insert(name.to_owned(), Value::Object(object));
    result
}

fn set_sub(
    object: &mut Map<String, Value>,
    sub: &'static Attribute,
    value: &Value,
) -> Result<(), ScimError> {
    let new = coerce_value(sub, value)?;
    let old = key_ci(object, sub.name).and_then(|key| object.get(&key));
    check_immutable(sub, old, new.as_ref())?;
    match new {
        Some(new) => put(object, sub.name, new),
        None => {
            remove_ci(object, sub.name);
        }
    }
    Ok(())
}

/// Sub-attributes of a complex value: those given replace the old ones, "Sub-attributes that
/// are not specified in the "value" parameter are left unchanged" (RFC 7644 §3.5.2.3).
fn merge(
    object: &mut Map<String, Value>,
    attribute: &'static Attribute,
    value: &Value,
) -> Result<(), ScimError> {
    if let Some(Value::Object(members)) = coerce_value(attribute, value)? {
        for (name, new) in members {
            if let Some(sub) = attribute.sub_attribute(&name) {
                let old = key_ci(object, sub.name).and_then(|key| object.get(&key));
                check_immutable(sub, old, Some(&new))?;
                put(object, sub.name, new);
            }
        }
    }
    Ok(())
}

fn set_filtered(
    holder: &mut Map<String, Value>,
    attribute: &'static Attribute,
    filter: &Filter,
    sub: Option<&'static Attribute>,
    value: &Value,
    op: PatchOp,
) -> Result<(), ScimError> {
    let mut items = take_array(holder, attribute.name);
    let mut matched: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, item)| matches_value(filter, item, attribute))
        .map(|(index, _)| index)
        .collect();
    if matched.is_empty() {
        let template = match op {
            PatchOp::Add => template(filter, attribute),
            PatchOp::Replace | PatchOp::Remove => None,
        };
        let Some(template) = template else {
            put_array(holder, attribute.name, items);
            return Err(error(
                ScimType::NoTarget,
                format!("no value of {} matches the filter", attribute.name),
            ));
        };
        items.push(Value::Object(template));
        matched.push(items.len() - 1);
    }
    for &index in &matched {
        if let Some(object) = items.get_mut(index).and_then(Value::as_object_mut) {
            match sub {
                Some(sub) => set_sub(object, sub, value)?,
                None => merge(object, attribute, value)?,
            }
        }
    }
    fix_primary(&mut items, &matched)?;
    put_array(holder, attribute.name, items);
    Ok(())
}

/// The value an `add` through an unmatched filter creates: the filter's `eq` terms, when it is
/// nothing but `eq` terms joined by `and` (`emails[type eq "work"]`).
fn template(filter: &Filter, attribute: &'static Attribute) -> Option<Map<String, Value>> {
    match filter {
        Filter::Compare(path, CompareOp::Eq, value) if path.urn.is_none() && path.sub.is_none() => {
            let sub = attribute.sub_attribute(&path.name)?;
            let value = coerce_value(sub, value).ok()??;
            let mut object = Map::new();
            object.insert(sub.name.to_owned(), value);
            Some(object)
        }
        Filter::And(left, right) => {
            let mut object = template(left, attribute)?;
            object.extend(template(right, attribute)?);
            Some(object)
        }
        _ => None,
    }
}

/// Whether the values are told apart by their immutable `value` (a group's members by id), so
/// that adding one with the same `value` again is the same member, not a second one.
fn identified_by_value(attribute: &'static Attribute) -> bool {
    attribute
        .value_sub_attribute()
        .is_some_and(|value| value.mutability == Mutability::Immutable)
}

/// Whether the old value already holds everything the new one says: adding it again changes
/// nothing ("no changes SHOULD be made", RFC 7644 §3.5.2.1).
pub(super) fn holds(old: &Value, new: &Value) -> bool {
    match (old, new) {
        (Value::Object(_), Value::Object(members)) => members
            .iter()
            .all(|(name, value)| get_ci(old, name) == Some(value)),
        _ => old == new,
    }
}

fn is_primary(value: &Value) -> bool {
    get_ci(value, "primary") == Some(&Value::Bool(true))
}

/// One value set `primary` clears it on the others: "a PATCH operation that sets a value's
/// "primary" sub-attribute to "true" SHALL cause the server to automatically set "primary" to
/// "false" for any other values in the array" (RFC 7644 §3.5.2).
fn fix_primary(items: &mut [Value], touched: &[usize]) -> Result<(), ScimError> {
    let mut primaries: Vec<usize> = touched
        .iter()
        .copied()
        .filter(|&index| items.get(index).is_some_and(is_primary))
        .collect();
    primaries.dedup();
    match primaries.as_slice() {
        [] => Ok(()),
        [keep] => {
            for (index, item) in items.iter_mut().enumerate() {
                if index != *keep && is_primary(item) {
                    if let Some(object) = item.as_object_mut() {
                        put(object, "primary", Value::Bool(false));
                    }
                }
            }
            Ok(())
        }
        _ => Err(error(
            ScimType::InvalidValue,
            "at most one value may be primary".to_owned(),
        )),
    }
}

/// Whether a listed value names this one: by `value` when it has one (a member by its id),
/// else by everything it says.
pub(super) fn same_value(item: &Value, listed: &Value) -> bool {
    match get_ci(listed, "value") {
        Some(id) => get_ci(item, "value") == Some(id),
        None => holds(item, listed),
    }
}

/// After all operations: no empty objects or arrays left (they mean unassigned, RFC 7643
/// §2.5), and `schemas` naming the extension exactly when the resource has its data.
pub(super) fn tidy(resource: &mut Map<String, Value>, rt: &ResourceType) {
    let mut schemas = vec![Value::from(rt.schema.id)];
    for extension in rt.extensions {
        let Some(key) = key_ci(resource, extension.id) else {
            continue;
        };
        let keep = match resource.get_mut(&key) {
            Some(Value::Object(members)) => {
                drop_unassigned(members);
                !members.is_empty()
            }
            _ => false,
        };
        if keep {
            schemas.push(Value::from(extension.id));
        } else {
            resource.remove(&key);
        }
    }
    remove_ci(resource, "schemas");
    drop_unassigned(resource);
    resource.insert("schemas".to_owned(), Value::Array(schemas));
}

fn drop_unassigned(members: &mut Map<String, Value>) {
    for value in members.values_mut() {
        if let Value::Array(items) = value {
            items.retain(is_present);
        }
    }
    members.retain(|_, value| is_present(value));
}
