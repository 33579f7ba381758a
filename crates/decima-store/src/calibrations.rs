//! Per-model token calibrations: how far our estimate is from the provider's reported usage, so
//! the context meter stays honest for models without a public tokenizer.

use decima_core::Timestamp;

use crate::{Result, Store, StoreError, on_pool};

/// Longest model id accepted, as for provider rows.
const MAX_MODEL_CHARS: usize = 256;

/// Calibration operations, borrowed from a [`Store`].
pub struct Calibrations<'s> {
    store: &'s Store,
}

impl<'s> Calibrations<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The model's correction factor and how many samples it rests on, if it was ever calibrated.
    pub async fn get(&self, model: &str) -> Result<Option<(f64, u32)>> {
        let model = checked_model(model)?;
        let row: Option<(f64, i64)> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT factor, samples FROM token_calibrations WHERE model = $1"
        )
        .bind(model)
        .fetch_optional(pool)
        .await)?;
        row.map(|(factor, samples)| {
            let samples = u32::try_from(samples).map_err(|e| StoreError::Corrupt {
                what: "calibration sample count",
                detail: e.to_string(),
            })?;
            Ok((factor, samples))
        })
        .transpose()
    }

    /// Records the model's factor and sample count, replacing any earlier ones. One statement, so
    /// concurrent savers cannot interleave.
    pub async fn save(&self, model: &str, factor: f64, samples: u32) -> Result<()> {
        let model = checked_model(model)?;
        if !factor.is_finite() || factor <= 0.0 {
            return Err(StoreError::InvalidInput(format!(
                "a token calibration factor must be a finite number above 0, not {factor}"
            )));
        }
        on_pool!(self.store, |pool, d| {
            sqlx::query(
            "INSERT INTO token_calibrations (model, factor, samples, updated_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (model) DO UPDATE SET factor = excluded.factor, \
             samples = excluded.samples, updated_at = excluded.updated_at",
        )
        .bind(model)
        .bind(factor)
        .bind(i64::from(samples))
        .bind(Timestamp::now().0)
        .execute(pool)
        .await.map(|r| r.rows_affected())
        })?;
        Ok(())
    }
}

fn checked_model(model: &str) -> Result<&str> {
    let trimmed = model.trim();
    if trimmed.is_empty() {
        return Err(StoreError::InvalidInput(
            "a calibration needs a model id".into(),
        ));
    }
    if trimmed.chars().count() > MAX_MODEL_CHARS || trimmed.chars().any(|c| c.is_control()) {
        return Err(StoreError::InvalidInput(format!(
            "a model id has at most {MAX_MODEL_CHARS} characters and no control characters"
        )));
    }
    Ok(trimmed)
}
