//! The filter language of RFC 7644 §3.4.2.2 (the ABNF of Figure 1): a tokenizer, a
//! recursive-descent parser with limits against hostile input, a schema check and evaluation
//! against resources.

use serde_json::Value;

use super::error::echo;
use super::lexer::{invalid, tokenize, Spanned, Token};
use super::schema::ResourceType;
use super::{ScimError, GROUP_SCHEMA, USER_SCHEMA};

mod attr_path;
pub(crate) mod check;
mod display;
pub(crate) mod eval;

pub use attr_path::AttrPath;

pub use check::parse_checked;

/// The longest filter accepted, in bytes: far above what provisioning clients send, small
/// enough that parsing and evaluating it stays cheap.
pub const MAX_FILTER_BYTES: usize = 4096;

/// The deepest nesting of parentheses and value filters accepted; the parser recurses once per
/// level, so this bounds its stack.
pub const MAX_FILTER_DEPTH: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Co,
    Sw,
    Ew,
    Gt,
    Ge,
    Lt,
    Le,
}

impl CompareOp {
    /// Operators are case-insensitive (RFC 7644 §3.4.2.2).
    pub fn parse(text: &str) -> Option<Self> {
        let op = match text.to_ascii_lowercase().as_str() {
            "eq" => Self::Eq,
            "ne" => Self::Ne,
            "co" => Self::Co,
            "sw" => Self::Sw,
            "ew" => Self::Ew,
            "gt" => Self::Gt,
            "ge" => Self::Ge,
            "lt" => Self::Lt,
            "le" => Self::Le,
            _ => return None,
        };
        Some(op)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::Ne => "ne",
            Self::Co => "co",
            Self::Sw => "sw",
            Self::Ew => "ew",
            Self::Gt => "gt",
            Self::Ge => "ge",
            Self::Lt => "lt",
            Self::Le => "le",
        }
    }
}

/// A parsed filter. Inside a `ValuePath` the paths name sub-attributes of its attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    Present(AttrPath),
    Compare(AttrPath, CompareOp, Value),
    ValuePath(AttrPath, Box<Filter>),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
}

/// The attributes the store has an index for (see [`Filter::exact_match`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexedAttribute {
    UserName,
    ExternalId,
    Email,
    Id,
    DisplayName,
}

impl Filter {
    /// `Some` when the whole filter is one `eq` with a string on an indexed attribute, so that
    /// the caller can look the resource up instead of scanning.
    pub fn exact_match(&self) -> Option<(IndexedAttribute, &str)> {
        match self {
            Self::Compare(path, CompareOp::Eq, Value::String(value)) => {
                let core = path.urn.as_deref().is_none_or(|urn| {
                    urn.eq_ignore_ascii_case(USER_SCHEMA) || urn.eq_ignore_ascii_case(GROUP_SCHEMA)
                });
                if !core {
                    return None;
                }
                let name = path.name.to_ascii_lowercase();
                let sub = path.sub.as_deref().map(str::to_ascii_lowercase);
                let attribute = match (name.as_str(), sub.as_deref()) {
                    ("username", None) => IndexedAttribute::UserName,
                    ("externalid", None) => IndexedAttribute::ExternalId,
                    ("emails", None | Some("value")) => IndexedAttribute::Email,
                    ("id", None) => IndexedAttribute::Id,
                    ("displayname", None) => IndexedAttribute::DisplayName,
                    _ => return None,
                };
                Some((attribute, value.as_str()))
            }
            Self::ValuePath(path, inner)
                if path.urn.is_none()
                    && path.sub.is_none()
                    && path.name.eq_ignore_ascii_case("emails") =>
            {
                match inner.as_ref() {
                    Self::Compare(sub, CompareOp::Eq, Value::String(value))
                        if sub.urn.is_none()
                            && sub.sub.is_none()
                            && sub.name.eq_ignore_ascii_case("value") =>
                    {
                        Some((IndexedAttribute::Email, value.as_str()))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether the resource matches, with the semantics of RFC 7644 §3.4.2.2.
    pub fn matches(&self, resource: &Value, rt: &ResourceType) -> bool {
        eval::matches(self, resource, rt)
    }
}

/// Parses a filter (the `filter` rule of RFC 7644 Figure 1). Errors are 400 `invalidFilter`.
pub fn parse(text: &str) -> Result<Filter, ScimError> {
    let mut parser = Parser::new(text)?;
    let filter = parser.filter()?;
    parser.end()?;
    Ok(filter)
}

pub(crate) struct Parser {
    tokens: Vec<Spanned>,
    at: usize,
    depth: usize,
    in_value_filter: bool,
    len: usize,
}

impl Parser {
    pub(crate) fn new(text: &str) -> Result<Self, ScimError> {
        if text.len() > MAX_FILTER_BYTES {
            return Err(invalid(format!(
                "the filter is longer than {MAX_FILTER_BYTES} bytes"
            )));
        }
        Ok(Self {
            tokens: tokenize(text)?,
            at: 0,
            depth: 0,
            in_value_filter: false,
            len: text.len(),
        })
    }

    pub(crate) fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|spanned| &spanned.token)
    }

    fn offset(&self) -> usize {
        self.tokens
            .get(self.at)
            .map_or(self.len, |spanned| spanned.offset)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self
            .tokens
            .get(self.at)
            .map(|spanned| spanned.token.clone());
        if token.is_some() {
            self.at += 1;
        }
        token
    }

    fn peek_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(word)) if word.eq_ignore_ascii_case(keyword))
    }

    pub(crate) fn end(&self) -> Result<(), ScimError> {
        if self.at >= self.tokens.len() {
            Ok(())
        } else {
            Err(invalid(format!(
                "unexpected text at offset {}",
                self.offset()
            )))
        }
    }

    fn expect(&mut self, token: &Token, what: &str) -> Result<(), ScimError> {
        if self.peek() == Some(token) {
            self.at += 1;
            Ok(())
        } else {
            Err(invalid(format!(
                "expected {what} at offset {}",
                self.offset()
            )))
        }
    }

    pub(crate) fn eat(&mut self, token: &Token) -> bool {
        let found = self.peek() == Some(token);
        if found {
            self.at += 1;
        }
        found
    }

    fn enter(&mut self) -> Result<(), ScimError> {
        self.depth += 1;
        if self.depth > MAX_FILTER_DEPTH {
            return Err(invalid(format!(
                "the filter nests deeper than {MAX_FILTER_DEPTH} levels"
            )));
        }
        Ok(())
    }

    /// `filter` with `or` binding loosest, then `and` (RFC 7644 §3.4.2.2, "Filter Operator
    /// Precedence").
    pub(crate) fn filter(&mut self) -> Result<Filter, ScimError> {
        let mut left = self.conjunction()?;
        while self.peek_keyword("or") {
            self.at += 1;
            let right = self.conjunction()?;
            left = Filter::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn conjunction(&mut self) -> Result<Filter, ScimError> {
        let mut left = self.term()?;
        while self.peek_keyword("and") {
            self.at += 1;
            let right = self.term()?;
            left = Filter::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Filter, ScimError> {
        if self.peek_keyword("not") {
            self.at += 1;
            if self.peek() != Some(&Token::LParen) {
                return Err(invalid(format!(
                    "\"not\" must be followed by a parenthesized filter at offset {}",
                    self.offset()
                )));
            }
            return Ok(Filter::Not(Box::new(self.group()?)));
        }
        if self.peek() == Some(&Token::LParen) {
            return self.group();
        }
        let path = self.attr_path()?;
        if self.peek() == Some(&Token::LBracket) {
            return self.value_path(path);
        }
        self.attr_expression(path)
    }

    fn group(&mut self) -> Result<Filter, ScimError> {
        self.expect(&Token::LParen, "\"(\"")?;
        self.enter()?;
        let inner = self.filter()?;
        self.expect(&Token::RParen, "\")\"")?;
        self.depth -= 1;
        Ok(inner)
    }

    /// `valuePath = attrPath "[" valFilter "]"`; `valFilter` holds no value path itself.
    pub(crate) fn value_path(&mut self, path: AttrPath) -> Result<Filter, ScimError> {
        let offset = self.offset();
        if self.in_value_filter || path.sub.is_some() {
            return Err(invalid(format!(
                "a value filter cannot stand here (offset {offset})"
            )));
        }
        self.expect(&Token::LBracket, "\"[\"")?;
        self.enter()?;
        self.in_value_filter = true;
        let inner = self.filter()?;
        self.in_value_filter = false;
        self.expect(&Token::RBracket, "\"]\"")?;
        self.depth -= 1;
        Ok(Filter::ValuePath(path, Box::new(inner)))
    }

    pub(crate) fn attr_path(&mut self) -> Result<AttrPath, ScimError> {
        let offset = self.offset();
        match self.next() {
            Some(Token::Word(word)) => AttrPath::parse(&word).ok_or_else(|| {
                invalid(format!(
                    "invalid attribute path {} at offset {offset}",
                    echo(&word)
                ))
            }),
            _ => Err(invalid(format!(
                "expected an attribute path at offset {offset}"
            ))),
        }
    }

    fn attr_expression(&mut self, path: AttrPath) -> Result<Filter, ScimError> {
        let offset = self.offset();
        let op = match self.next() {
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("pr") => {
                return Ok(Filter::Present(path))
            }
            Some(Token::Word(word)) => CompareOp::parse(&word),
            _ => None,
        }
        .ok_or_else(|| invalid(format!("expected an operator at offset {offset}")))?;
        let offset = self.offset();
        let value = match self.next() {
            Some(Token::Str(text)) => Value::String(text),
            Some(Token::Number(number)) => number,
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("true") => Value::Bool(true),
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("false") => Value::Bool(false),
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("null") => Value::Null,
            _ => {
                return Err(invalid(format!(
                    "expected a value (string, number, true, false or null) at offset {offset}"
                )))
            }
        };
        Ok(Filter::Compare(path, op, value))
    }
}

#[cfg(test)]
mod eval_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
