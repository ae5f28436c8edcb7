//! The table's layout: each entity's key, and items to and from entities.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::errors::sanitize;
use crate::domain::{PrincipalId, RefreshTokenRecord, User};
use crate::{FamilyOrigin, StoreError, StoreResult};

pub(super) type Item = HashMap<String, AttributeValue>;

pub(super) const PK: &str = "pk";
pub(super) const SK: &str = "sk";
/// The refresh token item's copy of its family's [`FamilyOrigin`], a map. Items written before
/// the copy existed lack it.
const ORIGIN: &str = "origin";

pub(super) mod keys {
    use crate::clock::UnixTime;
    use crate::domain::audit::{AuditId, AuditSubject};
    use crate::domain::{
        ClientId, ConsumerKey, FamilyId, IdpDomain, IdpId, Login, PrincipalId, SessionId, TokenId,
        UpstreamSubject,
    };
    use crate::secrets::TokenHash;
    use prefix::*;

    /// Each item kind's partition-key prefix (also the sort-key prefix of the items that point
    /// at another kind: a company's enabled `CLIENT#`, a connection's `FAMILY#`).
    pub mod prefix {
        pub const CLIENT: &str = "CLIENT#";
        pub const USER: &str = "USER#";
        pub const LOGIN: &str = "LOGIN#";
        pub const COMPANY: &str = "COMPANY#";
        pub const LEGACY_APP: &str = "LEGACYAPP#";
        pub const LEGACY: &str = "LEGACY#";
        pub const FAMILY: &str = "FAMILY#";
        pub const REFRESH: &str = "REFRESH#";
        pub const ACCESS: &str = "ACCESS#";
        pub const CONNECTION: &str = "CONNECTION#";
        pub const AUTH_TOKEN: &str = "AUTHTOKEN#";
        pub const LOGIN_ATTEMPTS: &str = "FAILEDLOGIN#";
        pub const OTP: &str = "OTP#";
        pub const EMAIL: &str = "EMAIL#";
        pub const EXTERNAL_ID: &str = "EXTID#";
        pub const AUTHORIZATION_CODE: &str = "AUTHCODE#";
        pub const SIGNING_KEYS: &str = "SIGNINGKEYS#";
        pub const RATE: &str = "RATE#";
        pub const USED_JTI: &str = "JTI#";
        pub const REGISTRATION_TOKEN: &str = "REGTOKEN#";
        pub const AUDIT: &str = "AUDIT#";
        pub const SESSION: &str = "SESSION#";
        pub const CONSENT: &str = "CONSENT#";
        pub const DEVICE: &str = "DEVICE#";
        pub const DEVICE_USER_CODE: &str = "DEVICEUSER#";
        pub const PUSHED_AUTHORIZATION: &str = "PAR#";
        pub const TOTP: &str = "TOTP#";
        pub const PASSKEY: &str = "PASSKEY#";
        pub const PASSKEY_CEREMONY: &str = "PASSKEYCEREMONY#";
        pub const DOCUMENT_CLIENT: &str = "DOCCLIENT#";
        pub const IDP: &str = "IDP#";
        pub const COMPANY_IDPS: &str = "COMPANYIDP#";
        pub const IDP_DOMAIN: &str = "IDPDOMAIN#";
        pub const IDP_ISSUER: &str = "IDPISSUER#";
        pub const FEDERATION_LINK: &str = "FEDLINK#";
        pub const USER_LINKS: &str = "USERLINK#";
        pub const UPSTREAM_REQUEST: &str = "UPSTREAMREQ#";
        pub const PROVISIONING_TOKEN: &str = "SCIMTOKEN#";
        pub const DIRECTORY: &str = "DIRECTORY#";
    }

    /// The partition-key prefixes each Lambda function writes, by the logical id of its IAM role
    /// in `template.yaml`. The role's `dynamodb:LeadingKeys` condition must name exactly these,
    /// and no other role may write the table (`template_iam` tests both). Every other kind
    /// (principals, legacy apps, e-mail addresses) is written by `tokenctl` only; clients are
    /// created by `tokenctl`, and the token function updates their secrets.
    pub const FUNCTION_WRITES: &[(&str, &[&str])] = &[
        // Access tokens, new families with their connection listing, rotation, revocation,
        // login attempts, one-time passwords, authorization codes, rate-limit counters, used
        // `jti`s of client assertions (a conditional PutItem; never read), client secrets
        // (`UpdateItem` only: the secrets API and each secret's last use), and device
        // authorizations with their user-code items, pushed authorization requests (a PutItem,
        // then a conditional DeleteItem that takes one), users' passkeys (the account page),
        // passkey ceremonies (a PutItem, then a conditional DeleteItem that takes one), and the
        // clients of the client ID metadata documents it fetches (never a registered client's
        // item), the links a federated sign-in makes (with their copy in the user's partition)
        // and the sign-ins it sends to an IdP (a PutItem, then a conditional DeleteItem that
        // takes one). Identity providers and their domain claims are tokenctl's.
        (
            "TokenFunctionRole",
            &[
                CLIENT,
                FAMILY,
                REFRESH,
                ACCESS,
                CONNECTION,
                LOGIN_ATTEMPTS,
                OTP,
                AUTHORIZATION_CODE,
                RATE,
                USED_JTI,
                AUDIT,
                SESSION,
                CONSENT,
                DEVICE,
                DEVICE_USER_CODE,
                PUSHED_AUTHORIZATION,
                TOTP,
                PASSKEY,
                PASSKEY_CEREMONY,
                DOCUMENT_CLIENT,
                FEDERATION_LINK,
                USER_LINKS,
                UPSTREAM_REQUEST,
            ],
        ),
        // A new family with its tokens, connection listing and audit event, the exchange link
        // (on the legacy token's partition), revoking the family of a previous exchange.
        (
            "ExchangeFunctionRole",
            &[FAMILY, REFRESH, ACCESS, CONNECTION, LEGACY, AUDIT],
        ),
        // Company auth tokens, each with its audit event.
        ("CompanyAuthtokenFunctionRole", &[AUTH_TOKEN, AUDIT]),
        // Users (the only function that writes them), their directory, what deprovisioning
        // ends or removes.
        (
            "ScimFunctionRole",
            &[
                USER,
                LOGIN,
                EMAIL,
                EXTERNAL_ID,
                DIRECTORY,
                RATE,
                AUDIT,
                FAMILY,
                CONNECTION,
                SESSION,
                FEDERATION_LINK,
                USER_LINKS,
                PASSKEY,
                TOTP,
            ],
        ),
        // The signing key ring (the scheduled rotation; the other functions only read it), and
        // the rotation's audit event.
        ("RotateKeysFunctionRole", &[SIGNING_KEYS, AUDIT]),
        // Each back-channel logout delivery's outcome; it reads nothing.
        ("LogoutDeliveryFunctionRole", &[AUDIT]),
        // Registered clients (whole items, only while registration is on), registration
        // counters, audit events, and a deleted client's families revoked.
        ("RegistrationFunctionRole", &[CLIENT, RATE, AUDIT, FAMILY]),
    ];

    /// The one item of the signing key ring.
    pub fn signing_key_ring() -> (String, &'static str) {
        (format!("{SIGNING_KEYS}RING"), "RING")
    }

    /// The partition-key prefixes each Lambda function reads (`GetItem`, `Query`), by the
    /// logical id of its IAM role: the role's read statement names exactly these
    /// (`template_iam`), so that no function can read item kinds it has no use for (the
    /// exchange and company functions never read one-time passwords, codes, families or
    /// refresh tokens; the token function never reads old tokens).
    pub const FUNCTION_READS: &[(&str, &[&str])] = &[
        // Clients (registered, and those of metadata documents), principals by id, login,
        // address and external id (a federated sign-in's first link), enablements; its own items; company auth tokens at the company password grant;
        // rate-limit blocks; the signing key ring (every function reads it at start and
        // refreshes it every minute); identity providers by id and by domain (home-realm
        // discovery), links by subject and by user, the sign-ins it sent to an IdP (never a
        // company's listing of its IdPs, which only tokenctl reads).
        (
            "TokenFunctionRole",
            &[
                CLIENT,
                USER,
                LOGIN,
                EMAIL,
                EXTERNAL_ID,
                COMPANY,
                FAMILY,
                REFRESH,
                ACCESS,
                CONNECTION,
                AUTH_TOKEN,
                AUTHORIZATION_CODE,
                LOGIN_ATTEMPTS,
                OTP,
                RATE,
                SIGNING_KEYS,
                SESSION,
                CONSENT,
                DEVICE,
                DEVICE_USER_CODE,
                PUSHED_AUTHORIZATION,
                TOTP,
                PASSKEY,
                PASSKEY_CEREMONY,
                DOCUMENT_CLIENT,
                IDP,
                IDP_DOMAIN,
                IDP_ISSUER,
                FEDERATION_LINK,
                USER_LINKS,
                UPSTREAM_REQUEST,
            ],
        ),
        // The app and its bearer token, the principal and enablement, the consumer key, the
        // old token and its exchange link.
        (
            "ExchangeFunctionRole",
            &[
                CLIENT,
                USER,
                COMPANY,
                ACCESS,
                LEGACY_APP,
                LEGACY,
                SIGNING_KEYS,
            ],
        ),
        // The administrator's bearer token and user, the company and its enablement, the app.
        (
            "CompanyAuthtokenFunctionRole",
            &[CLIENT, USER, COMPANY, ACCESS, SIGNING_KEYS],
        ),
        // The key ring, which it rotates.
        ("RotateKeysFunctionRole", &[SIGNING_KEYS]),
        // The caller's token, the company's users and directory, and what deprovisioning ends.
        (
            "ScimFunctionRole",
            &[
                PROVISIONING_TOKEN,
                CLIENT,
                USER,
                LOGIN,
                EMAIL,
                EXTERNAL_ID,
                COMPANY,
                DIRECTORY,
                FAMILY,
                ACCESS,
                CONNECTION,
                RATE,
                SIGNING_KEYS,
                SESSION,
                FEDERATION_LINK,
                USER_LINKS,
                PASSKEY,
                TOTP,
            ],
        ),
        // Clients, initial access tokens, its rate-limit blocks, a deleted client's audit
        // trail (the families it started); it signs nothing, so never reads the key ring.
        (
            "RegistrationFunctionRole",
            &[CLIENT, REGISTRATION_TOKEN, RATE, AUDIT],
        ),
    ];

    /// The partition of one principal's sign-in sessions.
    pub fn session_partition(principal: &PrincipalId) -> String {
        format!("{SESSION}{principal}")
    }
    pub fn session(principal: &PrincipalId, sid: &SessionId) -> (String, String) {
        (session_partition(principal), sid.to_string())
    }
    /// The partition of one principal's remembered consents.
    /// A user's authenticator app and recovery codes: one item.
    pub fn totp_factor(principal: &PrincipalId) -> (String, &'static str) {
        (format!("{TOTP}{principal}"), "TOTP")
    }

    pub fn consent_partition(principal: &PrincipalId) -> String {
        format!("{CONSENT}{principal}")
    }
    pub fn consent(principal: &PrincipalId, client: &ClientId) -> (String, String) {
        (consent_partition(principal), client.to_string())
    }
    pub fn client(id: &ClientId) -> (String, &'static str) {
        (format!("{CLIENT}{id}"), CLIENT_SORT_KEY)
    }
    /// What every client item's key has: the partition prefix and the sort key.
    pub fn client_kind() -> (&'static str, &'static str) {
        (CLIENT, CLIENT_SORT_KEY)
    }
    const CLIENT_SORT_KEY: &str = "CLIENT";
    pub fn user(id: &PrincipalId) -> (String, &'static str) {
        (format!("{USER}{id}"), "USER")
    }
    /// A provisioning token, by its digest.
    pub fn provisioning_token(hash: &TokenHash) -> (String, &'static str) {
        (
            format!("{PROVISIONING_TOKEN}{}", hash.to_hex()),
            "SCIMTOKEN",
        )
    }
    /// A company's directory: its tokens' listing, a copy of each of its users, its groups and
    /// its user count, so that none is found by scanning the table.
    pub fn directory_partition(company: &PrincipalId) -> String {
        format!("{DIRECTORY}{company}")
    }
    pub fn directory_token(company: &PrincipalId, id: &uuid::Uuid) -> (String, String) {
        (directory_partition(company), format!("TOKEN#{id}"))
    }
    pub fn directory_user(company: &PrincipalId, id: &PrincipalId) -> (String, String) {
        (directory_partition(company), format!("{USER}{id}"))
    }
    pub fn directory_group(company: &PrincipalId, id: &uuid::Uuid) -> (String, String) {
        (directory_partition(company), format!("GROUP#{id}"))
    }
    pub fn directory_count(company: &PrincipalId) -> (String, &'static str) {
        (directory_partition(company), "COUNT")
    }
    pub fn login(login: &Login) -> (String, &'static str) {
        (format!("{LOGIN}{login}"), "LOGIN")
    }
    pub fn company(id: &PrincipalId) -> (String, &'static str) {
        (format!("{COMPANY}{id}"), "COMPANY")
    }
    pub fn enablement(company: &PrincipalId, client: &ClientId) -> (String, String) {
        (format!("{COMPANY}{company}"), format!("{CLIENT}{client}"))
    }
    pub fn legacy_app(key: &ConsumerKey) -> (String, &'static str) {
        (format!("{LEGACY_APP}{key}"), "LEGACYAPP")
    }
    pub fn legacy_token(hash: &TokenHash) -> (String, &'static str) {
        (format!("{LEGACY}{}", hash.to_hex()), "LEGACY")
    }
    pub fn legacy_exchange(hash: &TokenHash) -> (String, &'static str) {
        (format!("{LEGACY}{}", hash.to_hex()), "EXCHANGE")
    }
    pub fn family(id: &FamilyId) -> (String, &'static str) {
        (format!("{FAMILY}{id}"), "FAMILY")
    }
    pub fn refresh(hash: &TokenHash) -> (String, &'static str) {
        (format!("{REFRESH}{}", hash.to_hex()), "REFRESH")
    }
    pub fn access(jti: &TokenId) -> (String, &'static str) {
        (format!("{ACCESS}{jti}"), "ACCESS")
    }
    /// The partition listing the families one principal holds with one client.
    pub fn connection_partition(principal: &PrincipalId, client: &ClientId) -> String {
        format!("{CONNECTION}{principal}#{client}")
    }
    /// One client of a user's connections: the partition lists the clients the user ever held
    /// a family with, so that the account page finds the connection partitions to read.
    pub fn user_connection(user: &PrincipalId, client: &ClientId) -> (String, String) {
        (
            user_connections_partition(user),
            format!("{CLIENT}{client}"),
        )
    }
    pub fn user_connections_partition(user: &PrincipalId) -> String {
        format!("{CONNECTION}{user}")
    }
    pub fn connection(
        principal: &PrincipalId,
        client: &ClientId,
        family: &FamilyId,
    ) -> (String, String) {
        (
            connection_partition(principal, client),
            format!("{FAMILY}{family}"),
        )
    }
    pub fn auth_token(hash: &TokenHash) -> (String, &'static str) {
        (format!("{AUTH_TOKEN}{}", hash.to_hex()), "AUTHTOKEN")
    }
    pub fn login_attempts(login: &Login) -> (String, &'static str) {
        (format!("{LOGIN_ATTEMPTS}{login}"), "ATTEMPTS")
    }
    pub fn otps(address: &TokenHash) -> String {
        format!("{OTP}{}", address.to_hex())
    }
    /// Creation time first (zero-padded, see [`sortable_time`]), so a query reads an
    /// address's passwords newest first and `sk >= since` is a time range; then the write time
    /// in microseconds, which orders the requests of one second.
    pub fn otp_sort(created_at: UnixTime, written_micros: u128, id: &uuid::Uuid) -> String {
        format!(
            "{}#{written_micros:020}#{}",
            sortable_time(created_at),
            id.simple()
        )
    }
    /// A rate-limit counter's window (`RateKey::stored` is `<counter>#<subject digest>`).
    pub fn rate_window(key: &str, window_start: UnixTime) -> (String, String) {
        (
            format!("{RATE}{key}"),
            format!("WINDOW#{}", sortable_time(window_start)),
        )
    }
    /// A rate-limit subject's block.
    pub fn rate_block(key: &str) -> (String, &'static str) {
        (format!("{RATE}{key}"), "BLOCK")
    }
    /// An initial access token of dynamic client registration, by its digest.
    pub fn registration_token(hash: &TokenHash) -> (String, &'static str) {
        (format!("{REGISTRATION_TOKEN}{}", hash.to_hex()), "REGTOKEN")
    }
    /// A used `jti` (`ReplayKey::stored`: its kind and digest).
    pub fn used_jti(key: &str) -> (String, &'static str) {
        (format!("{USED_JTI}{key}"), "JTI")
    }
    pub fn email(address: &TokenHash) -> (String, &'static str) {
        (format!("{EMAIL}{}", address.to_hex()), "EMAIL")
    }
    /// An external id's uniqueness item within its company, by the digest of the value (any
    /// text the directory chose, of any length: never a key itself).
    pub fn external_id(company: &PrincipalId, value: &TokenHash) -> (String, &'static str) {
        (
            format!("{EXTERNAL_ID}{company}#{}", value.to_hex()),
            "EXTID",
        )
    }
    pub fn device_authorization(device_code_hash: &TokenHash) -> (String, &'static str) {
        (format!("{DEVICE}{}", device_code_hash.to_hex()), "DEVICE")
    }
    pub fn device_user_code(user_code_hash: &TokenHash) -> (String, &'static str) {
        (
            format!("{DEVICE_USER_CODE}{}", user_code_hash.to_hex()),
            "DEVICEUSER",
        )
    }
    /// The client of a metadata document, by the id derived from the document's URL.
    pub fn document_client(id: &ClientId) -> (String, &'static str) {
        (format!("{DOCUMENT_CLIENT}{id}"), "DOCCLIENT")
    }
    /// A pushed authorization request, by the digest of its `request_uri`'s random part.
    pub fn pushed_authorization(request_uri_hash: &TokenHash) -> (String, &'static str) {
        (
            format!("{PUSHED_AUTHORIZATION}{}", request_uri_hash.to_hex()),
            "PAR",
        )
    }
    /// An identity provider, by its id.
    pub fn idp(id: &IdpId) -> (String, &'static str) {
        (format!("{IDP}{id}"), "IDP")
    }
    /// The partition of one company's IdPs (copies, for listing them with one query).
    pub fn company_idps_partition(company: &PrincipalId) -> String {
        format!("{COMPANY_IDPS}{company}")
    }
    pub fn company_idp(company: &PrincipalId, id: &IdpId) -> (String, String) {
        (company_idps_partition(company), id.to_string())
    }
    /// The partition of the claims on one domain: one item per company, holding a copy of the
    /// IdP, so that discovery is one query and a second claim by the same company is refused.
    pub fn idp_domain_partition(domain: &IdpDomain) -> String {
        format!("{IDP_DOMAIN}{}", domain.as_str())
    }
    pub fn idp_domain(domain: &IdpDomain, company: &PrincipalId) -> (String, String) {
        (idp_domain_partition(domain), company.to_string())
    }
    /// The partition of the OpenID Connect IdPs of one issuer that accept identity assertions
    /// (ID-JAG): one item per IdP, holding a copy of it, so that redeeming one is one query.
    pub fn idp_issuer_partition(issuer: &str) -> String {
        format!("{IDP_ISSUER}{issuer}")
    }
    pub fn idp_issuer(issuer: &str, id: &IdpId) -> (String, String) {
        (idp_issuer_partition(issuer), id.to_string())
    }
    /// The partition of one IdP's links, by upstream subject.
    pub fn federation_link_partition(idp: &IdpId) -> String {
        format!("{FEDERATION_LINK}{idp}")
    }
    pub fn federation_link(idp: &IdpId, subject: &UpstreamSubject) -> (String, String) {
        (federation_link_partition(idp), subject.key())
    }
    /// The partition of one user's links (copies).
    pub fn user_links_partition(user: &PrincipalId) -> String {
        format!("{USER_LINKS}{user}")
    }
    pub fn user_link(
        user: &PrincipalId,
        idp: &IdpId,
        subject: &UpstreamSubject,
    ) -> (String, String) {
        (
            user_links_partition(user),
            format!("{idp} {}", subject.key()),
        )
    }
    /// A sign-in sent to an IdP, by the digest of its `state`.
    pub fn upstream_request(state_hash: &TokenHash) -> (String, &'static str) {
        (
            format!("{UPSTREAM_REQUEST}{}", state_hash.to_hex()),
            "UPSTREAMREQ",
        )
    }

    /// The partition of one user's passkeys.
    pub fn passkey_partition(principal: &PrincipalId) -> String {
        format!("{PASSKEY}{principal}")
    }
    pub fn passkey(principal: &PrincipalId, credential_id: &str) -> (String, String) {
        (passkey_partition(principal), credential_id.to_owned())
    }
    /// A passkey ceremony's state, by the digest of its id.
    pub fn passkey_ceremony(id_hash: &TokenHash) -> (String, &'static str) {
        (
            format!("{PASSKEY_CEREMONY}{}", id_hash.to_hex()),
            "PASSKEYCEREMONY",
        )
    }
    pub fn authorization_code(hash: &TokenHash) -> (String, &'static str) {
        (format!("{AUTHORIZATION_CODE}{}", hash.to_hex()), "AUTHCODE")
    }
    /// The partition of one subject's audit events.
    pub fn audit_partition(subject: &AuditSubject) -> String {
        match subject {
            AuditSubject::Principal(id) => format!("{AUDIT}PRINCIPAL#{id}"),
            AuditSubject::Client(id) => format!("{AUDIT}CLIENT#{id}"),
            AuditSubject::Family(id) => format!("{AUDIT}FAMILY#{id}"),
            AuditSubject::Deployment => format!("{AUDIT}DEPLOYMENT"),
        }
    }
    /// Time first (see [`sortable_time`]), so a query reads newest first and `sk >= since` is
    /// a time range; then the time-ordered event id, which orders the events of one second.
    pub fn audit_sort(at: UnixTime, id: &AuditId) -> String {
        format!("{}#{id}", sortable_time(at))
    }
    /// Zero-padded so that string order is time order and `sk >= since` is a time range.
    pub fn sortable_time(at: UnixTime) -> String {
        format!("{:020}", at.max(0))
    }
    /// The time and event id an [`audit_sort`] key holds.
    pub fn audit_sort_parts(sort: &str) -> Option<(UnixTime, AuditId)> {
        let (time, id) = sort.split_once('#')?;
        let time = time.parse().ok()?;
        let id = uuid::Uuid::try_parse(id).ok()?;
        Some((time, AuditId::new(id)))
    }
}

/// The login uniqueness item: which user holds a login, and on a login item a copy of that user,
/// written in the same transaction as the user item, so that a sign-in reads its user in one
/// `GetItem` (docs/decisions.md, Lockout). Address items, and login items written before the
/// copy existed, hold the id only.
#[derive(Serialize, Deserialize)]
pub(super) struct LoginOwner {
    pub(super) user_id: PrincipalId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) user: Option<User>,
}

impl LoginOwner {
    /// An address item's owner: the id only.
    pub(super) fn id_of(user: &User) -> Self {
        Self {
            user_id: user.id,
            user: None,
        }
    }

    /// A login item's owner, with the copy.
    pub(super) fn copy_of(user: &User) -> Self {
        Self {
            user_id: user.id,
            user: Some(user.clone()),
        }
    }
}

pub(super) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

pub(super) fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

pub(super) fn key(pk: String, sk: impl Into<String>) -> Item {
    HashMap::from([(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))])
}

pub(super) fn to_item<T: Serialize>(
    value: &T,
    (pk, sk): (String, impl Into<String>),
) -> StoreResult<Item> {
    let mut item = encode(value)?;
    // serde_dynamo writes `None` as NULL; leaving the attribute out instead keeps conditions
    // like `attribute_not_exists(revoked_at)` meaningful and omits the TTL on records that have
    // no expiry.
    item.retain(|_, value| !matches!(value, AttributeValue::Null(_)));
    item.insert(PK.to_owned(), s(pk));
    item.insert(SK.to_owned(), s(sk));
    Ok(item)
}

fn encode<T: Serialize>(value: &T) -> StoreResult<Item> {
    serde_dynamo::aws_sdk_dynamodb_1::to_item(value)
        .map_err(|e| StoreError::internal(sanitize(&format!("cannot encode item: {e}"))))
}

pub(super) fn from_item<T: DeserializeOwned>(item: Item) -> StoreResult<T> {
    // Unknown attributes (pk, sk) are ignored by the derived Deserialize impls.
    serde_dynamo::aws_sdk_dynamodb_1::from_item(item)
        .map_err(|e| StoreError::internal(sanitize(&format!("malformed item: {e}"))))
}

/// A refresh token's item, with its family's origin when the writer has it.
pub(super) fn refresh_token_item(
    record: &RefreshTokenRecord,
    origin: Option<&FamilyOrigin>,
) -> StoreResult<Item> {
    let mut item = to_item(record, keys::refresh(&record.token_hash))?;
    if let Some(origin) = origin {
        item.insert(ORIGIN.to_owned(), AttributeValue::M(encode(origin)?));
    }
    Ok(item)
}

/// A refresh token and, unless it was written before the copy existed, its family's origin.
pub(super) fn refresh_token_from_item(
    mut item: Item,
) -> StoreResult<(RefreshTokenRecord, Option<FamilyOrigin>)> {
    let origin = match item.remove(ORIGIN) {
        None => None,
        Some(AttributeValue::M(origin)) => Some(from_item(origin)?),
        Some(_) => {
            return Err(StoreError::internal(format!(
                "malformed item: `{ORIGIN}` is not a map"
            )))
        }
    };
    Ok((from_item(item)?, origin))
}
