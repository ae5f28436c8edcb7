//! Users, companies, and which clients a company has enabled.

use super::records::*;
use crate::domain::{
    ClientId, Company, CompanyStatus, Login, MfaPolicy, PrincipalId, User, UserStatus,
};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;
use crate::store::{ExternalIdUpdate, Inserted};

// The reads and the insert every user case checks, each failing the test on a store error.

async fn stored_user(store: &dyn Store, id: &PrincipalId) -> Option<User> {
    store.principals().get_user(id).await.expect("get_user")
}

async fn user_with_login(store: &dyn Store, login: &Login) -> Option<User> {
    store
        .principals()
        .get_user_by_login(login)
        .await
        .expect("get_user_by_login")
}

async fn stored_company(store: &dyn Store, id: &PrincipalId) -> Option<Company> {
    store
        .principals()
        .get_company(id)
        .await
        .expect("get_company")
}

async fn insert_user(store: &dyn Store, user: &User) -> Inserted {
    store
        .principals()
        .insert_user(user)
        .await
        .expect("insert_user")
}

pub async fn user_round_trip_and_case_insensitive_login(store: &dyn Store) {
    let now = now();
    let login = unique_login();
    let mut user = user(now, &login);
    user.company_id = Some(PrincipalId::new(OsRandom.uuid()));
    user.is_admin = true;
    assert_eq!(insert_user(store, &user).await, Inserted::Inserted);
    assert_eq!(
        stored_user(store, &user.id).await,
        Some(user.clone()),
        "a user reads back by id as written"
    );
    let other_case = Login::parse(&login.to_uppercase()).expect("valid login");
    assert_eq!(
        user_with_login(store, &other_case).await,
        Some(user.clone()),
        "a user is found by login in any case"
    );

    user.status = UserStatus::LogonDenied;
    store.principals().put_user(&user).await.expect("put_user");
    assert_eq!(
        stored_user(store, &user.id).await,
        Some(user.clone()),
        "put_user replaces the stored user"
    );
    assert_eq!(
        user_with_login(store, &user.login).await,
        Some(user),
        "the replaced user is still found by login"
    );

    let unknown_login = Login::parse(&unique_login()).expect("valid login");
    assert_eq!(
        user_with_login(store, &unknown_login).await,
        None,
        "an unknown login is absent"
    );
    assert_eq!(
        stored_user(store, &PrincipalId::new(OsRandom.uuid())).await,
        None,
        "an unknown user id is absent"
    );
}

pub async fn duplicate_user_id_or_login_is_rejected(store: &dyn Store) {
    let now = now();
    let login = unique_login();
    let first = user(now, &login);
    assert_eq!(insert_user(store, &first).await, Inserted::Inserted);

    // Same login in another case, another id.
    let same_login = user(now, &login.to_uppercase());
    assert_eq!(
        insert_user(store, &same_login).await,
        Inserted::AlreadyExists,
        "a taken login (compared case-insensitively) is rejected"
    );
    assert_eq!(
        stored_user(store, &same_login.id).await,
        None,
        "a rejected user is not written"
    );

    // Same id, another login.
    let mut same_id = user(now, &unique_login());
    same_id.id = first.id;
    assert_eq!(
        insert_user(store, &same_id).await,
        Inserted::AlreadyExists,
        "a taken user id is rejected"
    );
    assert_eq!(
        user_with_login(store, &same_id.login).await,
        None,
        "a user rejected for its id does not claim its login"
    );
    assert_eq!(
        stored_user(store, &first.id).await,
        Some(first.clone()),
        "the first user is unchanged by rejected inserts"
    );
    assert_eq!(
        user_with_login(store, &first.login).await,
        Some(first),
        "the first user still owns the login"
    );
}

pub async fn company_round_trip_and_client_enablement(store: &dyn Store) {
    let now = now();
    let mut company = company(now);
    store
        .principals()
        .put_company(&company)
        .await
        .expect("put_company");
    assert_eq!(
        stored_company(store, &company.id).await,
        Some(company.clone()),
        "a company reads back as written"
    );
    company.status = CompanyStatus::Maintenance;
    company.mfa_policy = MfaPolicy::Required;
    store
        .principals()
        .put_company(&company)
        .await
        .expect("put_company again");
    assert_eq!(
        stored_company(store, &company.id).await,
        Some(company.clone()),
        "put_company replaces the stored company, its second-factor policy with it"
    );
    assert_eq!(
        stored_company(store, &PrincipalId::new(OsRandom.uuid())).await,
        None,
        "an unknown company is absent"
    );

    let enabled = ClientId::new(OsRandom.uuid());
    let other = ClientId::new(OsRandom.uuid());
    assert!(
        !store
            .principals()
            .is_company_enabled_for_client(&company.id, &enabled)
            .await
            .expect("is_company_enabled_for_client"),
        "a company is not enabled for a client before enable_company_for_client"
    );
    store
        .principals()
        .enable_company_for_client(&company.id, &enabled)
        .await
        .expect("enable_company_for_client");
    store
        .principals()
        .enable_company_for_client(&company.id, &enabled)
        .await
        .expect("enable_company_for_client is idempotent");
    assert!(
        store
            .principals()
            .is_company_enabled_for_client(&company.id, &enabled)
            .await
            .expect("is_company_enabled_for_client"),
        "an enabled company reads as enabled"
    );
    assert!(
        !store
            .principals()
            .is_company_enabled_for_client(&company.id, &other)
            .await
            .expect("is_company_enabled_for_client"),
        "enabling for one client does not enable for another"
    );
    assert!(
        !store
            .principals()
            .is_company_enabled_for_client(&PrincipalId::new(OsRandom.uuid()), &enabled)
            .await
            .expect("is_company_enabled_for_client"),
        "enabling one company does not enable another"
    );
}

async fn set_external_id(
    store: &dyn Store,
    user: &PrincipalId,
    value: Option<&str>,
) -> ExternalIdUpdate {
    store
        .principals()
        .set_user_external_id(user, value)
        .await
        .expect("set_user_external_id")
}

async fn user_with_external_id(
    store: &dyn Store,
    company: &PrincipalId,
    value: &str,
) -> Option<PrincipalId> {
    store
        .principals()
        .get_user_by_external_id(company, value)
        .await
        .expect("get_user_by_external_id")
        .map(|user| user.id)
}

/// A user of `company` with `external_id`, inserted.
async fn member(store: &dyn Store, company: PrincipalId, external_id: Option<&str>) -> User {
    let mut member = user(now(), &unique_login());
    member.company_id = Some(company);
    member.external_id = external_id.map(str::to_owned);
    assert_eq!(insert_user(store, &member).await, Inserted::Inserted);
    member
}

pub async fn external_ids_are_unique_within_a_company_only(store: &dyn Store) {
    let (acme, globex) = (
        PrincipalId::new(OsRandom.uuid()),
        PrincipalId::new(OsRandom.uuid()),
    );
    let value = format!("00u-{}", OsRandom.uuid().simple());
    let ann = member(store, acme, Some(&value)).await;
    assert_eq!(
        stored_user(store, &ann.id)
            .await
            .and_then(|u| u.external_id),
        Some(value.clone()),
        "an inserted user's external id reads back"
    );
    assert_eq!(
        user_with_external_id(store, &acme, &value).await,
        Some(ann.id)
    );
    assert_eq!(
        user_with_external_id(store, &globex, &value).await,
        None,
        "found only in its own company"
    );
    assert_eq!(
        user_with_external_id(store, &acme, &value.to_uppercase()).await,
        None,
        "compared exactly"
    );

    // The same value in another company is another user's.
    let gus = member(store, globex, Some(&value)).await;
    assert_eq!(
        user_with_external_id(store, &globex, &value).await,
        Some(gus.id)
    );

    // Twice in one company: refused, at insert and when set.
    let mut twin = user(now(), &unique_login());
    twin.company_id = Some(acme);
    twin.external_id = Some(value.clone());
    assert_eq!(insert_user(store, &twin).await, Inserted::AlreadyExists);
    let bob = member(store, acme, None).await;
    assert_eq!(
        set_external_id(store, &bob.id, Some(&value)).await,
        ExternalIdUpdate::Taken
    );
    assert_eq!(
        stored_user(store, &bob.id)
            .await
            .and_then(|u| u.external_id),
        None
    );

    // Ann's changes: the old value is freed, and Bob can take it.
    let moved = format!("{value}-moved");
    assert_eq!(
        set_external_id(store, &ann.id, Some(&moved)).await,
        ExternalIdUpdate::Updated
    );
    assert_eq!(user_with_external_id(store, &acme, &value).await, None);
    assert_eq!(
        user_with_external_id(store, &acme, &moved).await,
        Some(ann.id)
    );
    assert_eq!(
        set_external_id(store, &bob.id, Some(&value)).await,
        ExternalIdUpdate::Updated
    );
    assert_eq!(
        user_with_external_id(store, &acme, &value).await,
        Some(bob.id)
    );
    assert_eq!(
        set_external_id(store, &bob.id, Some(&value)).await,
        ExternalIdUpdate::Updated,
        "setting the value a user has changes nothing"
    );

    // Cleared: found by it no more, and free for another.
    assert_eq!(
        set_external_id(store, &ann.id, None).await,
        ExternalIdUpdate::Updated
    );
    assert_eq!(user_with_external_id(store, &acme, &moved).await, None);
    let mut cleared = stored_user(store, &ann.id).await.expect("stored");
    assert_eq!(cleared.external_id, None);
    assert_eq!(
        set_external_id(store, &bob.id, Some(&moved)).await,
        ExternalIdUpdate::Updated
    );

    // A replaced user keeps its external id and is still found by it.
    let mut bob = stored_user(store, &bob.id).await.expect("stored");
    bob.local_sign_in = true;
    store.principals().put_user(&bob).await.expect("put_user");
    assert_eq!(
        user_with_external_id(store, &acme, &moved).await,
        Some(bob.id)
    );
    cleared.status = UserStatus::Disabled;
    store
        .principals()
        .put_user(&cleared)
        .await
        .expect("put_user");

    let unknown = PrincipalId::new(OsRandom.uuid());
    assert_eq!(
        set_external_id(store, &unknown, Some("x")).await,
        ExternalIdUpdate::UnknownUser
    );
    let loner = user(now(), &unique_login());
    assert_eq!(insert_user(store, &loner).await, Inserted::Inserted);
    assert_eq!(
        set_external_id(store, &loner.id, Some("x")).await,
        ExternalIdUpdate::NoCompany,
        "unique within a company: a user of none has no external id"
    );
}
