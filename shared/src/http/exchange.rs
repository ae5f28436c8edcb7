//! `POST /appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me` (contract part 3).

use std::sync::Arc;

use axum::Router;

use crate::services::Services;

pub(super) fn routes(services: Arc<Services>) -> Router {
    Router::new().with_state(services)
}
