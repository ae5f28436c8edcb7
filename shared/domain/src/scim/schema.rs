//! Attribute characteristics (RFC 7643 §2) of the resources this service supports, as static
//! data: the one description that filters, PATCH paths, normalization, projection and the
//! discovery endpoints all read, so that the service describes exactly what it does.

use super::filter::AttrPath;

mod definitions;

pub use definitions::{
    COMMON_ATTRIBUTES, ENTERPRISE_USER, GROUP, GROUP_RESOURCE, USER, USER_RESOURCE,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributeType {
    String,
    Boolean,
    Decimal,
    Integer,
    DateTime,
    Binary,
    Reference,
    Complex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutability {
    ReadOnly,
    ReadWrite,
    Immutable,
    WriteOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returned {
    Always,
    Never,
    Default,
    Request,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uniqueness {
    None,
    Server,
    Global,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Attribute {
    pub name: &'static str,
    pub kind: AttributeType,
    pub multi_valued: bool,
    pub required: bool,
    pub case_exact: bool,
    pub mutability: Mutability,
    pub returned: Returned,
    pub uniqueness: Uniqueness,
    pub canonical_values: &'static [&'static str],
    pub reference_types: &'static [&'static str],
    pub sub_attributes: &'static [Attribute],
    pub description: &'static str,
}

impl Attribute {
    /// A sub-attribute by name; attribute names are case-insensitive (RFC 7643 §2.1).
    pub fn sub_attribute(&'static self, name: &str) -> Option<&'static Attribute> {
        find(self.sub_attributes, name)
    }

    pub fn is_complex(&self) -> bool {
        self.kind == AttributeType::Complex
    }

    /// What a filter compares when it names a multi-valued complex attribute without a
    /// sub-attribute: its `value` (RFC 7644 §3.4.2.2, "emails co ...").
    pub fn value_sub_attribute(&'static self) -> Option<&'static Attribute> {
        if self.is_complex() {
            self.sub_attribute("value")
        } else {
            None
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct Schema {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub attributes: &'static [Attribute],
}

#[derive(Debug, PartialEq, Eq)]
pub struct ResourceType {
    pub name: &'static str,
    pub endpoint: &'static str,
    pub description: &'static str,
    pub schema: &'static Schema,
    pub extensions: &'static [&'static Schema],
}

/// Where a resolved attribute lives: its schema, which also says where it is in the JSON form
/// (an extension's attributes are under the extension's URN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaLocation {
    Core,
    /// `id`, `externalId` and `meta` (RFC 7643 §3.1): top level, in no schema's document.
    Common,
    /// The extension's URN.
    Extension(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    pub location: SchemaLocation,
    pub attribute: &'static Attribute,
    pub sub: Option<&'static Attribute>,
}

impl Resolved {
    /// The attribute the path ends at.
    pub fn leaf(&self) -> &'static Attribute {
        self.sub.unwrap_or(self.attribute)
    }

    /// The key of the extension's object in the resource, for an extension attribute.
    pub fn extension(&self) -> Option<&'static str> {
        match self.location {
            SchemaLocation::Extension(urn) => Some(urn),
            SchemaLocation::Core | SchemaLocation::Common => None,
        }
    }

    /// Whether the path says the attribute or one of its sub-attributes is `readOnly`.
    pub fn is_read_only(&self) -> bool {
        self.attribute.mutability == Mutability::ReadOnly
            || self
                .sub
                .is_some_and(|sub| sub.mutability == Mutability::ReadOnly)
    }
}

pub(crate) fn find(attributes: &'static [Attribute], name: &str) -> Option<&'static Attribute> {
    attributes
        .iter()
        .find(|attribute| attribute.name.eq_ignore_ascii_case(name))
}

impl ResourceType {
    /// The extension with this URN (case-insensitive, as URNs' NID and "urn:" are).
    pub fn extension(&self, urn: &str) -> Option<&'static Schema> {
        self.extensions
            .iter()
            .copied()
            .find(|schema| schema.id.eq_ignore_ascii_case(urn))
    }

    /// The extension whose whole object the path names: its URN alone, as
    /// [`AttrPath::schema`] or as [`AttrPath::parse`] reads it (`urn:…:2.0` and `User`).
    pub fn extension_root(&self, path: &AttrPath) -> Option<&'static Schema> {
        match path.schema_urn() {
            Some(urn) => self.extension(urn),
            None => self.extension(&path.as_urn()?),
        }
    }

    /// An attribute by URN prefix or bare name, case-insensitively. A bare name is looked up in
    /// the core schema, then among the common attributes, then in the extensions in order.
    pub fn resolve(&self, path: &AttrPath) -> Option<Resolved> {
        let (location, attribute) = match &path.urn {
            Some(urn) if urn.eq_ignore_ascii_case(self.schema.id) => {
                self.bare(&path.name, false)?
            }
            Some(urn) => {
                let extension = self.extension(urn)?;
                (
                    SchemaLocation::Extension(extension.id),
                    find(extension.attributes, &path.name)?,
                )
            }
            None => self.bare(&path.name, true)?,
        };
        let sub = match &path.sub {
            Some(name) => Some(attribute.sub_attribute(name)?),
            None => None,
        };
        Some(Resolved {
            location,
            attribute,
            sub,
        })
    }

    fn bare(
        &self,
        name: &str,
        with_extensions: bool,
    ) -> Option<(SchemaLocation, &'static Attribute)> {
        if let Some(attribute) = find(self.schema.attributes, name) {
            return Some((SchemaLocation::Core, attribute));
        }
        if let Some(attribute) = find(COMMON_ATTRIBUTES, name) {
            return Some((SchemaLocation::Common, attribute));
        }
        if !with_extensions {
            return None;
        }
        self.extensions.iter().find_map(|extension| {
            find(extension.attributes, name)
                .map(|attribute| (SchemaLocation::Extension(extension.id), attribute))
        })
    }
}

#[cfg(test)]
mod tests;
