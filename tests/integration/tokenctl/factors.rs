//! `users factors list` and `users factors remove`: an administrator sees a user's passkeys and
//! authenticator app and removes them one by one, by the ids the listing prints, each audited;
//! the app enrolled on the account page stops being asked for once removed.

use serde_json::Value;
use token_domain::audit::{AuditKind, AuditSubject, RemovedFactor};
use token_domain::clock::{Clock, SystemClock};
use token_domain::{PasskeyCredential, PrincipalId, RECOVERY_CODE_COUNT};

use super::target::{Target, UNKNOWN};
use crate::authorize::flow::{LOGIN, PASSWORD};
use crate::openid::{account_sign_in, second_factor::enrolled, set_cookie_pair};
use crate::support::assertions::assert_token_error;

/// A credential id that starts with `-`, as one in 64 base64url ids does.
const HYPHENED: &str = "-Hyphened_credential-id_0";
const LAPTOP: &str = "AbCdEfGhIjKlMnOpQrStUv";

pub async fn list_and_remove(t: &Target) {
    let app = super::app_on(t).await;
    let user = app
        .create_user_with(LOGIN, PASSWORD, |new| new.email = Some(LOGIN.to_owned()))
        .await;
    let user_id = user.id.to_string();
    let (_, recovery_codes) = enrolled(&app).await;
    assert_eq!(recovery_codes.len(), RECOVERY_CODE_COUNT);
    // One recovery code used: the listing counts what is left.
    let digest = token_domain::secrets::TokenHash::of(&recovery_codes[0]);
    let factors = t.store.second_factors();
    assert!(factors.use_recovery_code(&user.id, &digest).await.unwrap());
    let now = SystemClock.now();
    put_passkey(t, user.id, LAPTOP, "Work laptop", now - 60, Some(now)).await;
    put_passkey(t, user.id, HYPHENED, "Phone", now, None).await;

    let listed = t.json(&["users", "factors", "list", &user_id]);
    assert_eq!(listed["user_id"], user_id.as_str());
    let ids = factor_ids(&listed);
    assert_eq!(ids.len(), 3, "{listed}");
    assert!(ids.contains(&LAPTOP.to_owned()) && ids.contains(&HYPHENED.to_owned()));
    assert_eq!(ids.last().map(String::as_str), Some("authenticator-app"));
    let laptop = by_id(&listed, LAPTOP);
    assert_eq!(laptop["type"], "passkey");
    assert_eq!(laptop["name"], "Work laptop");
    assert!(laptop["created"].as_str().unwrap().ends_with('Z'));
    assert!(laptop["last_used"].is_string());
    assert_eq!(by_id(&listed, HYPHENED)["last_used"], Value::Null);
    let app_factor = by_id(&listed, "authenticator-app");
    assert_eq!(app_factor["type"], "authenticator-app");
    assert!(app_factor["enrolled_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(app_factor["recovery_codes_left"], RECOVERY_CODE_COUNT - 1);
    let text = t.text(&["users", "factors", "list", &user_id]);
    for id in &ids {
        assert!(text.contains(id.as_str()), "{text}");
    }
    assert!(text.contains("9 recovery code(s) left"), "{text}");
    // With the app, the account page's sign-in asks for its code before any session, and the
    // password grant goes around no factor of the user's.
    let (_, answer) = account_sign_in(&app).await;
    assert!(set_cookie_pair(&answer, "__Host-session").is_none());
    let client = app.create_client("read").await;
    let grant = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_token_error(&grant, 403, "access_denied", 180);

    // Each id exactly as listed, the hyphened one without `--` before it.
    for id in &ids {
        let removed = t.json(&["users", "factors", "remove", &user_id, id]);
        assert_eq!(removed["removed"], true);
        assert_eq!(removed["factor_id"], id.as_str());
    }
    let passkeys = t.store.passkeys();
    for credential in [LAPTOP, HYPHENED] {
        assert_eq!(
            passkeys.get_passkey(&user.id, credential).await.unwrap(),
            None
        );
    }
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);
    let unused = token_domain::secrets::TokenHash::of(&recovery_codes[1]);
    assert!(
        !factors.use_recovery_code(&user.id, &unused).await.unwrap(),
        "the recovery codes went with the app"
    );
    let empty = t.json(&["users", "factors", "list", &user_id]);
    assert_eq!(empty["factors"], serde_json::json!([]));
    // No code step any more: the password alone opens a session.
    let (_, answer) = account_sign_in(&app).await;
    assert!(set_cookie_pair(&answer, "__Host-session").is_some());
    // Nothing of the user's own left to require a second factor for: the grant signs in.
    app.user_tokens(&client, LOGIN, PASSWORD).await;
    removals_mailed(t);

    let removed: Vec<RemovedFactor> =
        crate::audit::events_of(&app, AuditSubject::Principal(user.id))
            .await
            .into_iter()
            .filter_map(|event| match event.kind {
                AuditKind::SecondFactorRemovedByAdministrator { factor } => Some(factor),
                _ => None,
            })
            .collect();
    assert_eq!(
        removed,
        vec![
            RemovedFactor::AuthenticatorApp,
            RemovedFactor::Passkey,
            RemovedFactor::Passkey
        ],
        "newest first"
    );
    refusals(t, &user_id);
}

/// Unknown users and factors are 3, ids that can name nothing 2, each a one-line reason.
fn refusals(t: &Target, user_id: &str) {
    let gone = t.fails(&["users", "factors", "remove", user_id, LAPTOP], 3);
    assert!(
        gone.contains(&format!("passkey {LAPTOP} of user {user_id} not found")),
        "{gone}"
    );
    let no_app = t.fails(
        &["users", "factors", "remove", user_id, "authenticator-app"],
        3,
    );
    let expected = format!("authenticator app of user {user_id} not found");
    assert!(no_app.contains(&expected), "{no_app}");
    let unknown = t.fails(&["users", "factors", "list", UNKNOWN], 3);
    assert!(
        unknown.contains(&format!("user {UNKNOWN} not found")),
        "{unknown}"
    );
    t.fails(
        &["users", "factors", "remove", UNKNOWN, "authenticator-app"],
        3,
    );
    t.fails(&["users", "factors", "remove", user_id, "not/an=id"], 2);
    t.fails(&["users", "factors", "list", "nobody"], 2);
}

/// One mail per removal in the outbox under DATA_DIR (the tool's mailer without `SMTP_URL`),
/// as the user gets for a removal of their own.
fn removals_mailed(t: &Target) {
    let mut mails: Vec<_> = std::fs::read_dir(t.dir.path().join("outbox"))
        .expect("the tool wrote to the outbox")
        .map(|entry| entry.unwrap().path())
        .collect();
    mails.sort();
    let mails: Vec<String> = mails
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    assert_eq!(mails.len(), 3, "one per factor removed");
    for mail in &mails {
        assert!(mail.contains("To: ann@example.com"), "{mail}");
        assert!(
            mail.contains("Subject: A sign-in method was removed from your account"),
            "{mail}"
        );
    }
    assert!(
        mails[2].contains("Your authenticator app was removed"),
        "{}",
        mails[2]
    );
    assert!(mails[..2].iter().any(|mail| mail.contains("Work laptop")));
}

async fn put_passkey(
    t: &Target,
    user: PrincipalId,
    credential_id: &str,
    name: &str,
    created_at: i64,
    last_used_at: Option<i64>,
) {
    let passkey = PasskeyCredential {
        principal_id: user,
        credential_id: credential_id.to_owned(),
        name: name.to_owned(),
        // Never read here: listing and removal do not open the credential.
        passkey: "{}".to_owned(),
        created_at,
        last_used_at,
    };
    assert!(t.store.passkeys().put_passkey(&passkey).await.unwrap());
}

fn factor_ids(listed: &Value) -> Vec<String> {
    listed["factors"]
        .as_array()
        .unwrap_or_else(|| panic!("factors in {listed}"))
        .iter()
        .map(|factor| factor["factor_id"].as_str().unwrap().to_owned())
        .collect()
}

fn by_id<'a>(listed: &'a Value, id: &str) -> &'a Value {
    listed["factors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|factor| factor["factor_id"] == id)
        .unwrap_or_else(|| panic!("{id} in {listed}"))
}
