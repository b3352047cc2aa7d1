//! `GET /openapi.json`: an OpenAPI 3.1 description of every route, built
//! from the same operation table the server registers, with its groups and
//! summaries. Bodies, answers and errors are the wire types' own schemas
//! (utoipa derives them in `paydesk-api` behind its `openapi` feature), so
//! the document follows the types; `shapes` says which types each
//! operation takes and gives, and each create links to the operations on
//! the record it made.

mod shapes;

use actix_web::http::StatusCode;
use paydesk_api::paths::Operation;
use paydesk_api::wire::Problem;
use serde_json::{json, Map, Value};
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApiBuilder, PathsBuilder, RefOr, Required,
    ResponseBuilder,
};

use crate::respond::{json, JsonAnswer};
use shapes::{shape, string_of, Answer, Query, Schemas};

/// `{success, message, data, timestamp, metadata.request_id}` around `data`.
fn envelope(data: RefOr<Schema>) -> RefOr<Schema> {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    ObjectBuilder::new()
        .property("success", ObjectBuilder::new().schema_type(Type::Boolean))
        .property("message", string())
        .property("data", data)
        .property("timestamp", string_of(KnownFormat::DateTime))
        .property("metadata", ObjectBuilder::new().property("request_id", string()))
        .required("success")
        .required("message")
        .required("data")
        .required("timestamp")
        .into()
}

/// Error statuses any signed operation can answer, as RFC 7807 problems.
const ERRORS: [(&str, &str); 11] = [
    (
        "400",
        "Validation error (code VALIDATION_ERROR, errors[] beside the fields)",
    ),
    (
        "401",
        "Authentication failed: a missing or bad signature, timestamp or nonce",
    ),
    ("403", "The client's scoped permissions do not allow this"),
    ("404", "Unknown id or another company's resource"),
    (
        "405",
        "The path does not accept this method (Allow lists those it does)",
    ),
    (
        "409",
        "Reference reused with a different body (IDEMPOTENCY_CONFLICT)",
    ),
    ("413", "The body is larger than 1 MiB"),
    ("415", "A body that is not JSON"),
    (
        "422",
        "Well-formed but not allowed now (a named code such as INSUFFICIENT_BALANCE)",
    ),
    ("429", "Rate limited; see Retry-After"),
    ("503", "Temporarily unavailable (injected faults only)"),
];

fn path_parameter(name: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build()
}

fn query_parameter((name, kind, required, description): Query) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(if required { Required::True } else { Required::False })
        .description(Some(description))
        .schema(Some(ObjectBuilder::new().schema_type(kind)))
        .build()
}

/// Links from a create to the operations on the record it made (the paths
/// under its own, the id next), so the fuzzer's stateful phase reaches
/// records that exist instead of meeting 404s. Written as JSON: utoipa 5's
/// `Link` serializes `operation_id` where OpenAPI says `operationId`.
fn links(op: Operation, id_pointer: &str) -> Value {
    let prefix = format!("{}/{{", op.template());
    let links: Map<String, Value> = Operation::ALL
        .iter()
        .filter_map(|target| {
            let param = target.template().strip_prefix(&prefix)?.split('}').next()?;
            let link = json!({
                "operationId": format!("{target:?}"),
                "parameters": {param: format!("$response.body#{id_pointer}")},
            });
            Some((format!("{target:?}"), link))
        })
        .collect();
    Value::Object(links)
}

fn operation(
    op: Operation,
    schemas: &mut Schemas,
    problem: &RefOr<Schema>,
) -> (utoipa::openapi::path::Operation, Option<String>) {
    let shape = shape(op, schemas);
    let mut builder = OperationBuilder::new()
        .operation_id(Some(format!("{op:?}")))
        .summary(Some(op.summary()))
        .tag(op.tag());
    for name in op
        .template()
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
    {
        builder = builder.parameter(path_parameter(name));
    }
    for query in shape.query {
        builder = builder.parameter(query_parameter(query));
    }
    if let Some(body) = shape.body {
        builder = builder.request_body(Some(
            RequestBodyBuilder::new()
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(body)).build(),
                )
                .required(Some(Required::True))
                .build(),
        ));
    }
    let created_id = match &shape.answer {
        Answer::Data(data) if shape.status == StatusCode::CREATED => schemas.id_pointer(data),
        _ => None,
    };
    let answer = match shape.answer {
        Answer::Data(data) => envelope(data),
        Answer::Bare(body) => body,
    };
    builder = builder.response(
        shape.status.as_str(),
        ResponseBuilder::new()
            .description(shape.status.canonical_reason().unwrap_or("Success"))
            .content(
                "application/json",
                ContentBuilder::new().schema(Some(answer)).build(),
            ),
    );
    for (status, meaning) in ERRORS {
        builder = builder.response(
            status,
            ResponseBuilder::new().description(meaning).content(
                "application/problem+json",
                ContentBuilder::new().schema(Some(problem.clone())).build(),
            ),
        );
    }
    (builder.build(), created_id)
}

/// A route served without a signature (the gatekeeper's public paths).
fn unsigned(summary: &str, content_type: &str, answer: ObjectBuilder) -> utoipa::openapi::path::Operation {
    OperationBuilder::new()
        .summary(Some(summary))
        .tag("Service")
        .security(SecurityRequirement::default())
        .response(
            "200",
            ResponseBuilder::new()
                .description("OK")
                .content(content_type, ContentBuilder::new().schema(Some(answer)).build()),
        )
        .build()
}

fn http_method(op: Operation) -> HttpMethod {
    use paydesk_api::paths::Method;
    match op.method() {
        Method::Get => HttpMethod::Get,
        Method::Post => HttpMethod::Post,
        Method::Put => HttpMethod::Put,
        Method::Delete => HttpMethod::Delete,
    }
}

/// The signing headers, each an API key; every operation needs all four.
const SIGNING: [(&str, &str); 4] = [
    ("client", "X-Auth-Client"),
    ("timestamp", "X-Auth-Timestamp"),
    ("nonce", "X-Auth-Nonce"),
    ("signature", "X-Auth-Signature"),
];

/// The whole document.
pub fn document() -> Value {
    let mut schemas = Schemas::default();
    let problem = schemas.of::<Problem>();
    let mut paths = PathsBuilder::new();
    let mut creates = Vec::new();
    for op in Operation::ALL {
        let (operation, created_id) = operation(*op, &mut schemas, &problem);
        paths = paths.path(op.template(), PathItem::new(http_method(*op), operation));
        creates.extend(created_id.map(|pointer| (*op, pointer)));
    }
    paths = paths.path(
        "/openapi.json",
        PathItem::new(
            HttpMethod::Get,
            unsigned(
                "This document (no signature needed)",
                "application/json",
                ObjectBuilder::new().schema_type(Type::Object),
            ),
        ),
    );
    paths = paths.path(
        "/healthz",
        PathItem::new(
            HttpMethod::Get,
            unsigned(
                "Liveness: answers `ok` (no signature needed)",
                "text/plain",
                ObjectBuilder::new().schema_type(Type::String),
            ),
        ),
    );
    let mut components = ComponentsBuilder::new();
    for (name, key) in SIGNING {
        components = components.security_scheme(
            name,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new(key))),
        );
    }
    let mut requirement = SecurityRequirement::default();
    for (name, _) in SIGNING {
        requirement = requirement.add(name, Vec::<String>::new());
    }
    let components = schemas
        .0
        .into_iter()
        .fold(components, |c, (name, schema)| c.schema(name, schema));
    let document = OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Payments, Trading and Cards Service API v2 — Paydesk sandbox")
                .version("2.0.0")
                .description(Some(DESCRIPTION)),
        )
        .paths(paths)
        .components(Some(components.build()))
        .security(Some(vec![requirement]))
        .build();
    let mut document = serde_json::to_value(document).expect("the document serializes");
    for (op, pointer) in creates {
        let method = op.method().as_str().to_ascii_lowercase();
        document["paths"][op.template()][method]["responses"]["201"]["links"] = links(op, &pointer);
    }
    document
}

const DESCRIPTION: &str = "A stateful sandbox of the service. Every request is signed: X-Auth-Client, X-Auth-Timestamp (Unix seconds), X-Auth-Nonce (16-128 chars of [A-Za-z0-9_-], never reused), X-Auth-Signature = lowercase hex HMAC-SHA256(secret, \"client_id:timestamp:nonce:body\"); 300 s skew allowed. Errors are RFC 7807 problems (application/problem+json) with the service's code. Sandbox time = wall clock + an offset moved by POST /sandbox/clock/advance; asynchronous steps fall due 10-300 s of sandbox time after their trigger. Webhooks: x-service-signature = hex HMAC-SHA512 of the raw body; non-200 answers are retried 3 times (15 s, 45 s, 135 s). Faults: POST /sandbox/faults. See the sandbox README for test values.";

pub async fn serve() -> JsonAnswer {
    json(StatusCode::OK, &document())
}
