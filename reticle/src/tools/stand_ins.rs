//! Test-only stand-ins that break the flow promises, each behind its own switch in
//! [`crate::config::env`] (read at each use): a heal that applies its best candidate whatever
//! the consequence said ([`heal_guesses`]), a replay that grades every flow asserted
//! ([`grades_asserted`]), and a replay that reuses the ref a step's target resolved to the first
//! time ([`StoredRefs`]). The gate's negative controls start a daemon with one switch on to
//! prove its judge can go red. This module must not change anything while its switches are off.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::json;

use super::surface::args::Target;
use crate::config::{env, switch_on};

/// Whether heal applies its best candidate without proof.
pub fn heal_guesses() -> bool {
    switch_on(env::TEST_STAND_IN_HEAL_GUESSES)
}

/// Whether a replay grades every flow asserted.
pub fn grades_asserted() -> bool {
    switch_on(env::TEST_STAND_IN_GRADE_ASSERTED)
}

/// The refs steps' targets resolved to, kept for the daemon's life by the stored-ref stand-in.
pub struct StoredRefs;

impl StoredRefs {
    fn book() -> &'static Mutex<HashMap<String, String>> {
        static BOOK: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
        BOOK.get_or_init(Mutex::default)
    }

    /// The ref `target` resolved to before, when the stand-in is on and it has one.
    pub fn recalled(target: &Target) -> Option<String> {
        if !switch_on(env::TEST_STAND_IN_STORED_REF) {
            return None;
        }
        let book = Self::book().lock().unwrap_or_else(|e| e.into_inner());
        book.get(&json!(target).to_string()).cloned()
    }

    /// Keeps the ref `target` resolved to, when the stand-in is on.
    pub fn keep(target: &Target, element_ref: &str) {
        if !switch_on(env::TEST_STAND_IN_STORED_REF) {
            return;
        }
        let mut book = Self::book().lock().unwrap_or_else(|e| e.into_inner());
        book.insert(json!(target).to_string(), element_ref.to_string());
    }
}
