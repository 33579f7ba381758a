//! Step 2 of the context pipeline: presets, their assembly into a request, and the SillyTavern
//! import that maps cards and prompt presets into the same model.

pub mod assemble;
pub mod macros;
pub mod preset;
pub mod sillytavern;

pub use assemble::{
    AssembleInput, Assembled, AssembledMessage, Layer, LayerOverflow, PerLayer, assemble,
};
pub use preset::{
    Anchor, Character, DepthPrompt, Injection, LoreEntry, Lorebook, Position, Preset,
    PresetMessage, SkeletonEntry,
};
pub use sillytavern::{ImportKind, import, import_card, import_detected, import_st_preset};
