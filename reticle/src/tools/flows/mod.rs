//! The flows family: saving, listing, replaying, healing, recording and verifying flows, run
//! exports and capsule replays, one file per tool; `player` (the replay core), `rebind` (heal's
//! candidate ranking) and `recorded` (a page's recording read as steps) are shared inside the
//! family. The flow domain itself is the room `crate::flow`. It must not import the chokepoint,
//! the registry or another family.

pub mod flow;
pub mod flow_heal;
pub mod flow_replay;
pub mod flow_save;
pub mod flow_save_recorded;
mod player;
mod rebind;
pub mod record;
mod recorded;
pub mod replay;
pub mod run_export;
pub mod verify;
