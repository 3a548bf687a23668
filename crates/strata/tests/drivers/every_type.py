"""The table every Python driver script fills and reads: a column of every type Strata stores,
one row of them as SQL literals and as the driver's parameters, and the check the scripts use.
"""

import datetime
import decimal

CREATE = """CREATE TABLE every_type (
    id INT PRIMARY KEY,
    ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT, ubi BIGINT UNSIGNED,
    de DECIMAL(20,6), fl FLOAT, db DOUBLE,
    ch CHAR(10), vc VARCHAR(100) NOT NULL DEFAULT '', tx TEXT, bl BLOB, vb VARBINARY(100),
    d DATE, dt DATETIME(6), ts TIMESTAMP NULL, tm TIME, y YEAR,
    bt BIT(8), j JSON, e ENUM('small','large'), st SET('x','y','z'))"""
COLUMNS = "ti, si, mi, i, bi, ubi, de, fl, db, ch, vc, tx, bl, vb, d, dt, ts, tm, y, bt, j, e, st"
LITERALS = (
    "-128, -32768, -8388608, -2147483648, -9223372036854775808, 18446744073709551615, "
    "-12345678901234.123456, 1.5, -2.25, 'fixed', 'variable ü', 'some text', X'00FF10', "
    "X'BEEF', '2024-02-29', '2024-02-29 13:14:15.123456', '2001-02-03 04:05:06', "
    "'-838:59:59', 2155, b'01011010', '{\"a\": [1, 2]}', 'large', 'x,z'"
)
PARAMETERS = (
    -128, -32768, -8388608, -2147483648, -9223372036854775808, 18446744073709551615,
    decimal.Decimal("-12345678901234.123456"), 1.5, -2.25, "fixed", "variable ü", "some text",
    b"\x00\xff\x10", b"\xbe\xef", datetime.date(2024, 2, 29),
    datetime.datetime(2024, 2, 29, 13, 14, 15, 123456), datetime.datetime(2001, 2, 3, 4, 5, 6),
    "-838:59:59", 2155, b"\x5a", '{"a": [1, 2]}', "large", "x,z",
)


def expect(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")
