//! `GET /openapi.json`: the OpenAPI 3.1 document of every endpoint. Nothing is described here:
//! each handler carries its `#[utoipa::path]`, each body type lives beside the code that builds
//! it, and each router (`http::mod`) is one list of operations that both serves its routes and
//! describes them here (`http::routing`). This module adds what belongs to the
//! whole document (its title, the bearer scheme) and serves it. `infra/fuzz-api.sh`
//! (schemathesis, every endpoint, every response checked against this document) fails if a
//! response ever leaves it.
//!
//! The authorization endpoint's pages are `text/html` strings: their content is for people.

use std::sync::OnceLock;

use axum::response::{IntoResponse, Response};
use axum::Json;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The bearer scheme of the endpoints called with an access token. Client authentication
/// (Basic or body) is described by the request bodies, since either form is accepted.
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// The document's own parts; the paths come from the routers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "OAuth 2.0 token service",
        description = "Drop-in replacement for SAP Concur's auth API. Every response carries \
                       Cache-Control: no-store (unless public), Pragma: no-cache and \
                       X-Correlation-Id; concur-correlationid is echoed when sent.",
    ),
    modifiers(&BearerScheme),
)]
struct ApiDoc;

/// The document of `routes`, with the title and the security schemes.
pub fn assemble(routes: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    ApiDoc::openapi().merge_from(routes)
}

/// The document of every route of every function, built once per process.
pub fn document() -> &'static serde_json::Value {
    static DOCUMENT: OnceLock<serde_json::Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let document = assemble(super::every_route().document());
        // Serialising a tree of strings, maps and numbers cannot fail.
        serde_json::to_value(document).expect("the OpenAPI document serialises")
    })
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "discovery", operation_id = "openapi",
    responses((status = 200, description = "This document", body = Object)))]
pub async fn openapi_json() -> Response {
    Json(document()).into_response()
}
