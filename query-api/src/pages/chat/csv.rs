//! CSV as RFC 4180 writes it (CRLF line ends; a field with a comma, a quote or a line break is
//! quoted, its quotes doubled), with spreadsheet formula injection neutralised: a chat line is
//! whatever a player typed, and a cell starting with `=`, `+`, `-` or `@` (or a tab or carriage
//! return, which some spreadsheets skip before those) would run as a formula when the export
//! is opened. Such a cell gets a leading `'`, which spreadsheets read as "this is text".

/// Appends one record (the fields and the line end) to `out`.
pub(super) fn push_record<'a>(out: &mut String, fields: impl IntoIterator<Item = &'a str>) {
    for (i, field) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_field(out, field);
    }
    out.push_str("\r\n");
}

/// Appends one field.
fn push_field(out: &mut String, field: &str) {
    let formula = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let quoted = field.contains([',', '"', '\r', '\n']);
    if quoted {
        out.push('"');
    }
    if formula {
        out.push('\'');
    }
    if quoted {
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(fields: &[&str]) -> String {
        let mut out = String::new();
        push_record(&mut out, fields.iter().copied());
        out
    }

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        assert_eq!(record(&["a", "b c", ""]), "a,b c,\r\n");
        assert_eq!(
            record(&["x,y", "say \"hi\"", "two\nlines", "cr\rhere"]),
            "\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\rhere\"\r\n"
        );
    }

    #[test]
    fn formulas_become_text() {
        assert_eq!(
            record(&["=HYPERLINK(\"http://evil.example\",\"x\")"]),
            "\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\"\r\n"
        );
        assert_eq!(
            record(&["+1", "-2", "@SUM(A1)", "\t=1", "a=1", "'"]),
            "'+1,'-2,'@SUM(A1),'\t=1,a=1,'\r\n"
        );
        assert_eq!(record(&["\r=1"]), "\"'\r=1\"\r\n");
    }
}
