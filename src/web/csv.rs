//! CSV lines for streamed exports.

use actix_web::web::Bytes;

/// Spreadsheets run cells that start with these as formulas; a leading
/// quote makes them text.
pub fn safe(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_owned(),
    }
}

/// One CSV record, quoted as needed, with its line end.
pub fn line(fields: &[String]) -> Bytes {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .write_record(fields)
        .expect("writing CSV to memory cannot fail");
    Bytes::from(writer.into_inner().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_like_text_is_defused_and_fields_quoted() {
        assert_eq!(safe("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(safe("DEP_123"), "DEP_123");
        assert_eq!(&line(&["a,b".into(), "c".into()])[..], b"\"a,b\",c\n");
    }
}
