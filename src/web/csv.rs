//! CSV lines for streamed exports. Every export goes through `line`, so
//! every cell is defused here, once.

use actix_web::web::Bytes;

/// Spreadsheets run cells that start with these as formulas.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A cell as text a spreadsheet shows and never runs: a leading quote
/// makes a formula-like cell text. Plain numbers stay numbers, so amounts
/// (negative ones too) still add up.
fn defused(text: &str) -> String {
    let number = text.parse::<f64>().is_ok_and(f64::is_finite);
    match text.starts_with(FORMULA_STARTS) && !number {
        true => format!("'{text}"),
        false => text.to_owned(),
    }
}

/// One CSV record with its line end. Every field is quoted, so a reader
/// that splits on `;` or tabs (Excel in many locales) still sees one
/// cell, and a formula hidden after a separator never starts a cell.
pub fn line(fields: &[String]) -> Bytes {
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(Vec::new());
    writer
        .write_record(fields.iter().map(|f| defused(f)))
        .expect("writing CSV to memory cannot fail");
    Bytes::from(writer.into_inner().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_like_cells_are_defused_and_every_field_quoted() {
        assert_eq!(
            &line(&["=HYPERLINK(\"x\")".into(), "DEP_123".into()])[..],
            b"\"'=HYPERLINK(\"\"x\"\")\",\"DEP_123\"\n"
        );
        assert_eq!(
            &line(&["x;=cmd|' /C calc'!A0".into(), "-12.50".into(), "@SUM(1)".into()])[..],
            b"\"x;=cmd|' /C calc'!A0\",\"-12.50\",\"'@SUM(1)\"\n"
        );
        assert_eq!(&line(&["a,b".into(), "-inf".into()])[..], b"\"a,b\",\"'-inf\"\n");
    }
}
