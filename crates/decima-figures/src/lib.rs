//! The ledger of figures: every number a tool's output or a workspace file gave a run, with
//! what it is about and where it is, and every number of an answer matched against them. An
//! answer's figure is *linked* when a source holds the same value (allowing the rounding its
//! digits imply, % against fraction, k/M/bn and currency), *derived* when a sum, difference,
//! ratio, percentage change or mean of up to three linked figures gives it, and *unlinked*
//! otherwise; years, dates, list numbers and ids are not claims and are left alone.
//!
//! Pure, no I/O: the store keeps the entries, the runtime feeds it outputs and answers.

mod derive;
mod figure;
mod ledger;
mod matching;
mod reading;
mod scan;
mod sentences;
mod subject;

pub use derive::{Derivation, Operation};
pub use figure::{Currency, Figure, NotClaim, Scale, Unit, agrees, units_compatible};
pub use ledger::{Entry, Ledger, LedgerBuilder, Origin, Source};
pub use matching::{Check, Status, check_answer, check_answer_before};
pub use reading::{Located, read_figures};
pub use scan::scan;
pub use sentences::{sentence_bounds, words};
pub use subject::Subject;

#[cfg(test)]
mod matching_tests;
