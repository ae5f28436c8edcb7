//! The tokens of the filter language (RFC 7644 §3.4.2.2, Figure 1), shared by filters and
//! PATCH paths.

use serde_json::Value;

use super::error::echo;
use super::{ScimError, ScimType};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token {
    /// An attribute path, an operator or a keyword (`and`, `or`, `not`, `true`, ...); which one
    /// depends on where it stands, so the parser decides.
    Word(String),
    /// A JSON string, escapes decoded.
    Str(String),
    Number(Value),
    LParen,
    RParen,
    LBracket,
    RBracket,
    /// The `.` of a sub-attribute after a value filter (`emails[type eq "work"].value`).
    Dot,
}

#[derive(Debug, Clone)]
pub(crate) struct Spanned {
    pub token: Token,
    pub offset: usize,
}

pub(crate) fn invalid(detail: impl Into<String>) -> ScimError {
    ScimError::bad_request(ScimType::InvalidFilter, detail)
}

fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'$' || c == b'_'
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b':' | b'.' | b'$')
}

fn is_number_byte(c: u8) -> bool {
    c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')
}

pub(crate) fn tokenize(text: &str) -> Result<Vec<Spanned>, ScimError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while let Some(&c) = bytes.get(at) {
        let offset = at;
        let token = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                at += 1;
                continue;
            }
            b'(' => Token::LParen,
            b')' => Token::RParen,
            b'[' => Token::LBracket,
            b']' => Token::RBracket,
            b'.' => Token::Dot,
            b'"' => {
                let end = string_end(bytes, at)
                    .ok_or_else(|| invalid(format!("unterminated string at offset {at}")))?;
                let literal = text.get(at..=end).unwrap_or_default();
                let decoded: String = serde_json::from_str(literal).map_err(|_| {
                    invalid(format!("invalid string {} at offset {at}", echo(literal)))
                })?;
                at = end + 1;
                tokens.push(Spanned {
                    token: Token::Str(decoded),
                    offset,
                });
                continue;
            }
            c if c.is_ascii_digit() || c == b'-' => {
                let end = run_end(bytes, at, is_number_byte);
                let literal = text.get(at..end).unwrap_or_default();
                let number = match serde_json::from_str::<Value>(literal) {
                    Ok(number @ Value::Number(_)) => number,
                    _ => {
                        return Err(invalid(format!(
                            "invalid number {} at offset {at}",
                            echo(literal)
                        )))
                    }
                };
                at = end;
                tokens.push(Spanned {
                    token: Token::Number(number),
                    offset,
                });
                continue;
            }
            c if is_word_start(c) => {
                let end = run_end(bytes, at, is_word_byte);
                let word = text.get(at..end).unwrap_or_default().to_owned();
                at = end;
                tokens.push(Spanned {
                    token: Token::Word(word),
                    offset,
                });
                continue;
            }
            _ => {
                let rest = text.get(at..).unwrap_or_default();
                return Err(invalid(format!(
                    "unexpected character at offset {at}: {}",
                    echo(&rest.chars().take(1).collect::<String>())
                )));
            }
        };
        at += 1;
        tokens.push(Spanned { token, offset });
    }
    Ok(tokens)
}

/// The index of the quote that closes the string opened at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    while let Some(&c) = bytes.get(at) {
        match c {
            b'\\' => at += 2,
            b'"' => return Some(at),
            _ => at += 1,
        }
    }
    None
}

fn run_end(bytes: &[u8], start: usize, accept: fn(u8) -> bool) -> usize {
    let mut at = start;
    while bytes.get(at).is_some_and(|&c| accept(c)) {
        at += 1;
    }
    at
}
