//! `tokens revoke-family`: a family the service issued stops working, access tokens included.

use token_domain::clock::{Clock, SystemClock};
use token_domain::{ClientId, PrincipalId};
use token_store_conformance::records::Bundle;

use super::target::{Target, UNKNOWN};

pub async fn revoke_family(t: &Target, client_id: ClientId, user_id: PrincipalId) {
    let store = &t.store;
    // A family with its first refresh token and access token, as a password grant writes them.
    let issued = Bundle::live_for(SystemClock.now(), user_id, client_id);
    issued.create(store.as_ref()).await;
    let family_id = issued.family.id.to_string();

    let out = t.json(&["tokens", "revoke-family", &family_id]);
    assert_eq!(out["revoked"], true);
    let now = SystemClock.now();
    let family = store
        .families()
        .get_family(&issued.family.id, now)
        .await
        .unwrap()
        .unwrap();
    assert!(family.revoked_at.is_some());
    let access = store
        .families()
        .get_access_token(&issued.access.jti, now)
        .await
        .unwrap()
        .unwrap();
    assert!(access.revoked);
    // Idempotent; unknown or malformed ids.
    t.json(&["tokens", "revoke-family", &family_id]);
    t.fails(&["tokens", "revoke-family", UNKNOWN], 3);
    t.fails(&["tokens", "revoke-family", "family-1"], 2);
}
