"""MySQL Connector/Python (Oracle's driver) against Strata with its default options.

Usage: connector.py PORT MODULE_DIR. Connects over TCP to 127.0.0.1 and to localhost, with the
C extension when it loads and in pure Python; runs DDL, text and prepared statements with every
column type, NULLs, a large value, transactions, errors, multiple result sets and metadata.
Prints "ok" at the end; any failed check raises.
"""

import datetime
import decimal
import sys

port = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])

import mysql.connector  # noqa: E402
from every_type import COLUMNS, CREATE, LITERALS, PARAMETERS, expect  # noqa: E402
from mysql.connector import FieldType  # noqa: E402


def connect(host, pure):
    options = dict(host=host, port=port, user="root", password="")
    if pure is not None:
        options["use_pure"] = pure
    return mysql.connector.connect(**options)


def session(host, pure, db):
    conn = connect(host, pure)
    cur = conn.cursor()
    cur.execute("SELECT @@version, CURRENT_USER(), DATABASE()")
    version, user, database = cur.fetchone()
    expect("Strata" in version, True, "version")
    expect(user.startswith("root@"), True, "current user")
    expect(database, None, "no database yet")
    cur.execute(f"DROP DATABASE IF EXISTS {db}")
    cur.execute(f"CREATE DATABASE {db}")
    conn.database = db
    cur.execute(CREATE)

    # The same row in by text and by a prepared statement; NULLs in a third.
    cur.execute(f"INSERT INTO every_type (id, {COLUMNS}) VALUES (1, {LITERALS})")
    prepared = conn.cursor(prepared=True)
    marks = ", ".join(["%s"] * (len(PARAMETERS) + 1))
    prepared.execute(f"INSERT INTO every_type (id, {COLUMNS}) VALUES ({marks})", (2,) + PARAMETERS)
    cur.execute("INSERT INTO every_type (id) VALUES (3)")
    conn.commit()

    cur.execute(f"SELECT {COLUMNS} FROM every_type WHERE id = 1")
    text_row = cur.fetchone()
    names = [d[0] for d in cur.description]
    expect(names, [c.strip() for c in COLUMNS.split(",")], "column names")
    # The driver's pure-Python decoder reads a YEAR of the binary protocol as a string (it is
    # two bytes, as MySQL and MariaDB send it: against MariaDB it fails the same way) and
    # negates only the days of a negative TIME: those two are read by text only.
    by_binary = [n for n in names if n not in ("y", "tm")]
    prepared.execute(f"SELECT {', '.join(by_binary)} FROM every_type WHERE id = %s", (2,))
    binary_row = dict(zip(by_binary, prepared.fetchone()))
    for name, a in zip(names, text_row):
        if name not in binary_row:
            continue
        b = binary_row[name]
        if name == "j" and isinstance(b, (bytes, bytearray)):
            # JSON has the binary character set (as in MySQL): bytes when prepared.
            b = b.decode()
        if name == "st":
            # SET columns carry MySQL's SET flag: the text decoder makes a Python set of them,
            # the binary one keeps the string.
            a = ",".join(sorted(a)) if isinstance(a, set) else a
            b = ",".join(sorted(b)) if isinstance(b, set) else b
        if name == "bt":
            # BIT arrives as an int by text and as bytes when prepared.
            b = int.from_bytes(b, "big") if isinstance(b, (bytes, bytearray)) else b
            a = int.from_bytes(a, "big") if isinstance(a, (bytes, bytearray)) else a
        expect(a, b, f"{name} by text and prepared")
    row = dict(zip(names, text_row))
    expect(row["ubi"], 18446744073709551615, "BIGINT UNSIGNED")
    expect(row["bi"], -9223372036854775808, "BIGINT")
    expect(row["de"], decimal.Decimal("-12345678901234.123456"), "DECIMAL")
    expect(row["vc"], "variable ü", "VARCHAR")
    expect(bytes(row["bl"]), b"\x00\xff\x10", "BLOB")
    expect(row["d"], datetime.date(2024, 2, 29), "DATE")
    expect(row["dt"], datetime.datetime(2024, 2, 29, 13, 14, 15, 123456), "DATETIME(6)")
    expect(row["tm"], -datetime.timedelta(hours=838, minutes=59, seconds=59), "TIME")
    expect(row["y"], 2155, "YEAR")
    expect(row["e"], "large", "ENUM")
    expect(row["st"] in ({"x", "z"}, "x,z"), True, "SET")

    types = {d[0]: d[1] for d in cur.description}
    expect(types["bi"], FieldType.LONGLONG, "BIGINT type")
    expect(types["de"], FieldType.NEWDECIMAL, "DECIMAL type")
    expect(types["dt"], FieldType.DATETIME, "DATETIME type")
    expect(types["j"], FieldType.JSON, "JSON type")

    cur.execute(f"SELECT {COLUMNS} FROM every_type WHERE id = 3")
    defaults = dict(zip(names, cur.fetchone()))
    expect(defaults.pop("vc"), "", "NOT NULL DEFAULT ''")
    expect([n for n, v in defaults.items() if v is not None], [], "NULLs")

    # A large value both ways.
    cur.execute("ALTER TABLE every_type ADD COLUMN big LONGBLOB")
    big = bytes(range(256)) * 4096
    prepared.execute("UPDATE every_type SET big = %s WHERE id = 3", (big,))
    conn.commit()
    cur.execute("SELECT big, LENGTH(big) FROM every_type WHERE id = 3")
    value, length = cur.fetchone()
    expect((bytes(value), length), (big, len(big)), "1 MiB LONGBLOB by text")
    prepared.execute("SELECT big FROM every_type WHERE id = %s", (3,))
    expect(bytes(prepared.fetchone()[0]), big, "1 MiB LONGBLOB prepared")
    try:
        prepared.execute("UPDATE every_type SET bl = %s WHERE id = 3", (big,))
        raise AssertionError("1 MiB fit in a BLOB")
    except mysql.connector.Error as e:
        expect((e.errno, e.sqlstate), (1406, "22001"), "BLOB too long")
    # The driver runs with autocommit off (PEP 249): end the transaction the error left open.
    conn.rollback()

    # Transactions: a rolled-back change is gone, a committed one stays.
    conn.start_transaction()
    cur.execute("UPDATE every_type SET vc = 'rolled back' WHERE id = 1")
    conn.rollback()
    conn.start_transaction()
    cur.execute("UPDATE every_type SET vc = 'committed' WHERE id = 2")
    conn.commit()
    cur.execute("SELECT vc FROM every_type ORDER BY id")
    expect([r[0] for r in cur.fetchall()], ["variable ü", "committed", ""], "transactions")

    # Errors carry MySQL's code and SQLSTATE, and the connection goes on.
    for sql, code, state in [
        ("SELECT nope FROM every_type", 1054, "42S22"),
        ("INSERT INTO every_type (id) VALUES (1)", 1062, "23000"),
        ("SELEKT 1", 1064, "42000"),
    ]:
        try:
            cur.execute(sql)
            raise AssertionError(f"{sql} did not fail")
        except mysql.connector.Error as e:
            expect((e.errno, e.sqlstate), (code, state), sql)
    cur.execute("SELECT COUNT(*) FROM every_type")
    expect(cur.fetchone(), (3,), "count after errors")

    # Several result sets from one call.
    cur.execute("SELECT 1 AS a; SELECT 'two' AS b, 3 AS c", map_results=True)
    sets = [cur.fetchall()]
    while cur.nextset():
        sets.append(cur.fetchall())
    expect(sets, [[(1,)], [("two", 3)]], "multiple result sets")

    cur.execute(f"DROP DATABASE {db}")
    cur.close()
    prepared.close()
    conn.close()


for n, (host, pure) in enumerate(
    [("127.0.0.1", None), ("localhost", None), ("127.0.0.1", True), ("localhost", True)]
):
    session(host, pure, f"connector_{n}")
print("ok")
