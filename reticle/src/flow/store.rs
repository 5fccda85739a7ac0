//! Reading saved flows from the workspace's `flows/`: [`load_flow`] by name, a missing or
//! unreadable one answered as [`Unloaded`] (what went wrong and the fix; the saved names when
//! none of that name is there), never replaced. Read by the flow tools and `reticle verify`;
//! it must not write a flow nor drive a page.

use super::model::Flow;
use crate::store::workspace::{Folder, StoreError, Workspace};

/// Why a saved flow could not be had: what went wrong, the fix, and the names of the saved
/// flows when none of the asked name is there.
#[derive(Debug, Clone, PartialEq)]
pub struct Unloaded {
    pub reason: String,
    pub recovery: String,
    pub saved: Option<Vec<String>>,
}

impl From<StoreError> for Unloaded {
    fn from(err: StoreError) -> Self {
        Self {
            reason: err.to_string(),
            recovery: err.recovery().into(),
            saved: None,
        }
    }
}

/// Loads a saved flow by name; a missing or unreadable one is a refusal naming it.
pub fn load_flow(workspace: &Workspace, name: &str) -> Result<Flow, Unloaded> {
    let document = workspace
        .load(Folder::Flows, name)
        .map_err(Unloaded::from)?
        .ok_or_else(|| no_such_flow(workspace, name))?;
    Flow::from_document(&document).map_err(|why| Unloaded {
        reason: format!("the flow '{name}' could not be read: {why}"),
        recovery: "save it again with reticle_flow_save, or delete it with reticle_flow {\"action\":\"delete\"}".into(),
        saved: None,
    })
}

fn no_such_flow(workspace: &Workspace, name: &str) -> Unloaded {
    let saved: Vec<String> = workspace
        .list(Folder::Flows)
        .into_iter()
        .map(|l| l.name)
        .collect();
    Unloaded {
        reason: format!("no flow named '{name}' is saved in this workspace"),
        recovery: "call reticle_flow {\"action\":\"list\"} for the saved flows, or save one with reticle_flow_save".into(),
        saved: Some(saved),
    }
}
