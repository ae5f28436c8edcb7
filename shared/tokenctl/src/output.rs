//! What a verb prints on success: one JSON object (`--json`; an array for listings) or readable
//! text.

use std::io::Write;

use serde_json::Value;

pub struct Output {
    json: Value,
    text: String,
    /// Print `json`'s elements one a line (JSON Lines) instead of one array.
    lines: bool,
}

impl Output {
    /// `json` must be an object; `text` is what a person reads (one or a few lines).
    pub fn new(json: Value, text: impl Into<String>) -> Self {
        debug_assert!(json.is_object());
        Self {
            json,
            text: text.into(),
            lines: false,
        }
    }

    /// A listing: `json` is an array (`keys list` prints `[{"kid", ...}]`).
    pub fn list(json: Value, text: impl Into<String>) -> Self {
        debug_assert!(json.is_array());
        Self {
            json,
            text: text.into(),
            lines: false,
        }
    }

    /// A stream of records: with `--json`, one object a line (nothing for none).
    pub fn lines(records: Vec<Value>, text: impl Into<String>) -> Self {
        Self {
            json: Value::Array(records),
            text: text.into(),
            lines: true,
        }
    }

    pub fn print(&self, as_json: bool) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        if as_json && self.lines {
            for record in self.json.as_array().into_iter().flatten() {
                serde_json::to_writer(&mut stdout, record)?;
                stdout.write_all(b"\n")?;
            }
        } else if as_json {
            serde_json::to_writer(&mut stdout, &self.json)?;
            stdout.write_all(b"\n")?;
        } else {
            stdout.write_all(self.text.as_bytes())?;
            if !self.text.ends_with('\n') {
                stdout.write_all(b"\n")?;
            }
        }
        stdout.flush()
    }
}
