//! `GET /openapi.json`: a valid OpenAPI 3.1 document, naming every route
//! the router serves, with a typed schema for every body and answer.

mod support;

use std::collections::BTreeSet;

use oas3::spec::{ObjectOrReference, ObjectSchema, Spec};
use paydesk_api::paths::Operation;

/// Routes served besides the operation table (the unsigned ones).
const UNSIGNED: [&str; 2] = ["/openapi.json", "/healthz"];

async fn document() -> (serde_json::Value, Spec) {
    let t = support::spawn().await;
    let res = t.http.get(t.url("/openapi.json")).send().await.unwrap();
    assert_eq!(res.status(), 200, "served without a signature");
    let text = res.text().await.unwrap();
    let spec = oas3::from_json(&text).expect("an OpenAPI 3.1 document");
    (serde_json::from_str(&text).unwrap(), spec)
}

fn resolve(schema: &ObjectOrReference<ObjectSchema>, spec: &Spec) -> ObjectSchema {
    schema.resolve(spec).expect("every $ref resolves")
}

#[tokio::test]
async fn openapi_json_is_a_valid_openapi_3_document() {
    let (doc, spec) = document().await;
    assert_eq!(spec.validate_version().unwrap().major, 3);
    assert_eq!(doc["openapi"], "3.1.0");
    for name in ["client", "timestamp", "nonce", "signature"] {
        assert_eq!(
            doc["components"]["securitySchemes"][name]["in"], "header",
            "{name}"
        );
    }
    // Every reference anywhere in the document names a component.
    let text = doc.to_string();
    for reference in text.split("\"$ref\":\"").skip(1) {
        let name = reference.split('"').next().unwrap();
        let name = name
            .strip_prefix("#/components/schemas/")
            .expect("a schema reference");
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "{name} is not in components"
        );
    }
}

#[tokio::test]
async fn lists_every_route_of_the_router() {
    let (_, spec) = document().await;
    let documented: BTreeSet<(String, String)> = spec
        .operations()
        .map(|(path, method, _)| (method.as_str().to_owned(), path))
        .collect();
    let mut served: BTreeSet<(String, String)> = Operation::ALL
        .iter()
        .map(|op| (op.method().as_str().to_owned(), op.template().to_owned()))
        .collect();
    served.extend(UNSIGNED.map(|path| ("GET".to_owned(), path.to_owned())));
    assert_eq!(documented, served);
}

#[tokio::test]
async fn bodies_answers_and_errors_are_typed() {
    let (_, spec) = document().await;
    for (path, method, op) in spec.operations() {
        let name = format!("{method} {path}");
        if let Some(body) = &op.request_body {
            let body = body.resolve(&spec).unwrap();
            let schema = body.content["application/json"].schema.as_ref().expect(&name);
            let schema = resolve(schema, &spec);
            assert!(!schema.properties.is_empty(), "{name}: the body is a bare object");
        }
        let responses = op.responses.as_ref().expect(&name);
        let success: Vec<_> = responses.keys().filter(|s| s.starts_with('2')).collect();
        assert_eq!(success.len(), 1, "{name}: one success status");
        for (status, response) in responses {
            let response = response.resolve(&spec).unwrap();
            let (media, content) = response.content.iter().next().expect(&name);
            let schema = resolve(content.schema.as_ref().expect(&name), &spec);
            if status.starts_with('2') {
                if !UNSIGNED.contains(&path.as_str()) {
                    assert!(!schema.properties.is_empty(), "{name}: an untyped answer");
                }
            } else {
                assert_eq!(media, "application/problem+json", "{name} {status}");
                for field in ["type", "title", "status", "detail", "code"] {
                    assert!(
                        schema.properties.contains_key(field),
                        "{name} {status}: no {field}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn creates_link_to_the_operations_on_their_record() {
    let (doc, _) = document().await;
    let links = &doc["paths"]["/api/cards"]["post"]["responses"]["201"]["links"];
    assert_eq!(links["GetCard"]["operationId"], "GetCard");
    assert_eq!(
        links["GetCard"]["parameters"]["cardId"],
        "$response.body#/data/card/id"
    );
    let links = &doc["paths"]["/api/customers"]["post"]["responses"]["201"]["links"];
    assert_eq!(
        links["GetCustomer"]["parameters"]["customerId"],
        "$response.body#/data/id"
    );
}
