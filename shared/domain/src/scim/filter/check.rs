//! A filter checked against a resource type's schema: every attribute known, every operator
//! one that means something for its attribute's type (RFC 7644 §3.4.2.2).

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{parse, AttrPath, CompareOp, Filter};
use crate::scim::error::echo;
use crate::scim::lexer::invalid;
use crate::scim::schema::{Attribute, AttributeType, ResourceType};
use crate::scim::ScimError;

/// [`parse`], then 400 `invalidFilter` for an attribute the resource type does not have or an
/// operator its type does not support.
pub fn parse_checked(text: &str, rt: &ResourceType) -> Result<Filter, ScimError> {
    let filter = parse(text)?;
    check(&filter, Context::Resource(rt))?;
    Ok(filter)
}

/// Checks a value filter whose paths name sub-attributes of `attribute`.
pub(crate) fn check_value_filter(
    filter: &Filter,
    attribute: &'static Attribute,
) -> Result<(), ScimError> {
    check(filter, Context::Value(attribute))
}

#[derive(Clone, Copy)]
enum Context<'a> {
    Resource(&'a ResourceType),
    Value(&'static Attribute),
}

fn check(filter: &Filter, context: Context<'_>) -> Result<(), ScimError> {
    match filter {
        Filter::And(left, right) | Filter::Or(left, right) => {
            check(left, context)?;
            check(right, context)
        }
        Filter::Not(inner) => check(inner, context),
        Filter::Present(path) => resolve(context, path).map(|_| ()),
        Filter::Compare(path, op, value) => {
            let (attribute, sub) = resolve(context, path)?;
            let leaf = match sub {
                Some(sub) => sub,
                None if attribute.is_complex() && attribute.multi_valued => attribute
                    .value_sub_attribute()
                    .ok_or_else(|| complex_without_sub(path))?,
                None if attribute.is_complex() => return Err(complex_without_sub(path)),
                None => attribute,
            };
            check_operator(leaf, *op, value, path)
        }
        Filter::ValuePath(path, inner) => {
            let Context::Resource(_) = context else {
                return Err(invalid("a value filter cannot contain a value filter"));
            };
            let (attribute, sub) = resolve(context, path)?;
            if sub.is_some() || !attribute.is_complex() {
                return Err(invalid(format!(
                    "{} is not a complex attribute a value filter can select from",
                    echo(&path.to_string())
                )));
            }
            check(inner, Context::Value(attribute))
        }
    }
}

fn resolve(
    context: Context<'_>,
    path: &AttrPath,
) -> Result<(&'static Attribute, Option<&'static Attribute>), ScimError> {
    let found = match context {
        Context::Resource(rt) => rt
            .resolve(path)
            .map(|resolved| (resolved.attribute, resolved.sub)),
        Context::Value(parent) if path.urn.is_none() && path.sub.is_none() => {
            parent.sub_attribute(&path.name).map(|sub| (sub, None))
        }
        Context::Value(_) => None,
    };
    found.ok_or_else(|| invalid(format!("unknown attribute {}", echo(&path.to_string()))))
}

fn complex_without_sub(path: &AttrPath) -> ScimError {
    invalid(format!(
        "{} is complex: compare one of its sub-attributes",
        echo(&path.to_string())
    ))
}

fn check_operator(
    attribute: &Attribute,
    op: CompareOp,
    value: &Value,
    path: &AttrPath,
) -> Result<(), ScimError> {
    let ordering = matches!(
        op,
        CompareOp::Gt | CompareOp::Ge | CompareOp::Lt | CompareOp::Le
    );
    let substring = matches!(op, CompareOp::Co | CompareOp::Sw | CompareOp::Ew);
    let refused = if value.is_null() {
        ordering || substring
    } else {
        match attribute.kind {
            AttributeType::Boolean => ordering || substring || !value.is_boolean(),
            AttributeType::Binary => ordering || substring || !value.is_string(),
            AttributeType::Integer | AttributeType::Decimal => substring || !value.is_number(),
            AttributeType::DateTime => {
                substring
                    || value
                        .as_str()
                        .is_none_or(|text| OffsetDateTime::parse(text, &Rfc3339).is_err())
            }
            AttributeType::String | AttributeType::Reference => !value.is_string(),
            AttributeType::Complex => true,
        }
    };
    if refused {
        return Err(invalid(format!(
            "\"{}\" with a value of this type does not apply to {}",
            op.as_str(),
            echo(&path.to_string())
        )));
    }
    Ok(())
}
