//! Queries (`GET` with `filter`, `POST /.search`): pagination (RFC 7644 3.4.2.4), the list
//! response, and `attributes` / `excludedAttributes` (3.9).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::domain::scim::filter::{self, Filter};
use crate::domain::scim::projection::{parse_attribute_list, project};
use crate::domain::scim::schema::ResourceType;
use crate::domain::scim::{ScimError, ScimType, LIST_RESPONSE_SCHEMA};

/// The most resources one page holds (`count` is clamped to it).
pub const MAX_COUNT: usize = 200;
/// A page's size when the client asks for none.
pub const DEFAULT_COUNT: usize = 100;

/// A query's parameters, from the URL or a `SearchRequest` body.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListQuery {
    pub filter: Option<String>,
    pub start_index: Option<i64>,
    pub count: Option<i64>,
    #[serde(default, deserialize_with = "attribute_list")]
    pub attributes: Option<String>,
    #[serde(default, deserialize_with = "attribute_list")]
    pub excluded_attributes: Option<String>,
}

/// A `SearchRequest` gives the attribute lists as arrays, a URL as comma-separated text.
fn attribute_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::String(text)) => Some(text),
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => None,
    })
}

/// A query checked against its resource type.
pub(super) struct Checked {
    pub filter: Option<Filter>,
    /// 0-based.
    pub skip: usize,
    pub count: usize,
    projection: Projection,
}

/// What `attributes` and `excludedAttributes` asked for, checked.
pub(super) struct Projection {
    attributes: Vec<filter::AttrPath>,
    excluded: Vec<filter::AttrPath>,
    resource_type: &'static ResourceType,
}

impl Projection {
    pub fn parse(
        attributes: Option<&str>,
        excluded: Option<&str>,
        resource_type: &'static ResourceType,
    ) -> Result<Self, ScimError> {
        let list = |text: Option<&str>| match text.filter(|t| !t.trim().is_empty()) {
            Some(text) => parse_attribute_list(text, resource_type),
            None => Ok(Vec::new()),
        };
        Ok(Self {
            attributes: list(attributes)?,
            excluded: list(excluded)?,
            resource_type,
        })
    }

    pub fn apply(&self, resource: &Value) -> Value {
        project(
            resource,
            self.resource_type,
            &self.attributes,
            &self.excluded,
        )
    }
}

impl ListQuery {
    pub(super) fn check(&self, resource_type: &'static ResourceType) -> Result<Checked, ScimError> {
        let filter = match self.filter.as_deref().filter(|f| !f.trim().is_empty()) {
            Some(text) => Some(filter::parse_checked(text, resource_type)?),
            None => None,
        };
        // RFC 7644 3.4.2.4: a startIndex below 1 is 1, a negative count is 0.
        let skip = usize::try_from(self.start_index.unwrap_or(1).max(1) - 1).unwrap_or(0);
        let count = self
            .count
            .map_or(DEFAULT_COUNT, |count| {
                usize::try_from(count.max(0)).unwrap_or(0)
            })
            .min(MAX_COUNT);
        let projection = Projection::parse(
            self.attributes.as_deref(),
            self.excluded_attributes.as_deref(),
            resource_type,
        )?;
        Ok(Checked {
            filter,
            skip,
            count,
            projection,
        })
    }
}

impl Checked {
    /// The list response of one page of `resources` out of `total`.
    pub fn response(&self, resources: &[Value], total: usize) -> Value {
        let shown: Vec<Value> = resources
            .iter()
            .map(|resource| self.projection.apply(resource))
            .collect();
        json!({
            "schemas": [LIST_RESPONSE_SCHEMA],
            "totalResults": total,
            "startIndex": self.skip + 1,
            "itemsPerPage": shown.len(),
            "Resources": shown,
        })
    }
}

/// The body as JSON, or `invalidSyntax`.
pub(super) fn json_body(body: &[u8]) -> Result<Value, ScimError> {
    serde_json::from_slice(body)
        .map_err(|_| ScimError::bad_request(ScimType::InvalidSyntax, "the body is not JSON"))
}
