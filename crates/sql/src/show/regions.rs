//! Where a table's data lives: `SHOW TABLE t [INDEX i] REGIONS` and information_schema's
//! TIKV_REGION_STATUS and TIKV_STORE_STATUS, in TiDB's shape, from the regions and stores the
//! transaction client reports (one region over everything on the playground).
//!
//! Strata does not count bytes written or read per region, nor estimate region sizes: those
//! columns are NULL.

use strata_codec::keys;
use strata_codec::Datum;
use strata_txn::{RegionInfo, StoreInfo};
use strata_types::{IndexId, TableId};

use super::{int_column, rows, text, text_column};
use crate::api::Output;
use crate::catalog::{Schema, TableDef};
use crate::error::{self, Error, Result};
use crate::session::Session;

/// `SHOW TABLE table [INDEX index] REGIONS`: the regions holding the table's rows and index
/// entries (or the one index's), with their leaders and peers.
pub fn table_regions(
    session: &Session,
    database: Option<&str>,
    table: &str,
    index: Option<&str>,
) -> Result<Output> {
    let database = match database {
        Some(d) => d.to_string(),
        None => session
            .current_database()
            .ok_or_else(error::no_database)?
            .to_string(),
    };
    let schema = session.server().catalog().schema();
    let def = schema.table(&database, table)?;
    let (start, end) = match index {
        None => (
            keys::table_prefix(TableId(def.id)),
            keys::table_prefix(TableId(def.id + 1)),
        ),
        Some(name) => {
            let index = def
                .indexes
                .iter()
                .find(|i| i.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    Error::new(
                        1176,
                        "42000",
                        format!("Key '{name}' doesn't exist in table '{}'", def.name),
                    )
                })?;
            (
                keys::index_prefix(TableId(def.id), IndexId(index.id)),
                keys::index_prefix(TableId(def.id), IndexId(index.id + 1)),
            )
        }
    };
    let regions = session.server().client().regions(&start, &end)?;
    let out = regions
        .iter()
        .map(|r| {
            let [leader, leader_store, peers] = leader_and_peers(r);
            vec![
                Datum::UInt(r.id),
                text(describe_key(&r.start_key)),
                text(describe_key(&r.end_key)),
                leader,
                leader_store,
                peers,
                Datum::UInt(0),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
            ]
        })
        .collect();
    Ok(rows(
        vec![
            int_column("REGION_ID"),
            text_column("START_KEY"),
            text_column("END_KEY"),
            int_column("LEADER_ID"),
            int_column("LEADER_STORE_ID"),
            text_column("PEERS"),
            int_column("SCATTERING"),
            int_column("WRITTEN_BYTES"),
            int_column("READ_BYTES"),
            int_column("APPROXIMATE_SIZE(MB)"),
            int_column("APPROXIMATE_KEYS"),
        ],
        out,
    ))
}

/// A region's leading peer, the leader's store and its peers (`1, 2, 3`), as cells.
fn leader_and_peers(r: &RegionInfo) -> [Datum; 3] {
    let peers = r
        .peers
        .iter()
        .map(|(peer, _)| peer.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    [
        r.leader.map_or(Datum::Null, |(peer, _)| Datum::UInt(peer)),
        r.leader
            .map_or(Datum::Null, |(_, store)| Datum::UInt(store)),
        text(peers),
    ]
}

/// A key as TiDB prints region boundaries: `t_<table>_r_<handle>` for a row,
/// `t_<table>_i_<index>_<hex>` for an index entry, `t_<table>` for a table's start, hex for
/// anything else, and the empty string for the key space's ends.
pub fn describe_key(key: &[u8]) -> String {
    if key.is_empty() {
        return String::new();
    }
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02X}")).collect::<String>();
    let Ok(table) = keys::decode_table_id(key) else {
        return hex(key);
    };
    let record = keys::record_prefix(table);
    if let Some(rest) = key.strip_prefix(record.as_slice()) {
        return match keys::decode_row_key_int(key) {
            Ok(handle) if !rest.is_empty() => format!("t_{}_r_{handle}", table.0),
            _ if rest.is_empty() => format!("t_{}_r", table.0),
            _ => format!("t_{}_r_{}", table.0, hex(rest)),
        };
    }
    if let Ok((_, index)) = keys::decode_index_ids(key) {
        let prefix = keys::index_prefix(table, index);
        let rest = &key[prefix.len().min(key.len())..];
        return if rest.is_empty() {
            format!("t_{}_i_{}", table.0, index.0)
        } else {
            format!("t_{}_i_{}_{}", table.0, index.0, hex(rest))
        };
    }
    if key == keys::table_prefix(table).as_slice() {
        return format!("t_{}", table.0);
    }
    hex(key)
}

/// The columns of information_schema.TIKV_REGION_STATUS (TiDB's, those Strata knows).
pub(crate) const REGION_STATUS_COLUMNS: &[(&str, crate::infoschema::Kind)] = {
    use crate::infoschema::Kind::{Int, Text};
    &[
        ("REGION_ID", Int),
        ("START_KEY", Text),
        ("END_KEY", Text),
        ("TABLE_ID", Int),
        ("DB_NAME", Text),
        ("TABLE_NAME", Text),
        ("IS_INDEX", Int),
        ("INDEX_ID", Int),
        ("INDEX_NAME", Text),
        ("EPOCH_CONF_VER", Int),
        ("EPOCH_VERSION", Int),
        ("LEADER_ID", Int),
        ("LEADER_STORE_ID", Int),
        ("PEERS", Text),
    ]
};

/// One row per region and table (or index) whose keys it holds, as TiDB lists them; a region
/// that holds no table's keys gets one row without a table.
pub(crate) fn region_status_rows(schema: &Schema, regions: &[RegionInfo]) -> Vec<Vec<Datum>> {
    let mut tables: Vec<&TableDef> = schema.tables.values().map(|t| t.as_ref()).collect();
    tables.sort_by_key(|t| t.id);
    let mut out = Vec::new();
    for r in regions {
        let overlaps = |start: &[u8], end: &[u8]| {
            (r.end_key.is_empty() || start < r.end_key.as_slice()) && end > r.start_key.as_slice()
        };
        let base = |table: Option<&TableDef>, index: Option<(i64, &str)>| {
            let [leader, leader_store, peers] = leader_and_peers(r);
            vec![
                Datum::UInt(r.id),
                text(describe_key(&r.start_key)),
                text(describe_key(&r.end_key)),
                table.map_or(Datum::Null, |t| Datum::Int(t.id)),
                table.map_or(Datum::Null, |t| text(&t.database)),
                table.map_or(Datum::Null, |t| text(&t.name)),
                Datum::UInt(u64::from(index.is_some())),
                index.map_or(Datum::Null, |(id, _)| Datum::Int(id)),
                index.map_or(Datum::Null, |(_, name)| text(name)),
                Datum::UInt(r.conf_ver),
                Datum::UInt(r.version),
                leader,
                leader_store,
                peers,
            ]
        };
        let before = out.len();
        for t in &tables {
            let record = keys::record_prefix(TableId(t.id));
            let record_end = keys::table_prefix(TableId(t.id + 1));
            if overlaps(&record, &record_end) {
                out.push(base(Some(t), None));
            }
            for index in &t.indexes {
                let start = keys::index_prefix(TableId(t.id), IndexId(index.id));
                let end = keys::index_prefix(TableId(t.id), IndexId(index.id + 1));
                if overlaps(&start, &end) {
                    out.push(base(Some(t), Some((index.id, &index.name))));
                }
            }
        }
        if out.len() == before {
            out.push(base(None, None));
        }
    }
    out
}

/// The columns of information_schema.TIKV_STORE_STATUS (TiDB's, those Strata knows).
pub(crate) const STORE_STATUS_COLUMNS: &[(&str, crate::infoschema::Kind)] = {
    use crate::infoschema::Kind::{Int, Text};
    &[
        ("STORE_ID", Int),
        ("ADDRESS", Text),
        ("STORE_STATE", Int),
        ("STORE_STATE_NAME", Text),
        ("LEADER_COUNT", Int),
        ("REGION_COUNT", Int),
    ]
};

pub(crate) fn store_status_rows(stores: &[StoreInfo]) -> Vec<Vec<Datum>> {
    stores
        .iter()
        .map(|s| {
            vec![
                Datum::UInt(s.id),
                text(&s.address),
                // TiDB's states: 0 Up, 1 Offline, 2 Tombstone; a store not heard from is
                // Down, which TiDB shows as state 0 with its name.
                Datum::UInt(0),
                text(if s.up { "Up" } else { "Down" }),
                Datum::UInt(s.leaders),
                Datum::UInt(s.regions),
            ]
        })
        .collect()
}
