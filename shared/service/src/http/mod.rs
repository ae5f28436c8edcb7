//! The HTTP routers. Each Lambda function serves one; the local server serves them all.

mod authorize;
mod body;
mod client_request;
mod company;
mod connections;
pub mod error_response;
mod exchange;
mod introspect;
pub mod metadata;
mod observability;
pub mod openapi;
mod otp;
pub mod pages;
mod params;
mod revoke;
pub mod token;

use std::sync::Arc;

use axum::routing::{delete, get, post};
use axum::Router;
use http::StatusCode;

use crate::services::Services;
use error_response::http_error_response;

pub use observability::CORRELATION_ID;

/// The token function: `/v0/token`, its alias `/oauth2/v0/token`, and the JWK Set.
pub fn token_router(services: Arc<Services>) -> Router {
    finish(token_routes(services))
}

/// The exchange function: the old-token exchange.
pub fn exchange_router(services: Arc<Services>) -> Router {
    finish(exchange::routes(services))
}

/// The company-authtoken function: company auth tokens and the Connect redirect.
pub fn company_router(services: Arc<Services>) -> Router {
    finish(company::routes(services))
}

/// Every route of every function, for the local all-in-one server.
pub fn local_router(services: Arc<Services>) -> Router {
    finish(
        token_routes(services.clone())
            .merge(exchange::routes(services.clone()))
            .merge(company::routes(services)),
    )
}

fn token_routes(services: Arc<Services>) -> Router {
    Router::new()
        .route("/v0/token", post(token::token))
        .route("/oauth2/v0/token", post(token::token))
        .route("/v0/token/jwks", get(token::jwks))
        .route("/oauth2/v0/otp", post(otp::request))
        .route(
            "/oauth2/v0/authorize",
            get(authorize::start).post(authorize::submit),
        )
        // Contract part 10: revocation, introspection, discovery, Concur's connections, and the
        // OpenAPI document (here, so that every router the local server merges serves it).
        .route(metadata::paths::REVOKE, post(revoke::revoke))
        .route(metadata::paths::INTROSPECT, post(introspect::introspect))
        .route(metadata::paths::JWKS, get(token::jwks))
        .route(
            metadata::paths::CONNECTIONS,
            delete(connections::delete_connections),
        )
        .route(
            metadata::paths::OAUTH_METADATA,
            get(metadata::oauth_metadata),
        )
        .route(
            metadata::paths::OPENID_CONFIGURATION,
            get(metadata::openid_configuration),
        )
        .route(metadata::paths::OPENAPI, get(openapi::openapi_json))
        .with_state(services)
}

/// The parts every router shares: JSON 404/405 bodies and the request middleware. Routes are
/// built without them so that the local server can merge all functions' routes first.
fn finish(router: Router) -> Router {
    router
        .fallback(|| async {
            http_error_response(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
        })
        .method_not_allowed_fallback(|| async {
            http_error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalid_request",
                "method not allowed",
            )
        })
        .layer(axum::middleware::from_fn(observability::request_context))
}
