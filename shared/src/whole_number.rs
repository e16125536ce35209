//! Integer fields that also take a whole-number float (`5.0`), as JSON Schema's `integer` does.
//!
//! JSON has one number type, and JSON Schema counts `5.0` as an integer; several languages'
//! encoders (JavaScript's for a computed value, Python's for a float, Java's Gson for a
//! `Double`) write whole numbers that way. serde refuses a float where it expects an integer,
//! so the document would admit what the decoder refuses. Every integer field of a request body
//! decodes through [`deserialize`] instead:
//!
//! ```
//! #[derive(serde::Deserialize)]
//! struct Rating {
//!     #[serde(deserialize_with = "shared::whole_number::deserialize")]
//!     stars: i64,
//! }
//! let rating: Rating = serde_json::from_str(r#"{"stars": 5.0}"#).expect("5.0 is 5");
//! assert_eq!(rating.stars, 5);
//! assert!(serde_json::from_str::<Rating>(r#"{"stars": 5.5}"#).is_err());
//! ```
//!
//! A fraction (`5.5`) is still the wrong type ("expected an integer"), and a value outside the
//! field's type (`1e19` into an `i64`) an invalid value naming the range; each service turns
//! both into a problem-details 4xx as it does any other shape error. An `Option` or a `Vec` of
//! integers takes the same attribute (an `Option` also needs `#[serde(default)]`, as with any
//! `deserialize_with`).

use serde::de::{self, Deserialize, Deserializer, Unexpected, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// Decodes an integer field (or an `Option` or `Vec` of them) that also takes a whole-number
/// float; for `#[serde(deserialize_with = "...")]`.
pub fn deserialize<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: WholeNumbers,
{
    T::deserialize_whole(deserializer)
}

/// A type [`deserialize`] can decode: a primitive integer, or an `Option` or `Vec` of them.
pub trait WholeNumbers: Sized {
    /// Decodes `Self`, taking whole-number floats for its integers.
    fn deserialize_whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// One integer decoded through [`WholeNumbers`], so that `Option` and `Vec` can reuse serde's
/// own impls for the containers.
struct Whole<T>(T);

impl<'de, T: WholeNumbers> Deserialize<'de> for Whole<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize_whole(deserializer).map(Whole)
    }
}

impl<T: WholeNumbers> WholeNumbers for Option<T> {
    fn deserialize_whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<Whole<T>>::deserialize(deserializer).map(|value| value.map(|w| w.0))
    }
}

impl<T: WholeNumbers> WholeNumbers for Vec<T> {
    fn deserialize_whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Whole<T>>::deserialize(deserializer)
            .map(|values| values.into_iter().map(|w| w.0).collect())
    }
}

/// The largest magnitude an `f64` can have and still convert to `i128` exactly (2^127).
const I128_LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;

/// Takes JSON integers and whole-number floats that fit `T`.
struct IntegerVisitor<T>(PhantomData<T>);

impl<T: TryFrom<i128>> IntegerVisitor<T> {
    fn fit<E: de::Error>(
        &self,
        value: i128,
        unexpected: Unexpected<'_>,
        range: &str,
    ) -> Result<T, E> {
        T::try_from(value).map_err(|_| E::invalid_value(unexpected, &range))
    }
}

macro_rules! whole_numbers {
    ($($int:ty),* $(,)?) => {$(
        impl WholeNumbers for $int {
            fn deserialize_whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                // `any`, not `i64`: serde's buffer for internally tagged enums (the alert rules)
                // refuses a float behind an integer hint before the visitor sees it.
                deserializer.deserialize_any(IntegerVisitor::<$int>(PhantomData))
            }
        }

        impl<'de> Visitor<'de> for IntegerVisitor<$int> {
            type Value = $int;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an integer")
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<$int, E> {
                self.fit(i128::from(value), Unexpected::Signed(value), RANGE)
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<$int, E> {
                self.fit(i128::from(value), Unexpected::Unsigned(value), RANGE)
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<$int, E> {
                if !value.is_finite() || value.fract() != 0.0 {
                    // The same error serde gives for a fraction where an integer belongs.
                    return Err(E::invalid_type(Unexpected::Float(value), &self));
                }
                if value.abs() >= I128_LIMIT {
                    return Err(E::invalid_value(Unexpected::Float(value), &RANGE));
                }
                // Whole and inside i128's range: the conversion is exact.
                #[allow(clippy::cast_possible_truncation)]
                let whole = value as i128;
                self.fit(whole, Unexpected::Float(value), RANGE)
            }
        }
    )*};
}

/// What an out-of-range value's error says it expected.
const RANGE: &str = "an integer in the field's range";

whole_numbers!(i16, i32, i64, u16, u32, u64, usize);

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(deserialize_with = "deserialize")]
        count: i64,
        #[serde(default, deserialize_with = "deserialize")]
        small: Option<i16>,
        #[serde(default, deserialize_with = "deserialize")]
        days: Vec<u32>,
    }

    fn decode(json: &str) -> Result<Body, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn whole_number_floats_are_integers() {
        let body = decode(r#"{"count": 5.0, "small": -3.0, "days": [1, 7.0, 30e0]}"#)
            .expect("whole numbers");
        assert_eq!(
            (body.count, body.small, body.days),
            (5, Some(-3), vec![1, 7, 30])
        );
        let body = decode(r#"{"count": 592280.0, "small": null}"#).expect("null is none");
        assert_eq!((body.count, body.small, body.days.len()), (592280, None, 0));
        assert_eq!(decode(r#"{"count": -0.0}"#).map(|b| b.count), Ok(0));
        assert_eq!(decode(r#"{"count": 1e3}"#).map(|b| b.count), Ok(1000));
        // Through a `serde_json::Value` too (the alert rules decode that way).
        let value = serde_json::json!({"count": 9007199254740992.0});
        let body = Body::deserialize(value).expect("2^53");
        assert_eq!(body.count, 1 << 53);
    }

    #[test]
    fn fractions_are_the_wrong_type() {
        for json in [
            r#"{"count": 5.5}"#,
            r#"{"count": 0.1}"#,
            r#"{"count": 1e-7}"#,
        ] {
            let error = decode(json).expect_err(json);
            assert!(
                error.starts_with("invalid type: floating point")
                    && error.contains("expected an integer"),
                "{json}: {error}"
            );
        }
        let error = decode(r#"{"count": 1, "days": [1, 2.5]}"#).expect_err("fraction in a list");
        assert!(error.contains("expected an integer"), "{error}");
        let error = decode(r#"{"count": "5"}"#).expect_err("a string is no integer");
        assert!(error.starts_with("invalid type: string"), "{error}");
    }

    #[test]
    fn values_outside_the_type_are_invalid_values() {
        for json in [
            r#"{"count": 1e19}"#,
            r#"{"count": 9223372036854775808}"#,
            r#"{"count": 9223372036854775808.0}"#,
            r#"{"count": 1e300}"#,
            r#"{"count": 1, "small": 32768.0}"#,
            r#"{"count": 1, "small": 40000}"#,
            r#"{"count": 1, "days": [-1.0]}"#,
            r#"{"count": 1, "days": [4294967296]}"#,
        ] {
            let error = decode(json).expect_err(json);
            assert!(error.starts_with("invalid value"), "{json}: {error}");
            assert!(
                error.contains("expected an integer in the field's range"),
                "{json}: {error}"
            );
        }
        assert_eq!(
            decode(r#"{"count": -9223372036854775808.0}"#).map(|b| b.count),
            Ok(i64::MIN)
        );
        // JSON cannot spell infinity; serde_json refuses a literal past f64's range itself.
        assert!(decode(r#"{"count": 1e400}"#).is_err());
    }
}
