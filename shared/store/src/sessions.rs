//! Sign-in sessions and remembered consent (docs/decisions.md, "Sign-in sessions"): both kept
//! per principal, so that the account page and `tokenctl sessions list` read a user's with one
//! query.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{ClientId, Consent, PrincipalId, SessionId, SignInSession};

#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Stores a new session (its id is fresh: an integrity condition, not an outcome).
    async fn put_session(&self, session: &SignInSession) -> StoreResult<()>;

    /// The live session, or `None` when it is unknown, ended or expired at `now`.
    async fn get_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        now: UnixTime,
    ) -> StoreResult<Option<SignInSession>>;

    /// The principal's live sessions, oldest first.
    async fn list_sessions(
        &self,
        principal: &PrincipalId,
        now: UnixTime,
    ) -> StoreResult<Vec<SignInSession>>;

    /// Writes the last-seen time and the expiry it moves, if the session is still live and was
    /// last seen before `last_seen` (so a late writer never moves it back). Returns whether it
    /// wrote.
    async fn touch_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        last_seen: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<bool>;

    /// Replaces a live session's cookie hash, `authenticated_at`, `last_seen` and `expires_at`
    /// with `session`'s (a sign-in again within it). `false` if it ended meanwhile.
    async fn reauthenticate_session(
        &self,
        session: &SignInSession,
        now: UnixTime,
    ) -> StoreResult<bool>;

    /// Adds `client` to the clients told when the session ends; no write when it is listed.
    /// `false` if the session ended meanwhile.
    async fn add_session_client(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<bool>;

    /// Deletes the session and answers it as it was, or `None` if it was gone (or expired):
    /// of concurrent deletions one gets it, so its clients are told once.
    async fn delete_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        now: UnixTime,
    ) -> StoreResult<Option<SignInSession>>;
}

#[async_trait]
pub trait ConsentStore: Send + Sync {
    /// Stores (replacing) what the user approved for the client.
    async fn put_consent(&self, consent: &Consent) -> StoreResult<()>;

    async fn get_consent(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<Option<Consent>>;

    /// The user's consents, by client id.
    async fn list_consents(&self, principal: &PrincipalId) -> StoreResult<Vec<Consent>>;

    /// Forgets the consent; `false` if there was none.
    async fn delete_consent(&self, principal: &PrincipalId, client: &ClientId)
        -> StoreResult<bool>;
}
