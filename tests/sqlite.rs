//! SQLite test stores: a fresh database file in a temporary directory per test.
//!
//! A real file rather than `:memory:`, so the tests exercise what the local server runs on: WAL,
//! the busy timeout, and a second connection (another process) on the same file.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use tempfile::TempDir;
use token_service::clock::UnixTime;
use token_service::domain::{
    AccessTokenRecord, AuthToken, Client, ClientId, Company, ConsumerKey, Family, FamilyId,
    LegacyApp, LegacyExchange, LegacyToken, Login, PrincipalId, RefreshTokenRecord, TokenId, User,
};
use token_service::secrets::TokenHash;
use token_service::store::sqlite::SqliteStore;
use token_service::store::{
    FamilyCreated, Inserted, NewFamily, Rotated, Rotation, Store, StoreResult,
};

/// A fresh, empty store on a new database file; the file is deleted when the last handle to the
/// store is dropped.
pub async fn make_store() -> Arc<dyn Store> {
    Arc::new(TempSqliteStore::new())
}

/// A directory for tests that open the database file themselves (two stores on one file).
pub fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("token-service-sqlite-")
        .tempdir()
        .expect("create a temporary directory")
}

/// A [`SqliteStore`] that owns its temporary directory, so the database lives exactly as long
/// as the store and is cleaned up after the test.
#[derive(Debug)]
pub struct TempSqliteStore {
    // Declared first: dropped (connection closed) before the directory is removed.
    store: SqliteStore,
    dir: TempDir,
}

impl TempSqliteStore {
    pub fn new() -> Self {
        let dir = temp_dir();
        let store = SqliteStore::open_in_dir(dir.path()).expect("open the SQLite store");
        Self { store, dir }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn store(&self) -> &SqliteStore {
        &self.store
    }
}

impl Default for TempSqliteStore {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Store for TempSqliteStore {
    async fn put_client(&self, client: &Client) -> StoreResult<()> {
        self.store.put_client(client).await
    }
    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>> {
        self.store.get_client(id).await
    }
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        self.store.insert_user(user).await
    }
    async fn put_user(&self, user: &User) -> StoreResult<()> {
        self.store.put_user(user).await
    }
    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>> {
        self.store.get_user(id).await
    }
    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>> {
        self.store.get_user_by_login(login).await
    }
    async fn put_company(&self, company: &Company) -> StoreResult<()> {
        self.store.put_company(company).await
    }
    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>> {
        self.store.get_company(id).await
    }
    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()> {
        self.store.enable_company_for_client(company, client).await
    }
    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        self.store
            .is_company_enabled_for_client(company, client)
            .await
    }
    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()> {
        self.store.put_legacy_app(app).await
    }
    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
        self.store.get_legacy_app(key).await
    }
    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
        self.store.put_legacy_tokens(tokens).await
    }
    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>> {
        self.store.get_legacy_token(hash, now).await
    }
    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
        self.store.get_legacy_exchange(hash).await
    }
    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()> {
        self.store.put_auth_token(token).await
    }
    async fn get_auth_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthToken>> {
        self.store.get_auth_token(hash, now).await
    }
    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated> {
        self.store.create_family(new).await
    }
    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>> {
        self.store.get_family(id, now).await
    }
    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>> {
        self.store.get_refresh_token(hash, now).await
    }
    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated> {
        self.store.rotate_refresh_token(rotation).await
    }
    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        self.store.revoke_family(id, now).await
    }
    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        self.store.put_access_token(record).await
    }
    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>> {
        self.store.get_access_token(jti, now).await
    }
    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        self.store.record_failed_login(login, at, expires_at).await
    }
    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32> {
        self.store.count_failed_logins(login, since).await
    }
}
