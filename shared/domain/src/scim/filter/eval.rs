//! Filter evaluation (RFC 7644 §3.4.2.2): names are case-insensitive, strings too unless the
//! attribute is `caseExact`, a multi-valued attribute matches when any of its values does.

use std::cmp::Ordering;

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{AttrPath, CompareOp, Filter};
use crate::scim::schema::{Attribute, AttributeType, ResourceType, SchemaLocation};
use crate::scim::value::{elements, get_ci, is_present};

/// What the paths of a filter are relative to: the resource, or one value of a multi-valued
/// complex attribute inside a value filter.
#[derive(Clone, Copy)]
enum Scope<'a> {
    Resource(&'a ResourceType),
    Value(Option<&'static Attribute>),
}

pub(super) fn matches(filter: &Filter, resource: &Value, rt: &ResourceType) -> bool {
    eval(filter, Scope::Resource(rt), resource)
}

/// Element-wise evaluation of a value filter against one value of `attribute`, for PATCH paths.
pub(crate) fn matches_value(filter: &Filter, value: &Value, attribute: &'static Attribute) -> bool {
    eval(filter, Scope::Value(Some(attribute)), value)
}

fn eval(filter: &Filter, scope: Scope<'_>, target: &Value) -> bool {
    match filter {
        Filter::And(left, right) => eval(left, scope, target) && eval(right, scope, target),
        Filter::Or(left, right) => eval(left, scope, target) || eval(right, scope, target),
        Filter::Not(inner) => !eval(inner, scope, target),
        Filter::Present(path) => {
            let (_, raw) = locate(scope, target, path);
            raw.is_some_and(|raw| match &path.sub {
                Some(sub) => elements(raw).any(|item| get_ci(item, sub).is_some_and(is_present)),
                None => is_present(raw),
            })
        }
        Filter::Compare(path, op, operand) => {
            let (attribute, raw) = locate(scope, target, path);
            let leaves = leaves(raw, attribute, path);
            let leaf = leaf_attribute(attribute, path);
            compare_any(&leaves, *op, operand, leaf)
        }
        Filter::ValuePath(path, inner) => {
            let (attribute, raw) = locate(scope, target, path);
            if matches!(scope, Scope::Value(_)) {
                return false;
            }
            raw.is_some_and(|raw| {
                elements(raw)
                    .filter(|item| item.is_object())
                    .any(|item| eval(inner, Scope::Value(attribute), item))
            })
        }
    }
}

/// The attribute the path names and its raw value in the target, if any.
fn locate<'v>(
    scope: Scope<'_>,
    target: &'v Value,
    path: &AttrPath,
) -> (Option<&'static Attribute>, Option<&'v Value>) {
    match scope {
        Scope::Resource(rt) => {
            let resolved = rt.resolve(&AttrPath {
                sub: None,
                ..path.clone()
            });
            let container = match (resolved.map(|resolved| resolved.location), &path.urn) {
                (Some(SchemaLocation::Extension(urn)), _) => get_ci(target, urn),
                (Some(_), _) | (None, None) => Some(target),
                (None, Some(urn)) => get_ci(target, urn),
            };
            (
                resolved.map(|resolved| resolved.attribute),
                container.and_then(|container| get_ci(container, &path.name)),
            )
        }
        Scope::Value(parent) => {
            if path.urn.is_some() {
                return (None, None);
            }
            (
                parent.and_then(|parent| parent.sub_attribute(&path.name)),
                get_ci(target, &path.name),
            )
        }
    }
}

/// The values a comparison looks at: the sub-attribute's when the path names one, a complex
/// attribute's `value` sub-attribute when it does not.
fn leaves<'v>(
    raw: Option<&'v Value>,
    attribute: Option<&'static Attribute>,
    path: &AttrPath,
) -> Vec<&'v Value> {
    let Some(raw) = raw else {
        return Vec::new();
    };
    let sub = match &path.sub {
        Some(sub) => Some(sub.as_str()),
        None if attribute.is_some_and(Attribute::is_complex) => Some("value"),
        None => None,
    };
    elements(raw)
        .filter_map(|item| match sub {
            Some(sub) => get_ci(item, sub),
            None => Some(item),
        })
        .filter(|value| !value.is_null())
        .collect()
}

fn leaf_attribute(
    attribute: Option<&'static Attribute>,
    path: &AttrPath,
) -> Option<&'static Attribute> {
    let attribute = attribute?;
    match &path.sub {
        Some(sub) => attribute.sub_attribute(sub),
        None if attribute.is_complex() => attribute.value_sub_attribute(),
        None => Some(attribute),
    }
}

/// `ne` is the negation of `eq` over all values, so that `a ne v` and `not (a eq v)` agree, and
/// a comparison with `null` asks whether the attribute is unassigned (RFC 7643 §2.5).
fn compare_any(
    leaves: &[&Value],
    op: CompareOp,
    operand: &Value,
    attribute: Option<&'static Attribute>,
) -> bool {
    if operand.is_null() {
        let assigned = leaves.iter().any(|leaf| is_present(leaf));
        return match op {
            CompareOp::Eq => !assigned,
            CompareOp::Ne => assigned,
            _ => false,
        };
    }
    match op {
        CompareOp::Ne => !leaves
            .iter()
            .any(|leaf| compare(leaf, CompareOp::Eq, operand, attribute)),
        _ => leaves
            .iter()
            .any(|leaf| compare(leaf, op, operand, attribute)),
    }
}

fn compare(
    leaf: &Value,
    op: CompareOp,
    operand: &Value,
    attribute: Option<&'static Attribute>,
) -> bool {
    let kind = attribute.map_or_else(
        || match operand {
            Value::Bool(_) => AttributeType::Boolean,
            Value::Number(_) => AttributeType::Decimal,
            _ => AttributeType::String,
        },
        |attribute| attribute.kind,
    );
    match kind {
        AttributeType::Boolean => match (leaf, operand) {
            (Value::Bool(left), Value::Bool(right)) => op == CompareOp::Eq && left == right,
            _ => false,
        },
        AttributeType::Integer | AttributeType::Decimal => {
            match (leaf.as_f64(), operand.as_f64()) {
                (Some(left), Some(right)) => left
                    .partial_cmp(&right)
                    .is_some_and(|order| ordered(op, order)),
                _ => false,
            }
        }
        AttributeType::DateTime => match (instant(leaf), instant(operand)) {
            (Some(left), Some(right)) => ordered(op, left.cmp(&right)),
            _ => false,
        },
        AttributeType::String
        | AttributeType::Binary
        | AttributeType::Reference
        | AttributeType::Complex => match (leaf, operand) {
            (Value::String(left), Value::String(right)) => {
                let case_exact = attribute.is_some_and(|attribute| attribute.case_exact);
                if case_exact {
                    compare_text(left, op, right)
                } else {
                    compare_text(&left.to_lowercase(), op, &right.to_lowercase())
                }
            }
            _ => false,
        },
    }
}

fn instant(value: &Value) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(value.as_str()?, &Rfc3339).ok()
}

fn ordered(op: CompareOp, order: Ordering) -> bool {
    match op {
        CompareOp::Eq => order == Ordering::Equal,
        CompareOp::Ne => order != Ordering::Equal,
        CompareOp::Gt => order == Ordering::Greater,
        CompareOp::Ge => order != Ordering::Less,
        CompareOp::Lt => order == Ordering::Less,
        CompareOp::Le => order != Ordering::Greater,
        CompareOp::Co | CompareOp::Sw | CompareOp::Ew => false,
    }
}

fn compare_text(left: &str, op: CompareOp, right: &str) -> bool {
    match op {
        CompareOp::Co => left.contains(right),
        CompareOp::Sw => left.starts_with(right),
        CompareOp::Ew => left.ends_with(right),
        _ => ordered(op, left.cmp(right)),
    }
}
