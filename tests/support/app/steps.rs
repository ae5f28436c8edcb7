//! Grants, administration steps and response readers that several suites share: each was
//! written out in two or more of them before.

use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin;
use token_core::jwt::AccessTokenClaims;
use token_domain::clock::Clock;
use token_domain::secrets::{Secret, TokenHash};
use token_domain::{
    AccessTokenRecord, ClientId, Company, CompanyStatus, ConsumerKey, Family, FamilyId,
    LegacyExchange, RefreshTokenRecord, TokenId, User,
};

use super::{json_of, TestApp, TestClient};

/// Grants and administration steps that several suites take the same way.
impl TestApp {
    /// The password grant for a user (`extra`: `scope`, `credtype`, ...); status and JSON body,
    /// whatever the answer.
    pub async fn password_grant(
        &self,
        client: &TestClient,
        login: &str,
        password: &str,
        extra: &[(&str, &str)],
    ) -> (StatusCode, Value) {
        self.token(&password_form(client, login, password, extra))
            .await
    }

    /// The refresh grant as `client`; status and JSON body, whatever the answer.
    pub async fn refresh(&self, client: &TestClient, refresh_token: &str) -> (StatusCode, Value) {
        self.token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("refresh_token", refresh_token),
        ])
        .await
    }

    /// An administrator of `company`, living here.
    pub async fn create_company_admin(
        &self,
        login: &str,
        password: &str,
        company: &Company,
    ) -> User {
        self.create_user_with(login, password, |u| {
            u.company_id = Some(company.id);
            u.is_admin = true;
        })
        .await
    }

    /// Stores `auth_token` as a company auth token of `company` for `client`, issued now by
    /// `admin` and valid a day, as the Connect redirect would have issued it.
    pub async fn put_auth_token(
        &self,
        auth_token: &str,
        company: &Company,
        client: &TestClient,
        admin: &User,
    ) {
        let now = self.clock.now();
        self.store
            .auth_tokens()
            .put_auth_token(&token_domain::AuthToken {
                token_hash: TokenHash::of(auth_token),
                company_id: company.id,
                client_id: ClientId::parse(&client.id).unwrap(),
                issued_by: admin.id,
                issued_at: now,
                expires_at: now + 86_400,
            })
            .await
            .unwrap();
    }

    /// Lets `client` ask for `company`'s tokens (and auth tokens).
    pub async fn enable_company_for(&self, company: &Company, client: &TestClient) {
        admin::enable_company_for_client(
            self.ctx(),
            &company.id,
            &ClientId::parse(&client.id).unwrap(),
        )
        .await
        .unwrap();
    }

    pub async fn set_company_status(&self, company: &Company, status: CompanyStatus) {
        admin::set_company_status(self.ctx(), &company.id, status)
            .await
            .unwrap();
    }

    /// Links an old app's consumer key to `client` (the old-token exchange's migration step).
    pub async fn link_legacy_app(&self, consumer_key: &str, client: &TestClient) {
        admin::link_legacy_app(
            self.ctx(),
            ConsumerKey::parse(consumer_key).unwrap(),
            &ClientId::parse(&client.id).unwrap(),
        )
        .await
        .unwrap();
    }

    /// The record of `refresh_token` as the service finds it now: stored under its digest, or,
    /// for a token that names its family, made from that family; panics unless it is found.
    pub async fn stored_refresh_token(&self, refresh_token: &str) -> RefreshTokenRecord {
        self.services
            .issuer()
            .find_refresh_token(&Secret::new(refresh_token))
            .await
            .unwrap()
            .expect("the refresh token is stored")
            .token
            .record
    }

    /// The stored access token `jti` as the store returns it now: `None` once it has expired.
    pub async fn stored_access_token(&self, jti: &TokenId) -> Option<AccessTokenRecord> {
        self.store
            .families()
            .get_access_token(jti, self.clock.now())
            .await
            .unwrap()
    }

    /// The stored family `id`, as the store returns it now; panics unless it is there.
    pub async fn stored_family(&self, id: &FamilyId) -> Family {
        self.store
            .families()
            .get_family(id, self.clock.now())
            .await
            .unwrap()
            .expect("the family is stored")
    }

    /// The plain value a `__Host-session` cookie's sealed value carries (what the session's
    /// stored hash is of); panics for a value that is not one of ours.
    pub async fn plain_session_cookie(&self, value: &str) -> String {
        token_core::flows::sessions::plain_cookie(&self.services, value)
            .await
            .expect("the key ring is readable")
            .expect("a session cookie of this deployment")
    }

    /// The claims of `access_token`, which this deployment signed and which has not expired;
    /// panics otherwise.
    pub async fn claims_of(&self, access_token: &str) -> AccessTokenClaims {
        self.services
            .codec
            .decode(access_token, self.clock.now())
            .await
            .expect("the signing keys are readable")
            .expect("an access token this deployment signed")
    }

    /// The family the exchange of the old-framework token `old_token` started, as stored now:
    /// `None` while it has not been exchanged.
    pub async fn stored_legacy_link(&self, old_token: &str) -> Option<LegacyExchange> {
        self.store
            .legacy()
            .get_legacy_exchange(&TokenHash::of(old_token))
            .await
            .unwrap()
    }
}

/// The password grant's form for a user, `extra` parameters appended.
pub fn password_form<'a>(
    client: &'a TestClient,
    login: &'a str,
    password: &'a str,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("grant_type", "password"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("username", login),
        ("password", password),
    ];
    form.extend_from_slice(extra);
    form
}

/// Sends `request` to the test server; its status and JSON body.
pub async fn answer_of(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    json_of(
        request
            .send()
            .await
            .expect("request reaches the test server"),
    )
    .await
}

/// A string field of a JSON body; panics, showing the body, when it is missing.
#[track_caller]
pub fn field<'a>(body: &'a Value, name: &str) -> &'a str {
    body[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} missing in {body}"))
}

/// An access token's `jti`, read from its payload without checking the signature (the tests that
/// call this verify it elsewhere, or only need to find the stored record).
pub fn jti_of(access_token: &str) -> TokenId {
    use base64::Engine;
    let payload = access_token.split('.').nth(1).expect("a JWT");
    let claims: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap();
    TokenId::parse(claims["jti"].as_str().unwrap()).unwrap()
}
