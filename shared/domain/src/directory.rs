//! A company's directory as its provisioning client (SCIM) keeps it: the provisioning tokens it
//! authenticates with, what it says of a user beyond the principal's own fields, and its groups
//! (docs/decisions.md, "SCIM provisioning").

use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::ids::PrincipalId;
use crate::secrets::TokenHash;

/// The most members one group holds: its item stays far below DynamoDB's 400 KB.
pub const MAX_GROUP_MEMBERS: usize = 5_000;

/// A company's provisioning token (`tokenctl companies scim-tokens create`): only its digest is
/// kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvisioningToken {
    pub id: uuid::Uuid,
    pub company_id: PrincipalId,
    pub token_hash: TokenHash,
    pub created_at: UnixTime,
    /// `None`: until revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<UnixTime>,
}

impl ProvisioningToken {
    pub fn is_live(&self, now: UnixTime) -> bool {
        self.expires_at.is_none_or(|at| now < at)
    }
}

/// What the provisioning client said of a user that the principal has no field for: its SCIM
/// attributes (`name`, `displayName`, `emails`, the enterprise extension) as normalized JSON,
/// and when it last changed them. The login, address, external id and status stay the user's
/// own fields, so a sign-in reads nothing of this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectoryProfile {
    pub attributes: serde_json::Value,
    pub created_at: UnixTime,
    pub last_modified: UnixTime,
}

/// A group of a company's users (SCIM `Groups`). Members are users of the same company.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectoryGroup {
    pub id: uuid::Uuid,
    pub company_id: PrincipalId,
    pub display_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    pub members: Vec<PrincipalId>,
    pub created_at: UnixTime,
    pub last_modified: UnixTime,
    /// Counts every write, so that a replacement can be conditional on what was read.
    pub revision: u64,
}

impl DirectoryGroup {
    /// Whether this is the group `companies set-admin-group` named (names compared
    /// case-insensitively).
    pub fn is_named(&self, name: &str) -> bool {
        self.display_name.to_lowercase() == name.to_lowercase()
    }
}
