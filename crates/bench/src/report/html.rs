//! Writes the report's blocks as one self-contained HTML page: inline CSS, inline SVG charts,
//! no scripts and no external resources, so the file can be mailed or archived alone.

use std::collections::BTreeSet;

use super::{format, Block, Figure, Table};

/// The page's style sheet.
const STYLE: &str = "\
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #222; \
max-width: 1280px; margin: 2em auto; padding: 0 1em; line-height: 1.4; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
.table { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.8em 0 1.2em; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f2f5; }
tr:nth-child(even) td { background: #fafbfc; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 8px; font-size: 13px; \
white-space: pre-wrap; overflow-wrap: anywhere; }
.figures { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 12px; margin: 0.8em 0 1.2em; }
figure { margin: 0; border: 1px solid #e1e4e8; padding: 4px; background: #fff; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 13px; color: #444; text-align: center; padding-top: 2px; }
.chart-error { color: #a00; font-size: 13px; }
";

/// Renders the blocks as one HTML document.
pub(super) fn render(blocks: &[Block]) -> String {
    let title = blocks
        .iter()
        .find_map(|block| match block {
            Block::Heading { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or("Benchmark report");
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n", escape(title)));
    out.push_str(&format!("<style>\n{STYLE}</style>\n</head>\n<body>\n"));
    let mut heading_ids = BTreeSet::new();
    for block in blocks {
        match block {
            Block::Heading { level, text } => {
                let level = (*level).clamp(1, 6);
                let id = unique_id(&mut heading_ids, text);
                out.push_str(&format!(
                    "<h{level} id=\"{}\">{}</h{level}>\n",
                    escape(&id),
                    escape(text)
                ));
            }
            Block::Paragraph(text) => out.push_str(&format!("<p>{}</p>\n", escape(text))),
            Block::List(items) => {
                out.push_str("<ul>\n");
                for item in items {
                    out.push_str(&format!("<li>{}</li>\n", escape(item)));
                }
                out.push_str("</ul>\n");
            }
            Block::Table(table) => table_to(&mut out, table),
            Block::Code(code) => {
                out.push_str(&format!("<pre><code>{}</code></pre>\n", escape(code)))
            }
            Block::Figures(figures) => figures_to(&mut out, figures),
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn table_to(out: &mut String, table: &Table) {
    out.push_str("<div class=\"table\">\n<table>\n<thead>\n<tr>");
    for (column, cell) in table.header.iter().enumerate() {
        out.push_str(&format!(
            "<th{}>{}</th>",
            class(table, column),
            escape(cell)
        ));
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for (column, cell) in row.iter().enumerate() {
            out.push_str(&format!(
                "<td{}>{}</td>",
                class(table, column),
                escape(cell)
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
}

fn class(table: &Table, column: usize) -> &'static str {
    if column < table.left_columns {
        ""
    } else {
        " class=\"num\""
    }
}

fn figures_to(out: &mut String, figures: &[Figure]) {
    if figures.is_empty() {
        return;
    }
    out.push_str("<div class=\"figures\">\n");
    for figure in figures {
        out.push_str(&format!("<figure id=\"{}\">\n", escape(&figure.id)));
        match &figure.svg {
            Ok(svg) => out.push_str(svg),
            Err(error) => out.push_str(&format!(
                "<p class=\"chart-error\">The chart could not be drawn: {}</p>\n",
                escape(error)
            )),
        }
        out.push_str(&format!(
            "<figcaption>{}</figcaption>\n</figure>\n",
            escape(&figure.caption)
        ));
    }
    out.push_str("</div>\n");
}

/// Returns an id for a heading that no earlier heading of the page has.
fn unique_id(used: &mut BTreeSet<String>, text: &str) -> String {
    let base = match format::slug(text) {
        slug if slug.is_empty() => "section".to_string(),
        slug => slug,
    };
    let mut id = base.clone();
    let mut suffix = 2;
    while used.contains(&id) {
        id = format!("{base}-{suffix}");
        suffix += 1;
    }
    used.insert(id.clone());
    id
}

/// Escapes text for HTML element content and double- or single-quoted attribute values.
pub(super) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_result_files_is_escaped() {
        let page = render(&[
            Block::Heading {
                level: 1,
                text: "<script>alert('x')</script>".into(),
            },
            Block::Table(Table {
                header: vec!["a & b".into()],
                rows: vec![vec!["\"q\"".into()]],
                left_columns: 1,
            }),
            Block::Code("</pre><b>".into()),
        ]);
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
        assert!(page.contains("<th>a &amp; b</th>"));
        assert!(page.contains("<td>&quot;q&quot;</td>"));
        assert!(page.contains("<pre><code>&lt;/pre&gt;&lt;b&gt;</code></pre>"));
    }

    #[test]
    fn heading_ids_are_unique() {
        let heading = Block::Heading {
            level: 2,
            text: "Resources".into(),
        };
        let page = render(&[heading.clone(), heading]);
        assert!(page.contains("<h2 id=\"resources\">"));
        assert!(page.contains("<h2 id=\"resources-2\">"));
    }
}
