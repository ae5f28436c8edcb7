//! A filter written back in the notation it was parsed from, with the parentheses its
//! precedence needs: for logs and for passing a checked filter on to another SCIM service.

use std::fmt;

use super::Filter;

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Present(path) => write!(f, "{path} pr"),
            Self::Compare(path, op, value) => write!(f, "{path} {} {value}", op.as_str()),
            Self::ValuePath(path, inner) => write!(f, "{path}[{inner}]"),
            Self::Not(inner) => write!(f, "not ({inner})"),
            Self::Or(left, right) => write!(f, "{left} or {right}"),
            Self::And(left, right) => {
                write_operand(f, left)?;
                f.write_str(" and ")?;
                write_operand(f, right)
            }
        }
    }
}

/// An `or` inside an `and` keeps its parentheses.
fn write_operand(f: &mut fmt::Formatter<'_>, operand: &Filter) -> fmt::Result {
    match operand {
        Filter::Or(..) => write!(f, "({operand})"),
        _ => write!(f, "{operand}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;

    #[test]
    fn filters_round_trip() {
        for text in [
            "userName eq \"bjensen\"",
            "title pr",
            "a eq 1 or b eq 2 and c eq 3",
            "(a eq 1 or b eq 2) and c eq 3",
            "not (a eq true) and b ne null",
            "emails[type eq \"work\" and value co \"@example.com\"] or x gt 1.5",
            "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq \"a \\\"b\\\"\"",
        ] {
            let filter = parse(text).unwrap();
            assert_eq!(filter.to_string(), text);
            assert_eq!(parse(&filter.to_string()).unwrap(), filter);
        }
    }

    #[test]
    fn a_right_nested_or_keeps_its_meaning() {
        let filter = parse("a pr or (b pr or c pr)").unwrap();
        assert_eq!(
            parse(&filter.to_string()).unwrap().to_string(),
            filter.to_string()
        );
    }
}
