//! SCIM's discovery endpoints (RFC 7644 4), which need no credential: what this service
//! supports, exactly; `/Me`, which it does not; a SCIM 404 for any other path under `/scim/v2`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use http::StatusCode;
use serde_json::{json, Value};

use super::answers::{base, error_response, scim_json};
use crate::domain::scim::schema::{ENTERPRISE_USER, GROUP, GROUP_RESOURCE, USER, USER_RESOURCE};
use crate::domain::scim::{service_provider_config, ScimError, LIST_RESPONSE_SCHEMA};
use crate::services::Services;

#[utoipa::path(get, path = "/scim/v2/ServiceProviderConfig", tag = "scim",
    responses((status = 200, description = "What this service supports", content_type = "application/scim+json")))]
pub async fn service_provider(State(services): State<Arc<Services>>) -> Response {
    scim_json(
        StatusCode::OK,
        &service_provider_config(&base(&services), None),
    )
}

fn list_of(resources: Vec<Value>) -> Value {
    json!({
        "schemas": [LIST_RESPONSE_SCHEMA],
        "totalResults": resources.len(),
        "startIndex": 1,
        "itemsPerPage": resources.len(),
        "Resources": resources,
    })
}

#[utoipa::path(get, path = "/scim/v2/ResourceTypes", tag = "scim",
    responses((status = 200, description = "User and Group", content_type = "application/scim+json")))]
pub async fn resource_types(State(services): State<Arc<Services>>) -> Response {
    let base = base(&services);
    let types = vec![USER_RESOURCE.to_json(&base), GROUP_RESOURCE.to_json(&base)];
    scim_json(StatusCode::OK, &list_of(types))
}

#[utoipa::path(get, path = "/scim/v2/ResourceTypes/{name}", tag = "scim", params(("name" = String, Path)),
    responses((status = 200, content_type = "application/scim+json"), (status = 404)))]
pub async fn resource_type(
    State(services): State<Arc<Services>>,
    Path(name): Path<String>,
) -> Response {
    let base = base(&services);
    match name.as_str() {
        "User" => scim_json(StatusCode::OK, &USER_RESOURCE.to_json(&base)),
        "Group" => scim_json(StatusCode::OK, &GROUP_RESOURCE.to_json(&base)),
        _ => error_response(&ScimError::new(404, None, "no such resource type")),
    }
}

#[utoipa::path(get, path = "/scim/v2/Schemas", tag = "scim",
    responses((status = 200, description = "The User, enterprise User and Group schemas, as supported", content_type = "application/scim+json")))]
pub async fn schemas(State(services): State<Arc<Services>>) -> Response {
    let base = base(&services);
    let all = [&USER, &ENTERPRISE_USER, &GROUP].map(|schema| schema.to_json(&base));
    scim_json(StatusCode::OK, &list_of(all.to_vec()))
}

#[utoipa::path(get, path = "/scim/v2/Schemas/{id}", tag = "scim", params(("id" = String, Path)),
    responses((status = 200, content_type = "application/scim+json"), (status = 404)))]
pub async fn schema(State(services): State<Arc<Services>>, Path(id): Path<String>) -> Response {
    let base = base(&services);
    match [&USER, &ENTERPRISE_USER, &GROUP]
        .into_iter()
        .find(|schema| schema.id == id)
    {
        Some(schema) => scim_json(StatusCode::OK, &schema.to_json(&base)),
        None => error_response(&ScimError::new(404, None, "no such schema")),
    }
}

#[utoipa::path(get, path = "/scim/v2/Me", tag = "scim",
    responses((status = 501, description = "Not implemented: a provisioning client is no user", content_type = "application/scim+json")))]
pub async fn me() -> Response {
    error_response(&ScimError::new(501, None, "/Me is not supported"))
}

/// Where every SCIM route lives.
pub(crate) const BASE_PATH: &str = "/scim/v2/";

/// Any other path under [`BASE_PATH`]: a SCIM 404, not the service's JSON one.
pub(crate) fn no_such_endpoint() -> Response {
    error_response(&ScimError::new(404, None, "no such SCIM endpoint"))
}
