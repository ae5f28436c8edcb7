//! The `attributes` and `excludedAttributes` parameters (RFC 7644 §3.9) and the `returned`
//! characteristic (RFC 7643 §2.4) applied to a resource about to be returned.

use serde_json::{Map, Value};

use super::error::echo;
use super::filter::AttrPath;
use super::schema::{find, Attribute, Resolved, ResourceType, Returned, SchemaLocation};
use super::{ScimError, ScimType};

/// The longest attribute list accepted, in bytes (as for filters).
pub const MAX_ATTRIBUTE_LIST_BYTES: usize = 4096;

/// Parses a comma-separated list of attribute paths (RFC 7644 §3.10 notation, URN prefixes
/// allowed; an extension's URN alone names all its attributes, as [`AttrPath::schema`]). A malformed entry is 400 `invalidValue`. A well-formed name the resource type does
/// not have is left out: RFC 7644 §3.9 gives no error for it, and the big provisioning clients
/// ask for attributes of schemas they assume, which would otherwise fail whole requests.
pub fn parse_attribute_list(text: &str, rt: &ResourceType) -> Result<Vec<AttrPath>, ScimError> {
    if text.len() > MAX_ATTRIBUTE_LIST_BYTES {
        return Err(ScimError::bad_request(
            ScimType::InvalidValue,
            format!("the attribute list is longer than {MAX_ATTRIBUTE_LIST_BYTES} bytes"),
        ));
    }
    let mut paths = Vec::new();
    for entry in text
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
    {
        let path = AttrPath::parse(entry).ok_or_else(|| {
            ScimError::bad_request(
                ScimType::InvalidValue,
                format!("invalid attribute name {}", echo(entry)),
            )
        })?;
        if rt.resolve(&path).is_some() {
            paths.push(path);
        } else if let Some(extension) = rt.extension_root(&path) {
            // The extension's URN alone: its whole object (RFC 7644 §3.10).
            paths.push(AttrPath::schema(extension.id));
        }
    }
    Ok(paths)
}

/// The resource as it may be returned:
///
/// - `returned: always` (`id`, `schemas`) is always there, `never` (`password`) never;
/// - with `attributes`, only the attributes (or sub-attributes) it names, plus the `always`
///   ones; a `request` attribute only when named;
/// - otherwise the `default` ones, minus those `excludedAttributes` names;
/// - when both are given, `excludedAttributes` then removes from what `attributes` kept
///   (RFC 7644 §3.9 does not say how the two combine; this never returns an excluded one).
pub fn project(
    resource: &Value,
    rt: &ResourceType,
    attributes: &[AttrPath],
    excluded: &[AttrPath],
) -> Value {
    let Some(object) = resource.as_object() else {
        return Value::Object(Map::new());
    };
    let selection = Selection {
        attributes: attributes
            .iter()
            .filter_map(|path| rt.resolve(path))
            .collect(),
        excluded: excluded
            .iter()
            .filter_map(|path| rt.resolve(path))
            .collect(),
        extensions: whole_extensions(attributes, rt),
        excluded_extensions: whole_extensions(excluded, rt),
        restricted: !attributes.is_empty(),
    };
    let mut out = Map::new();
    for (key, value) in object {
        if key.eq_ignore_ascii_case("schemas") {
            out.insert("schemas".to_owned(), value.clone());
            continue;
        }
        if let Some(extension) = rt.extension(key) {
            let Some(members) = value.as_object() else {
                continue;
            };
            let location = SchemaLocation::Extension(extension.id);
            let mut kept = Map::new();
            for (name, value) in members {
                if let Some(attribute) = find(extension.attributes, name) {
                    if let Some(value) = selection.project(location, attribute, value) {
                        kept.insert(attribute.name.to_owned(), value);
                    }
                }
            }
            if !kept.is_empty() {
                out.insert(extension.id.to_owned(), Value::Object(kept));
            }
            continue;
        }
        let resolved = rt.resolve(&AttrPath::new(key));
        if let Some(resolved) = resolved.filter(|resolved| resolved.extension().is_none()) {
            if let Some(value) = selection.project(resolved.location, resolved.attribute, value) {
                out.insert(resolved.attribute.name.to_owned(), value);
            }
        }
    }
    Value::Object(out)
}

/// The extensions the list names whole, by their URN alone.
fn whole_extensions(list: &[AttrPath], rt: &ResourceType) -> Vec<SchemaLocation> {
    list.iter()
        .filter(|path| path.schema_urn().is_some())
        .filter_map(|path| rt.extension_root(path))
        .map(|extension| SchemaLocation::Extension(extension.id))
        .collect()
}

struct Selection {
    attributes: Vec<Resolved>,
    excluded: Vec<Resolved>,
    /// Extensions named whole: their `default` attributes, as naming a complex attribute gives
    /// its `default` sub-attributes.
    extensions: Vec<SchemaLocation>,
    excluded_extensions: Vec<SchemaLocation>,
    restricted: bool,
}

/// Which sub-attributes of an attribute to keep.
enum Keep {
    All,
    Only(Vec<&'static str>),
}

fn names(
    list: &[Resolved],
    location: SchemaLocation,
    attribute: &Attribute,
) -> Vec<Option<&'static str>> {
    list.iter()
        .filter(|resolved| {
            resolved.location == location && std::ptr::eq(resolved.attribute, attribute)
        })
        .map(|resolved| resolved.sub.map(|sub| sub.name))
        .collect()
}

impl Selection {
    fn project(
        &self,
        location: SchemaLocation,
        attribute: &'static Attribute,
        value: &Value,
    ) -> Option<Value> {
        match attribute.returned {
            Returned::Never => return None,
            Returned::Always => return Some(value.clone()),
            Returned::Default | Returned::Request => {}
        }
        let mut named = names(&self.attributes, location, attribute);
        if attribute.returned == Returned::Default && self.extensions.contains(&location) {
            named.push(None);
        }
        let keep = if self.restricted {
            if named.is_empty() {
                return None;
            }
            if named.contains(&None) {
                Keep::All
            } else {
                Keep::Only(named.into_iter().flatten().collect())
            }
        } else {
            if attribute.returned == Returned::Request {
                return None;
            }
            Keep::All
        };
        let excluded = names(&self.excluded, location, attribute);
        if excluded.contains(&None) || self.excluded_extensions.contains(&location) {
            return None;
        }
        let excluded: Vec<&str> = excluded.into_iter().flatten().collect();
        if !attribute.is_complex() {
            return Some(value.clone());
        }
        match value {
            Value::Array(items) => {
                let items: Vec<Value> = items
                    .iter()
                    .filter_map(|item| sub_attributes(attribute, item, &keep, &excluded))
                    .collect();
                (!items.is_empty()).then_some(Value::Array(items))
            }
            other => sub_attributes(attribute, other, &keep, &excluded),
        }
    }
}

fn sub_attributes(
    attribute: &'static Attribute,
    value: &Value,
    keep: &Keep,
    excluded: &[&str],
) -> Option<Value> {
    let members = value.as_object()?;
    let mut out = Map::new();
    for (name, value) in members {
        let Some(sub) = attribute.sub_attribute(name) else {
            continue;
        };
        let wanted = match sub.returned {
            Returned::Never => false,
            Returned::Always => true,
            Returned::Default | Returned::Request => {
                let named = match keep {
                    Keep::All => sub.returned == Returned::Default,
                    Keep::Only(names) => names.contains(&sub.name),
                };
                named && !excluded.contains(&sub.name)
            }
        };
        if wanted {
            out.insert(sub.name.to_owned(), value.clone());
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

#[cfg(test)]
mod tests;
