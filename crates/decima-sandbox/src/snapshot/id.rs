//! A snapshot's id: the SHA-256 of its manifest, spelled as lowercase hex.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Result, SandboxError};

/// A snapshot's id: the lowercase hex SHA-256 of its manifest. This is what the runtime keeps in
/// `snapshots.workspace_archive`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SnapshotId(String);

impl SnapshotId {
    /// Checks the spelling (64 lowercase hex digits).
    ///
    /// # Errors
    /// [`SandboxError::InvalidSnapshotId`] otherwise.
    pub fn parse(s: &str) -> Result<Self> {
        if is_hex_sha256(s) {
            Ok(Self(s.to_owned()))
        } else {
            Err(SandboxError::InvalidSnapshotId { id: s.to_owned() })
        }
    }

    /// The id of a manifest's bytes.
    pub(super) fn of_manifest(bytes: &[u8]) -> Self {
        Self(hex(&Sha256::digest(bytes)))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for SnapshotId {
    type Err = SandboxError;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

impl TryFrom<String> for SnapshotId {
    type Error = SandboxError;
    fn try_from(s: String) -> Result<Self> {
        Self::parse(&s)
    }
}

impl From<SnapshotId> for String {
    fn from(id: SnapshotId) -> Self {
        id.0
    }
}

pub(crate) fn is_hex_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}
