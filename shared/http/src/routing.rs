//! The routers' lists of operations: one list per router, from which the router serves its
//! routes and the OpenAPI document describes them.
//!
//! Each entry is made by [`operation!`] from a handler carrying `#[utoipa::path]`, and can be
//! built two ways. Serving ([`Routes::served`]) takes only the handler's path and methods
//! (`utoipa::Path::path`, `methods`) and never builds its description: that is what the
//! functions do at every cold start. Documenting ([`Routes::document`]) registers it with
//! `utoipa_axum`'s `routes!`, which builds the operation's description and schemas: that is
//! done once, on the first `GET /openapi.json`. Both come from the same entry, so a route
//! still cannot be served without being documented, at the same path and methods (checked by
//! `every_served_route_is_documented_and_no_other` in `http::tests`).

use std::sync::Arc;

use axum::routing::MethodRouter;
use axum::Router;
use utoipa::openapi::HttpMethod;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

use crate::services::Services;

/// An operation served: its path, its methods and their handler.
pub(super) type Served = (String, Vec<HttpMethod>, MethodRouter<Arc<Services>>);

/// An operation as `utoipa_axum` registers it: its schemas, its path item and its handler.
pub(super) type Documented = UtoipaMethodRouter<Arc<Services>>;

/// One operation of a router, either way: built by [`operation!`].
#[derive(Clone, Copy)]
pub(super) struct Operation {
    served: fn() -> Served,
    documented: fn() -> Documented,
    /// Another path for the same handler, with its own operation id ([`Operation::also_at`]).
    alias: Option<(&'static str, &'static str)>,
}

impl Operation {
    pub(super) const fn new(served: fn() -> Served, documented: fn() -> Documented) -> Self {
        Self {
            served,
            documented,
            alias: None,
        }
    }

    /// The same operation, served and documented at `path` instead of its own, under its own
    /// operation id (an OpenAPI document needs one per operation). Listed beside the
    /// operation at its own path, it serves the handler at both.
    pub(super) const fn also_at(self, path: &'static str, operation_id: &'static str) -> Self {
        Self {
            alias: Some((path, operation_id)),
            ..self
        }
    }

    fn served(&self) -> Served {
        let (path, methods, router) = (self.served)();
        match self.alias {
            Some((alias, _)) => (alias.to_owned(), methods, router),
            None => (path, methods, router),
        }
    }

    fn documented(&self) -> Documented {
        let routes = (self.documented)();
        match self.alias {
            Some((path, operation_id)) => renamed(routes, path, operation_id),
            None => routes,
        }
    }
}

/// The operation of `handler` (a path to a function with `#[utoipa::path]`), for
/// [`Routes::add`]. `utoipa_axum`'s `routes!` resolves the handler's `__path_` type, in both
/// ways, the same way.
macro_rules! operation {
    ($($handler:ident)::+) => {
        $crate::routing::Operation::new(
            || {
                use ::utoipa_axum::PathItemExt as _;
                let path = ::utoipa_axum::routes!(@path [path()] of $($handler)::+);
                let methods = ::utoipa_axum::routes!(@path [methods()] of $($handler)::+);
                let router = methods
                    .iter()
                    .fold(::axum::routing::MethodRouter::new(), |router, method| {
                        router.on(method.to_method_filter(), $($handler)::+)
                    });
                (path, methods, router)
            },
            || ::utoipa_axum::routes!($($handler)::+),
        )
    };
}
pub(super) use operation;

/// A router's operations.
#[derive(Clone, Default)]
pub(super) struct Routes(Vec<Operation>);

impl Routes {
    pub(super) fn new() -> Self {
        Self::default()
    }

    pub(super) fn add(mut self, operation: Operation) -> Self {
        self.0.push(operation);
        self
    }

    pub(super) fn merge(mut self, other: Routes) -> Self {
        self.0.extend(other.0);
        self
    }

    /// The routes, without building their descriptions.
    pub(super) fn served(&self) -> Router<Arc<Services>> {
        self.served_each(|_, _| {})
    }

    /// As [`Routes::served`], telling `each` every path and its methods as they are routed.
    pub(super) fn served_each(
        &self,
        mut each: impl FnMut(&str, &[HttpMethod]),
    ) -> Router<Arc<Services>> {
        self.0.iter().fold(Router::new(), |router, operation| {
            let (path, methods, method_router) = operation.served();
            each(&path, &methods);
            router.route(&path, method_router)
        })
    }

    /// The routes' OpenAPI paths and schemas, as `utoipa_axum` registers them.
    pub(super) fn document(&self) -> utoipa::openapi::OpenApi {
        self.0
            .iter()
            .fold(OpenApiRouter::new(), |router, operation| {
                router.routes(operation.documented())
            })
            .into_openapi()
    }
}

/// `routes`' single operation at `path`, under `operation_id`.
fn renamed(routes: Documented, path: &str, operation_id: &str) -> Documented {
    let (schemas, documented, method_router) = routes;
    let mut paths = utoipa::openapi::path::Paths::new();
    for (_, mut item) in documented.paths {
        for operation in [&mut item.get, &mut item.post, &mut item.delete]
            .into_iter()
            .flatten()
        {
            operation.operation_id = Some(operation_id.to_owned());
        }
        paths.paths.insert(path.to_owned(), item);
    }
    (schemas, paths, method_router)
}
