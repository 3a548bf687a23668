//! The world a run queries: a handful of tables (columns of five types, primary keys, composite
//! secondary and unique indexes) and their rows, drawn from a seed, and the SQL that creates
//! and fills them on both servers.
//!
//! Values come from small domains so that joins, IN lists and GROUP BY meet equal values
//! often; NULLs, duplicates, empty strings and empty tables are all drawn on purpose.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;

/// Tables in one world (the bar is at least six).
pub const TABLES_PER_WORLD: usize = 6;
/// Most rows in one table.
const ROWS_MAX: usize = 40;
/// Most non-key columns in one table.
const COLUMNS_MAX: usize = 5;
/// Most secondary indexes on one table.
const INDEXES_MAX: usize = 3;

/// The type family of a value, as the query generator needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Int,
    Decimal,
    Text,
    Date,
}

impl Ty {
    pub fn is_numeric(self) -> bool {
        matches!(self, Ty::Int | Ty::Decimal)
    }
}

/// A column's SQL type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Int,
    BigInt,
    /// DECIMAL(precision, scale).
    Decimal(u8, u8),
    /// VARCHAR(length).
    Varchar(u16),
    Date,
}

impl ColumnType {
    pub fn ty(self) -> Ty {
        match self {
            ColumnType::Int | ColumnType::BigInt => Ty::Int,
            ColumnType::Decimal(..) => Ty::Decimal,
            ColumnType::Varchar(_) => Ty::Text,
            ColumnType::Date => Ty::Date,
        }
    }

    fn sql(self) -> String {
        match self {
            ColumnType::Int => "INT".into(),
            ColumnType::BigInt => "BIGINT".into(),
            ColumnType::Decimal(p, s) => format!("DECIMAL({p},{s})"),
            ColumnType::Varchar(n) => format!("VARCHAR({n})"),
            ColumnType::Date => "DATE".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
}

#[derive(Clone, Debug)]
pub struct Index {
    pub name: String,
    /// Positions in the table's columns.
    pub columns: Vec<usize>,
    pub unique: bool,
}

#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    /// Positions of the primary key's columns (empty: no primary key).
    pub primary_key: Vec<usize>,
    pub indexes: Vec<Index>,
    /// Rows as SQL literals, one per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// `CREATE TABLE` with the table's keys and indexes, in the collation that compares strings
    /// as Strata does (by their bytes, trailing spaces included).
    pub fn create_sql(&self) -> String {
        let mut parts: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                format!(
                    "{} {}{}",
                    c.name,
                    c.ty.sql(),
                    if c.nullable { "" } else { " NOT NULL" }
                )
            })
            .collect();
        if !self.primary_key.is_empty() {
            parts.push(format!(
                "PRIMARY KEY ({})",
                self.column_list(&self.primary_key)
            ));
        }
        for index in &self.indexes {
            parts.push(format!(
                "{}KEY {} ({})",
                if index.unique { "UNIQUE " } else { "" },
                index.name,
                self.column_list(&index.columns)
            ));
        }
        format!(
            "CREATE TABLE {} ({}) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin",
            self.name,
            parts.join(", ")
        )
    }

    /// One `INSERT` of `rows` (None when there are none).
    pub fn insert_sql(&self, rows: &[Vec<String>]) -> Option<String> {
        if rows.is_empty() {
            return None;
        }
        let values: Vec<String> = rows.iter().map(|r| format!("({})", r.join(", "))).collect();
        Some(format!(
            "INSERT INTO {} ({}) VALUES {}",
            self.name,
            self.columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            values.join(", ")
        ))
    }

    fn column_list(&self, positions: &[usize]) -> String {
        positions
            .iter()
            .map(|&i| self.columns[i].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the column at `position` leads the primary key or an index (a column that
    /// joins and filters should prefer, so that the planner has access paths to choose).
    pub fn leads_a_key(&self, position: usize) -> bool {
        self.primary_key.first() == Some(&position)
            || self
                .indexes
                .iter()
                .any(|i| i.columns.first() == Some(&position))
    }
}

/// The tables of one run.
#[derive(Clone, Debug)]
pub struct World {
    pub tables: Vec<Table>,
}

impl World {
    pub fn generate(rng: &mut StdRng) -> World {
        let tables = (0..TABLES_PER_WORLD)
            .map(|i| generate_table(rng, &format!("t{}", i + 1)))
            .collect();
        World { tables }
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

fn generate_table(rng: &mut StdRng, name: &str) -> Table {
    let mut columns = Vec::new();
    // Most tables have an integer key `id`, some a composite key, some none at all (a hidden
    // row id).
    let key_shape = rng.gen_range(0..10);
    if key_shape < 7 {
        columns.push(Column {
            name: "id".into(),
            ty: ColumnType::Int,
            nullable: false,
        });
    }
    let extra = rng.gen_range(2..=COLUMNS_MAX);
    for i in 0..extra {
        let ty = match rng.gen_range(0..10) {
            0..=3 => ColumnType::Int,
            4 => ColumnType::BigInt,
            5 | 6 => ColumnType::Decimal(8, 2),
            7 | 8 => ColumnType::Varchar(10),
            _ => ColumnType::Date,
        };
        columns.push(Column {
            name: format!("c{}", i + 1),
            ty,
            nullable: rng.gen_bool(0.6),
        });
    }
    let primary_key = match key_shape {
        0..=6 => vec![0],
        7 | 8 => {
            // A composite key over two columns, which must then be NOT NULL.
            let mut picks: Vec<usize> = (0..columns.len()).collect();
            picks.shuffle(rng);
            picks.truncate(2);
            for &p in &picks {
                columns[p].nullable = false;
            }
            picks
        }
        _ => Vec::new(),
    };
    let mut indexes = Vec::new();
    for i in 0..rng.gen_range(0..=INDEXES_MAX) {
        let width = rng.gen_range(1..=3.min(columns.len()));
        let mut picks: Vec<usize> = (0..columns.len()).collect();
        picks.shuffle(rng);
        picks.truncate(width);
        if picks == primary_key {
            continue;
        }
        indexes.push(Index {
            name: format!("{name}_k{}", i + 1),
            columns: picks,
            unique: rng.gen_bool(0.25),
        });
    }
    let mut table = Table {
        name: name.to_string(),
        columns,
        primary_key,
        indexes,
        rows: Vec::new(),
    };
    table.rows = generate_rows(rng, &table);
    table
}

/// Rows that respect the table's primary key and unique indexes.
///
/// No table has exactly one row: MariaDB reads such a table as a constant (a "system table")
/// before the join, and some of its answers over one are wrong (an ON equality of two NULLs
/// holds there); MySQL 8 has no such path, and the peer would stop being an oracle.
fn generate_rows(rng: &mut StdRng, table: &Table) -> Vec<Vec<String>> {
    let count = match rng.gen_range(0..10) {
        0 => 0,
        1 => 2,
        _ => rng.gen_range(2..=ROWS_MAX),
    };
    let mut unique_sets: Vec<Vec<usize>> = table
        .indexes
        .iter()
        .filter(|i| i.unique)
        .map(|i| i.columns.clone())
        .collect();
    if !table.primary_key.is_empty() {
        unique_sets.push(table.primary_key.clone());
    }
    let mut seen: Vec<std::collections::HashSet<Vec<String>>> =
        vec![Default::default(); unique_sets.len()];
    let mut rows = Vec::new();
    let mut next_id = rng.gen_range(1..4);
    for _ in 0..count * 2 {
        if rows.len() == count {
            break;
        }
        let row: Vec<String> = table
            .columns
            .iter()
            .map(|c| {
                if c.name == "id" {
                    next_id += rng.gen_range(1..3);
                    return next_id.to_string();
                }
                if c.nullable && rng.gen_bool(0.15) {
                    return "NULL".into();
                }
                value(rng, c.ty)
            })
            .collect();
        // NULLs never collide in a unique index.
        let collides = unique_sets.iter().zip(&seen).any(|(set, seen)| {
            let key: Vec<String> = set.iter().map(|&i| row[i].clone()).collect();
            !key.iter().any(|v| v == "NULL") && seen.contains(&key)
        });
        if collides {
            continue;
        }
        for (set, seen) in unique_sets.iter().zip(seen.iter_mut()) {
            seen.insert(set.iter().map(|&i| row[i].clone()).collect());
        }
        rows.push(row);
    }
    rows
}

/// Words that strings are drawn from: empty, cases that only a binary collation tells apart,
/// prefixes of each other, and a space inside.
pub const WORDS: &[&str] = &["", "a", "ab", "abc", "B", "b", "ba", "x y", "zz", "Zz", "é"];

/// A random value of `ty` as an SQL literal.
pub fn value(rng: &mut StdRng, ty: ColumnType) -> String {
    match ty {
        ColumnType::Int => rng.gen_range(-2..12).to_string(),
        // Large enough to leave INT's range in arithmetic, small enough that a product of
        // three stays in BIGINT's: MariaDB may compute a value for rows its semi-joins drop,
        // and an overflow there fails a query whose answer is well defined.
        ColumnType::BigInt => match rng.gen_range(0..4) {
            0 => rng.gen_range(-1_000_000i64..1_000_000).to_string(),
            _ => rng.gen_range(0..12).to_string(),
        },
        ColumnType::Decimal(..) => decimal_literal(rng),
        ColumnType::Varchar(_) => text_literal(rng),
        ColumnType::Date => date_literal(rng),
    }
}

/// A decimal with two places; a quarter of them are whole, so they meet integers.
pub fn decimal_literal(rng: &mut StdRng) -> String {
    let quarters: i64 = rng.gen_range(-20..60);
    let cents = quarters * 25;
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100)
}

pub fn text_literal(rng: &mut StdRng) -> String {
    format!("'{}'", WORDS.choose(rng).expect("words"))
}

pub fn date_literal(rng: &mut StdRng) -> String {
    let day = rng.gen_range(0..30);
    let (year, month, day) = if day < 25 {
        (2024, 1 + day / 10, 1 + day % 10)
    } else {
        (2023, 12, day)
    };
    format!("'{year:04}-{month:02}-{day:02}'")
}
