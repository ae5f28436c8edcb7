//! `users set-external-id`, `users links` and `users unlink`: external ids are unique within a
//! company only; a user's links are listed and removed per IdP.

use token_domain::{IdpId, PrincipalId};

use super::idps::{audited, company, link, ISSUER};
use super::output::str_field;
use super::target::{Target, UNKNOWN};
use crate::authorize::flow::PASSWORD;

/// External ids unique within a company only; a user's links listed and removed per IdP.
pub async fn external_ids_and_links(t: &Target) {
    let (acme, globex) = (company(t, "Acme"), company(t, "Globex"));
    let member = |login: &str, company: &str| {
        let created = t.json(&[
            "users",
            "create",
            "--login",
            login,
            "--password",
            PASSWORD,
            "--company",
            company,
        ]);
        str_field(&created, "user_id").to_owned()
    };
    let ann = member("ann@acme.example", &acme);
    let bob = member("bob@acme.example", &acme);
    let gus = member("gus@globex.example", &globex);
    let set = t.json(&["users", "set-external-id", &ann, "00u-Ann"]);
    assert_eq!(set["external_id"], "00u-Ann");
    let reason = t.fails(&["users", "set-external-id", &bob, "00u-Ann"], 4);
    assert!(reason.contains("external id"), "{reason}");
    t.json(&["users", "set-external-id", &gus, "00u-Ann"]);
    let acme_id = PrincipalId::parse(&acme).unwrap();
    let found = |company: PrincipalId, value: &'static str| async move {
        let user = t
            .store
            .principals()
            .get_user_by_external_id(&company, value)
            .await;
        user.unwrap().map(|user| user.id.to_string())
    };
    assert_eq!(found(acme_id, "00u-Ann").await, Some(ann.clone()));
    // Cleared, the value is free for another user of the company.
    let cleared = t.json(&["users", "set-external-id", &ann, "--clear"]);
    assert_eq!(cleared["external_id"], serde_json::Value::Null);
    t.json(&["users", "set-external-id", &bob, "00u-Ann"]);
    assert_eq!(found(acme_id, "00u-Ann").await, Some(bob.clone()));
    t.fails(&["users", "set-external-id", UNKNOWN, "x"], 3);
    t.fails(&["users", "set-external-id", &ann, ""], 2);
    let loner = t.json(&[
        "users",
        "create",
        "--login",
        "loner",
        "--password",
        PASSWORD,
    ]);
    t.fails(
        &[
            "users",
            "set-external-id",
            str_field(&loner, "user_id"),
            "x",
        ],
        2,
    );
    let kinds = audited(t, PrincipalId::parse(&ann).unwrap()).await;
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == "user.external_id_set")
            .count(),
        2
    );

    // Links: listed with their issuer and subject, removed for one IdP only.
    let ann_id = PrincipalId::parse(&ann).unwrap();
    let (one, two) = (
        IdpId::new(uuid::Uuid::new_v4()),
        IdpId::new(uuid::Uuid::new_v4()),
    );
    link(t, one, ann_id, acme_id, "ann-at-one").await;
    link(t, two, ann_id, acme_id, "ann-at-two").await;
    let listed = t.json(&["users", "links", &ann]);
    let links = listed["links"].as_array().expect("links").clone();
    assert_eq!(links.len(), 2, "{listed}");
    let at_one = links
        .iter()
        .find(|l| l["idp_id"] == one.to_string().as_str());
    let at_one = at_one.expect("the link to the first IdP");
    assert_eq!(at_one["issuer"], ISSUER);
    assert_eq!(at_one["subject"], "ann-at-one");
    assert!(at_one["linked_at"].as_str().unwrap().ends_with('Z'));
    let text = t.text(&["users", "links", &ann]);
    assert!(text.contains("ann-at-two"), "{text}");
    let unlinked = t.json(&["users", "unlink", &ann, &one.to_string()]);
    assert_eq!(unlinked["removed"][0]["subject"], "ann-at-one");
    let left = t.store.federation().list_user_links(&ann_id).await.unwrap();
    assert_eq!(left.iter().map(|l| l.idp_id).collect::<Vec<_>>(), [two]);
    t.fails(&["users", "unlink", &ann, &one.to_string()], 3);
    t.fails(&["users", "unlink", UNKNOWN, &two.to_string()], 3);
    t.fails(&["users", "links", UNKNOWN], 3);
    let none = t.text(&["users", "links", &bob]);
    assert!(none.contains("no link"), "{none}");
    assert!(audited(t, ann_id).await.contains(&"federation.unlinked"));
}
