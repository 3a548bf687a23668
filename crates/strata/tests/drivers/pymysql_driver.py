"""PyMySQL (the pure-Python driver) against Strata with its default options.

Usage: pymysql_driver.py PORT. PyMySQL has no server-side prepared statements: it escapes each
parameter into the statement's text, bytes as `_binary'…'` with the bytes as they are. So the
text Strata reads holds bytes that are not UTF-8, which must come back unchanged. Connects over
TCP to 127.0.0.1 and to localhost; runs DDL, statements with literals and with parameters for
every column type, NULLs, a 1 MiB value of every byte, transactions, errors, multiple result
sets and metadata. Prints "ok" at the end; any failed check raises.
"""

import datetime
import decimal
import sys

import pymysql
from pymysql.constants import CLIENT, FIELD_TYPE

from every_type import COLUMNS, CREATE, LITERALS, PARAMETERS, expect

port = int(sys.argv[1])


def session(host, db):
    conn = pymysql.connect(host=host, port=port, user="root", password="")
    cur = conn.cursor()
    cur.execute("SELECT @@version, CURRENT_USER(), DATABASE()")
    version, user, database = cur.fetchone()
    expect("Strata" in version, True, "version")
    expect(user.startswith("root@"), True, "current user")
    expect(database, None, "no database yet")
    cur.execute(f"DROP DATABASE IF EXISTS {db}")
    cur.execute(f"CREATE DATABASE {db}")
    conn.select_db(db)
    cur.execute(CREATE)

    # The same row by literals and by parameters; NULLs in a third.
    cur.execute(f"INSERT INTO every_type (id, {COLUMNS}) VALUES (1, {LITERALS})")
    marks = ", ".join(["%s"] * (len(PARAMETERS) + 1))
    cur.execute(f"INSERT INTO every_type (id, {COLUMNS}) VALUES ({marks})", (2,) + PARAMETERS)
    cur.execute("INSERT INTO every_type (id) VALUES (3)")
    conn.commit()

    cur.execute(f"SELECT {COLUMNS} FROM every_type WHERE id IN (1, 2) ORDER BY id")
    names = [d[0] for d in cur.description]
    expect(names, [c.strip() for c in COLUMNS.split(",")], "column names")
    by_literals, by_parameters = cur.fetchall()
    for name, a, b in zip(names, by_literals, by_parameters):
        expect(a, b, f"{name} by literal and by parameter")
    row = dict(zip(names, by_literals))
    expect(row["ubi"], 18446744073709551615, "BIGINT UNSIGNED")
    expect(row["bi"], -9223372036854775808, "BIGINT")
    expect(row["de"], decimal.Decimal("-12345678901234.123456"), "DECIMAL")
    expect(row["vc"], "variable ü", "VARCHAR")
    expect(row["bl"], b"\x00\xff\x10", "BLOB")
    expect(row["vb"], b"\xbe\xef", "VARBINARY")
    expect(row["bt"], b"\x5a", "BIT")
    expect(row["d"], datetime.date(2024, 2, 29), "DATE")
    expect(row["dt"], datetime.datetime(2024, 2, 29, 13, 14, 15, 123456), "DATETIME(6)")
    expect(row["tm"], -datetime.timedelta(hours=838, minutes=59, seconds=59), "TIME")
    expect(row["y"], 2155, "YEAR")
    expect(row["e"], "large", "ENUM")
    expect(row["st"], "x,z", "SET")

    types = {d[0]: d[1] for d in cur.description}
    expect(types["bi"], FIELD_TYPE.LONGLONG, "BIGINT type")
    expect(types["de"], FIELD_TYPE.NEWDECIMAL, "DECIMAL type")
    expect(types["dt"], FIELD_TYPE.DATETIME, "DATETIME type")
    expect(types["j"], FIELD_TYPE.JSON, "JSON type")

    # Binary strings made by expressions reach the client as bytes (the binary character
    # set), text as text, as MariaDB 10.11 sends them (checked).
    cur.execute(
        "SELECT X'00FF', _binary'ab', CAST('a' AS BINARY), BINARY 'x', UNHEX('4142'), "
        "CONCAT('a', X'42'), IF(1, X'41', 'b'), LEFT(bl, 1), HEX(X'00'), CAST(X'41' AS CHAR), "
        "CONCAT(vc, '!') FROM every_type WHERE id = 1"
    )
    expect(
        cur.fetchone(),
        (b"\x00\xff", b"ab", b"a", b"x", b"AB", b"aB", b"A", b"\x00", "00", "A", "variable ü!"),
        "binary and text expressions",
    )

    cur.execute(f"SELECT {COLUMNS} FROM every_type WHERE id = 3")
    defaults = dict(zip(names, cur.fetchone()))
    expect(defaults.pop("vc"), "", "NOT NULL DEFAULT ''")
    expect([n for n, v in defaults.items() if v is not None], [], "NULLs")

    # A large value of every byte, in a parameter (bytes in the statement's text) and back;
    # and found again by equality.
    cur.execute("ALTER TABLE every_type ADD COLUMN big LONGBLOB")
    big = bytes(range(256)) * 4096
    cur.execute("UPDATE every_type SET big = %s WHERE id = 3", (big,))
    conn.commit()
    cur.execute("SELECT big, LENGTH(big) FROM every_type WHERE id = 3")
    expect(cur.fetchone(), (big, len(big)), "1 MiB LONGBLOB")
    cur.execute("SELECT id FROM every_type WHERE big = %s", (big,))
    expect(cur.fetchall(), ((3,),), "found by its bytes")
    try:
        cur.execute("UPDATE every_type SET bl = %s WHERE id = 3", (big,))
        raise AssertionError("1 MiB fit in a BLOB")
    except pymysql.err.MySQLError as e:
        expect(e.args[0], 1406, "BLOB too long")
    conn.rollback()

    # Transactions: a rolled-back change is gone, a committed one stays.
    conn.begin()
    cur.execute("UPDATE every_type SET vc = 'rolled back' WHERE id = 1")
    conn.rollback()
    conn.begin()
    cur.execute("UPDATE every_type SET vc = %s WHERE id = 2", ("committed 'quoted' \\",))
    conn.commit()
    cur.execute("SELECT vc FROM every_type ORDER BY id")
    expect(
        [r[0] for r in cur.fetchall()],
        ["variable ü", "committed 'quoted' \\", ""],
        "transactions",
    )

    # Errors carry MySQL's code, and the connection goes on.
    for sql, code in [
        ("SELECT nope FROM every_type", 1054),
        ("INSERT INTO every_type (id) VALUES (1)", 1062),
        ("SELEKT 1", 1064),
    ]:
        try:
            cur.execute(sql)
            raise AssertionError(f"{sql} did not fail")
        except pymysql.err.MySQLError as e:
            expect(e.args[0], code, sql)
    cur.execute("SELECT COUNT(*) FROM every_type")
    expect(cur.fetchone(), (3,), "count after errors")

    # An UPDATE that changes nothing affects no row, unless the client asked for
    # CLIENT_FOUND_ROWS: then it counts the rows it matched (ROW_COUNT() too), as MySQL does.
    expect(cur.execute("UPDATE every_type SET ti = ti WHERE id IN (1, 2)"), 0, "changed rows")
    found = pymysql.connect(
        host=host, port=port, user="root", password="", database=db,
        client_flag=CLIENT.FOUND_ROWS, autocommit=True,
    )
    found_cur = found.cursor()
    expect(found_cur.execute("UPDATE every_type SET ti = ti WHERE id IN (1, 2)"), 2, "found rows")
    found_cur.execute("SELECT ROW_COUNT()")
    expect(found_cur.fetchone(), (2,), "ROW_COUNT() of found rows")
    found.close()

    cur.execute(f"DROP DATABASE {db}")
    cur.close()
    conn.close()

    # Several result sets from one call, for a client that asks for them.
    conn = pymysql.connect(
        host=host, port=port, user="root", password="", client_flag=CLIENT.MULTI_STATEMENTS
    )
    cur = conn.cursor()
    cur.execute("SELECT 1 AS a; SELECT 'two' AS b, 3 AS c")
    sets = [cur.fetchall()]
    while cur.nextset():
        sets.append(cur.fetchall())
    expect(sets, [((1,),), (("two", 3),)], "multiple result sets")
    conn.close()


for n, host in enumerate(["127.0.0.1", "localhost"]):
    session(host, f"pymysql_{n}")
print("ok")
