//! The store calls and checks the suite makes again and again: a written family, a rotation that
//! must win or must be refused, and reads of records that must be present or absent. Each check
//! names what it was looking at, so a failure still says which rule was broken.

use super::records::*;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditEvent, AuditSubject};
use crate::domain::{
    AccessTokenRecord, Family, FamilyId, LegacyExchange, LegacyToken, RefreshTokenRecord, TokenId,
};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::AuditQuery;
use crate::writes::{create_family, rotate_refresh_token, FamilyCreated, Rotated};

/// A live family with its first refresh and access tokens, written.
pub async fn stored_bundle(store: &dyn Store, now: UnixTime) -> Bundle {
    let bundle = Bundle::live(now);
    bundle.create(store).await;
    bundle
}

/// An application's access token (no family), written.
pub async fn stored_application_token(store: &dyn Store, now: UnixTime) -> AccessTokenRecord {
    let token = application_access_token(now);
    store
        .families()
        .put_access_token(&token)
        .await
        .expect("put_access_token");
    token
}

/// Defines `read_x(store, key, at)`: the aggregate's `get_x(key, at)`, which must not fail.
macro_rules! readers {
    ($($reader:ident: $aggregate:ident.$get:ident($key:ty) -> $record:ty;)+) => {$(
        pub async fn $reader(store: &dyn Store, key: &$key, at: UnixTime) -> Option<$record> {
            store.$aggregate().$get(key, at).await.expect(stringify!($get))
        }
    )+};
}

readers! {
    read_family: families.get_family(FamilyId) -> Family;
    read_refresh_token: families.get_refresh_token(TokenHash) -> RefreshTokenRecord;
    read_access_token: families.get_access_token(TokenId) -> AccessTokenRecord;
    read_legacy_token: legacy.get_legacy_token(TokenHash) -> LegacyToken;
}

/// The family, which must be present at `at` (revoked or not): `what` says why.
pub async fn present_family(store: &dyn Store, id: &FamilyId, at: UnixTime, what: &str) -> Family {
    read_family(store, id, at)
        .await
        .unwrap_or_else(|| panic!("{what}"))
}

/// Asserts that the bundle's family, first refresh token and first access token all read back
/// as created at `at`.
pub async fn assert_bundle_present(store: &dyn Store, bundle: &Bundle, at: UnixTime, what: &str) {
    assert_bundle_reads(store, bundle, at, true, what).await;
}

/// Asserts that the bundle's family, first refresh token and first access token all read as
/// absent at `at`.
pub async fn assert_bundle_absent(store: &dyn Store, bundle: &Bundle, at: UnixTime, what: &str) {
    assert_bundle_reads(store, bundle, at, false, what).await;
}

async fn assert_bundle_reads(
    store: &dyn Store,
    bundle: &Bundle,
    at: UnixTime,
    written: bool,
    what: &str,
) {
    let state = if written { "present" } else { "absent" };
    assert_eq!(
        read_family(store, &bundle.family.id, at).await,
        written.then(|| bundle.family.clone()),
        "{what}: the family is {state}"
    );
    assert_eq!(
        read_refresh_token(store, &bundle.refresh.token_hash, at).await,
        written.then(|| bundle.refresh.clone()),
        "{what}: its first refresh token is {state}"
    );
    assert_eq!(
        read_access_token(store, &bundle.access.jti, at).await,
        written.then(|| bundle.access.clone()),
        "{what}: its first access token is {state}"
    );
}

/// Rotates `presented` in the bundle's family to `successor`, at the successor's issue time.
pub async fn rotate(
    store: &dyn Store,
    bundle: &Bundle,
    presented: &TokenHash,
    (successor, access): &Successor,
) -> Rotated {
    let at = successor.issued_at;
    let rotation = rotation(bundle.family.id, presented, successor, access, at);
    rotate_refresh_token(store, rotation, Vec::new()).await
}

/// Rotates `presented` to `successor`, which must win; returns the successor.
pub async fn assert_rotates(
    store: &dyn Store,
    bundle: &Bundle,
    presented: &TokenHash,
    successor: Successor,
    what: &str,
) -> Successor {
    let outcome = rotate(store, bundle, presented, &successor).await;
    assert_eq!(outcome, Rotated::Rotated, "{what}");
    successor
}

/// Rotates the bundle's first refresh token to a successor issued at `at`, which must win;
/// returns the successor.
pub async fn assert_first_rotation(store: &dyn Store, bundle: &Bundle, at: UnixTime) -> Successor {
    let successor = bundle.successor(at, 1);
    let what = "rotating the family's first refresh token works";
    assert_rotates(store, bundle, &bundle.refresh.token_hash, successor, what).await
}

/// Presents `presented` for rotation to `successor`, which must be refused and write neither
/// the successor nor its access token.
pub async fn assert_rotation_refused(
    store: &dyn Store,
    bundle: &Bundle,
    presented: &TokenHash,
    successor: Successor,
    what: &str,
) {
    let outcome = rotate(store, bundle, presented, &successor).await;
    assert_eq!(outcome, Rotated::NotCurrent, "rotating {what} is refused");
    let (successor, access) = successor;
    let at = successor.issued_at;
    assert_eq!(
        read_refresh_token(store, &successor.token_hash, at).await,
        None,
        "a refused rotation of {what} writes no successor"
    );
    assert_eq!(
        read_access_token(store, &access.jti, at).await,
        None,
        "a refused rotation of {what} writes no access token"
    );
}

/// A legacy token that never expires, imported.
pub async fn stored_legacy_token(store: &dyn Store) -> LegacyToken {
    let legacy = legacy_token(None);
    store
        .legacy()
        .put_legacy_tokens(std::slice::from_ref(&legacy))
        .await
        .expect("put_legacy_tokens");
    legacy
}

/// Exchanges the legacy token for the bundle's family, having seen `previous_family` linked.
pub async fn exchange(
    store: &dyn Store,
    bundle: &Bundle,
    legacy: &TokenHash,
    previous_family: Option<FamilyId>,
    at: UnixTime,
) -> FamilyCreated {
    create_family(store, exchange_of(bundle, legacy, previous_family, at)).await
}

pub async fn read_legacy_exchange(store: &dyn Store, legacy: &TokenHash) -> Option<LegacyExchange> {
    store
        .legacy()
        .get_legacy_exchange(legacy)
        .await
        .expect("get_legacy_exchange")
}

/// The unexpired events listed for `subject` from `since` (`None`: all), newest first, as
/// `tokenctl audit` lists them.
pub async fn listed_audit_events(
    store: &dyn Store,
    subject: AuditSubject,
    since: Option<UnixTime>,
    now: UnixTime,
) -> Vec<AuditEvent> {
    store
        .audit()
        .audit_events(AuditQuery {
            subject,
            since,
            now,
        })
        .await
        .expect("audit_events")
}
