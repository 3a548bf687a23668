//! `strata ctl`: an operator's view of a running cluster through its placement drivers (a
//! small pd-ctl): the regions with their leaders, and leader moves.

use clap::{Args, Subcommand};
use strata_pd_client::PdClient;

use crate::roles::ClusterTlsArgs;

/// Most regions one listing or move reads from the placement drivers.
const REGIONS_MAX: u32 = 100_000;

#[derive(Args, Debug)]
pub struct CtlArgs {
    /// The placement drivers' addresses, separated by commas.
    #[arg(long, default_value = "127.0.0.1:2379")]
    pub pd: String,
    #[command(flatten)]
    pub cluster_tls: ClusterTlsArgs,
    #[command(subcommand)]
    pub command: CtlCommand,
}

#[derive(Subcommand, Debug)]
pub enum CtlCommand {
    /// Lists the placement drivers: id, address, and which one leads.
    Members,
    /// Lists the regions: id, the store of the leader, the stores of the peers.
    Regions,
    /// Moves a region's leader to its peer on another store (pd-ctl's transfer-leader
    /// operator). With `--all`, every region's leader moves to the next store holding a peer
    /// of it. The leader refuses a store that lags or does not answer.
    TransferLeader {
        /// The region to move.
        #[arg(long, required_unless_present = "all", requires = "to_store")]
        region: Option<u64>,
        /// The store to move it to.
        #[arg(long)]
        to_store: Option<u64>,
        /// Every region, each to the next store holding a peer of it.
        #[arg(long, conflicts_with_all = ["region", "to_store"])]
        all: bool,
    },
}

pub fn run(args: CtlArgs) -> Result<(), String> {
    let security = args.cluster_tls.security()?;
    let pd = PdClient::connect_with(&args.pd, security).map_err(|e| e.to_string())?;
    let regions = || {
        pd.scan_regions(b"", b"", REGIONS_MAX)
            .map_err(|e| e.to_string())
    };
    match args.command {
        CtlCommand::Members => {
            let members = pd.members().map_err(|e| e.to_string())?;
            println!("id\taddress\trole");
            for member in members.members {
                let role = if member.id == members.leader_id {
                    "leader"
                } else {
                    "follower"
                };
                println!("{}\t{}\t{role}", member.id, member.address);
            }
        }
        CtlCommand::Regions => {
            println!("region\tleader_store\tstores");
            for entry in regions()? {
                let Some(region) = entry.region else { continue };
                let leader = entry
                    .leader
                    .map_or_else(|| "-".to_string(), |l| l.store_id.to_string());
                let stores: Vec<String> = region
                    .peers
                    .iter()
                    .map(|p| p.store_id.to_string())
                    .collect();
                println!("{}\t{leader}\t{}", region.id, stores.join(","));
            }
        }
        CtlCommand::TransferLeader {
            region: Some(region),
            to_store: Some(store),
            ..
        } => {
            pd.transfer_leader(region, store)
                .map_err(|e| e.to_string())?;
            println!("region {region}: leader asked to move to store {store}");
        }
        CtlCommand::TransferLeader { .. } => {
            for entry in regions()? {
                let (Some(region), Some(leader)) = (entry.region, entry.leader) else {
                    continue;
                };
                let stores: Vec<u64> = region.peers.iter().map(|p| p.store_id).collect();
                let at = stores.iter().position(|&s| s == leader.store_id);
                let Some(at) = at else { continue };
                let target = stores[(at + 1) % stores.len()];
                if target == leader.store_id {
                    continue;
                }
                pd.transfer_leader(region.id, target)
                    .map_err(|e| e.to_string())?;
                println!(
                    "region {}: leader asked to move from store {} to store {target}",
                    region.id, leader.store_id
                );
            }
        }
    }
    Ok(())
}
