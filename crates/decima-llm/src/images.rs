//! Images in tool results: which protocols show them to the model, in which formats, and what
//! one costs in a request. Anthropic takes image blocks inside a `tool_result`; an
//! OpenAI-compatible tool message is text only, so there the model reads the text naming the
//! saved file instead.

use base64::Engine as _;
use decima_core::ImagePart;

use crate::Protocol;

/// The formats Anthropic takes in an image block.
const ANTHROPIC_FORMATS: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
/// Anthropic scales an image down until its long edge is at most this many pixels.
const LONG_EDGE: f64 = 1568.0;
/// … and its area at most about this many pixels.
const MAX_AREA: f64 = 1_150_000.0;
/// Pixels per token, by Anthropic's published estimate.
const PIXELS_PER_TOKEN: f64 = 750.0;
/// Anthropic refuses an image above this size.
const MAX_BYTES: usize = 5 * 1024 * 1024;

/// An image a tool returned, as kept with its result: shown to the model (and counted) when
/// `protocol` takes it in a tool result, otherwise kept for the window at no cost.
pub fn tool_result_image(protocol: Protocol, media_type: &str, bytes: &[u8]) -> ImagePart {
    ImagePart {
        media_type: media_type.to_owned(),
        data: base64::engine::general_purpose::STANDARD
            .encode(bytes)
            .into(),
        tokens: shown_tokens(protocol, media_type, bytes).unwrap_or(0),
    }
}

/// What the image costs when the model is shown it; `None` when it is not (the protocol or
/// the format, a size the provider refuses, or bytes that are no image of that format).
fn shown_tokens(protocol: Protocol, media_type: &str, bytes: &[u8]) -> Option<u32> {
    if protocol != Protocol::Anthropic
        || !ANTHROPIC_FORMATS.contains(&media_type)
        || bytes.len() > MAX_BYTES
    {
        return None;
    }
    let size = imagesize::blob_size(bytes).ok()?;
    let (width, height) = (size.width as f64, size.height as f64);
    if width < 1.0 || height < 1.0 {
        return None;
    }
    let edge = (LONG_EDGE / width.max(height)).min(1.0);
    let area = (MAX_AREA / (width * height * edge * edge)).sqrt().min(1.0);
    let scale = edge * area;
    let tokens = (width * scale) * (height * scale) / PIXELS_PER_TOKEN;
    Some((tokens.ceil() as u32).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG header claiming `width`×`height` (all `imagesize` reads).
    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        bytes.extend(width.to_be_bytes());
        bytes.extend(height.to_be_bytes());
        bytes.extend([8, 6, 0, 0, 0]);
        bytes
    }

    #[test]
    fn anthropic_is_shown_an_image_at_its_published_cost_and_openai_at_none() {
        let small = tool_result_image(Protocol::Anthropic, "image/png", &png(200, 150));
        assert_eq!(small.tokens, 40, "200 × 150 / 750");
        assert_eq!(small.media_type, "image/png");
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(small.data.as_bytes())
                .unwrap(),
            png(200, 150)
        );
        // A large one is scaled down first: never more than about 1,150,000 / 750 tokens.
        let large = tool_result_image(Protocol::Anthropic, "image/png", &png(4000, 3000));
        assert!((1_500..=1_534).contains(&large.tokens), "{}", large.tokens);
        assert_eq!(
            tool_result_image(Protocol::OpenAi, "image/png", &png(200, 150)).tokens,
            0
        );
    }

    #[test]
    fn formats_anthropic_refuses_and_bytes_that_are_no_image_are_kept_but_not_shown() {
        assert_eq!(
            tool_result_image(Protocol::Anthropic, "image/bmp", &png(10, 10)).tokens,
            0
        );
        assert_eq!(
            tool_result_image(Protocol::Anthropic, "image/png", b"not an image").tokens,
            0
        );
    }
}
