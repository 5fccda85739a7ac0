//! The durability row (D1): SIGKILL during `.reticle/` writes leaves only whole documents. One
//! file per row.

pub mod d1_sigkill_never_tears_a_file;
