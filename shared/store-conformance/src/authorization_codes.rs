//! Authorization codes: single use, bound to their client, remembered with the family the
//! redemption started.

use super::records::*;
use crate::domain::AuthMethod;
use crate::domain::{
    AuthorizationCode, ClientId, FamilyId, PrincipalId, AUTHORIZATION_CODE_TTL_SECONDS,
    REDEEMED_CODE_RETENTION_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::CodeRedeemed;

fn code(now: i64) -> AuthorizationCode {
    AuthorizationCode {
        code_hash: random_hash(),
        client_id: ClientId::new(OsRandom.uuid()),
        redirect_uri: "https://app.example.com/callback".into(),
        user_id: PrincipalId::new(OsRandom.uuid()),
        scopes: scopes("openid read"),
        code_challenge: Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into()),
        nonce: Some("n-0S6_WzA2Mj".into()),
        issued_at: now,
        expires_at: now + AUTHORIZATION_CODE_TTL_SECONDS,
        redeemed_at: None,
        family_id: None,
        auth_time: Some(now - 5),
        sid: None,
        amr: AuthMethod::PASSWORD_AND_CODE.to_vec(),
        idp: None,
        dpop_jkt: None,
        resources: resources(&["https://api.example.com/mcp", "http://127.0.0.1:9000/"]),
    }
}

/// A fresh code, stored.
async fn stored_code(store: &dyn Store, now: i64) -> AuthorizationCode {
    let code = code(now);
    store
        .authorization_codes()
        .put_authorization_code(&code)
        .await
        .expect("put_authorization_code");
    code
}

/// Redeems `code_hash` for `client_id` at `at`, for `family`.
async fn redeem(
    store: &dyn Store,
    code_hash: &TokenHash,
    client_id: &ClientId,
    family: &FamilyId,
    at: i64,
) -> CodeRedeemed {
    store
        .authorization_codes()
        .redeem_authorization_code(code_hash, client_id, Some(family), at)
        .await
        .expect("redeem")
}

pub async fn authorization_code_is_redeemed_once_and_remembers_its_family(store: &dyn Store) {
    let now = now();
    let code = stored_code(store, now).await;
    let hash = &code.code_hash;
    assert_eq!(
        store
            .authorization_codes()
            .get_authorization_code(hash, now)
            .await
            .expect("get"),
        Some(code.clone()),
        "a stored code reads back whole"
    );
    let other_client = ClientId::new(OsRandom.uuid());
    let family = FamilyId::new(OsRandom.uuid());
    let competitor = FamilyId::new(OsRandom.uuid());
    assert_eq!(
        redeem(store, hash, &other_client, &family, now).await,
        CodeRedeemed::NotRedeemable,
        "another client cannot redeem the code"
    );
    assert_eq!(
        redeem(store, hash, &code.client_id, &family, now + 1).await,
        CodeRedeemed::Redeemed,
        "its own client redeems it"
    );
    assert_eq!(
        redeem(store, hash, &code.client_id, &competitor, now + 2).await,
        CodeRedeemed::NotRedeemable,
        "a code is redeemed once"
    );
    assert_eq!(
        redeem(store, hash, &code.client_id, &family, now + 2).await,
        CodeRedeemed::Redeemed,
        "the same redemption repeated (a resubmission after a lost answer) is still its own"
    );
    assert_eq!(
        redeem(store, hash, &other_client, &family, now + 2).await,
        CodeRedeemed::NotRedeemable,
        "but never for another client"
    );
    assert_eq!(
        store
            .authorization_codes()
            .redeem_authorization_code(hash, &code.client_id, None, now + 2)
            .await
            .expect("redeem"),
        CodeRedeemed::NotRedeemable,
        "nor without a family"
    );
    let read = store
        .authorization_codes()
        .get_authorization_code(hash, now + 3)
        .await
        .expect("get")
        .expect("a redeemed code is still readable");
    assert_eq!(
        read.redeemed_at,
        Some(now + 1),
        "the redemption time is kept"
    );
    assert_eq!(
        read.family_id,
        Some(family),
        "the family is remembered, and no competitor's replaced it"
    );
    let late = now + AUTHORIZATION_CODE_TTL_SECONDS + 3_600;
    assert_eq!(
        store
            .authorization_codes()
            .get_authorization_code(hash, late)
            .await
            .expect("get")
            .and_then(|code| code.family_id),
        Some(family),
        "a redeemed code is remembered past its validity, for a late second use"
    );
    assert_eq!(
        redeem(store, hash, &code.client_id, &competitor, late).await,
        CodeRedeemed::NotRedeemable,
        "and stays unredeemable"
    );
    assert_eq!(
        store
            .authorization_codes()
            .get_authorization_code(hash, now + 2 + REDEEMED_CODE_RETENTION_SECONDS)
            .await
            .expect("get"),
        None,
        "a day after its (repeated) redemption it is forgotten"
    );
    let unredeemed = stored_code(store, now).await;
    assert_eq!(
        store
            .authorization_codes()
            .get_authorization_code(&unredeemed.code_hash, now + AUTHORIZATION_CODE_TTL_SECONDS)
            .await
            .expect("get"),
        None,
        "an expired, unredeemed code reads as absent"
    );
    assert_eq!(
        store
            .authorization_codes()
            .get_authorization_code(&random_hash(), now)
            .await
            .expect("get"),
        None,
        "an unknown code is absent"
    );
}

pub async fn expired_authorization_code_is_not_redeemable(store: &dyn Store) {
    let now = now();
    let code = stored_code(store, now).await;
    let family = FamilyId::new(OsRandom.uuid());
    assert_eq!(
        redeem(
            store,
            &code.code_hash,
            &code.client_id,
            &family,
            now + AUTHORIZATION_CODE_TTL_SECONDS
        )
        .await,
        CodeRedeemed::NotRedeemable,
        "an expired code cannot be redeemed"
    );
    assert_eq!(
        redeem(store, &random_hash(), &code.client_id, &family, now).await,
        CodeRedeemed::NotRedeemable,
        "an unknown code cannot be redeemed (and is not created)"
    );
}

pub async fn concurrent_redemptions_have_one_winner(store: &dyn Store) {
    let now = now();
    let code = stored_code(store, now).await;
    let families: Vec<FamilyId> = (0..10).map(|_| FamilyId::new(OsRandom.uuid())).collect();
    let attempts = families.iter().map(|family| {
        store.authorization_codes().redeem_authorization_code(
            &code.code_hash,
            &code.client_id,
            Some(family),
            now,
        )
    });
    let outcomes = futures::future::join_all(attempts).await;
    let winners = outcomes
        .into_iter()
        .map(|o| o.expect("redeem"))
        .filter(|o| *o == CodeRedeemed::Redeemed)
        .count();
    assert_eq!(winners, 1, "exactly one of 10 concurrent redemptions wins");
}
