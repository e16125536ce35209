use super::*;

// The Standard Webhooks specification's published vector: `test_sign_function` in the
// reference Python library (standard-webhooks/standard-webhooks,
// libraries/python/tests/test_webhooks.py), repeated by its other libraries. Matching it is
// what lets any receiver verify our messages with those libraries.
const VECTOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const VECTOR_MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const VECTOR_TIMESTAMP: i64 = 1_614_265_330;
const VECTOR_BODY: &[u8] = br#"{"test": 2432232314}"#;
const VECTOR_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

#[test]
fn matches_the_specification_vector() {
    let signature = sign(VECTOR_SECRET, VECTOR_MSG_ID, VECTOR_TIMESTAMP, VECTOR_BODY);
    assert_eq!(signature.as_deref(), Ok(VECTOR_SIGNATURE));
}

#[test]
fn the_secret_prefix_is_optional() {
    let bare = VECTOR_SECRET.trim_start_matches(SECRET_PREFIX);
    let signature = sign(bare, VECTOR_MSG_ID, VECTOR_TIMESTAMP, VECTOR_BODY);
    assert_eq!(signature.as_deref(), Ok(VECTOR_SIGNATURE));
}

#[test]
fn every_signed_part_changes_the_signature() {
    let sign_with =
        |id: &str, ts: i64, body: &[u8]| sign(VECTOR_SECRET, id, ts, body).expect("valid secret");
    assert_ne!(
        sign_with("msg_other", VECTOR_TIMESTAMP, VECTOR_BODY),
        VECTOR_SIGNATURE
    );
    assert_ne!(
        sign_with(VECTOR_MSG_ID, VECTOR_TIMESTAMP + 1, VECTOR_BODY),
        VECTOR_SIGNATURE
    );
    assert_ne!(
        sign_with(VECTOR_MSG_ID, VECTOR_TIMESTAMP, br#"{"test": 1}"#),
        VECTOR_SIGNATURE
    );
}

#[test]
fn a_secret_that_is_not_base64_cannot_sign() {
    assert_eq!(
        sign(
            "whsec_not base64!",
            VECTOR_MSG_ID,
            VECTOR_TIMESTAMP,
            VECTOR_BODY
        ),
        Err(SigningError::InvalidSecret)
    );
}

#[test]
fn the_header_holds_one_signature_per_secret_in_order() {
    let other = generate_secret();
    let header = signature_header(
        &[VECTOR_SECRET, &other],
        VECTOR_MSG_ID,
        VECTOR_TIMESTAMP,
        VECTOR_BODY,
    )
    .expect("valid secrets");
    let parts: Vec<&str> = header.split(' ').collect();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0], VECTOR_SIGNATURE);
    assert_eq!(
        Ok(parts[1].to_owned()),
        sign(&other, VECTOR_MSG_ID, VECTOR_TIMESTAMP, VECTOR_BODY)
    );
    assert_eq!(
        signature_header(&[], VECTOR_MSG_ID, VECTOR_TIMESTAMP, VECTOR_BODY),
        Err(SigningError::NoSecret)
    );
}

#[test]
fn generated_secrets_are_32_random_bytes_behind_the_prefix() {
    let a = generate_secret();
    let b = generate_secret();
    assert_ne!(a, b);
    let raw = a.strip_prefix(SECRET_PREFIX).expect("whsec_ prefix");
    assert_eq!(STANDARD.decode(raw).expect("base64").len(), 32);
    assert!(sign(&a, "msg_1", 1, b"{}").is_ok());
}

#[test]
fn message_ids_are_the_delivery_id_in_simple_form() {
    let id = Uuid::parse_str("0191f3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b").expect("uuid");
    assert_eq!(message_id(id), "msg_0191f3b45c6d7e8f9a0b1c2d3e4f5a6b");
}
