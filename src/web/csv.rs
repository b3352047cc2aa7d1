//! CSV lines for streamed exports. Every export writes through `Lines`,
//! so every cell is defused here, once.

use std::borrow::Cow;

use actix_web::web::Bytes;

/// Spreadsheets run cells that start with these as formulas.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A cell as text a spreadsheet shows and never runs: a leading quote
/// makes a formula-like cell text. Plain numbers stay numbers, so amounts
/// (negative ones too) still add up.
fn defused(text: &str) -> Cow<'_, str> {
    let number = || text.parse::<f64>().is_ok_and(f64::is_finite);
    match text.starts_with(FORMULA_STARTS) && !number() {
        true => Cow::Owned(format!("'{text}")),
        false => Cow::Borrowed(text),
    }
}

/// CSV records written one after another into one buffer. Every field is
/// quoted, so a reader that splits on `;` or tabs (Excel in many locales)
/// still sees one cell, and a formula hidden after a separator never
/// starts a cell. One writer serves a whole chunk of an export: a writer
/// per record cost more than the record (its buffer is made and zeroed
/// each time).
pub struct Lines {
    writer: csv::Writer<Vec<u8>>,
}

impl Lines {
    pub fn new() -> Self {
        Self::after(Vec::new())
    }

    /// A writer going on after `written`.
    fn after(written: Vec<u8>) -> Self {
        let writer = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::Always)
            .from_writer(written);
        Self { writer }
    }

    /// Adds one record with its line end.
    pub fn record<S: AsRef<str>>(&mut self, fields: impl IntoIterator<Item = S>) {
        for field in fields {
            let cell = defused(field.as_ref());
            self.writer
                .write_field(cell.as_bytes())
                .expect("writing CSV to memory cannot fail");
        }
        self.writer
            .write_record(None::<&[u8]>)
            .expect("writing CSV to memory cannot fail");
    }

    /// Adds a line as it is (a comment line such as an export's last
    /// word; rare, so the writer is simply made again after it).
    pub fn raw(&mut self, line: &[u8]) {
        let mut written = std::mem::take(self).bytes();
        written.extend_from_slice(line);
        *self = Self::after(written);
    }

    fn bytes(self) -> Vec<u8> {
        self.writer.into_inner().unwrap_or_default()
    }

    /// Everything written, as one chunk.
    pub fn finish(self) -> Bytes {
        Bytes::from(self.bytes())
    }
}

impl Default for Lines {
    fn default() -> Self {
        Self::new()
    }
}

/// One CSV record with its line end.
pub fn line<S: AsRef<str>>(fields: impl IntoIterator<Item = S>) -> Bytes {
    let mut lines = Lines::new();
    lines.record(fields);
    lines.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_like_cells_are_defused_and_every_field_quoted() {
        assert_eq!(
            &line(["=HYPERLINK(\"x\")", "DEP_123"])[..],
            b"\"'=HYPERLINK(\"\"x\"\")\",\"DEP_123\"\n"
        );
        assert_eq!(
            &line(["x;=cmd|' /C calc'!A0", "-12.50", "@SUM(1)"])[..],
            b"\"x;=cmd|' /C calc'!A0\",\"-12.50\",\"'@SUM(1)\"\n"
        );
        assert_eq!(&line(["a,b", "-inf"])[..], b"\"a,b\",\"'-inf\"\n");
    }

    #[test]
    fn one_writer_writes_records_and_raw_lines_in_order() {
        let mut lines = Lines::new();
        lines.record(["a", "=1+1"]);
        lines.raw(b"# export incomplete: try again\n");
        lines.record(["b"]);
        assert_eq!(
            &lines.finish()[..],
            b"\"a\",\"'=1+1\"\n# export incomplete: try again\n\"b\"\n"
        );
    }
}
