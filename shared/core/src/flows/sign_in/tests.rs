//! The interaction's transitions in process over SQLite with a manual clock: a password alone;
//! a password then a code (a wrong one shows the same step again, a right one signs in with both
//! factors); a carried step refused in another browser or for another continuation; at most five
//! codes per password step; and the enrolment a company's policy requires, then its recovery
//! codes, then the session.

use std::sync::Arc;

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::config::Policy;
use crate::context::Context;
use crate::domain::{AuthMethod, MfaPolicy, PrincipalId, TotpSecret};
use crate::flows::second_factor::{self, Confirmation, EnrolmentBinding};
use crate::jwt::AccessTokenCodec;
use crate::random::OsRandom;
use crate::secrets::PasswordHash;
use crate::signing::KeyRing;
use crate::store::sqlite::SqliteStore;

const NOW: i64 = 1_800_000_000;
const PASSWORD: &str = "correct horse battery staple";
const BROWSER: &str = "the browser's nonce";

struct Fixture {
    services: Services,
    clock: Arc<ManualClock>,
    user: User,
    _dir: tempfile::TempDir,
}

async fn fixture(policy: Policy) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let clock = Arc::new(ManualClock::new(NOW));
    let ctx = Context::new(Arc::new(store)).with_clock(clock.clone());
    let keys = Arc::new(KeyRing::generate(&OsRandom, clock.as_ref()));
    let geolocation = token_store_conformance::records::geolocation();
    let codec = AccessTokenCodec::new(keys, geolocation);
    let services = Services::new(ctx, codec, policy);
    let mut user = token_store_conformance::records::user(NOW, "pat");
    user.password_hash = PasswordHash::new(PASSWORD, &OsRandom);
    services
        .ctx
        .store
        .principals()
        .insert_user(&user)
        .await
        .unwrap();
    Fixture {
        services,
        clock,
        user,
        _dir: dir,
    }
}

fn interaction(then: &Continue) -> Interaction<'_> {
    Interaction {
        browser: BROWSER,
        then,
        session_cookie: None,
        expected_user: None,
        resume: None,
    }
}

fn password() -> Input<'static> {
    Input::Identify {
        login: "pat",
        password: PASSWORD,
        passkey: None,
        idp: None,
    }
}

async fn step(f: &Fixture, then: &Continue, input: Input<'_>) -> Next {
    advance(&f.services, interaction(then), input, None)
        .await
        .unwrap()
}

/// Sets up an authenticator app for the fixture's user; the secret its codes come from.
async fn with_authenticator_app(f: &Fixture) -> TotpSecret {
    let binding = EnrolmentBinding::SignIn("set-up");
    let enrolment = second_factor::begin_enrolment(&f.services, binding, &f.user)
        .await
        .unwrap();
    let secret = TotpSecret::from_base32(&enrolment.secret_base32).unwrap();
    let code = secret.code_at(f.clock.now());
    let confirmed =
        second_factor::confirm_enrolment(&f.services, binding, &f.user, &enrolment.sealed, &code)
            .await
            .unwrap();
    assert!(matches!(confirmed, Confirmation::Enrolled(_)));
    f.clock.advance(30);
    secret
}

fn carried_code_step(next: Next) -> String {
    match next {
        Next::Show(Shown::Step {
            carried,
            step: Step::SecondFactor { .. },
        }) => carried,
        other => panic!("the code page, not {other:?}"),
    }
}

#[tokio::test]
async fn a_password_alone_signs_in_and_continues_where_it_was_opened() {
    let f = fixture(Policy::default()).await;
    let then = Continue::DeviceCode("code".into());
    let Next::SignedIn(signed_in) = step(&f, &then, password()).await else {
        panic!("signed in");
    };
    assert_eq!(signed_in.user(), f.user.id);
    assert_eq!(signed_in.amr(), AuthMethod::PASSWORD);
    assert_eq!(signed_in.auth_time(), NOW);
    assert_eq!(signed_in.then, then);
    let wrong = Input::Identify {
        login: "pat",
        password: "wrong",
        passkey: None,
        idp: None,
    };
    let Next::Show(Shown::Identify { login, error }) = step(&f, &then, wrong).await else {
        panic!("the sign-in form again");
    };
    assert_eq!(login, "pat");
    assert_eq!(
        error,
        Some(sign_in_message(
            crate::errors::ErrorCode::IncorrectCredentials
        ))
    );
}

#[tokio::test]
async fn an_authenticator_app_user_types_a_code_after_the_password() {
    let f = fixture(Policy::default()).await;
    let secret = with_authenticator_app(&f).await;
    let then = Continue::Account;
    let carried = carried_code_step(step(&f, &then, password()).await);
    let wrong = Input::Code {
        carried: &carried,
        code: "000000x",
    };
    match step(&f, &then, wrong).await {
        Next::Show(Shown::Step {
            carried: again,
            step: Step::SecondFactor { error },
        }) => {
            assert_eq!(again, carried, "the same step");
            assert_eq!(error, Some(WRONG_CODE));
        }
        other => panic!("the code page again, not {other:?}"),
    }
    let code = secret.code_at(f.clock.now());
    let right = Input::Code {
        carried: &carried,
        code: &code,
    };
    let Next::SignedIn(signed_in) = step(&f, &then, right).await else {
        panic!("signed in");
    };
    assert_eq!(signed_in.amr(), AuthMethod::PASSWORD_AND_CODE);
    assert_eq!(signed_in.user(), f.user.id);
}

#[tokio::test]
async fn a_carried_step_opens_only_in_its_browser_for_its_continuation_and_in_time() {
    let f = fixture(Policy::default()).await;
    let secret = with_authenticator_app(&f).await;
    let device = Continue::DeviceCode("one device".into());
    let carried = carried_code_step(step(&f, &device, password()).await);
    let code = secret.code_at(f.clock.now());
    let input = || Input::Code {
        carried: &carried,
        code: &code,
    };
    let other_device = Continue::DeviceCode("another device".into());
    assert!(matches!(
        step(&f, &other_device, input()).await,
        Next::Restart
    ));
    let elsewhere = Interaction {
        browser: "another browser",
        then: &device,
        session_cookie: None,
        expected_user: None,
        resume: None,
    };
    let next = advance(&f.services, elsewhere, input(), None)
        .await
        .unwrap();
    assert!(matches!(next, Next::Restart));
    f.clock.advance(STEP_TTL_SECONDS);
    assert!(matches!(step(&f, &device, input()).await, Next::Restart));
}

#[tokio::test]
async fn one_password_step_takes_five_codes_then_the_password_again() {
    let lenient = Policy {
        lockout_threshold: 20,
        ..Policy::default()
    };
    let f = fixture(lenient).await;
    let secret = with_authenticator_app(&f).await;
    let then = Continue::Account;
    let carried = carried_code_step(step(&f, &then, password()).await);
    for _ in 0..5 {
        let wrong = Input::Code {
            carried: &carried,
            code: "000000x",
        };
        carried_code_step(step(&f, &then, wrong).await);
    }
    let code = secret.code_at(f.clock.now());
    let sixth = Input::Code {
        carried: &carried,
        code: &code,
    };
    assert!(matches!(
        step(&f, &then, sixth).await,
        Next::Show(Shown::Identify {
            error: Some(TOO_MANY_CODES),
            ..
        })
    ));
    let again = carried_code_step(step(&f, &then, password()).await);
    let right = Input::Code {
        carried: &again,
        code: &code,
    };
    assert!(matches!(step(&f, &then, right).await, Next::SignedIn(_)));
}

#[tokio::test]
async fn a_required_second_factor_is_enrolled_before_the_session() {
    let f = fixture(Policy::default()).await;
    let mut company = token_store_conformance::records::company(NOW);
    company.mfa_policy = MfaPolicy::Required;
    let principals = f.services.ctx.store.principals();
    principals.put_company(&company).await.unwrap();
    let mut user = f.user.clone();
    user.company_id = Some(company.id);
    principals.put_user(&user).await.unwrap();
    let then = Continue::Authorization("request".into());
    let Next::Show(Shown::Step {
        carried,
        step: Step::Enrol { enrolment, .. },
    }) = step(&f, &then, password()).await
    else {
        panic!("the enrolment page");
    };
    let secret = TotpSecret::from_base32(&enrolment.secret_base32).unwrap();
    let code = secret.code_at(f.clock.now());
    let skipped = Input::Enrolled { carried: &carried };
    assert!(
        matches!(step(&f, &then, skipped).await, Next::Restart),
        "no session before the enrolment"
    );
    let confirm = Input::Enrol {
        carried: &carried,
        enrolment: &enrolment.sealed,
        code: &code,
    };
    let Next::Show(Shown::Step {
        carried,
        step: Step::RecoveryCodes { codes },
    }) = step(&f, &then, confirm).await
    else {
        panic!("the recovery codes");
    };
    assert_eq!(codes.len(), crate::domain::RECOVERY_CODE_COUNT);
    let Next::SignedIn(signed_in) = step(&f, &then, Input::Enrolled { carried: &carried }).await
    else {
        panic!("signed in");
    };
    assert_eq!(signed_in.amr(), AuthMethod::PASSWORD_AND_CODE);
}

#[tokio::test]
async fn only_the_expected_user_signs_in_and_nothing_starts_for_another() {
    let f = fixture(Policy::default()).await;
    let then = Continue::Authorization("request".into());
    let someone_else = PrincipalId::new(uuid::Uuid::from_u128(7));
    let hinted = Interaction {
        expected_user: Some(someone_else),
        ..interaction(&then)
    };
    let next = advance(&f.services, hinted, password(), None)
        .await
        .unwrap();
    let Next::Show(Shown::Identify { login, error }) = next else {
        panic!("the sign-in form again, not {next:?}");
    };
    assert_eq!(
        (login.as_str(), error),
        ("pat", Some(NOT_THE_EXPECTED_ACCOUNT))
    );
    let sessions = f.services.ctx.store.sessions();
    let started = sessions.list_sessions(&f.user.id, NOW).await.unwrap();
    assert!(
        started.is_empty(),
        "no session for a user the hint did not name"
    );
    let named = Interaction {
        expected_user: Some(f.user.id),
        ..interaction(&then)
    };
    let next = advance(&f.services, named, password(), None).await.unwrap();
    assert!(matches!(next, Next::SignedIn(_)), "{next:?}");
}
