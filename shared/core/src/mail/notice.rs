//! The notice of a changed sign-in factor: a passkey or an authenticator app added to or removed
//! from the account. It names the change and when, never a secret, so that a user whose session
//! someone else used learns of it and knows what to do.

use askama::Template;

use crate::clock::UnixTime;
use crate::domain::ChannelHandle;

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactorChange {
    PasskeyAdded { name: String },
    PasskeyRemoved { name: String },
    AuthenticatorAppAdded,
    AuthenticatorAppRemoved,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactorNotice {
    pub to: ChannelHandle,
    pub change: FactorChange,
    pub at: UnixTime,
}

/// The HTML part (`templates/factor_notice.html`): askama escapes the passkey's name.
#[derive(Template)]
#[template(path = "factor_notice.html")]
struct FactorNoticePage<'a> {
    subject: &'a str,
    what: &'a str,
    when: &'a str,
    added: bool,
}

impl FactorNotice {
    fn what(&self) -> String {
        match &self.change {
            FactorChange::PasskeyAdded { name } => format!("A passkey named \"{name}\" was added"),
            FactorChange::PasskeyRemoved { name } => {
                format!("The passkey named \"{name}\" was removed")
            }
            FactorChange::AuthenticatorAppAdded => "An authenticator app was set up".to_owned(),
            FactorChange::AuthenticatorAppRemoved => {
                "Your authenticator app was removed".to_owned()
            }
        }
    }

    fn added(&self) -> bool {
        matches!(
            self.change,
            FactorChange::PasskeyAdded { .. } | FactorChange::AuthenticatorAppAdded
        )
    }

    /// The time in UTC, as RFC 3339 says it: unambiguous wherever the reader is.
    fn when(&self) -> String {
        time::OffsetDateTime::from_unix_timestamp(self.at)
            .ok()
            .and_then(|at| {
                at.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .unwrap_or_else(|| self.at.to_string())
    }

    fn advice(&self) -> &'static str {
        if self.added() {
            "If this was not you, sign in, remove it from your account page and sign out everywhere, then tell your administrator."
        } else {
            "If this was not you, sign in, check how you sign in on your account page and sign out everywhere, then tell your administrator."
        }
    }
}

impl super::Composed for FactorNotice {
    fn to(&self) -> &ChannelHandle {
        &self.to
    }

    fn subject(&self) -> String {
        if self.added() {
            "A sign-in method was added to your account".to_owned()
        } else {
            "A sign-in method was removed from your account".to_owned()
        }
    }

    fn text_body(&self) -> String {
        format!(
            "{what} on your account at {when} (UTC).\n\n{advice}\n",
            what = self.what(),
            when = self.when(),
            advice = self.advice(),
        )
    }

    fn html_body(&self) -> String {
        let (subject, what, when) = (self.subject(), self.what(), self.when());
        FactorNoticePage {
            subject: &subject,
            what: &what,
            when: &when,
            added: self.added(),
        }
        .render()
        .expect("the notice's template writes into a String and its values display")
    }
}

#[cfg(test)]
mod tests {
    use super::super::Composed;
    use super::*;

    fn notice(change: FactorChange) -> FactorNotice {
        FactorNotice {
            to: ChannelHandle::parse("ann@example.com").unwrap(),
            change,
            at: 1_700_000_000,
        }
    }

    #[test]
    fn a_notice_names_the_change_and_when_and_escapes_the_name() {
        let added = notice(FactorChange::PasskeyAdded {
            name: "<b>Laptop</b>".to_owned(),
        });
        assert_eq!(
            added.subject(),
            "A sign-in method was added to your account"
        );
        let text = added.text_body();
        assert!(
            text.contains("A passkey named \"<b>Laptop</b>\" was added"),
            "{text}"
        );
        assert!(text.contains("2023-11-14T22:13:20Z"), "{text}");
        assert!(text.contains("remove it"), "{text}");
        let html = added.html_body();
        assert!(!html.contains("<b>Laptop"), "{html}");
        assert!(html.contains("&#60;b&#62;Laptop"), "{html}");
        let removed = notice(FactorChange::AuthenticatorAppRemoved);
        assert_eq!(
            removed.subject(),
            "A sign-in method was removed from your account"
        );
        assert!(removed
            .text_body()
            .contains("Your authenticator app was removed"));
    }
}
