//! The authenticator-app pages: enrolment (the QR code as inline SVG, which the pages' policy
//! allows as it loads nothing) and the recovery codes, shown once.

use askama::Template;
use qrcode::render::svg;
use qrcode::QrCode;

use super::{render, STYLESHEET};
use crate::flows::authorize::CSRF_FIELD;

#[derive(Template)]
#[template(path = "totp_enrol.html")]
struct TotpEnrolTemplate<'a> {
    stylesheet: &'static str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    qr_svg: String,
    secret: &'a str,
    sealed: &'a str,
    error: Option<&'a str>,
    hidden: &'a [(&'a str, &'a str)],
    required: bool,
}

#[derive(Template)]
#[template(path = "second_factor.html")]
struct SecondFactorTemplate<'a> {
    stylesheet: &'static str,
    app_name: &'a str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    hidden: &'a [(&'a str, &'a str)],
    error: Option<&'a str>,
}

/// The sign-in's second step: the code form, with the `hidden` fields the page's form needs.
pub fn render_second_factor(
    app_name: &str,
    action: &str,
    csrf_token: &str,
    hidden: &[(&str, &str)],
    error: Option<&str>,
) -> String {
    render(&SecondFactorTemplate {
        stylesheet: STYLESHEET,
        app_name,
        action,
        csrf_field: CSRF_FIELD,
        csrf_token,
        hidden,
        error,
    })
}

#[derive(Template)]
#[template(path = "recovery_codes.html")]
struct RecoveryCodesTemplate<'a> {
    stylesheet: &'static str,
    action: &'a str,
    csrf_field: &'static str,
    codes: &'a [String],
    continue_form: Option<ContinueForm<'a>>,
}

/// The recovery codes page of a sign-in that had to enrol: the button that starts the session.
#[derive(Debug, Clone, Copy)]
pub struct ContinueForm<'a> {
    pub csrf_token: &'a str,
    pub hidden: &'a [(&'a str, &'a str)],
}

/// What the enrolment page shows.
#[derive(Debug, Clone, Copy)]
pub struct TotpEnrolPage<'a> {
    pub action: &'a str,
    pub csrf_token: &'a str,
    pub otpauth_uri: &'a str,
    pub secret: &'a str,
    pub sealed: &'a str,
    pub error: Option<&'a str>,
    /// The form's other hidden fields (the account page's `action`, the sign-in's `pending`).
    pub hidden: &'a [(&'a str, &'a str)],
    /// A sign-in that must enrol (the company requires a second factor): says so.
    pub required: bool,
}

pub fn render_totp_enrol(page: &TotpEnrolPage<'_>) -> String {
    render(&TotpEnrolTemplate {
        stylesheet: STYLESHEET,
        action: page.action,
        csrf_field: CSRF_FIELD,
        csrf_token: page.csrf_token,
        qr_svg: qr_svg(page.otpauth_uri),
        secret: page.secret,
        sealed: page.sealed,
        error: page.error,
        hidden: page.hidden,
        required: page.required,
    })
}

/// The recovery codes, shown once: then back to the account page, or (a sign-in that had to
/// enrol) the button that starts the session.
pub fn render_recovery_codes(
    action: &str,
    codes: &[String],
    continue_form: Option<ContinueForm<'_>>,
) -> String {
    render(&RecoveryCodesTemplate {
        stylesheet: STYLESHEET,
        action,
        csrf_field: CSRF_FIELD,
        codes,
        continue_form,
    })
}

/// The URI as an `<svg>` element (without the XML declaration, to sit inside the page).
fn qr_svg(uri: &str) -> String {
    let Ok(code) = QrCode::new(uri.as_bytes()) else {
        // Only a URI longer than a QR code holds; ours are under 200 bytes. The typed key
        // still works.
        return String::new();
    };
    let image = code
        .render::<svg::Color<'_>>()
        .min_dimensions(200, 200)
        .build();
    match image.find("<svg") {
        Some(start) => image[start..].to_owned(),
        None => image,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_shows_the_key_and_a_qr_code_and_no_script() {
        let html = render_totp_enrol(&TotpEnrolPage {
            action: "/oauth2/v0/account",
            csrf_token: "token",
            otpauth_uri: "otpauth://totp/Token%20Service%3Aada?secret=GEZDGNBVGY3TQOJQ",
            secret: "GEZDGNBVGY3TQOJQ",
            sealed: "sealed",
            error: None,
            hidden: &[("action", "totp_confirm")],
            required: true,
        });
        assert!(html.contains("<svg"), "{html}");
        assert!(html.contains("GEZDGNBVGY3TQOJQ"));
        assert!(!html.contains("<?xml"));
        assert!(!html.contains("<script"));
        assert!(html.contains(r#"name="action" value="totp_confirm""#));
        assert!(html.contains("Your company requires a second factor"));
        let codes = vec!["bcdfg-hjkmn".to_owned()];
        let page = render_recovery_codes("/oauth2/v0/account", &codes, None);
        assert!(page.contains("bcdfg-hjkmn"));
        assert!(page.contains("Back to your account") && !page.contains("<form"));
        let hidden = [("enrolled", "continue")];
        let form = ContinueForm {
            csrf_token: "token",
            hidden: &hidden,
        };
        let page = render_recovery_codes("/oauth2/v0/authorize", &codes, Some(form));
        assert!(
            page.contains(r#"name="enrolled" value="continue""#),
            "{page}"
        );
        assert!(page.contains(r#"value="token""#));
    }
}
