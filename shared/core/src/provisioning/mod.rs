//! SCIM 2.0 provisioning (RFC 7643, RFC 7644; docs/decisions.md, "SCIM provisioning"): a
//! company's provisioning client creates, changes and removes the company's users and groups.
//! The protocol's rules without I/O (filters, PATCH, schemas, projections) are the domain's
//! `scim` module; here are the caller's authentication, the operations on the store, and what
//! deprovisioning ends. No HTTP: each operation answers a [`ScimReply`] or a [`Failure`].

mod bulk;
mod caller;
mod deprovision;
mod groups;
mod listing;
mod render;
mod users;

pub use bulk::bulk;
pub use caller::{authenticate, Provisioner};
pub use groups::{create_group, delete_group, get_group, list_groups, patch_group, replace_group};
pub use listing::ListQuery;
pub use users::{create_user, delete_user, get_user, list_users, patch_user, replace_user};

use crate::domain::scim::ScimError;
use crate::errors::ServerError;
use crate::store::StoreError;

/// What an operation answers: the status, the resource or message, and for a resource its
/// `Location` and `ETag`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScimReply {
    pub status: u16,
    pub body: Option<serde_json::Value>,
    pub location: Option<String>,
    pub etag: Option<String>,
}

impl ScimReply {
    fn resource(status: u16, body: serde_json::Value) -> Self {
        let location = body["meta"]["location"].as_str().map(str::to_owned);
        let etag = body["meta"]["version"].as_str().map(str::to_owned);
        Self {
            status,
            body: Some(body),
            location,
            etag,
        }
    }

    fn message(status: u16, body: serde_json::Value) -> Self {
        Self {
            status,
            body: Some(body),
            location: None,
            etag: None,
        }
    }

    fn no_content() -> Self {
        Self {
            status: 204,
            body: None,
            location: None,
            etag: None,
        }
    }
}

/// Why an operation did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The request's fault, or not found, or a precondition: a SCIM error answers it.
    #[error("{}", .0.detail)]
    Scim(ScimError),
    /// The company's requests are over `RATE_LIMIT_SCIM_PER_MINUTE`.
    #[error("rate limited")]
    RateLimited { retry_after: i64 },
    /// Ours: the store failed (503) or worse.
    #[error(transparent)]
    Server(#[from] ServerError),
}

impl From<ScimError> for Failure {
    fn from(error: ScimError) -> Self {
        Self::Scim(error)
    }
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Self::Server(error.into())
    }
}

pub type ScimResult<T> = Result<T, Failure>;

fn not_found(what: &str, id: &str) -> Failure {
    let shown: String = id.chars().take(64).collect();
    Failure::Scim(ScimError::new(
        404,
        None,
        format!("{what} {shown} not found"),
    ))
}

fn precondition_failed() -> Failure {
    Failure::Scim(ScimError::new(
        412,
        None,
        "the resource changed since the version in If-Match",
    ))
}

/// The rendered resource, when the `If-Match` header (a list of entity tags, or `*`) admits
/// its `meta.version`; 412 otherwise.
fn admitted(shown: serde_json::Value, if_match: Option<&str>) -> ScimResult<serde_json::Value> {
    let Some(header) = if_match else {
        return Ok(shown);
    };
    let current = shown["meta"]["version"].as_str().unwrap_or_default();
    let admits = header.split(',').map(str::trim).any(|tag| {
        tag == "*"
            || tag == current
            || tag.trim_start_matches("W/") == current.trim_start_matches("W/")
    });
    if admits {
        Ok(shown)
    } else {
        Err(precondition_failed())
    }
}
