//! `tokenctl users`: its verbs and their arguments.

use clap::{Args, Subcommand, ValueEnum};
use token_core::admin::{FactorId, AUTHENTICATOR_APP};
use token_domain::{Geolocation, IdpId, Login, PrincipalId, UserStatus};

use super::{parse_geolocation, parse_login, UsersSetExternalId, UsersSetLocalSignIn};

#[derive(Subcommand)]
pub enum UsersCommand {
    /// Create a user; prints its user_id.
    Create(UsersCreate),
    /// Give a user an e-mail address (for one-time passwords).
    SetEmail(UsersSetEmail),
    /// Set a user's status. Disabled or logon-denied also ends every sign-in session of the
    /// user (each application is sent a back-channel logout) and revokes every token family;
    /// active again revives none of them.
    SetStatus(UsersSetStatus),
    /// A user's second factors: passkeys and the authenticator app.
    #[command(subcommand)]
    Factors(FactorsCommand),
    /// Whether the user signs in with a password even when the company requires its identity
    /// providers (a break-glass administrator).
    SetLocalSignIn(UsersSetLocalSignIn),
    /// Set (or --clear) the id the company's directory knows the user by: a first sign-in
    /// through one of the company's identity providers whose subject equals it links to the
    /// user.
    SetExternalId(UsersSetExternalId),
    /// The user's links to identity providers: idp_id, issuer, subject, linked_at.
    Links {
        #[arg(value_name = "USER_ID")]
        user_id: PrincipalId,
    },
    /// Remove the user's link to an identity provider: the next sign-in there links afresh.
    Unlink {
        #[arg(value_name = "USER_ID")]
        user_id: PrincipalId,
        #[arg(value_name = "IDP_ID")]
        idp_id: IdpId,
    },
}

#[derive(Args)]
pub struct UsersCreate {
    #[arg(long, value_parser = parse_login)]
    pub login: Login,
    /// The user's password (visible to other local users in the process list; prefer
    /// --password-stdin on shared machines).
    #[arg(long, value_name = "PW", required_unless_present = "password_stdin")]
    pub password: Option<String>,
    /// Read the password from the first line of standard input.
    #[arg(long, conflicts_with = "password")]
    pub password_stdin: bool,
    /// The company the user belongs to.
    #[arg(long, value_name = "ID")]
    pub company: Option<PrincipalId>,
    /// Make the user an administrator of --company.
    #[arg(long)]
    pub admin: bool,
    /// The user's home deployment [default: GEOLOCATION].
    #[arg(long, value_parser = parse_geolocation, value_name = "URL")]
    pub geolocation: Option<Geolocation>,
    #[arg(long, value_enum, default_value = "active")]
    pub status: UserStatusArg,
    /// Where one-time passwords reach the user; unique among users, whatever its case.
    #[arg(long, value_name = "ADDRESS")]
    pub email: Option<String>,
}

#[derive(Args)]
pub struct UsersSetEmail {
    pub user_id: PrincipalId,
    /// The new address; unique among users, whatever its case.
    pub address: String,
}

#[derive(Args)]
pub struct UsersSetStatus {
    pub user_id: PrincipalId,
    #[arg(value_enum)]
    pub status: UserStatusArg,
}

#[derive(Subcommand)]
pub enum FactorsCommand {
    /// The user's passkeys (credential id, name, created, last used) and authenticator app
    /// (enrolled, recovery codes left), each with the FACTOR_ID `remove` takes.
    List {
        #[arg(value_name = "USER_ID")]
        user_id: PrincipalId,
    },
    /// Remove one of the user's second factors (a user who lost it, or one someone else added):
    /// a passkey by its credential id, or `authenticator-app` for the app and its recovery
    /// codes. The user's sessions stay (`sessions revoke` ends them).
    Remove {
        #[arg(value_name = "USER_ID")]
        user_id: PrincipalId,
        /// As `factors list` prints it. A credential id is base64url, so it may start with
        /// `-`: taken as the value, not as an option.
        #[arg(value_name = "FACTOR_ID", allow_hyphen_values = true, value_parser = parse_factor_id)]
        factor_id: FactorId,
    },
}

fn parse_factor_id(text: &str) -> Result<FactorId, String> {
    FactorId::parse(text).ok_or_else(|| {
        format!("{text:?} is neither a passkey's credential id (base64url) nor {AUTHENTICATOR_APP}")
    })
}

#[derive(Clone, Copy, ValueEnum)]
pub enum UserStatusArg {
    Active,
    Disabled,
    LogonDenied,
}

impl From<UserStatusArg> for UserStatus {
    fn from(value: UserStatusArg) -> Self {
        match value {
            UserStatusArg::Active => Self::Active,
            UserStatusArg::Disabled => Self::Disabled,
            UserStatusArg::LogonDenied => Self::LogonDenied,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::args::{Cli, Command};

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tokenctl").chain(args.iter().copied()))
    }

    fn factor_of(args: &[&str]) -> Result<FactorId, String> {
        match parse(args).map(|cli| cli.command) {
            Ok(Command::Users(UsersCommand::Factors(FactorsCommand::Remove {
                factor_id, ..
            }))) => Ok(factor_id),
            Ok(_) => panic!("{args:?}: another command"),
            Err(error) => Err(error.to_string()),
        }
    }

    const ID: &str = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";

    #[test]
    fn factors_list_and_remove_parse() {
        assert!(parse(&["users", "factors", "list", ID, "--json"]).is_ok());
        assert!(parse(&["users", "factors", "list", "nobody"]).is_err());
        assert!(parse(&["users", "factors", "list"]).is_err());
        let remove = |factor| factor_of(&["users", "factors", "remove", ID, factor]);
        assert_eq!(remove("authenticator-app"), Ok(FactorId::AuthenticatorApp));
        // A credential id starting with `-` (one in 64 does) is the value, not an option.
        for credential in ["AbCd-_09xyz", "-AbCd", "--AbCd"] {
            assert_eq!(remove(credential), Ok(FactorId::Passkey(credential.into())));
        }
        for refused in ["a.b", "a=", ""] {
            assert!(remove(refused).is_err(), "{refused:?}");
        }
        assert!(parse(&["users", "factors", "remove", ID]).is_err());
        assert!(parse(&["users", "factors", "remove", "nobody", "authenticator-app"]).is_err());
    }

    #[test]
    fn set_status_takes_the_three_statuses() {
        for (spelt, status) in [
            ("active", UserStatus::Active),
            ("disabled", UserStatus::Disabled),
            ("logon-denied", UserStatus::LogonDenied),
        ] {
            match parse(&["users", "set-status", ID, spelt]).map(|cli| cli.command) {
                Ok(Command::Users(UsersCommand::SetStatus(args))) => {
                    assert_eq!(UserStatus::from(args.status), status);
                    assert_eq!(args.user_id.to_string(), ID);
                }
                _ => panic!("{spelt}"),
            }
        }
        assert!(parse(&["users", "set-status", ID, "locked"]).is_err());
        assert!(parse(&["users", "set-status", ID]).is_err());
        assert!(parse(&["users", "set-status", "nobody", "active"]).is_err());
    }
}
