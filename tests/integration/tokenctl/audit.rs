//! `audit`: a subject's events newest first, as JSON Lines with `--json` or a table; `--since`;
//! a family's refreshes under its client and principal too; a key rotation filed under the
//! deployment.

use serde_json::Value;
use token_domain::audit::{rfc3339, AuditEvent, AuditId, AuditKind, RequestFacts};
use token_domain::clock::{Clock, SystemClock};
use token_domain::{ClientId, PrincipalId, PrincipalType};
use token_store_conformance::records::{rotation, Bundle};
use token_store_conformance::writes::{rotate_refresh_token, Rotated};

use super::output::{assert_success, str_field};
use super::target::Target;

/// `audit ARGS --json`: one object a line.
fn json_lines(t: &Target, args: &[&str]) -> Vec<Value> {
    let mut with_json = vec!["--json", "audit"];
    with_json.extend_from_slice(args);
    let out = t.output(&with_json);
    assert_success(&out, &with_json);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object a line"))
        .collect()
}

fn events(lines: &[Value]) -> Vec<&str> {
    lines.iter().map(|l| l["event"].as_str().unwrap()).collect()
}

pub async fn audit_verb(t: Target) {
    let created = t.json(&["clients", "create", "--name", "Audited", "--scopes", "read"]);
    let client = str_field(&created, "client_id").to_owned();
    let user = PrincipalId::new(uuid::Uuid::new_v4());
    // Issued two minutes ago, refreshed one minute ago (`refreshed_once`).
    let issued = Bundle::live_for(
        SystemClock.now() - 120,
        user,
        ClientId::parse(&client).unwrap(),
    );
    issued.create(t.store.as_ref()).await;
    refreshed_once(&t, &issued).await;
    let family = issued.family.id.to_string();
    t.json(&["tokens", "revoke-family", &family]);
    t.json(&["clients", "disable", &client]);

    let of_client = json_lines(&t, &["--client", &client]);
    // The revocation and the disabling may share a second; the creation came before them, the
    // refresh a minute before all of them.
    assert_eq!(of_client.len(), 4, "{of_client:?}");
    assert_eq!(
        events(&of_client)[2..],
        ["client.created", "family.refreshed"]
    );
    assert_eq!(of_client[3]["generation"], 1);
    let of_family = json_lines(&t, &["--family", &family]);
    assert_eq!(events(&of_family), ["family.revoked", "family.refreshed"]);
    assert_eq!(of_family[1], of_client[3]);
    let revoked = &of_family[0];
    assert_eq!(revoked["reason"], "admin");
    assert_eq!(revoked["client_id"], client.as_str());
    assert_eq!(revoked["principal_id"], user.to_string());
    assert_eq!(revoked["family_id"], family.as_str());
    assert!(rfc3339::parse(revoked["time"].as_str().unwrap()).is_some());
    assert_eq!(
        events(&json_lines(&t, &["--principal", &user.to_string()])),
        ["family.revoked", "family.refreshed"]
    );
    let half_a_minute_ago = rfc3339::format(SystemClock.now() - 30);
    let recent = json_lines(&t, &["--client", &client, "--since", &half_a_minute_ago]);
    assert!(
        !events(&recent).contains(&"family.refreshed"),
        "--since applies to the refreshes found through the family: {recent:?}"
    );
    let tomorrow = rfc3339::format(SystemClock.now() + 86_400);
    assert!(json_lines(&t, &["--client", &client, "--since", &tomorrow]).is_empty());

    let table = t.text(&["audit", "--family", &family]);
    let mut lines = table.lines();
    assert!(lines.next().unwrap().starts_with("TIME"), "{table}");
    let row = lines.next().unwrap();
    assert!(
        row.contains("family.revoked") && row.contains("reason=admin"),
        "{table}"
    );
    assert!(
        lines.next().unwrap().contains("family.refreshed"),
        "{table}"
    );
    assert!(t
        .text(&["audit", "--family", &client])
        .contains("No audit events"));

    t.fails(&["audit"], 2);
    t.fails(&["audit", "--client", &client, "--since", "last week"], 2);
}

/// Rotates the family of `issued` once, a minute ago (so that its event sorts last however long
/// the verbs take), with its `family.refreshed` as a refresh writes it: DynamoDB stores it under
/// the family only, and `audit --client|--principal` still lists it.
async fn refreshed_once(t: &Target, issued: &Bundle) {
    let at = SystemClock.now() - 60;
    let (successor, access) = issued.successor(at, 1);
    let family = &issued.family;
    let refreshed = AuditEvent::new(
        AuditId::of_rotation(&family.id, 1, at),
        at,
        AuditKind::FamilyRefreshed { generation: 1 },
        RequestFacts::default(),
    )
    .client(family.client_id)
    .principal(PrincipalType::User, family.principal_id)
    .family(family.id);
    let rotated = rotate_refresh_token(
        t.store.as_ref(),
        rotation(
            family.id,
            &issued.refresh.token_hash,
            &successor,
            &access,
            at,
        ),
        vec![refreshed],
    )
    .await;
    assert_eq!(rotated, Rotated::Rotated);
}

/// A rotation step is an event about no client, principal or family.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotation_is_recorded_under_the_deployment() {
    let t = Target::sqlite().await;
    let rotated = t.json(&["keys", "rotate"]);
    let lines = json_lines(&t, &["--deployment"]);
    assert_eq!(events(&lines), ["key.rotated"]);
    assert_eq!(lines[0]["active"], rotated["active"]);
    assert_eq!(lines[0]["next"], rotated["next"]);
}
