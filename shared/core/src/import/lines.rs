//! Reading the import file line by line with a bounded buffer: a huge or endless line costs
//! at most [`MAX_LINE_BYTES`] of memory.

use std::io::BufRead;

use super::MAX_LINE_BYTES;

pub(super) struct LineRead {
    /// Bytes consumed, terminator included.
    pub(super) bytes: u64,
    /// The line exceeded [`MAX_LINE_BYTES`]; `buf` holds only its beginning.
    pub(super) too_long: bool,
}

/// Reads one line (without its `\n`) into `buf`, keeping at most [`MAX_LINE_BYTES`] + 1 bytes of
/// it and discarding the rest. `None` at end of input.
pub(super) fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<LineRead>> {
    let mut consumed: u64 = 0;
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((consumed > 0).then_some(LineRead {
                bytes: consumed,
                too_long,
            }));
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            let room = MAX_LINE_BYTES + 1 - buf.len();
            if chunk.len() > room {
                buf.extend_from_slice(&chunk[..room]);
                too_long = true;
            } else {
                buf.extend_from_slice(chunk);
                too_long = buf.len() > MAX_LINE_BYTES;
            }
        }
        reader.consume(used);
        consumed += used as u64;
        if done {
            return Ok(Some(LineRead {
                bytes: consumed,
                too_long,
            }));
        }
    }
}

pub(super) fn trim_ascii_whitespace(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |at| at + 1);
    &bytes[start..end]
}
