//! The facts a one-time password is bound to: `name`, `company` and `link` of its request
//! (`requests::OtpSendParameters`), repeated by the `otp` grant (`requests::OtpGrantRequest`).

use crate::secrets::TokenHash;
use crate::store::FactsHash;

/// The optional `name`, `company` and `link` of a request, which the token request must repeat
/// (code 84 otherwise).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OtpFacts {
    pub name: Option<String>,
    pub company: Option<String>,
    pub link: Option<String>,
}

impl OtpFacts {
    /// Absent and empty are the same fact. The digest is over an unambiguous encoding (JSON of
    /// the three values), so `("a b", "")` and `("a", "b")` differ.
    pub fn hash(&self) -> FactsHash {
        let present = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
        let encoded = serde_json::json!([
            present(&self.name),
            present(&self.company),
            present(&self.link)
        ]);
        FactsHash(TokenHash::of(&encoded.to_string()))
    }
}
