//! `users create`: passwords stored only as hashes and never printed.

use token_domain::{Login, PrincipalId, UserStatus};

use super::output::{str_field, success_json};
use super::target::{Target, HOME, UNKNOWN};

/// The password given on the command line.
pub const ADMIN_PASSWORD: &str = "correct horse battery staple";
/// The password given on standard input.
pub const STDIN_PASSWORD: &str = "s3cret pass";

/// Creates an administrator of `company_id` and a plain user elsewhere, and checks the refusals.
/// Returns the administrator's id.
pub async fn create(t: &Target, company_id: PrincipalId) -> PrincipalId {
    let user_id = create_admin(t, company_id).await;
    create_from_stdin(t).await;
    refusals(t);
    user_id
}

/// An administrator of the company; the password verifies and is stored only as a hash, and is
/// never printed.
async fn create_admin(t: &Target, company_id: PrincipalId) -> PrincipalId {
    let store = &t.store;
    let out = t.output(&[
        "--json",
        "users",
        "create",
        "--login",
        "Admin@Acme.example",
        "--password",
        ADMIN_PASSWORD,
        "--company",
        &company_id.to_string(),
        "--admin",
    ]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(ADMIN_PASSWORD));
    let user = success_json(&out, &["users", "create"]);
    let user_id = PrincipalId::parse(str_field(&user, "user_id")).unwrap();
    let admin = store
        .principals()
        .get_user(&user_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(admin.login.as_str(), "admin@acme.example");
    assert!(admin.password_hash.verify(ADMIN_PASSWORD));
    assert!(!admin.password_hash.verify("wrong"));
    assert!(admin.administers(&company_id));
    assert_eq!(admin.geolocation.as_str(), HOME);
    assert_eq!(admin.status, UserStatus::Active);
    assert!(
        !t.stored_anywhere(ADMIN_PASSWORD).await,
        "password stored in clear"
    );
    let by_login = store
        .principals()
        .get_user_by_login(&Login::parse("ADMIN@acme.example").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_login.id, user_id);
    user_id
}

/// A plain user elsewhere, refused logons, password from stdin.
async fn create_from_stdin(t: &Target) {
    let out = t
        .command()
        .args([
            "--json",
            "users",
            "create",
            "--login",
            "bob",
            "--password-stdin",
            "--geolocation",
            "https://eu.api.example.com",
            "--status",
            "logon-denied",
        ])
        .write_stdin(format!("{STDIN_PASSWORD}\n"))
        .output()
        .unwrap();
    let out = t.recorded(out);
    let bob = success_json(&out, &["users", "create", "--password-stdin"]);
    let bob = t
        .store
        .principals()
        .get_user(&PrincipalId::parse(str_field(&bob, "user_id")).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(bob.password_hash.verify(STDIN_PASSWORD));
    assert_eq!(bob.status, UserStatus::LogonDenied);
    assert_eq!(bob.geolocation.as_str(), "https://eu.api.example.com");
    assert_eq!((bob.company_id, bob.is_admin), (None, false));
}

/// A taken login, and flags that do not go together or name nothing.
fn refusals(t: &Target) {
    let taken = t.fails(
        &[
            "users",
            "create",
            "--login",
            "admin@ACME.example",
            "--password",
            "x",
        ],
        4,
    );
    assert!(taken.contains("already taken"), "{taken}");
    let refused: [(&[&str], i32); 5] = [
        (&["--password", "x", "--admin"], 2),
        (&["--password", "x", "--company", UNKNOWN], 3),
        (&["--password", ""], 2),
        (&["--password", "x", "--status", "locked"], 2),
        (&[], 2),
    ];
    for (flags, code) in refused {
        t.fails(
            &[&["users", "create", "--login", "c"], flags].concat(),
            code,
        );
    }
}
