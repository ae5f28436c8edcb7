//! Scope names in plain words for the consent screen.

/// Known scopes and what granting them lets the application do, as one sentence each.
const SENTENCES: &[(&str, &str)] = &[
    ("openid", "Confirm who you are when you sign in"),
    ("profile", "See your name and profile details"),
    ("email", "See your email address"),
    ("offline_access", "Keep access while you are not using it"),
    ("accounting", "See and manage your accounting data"),
    ("payroll", "See and manage your payroll data"),
];

/// One sentence per scope, in the scopes' order. A scope without a sentence is still shown,
/// by name, so the consent screen never hides what is being granted.
pub fn scope_sentences<'a>(scopes: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    scopes
        .into_iter()
        .map(
            |scope| match SENTENCES.iter().find(|(name, _)| *name == scope) {
                Some((_, sentence)) => (*sentence).to_owned(),
                None => format!("Use the “{scope}” permission"),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_scopes_read_as_sentences_and_unknown_ones_by_name() {
        assert_eq!(
            scope_sentences(["openid", "com.example.read"]),
            vec![
                "Confirm who you are when you sign in".to_owned(),
                "Use the “com.example.read” permission".to_owned(),
            ]
        );
    }
}
