//! A company's directory: provisioning tokens by digest and by company, users listed per
//! company in a stable order with their count, replacements and removals conditional on the
//! revision read (moving or releasing the login, address and external id), groups.

use super::records::*;
use crate::clock::UnixTime;
use crate::domain::{DirectoryGroup, Login, PrincipalId, ProvisioningToken, User};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::{Inserted, Replaced};

fn company_user(company: PrincipalId) -> User {
    let mut member = user(now(), &unique_login());
    member.company_id = Some(company);
    member.email = Some(format!("{}@example.com", OsRandom.uuid().simple()));
    member
}

pub async fn provisioning_tokens_are_found_by_digest_until_revoked_or_expired(store: &dyn Store) {
    let directory = store.directory();
    let company = PrincipalId::new(OsRandom.uuid());
    let secret = format!("scim_{}", OsRandom.uuid().simple());
    let token = ProvisioningToken {
        id: OsRandom.uuid(),
        company_id: company,
        token_hash: TokenHash::of(&secret),
        created_at: now(),
        expires_at: Some(now() + 3600),
    };
    directory.insert_provisioning_token(&token).await.unwrap();
    let found = directory
        .get_provisioning_token(&TokenHash::of(&secret), now())
        .await
        .unwrap();
    assert_eq!(found, Some(token.clone()));
    assert_eq!(
        directory
            .get_provisioning_token(&TokenHash::of(&secret), now() + 3600)
            .await
            .unwrap(),
        None,
        "an expired token reads as absent"
    );
    assert_eq!(
        directory.list_provisioning_tokens(&company).await.unwrap(),
        vec![token.clone()]
    );
    let other = PrincipalId::new(OsRandom.uuid());
    assert!(!directory
        .delete_provisioning_token(&other, &token.id)
        .await
        .unwrap());
    assert!(directory
        .delete_provisioning_token(&company, &token.id)
        .await
        .unwrap());
    assert_eq!(
        directory
            .get_provisioning_token(&TokenHash::of(&secret), now())
            .await
            .unwrap(),
        None
    );
    assert!(directory
        .list_provisioning_tokens(&company)
        .await
        .unwrap()
        .is_empty());
}

pub async fn a_companys_users_are_listed_by_id_with_their_count(store: &dyn Store) {
    let company = PrincipalId::new(OsRandom.uuid());
    let mut ids = Vec::new();
    for _ in 0..5 {
        let member = company_user(company);
        assert_eq!(
            store.principals().insert_user(&member).await.unwrap(),
            Inserted::Inserted
        );
        ids.push(member.id);
    }
    // Another company's user is never listed.
    let stranger = company_user(PrincipalId::new(OsRandom.uuid()));
    store.principals().insert_user(&stranger).await.unwrap();
    ids.sort_by_key(ToString::to_string);
    let directory = store.directory();
    let all = directory.company_users(&company, 0, 10).await.unwrap();
    assert_eq!(all.total, 5);
    let listed: Vec<PrincipalId> = all.users.iter().map(|u| u.id).collect();
    assert_eq!(listed, ids);
    let page = directory.company_users(&company, 2, 2).await.unwrap();
    assert_eq!(page.total, 5);
    assert_eq!(
        page.users.iter().map(|u| u.id).collect::<Vec<_>>(),
        ids[2..4]
    );
    let past = directory.company_users(&company, 5, 2).await.unwrap();
    assert!(past.users.is_empty());
    // The scan that reads each user once, from an id on.
    let ids_of = |users: Vec<User>| users.iter().map(|u| u.id).collect::<Vec<_>>();
    let first = directory
        .company_users_after(&company, None, 2)
        .await
        .unwrap();
    assert_eq!(ids_of(first), ids[0..2]);
    let next = directory
        .company_users_after(&company, Some(&ids[1]), 2)
        .await
        .unwrap();
    assert_eq!(ids_of(next), ids[2..4]);
    let rest = directory
        .company_users_after(&company, Some(&ids[3]), 10)
        .await
        .unwrap();
    assert_eq!(ids_of(rest), ids[4..5]);
    let none = directory
        .company_users_after(&company, Some(&ids[4]), 10)
        .await
        .unwrap();
    assert!(none.is_empty());
}

pub async fn a_user_replacement_is_conditional_and_moves_its_unique_values(store: &dyn Store) {
    let company = PrincipalId::new(OsRandom.uuid());
    let ann = company_user(company);
    store.principals().insert_user(&ann).await.unwrap();
    let mut renamed = ann.clone();
    renamed.login = Login::parse(&unique_login()).unwrap();
    renamed.email = Some(format!("{}@example.com", OsRandom.uuid().simple()));
    renamed.external_id = Some(format!("ext-{}", OsRandom.uuid().simple()));
    renamed.revision = 1;
    let directory = store.directory();
    assert_eq!(
        directory.replace_user(&ann, &renamed).await.unwrap(),
        Replaced::Replaced
    );
    let principals = store.principals();
    assert_eq!(
        principals.get_user_by_login(&ann.login).await.unwrap(),
        None
    );
    assert_eq!(
        principals
            .get_user_by_login(&renamed.login)
            .await
            .unwrap()
            .map(|u| u.id),
        Some(ann.id)
    );
    let listed = directory.company_users(&company, 0, 10).await.unwrap();
    assert_eq!(
        listed.users,
        vec![renamed.clone()],
        "the listing reads the new user"
    );
    // From the revision read before: nothing changes.
    let mut stale = ann.clone();
    stale.revision = 1;
    stale.login = Login::parse(&unique_login()).unwrap();
    assert_eq!(
        directory.replace_user(&ann, &stale).await.unwrap(),
        Replaced::Changed
    );
    // Another user's login: taken, nothing changes.
    let bob = company_user(company);
    principals.insert_user(&bob).await.unwrap();
    let mut taking = renamed.clone();
    taking.login = bob.login.clone();
    taking.revision = 2;
    assert_eq!(
        directory.replace_user(&renamed, &taking).await.unwrap(),
        Replaced::Taken
    );
    assert_eq!(
        principals.get_user(&ann.id).await.unwrap(),
        Some(renamed.clone())
    );
    // Removal releases every unique value and the listing's copy.
    assert_eq!(
        directory.delete_user(&ann).await.unwrap(),
        Replaced::Changed
    );
    assert_eq!(
        directory.delete_user(&renamed).await.unwrap(),
        Replaced::Replaced
    );
    assert_eq!(principals.get_user(&ann.id).await.unwrap(), None);
    assert_eq!(
        principals.get_user_by_login(&renamed.login).await.unwrap(),
        None
    );
    let again = User {
        id: PrincipalId::new(OsRandom.uuid()),
        ..renamed.clone()
    };
    assert_eq!(
        principals.insert_user(&again).await.unwrap(),
        Inserted::Inserted,
        "the login, address and external id are free again"
    );
    let listed = directory.company_users(&company, 0, 10).await.unwrap();
    assert_eq!(listed.total, 2);
}

fn group(company: PrincipalId, members: Vec<PrincipalId>, at: UnixTime) -> DirectoryGroup {
    DirectoryGroup {
        id: OsRandom.uuid(),
        company_id: company,
        display_name: "Engineers".to_owned(),
        external_id: None,
        members,
        created_at: at,
        last_modified: at,
        revision: 0,
    }
}

pub async fn groups_are_the_companys_and_change_from_the_revision_read(store: &dyn Store) {
    let directory = store.directory();
    let company = PrincipalId::new(OsRandom.uuid());
    let member = PrincipalId::new(OsRandom.uuid());
    let engineers = group(company, vec![member], now());
    assert!(directory.insert_group(&engineers).await.unwrap());
    assert!(!directory.insert_group(&engineers).await.unwrap());
    let other = PrincipalId::new(OsRandom.uuid());
    assert_eq!(
        directory.get_group(&other, &engineers.id).await.unwrap(),
        None
    );
    assert_eq!(
        directory.get_group(&company, &engineers.id).await.unwrap(),
        Some(engineers.clone())
    );
    let mut emptied = engineers.clone();
    emptied.members.clear();
    emptied.revision = 1;
    assert_eq!(
        directory.replace_group(&engineers, &emptied).await.unwrap(),
        Replaced::Replaced
    );
    assert_eq!(
        directory.replace_group(&engineers, &emptied).await.unwrap(),
        Replaced::Changed
    );
    assert_eq!(
        directory.company_groups(&company).await.unwrap(),
        vec![emptied.clone()]
    );
    assert_eq!(
        directory.delete_group(&engineers).await.unwrap(),
        Replaced::Changed
    );
    assert_eq!(
        directory.delete_group(&emptied).await.unwrap(),
        Replaced::Replaced
    );
    assert!(directory.company_groups(&company).await.unwrap().is_empty());
}
