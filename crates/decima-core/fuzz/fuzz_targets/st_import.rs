//! Feeds arbitrary bytes to the SillyTavern import (cards as JSON or PNG, prompt presets): it must
//! return Ok or a clear error, never panic, and whatever it accepts must assemble.
#![no_main]

use decima_core::prompt::{AssembleInput, assemble, import};
use decima_core::{EstimateCounter, NewMessage, Role};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(preset) = import(data) {
        let history = [
            NewMessage::new(Role::User, "hello engine"),
            NewMessage::new(Role::Assistant, "hi"),
        ]
        .map(std::sync::Arc::new);
        let mut input = AssembleInput::new(&history);
        input.instant_context = "reminder";
        input.system_first = data.len() % 2 == 0;
        let _ = assemble(&preset, &input, &EstimateCounter);
    }
});
