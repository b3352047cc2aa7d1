//! QR codes drawn on the server as SVG, so no script runs on the page.

use qrcode::render::svg::Color;
use qrcode::QrCode;

/// `data` as an SVG QR code, or nothing when it is too long to encode.
pub fn svg(data: &str) -> String {
    let Ok(code) = QrCode::new(data.as_bytes()) else {
        return String::new();
    };
    let image = code
        .render::<Color>()
        .min_dimensions(240, 240)
        .quiet_zone(true)
        .build();
    // Drop the XML declaration: the SVG sits inside the page.
    match image.find("<svg") {
        Some(start) => image[start..].to_owned(),
        None => image,
    }
}
