//! Static files, compiled into the binary so pages work offline and from
//! any working directory. Names carry versions, so they cache for a year.

use actix_web::http::header;
use actix_web::web::Path;
use actix_web::HttpResponse;

const FILES: &[(&str, &str, &[u8])] = &[
    (
        "favicon-1.svg",
        "image/svg+xml",
        include_bytes!("../../static/favicon-1.svg"),
    ),
    (
        "htmx-2.0.11.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../static/htmx-2.0.11.min.js"),
    ),
    (
        "paydesk-5.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../static/paydesk-5.js"),
    ),
    (
        "paydesk-8.css",
        "text/css; charset=utf-8",
        include_bytes!("../../static/paydesk-8.css"),
    ),
];

pub async fn serve(name: Path<String>) -> HttpResponse {
    match FILES.iter().find(|(n, _, _)| *n == name.as_str()) {
        Some((_, content_type, bytes)) => HttpResponse::Ok()
            .insert_header((header::CONTENT_TYPE, *content_type))
            .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
            .body(*bytes),
        None => HttpResponse::NotFound()
            .content_type("text/plain")
            .body("no such file"),
    }
}

/// Browsers ask for `/favicon.ico` whatever the page says; send them to
/// the icon the pages name.
pub async fn favicon() -> HttpResponse {
    HttpResponse::MovedPermanently()
        .insert_header((header::LOCATION, "/static/favicon-1.svg"))
        .finish()
}
