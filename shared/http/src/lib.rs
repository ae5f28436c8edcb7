//! The HTTP layer (crate `token-http`): the routers. The layers below are reached under the
//! names their paths had in one crate (`crate::grants`, `crate::store`, …).
//!
//! The HTTP routers. Each Lambda function serves one; the local server serves them all.
//!
//! Each router is one list of operations (`routing`), made with [`operation!`] from handlers
//! carrying `#[utoipa::path]` (never axum's `route`): the router serves each at the path and
//! methods of its `#[utoipa::path]`, and the OpenAPI document describes the same list, so a
//! route cannot exist without its document. Serving builds no description (the functions'
//! cold start); the document is built on the first `GET /openapi.json`. A second path for
//! the same operation is added with [`Operation::also_at`], which documents it too.
//!
//! [`Operation::also_at`]: routing::Operation::also_at

mod account;
mod authorize;
mod basic;
mod bearer;
mod body;
mod client_request;
mod client_secrets;
mod company;
mod connections;
mod cookies;
mod device;
mod dpop;
pub mod error_response;
mod exchange;
mod federation;
mod introspect;
mod logout;
pub mod metadata;
mod observability;
pub mod openapi;
mod otp;
pub mod pages;
mod par;
mod params;
mod passkeys;
mod registration;
mod revoke;
mod routing;
mod saml;
mod scim;
pub mod source_address;
pub mod token;
mod userinfo;

use std::sync::Arc;

use token_core::{
    auth, errors, flows, grants, issuance, jwt, measure, requests, services, signing,
};
use token_domain as domain;
use token_domain::{jose, secrets};
#[cfg(test)]
use token_store as store;

use axum::Router;
use http::StatusCode;
use tower_http::catch_panic::CatchPanicLayer;

use crate::error_response::ErrorResponse;
use crate::errors::ServerError;
use crate::services::Services;
use error_response::http_error_response;
use routing::{operation, Routes};

pub use observability::CORRELATION_ID;

/// The token function: `/v0/token`, its alias `/oauth2/v0/token`, and the JWK Set.
pub fn token_router(services: Arc<Services>) -> Router {
    serve(token_routes(), services)
}

/// The exchange function: the old-token exchange.
pub fn exchange_router(services: Arc<Services>) -> Router {
    serve(exchange_routes(), services)
}

/// The company-authtoken function: company auth tokens and the Connect redirect.
pub fn company_router(services: Arc<Services>) -> Router {
    serve(company_routes(), services)
}

/// The registration function: `/oauth2/v0/register` and the registered clients' management.
pub fn registration_router(services: Arc<Services>) -> Router {
    serve(registration_routes(), services)
}

/// The scim function: SCIM 2.0 provisioning at `/scim/v2`.
pub fn scim_router(services: Arc<Services>) -> Router {
    serve(scim_routes(), services)
}

/// Every route of every function, for the local all-in-one server, and `GET /metrics` read
/// through `scrape` (the Prometheus exporter, `token_adapters::metrics::prometheus`).
pub fn local_router(services: Arc<Services>, scrape: Arc<dyn measure::Scrape>) -> Router {
    // Added after the shared parts: a scrape is neither counted nor in the OpenAPI document
    // (an operator's route, not the API; docs/decisions.md, Metrics and traces).
    let metrics = axum::routing::get(move || prometheus_metrics(scrape.clone()));
    serve(every_route(), services).route("/metrics", metrics)
}

/// Every metric in the Prometheus text format (version 0.0.4).
async fn prometheus_metrics(scrape: Arc<dyn measure::Scrape>) -> axum::response::Response {
    use axum::response::IntoResponse;
    match scrape.render() {
        Some(text) => (
            [(http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            text,
        )
            .into_response(),
        None => http_error_response(StatusCode::NOT_FOUND, "not_found", "no such endpoint"),
    }
}

/// What `GET /openapi.json` describes: every function's routes.
fn every_route() -> Routes {
    token_routes()
        .merge(exchange_routes())
        .merge(company_routes())
        .merge(registration_routes())
        .merge(scim_routes())
}

fn scim_routes() -> Routes {
    Routes::new()
        .add(operation!(scim::list_users))
        .add(operation!(scim::create_user))
        .add(operation!(scim::search_users))
        .add(operation!(scim::get_user))
        .add(operation!(scim::replace_user))
        .add(operation!(scim::patch_user))
        .add(operation!(scim::delete_user))
        .add(operation!(scim::list_groups))
        .add(operation!(scim::create_group))
        .add(operation!(scim::search_groups))
        .add(operation!(scim::get_group))
        .add(operation!(scim::replace_group))
        .add(operation!(scim::patch_group))
        .add(operation!(scim::delete_group))
        .add(operation!(scim::bulk))
        .add(operation!(scim::search_all))
        .add(operation!(scim::service_provider))
        .add(operation!(scim::resource_types))
        .add(operation!(scim::resource_type))
        .add(operation!(scim::schemas))
        .add(operation!(scim::schema))
        .add(operation!(scim::me))
}

fn token_routes() -> Routes {
    use metadata::paths;
    Routes::new()
        .add(operation!(token::token))
        .add(operation!(token::token).also_at(paths::TOKEN, "oauth2_token"))
        .add(operation!(token::jwks))
        .add(operation!(token::jwks).also_at(paths::JWKS, "oauth2_jwks"))
        .add(operation!(otp::request))
        .add(operation!(device::authorize_device))
        .add(operation!(device::page::show))
        .add(operation!(device::page::act))
        .add(operation!(authorize::start))
        .add(operation!(authorize::submit))
        .add(operation!(par::push))
        // Revocation, introspection, discovery, Concur's connections, and the OpenAPI document
        // (here, so that every router the local server merges serves it).
        .add(operation!(revoke::revoke))
        .add(operation!(introspect::introspect))
        .add(operation!(connections::delete_connections))
        .add(operation!(metadata::oauth_metadata))
        .add(operation!(metadata::openid_configuration))
        .add(operation!(openapi::openapi_json))
        // OpenID Connect: userinfo and RP-initiated logout.
        .add(operation!(userinfo::get_userinfo))
        .add(operation!(userinfo::post_userinfo))
        .add(operation!(logout::get_logout))
        .add(operation!(logout::post_logout))
        // The account page: sessions and connected apps.
        .add(operation!(account::show))
        .add(operation!(account::act))
        // Company identity providers: where an OpenID Provider sends the browser back.
        .add(operation!(federation::oidc_callback))
        .add(operation!(federation::oidc_logged_out))
        // Company identity providers over SAML 2.0: our metadata, the assertion consumer
        // service and the single logout service.
        .add(operation!(saml::saml_metadata))
        .add(operation!(saml::saml_acs))
        .add(operation!(saml::saml_slo))
        .add(operation!(saml::saml_slo_post))
        // Passkeys: the pages' script and the options of its ceremonies.
        .add(operation!(passkeys::script))
        .add(operation!(passkeys::sign_in))
        .add(operation!(passkeys::registration))
        // Concur's secrets API for the app itself.
        .add(operation!(client_secrets::list))
        .add(operation!(client_secrets::add))
        .add(operation!(client_secrets::revoke))
}

/// Dynamic client registration (RFC 7591) and its management (RFC 7592): a function of its own
/// on Lambda, the only one allowed to write whole client items.
fn registration_routes() -> Routes {
    Routes::new()
        .add(operation!(registration::register))
        .add(operation!(registration::read))
        .add(operation!(registration::update))
        .add(operation!(registration::delete))
}

fn exchange_routes() -> Routes {
    Routes::new().add(operation!(exchange::exchange))
}

fn company_routes() -> Routes {
    Routes::new()
        .add(operation!(company::auth_token))
        .add(operation!(company::auth_token).also_at(
            company::PATH_WITHOUT_SLASH,
            "company_auth_token_without_slash",
        ))
}

/// The routes with their services and the parts every router shares.
fn serve(routes: Routes, services: Arc<Services>) -> Router {
    let https = services.geolocation().is_https();
    finish(routes.served().with_state(services), https)
}

/// The parts every router shares: JSON 404/405 bodies (SCIM errors under `/scim/v2`), a panic answered as any server failure,
/// the request middleware (outermost, so that a panic's 500 is logged and carries the
/// correlation id and cache headers like every response), and HSTS when served over HTTPS.
fn finish(router: Router, https: bool) -> Router {
    let router = router
        .fallback(|uri: http::Uri| async move {
            // A SCIM client reads SCIM errors, under /scim/v2 too (RFC 7644 3.12).
            if uri.path().starts_with(scim::BASE_PATH) {
                scim::no_such_endpoint()
            } else {
                http_error_response(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
            }
        })
        .method_not_allowed_fallback(|| async {
            http_error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalid_request",
                "method not allowed",
            )
        })
        .layer(CatchPanicLayer::custom(answer_panic))
        .layer(axum::middleware::from_fn(observability::request_context));
    if https {
        router.layer(axum::middleware::map_response(strict_transport_security))
    } else {
        router
    }
}

/// One year, subdomains included: a browser that once reached the service over HTTPS never
/// sends a cookie or a password to it in the clear (RFC 6797). Only on HTTPS deployments: the
/// header means nothing over plain HTTP, and the local server is plain HTTP on loopback.
pub const STRICT_TRANSPORT_SECURITY: &str = "max-age=31536000; includeSubDomains";

async fn strict_transport_security(
    mut response: axum::response::Response,
) -> axum::response::Response {
    response.headers_mut().insert(
        http::header::STRICT_TRANSPORT_SECURITY,
        http::HeaderValue::from_static(STRICT_TRANSPORT_SECURITY),
    );
    response
}

/// A handler's panic: the 500 of every server failure, the panic's message in the log only.
fn answer_panic(payload: Box<dyn std::any::Any + Send + 'static>) -> axum::response::Response {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    ServerError::internal_because("a request handler panicked", message).into_response()
}

#[cfg(test)]
mod tests;
