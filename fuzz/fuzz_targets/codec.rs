//! The key and row codecs over any bytes: decoding never panics, and what decodes is encoded
//! again in one canonical form (bytes are compared, so a NaN decoded from a key is no
//! false alarm).
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_codec::{memcomparable, row};

fuzz_target!(|data: &[u8]| {
    // Memcomparable key values: the encoding of what decoded decodes and encodes to itself.
    let mut input = data;
    let mut values = Vec::new();
    while let Ok(value) = memcomparable::decode_key_datum(&mut input) {
        values.push(value);
        if values.len() > 64 {
            break;
        }
    }
    let mut encoded = Vec::new();
    memcomparable::encode_key_datums(&mut encoded, &values);
    let mut again = &encoded[..];
    let decoded = memcomparable::decode_key_datums(&mut again, values.len())
        .expect("encoded key values decode");
    assert!(again.is_empty(), "the encoding is read to its end");
    let mut reencoded = Vec::new();
    memcomparable::encode_key_datums(&mut reencoded, &decoded);
    assert_eq!(reencoded, encoded, "key values round trip");

    // Rows: whatever decodes as a row is encoded, and that encoding round trips.
    if let Ok(columns) = row::decode_row_all(data) {
        let bytes = encode(&columns);
        let back = row::decode_row_all(&bytes).expect("an encoded row decodes");
        assert_eq!(encode(&back), bytes, "row round trip");
    }
});

fn encode(columns: &[(i64, strata_codec::Datum)]) -> Vec<u8> {
    let pairs: Vec<(i64, &strata_codec::Datum)> =
        columns.iter().map(|(id, value)| (*id, value)).collect();
    let mut bytes = Vec::new();
    row::encode_row(&mut bytes, &pairs);
    bytes
}
