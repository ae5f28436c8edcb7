//! What the sign-in pages say when the password check refuses: the same checks and codes as
//! the password grant, in words a person can act on. Chosen by the flow; the page only shows
//! them.

use crate::errors::ErrorCode;

/// The sentence for a refused sign-in. Unknown login and wrong password read the same, as at
/// the token endpoint, so the page does not reveal which logins exist.
pub fn sign_in_message(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::IncorrectCredentials | ErrorCode::UsernameMissing | ErrorCode::PasswordMissing => {
            "The login or password is not correct. Please try again."
        }
        ErrorCode::AccountLocked => {
            "This account is locked after too many failed sign-ins. Please try again later or contact support."
        }
        // Attempts at this login from this network, not the account: others can still sign in.
        ErrorCode::AddressRateLimited => {
            "Too many failed sign-ins for this account from your network. Please try again later."
        }
        ErrorCode::AccountDisabled | ErrorCode::AccountDisabledAlt | ErrorCode::PrincipalDisabled => {
            "This account is disabled. Please contact support."
        }
        ErrorCode::LogonDenied | ErrorCode::LogonDeniedAlt | ErrorCode::LogonDeniedIpRestriction => {
            "Sign-in is not allowed for this account. Please contact support."
        }
        ErrorCode::UserLivesElsewhere => {
            "This account is managed in another region. Please sign in through that region's address."
        }
        ErrorCode::SsoRequired => {
            "Your company signs you in through its own identity provider. Please sign in there."
        }
        ErrorCode::SecondFactorRequired => {
            "Your company requires a second factor. Please sign in with a passkey or an authenticator app."
        }
        _ => "Sign-in did not succeed. Please try again.",
    }
}

/// The application named the account it expects (`id_token_hint`) and another one signed in.
pub const NOT_THE_EXPECTED_ACCOUNT: &str =
    "The application asked for another account. Please sign in with that account.";

/// A wrong (or used) code on the code page.
pub const WRONG_CODE: &str =
    "That code was not right. Please type the code your app shows now, or a recovery code.";

/// A password step had all its codes.
pub const TOO_MANY_CODES: &str =
    "Too many codes were typed for this sign-in. Please sign in again with your password.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_never_show_a_code() {
        for code in ErrorCode::ALL {
            let message = sign_in_message(*code);
            assert!(!message.contains(&code.code().to_string()), "{message}");
            assert!(message.ends_with('.'), "{message}");
        }
        assert_eq!(
            sign_in_message(ErrorCode::IncorrectCredentials),
            sign_in_message(ErrorCode::PasswordMissing)
        );
    }
}
