//! The one-time-password mail: a plain-text and an HTML part (multipart/alternative) naming the
//! app, the link when given, the password and its validity, and nothing else.

use std::fmt;

use askama::Template;

use crate::domain::{ChannelHandle, OneTimePassword, OTP_VALIDITY_MINUTES};

#[derive(Clone)]
pub struct OtpMail {
    pub to: ChannelHandle,
    /// The requesting client's name, so the reader knows which app asked.
    pub app_name: String,
    /// The `link` of the request, shown as given.
    pub link: Option<String>,
    pub password: OneTimePassword,
}

impl fmt::Debug for OtpMail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtpMail")
            .field("to", &self.to)
            .field("app_name", &self.app_name)
            .field("link", &self.link)
            .field("password", &self.password)
            .finish()
    }
}

/// The HTML part (`templates/otp_mail.html`): askama escapes every value.
#[derive(Template)]
#[template(path = "otp_mail.html")]
struct OtpMailPage<'a> {
    subject: String,
    app_name: &'a str,
    password: &'a str,
    validity_minutes: i64,
    link: Option<Link<'a>>,
}

struct Link<'a> {
    text: &'a str,
    is_web: bool,
}

impl OtpMail {
    pub fn subject(&self) -> String {
        format!("Your one-time password for {}", self.app_name)
    }

    pub fn text_body(&self) -> String {
        let mut body = format!(
            "Your one-time password for {app} is:\n\n    {password}\n\n\
             It is valid for {OTP_VALIDITY_MINUTES} minutes and replaces any earlier one.\n",
            app = self.app_name,
            password = self.password.expose(),
        );
        if let Some(link) = &self.link {
            body.push_str(&format!("\nContinue at: {link}\n"));
        }
        body.push_str("\nIf you did not ask for it, ignore this message.\n");
        body
    }

    /// Every caller-supplied value (app name, link) is HTML-escaped by the template; the link
    /// is a hyperlink only when it is an http(s) URL, so a `javascript:` link stays inert text.
    pub fn html_body(&self) -> String {
        let page = OtpMailPage {
            subject: self.subject(),
            app_name: &self.app_name,
            password: self.password.expose(),
            validity_minutes: OTP_VALIDITY_MINUTES,
            link: self.link.as_deref().map(|text| Link {
                text,
                is_web: is_web_url(text),
            }),
        };
        page.render()
            .expect("the mail's template writes into a String and its values display")
    }
}

impl super::Composed for OtpMail {
    fn to(&self) -> &ChannelHandle {
        &self.to
    }
    fn subject(&self) -> String {
        OtpMail::subject(self)
    }
    fn text_body(&self) -> String {
        OtpMail::text_body(self)
    }
    fn html_body(&self) -> String {
        OtpMail::html_body(self)
    }
}

fn is_web_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|url| matches!(url.scheme(), "http" | "https"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::RandomSource;

    #[derive(Debug)]
    struct Zeros;
    impl RandomSource for Zeros {
        fn fill(&self, buf: &mut [u8]) {
            buf.fill(0);
        }
    }

    fn mail(link: Option<&str>) -> OtpMail {
        OtpMail {
            to: ChannelHandle::parse("ann@example.com").unwrap(),
            app_name: "Expense <Pro>".to_owned(),
            link: link.map(str::to_owned),
            password: OneTimePassword::generate(&Zeros),
        }
    }

    #[test]
    fn both_parts_carry_the_app_the_password_the_validity_and_the_link() {
        let mail = mail(Some("https://app.example.com/login?a=1&b=\"2\""));
        let text = mail.text_body();
        assert!(text.contains("Expense <Pro>") && text.contains("000000"));
        assert!(text.contains("10 minutes"));
        assert!(text.contains("https://app.example.com/login?a=1&b=\"2\""));
        let html = mail.html_body();
        assert!(html.contains("Expense &#60;Pro&#62;") && !html.contains("<Pro>"));
        assert!(html.contains("000000") && html.contains("10 minutes"));
        assert!(html.contains("<a href=\"https://app.example.com/login?a=1&#38;b=&#34;2&#34;\">"));
    }

    #[test]
    fn a_non_web_link_is_inert_text_and_no_link_means_no_line() {
        let html = mail(Some("javascript:alert(1)")).html_body();
        assert!(html.contains("Continue at: javascript:alert(1)"));
        assert!(!html.contains("<a "));
        let plain = mail(None);
        assert!(!plain.text_body().contains("Continue at"));
        assert!(!plain.html_body().contains("Continue at"));
    }

    #[test]
    fn debug_hides_the_password() {
        assert!(!format!("{:?}", mail(None)).contains("000000"));
    }

    #[test]
    fn a_hostile_name_and_link_are_escaped() {
        let mut hostile = mail(Some("https://x.example/\"><script>alert(1)</script>"));
        hostile.app_name = "<img src=x onerror=alert(1)> & 'quoted'".to_owned();
        let html = hostile.html_body();
        assert!(
            !html.contains("<img") && !html.contains("<script"),
            "{html}"
        );
        assert!(html.contains("&#60;img src=x onerror=alert(1)&#62; &#38; &#39;quoted&#39;"));
        assert!(
            html.contains("href=\"https://x.example/&#34;&#62;&#60;script&#62;"),
            "{html}"
        );
    }

    /// For ordinary values the HTML is what the mail always said, byte for byte.
    #[test]
    fn the_html_of_an_ordinary_mail_is_unchanged() {
        let mut ordinary = mail(Some("https://app.example.com/login"));
        ordinary.app_name = "Expense Pro".to_owned();
        assert_eq!(
            ordinary.html_body(),
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Your one-time password \
             for Expense Pro</title></head><body>\n<p>Your one-time password for Expense Pro \
             is:</p>\n<p style=\"font-size:1.5em;font-family:monospace\"><strong>000000</strong>\
             </p>\n<p>It is valid for 10 minutes and replaces any earlier one.</p>\n<p>Continue \
             at: <a href=\"https://app.example.com/login\">https://app.example.com/login</a></p>\n\
             <p>If you did not ask for it, ignore this message.</p>\n</body></html>\n"
        );
        ordinary.link = None;
        assert!(ordinary
            .html_body()
            .contains("replaces any earlier one.</p>\n\n<p>If you did not ask for it"));
    }
}
