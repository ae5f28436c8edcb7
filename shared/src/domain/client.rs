//! Applications (OAuth clients) as registered by application management.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

use super::{ClientId, Scopes};
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

/// The grants a client may be allowed to use (`tokenctl clients create --grants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantType {
    ClientCredentials,
    RefreshToken,
    Password,
}

impl GrantType {
    pub const ALL: [GrantType; 3] = [Self::ClientCredentials, Self::RefreshToken, Self::Password];

    /// The wire value of `grant_type`. `refresh` is accepted as an alias of `refresh_token`
    /// (the contract, part 2).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "client_credentials" => Some(Self::ClientCredentials),
            "refresh_token" | "refresh" => Some(Self::RefreshToken),
            "password" => Some(Self::Password),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientCredentials => "client_credentials",
            Self::RefreshToken => "refresh_token",
            Self::Password => "password",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    pub id: ClientId,
    pub name: String,
    /// The client secret is a UUID, shown once at creation; only this digest is kept.
    pub secret_hash: TokenHash,
    pub allowed_scopes: Scopes,
    pub grants: BTreeSet<GrantType>,
    /// Where the company auth-token flow sends the browser (spec 4.5).
    pub connect_url: Option<String>,
    /// `false` for clients created with `--no-refresh`: their refresh tokens get code 107.
    pub refresh_allowed: bool,
    pub enabled: bool,
    pub created_at: UnixTime,
}

impl Client {
    pub fn may_use(&self, grant: GrantType) -> bool {
        self.grants.contains(&grant)
    }

    /// Refreshing needs both the grant and the refresh permission.
    pub fn may_refresh(&self) -> bool {
        self.refresh_allowed && self.may_use(GrantType::RefreshToken)
    }
}
