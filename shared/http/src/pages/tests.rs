//! The rendered pages: escaping, labels, CSRF fields, and the stylesheet the CSP hash allows.

use super::*;

fn sign_in(error: Option<&str>) -> String {
    render_sign_in(&SignInPage {
        app_name: "Expense <Pro>",
        form_action: "/oauth2/v0/authorize",
        csrf_token: "tok\"en",
        login: "ann@example.com",
        error,
        action_field: None,
    })
}

#[test]
fn sign_in_has_labelled_fields_and_escapes_input() {
    let html = sign_in(Some(
        "The login or password is not correct. Please try again.",
    ));
    assert!(html.contains(r#"<label for="login">Login</label>"#));
    assert!(html.contains(r#"<label for="password">Password</label>"#));
    assert!(html.contains(r#"id="login""#) && html.contains(r#"id="password""#));
    assert!(html.contains("Expense &#60;Pro&#62;") || html.contains("Expense &lt;Pro&gt;"));
    assert!(!html.contains("<Pro>"));
    assert!(html.contains(r#"name="csrf_token""#));
    assert!(!html.contains("tok\"en"), "attribute values are escaped");
    assert!(html.contains(r#"role="alert""#));
    assert!(html.contains(r#"name="viewport""#));
    assert!(!html.contains("<script"));
    assert!(!sign_in(None).contains(r#"role="alert""#));
}

#[test]
fn consent_names_the_app_and_its_scopes_in_words() {
    let html = render_consent(&ConsentPage {
        app_name: "Demo App",
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: "t",
        scopes: &["openid", "payroll", "x.custom"],
        unverified_host: None,
    });
    assert!(!html.contains("not verified"));
    assert!(html.contains("Demo App"));
    assert!(html.contains("Confirm who you are when you sign in"));
    assert!(html.contains("See and manage your payroll data"));
    assert!(html.contains("x.custom"));
    assert!(html.contains(r#"name="decision" value="approve""#));
    assert!(html.contains(r#"name="decision" value="deny""#));
    assert!(html.contains(r#"name="csrf_token" value="t""#));
}

#[test]
fn every_page_inlines_exactly_the_hashed_stylesheet() {
    let pages = [
        sign_in(None),
        render_error("The application that sent you here is not known."),
    ];
    for html in pages {
        assert!(html.contains(&format!("<style>{STYLESHEET}</style>")));
        assert_eq!(html.matches("<style").count(), 1);
        assert!(!html.contains("style=\""), "no inline style attributes");
    }
}

#[test]
fn a_self_registered_app_is_marked_not_verified_with_its_host() {
    let html = render_consent(&ConsentPage {
        app_name: "Some Agent",
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: "t",
        scopes: &["openid"],
        unverified_host: Some("agent.example"),
    });
    assert!(html.contains("not verified"), "{html}");
    assert!(html.contains("agent.example"), "{html}");
}
