//! The layer row (L1): whether every layer of the system has a gate whose tests ran. One file
//! per row; the row reads docs, trees and reports and runs nothing itself.

pub mod l1_every_layer_has_a_gate;
