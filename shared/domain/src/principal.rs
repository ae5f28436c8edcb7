//! Principals: users and companies (spec part 1.4: a company is a top-level principal).

use serde::{Deserialize, Serialize};
use std::fmt;

use super::{Geolocation, Login, PrincipalId};
use crate::clock::UnixTime;
use crate::directory::DirectoryProfile;
use crate::federation::SsoPolicy;
use crate::second_factor::MfaPolicy;
use crate::secrets::PasswordHash;

/// Whom a token speaks for. `Application` is the subject of a `client_credentials` token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrincipalType {
    User,
    Company,
    Application,
}

impl PrincipalType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Company => "company",
            Self::Application => "application",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "user" => Some(Self::User),
            "company" => Some(Self::Company),
            "application" => Some(Self::Application),
            _ => None,
        }
    }
}

impl fmt::Display for PrincipalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UserStatus {
    Active,
    /// Password grant: code 10. Refresh of an existing family: code 123.
    Disabled,
    /// Password grant: code 12.
    LogonDenied,
}

impl UserStatus {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "active" => Some(Self::Active),
            "disabled" => Some(Self::Disabled),
            "logon-denied" => Some(Self::LogonDenied),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Disabled => "disabled",
            Self::LogonDenied => "logon-denied",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompanyStatus {
    Active,
    /// Code 123.
    Disabled,
    /// Code 134.
    Maintenance,
}

impl CompanyStatus {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "active" => Some(Self::Active),
            "disabled" => Some(Self::Disabled),
            "maintenance" => Some(Self::Maintenance),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Disabled => "disabled",
            Self::Maintenance => "maintenance",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: PrincipalId,
    pub login: Login,
    pub password_hash: PasswordHash,
    /// The company the user belongs to, if any.
    pub company_id: Option<PrincipalId>,
    /// An administrator of `company_id` may obtain company auth tokens for it.
    pub is_admin: bool,
    /// The user's home deployment: the password and refresh grants only work there.
    pub geolocation: Geolocation,
    pub status: UserStatus,
    pub created_at: UnixTime,
    /// Where one-time passwords reach the user (docs/decisions.md, "One-time passwords"): unique
    /// among users, compared case-insensitively, stored as given. Users stored before addresses
    /// existed read `None`.
    #[serde(default)]
    pub email: Option<String>,
    /// A break-glass user: signs in with a password even when the company requires its identity
    /// providers (`tokenctl users set-local-sign-in`).
    #[serde(default)]
    pub local_sign_in: bool,
    /// The identifier the company's directory knows the user by (SCIM's `externalId`, or
    /// `tokenctl users set-external-id`): unique within the company, compared exactly. A first
    /// federated sign-in whose upstream subject equals it links to this user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// What the company's provisioning client said of the user beyond these fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<Box<DirectoryProfile>>,
    /// Counts the writes that must not cross (a provisioning client's replacement is
    /// conditional on the revision it read); users stored before it existed read 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub revision: u64,
    /// When the user's access was last taken away (by the company's provisioning client, or
    /// `tokenctl users set-status`): codes, one-time passwords and tokens of no family issued
    /// until then stay dead after the user is active again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprovisioned_at: Option<UnixTime>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl User {
    /// Whether something issued to the user at `issued_at` was cancelled by a deprovisioning.
    pub fn cancelled_at_issue(&self, issued_at: UnixTime) -> bool {
        self.deprovisioned_at.is_some_and(|at| issued_at <= at)
    }

    pub fn administers(&self, company: &PrincipalId) -> bool {
        self.is_admin && self.company_id.as_ref() == Some(company)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Company {
    pub id: PrincipalId,
    pub name: String,
    pub geolocation: Geolocation,
    pub status: CompanyStatus,
    pub created_at: UnixTime,
    /// Whether its users must finish page sign-ins with a second factor (`tokenctl companies
    /// set-mfa`); companies stored before the policy existed read `Optional`.
    #[serde(default)]
    pub mfa_policy: MfaPolicy,
    /// Whether its users sign in only through its identity providers (`tokenctl companies
    /// set-sso`); companies stored before the policy existed read `Optional`.
    #[serde(default)]
    pub sso_policy: SsoPolicy,
    /// The directory group whose members administer the company (`tokenctl companies
    /// set-admin-group`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_group: Option<String>,
    /// Whether its users' agents may be given identity assertions for other apps (ID-JAG,
    /// `tokenctl companies set-id-jag`); companies stored before the switch existed read `true`.
    #[serde(default = "id_jag_default")]
    pub id_jag: bool,
}

fn id_jag_default() -> bool {
    true
}
