//! `POST /profile-service/v1/keys/principals/{COMPANY_ID}/authtoken/` (contract part 4).

use std::sync::Arc;

use axum::Router;

use crate::services::Services;

pub(super) fn routes(services: Arc<Services>) -> Router {
    Router::new().with_state(services)
}
