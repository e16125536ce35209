use super::*;

fn key(text: &str) -> SealingKey {
    SealingKey::new(text).expect("long enough")
}

const KEY_A: &str = "a-webhook-secrets-key-of-at-least-32-characters";
const KEY_B: &str = "another-webhook-secrets-key-at-least-32-chars!!";

#[test]
fn round_trip() {
    let k = key(KEY_A);
    let sealed = k.seal(b"destination-1", "whsec_c2VjcmV0");
    assert_eq!(
        k.open(b"destination-1", &sealed).as_deref(),
        Ok("whsec_c2VjcmV0")
    );
    // A fresh key from the same text opens it too (the key is derived, not stored).
    assert_eq!(
        key(KEY_A).open(b"destination-1", &sealed).as_deref(),
        Ok("whsec_c2VjcmV0")
    );
}

#[test]
fn the_plaintext_is_not_in_the_sealed_bytes_and_each_seal_differs() {
    let k = key(KEY_A);
    let first = k.seal(b"d", "whsec_plaintext");
    let second = k.seal(b"d", "whsec_plaintext");
    assert_ne!(first, second, "a fresh nonce per seal");
    assert!(!first.windows(15).any(|w| w == b"whsec_plaintext"));
    assert_eq!(first.len(), NONCE_LEN + "whsec_plaintext".len() + 16);
}

#[test]
fn another_destination_or_key_cannot_open_it() {
    let k = key(KEY_A);
    let sealed = k.seal(b"destination-1", "whsec_c2VjcmV0");
    assert_eq!(k.open(b"destination-2", &sealed), Err(SealingError::Open));
    assert_eq!(
        key(KEY_B).open(b"destination-1", &sealed),
        Err(SealingError::Open)
    );
}

#[test]
fn damaged_or_short_data_does_not_open() {
    let k = key(KEY_A);
    let mut sealed = k.seal(b"d", "whsec_c2VjcmV0");
    let last = sealed.len() - 1;
    sealed[last] ^= 1;
    assert_eq!(k.open(b"d", &sealed), Err(SealingError::Open));
    assert_eq!(k.open(b"d", &sealed[..10]), Err(SealingError::Open));
    assert_eq!(k.open(b"d", &[]), Err(SealingError::Open));
}

#[test]
fn short_keys_are_refused_and_keys_never_print() {
    assert_eq!(
        SealingKey::new(&"x".repeat(31)).err(),
        Some(SealingError::KeyTooShort)
    );
    assert!(SealingKey::new(&"x".repeat(32)).is_ok());
    assert_eq!(format!("{:?}", key(KEY_A)), "SealingKey([redacted])");
}

proptest::proptest! {
    #[test]
    fn any_secret_round_trips(plaintext in "\\PC{0,200}", aad in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..32)) {
        let k = key(KEY_A);
        proptest::prop_assert_eq!(k.open(&aad, &k.seal(&aad, &plaintext)), Ok(plaintext));
    }
}
