//! Audit events: one per security-relevant fact (docs/decisions.md, Audit events).
//!
//! An event holds identifiers, a kind with typed details, and the facts of the request that
//! caused it. Nothing in it is free text chosen by the service, so nothing secret can be put in
//! by mistake: there is no field a token, a secret, a password, a login or a mail body would fit
//! in. The two values a caller writes (its user agent and correlation id) are bounded, printable
//! ASCII, and echo only what the caller sent.

mod compact;
mod factor;
mod logout;
mod passkey;
mod request;
pub mod rfc3339;
mod subjects;

pub use factor::RemovedFactor;
pub use logout::LogoutFailure;
pub use passkey::PasskeyRefusal;
pub use request::{CorrelationId, RequestFacts, UserAgent};
pub use subjects::AuditSubject;

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{
    ClientId, CompanyStatus, FamilyId, IdpId, MfaPolicy, PrincipalId, PrincipalType, SecretId,
    SessionId, SsoPolicy, TokenId, UserStatus,
};
use crate::clock::UnixTime;

/// How long an event is kept: DynamoDB's TTL and the SQLite sweeper delete it after that.
pub const AUDIT_RETENTION_SECONDS: i64 = 400 * 86_400;

/// One event's identifier: a time-ordered UUID (version 7), so that events of one second sort
/// by the millisecond they were recorded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AuditId(Uuid);

impl AuditId {
    pub fn new(id: Uuid) -> Self {
        Self(id)
    }

    /// The id of the `family.refreshed` event of the rotation of `family_id` to `generation` at
    /// `at`: derived, not drawn, so that whoever records that rotation's event (the rotating
    /// request, or a retry making good what a failure left unwritten) records the same one.
    /// Time-ordered like every id, at the start of the rotation's second.
    pub fn of_rotation(family_id: &FamilyId, generation: u32, at: UnixTime) -> Self {
        let digest = Sha256::new()
            .chain_update(b"family.refreshed")
            .chain_update(family_id.as_uuid().as_bytes())
            .chain_update(generation.to_be_bytes())
            .finalize();
        let mut bytes = [0u8; 10];
        bytes.copy_from_slice(&digest[..10]);
        let millis = u64::try_from(at).unwrap_or(0).saturating_mul(1000);
        Self(uuid::Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid())
    }
}

impl fmt::Display for AuditId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// How a family was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartedBy {
    Password,
    /// The password grant with a company auth token (`credtype=authtoken`).
    CompanyAuthToken,
    AuthorizationCode,
    Otp,
    LegacyExchange,
    /// The device authorization grant (RFC 8628): a device code the user approved on the page.
    DeviceCode,
}

/// Why a family was revoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevocationReason {
    /// OpenID Connect RP-initiated logout (the user signed out of the client).
    Logout,
    /// `DELETE /app-mgmt/v0/connections`.
    ConnectionsEndpoint,
    /// RFC 7009 revocation of one of its refresh tokens.
    RevocationEndpoint,
    /// A rotated refresh token was presented again after the retry window.
    ReuseDetected,
    /// `tokenctl tokens revoke-family`, or `users set-status` taking a user's access away.
    Admin,
    /// An authorization code was redeemed twice: every family it started is revoked.
    CodeReplay,
    /// A one-time password was redeemed twice at once: the loser's family is never handed out.
    OtpReplay,
    /// A device code was redeemed by two polls at once: the loser's family is never handed out.
    DeviceCodeReplay,
    /// Its old (legacy) refresh token was exchanged again: the new family replaces it.
    ExchangedAgain,
    /// The user disconnected the app on the account page.
    AccountPage,
    /// The self-registered client deleted its registration (RFC 7592).
    RegistrationDeleted,
}

/// Why a sign-in session ended before its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEndReason {
    /// RP-initiated logout: an application sent the browser to sign out.
    Logout,
    /// "Sign out" on the account page.
    SignedOut,
    /// "Sign out everywhere" on the account page.
    SignedOutEverywhere,
    /// `tokenctl sessions revoke`, or `users set-status` taking a user's access away.
    Administrator,
    /// The company's identity provider signed the user out (SAML single logout).
    IdpLogout,
    /// The company's provisioning client disabled or deleted the user (SCIM).
    Deprovisioned,
}

impl RevocationReason {
    fn revocation_endpoint() -> Self {
        Self::RevocationEndpoint
    }
}

/// A signing key's `kid` (a public JWK thumbprint): base64url characters only, so that no other
/// text can be passed off as one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct KeyId(String);

impl KeyId {
    pub fn parse(kid: &str) -> Option<Self> {
        let valid = !kid.is_empty()
            && kid.len() <= 128
            && kid
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        valid.then(|| Self(kid.to_owned()))
    }
}

impl<'de> Deserialize<'de> for KeyId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom("not a key id"))
    }
}

/// Why a known client's authentication failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthenticationFailure {
    WrongSecret,
    ExpiredSecret,
    /// A `private_key_jwt` assertion naming the client that its keys or claims refuse.
    InvalidAssertion,
}

impl AuthenticationFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WrongSecret => "wrong_secret",
            Self::ExpiredSecret => "expired_secret",
            Self::InvalidAssertion => "invalid_assertion",
        }
    }
}

/// What happened. Serialised as `event` (its name) and the variant's own fields beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event")]
pub enum AuditKind {
    #[serde(rename = "family.started")]
    FamilyStarted {
        grant: StartedBy,
        /// For a company's family started with a company auth token: the administrator who
        /// obtained it. Absent otherwise, and in events written before the field existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        issued_by: Option<PrincipalId>,
    },
    /// A rotation (`generation` is the successor's) or a sliding renewal (unchanged).
    #[serde(rename = "family.refreshed")]
    FamilyRefreshed { generation: u32 },
    #[serde(rename = "family.revoked")]
    FamilyRevoked { reason: RevocationReason },
    /// One access token revoked on its own (RFC 7009); its family, if any, stays live.
    #[serde(rename = "access_token.revoked")]
    AccessTokenRevoked {
        jti: TokenId,
        /// Only the revocation endpoint revokes an access token alone; events written before
        /// the field existed read as such.
        #[serde(default = "RevocationReason::revocation_endpoint")]
        reason: RevocationReason,
    },
    #[serde(rename = "refresh.reuse_detected")]
    RefreshReuseDetected,
    /// The attempt that used up a login's last attempt of its window failed: the login is locked
    /// until the window ends.
    #[serde(rename = "login.locked")]
    LoginLocked,
    /// A known client presented a wrong or expired secret, or an assertion its keys refuse.
    #[serde(rename = "client.authentication_failed")]
    ClientAuthenticationFailed { reason: AuthenticationFailure },
    /// `jti`: the app's own token, when the app added it through the secrets API.
    #[serde(rename = "client.secret_added")]
    ClientSecretAdded {
        secret_id: SecretId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        jti: Option<TokenId>,
    },
    #[serde(rename = "client.secret_revoked")]
    ClientSecretRevoked {
        secret_id: SecretId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        jti: Option<TokenId>,
    },
    /// The app listed its secrets through the secrets API with its token `jti`.
    #[serde(rename = "client.secrets_listed")]
    ClientSecretsListed { jti: TokenId },
    /// One rotation step of the signing key ring: `active` signs from now on, `next` is
    /// published for the following step.
    #[serde(rename = "key.rotated")]
    KeyRotated {
        active: Option<KeyId>,
        next: Option<KeyId>,
    },
    /// A key withdrawn from the ring at once (`tokenctl keys revoke`); `active` signs now.
    #[serde(rename = "key.revoked")]
    KeyRevoked { kid: KeyId, active: Option<KeyId> },
    #[serde(rename = "client.created")]
    ClientCreated,
    #[serde(rename = "client.disabled")]
    ClientDisabled,
    /// Any other change of a client's registration.
    #[serde(rename = "client.updated")]
    ClientUpdated,
    #[serde(rename = "client.refresh_rotation_set")]
    ClientRefreshRotationSet { rotation: super::RefreshRotation },
    #[serde(rename = "company.created")]
    CompanyCreated,
    #[serde(rename = "company.status_set")]
    CompanyStatusSet { status: CompanyStatus },
    #[serde(rename = "company.client_enabled")]
    CompanyClientEnabled,
    /// `tokenctl companies set-mfa`: whether the company's users need a second factor.
    #[serde(rename = "company.mfa_set")]
    CompanyMfaSet { policy: MfaPolicy },
    /// `tokenctl companies set-sso`: whether the company's users sign in only through its
    /// identity providers.
    #[serde(rename = "company.sso_set")]
    CompanySsoSet { policy: SsoPolicy },
    /// `tokenctl companies idps add`; the event's principal is the company.
    #[serde(rename = "company.idp_added")]
    CompanyIdpAdded { idp_id: IdpId },
    /// `tokenctl companies idps refresh`: a SAML IdP's metadata read again; its certificates
    /// and endpoints are the new ones.
    #[serde(rename = "company.idp_refreshed")]
    CompanyIdpRefreshed { idp_id: IdpId },
    /// `tokenctl companies idps remove`, with the links to it that went (a removal run again
    /// to finish an interrupted one may find the IdP already gone).
    #[serde(rename = "company.idp_removed")]
    CompanyIdpRemoved { idp_id: IdpId, links_removed: u64 },
    #[serde(rename = "user.created")]
    UserCreated,
    /// A company's provisioning client created the user (SCIM); `provisioning_token` names the
    /// token it used, or the event's client is the company client whose access token it was.
    #[serde(rename = "user.provisioned")]
    UserProvisioned {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provisioning_token: Option<uuid::Uuid>,
    },
    /// The provisioning client changed the user.
    #[serde(rename = "user.updated")]
    UserUpdated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provisioning_token: Option<uuid::Uuid>,
    },
    /// The provisioning client disabled (`active: false`) or deleted the user, whose every
    /// session and family ended with it.
    #[serde(rename = "user.deprovisioned")]
    UserDeprovisioned {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provisioning_token: Option<uuid::Uuid>,
        deleted: bool,
        sessions_ended: u64,
        families_revoked: u64,
    },
    /// The provisioning client created, changed or deleted a group.
    #[serde(rename = "group.updated")]
    GroupUpdated {
        group_id: uuid::Uuid,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provisioning_token: Option<uuid::Uuid>,
        deleted: bool,
    },
    /// `tokenctl companies scim-tokens create`.
    #[serde(rename = "company.provisioning_token_created")]
    ProvisioningTokenCreated { token_id: uuid::Uuid },
    /// `tokenctl companies scim-tokens revoke`.
    #[serde(rename = "company.provisioning_token_revoked")]
    ProvisioningTokenRevoked { token_id: uuid::Uuid },
    /// `tokenctl companies set-admin-group`.
    #[serde(rename = "company.admin_group_set")]
    CompanyAdminGroupSet,
    #[serde(rename = "user.email_set")]
    UserEmailSet,
    /// `tokenctl users set-status`.
    #[serde(rename = "user.status_set")]
    UserStatusSet { status: UserStatus },
    /// `tokenctl users set-local-sign-in`: a break-glass user signs in with a password even
    /// when the company requires its identity providers.
    #[serde(rename = "user.local_sign_in_set")]
    UserLocalSignInSet { local_sign_in: bool },
    /// `tokenctl users set-external-id`; the value itself is the directory's, never in an
    /// event: only whether one is set now.
    #[serde(rename = "user.external_id_set")]
    UserExternalIdSet { cleared: bool },
    /// `tokenctl users unlink`: the user's link to an identity provider was removed.
    #[serde(rename = "federation.unlinked")]
    FederationUnlinked { idp_id: IdpId },
    #[serde(rename = "legacy_app.linked")]
    LegacyAppLinked,
    /// A company auth token (a 24-hour credential standing in for the company's password) was
    /// issued; the event's principal is the company, `issued_by` the administrator.
    #[serde(rename = "company.auth_token_issued")]
    CompanyAuthTokenIssued { issued_by: PrincipalId },
    /// A legacy token import (`tokenctl legacy import`) finished.
    #[serde(rename = "legacy_tokens.imported")]
    LegacyTokensImported { imported: u64, skipped: u64 },
    /// A user signed in on a page, starting a sign-in session.
    #[serde(rename = "session.started")]
    SessionStarted { sid: SessionId },
    /// A sign-in session was ended, by whom and why.
    #[serde(rename = "session.ended")]
    SessionEnded {
        sid: SessionId,
        reason: SessionEndReason,
    },
    /// The user approved an app on the consent page; it is remembered.
    #[serde(rename = "consent.granted")]
    ConsentGranted,
    /// The user disconnected the app on the account page: its consent is forgotten.
    #[serde(rename = "consent.forgotten")]
    ConsentForgotten,
    /// The user added an authenticator app (and got recovery codes) on the account page.
    #[serde(rename = "second_factor.enrolled")]
    SecondFactorEnrolled,
    /// The user removed their authenticator app on the account page.
    #[serde(rename = "second_factor.removed")]
    SecondFactorRemoved,
    /// A wrong authenticator-app or recovery code; it counted toward the user's lockout.
    #[serde(rename = "second_factor.failed")]
    SecondFactorFailed,
    /// A back-channel logout token for session `sid` was accepted (2xx) by the event's client.
    #[serde(rename = "logout.delivered")]
    LogoutDelivered { sid: SessionId, attempts: u32 },
    /// A back-channel logout token for session `sid` never reached the event's client.
    #[serde(rename = "logout.failed")]
    LogoutFailed {
        sid: SessionId,
        attempts: u32,
        reason: LogoutFailure,
        /// The last answer's HTTP status, when there was one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// A client registered itself (RFC 7591).
    #[serde(rename = "client.registered")]
    ClientRegistered,
    /// A self-registered client replaced its metadata with its registration access token.
    #[serde(rename = "client.registration_updated")]
    ClientRegistrationUpdated,
    /// A self-registered client deleted its registration: it is disabled, its families revoked.
    #[serde(rename = "client.registration_deleted")]
    ClientRegistrationDeleted,
    /// An initial access token for registration was created (`tokenctl registration-tokens`).
    #[serde(rename = "registration_token.created")]
    RegistrationTokenCreated,
    /// A token exchange (RFC 8693): the event's client exchanged a token of its principal (and
    /// family), issued to `subject_client_id`, for the token `jti`; with an actor token, who
    /// acted.
    #[serde(rename = "token.exchanged")]
    TokenExchanged {
        jti: TokenId,
        subject_client_id: ClientId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor_sub: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor_client_id: Option<String>,
    },
    /// An identity assertion (ID-JAG) issued for the event's user to the event's client, for
    /// the authorization server `audience` (where the client is `target_client_id`).
    #[serde(rename = "token.id_jag_issued")]
    TokenIdJagIssued {
        jti: String,
        audience: String,
        target_client_id: String,
    },
    /// An identity assertion of a company IdP (`idp`; its `jti`) redeemed for the access token
    /// `access_jti`, for the event's user and client.
    #[serde(rename = "token.id_jag_redeemed")]
    TokenIdJagRedeemed {
        idp: IdpId,
        assertion_jti: String,
        access_jti: TokenId,
    },
    /// `tokenctl companies set-id-jag`; the event's principal is the company.
    #[serde(rename = "company.id_jag_set")]
    CompanyIdJagSet { on: bool },
    /// `tokenctl clients id-jag-targets add`: the event's client may ask identity assertions
    /// for `audience` (added anew or replaced).
    #[serde(rename = "client.id_jag_target_added")]
    ClientIdJagTargetAdded { audience: String },
    /// `tokenctl clients id-jag-targets remove`.
    #[serde(rename = "client.id_jag_target_removed")]
    ClientIdJagTargetRemoved { audience: String },
    /// The user added a passkey on the account page.
    #[serde(rename = "passkey.added")]
    PasskeyAdded,
    /// The user removed a passkey on the account page.
    #[serde(rename = "passkey.removed")]
    PasskeyRemoved,
    /// A passkey answer on a sign-in page signed no one in (the principal when known).
    #[serde(rename = "passkey.refused")]
    PasskeyRefused { reason: PasskeyRefusal },
    /// A sign-in through a company identity provider failed; `reason` is a fixed word
    /// (`signature`, `nonce`, `no_account`, …), never what the IdP sent.
    #[serde(rename = "federation.refused")]
    FederationRefused {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idp: Option<IdpId>,
        reason: String,
    },
    /// A user signed in through a company identity provider.
    #[serde(rename = "federation.signed_in")]
    FederationSignedIn { idp: IdpId },
    /// An upstream subject was linked to the user, at its first sign-in.
    #[serde(rename = "federation.linked")]
    FederationLinked { idp: IdpId },
    /// An administrator removed one of the user's second factors (`tokenctl users factors
    /// remove`): the recovery path of a user who lost it, or the end of one someone else added.
    #[serde(rename = "second_factor.removed_by_administrator")]
    SecondFactorRemovedByAdministrator { factor: RemovedFactor },
}

impl AuditKind {
    /// The `event` name, e.g. `family.started`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::FamilyStarted { .. } => "family.started",
            Self::FamilyRefreshed { .. } => "family.refreshed",
            Self::FamilyRevoked { .. } => "family.revoked",
            Self::AccessTokenRevoked { .. } => "access_token.revoked",
            Self::RefreshReuseDetected => "refresh.reuse_detected",
            Self::LoginLocked => "login.locked",
            Self::ClientAuthenticationFailed { .. } => "client.authentication_failed",
            Self::ClientSecretAdded { .. } => "client.secret_added",
            Self::ClientSecretRevoked { .. } => "client.secret_revoked",
            Self::ClientSecretsListed { .. } => "client.secrets_listed",
            Self::KeyRotated { .. } => "key.rotated",
            Self::KeyRevoked { .. } => "key.revoked",
            Self::ClientCreated => "client.created",
            Self::ClientDisabled => "client.disabled",
            Self::ClientUpdated => "client.updated",
            Self::ClientRefreshRotationSet { .. } => "client.refresh_rotation_set",
            Self::CompanyCreated => "company.created",
            Self::CompanyStatusSet { .. } => "company.status_set",
            Self::CompanyClientEnabled => "company.client_enabled",
            Self::CompanyMfaSet { .. } => "company.mfa_set",
            Self::CompanySsoSet { .. } => "company.sso_set",
            Self::CompanyIdpAdded { .. } => "company.idp_added",
            Self::CompanyIdpRefreshed { .. } => "company.idp_refreshed",
            Self::CompanyIdpRemoved { .. } => "company.idp_removed",
            Self::UserCreated => "user.created",
            Self::UserProvisioned { .. } => "user.provisioned",
            Self::UserUpdated { .. } => "user.updated",
            Self::UserDeprovisioned { .. } => "user.deprovisioned",
            Self::GroupUpdated { .. } => "group.updated",
            Self::ProvisioningTokenCreated { .. } => "company.provisioning_token_created",
            Self::ProvisioningTokenRevoked { .. } => "company.provisioning_token_revoked",
            Self::CompanyAdminGroupSet => "company.admin_group_set",
            Self::UserEmailSet => "user.email_set",
            Self::UserStatusSet { .. } => "user.status_set",
            Self::UserLocalSignInSet { .. } => "user.local_sign_in_set",
            Self::UserExternalIdSet { .. } => "user.external_id_set",
            Self::FederationUnlinked { .. } => "federation.unlinked",
            Self::LegacyAppLinked => "legacy_app.linked",
            Self::CompanyAuthTokenIssued { .. } => "company.auth_token_issued",
            Self::LegacyTokensImported { .. } => "legacy_tokens.imported",
            Self::SessionStarted { .. } => "session.started",
            Self::SessionEnded { .. } => "session.ended",
            Self::ConsentGranted => "consent.granted",
            Self::ConsentForgotten => "consent.forgotten",
            Self::SecondFactorEnrolled => "second_factor.enrolled",
            Self::SecondFactorRemoved => "second_factor.removed",
            Self::SecondFactorFailed => "second_factor.failed",
            Self::LogoutDelivered { .. } => "logout.delivered",
            Self::LogoutFailed { .. } => "logout.failed",
            Self::ClientRegistered => "client.registered",
            Self::ClientRegistrationUpdated => "client.registration_updated",
            Self::ClientRegistrationDeleted => "client.registration_deleted",
            Self::RegistrationTokenCreated => "registration_token.created",
            Self::TokenExchanged { .. } => "token.exchanged",
            Self::TokenIdJagIssued { .. } => "token.id_jag_issued",
            Self::TokenIdJagRedeemed { .. } => "token.id_jag_redeemed",
            Self::CompanyIdJagSet { .. } => "company.id_jag_set",
            Self::ClientIdJagTargetAdded { .. } => "client.id_jag_target_added",
            Self::ClientIdJagTargetRemoved { .. } => "client.id_jag_target_removed",
            Self::PasskeyAdded => "passkey.added",
            Self::PasskeyRemoved => "passkey.removed",
            Self::PasskeyRefused { .. } => "passkey.refused",
            Self::FederationRefused { .. } => "federation.refused",
            Self::FederationSignedIn { .. } => "federation.signed_in",
            Self::FederationLinked { .. } => "federation.linked",
            Self::SecondFactorRemovedByAdministrator { .. } => {
                "second_factor.removed_by_administrator"
            }
        }
    }
}

/// One audit event. `time` is RFC 3339 in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    #[serde(with = "rfc3339_serde")]
    pub time: UnixTime,
    #[serde(flatten)]
    pub kind: AuditKind,
    #[serde(default)]
    pub client_id: Option<ClientId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal_type: Option<PrincipalType>,
    #[serde(default)]
    pub principal_id: Option<PrincipalId>,
    #[serde(default)]
    pub family_id: Option<FamilyId>,
    #[serde(flatten)]
    pub request: RequestFacts,
    pub id: AuditId,
}

impl AuditEvent {
    /// An event of `kind` at `time`, about nothing yet: the builder methods below say whom.
    pub fn new(id: AuditId, time: UnixTime, kind: AuditKind, request: RequestFacts) -> Self {
        Self {
            time,
            kind,
            client_id: None,
            principal_type: None,
            principal_id: None,
            family_id: None,
            request,
            id,
        }
    }

    #[must_use]
    pub fn client(mut self, id: ClientId) -> Self {
        self.client_id = Some(id);
        self
    }

    #[must_use]
    pub fn principal(mut self, kind: PrincipalType, id: PrincipalId) -> Self {
        self.principal_type = Some(kind);
        self.principal_id = Some(id);
        self
    }

    #[must_use]
    pub fn family(mut self, id: FamilyId) -> Self {
        self.family_id = Some(id);
        self
    }

    /// When the stores delete it.
    pub fn expires_at(&self) -> UnixTime {
        self.time + AUDIT_RETENTION_SECONDS
    }

    /// The event as one JSON object.
    pub fn to_json(&self) -> String {
        // Every field is an identifier, a number, an enum or a checked string: this cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

mod rfc3339_serde {
    use super::{rfc3339, Deserialize, Deserializer, Serializer, UnixTime};

    // The signature is serde's `with` convention.
    #[allow(clippy::trivially_copy_pass_by_ref)]
    pub fn serialize<S: Serializer>(at: &UnixTime, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&rfc3339::format(*at))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<UnixTime, D::Error> {
        let text = String::deserialize(deserializer)?;
        rfc3339::parse(&text).ok_or_else(|| serde::de::Error::custom("time is not RFC 3339"))
    }
}

#[cfg(test)]
mod tests;
