//! What a placement driver counts and shows: timestamp requests, whether it leads, the stores
//! (and how many are down), regions, region leaders per store and the GC safe point,
//! registered with the process's Prometheus registry (served at `/metrics` by the status port).

use std::sync::LazyLock;

use prometheus::{
    register_int_counter, register_int_gauge, register_int_gauge_vec, IntCounter, IntGauge,
    IntGaugeVec,
};

pub(crate) struct Metrics {
    pub tso_requests: IntCounter,
    pub timestamps: IntCounter,
    pub leading: IntGauge,
    pub stores: IntGaugeVec,
    pub regions: IntGauge,
    pub leaders: IntGaugeVec,
    pub gc_safe_point_ms: IntGauge,
}

pub(crate) static METRICS: LazyLock<Metrics> = LazyLock::new(|| Metrics {
    tso_requests: register_int_counter!(
        "strata_pd_tso_requests_total",
        "Timestamp requests answered by this placement driver"
    )
    .expect("registered once"),
    timestamps: register_int_counter!(
        "strata_pd_timestamps_total",
        "Timestamps issued by this placement driver"
    )
    .expect("registered once"),
    leading: register_int_gauge!(
        "strata_pd_leader",
        "1 while this placement driver leads the cluster's placement drivers"
    )
    .expect("registered once"),
    stores: register_int_gauge_vec!(
        "strata_pd_stores",
        "KV nodes registered, by state (up: heard from within the down time; down)",
        &["state"]
    )
    .expect("registered once"),
    regions: register_int_gauge!("strata_pd_regions", "Regions of the cluster")
        .expect("registered once"),
    leaders: register_int_gauge_vec!(
        "strata_pd_region_leaders",
        "Region leaders on each store, as their heartbeats report them",
        &["store"]
    )
    .expect("registered once"),
    gc_safe_point_ms: register_int_gauge!(
        "strata_pd_gc_safe_point_ms",
        "The GC safe point's physical time, in milliseconds since the Unix epoch"
    )
    .expect("registered once"),
});

/// Registers the metrics, so that `/metrics` lists them before the first request.
pub fn init() {
    LazyLock::force(&METRICS);
}
