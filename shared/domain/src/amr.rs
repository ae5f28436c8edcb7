//! Authentication method references (RFC 8176): how a user proved who they are in a sign-in,
//! the ID token's `amr` claim.

use serde::{Deserialize, Serialize};

/// One method of RFC 8176 §2, serialised as its registered name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMethod {
    /// A password.
    Pwd,
    /// A one-time password: an authenticator app's code or a recovery code.
    Otp,
    /// A hardware-bound key (a device-bound passkey).
    Hwk,
    /// A software-bound key (a synced passkey).
    Swk,
    /// More than one factor.
    Mfa,
    // The rest of RFC 8176's registry: what a company's identity provider may report.
    Face,
    Fpt,
    Geo,
    Iris,
    Kba,
    Mca,
    Pin,
    Pop,
    Rba,
    Retina,
    Sc,
    Sms,
    Tel,
    User,
    Vbm,
    Wia,
}

impl AuthMethod {
    /// The methods of a sign-in with a password alone.
    pub const PASSWORD: &'static [Self] = &[Self::Pwd];
    /// The methods of a sign-in with a password and an authenticator app's (or recovery) code.
    pub const PASSWORD_AND_CODE: &'static [Self] = &[Self::Pwd, Self::Otp, Self::Mfa];

    /// The method an RFC 8176 name names, if it is registered.
    pub fn parse(name: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pwd => "pwd",
            Self::Otp => "otp",
            Self::Hwk => "hwk",
            Self::Swk => "swk",
            Self::Mfa => "mfa",
            Self::Face => "face",
            Self::Fpt => "fpt",
            Self::Geo => "geo",
            Self::Iris => "iris",
            Self::Kba => "kba",
            Self::Mca => "mca",
            Self::Pin => "pin",
            Self::Pop => "pop",
            Self::Rba => "rba",
            Self::Retina => "retina",
            Self::Sc => "sc",
            Self::Sms => "sms",
            Self::Tel => "tel",
            Self::User => "user",
            Self::Vbm => "vbm",
            Self::Wia => "wia",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialised_as_rfc_8176_names() {
        let all = [
            AuthMethod::Pwd,
            AuthMethod::Otp,
            AuthMethod::Hwk,
            AuthMethod::Swk,
            AuthMethod::Mfa,
        ];
        let json = serde_json::to_string(&all).unwrap();
        assert_eq!(json, r#"["pwd","otp","hwk","swk","mfa"]"#);
        for method in all {
            assert_eq!(
                serde_json::to_string(&method).unwrap(),
                format!("\"{}\"", method.as_str())
            );
        }
        let back: Vec<AuthMethod> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, all);
    }
}
