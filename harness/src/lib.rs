//! The client side of every gate.
