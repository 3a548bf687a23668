//! Writes the report's blocks as GitHub-flavoured Markdown; figures are left out.
//!
//! Table cells are not padded to a common width: every row is written the same way whatever
//! the other rows hold, which keeps diffs between two reports small and tests exact.

use super::{Block, Table};

/// Renders the blocks as one Markdown document.
pub(super) fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            Block::Heading { level, text } => {
                out.push_str(&"#".repeat((*level).clamp(1, 6)));
                out.push(' ');
                out.push_str(&one_line(text));
                out.push_str("\n\n");
            }
            Block::Paragraph(text) => {
                out.push_str(&one_line(text));
                out.push_str("\n\n");
            }
            Block::List(items) => {
                for item in items {
                    out.push_str("- ");
                    out.push_str(&one_line(item));
                    out.push('\n');
                }
                out.push('\n');
            }
            Block::Table(table) => table_to(&mut out, table),
            Block::Code(code) => code_to(&mut out, code),
            Block::Figures(_) => {}
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn table_to(out: &mut String, table: &Table) {
    row_to(out, &table.header);
    let alignments: Vec<String> = (0..table.header.len())
        .map(|column| {
            if column < table.left_columns {
                "---".to_string()
            } else {
                "---:".to_string()
            }
        })
        .collect();
    out.push('|');
    for alignment in &alignments {
        out.push_str(alignment);
        out.push('|');
    }
    out.push('\n');
    for row in &table.rows {
        row_to(out, row);
    }
    out.push('\n');
}

fn row_to(out: &mut String, cells: &[String]) {
    out.push('|');
    for cell in cells {
        out.push(' ');
        out.push_str(&cell_text(cell));
        out.push_str(" |");
    }
    out.push('\n');
}

/// Writes `code` in a fence longer than any run of backticks inside it, so no content can
/// close the fence early.
fn code_to(out: &mut String, code: &str) {
    let longest_run = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    out.push_str(&fence);
    out.push('\n');
    out.push_str(code.trim_end_matches('\n'));
    out.push('\n');
    out.push_str(&fence);
    out.push_str("\n\n");
}

/// Escapes a table cell: a `|` would start a new cell and a line break would end the row.
fn cell_text(cell: &str) -> String {
    one_line(cell).replace('|', "\\|")
}

/// Joins the lines of a text with spaces: headings, paragraphs and list items are one line.
fn one_line(text: &str) -> String {
    text.split(['\r', '\n'])
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_escape_pipes_and_line_breaks() {
        let table = Table {
            header: vec!["Threads".into(), "a|b QPS".into()],
            rows: vec![vec!["1".into(), "x\ny".into()]],
            left_columns: 1,
        };
        let text = render(&[Block::Table(table)]);
        assert_eq!(text, "| Threads | a\\|b QPS |\n|---|---:|\n| 1 | x y |\n");
    }

    #[test]
    fn code_fences_outlast_backticks_inside() {
        let text = render(&[Block::Code("echo ```\n".into())]);
        assert_eq!(text, "````\necho ```\n````\n");
    }
}
