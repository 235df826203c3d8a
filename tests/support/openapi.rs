//! Holds a response to an OpenAPI 3.1 document: the operation its method and path name, a
//! response for its status, its `Content-Type` among that response's, its body valid against
//! that content's schema (with every `$ref` resolved in the document), and every documented
//! header present when required and valid against its schema when sent.
#![allow(dead_code, reason = "each test binary uses the part it needs")]

use serde_json::Value;

/// Why a response does not keep the document, or `Ok` with whether the document describes
/// the path at all (a path it does not, `/mcp` say, is not its business).
pub fn conforms(
    document: &Value,
    method: &str,
    path: &str,
    response: &http::Response<Vec<u8>>,
) -> Result<bool, String> {
    let Some((template, operation)) = operation(document, method, path) else {
        return Ok(false);
    };
    let status = response.status().as_u16().to_string();
    let at = format!("{method} {template} {status}");
    let (pointer, described) = match operation["responses"].get(&status) {
        Some(described) => (
            format!(
                "/paths/{}/{}/responses/{status}",
                escape(&template),
                method.to_lowercase()
            ),
            described,
        ),
        None => return Err(format!("{at}: the document names no such status")),
    };
    let (pointer, described) = resolve(document, pointer, described);
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(|value| {
            value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        });
    if let Some(content) = described.get("content").and_then(Value::as_object) {
        let Some(content_type) = content_type else {
            return Err(format!("{at}: no Content-Type"));
        };
        if !content.contains_key(&content_type) {
            return Err(format!(
                "{at}: Content-Type {content_type} is not among {:?}",
                content.keys()
            ));
        }
        let body: Value = serde_json::from_slice(response.body())
            .map_err(|err| format!("{at}: the body is not JSON: {err}"))?;
        let schema = format!("{pointer}/content/{}/schema", escape(&content_type));
        validate(document, &schema, &body).map_err(|why| format!("{at}: body: {why}"))?;
    }
    if let Some(headers) = described.get("headers").and_then(Value::as_object) {
        for (name, header) in headers {
            let header_pointer = format!("{pointer}/headers/{}", escape(name));
            let (header_pointer, header) = resolve(document, header_pointer, header);
            match response.headers().get(name.as_str()) {
                None if header["required"] == true => {
                    return Err(format!("{at}: the required header {name} is missing"));
                }
                None => {}
                Some(value) => {
                    let value = Value::String(value.to_str().unwrap_or_default().to_owned());
                    validate(document, &format!("{header_pointer}/schema"), &value)
                        .map_err(|why| format!("{at}: header {name}: {why}"))?;
                }
            }
        }
    }
    Ok(true)
}

/// The operation for `method` and `path`, and its path template.
fn operation<'a>(document: &'a Value, method: &str, path: &str) -> Option<(String, &'a Value)> {
    let path = path.split('?').next().unwrap_or_default();
    document["paths"]
        .as_object()?
        .iter()
        .find_map(|(template, item)| {
            let fits = template.split('/').count() == path.split('/').count()
                && template.split('/').zip(path.split('/')).all(|(t, p)| {
                    t == p || (t.starts_with('{') && t.ends_with('}') && !p.is_empty())
                });
            let operation = item.get(method.to_lowercase())?;
            fits.then(|| (template.clone(), operation))
        })
}

/// Follows a `$ref` to a component (a response, a header): its pointer and the object.
fn resolve<'a>(document: &'a Value, pointer: String, value: &'a Value) -> (String, &'a Value) {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let target = reference.trim_start_matches('#').to_owned();
            let found = document
                .pointer(&target)
                .expect("a $ref the document resolves");
            resolve(document, target, found)
        }
        None => (pointer, value),
    }
}

/// Validates `value` against the schema at `pointer` in the document, `$ref`s resolved in it.
fn validate(document: &Value, pointer: &str, value: &Value) -> Result<(), String> {
    let mut root = document.clone();
    let object = root.as_object_mut().expect("a document is an object");
    object.insert(
        "$ref".to_owned(),
        Value::String(format!("#{}", fragment(pointer))),
    );
    object.insert(
        "$schema".to_owned(),
        Value::String("https://json-schema.org/draft/2020-12/schema".to_owned()),
    );
    let validator = jsonschema::draft202012::new(&root).map_err(|err| err.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|err| format!("{err} at {}", err.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {value}", errors.join("; ")))
    }
}

/// A JSON Pointer as a URI fragment: the characters a fragment may not hold, percent-encoded.
fn fragment(pointer: &str) -> String {
    use std::fmt::Write;
    let mut fragment = String::with_capacity(pointer.len());
    for c in pointer.chars() {
        if c.is_ascii_alphanumeric() || "/~-._!$&'()*+,;=:@?".contains(c) {
            fragment.push(c);
        } else {
            for byte in c.encode_utf8(&mut [0; 4]).bytes() {
                let _ = write!(fragment, "%{byte:02X}");
            }
        }
    }
    fragment
}

/// A JSON Pointer token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
