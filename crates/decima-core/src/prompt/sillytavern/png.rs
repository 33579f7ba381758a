//! The PNG container of SillyTavern cards: the card JSON is base64 in a `tEXt` (or uncompressed
//! `iTXt`) chunk named `chara` (V2) or `ccv3` (V3).
//!
//! The parser only borrows slices of the input: a length field is checked against the bytes that
//! are really there before it is used, so a hostile length cannot cause a large allocation.

use super::reject;
use crate::CoreError;

/// The eight bytes every PNG file starts with.
pub const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

const WHAT: &str = "PNG character card";

/// Whether the bytes start like a PNG file.
pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(&PNG_SIGNATURE)
}

/// The card text chunks found in a PNG: the raw (still base64) payloads.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CardChunks<'a> {
    /// The `chara` payload (V2 card), the first one if several.
    pub chara: Option<&'a [u8]>,
    /// The `ccv3` payload (V3 card), the first one if several.
    pub ccv3: Option<&'a [u8]>,
}

/// Walks the chunks, checking each CRC, and collects the card payloads. Stops at `IEND`.
pub fn card_chunks(bytes: &[u8]) -> Result<CardChunks<'_>, CoreError> {
    if !is_png(bytes) {
        return Err(reject(WHAT, "it does not start with the PNG signature"));
    }
    let mut rest = &bytes[PNG_SIGNATURE.len()..];
    let mut found = CardChunks::default();
    let mut index = 0usize;
    loop {
        index += 1;
        if rest.is_empty() {
            return Err(reject(
                WHAT,
                "the file ends without an IEND chunk (it is truncated)",
            ));
        }
        let Some((header, after)) = rest.split_at_checked(8) else {
            return Err(reject(
                WHAT,
                format!("chunk {index} is truncated (its header is incomplete)"),
            ));
        };
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let kind = &header[4..8];
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if after.len() < 4 || len > after.len() - 4 {
            return Err(reject(
                WHAT,
                format!(
                    "chunk {index} ({}) claims {len} bytes but only {} remain (truncated or corrupt)",
                    printable(kind),
                    after.len().saturating_sub(4)
                ),
            ));
        }
        let (data, after) = after.split_at(len);
        let (crc_bytes, after) = after.split_at(4);
        let stored = u32::from_be_bytes([crc_bytes[0], crc_bytes[1], crc_bytes[2], crc_bytes[3]]);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(kind);
        hasher.update(data);
        if hasher.finalize() != stored {
            return Err(reject(
                WHAT,
                format!(
                    "chunk {index} ({}) has a bad CRC (the file is corrupt)",
                    printable(kind)
                ),
            ));
        }
        match kind {
            b"tEXt" => {
                if let Some((key, text)) = split_nul(data) {
                    record(&mut found, key, text);
                }
            }
            b"iTXt" => {
                if let Some((key, text)) = itxt_text(data) {
                    record(&mut found, key, text);
                }
            }
            b"IEND" => return Ok(found),
            _ => {}
        }
        rest = after;
    }
}

fn record<'a>(found: &mut CardChunks<'a>, key: &[u8], text: &'a [u8]) {
    if key.eq_ignore_ascii_case(b"chara") && found.chara.is_none() {
        found.chara = Some(text);
    } else if key.eq_ignore_ascii_case(b"ccv3") && found.ccv3.is_none() {
        found.ccv3 = Some(text);
    }
}

fn split_nul(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let nul = data.iter().position(|&b| b == 0)?;
    Some((&data[..nul], &data[nul + 1..]))
}

/// keyword \0 compression-flag compression-method language \0 translated-keyword \0 text.
/// Compressed iTXt is skipped: no card writer uses it.
fn itxt_text(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let (key, rest) = split_nul(data)?;
    let (&flag, rest) = rest.split_first()?;
    let (_method, rest) = rest.split_first()?;
    if flag != 0 {
        return None;
    }
    let (_language, rest) = split_nul(rest)?;
    let (_translated, text) = split_nul(rest)?;
    Some((key, text))
}

fn printable(kind: &[u8]) -> String {
    kind.iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '?'
            }
        })
        .collect()
}

/// Builds a PNG around the given text chunks (1×1 pixel, no image data needed by the parser).
/// Used by tests and the fuzz seed corpus.
#[cfg(test)]
pub fn build_png(chunks: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut out = PNG_SIGNATURE.to_vec();
    let mut put = |kind: &[u8; 4], data: &[u8]| {
        out.extend_from_slice(&u32::try_from(data.len()).unwrap().to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut h = crc32fast::Hasher::new();
        h.update(kind);
        h.update(data);
        out.extend_from_slice(&h.finalize().to_be_bytes());
    };
    put(b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
    for (kind, data) in chunks {
        put(kind, data);
    }
    put(b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(key: &str, value: &str) -> Vec<u8> {
        let mut v = key.as_bytes().to_vec();
        v.push(0);
        v.extend_from_slice(value.as_bytes());
        v
    }

    #[test]
    fn finds_text_and_itxt_chunks() {
        let mut itxt = b"ccv3\0\0\0en\0\0".to_vec();
        itxt.extend_from_slice(b"V3DATA");
        let png = build_png(&[(b"tEXt", text("chara", "V2DATA")), (b"iTXt", itxt)]);
        let found = card_chunks(&png).unwrap();
        assert_eq!(found.chara, Some(&b"V2DATA"[..]));
        assert_eq!(found.ccv3, Some(&b"V3DATA"[..]));
    }

    #[test]
    fn rejects_bad_crc_truncation_and_huge_lengths() {
        let png = build_png(&[(b"tEXt", text("chara", "abc"))]);
        let mut bad = png.clone();
        let at = bad.len() - 13; // inside the tEXt payload
        bad[at] ^= 1;
        let err = card_chunks(&bad).unwrap_err().to_string();
        assert!(err.contains("bad CRC"), "{err}");

        let err = card_chunks(&png[..png.len() - 3]).unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
        let err = card_chunks(&png[..png.len() - 12]).unwrap_err().to_string();
        assert!(err.contains("IEND"), "{err}");

        let mut huge = PNG_SIGNATURE.to_vec();
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        huge.extend_from_slice(b"tEXt");
        huge.extend_from_slice(&[0; 16]);
        let err = card_chunks(&huge).unwrap_err().to_string();
        assert!(err.contains("claims 4294967295 bytes"), "{err}");
        assert!(card_chunks(b"not a png").is_err());
    }
}
