//! PATCH paths (RFC 7644 §3.5.2: `PATH = attrPath / valuePath [subAttr]`), parsed with the
//! filter language's tokenizer and parser and checked against the resource type.

use std::fmt;

use super::filter::{check::check_value_filter, AttrPath, Filter, Parser};
use super::lexer::Token;
use super::schema::{Resolved, ResourceType, Schema};
use super::{error::echo, ScimError, ScimType};

/// `members[value eq "2819c223"]`, `emails[type eq "work"].value`, `name.familyName`,
/// `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value`, and an
/// extension's URN alone, its whole object (`attr` is then [`AttrPath::schema`], see
/// [`PatchPath::extension`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchPath {
    pub attr: AttrPath,
    /// The value filter, whose paths name sub-attributes of `attr`.
    pub filter: Option<Filter>,
    /// The sub-attribute after the value filter.
    pub sub: Option<String>,
}

impl PatchPath {
    /// The extension whose whole object the path targets
    /// (`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`), as [`parse`] returns it.
    pub fn extension(&self, rt: &ResourceType) -> Option<&'static Schema> {
        let urn = self.attr.schema_urn()?;
        if self.filter.is_some() || self.sub.is_some() {
            return None;
        }
        rt.extension(urn)
    }

    /// The attribute the path targets and its sub-attribute, whether written as `name.sub` or
    /// after a value filter; `None` for an extension's whole object, which is no attribute.
    pub fn target(&self, rt: &ResourceType) -> Option<Resolved> {
        match &self.sub {
            Some(sub) => rt.resolve(&AttrPath {
                sub: Some(sub.clone()),
                ..self.attr.clone()
            }),
            None => rt.resolve(&self.attr),
        }
    }
}

impl fmt::Display for PatchPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.attr)?;
        if self.filter.is_some() {
            f.write_str("[…]")?;
        }
        if let Some(sub) = &self.sub {
            write!(f, ".{sub}")?;
        }
        Ok(())
    }
}

/// Parses and checks a PATCH path; every error, a malformed value filter included, is 400
/// `invalidPath` (RFC 7644 §3.5.2).
pub fn parse(text: &str, rt: &ResourceType) -> Result<PatchPath, ScimError> {
    parse_unchecked(text)
        .and_then(|path| check(path, rt))
        .map_err(|error| ScimError::bad_request(ScimType::InvalidPath, error.detail))
}

fn parse_unchecked(text: &str) -> Result<PatchPath, ScimError> {
    let mut parser = Parser::new(text)?;
    let attr = parser.attr_path()?;
    let mut filter = None;
    let mut sub = None;
    if parser.peek() == Some(&Token::LBracket) {
        filter = match parser.value_path(attr.clone())? {
            Filter::ValuePath(_, inner) => Some(*inner),
            other => Some(other),
        };
        if parser.eat(&Token::Dot) {
            let name = parser.attr_path()?;
            if name.urn.is_some() || name.sub.is_some() {
                return Err(invalid(format!(
                    "invalid sub-attribute {}",
                    echo(&name.to_string())
                )));
            }
            sub = Some(name.name);
        }
    }
    parser.end()?;
    Ok(PatchPath { attr, filter, sub })
}

fn check(path: PatchPath, rt: &ResourceType) -> Result<PatchPath, ScimError> {
    // An extension's URN alone names its object (RFC 7644 §3.10), when nothing follows it.
    if path.filter.is_none() && path.sub.is_none() && path.target(rt).is_none() {
        if let Some(extension) = rt.extension_root(&path.attr) {
            return Ok(PatchPath {
                attr: AttrPath::schema(extension.id),
                filter: None,
                sub: None,
            });
        }
    }
    let unknown = || invalid(format!("unknown attribute {}", echo(&path.to_string())));
    let resolved = path.target(rt).ok_or_else(unknown)?;
    if let Some(filter) = &path.filter {
        if !(resolved.attribute.is_complex() && resolved.attribute.multi_valued) {
            return Err(invalid(format!(
                "{} is not a multi-valued complex attribute",
                echo(&path.attr.to_string())
            )));
        }
        check_value_filter(filter, resolved.attribute)?;
    }
    Ok(path)
}

fn invalid(detail: String) -> ScimError {
    ScimError::bad_request(ScimType::InvalidPath, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scim::filter::CompareOp;
    use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
    use crate::scim::ENTERPRISE_USER_SCHEMA;
    use serde_json::json;

    fn user(text: &str) -> Result<PatchPath, ScimError> {
        parse(text, &USER_RESOURCE)
    }

    fn kind(result: Result<PatchPath, ScimError>) -> Option<ScimType> {
        result.err().and_then(|error| error.scim_type)
    }

    #[test]
    fn a_plain_attribute() {
        let path = user("displayName").unwrap();
        assert_eq!(path.attr, AttrPath::new("displayName"));
        assert!(path.filter.is_none() && path.sub.is_none());
    }

    #[test]
    fn a_sub_attribute() {
        let path = user("name.familyName").unwrap();
        assert_eq!(path.attr.sub.as_deref(), Some("familyName"));
        let target = path.target(&USER_RESOURCE).unwrap();
        assert_eq!(target.leaf().name, "familyName");
    }

    #[test]
    fn a_value_filter() {
        let path = parse("members[value eq \"2819c223\"]", &GROUP_RESOURCE).unwrap();
        assert_eq!(
            path.filter,
            Some(Filter::Compare(
                AttrPath::new("value"),
                CompareOp::Eq,
                json!("2819c223")
            ))
        );
        assert!(path.sub.is_none());
    }

    #[test]
    fn a_value_filter_and_sub_attribute() {
        let path = user("emails[type eq \"work\"].value").unwrap();
        assert!(path.filter.is_some());
        assert_eq!(path.sub.as_deref(), Some("value"));
        assert_eq!(path.target(&USER_RESOURCE).unwrap().leaf().name, "value");
    }

    #[test]
    fn extension_paths() {
        let manager = user(&format!("{ENTERPRISE_USER_SCHEMA}:manager")).unwrap();
        assert_eq!(manager.attr.urn.as_deref(), Some(ENTERPRISE_USER_SCHEMA));
        assert_eq!(manager.attr.name, "manager");
        let value = user(&format!("{ENTERPRISE_USER_SCHEMA}:manager.value")).unwrap();
        assert_eq!(value.attr.sub.as_deref(), Some("value"));
        assert!(user(&format!("{ENTERPRISE_USER_SCHEMA}:department")).is_ok());
    }

    #[test]
    fn an_extension_urn_alone() {
        let path = user(ENTERPRISE_USER_SCHEMA).unwrap();
        assert_eq!(path.attr, AttrPath::schema(ENTERPRISE_USER_SCHEMA));
        assert_eq!(path.attr.schema_urn(), Some(ENTERPRISE_USER_SCHEMA));
        assert_eq!(
            path.extension(&USER_RESOURCE).unwrap().id,
            ENTERPRISE_USER_SCHEMA
        );
        assert!(path.target(&USER_RESOURCE).is_none());
        assert_eq!(path.to_string(), ENTERPRISE_USER_SCHEMA);
        let upper = user(&ENTERPRISE_USER_SCHEMA.to_ascii_uppercase()).unwrap();
        assert_eq!(upper, path, "read in the schema's case");
        let attribute = user(&format!("{ENTERPRISE_USER_SCHEMA}:department")).unwrap();
        assert!(attribute.extension(&USER_RESOURCE).is_none());
        for text in [
            format!("{ENTERPRISE_USER_SCHEMA}[department eq \"x\"]"),
            format!("{ENTERPRISE_USER_SCHEMA}."),
            format!("{ENTERPRISE_USER_SCHEMA}:"),
            "urn:ietf:params:scim:schemas:core:2.0:Group".to_owned(),
        ] {
            assert_eq!(kind(user(&text)), Some(ScimType::InvalidPath), "{text}");
        }
        assert_eq!(
            kind(parse(ENTERPRISE_USER_SCHEMA, &GROUP_RESOURCE)),
            Some(ScimType::InvalidPath)
        );
    }

    #[test]
    fn a_bare_urn_is_no_filter() {
        use crate::scim::filter::check::parse_checked;
        for text in [
            format!("{ENTERPRISE_USER_SCHEMA} pr"),
            format!("{ENTERPRISE_USER_SCHEMA} eq \"x\""),
            format!("emails[{ENTERPRISE_USER_SCHEMA} pr]"),
        ] {
            assert_eq!(
                parse_checked(&text, &USER_RESOURCE)
                    .err()
                    .and_then(|error| error.scim_type),
                Some(ScimType::InvalidFilter),
                "{text}"
            );
        }
    }

    #[test]
    fn names_are_case_insensitive() {
        assert!(user("EMAILS[TYPE EQ \"work\"].VALUE").is_ok());
        assert!(user("Name.GivenName").is_ok());
    }

    #[test]
    fn errors_are_invalid_path() {
        for text in [
            "",
            "nickName",
            "name.nickName",
            "emails[type eq]",
            "emails[type eq \"work\"",
            "emails[nothing eq \"work\"]",
            "name[givenName eq \"x\"]",
            "emails[type eq \"work\"].value.more",
            "emails[type eq \"work\"] trailing",
            "emails.value[type eq \"work\"]",
            "urn:unknown:schema:department",
        ] {
            assert_eq!(kind(user(text)), Some(ScimType::InvalidPath), "{text}");
        }
        assert_eq!(
            kind(user(&format!("emails[type eq \"{}\"]", "x".repeat(5000)))),
            Some(ScimType::InvalidPath)
        );
    }
}
