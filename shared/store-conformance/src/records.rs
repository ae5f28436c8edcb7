//! Record builders: one valid record of each kind, with random ids and credentials, so that
//! tests may share a store without colliding. The conformance suite builds everything from
//! these; other tests should too, rather than spelling out every field again.

use crate::clock::{Clock, SystemClock, UnixTime};
use crate::domain::AuthMethod;
use crate::domain::NewClient;
use crate::domain::{
    AccessTokenRecord, AuthToken, Client, ClientId, Company, CompanyStatus, ConsumerKey, Family,
    FamilyId, Geolocation, LegacyExchange, LegacyToken, Login, PrincipalId, PrincipalType,
    RefreshTokenRecord, Resource, Scopes, TokenId, User, UserStatus, ACCESS_TOKEN_TTL_SECONDS,
};
use crate::domain::{MfaPolicy, SsoPolicy};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::{PasswordHash, TokenHash};
use crate::store::{LegacyLink, NewFamily, Rotation, Store};
use crate::writes::{create_family, FamilyCreated, FamilyStart};

pub fn now() -> UnixTime {
    SystemClock.now()
}

pub fn geolocation() -> Geolocation {
    Geolocation::parse("https://us.api.example.com").expect("valid geolocation")
}

pub fn scopes(text: &str) -> Scopes {
    Scopes::parse(text).expect("valid scopes")
}

/// Resource indicators (RFC 8707) from their URIs.
pub fn resources(uris: &[&str]) -> Vec<Resource> {
    uris.iter()
        .map(|uri| Resource::parse(uri).expect("valid resource"))
        .collect()
}

pub fn random_hash() -> TokenHash {
    TokenHash::of(&OsRandom.opaque_token())
}

pub fn client(now: UnixTime) -> Client {
    NewClient {
        connect_url: Some("https://app.example.com/connect".into()),
        redirect_uris: vec!["https://app.example.com/callback".into()],
        backchannel_logout_uri: Some("https://app.example.com/backchannel-logout".into()),
        ..NewClient::named("conformance client", scopes("read write"))
    }
    .into_client(
        ClientId::new(OsRandom.uuid()),
        crate::domain::ClientSecrets::from_single_hash(random_hash()),
        now,
    )
}

pub fn user(now: UnixTime, login: &str) -> User {
    User {
        id: PrincipalId::new(OsRandom.uuid()),
        login: Login::parse(login).expect("valid login"),
        // A fixed PHC string: hashing a real password would only slow the suite down.
        password_hash: PasswordHash::from_phc(
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA".into(),
        ),
        company_id: None,
        is_admin: false,
        geolocation: geolocation(),
        status: UserStatus::Active,
        created_at: now,
        email: None,
        local_sign_in: false,
        directory: None,
        revision: 0,
        deprovisioned_at: None,
        external_id: None,
    }
}

/// A login no other call of the suite uses, in mixed case.
pub fn unique_login() -> String {
    format!("Conformance.User-{}@Example.COM", OsRandom.uuid().simple())
}

pub fn company(now: UnixTime) -> Company {
    Company {
        id: PrincipalId::new(OsRandom.uuid()),
        name: "Conformance Inc.".into(),
        geolocation: geolocation(),
        status: CompanyStatus::Active,
        created_at: now,
        mfa_policy: MfaPolicy::Optional,
        sso_policy: SsoPolicy::Optional,
        admin_group: None,
        id_jag: true,
    }
}

pub fn consumer_key() -> ConsumerKey {
    ConsumerKey::parse(&format!("qyprd-{}", OsRandom.uuid().simple())).expect("valid key")
}

pub fn legacy_token(expires_at: Option<UnixTime>) -> LegacyToken {
    LegacyToken {
        token_hash: random_hash(),
        consumer_key: consumer_key(),
        principal_type: PrincipalType::Company,
        principal_id: PrincipalId::new(OsRandom.uuid()),
        scopes: scopes("accounting payroll"),
        wsadmin: true,
        company_id: Some(PrincipalId::new(OsRandom.uuid())),
        expires_at,
    }
}

/// The legacy token `token` of `user` under `consumer_key`: `read`, no company, never expires.
pub fn user_legacy_token(token: &str, consumer_key: ConsumerKey, user: PrincipalId) -> LegacyToken {
    LegacyToken {
        token_hash: TokenHash::of(token),
        consumer_key,
        principal_type: PrincipalType::User,
        principal_id: user,
        scopes: scopes("read"),
        wsadmin: false,
        company_id: None,
        expires_at: None,
    }
}

pub fn access_token(
    now: UnixTime,
    client_id: ClientId,
    family_id: Option<FamilyId>,
    expires_at: UnixTime,
) -> AccessTokenRecord {
    AccessTokenRecord {
        jti: TokenId::new(OsRandom.uuid()),
        client_id,
        principal_type: if family_id.is_some() {
            PrincipalType::User
        } else {
            PrincipalType::Application
        },
        subject: OsRandom.uuid(),
        family_id,
        scopes: scopes("read"),
        issued_at: now,
        expires_at,
        revoked: false,
        jkt: None,
        audience: Vec::new(),
        act: None,
        client_url: None,
        auth_time: None,
        amr: Vec::new(),
        exchanged_from: Vec::new(),
    }
}

/// A user's access token outside any family, valid for an hour from `now`: what the signing
/// tests and the signing benchmark sign and verify.
pub fn user_access_token(now: UnixTime, scope: &str) -> AccessTokenRecord {
    AccessTokenRecord {
        principal_type: PrincipalType::User,
        scopes: scopes(scope),
        ..access_token(now, ClientId::new(OsRandom.uuid()), None, now + 3600)
    }
}

/// An application's access token (no family, no user), valid for the usual lifetime.
pub fn application_access_token(now: UnixTime) -> AccessTokenRecord {
    access_token(
        now,
        ClientId::new(OsRandom.uuid()),
        None,
        now + ACCESS_TOKEN_TTL_SECONDS,
    )
}

/// A company auth token issued at `issued_at`, absent from `expires_at` on.
pub fn auth_token(issued_at: UnixTime, expires_at: UnixTime) -> AuthToken {
    AuthToken {
        token_hash: random_hash(),
        company_id: PrincipalId::new(OsRandom.uuid()),
        client_id: ClientId::new(OsRandom.uuid()),
        issued_by: PrincipalId::new(OsRandom.uuid()),
        issued_at,
        expires_at,
    }
}

/// A refresh token that succeeds another, and the access token minted with it.
pub type Successor = (RefreshTokenRecord, AccessTokenRecord);

/// A family with its first refresh token and first access token, none of them written yet.
pub struct Bundle {
    pub family: Family,
    pub refresh: RefreshTokenRecord,
    pub access: AccessTokenRecord,
}

impl Bundle {
    /// The family and its refresh token expire at `expires_at`; the access token in an hour
    /// or at `expires_at`, whichever is first.
    pub fn new(now: UnixTime, expires_at: UnixTime) -> Self {
        let client_id = ClientId::new(OsRandom.uuid());
        let family_id = FamilyId::new(OsRandom.uuid());
        let refresh = RefreshTokenRecord {
            token_hash: random_hash(),
            family_id,
            client_id,
            generation: 0,
            issued_at: now,
            expires_at,
            rotated_at: None,
            jkt: None,
        };
        let family = Family {
            id: family_id,
            client_id,
            principal_type: PrincipalType::User,
            principal_id: PrincipalId::new(OsRandom.uuid()),
            scopes: scopes("read write"),
            geolocation: geolocation(),
            current_token: refresh.token_hash.clone(),
            generation: 0,
            created_at: now,
            expires_at,
            revoked_at: None,
            jkt: None,
            auth_time: Some(now - 30),
            sid: None,
            amr: AuthMethod::PASSWORD_AND_CODE.to_vec(),
            idp: None,
            // Kept by the family and copied into its tokens' origin: a refresh may name them.
            resources: resources(&["https://api.example.com/mcp", "https://files.example.com"]),
            rotated_at: None,
            rotated_by: None,
            current_jkt: None,
            bound_from: None,
        };
        // For one of the family's resources: its `aud` must read back with it.
        let access = AccessTokenRecord {
            audience: resources(&["https://files.example.com"]),
            ..access_token(
                now,
                client_id,
                Some(family_id),
                expires_at.min(now + ACCESS_TOKEN_TTL_SECONDS),
            )
        };
        Self {
            family,
            refresh,
            access,
        }
    }

    pub fn live(now: UnixTime) -> Self {
        Self::new(now, now + 180 * 86_400)
    }

    /// A live bundle of `principal`'s family with `client`: what one connection holds.
    pub fn live_for(now: UnixTime, principal: PrincipalId, client: ClientId) -> Self {
        let mut bundle = Self::live(now);
        bundle.family.principal_id = principal;
        bundle.family.client_id = client;
        bundle.refresh.client_id = client;
        bundle.access.client_id = client;
        bundle.access.subject = *principal.as_uuid();
        bundle
    }

    pub fn new_family(&self) -> FamilyStart {
        FamilyStart {
            new: NewFamily {
                family: self.family.clone(),
                refresh_token: Some(self.refresh.clone()),
                access_token: self.access.clone(),
            },
            audit: Vec::new(),
            login_refund: None,
            legacy_exchange: None,
        }
    }

    pub async fn create(&self, store: &dyn Store) {
        let created = create_family(store, self.new_family()).await;
        assert_eq!(
            created,
            FamilyCreated::Created,
            "create_family without a legacy exchange always creates"
        );
    }

    /// The successor of the family's current token at `now`, and the access token minted with
    /// it, neither written yet.
    pub fn successor(&self, now: UnixTime, generation: u32) -> Successor {
        let expires_at = now + 180 * 86_400;
        let successor = RefreshTokenRecord {
            token_hash: random_hash(),
            family_id: self.family.id,
            client_id: self.family.client_id,
            generation,
            issued_at: now,
            expires_at,
            rotated_at: None,
            // A rotation with a proof binds its successor (`RefreshTokenRecord::jkt`): the
            // binding must read back.
            jkt: Some(format!("successor-key-{generation}")),
        };
        let access = access_token(
            now,
            self.family.client_id,
            Some(self.family.id),
            now + ACCESS_TOKEN_TTL_SECONDS,
        );
        (successor, access)
    }
}

pub fn rotation(
    family_id: FamilyId,
    presented: &TokenHash,
    successor: &RefreshTokenRecord,
    access_token: &AccessTokenRecord,
    now: UnixTime,
) -> Rotation {
    Rotation {
        family_id,
        presented: presented.clone(),
        successor: successor.clone(),
        access_token: access_token.clone(),
        now,
    }
}

pub fn exchange_of(
    bundle: &Bundle,
    token_hash: &TokenHash,
    previous_family: Option<FamilyId>,
    now: UnixTime,
) -> FamilyStart {
    let link = LegacyLink {
        exchange: LegacyExchange {
            token_hash: token_hash.clone(),
            family_id: bundle.family.id,
            exchanged_at: now,
        },
        previous_family,
    };
    FamilyStart {
        legacy_exchange: Some((link, Vec::new())),
        ..bundle.new_family()
    }
}
